//! The error contract of every vwr HTTP API: `{"error": "<code>", "message": "<text>"}` with a
//! fitting status, and `Retry-After` on 503/429.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Seconds a client is told to wait when a dependency is down.
pub const DEFAULT_RETRY_AFTER_SECS: u64 = 2;

/// Every machine code an API answers with (`{"error": "<code>"}`), in one place: clients
/// branch on these, so they never change spelling (docs/api.md#errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    // Bad input (400, 405, 413, 415).
    InvalidBody,
    InvalidEventId,
    InvalidPath,
    InvalidRequest,
    InvalidRequestId,
    InvalidConfig,
    InvalidSchedule,
    InvalidPage,
    StandbyAlarmUnreadable,
    InvalidUserId,
    BadPath,
    BodyTooLarge,
    MethodNotAllowed,
    UnsupportedMediaType,
    // Authentication and authorisation (401, 403).
    Unauthorized,
    Forbidden,
    PrincipalNotAllowed,
    ForbiddenRole,
    OriginForbidden,
    IdentityRequired,
    InvalidIdentity,
    WrongEvent,
    ProofRequired,
    ChallengeRequired,
    EnqueueTokenRequired,
    Tier1TokenRequired,
    WaitingRoomTokenRequired,
    QueueEntryTokenRequired,
    // Unknown (404).
    NotFound,
    EventNotFound,
    NotInQueue,
    // Conflict and gone (409, 410).
    EventNotActive,
    EventNotOpen,
    EventClosed,
    InvalidTransition,
    ShardsImmutable,
    TooManyPasses,
    PassExpired,
    PositionTaken,
    RequestIdExpired,
    AdmissionExpired,
    SessionEnded,
    InvalidToken,
    // Dependencies and bugs (500, 503).
    ServiceUnavailable,
    EdgeSyncFailed,
    InternalError,
}

impl ErrorCode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidBody => "invalid_body",
            Self::InvalidEventId => "invalid_event_id",
            Self::InvalidPath => "invalid_path",
            Self::InvalidRequest => "invalid_request",
            Self::InvalidRequestId => "invalid_request_id",
            Self::InvalidConfig => "invalid_config",
            Self::InvalidSchedule => "invalid_schedule",
            Self::InvalidPage => "invalid_page",
            Self::StandbyAlarmUnreadable => "standby_alarm_unreadable",
            Self::InvalidUserId => "invalid_user_id",
            Self::BadPath => "bad_path",
            Self::BodyTooLarge => "body_too_large",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::PrincipalNotAllowed => "principal_not_allowed",
            Self::ForbiddenRole => "forbidden_role",
            Self::OriginForbidden => "origin_forbidden",
            Self::IdentityRequired => "identity_required",
            Self::InvalidIdentity => "invalid_identity",
            Self::WrongEvent => "wrong_event",
            Self::ProofRequired => "proof_required",
            Self::ChallengeRequired => "challenge_required",
            Self::EnqueueTokenRequired => "enqueue_token_required",
            Self::Tier1TokenRequired => "tier1_token_required",
            Self::WaitingRoomTokenRequired => "waiting_room_token_required",
            Self::QueueEntryTokenRequired => "queue_entry_token_required",
            Self::NotFound => "not_found",
            Self::EventNotFound => "event_not_found",
            Self::NotInQueue => "not_in_queue",
            Self::EventNotActive => "event_not_active",
            Self::EventNotOpen => "event_not_open",
            Self::EventClosed => "event_closed",
            Self::InvalidTransition => "invalid_transition",
            Self::ShardsImmutable => "shards_immutable",
            Self::TooManyPasses => "too_many_passes",
            Self::PassExpired => "pass_expired",
            Self::PositionTaken => "position_taken",
            Self::RequestIdExpired => "request_id_expired",
            Self::AdmissionExpired => "admission_expired",
            Self::SessionEnded => "session_ended",
            Self::InvalidToken => "invalid_token",
            Self::ServiceUnavailable => "service_unavailable",
            Self::EdgeSyncFailed => "edge_sync_failed",
            Self::InternalError => "internal_error",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// An error answer of the HTTP API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    pub retry_after: Option<u64>,
    /// Extra top-level JSON fields (for example `redirectTo`).
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: ErrorCode,
    message: &'a str,
}

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), retry_after: None, extra: None }
    }

    pub fn bad_request(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn conflict(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message)
    }

    pub fn forbidden(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }

    /// 503 with `Retry-After`: a dependency (DynamoDB, Redis, …) is unavailable.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            retry_after: Some(DEFAULT_RETRY_AFTER_SECS),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, ErrorCode::ServiceUnavailable, message)
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::InternalError, message)
    }

    /// Replaces the machine code.
    pub fn with_code(mut self, code: ErrorCode) -> Self {
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
            .unwrap_or_else(|_| serde_json::json!({"error": self.code.as_str()}));
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
            ErrorCode::UnsupportedMediaType
        } else if status == StatusCode::PAYLOAD_TOO_LARGE {
            ErrorCode::BodyTooLarge
        } else {
            ErrorCode::InvalidBody
        };
        let status = if status.is_client_error() { status } else { StatusCode::BAD_REQUEST };
        ApiError::new(status, code, rej.body_text())
    }
}

/// Answer for any path the router does not know.
pub async fn not_found_fallback() -> ApiError {
    ApiError::not_found(ErrorCode::NotFound, "no such route")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_code_message_and_extra_fields() {
        let e = ApiError::forbidden(ErrorCode::QueueEntryTokenRequired, "need a token")
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
