//! Axum routers of tier 2: `/api/queue/...` (public), the JWKS, and the tier-2 admin routes.
//! The only place where tier-2 errors become HTTP answers, and where the service's typed
//! answers become headers and cookies (the identity cookie and the renewed tier-1 cookie are
//! set here, written by `vwr_core::identity::set_cookie` as tier 1 writes its cookie).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router, middleware};
use serde::Deserialize;
use vwr_core::admin_auth::{AdminAuth, Role, RouteRoles, require_admin, require_role};
use vwr_core::hold::Held;
use vwr_core::http::{EventPath, json_body, no_store};
use vwr_core::identity::{cleared_cookie, set_cookie};
use vwr_core::{ApiError, ErrorCode, EventId};

use crate::identity::{Caller, IDENTITY_COOKIE_PREFIX, Identity, IdentityError, Source};
use crate::model::{LineOrder, StoreError};
use crate::service::{Tier2Error, Tier2Service};

/// Largest request body read.
pub const MAX_BODY_BYTES: usize = 4 * 1024;

impl From<Tier2Error> for ApiError {
    fn from(e: Tier2Error) -> Self {
        let msg = e.to_string();
        match e {
            Tier2Error::EventNotFound => ApiError::not_found(ErrorCode::EventNotFound, msg),
            Tier2Error::NotInQueue => ApiError::not_found(ErrorCode::NotInQueue, msg),
            Tier2Error::Tier1TokenRequired => ApiError::forbidden(ErrorCode::Tier1TokenRequired, msg),
            Tier2Error::InvalidThreshold(_) => ApiError::bad_request(ErrorCode::InvalidBody, msg),
            Tier2Error::Tier1Unavailable(_) => {
                ApiError::unavailable("the waiting room is unavailable; retry shortly")
            }
            Tier2Error::Store(s) => store_error(s),
            Tier2Error::Internal(m) => ApiError::internal(m),
        }
    }
}

fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Unavailable(_) => {
            ApiError::unavailable("the admission store is unavailable; retry shortly")
        }
        StoreError::UnknownEvent => {
            ApiError::not_found(ErrorCode::EventNotFound, "this event has no waiting room")
        }
        StoreError::OrderMismatch(order) => ApiError::forbidden(
            ErrorCode::Tier1TokenRequired,
            format!("this event's line is ordered by {order}; pass the waiting room first"),
        ),
        StoreError::NoPlace => ApiError::forbidden(
            ErrorCode::Tier1TokenRequired,
            "no place in this line; pass the waiting room first",
        ),
        StoreError::PositionTaken => ApiError::conflict(
            ErrorCode::PositionTaken,
            "this waiting-room admission is already in line under another user",
        ),
        StoreError::Protocol(m) => {
            tracing::error!(event = "tier2.protocol_error", error = %m);
            ApiError::internal("unexpected reply from the admission store")
        }
    }
}

impl From<IdentityError> for ApiError {
    fn from(e: IdentityError) -> Self {
        let msg = e.to_string();
        match e {
            IdentityError::BadUpstream => ApiError::forbidden(ErrorCode::InvalidIdentity, msg),
            IdentityError::BadDevUser => ApiError::bad_request(ErrorCode::InvalidUserId, msg),
            IdentityError::Missing => ApiError::unauthorized(msg).with_code(ErrorCode::IdentityRequired),
        }
    }
}

#[derive(Clone)]
struct AppState {
    svc: Arc<Tier2Service>,
    identity: Identity,
}

/// The body of check/heartbeat/leave must be empty or `{}`: nothing a client sends can
/// influence its place in line.
fn empty_body(body: &Bytes) -> Result<(), ApiError> {
    let fields: serde_json::Map<String, serde_json::Value> = json_body(body)?;
    if fields.is_empty() {
        Ok(())
    } else {
        Err(ApiError::bad_request(ErrorCode::InvalidBody, "this request takes no fields"))
    }
}

/// The event and the caller of a tier-2 request whose body must be empty.
fn request(
    st: &AppState,
    event: EventId,
    parts: &Parts,
    body: Option<&Bytes>,
) -> Result<(EventId, Caller), ApiError> {
    if let Some(body) = body {
        empty_body(body)?;
    }
    let caller = st.identity.caller(parts, &event)?;
    Ok((event, caller))
}

/// The public tier-2 API. Merge with [`admin_router`]; add a fallback at the top.
pub fn public_router(svc: Arc<Tier2Service>, identity: Identity) -> Router {
    Router::new()
        .route("/api/queue/check/{event_id}", post(check))
        .route("/api/queue/status/{event_id}", get(status))
        .route("/api/queue/heartbeat/{event_id}", post(heartbeat))
        .route("/api/queue/leave/{event_id}", post(leave))
        .route("/api/queue/line/{event_id}", get(line))
        .route("/api/queue/.well-known/jwks.json", get(jwks))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(AppState { svc, identity })
}

/// Adds `Set-Cookie: cookie` to `res`.
fn with_cookie(mut res: Response, cookie: Option<String>) -> Result<Response, ApiError> {
    if let Some(c) = cookie {
        let v = HeaderValue::from_str(&c).map_err(|_| ApiError::internal("bad cookie"))?;
        res.headers_mut().append(header::SET_COOKIE, v);
    }
    Ok(res)
}

/// The name of the tier-2 identity cookie of `event`.
fn identity_cookie_name(event: &EventId) -> String {
    format!("{IDENTITY_COOKIE_PREFIX}{event}")
}

/// The `Set-Cookie` value that removes the identity cookie of `event` (after `leave`).
fn cleared_identity_cookie(event: &EventId) -> String {
    cleared_cookie(&identity_cookie_name(event))
}

/// A successful answer (tier 2 holds the caller) refreshes the caller's tier-2 identity
/// cookie, and renews their tier-1 cookie so the protected paths stay open for as long as tier
/// 2 holds them (docs/invariants.md#20).
/// The identity carries what tier 2 holds for the caller (`held`); a place in line answered
/// without its score (`status`, `heartbeat`; a user back for an admission at the front) keeps
/// the hold the caller's cookie had.
fn answered(
    st: &AppState,
    event: &EventId,
    caller: &Caller,
    held: Option<Held>,
    parts: &Parts,
    res: Response,
) -> Result<Response, ApiError> {
    let held = held.or_else(|| st.identity.proof(&parts.headers, event, &caller.user).map(|p| p.held));
    let identity = st.svc.identity_token(event, caller, held.as_ref())?;
    let identity = identity.map(|i| set_cookie(&identity_cookie_name(event), &i.token, i.ttl_secs));
    let res = with_cookie(no_store(res), identity)?;
    // The renewed token lasts the window; its cookie as long as the identity, so that after a
    // long quiet wait in line the browser still sends it, expired, and the call at the turn
    // renews it (docs/tokens.md#tier-2-holds).
    let window = st.svc.settings().identity_ttl_ms() / 1000;
    let cookie_life = st.svc.settings().identity_life_ms() / 1000;
    let renewed = st.identity.renewed_tier1_token(&parts.headers, event, &caller.user, window);
    let renewed = renewed.map(|t| set_cookie(&st.identity.tier1_cookie_name(event), &t, cookie_life));
    with_cookie(res, renewed)
}

async fn check(
    State(st): State<AppState>,
    EventPath(event): EventPath,
    parts: Parts,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (event, mut caller) = request(&st, event, &parts, Some(&body))?;
    // The place tier 2 signed into the caller's identity: given back if the store lost it.
    caller.proof = st.identity.proof(&parts.headers, &event, &caller.user);
    let answer = st.svc.check(&event, &caller).await?;
    let held = answer.held.clone();
    answered(&st, &event, &caller, held, &parts, Json(answer).into_response())
}

async fn status(
    State(st): State<AppState>,
    EventPath(event): EventPath,
    parts: Parts,
) -> Result<Response, ApiError> {
    let (event, caller) = request(&st, event, &parts, None)?;
    let answer = st.svc.status(&event, &caller.user).await?;
    let held = answer.held.clone();
    answered(&st, &event, &caller, held, &parts, Json(answer).into_response())
}

async fn heartbeat(
    State(st): State<AppState>,
    EventPath(event): EventPath,
    parts: Parts,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (event, caller) = request(&st, event, &parts, Some(&body))?;
    let held = st.svc.heartbeat(&event, &caller.user).await?;
    answered(&st, &event, &caller, held, &parts, StatusCode::NO_CONTENT.into_response())
}

async fn leave(
    State(st): State<AppState>,
    EventPath(event): EventPath,
    parts: Parts,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (event, caller) = request(&st, event, &parts, Some(&body))?;
    st.svc.leave(&event, &caller.user).await?;
    let clear = (caller.source != Source::DevHeader).then(|| cleared_identity_cookie(&event));
    with_cookie(no_store(StatusCode::NO_CONTENT.into_response()), clear)
}

/// The line document: public and the same for everyone — no identity read, no cookie set —
/// so CloudFront may share it for a second (docs/api.md#the-line-document). An unknown event's
/// 404 is shared for as long, as tier 1's documents do: a made-up id asked again within the
/// second stops at CloudFront, not at Redis and DynamoDB.
async fn line(State(st): State<AppState>, EventPath(event): EventPath) -> Result<Response, ApiError> {
    let age = crate::service::LINE_DOCUMENT_TTL.as_secs();
    let cc = HeaderValue::from_str(&format!("public, max-age={age}"))
        .map_err(|_| ApiError::internal("bad header"))?;
    let mut res = match st.svc.line(&event).await {
        Ok(doc) => Json(doc).into_response(),
        Err(e) => {
            let e = ApiError::from(e);
            if e.status != StatusCode::NOT_FOUND {
                return Err(e);
            }
            e.into_response()
        }
    };
    res.headers_mut().insert(header::CACHE_CONTROL, cc);
    Ok(res)
}

async fn jwks(State(st): State<AppState>) -> Response {
    let mut res = Json(st.svc.tokens().ring().jwks()).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    res
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ThresholdBody {
    threshold: u64,
    line_order: Option<String>,
}

/// The least role of each tier-2 admin route (docs/console.md#roles), enforced by
/// [`require_role`] before the handler runs; a route missing here is admin only.
pub const ADMIN_ROLES: RouteRoles = &[
    ("GET", "/api/queue/admin/status/{event_id}", Role::Viewer),
    ("GET", "/api/queue/admin/report/{event_id}", Role::Viewer),
    ("PUT", "/api/queue/admin/threshold/{event_id}", Role::Operator),
    ("DELETE", "/api/queue/admin/event/{event_id}", Role::Admin),
];

/// Tier-2 admin routes behind `auth`, each open to the roles [`ADMIN_ROLES`] gives it:
/// `PUT /api/queue/admin/threshold/{eventId}`, `GET /api/queue/admin/status/{eventId}`,
/// `GET /api/queue/admin/report/{eventId}` and `DELETE /api/queue/admin/event/{eventId}`.
pub fn admin_router(svc: Arc<Tier2Service>, auth: AdminAuth) -> Router {
    Router::new()
        .route("/api/queue/admin/threshold/{event_id}", put(set_threshold))
        .route("/api/queue/admin/status/{event_id}", get(admin_status))
        .route("/api/queue/admin/report/{event_id}", get(admin_report))
        .route("/api/queue/admin/event/{event_id}", axum::routing::delete(unregister))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(svc)
        .layer(middleware::from_fn_with_state(ADMIN_ROLES, require_role))
        .layer(middleware::from_fn_with_state(auth, require_admin))
}

async fn set_threshold(
    State(svc): State<Arc<Tier2Service>>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: ThresholdBody = vwr_core::http::strict_json(&body).map_err(|e| {
        ApiError::bad_request(
            ErrorCode::InvalidBody,
            format!("expected {{\"threshold\": <integer ≥ 1>}}: {}", e.message),
        )
    })?;
    let order =
        match body.line_order.as_deref() {
            None => None,
            Some(o) => Some(LineOrder::parse(o).ok_or_else(|| {
                ApiError::bad_request(ErrorCode::InvalidBody, "lineOrder is tier1 or arrival")
            })?),
        };
    let meta = svc.set_threshold(&event, body.threshold, order).await?;
    Ok(no_store(
        Json(serde_json::json!({"eventId": event, "threshold": meta.threshold, "lineOrder": meta.order}))
            .into_response(),
    ))
}

async fn admin_status(
    State(svc): State<Arc<Tier2Service>>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.admin_status(&event).await?).into_response()))
}

/// Tier 2's part of the report after the sale (docs/operate.md#the-report-after-the-sale).
async fn admin_report(
    State(svc): State<Arc<Tier2Service>>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.report(&event).await?).into_response()))
}

async fn unregister(
    State(svc): State<Arc<Tier2Service>>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    if !svc.unregister(&event).await? {
        return Err(ApiError::not_found(ErrorCode::EventNotFound, "this event has no waiting room"));
    }
    Ok(no_store(StatusCode::NO_CONTENT.into_response()))
}

#[cfg(test)]
mod tests {
    use super::{cleared_identity_cookie, identity_cookie_name, set_cookie};

    #[test]
    fn tier2_cookies_keep_their_wire_format() {
        let e1 = vwr_core::EventId::parse("e1").unwrap();
        assert_eq!(
            set_cookie(&identity_cookie_name(&e1), "h.p.s", 210),
            "vwr_t2_e1=h.p.s; Max-Age=210; Path=/; Secure; HttpOnly; SameSite=Lax"
        );
        assert_eq!(
            cleared_identity_cookie(&e1),
            "vwr_t2_e1=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax"
        );
    }
}
