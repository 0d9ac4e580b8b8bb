//! Axum routers of tier 1: the public API (`/vwr/...`) and the admin API
//! (`/api/admin/vwr/...`). The same routers run under `lambda_http` and in `vwr dev`.

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
use vwr_core::http::{json_body, no_store, parse_event_id as event_id, path_error};
use vwr_core::{ApiError, EventId};

use crate::model::ConfigPatch;
use crate::service::{CheckOutcome, Tier1Service};

/// Largest request body the tier-1 routes read.
pub const MAX_BODY_BYTES: usize = 4 * 1024;

type Svc = Arc<Tier1Service>;

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
    path: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Path(raw) = path.map_err(path_error)?;
    let event = event_id(&raw)?;
    // The body is optional; when present it must be a JSON object (no fields are read yet).
    let _: serde_json::Map<String, serde_json::Value> = json_body(&body)?;
    let res = svc.assign(&event).await?;
    Ok(no_store((StatusCode::OK, Json(res)).into_response()))
}

async fn check(
    State(svc): State<Svc>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((raw, request_id)) = path.map_err(path_error)?;
    let event = event_id(&raw)?;
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

/// More figures for the admin status of an event (tier 2 adds its own when it runs in the
/// same process, as in `vwr dev`).
#[async_trait::async_trait]
pub trait StatusExtra: Send + Sync + 'static {
    /// The key under which the figures appear.
    fn key(&self) -> &'static str;
    async fn figures(&self, event: &EventId) -> Result<Option<serde_json::Value>, ApiError>;
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
    path: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Path(raw) = path.map_err(path_error)?;
    let event = event_id(&raw)?;
    let patch: ConfigPatch = json_body(&body)?;
    Ok(no_store(Json(svc.activate(&event, patch).await?).into_response()))
}

async fn deactivate(
    State(AdminState { svc, .. }): State<AdminState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path(raw) = path.map_err(path_error)?;
    Ok(no_store(Json(svc.deactivate(&event_id(&raw)?).await?).into_response()))
}

async fn status(
    State(AdminState { svc, extra }): State<AdminState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path(raw) = path.map_err(path_error)?;
    let event = event_id(&raw)?;
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
    path: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Path(raw) = path.map_err(path_error)?;
    let event = event_id(&raw)?;
    let body: AdvanceBody = json_body(&body)?;
    let by = body
        .by
        .ok_or_else(|| ApiError::bad_request("invalid_body", "body must be {\"by\": <positive integer>}"))?;
    Ok(no_store(Json(svc.advance(&event, by).await?).into_response()))
}

async fn list_active(State(AdminState { svc, .. }): State<AdminState>) -> Result<Response, ApiError> {
    let events = svc.store().list_active().await?;
    let ids: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    Ok(no_store(Json(serde_json::json!({ "events": ids })).into_response()))
}
