//! Small pieces shared by the axum routers of both tiers.

use crate::ErrorCode;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde::de::DeserializeOwned;

use crate::{ApiError, EventId};

/// Marks a response as never cacheable.
pub fn no_store(mut res: Response) -> Response {
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// Validates an event id taken from a path (400 `invalid_event_id`).
pub fn parse_event_id(raw: &str) -> Result<EventId, ApiError> {
    EventId::parse(raw).map_err(|e| ApiError::bad_request(ErrorCode::InvalidEventId, e.to_string()))
}

/// A path that axum could not extract (bad percent-encoding…): 400 `invalid_path`.
pub fn path_error(rej: PathRejection) -> ApiError {
    ApiError::bad_request(ErrorCode::InvalidPath, rej.body_text())
}

/// The validated event id of a route's `{event_id}` segment: the extractor every handler uses
/// instead of its own prologue (400 `invalid_path` for an unreadable path, 400
/// `invalid_event_id` for a bad id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPath(pub EventId);

impl<S: Send + Sync> FromRequestParts<S> for EventPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, ApiError> {
        let Path(params): Path<Vec<(String, String)>> =
            Path::from_request_parts(parts, state).await.map_err(path_error)?;
        let raw = params
            .iter()
            .find(|(k, _)| k == "event_id")
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| ApiError::internal("route without an {event_id} segment"))?;
        parse_event_id(raw).map(Self)
    }
}

/// Reads an optional JSON body: empty (or whitespace) means `T::default()`.
pub fn json_body<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(ErrorCode::InvalidBody, e.to_string()))
}

/// Header in which CloudFront sends every origin the shared origin secret.
pub const ORIGIN_SECRET_HEADER: &str = "x-vwr-origin-secret";

/// The secret that proves a request came through CloudFront (terraform/README.md, "Locking
/// origins to CloudFront"). Requests to an API behind CloudFront without it are refused, so
/// the gate and the WAF cannot be bypassed by calling the `execute-api` endpoint directly.
#[derive(Clone)]
pub struct OriginSecret(std::sync::Arc<str>);

impl std::fmt::Debug for OriginSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OriginSecret(…)")
    }
}

impl OriginSecret {
    /// Refuses secrets too short to be secret.
    pub fn new(secret: &str) -> Result<Self, String> {
        let s = secret.trim();
        if s.len() < 32 || !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the origin secret must be at least 32 visible ASCII characters".into());
        }
        Ok(Self(std::sync::Arc::from(s)))
    }

    fn matches(&self, given: &[u8]) -> bool {
        aws_lc_rs::constant_time::verify_slices_are_equal(given, self.0.as_bytes()).is_ok()
    }
}

/// Middleware: refuses (403 `origin_forbidden`) a request without the origin secret. Admin
/// requests authenticated by IAM ([`crate::admin_auth::AdminCaller`]) do not come through
/// CloudFront and are exempt; add this layer inside the one that sets that extension.
pub async fn require_origin_secret(
    axum::extract::State(secret): axum::extract::State<OriginSecret>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use axum::response::IntoResponse;
    let iam_admin = req.extensions().get::<crate::admin_auth::AdminCaller>().is_some();
    let ok = req.headers().get(ORIGIN_SECRET_HEADER).is_some_and(|v| secret.matches(v.as_bytes()));
    if ok || iam_admin {
        return next.run(req).await;
    }
    tracing::warn!(event = "http.origin_refused", path = %req.uri().path());
    ApiError::forbidden(ErrorCode::OriginForbidden, "this API is only reachable through the site's CDN")
        .into_response()
}

/// Middleware: every error answer is the JSON error contract, including those axum writes
/// itself as plain text (413 from the body limit, 405, 415, bad paths).
pub async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let res = next.run(req).await;
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let (code, message) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (ErrorCode::BodyTooLarge, "the request body is too large"),
        StatusCode::METHOD_NOT_ALLOWED => {
            (ErrorCode::MethodNotAllowed, "this route does not take this method")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (ErrorCode::UnsupportedMediaType, "send JSON (application/json)")
        }
        StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such route"),
        s if s.is_client_error() => (ErrorCode::InvalidRequest, "the request could not be read"),
        _ => (ErrorCode::InternalError, "the request failed"),
    };
    let allow = res.headers().get(header::ALLOW).cloned();
    let mut out = ApiError::new(status, code, message).into_response();
    if let Some(a) = allow {
        out.headers_mut().insert(header::ALLOW, a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_secrets_must_be_long() {
        assert!(OriginSecret::new("short").is_err());
        let s = OriginSecret::new(&"x".repeat(40)).unwrap();
        assert!(s.matches("x".repeat(40).as_bytes()));
        assert!(!s.matches("x".repeat(39).as_bytes()));
        assert!(!format!("{s:?}").contains("xxxx"));
    }
}
