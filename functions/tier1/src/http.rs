//! Axum routers of tier 1: the public API (`/vwr/...`) and the admin API
//! (`/api/admin/vwr/...`), docs/api.md#tier-1. The same routers run under `lambda_http` and in
//! `vwr dev`. The only place where tier-1 errors become HTTP answers.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, middleware};
use serde::Deserialize;
use vwr_core::admin_auth::{AdminAuth, require_admin};
use vwr_core::http::{EventPath, json_body, no_store, path_error};
use vwr_core::ticket::TicketError;
use vwr_core::tiers::StatusExtra;
use vwr_core::{ApiError, ErrorCode};

use crate::model::{ConfigPatch, StoreError};
use crate::service::{CheckOutcome, Tier1Error, Tier1Service};

/// Largest request body the tier-1 routes read.
pub const MAX_BODY_BYTES: usize = 4 * 1024;

type Svc = Arc<Tier1Service>;

impl From<Tier1Error> for ApiError {
    fn from(e: Tier1Error) -> Self {
        let msg = e.to_string();
        match e {
            Tier1Error::Ticket(TicketError::Malformed) => {
                ApiError::bad_request(ErrorCode::InvalidRequestId, "the request id is malformed")
            }
            Tier1Error::Ticket(TicketError::UnknownKid | TicketError::BadSignature) => {
                ApiError::forbidden(ErrorCode::InvalidRequestId, "the request id is not valid")
            }
            Tier1Error::Ticket(TicketError::WrongEvent) => {
                ApiError::forbidden(ErrorCode::WrongEvent, "the request id belongs to another event")
            }
            Tier1Error::Ticket(TicketError::Expired) => ApiError::new(
                StatusCode::GONE,
                ErrorCode::RequestIdExpired,
                "the request id has expired; join again",
            ),
            Tier1Error::EventNotFound => ApiError::not_found(ErrorCode::EventNotFound, msg),
            Tier1Error::EventNotActive => ApiError::conflict(ErrorCode::EventNotActive, msg),
            Tier1Error::AdmissionExpired => ApiError::new(StatusCode::GONE, ErrorCode::AdmissionExpired, msg),
            Tier1Error::InvalidConfig(_) => ApiError::bad_request(ErrorCode::InvalidConfig, msg),
            Tier1Error::InvalidAdvance(_) => ApiError::bad_request(ErrorCode::InvalidBody, msg),
            Tier1Error::Busy => ApiError::unavailable(msg),
            Tier1Error::EdgeSync(_) => ApiError::unavailable(msg).with_code(ErrorCode::EdgeSyncFailed),
            Tier1Error::Store(s) => store_error(s),
            Tier1Error::Internal(m) => ApiError::internal(m),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        store_error(e)
    }
}

fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Unavailable(_) => {
            ApiError::unavailable("the position store is unavailable; retry shortly")
        }
        StoreError::NotFound => ApiError::not_found(ErrorCode::EventNotFound, "no such event"),
        StoreError::ShardsImmutable { current } => ApiError::conflict(
            ErrorCode::ShardsImmutable,
            format!("shards is fixed at {current} once an event exists; create a new event to change it"),
        ),
        StoreError::Corrupt(m) => {
            tracing::error!(event = "tier1.corrupt_data", error = %m);
            ApiError::internal("stored data could not be read")
        }
    }
}

/// Routers here have no fallback so they can be merged; the caller adds
/// [`vwr_core::error::not_found_fallback`] at the top.
///
/// The public tier-1 API: `POST /vwr/assign/{eventId}`, `GET /vwr/check/{eventId}/{requestId}`.
pub fn public_router(svc: Svc) -> Router {
    Router::new()
        .route("/vwr/assign/{event_id}", post(assign))
        .route("/vwr/check/{event_id}/{request_id}", get(check))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(svc)
}

async fn assign(
    State(svc): State<Svc>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    // The body is optional; when present it must be a JSON object (no fields are read yet).
    let _: serde_json::Map<String, serde_json::Value> = json_body(&body)?;
    let res = svc.assign(&event).await?;
    Ok(no_store((StatusCode::OK, Json(res)).into_response()))
}

async fn check(
    State(svc): State<Svc>,
    EventPath(event): EventPath,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((_, request_id)) = path.map_err(path_error)?;
    match svc.check(&event, &request_id).await? {
        CheckOutcome::Waiting(w) => Ok(no_store(Json(w).into_response())),
        CheckOutcome::Admitted(a) => {
            let cookie = HeaderValue::from_str(&a.cookie).map_err(|_| ApiError::internal("bad cookie"))?;
            let mut res = no_store(Json(a).into_response());
            res.headers_mut().insert(header::SET_COOKIE, cookie);
            Ok(res)
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AdvanceBody {
    by: Option<u64>,
}

#[derive(Clone)]
struct AdminState {
    svc: Svc,
    extra: Option<Arc<dyn StatusExtra>>,
}

/// The admin API under `/api/admin/vwr/...`, behind `auth`.
pub fn admin_router(svc: Svc, auth: AdminAuth) -> Router {
    admin_router_with(svc, auth, None)
}

/// [`admin_router`] whose status also shows `extra` figures.
pub fn admin_router_with(svc: Svc, auth: AdminAuth, extra: Option<Arc<dyn StatusExtra>>) -> Router {
    Router::new()
        .route("/api/admin/vwr/activate/{event_id}", post(activate))
        .route("/api/admin/vwr/deactivate/{event_id}", post(deactivate))
        .route("/api/admin/vwr/status/{event_id}", get(status))
        .route("/api/admin/vwr/advance/{event_id}", post(advance))
        .route("/api/admin/vwr/events", get(list_active))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(AdminState { svc, extra })
        .layer(middleware::from_fn_with_state(auth, require_admin))
}

async fn activate(
    State(AdminState { svc, .. }): State<AdminState>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let patch: ConfigPatch = json_body(&body)?;
    Ok(no_store(Json(svc.activate(&event, patch).await?).into_response()))
}

async fn deactivate(
    State(AdminState { svc, .. }): State<AdminState>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.deactivate(&event).await?).into_response()))
}

async fn status(
    State(AdminState { svc, extra }): State<AdminState>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    let status = svc.status(&event).await?;
    let mut body = serde_json::to_value(&status).map_err(|e| ApiError::internal(e.to_string()))?;
    if let (Some(extra), Some(map)) = (extra, body.as_object_mut())
        && let Some(fig) = extra.figures(&event).await?
    {
        map.insert(extra.key().to_owned(), fig);
    }
    Ok(no_store(Json(body).into_response()))
}

async fn advance(
    State(AdminState { svc, .. }): State<AdminState>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: AdvanceBody = json_body(&body)?;
    let by = body.by.ok_or_else(|| {
        ApiError::bad_request(ErrorCode::InvalidBody, "body must be {\"by\": <positive integer>}")
    })?;
    Ok(no_store(Json(svc.advance(&event, by).await?).into_response()))
}

async fn list_active(State(AdminState { svc, .. }): State<AdminState>) -> Result<Response, ApiError> {
    let events = svc.store().list_active().await?;
    let ids: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    Ok(no_store(Json(serde_json::json!({ "events": ids })).into_response()))
}
