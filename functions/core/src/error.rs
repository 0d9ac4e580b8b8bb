//! The error contract of every vwr HTTP API: `{"error": "<code>", "message": "<text>"}` with a
//! fitting status, and `Retry-After` on 503/429.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Seconds a client is told to wait when a dependency is down.
pub const DEFAULT_RETRY_AFTER_SECS: u64 = 2;

/// An error answer of the HTTP API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub retry_after: Option<u64>,
    /// Extra top-level JSON fields (for example `redirectTo`).
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    message: &'a str,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), retry_after: None, extra: None }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }

    /// 503 with `Retry-After`: a dependency (DynamoDB, Redis, …) is unavailable.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            retry_after: Some(DEFAULT_RETRY_AFTER_SECS),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "service_unavailable", message)
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", message)
    }

    /// Replaces the machine code.
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = code;
        self
    }

    /// Adds a top-level field to the JSON body.
    pub fn with_field(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.extra.get_or_insert_with(serde_json::Map::new).insert(key.to_owned(), value.into());
        self
    }

    /// The JSON body of this error.
    pub fn body(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(Body { error: self.code, message: &self.message })
            .unwrap_or_else(|_| serde_json::json!({"error": self.code}));
        if let (Some(map), Some(extra)) = (v.as_object_mut(), &self.extra) {
            for (k, val) in extra {
                map.insert(k.clone(), val.clone());
            }
        }
        v
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut res = (self.status, Json(self.body())).into_response();
        if let Some(secs) = self.retry_after {
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        res
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rej: JsonRejection) -> Self {
        let status = rej.status();
        let code = if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            "unsupported_media_type"
        } else if status == StatusCode::PAYLOAD_TOO_LARGE {
            "body_too_large"
        } else {
            "invalid_body"
        };
        let status = if status.is_client_error() { status } else { StatusCode::BAD_REQUEST };
        ApiError::new(status, code, rej.body_text())
    }
}

/// Answer for any path the router does not know.
pub async fn not_found_fallback() -> ApiError {
    ApiError::not_found("not_found", "no such route")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_code_message_and_extra_fields() {
        let e = ApiError::forbidden("queue_entry_token_required", "need a token")
            .with_field("redirectTo", "/queue/e1");
        assert_eq!(
            e.body(),
            serde_json::json!({"error": "queue_entry_token_required", "message": "need a token", "redirectTo": "/queue/e1"})
        );
    }

    #[test]
    fn unavailable_sets_retry_after() {
        let res = ApiError::unavailable("redis down").into_response();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("2"));
    }
}
