//! Small pieces shared by the axum routers of both tiers.

use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
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
    EventId::parse(raw).map_err(|e| ApiError::bad_request("invalid_event_id", e.to_string()))
}

/// A path that axum could not extract (bad percent-encoding…): 400 `invalid_path`.
pub fn path_error(rej: PathRejection) -> ApiError {
    ApiError::bad_request("invalid_path", rej.body_text())
}

/// The event id of a single-parameter path.
pub fn event_from_path(path: Result<Path<String>, PathRejection>) -> Result<EventId, ApiError> {
    let Path(raw) = path.map_err(path_error)?;
    parse_event_id(&raw)
}

/// Reads an optional JSON body: empty (or whitespace) means `T::default()`.
pub fn json_body<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request("invalid_body", e.to_string()))
}
