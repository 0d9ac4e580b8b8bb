//! Axum routers of tier 1: the public API (`/vwr/...`) and the admin API
//! (`/api/admin/vwr/...`), docs/api.md#tier-1. The same routers run under `lambda_http` and in
//! `vwr dev`. The only place where tier-1 errors become HTTP answers, and where the service's
//! typed answers become headers and cookies (the tier-1 cookie is set here, written by
//! `vwr_core::identity::set_cookie`).

use std::sync::Arc;

use crate::ticket::TicketError;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Extension, Json, middleware};
use serde::Deserialize;
use vwr_core::admin_auth::{AdminAuth, AdminIdentity, Role, RouteRoles, require_admin, require_role};
use vwr_core::http::{EventPath, json_body, no_store, path_error};
use vwr_core::tiers::StatusExtra;
use vwr_core::{ApiError, ErrorCode};

use crate::lifecycle::LifecycleError;
use crate::model::{CloseReason, ConfigPatch, Message, PageSettings, PassError, StoreError};
use crate::service::{CheckOutcome, JoinProof, Presented, ScheduleRequest, Tier1Error, Tier1Service};
use vwr_core::hold::IDENTITY_COOKIE_PREFIX;
use vwr_core::identity::{cleared_cookie, set_cookie};

/// Largest request body the tier-1 routes read.
pub const MAX_BODY_BYTES: usize = 4 * 1024;
/// Largest body of the routes that take text in the page's five languages: the page settings
/// (`PUT …/page/{eventId}`, 80 + 300 characters a language, three 512-character URLs) and the
/// operator's message (`PUT …/message`, `POST …/pause`, `POST …/close`, 500 characters a
/// language). At every limit of docs/brand.md and docs/lifecycle.md, each character written as
/// a JSON surrogate-pair escape (12 bytes), they take about 30 KiB.
pub const MAX_TEXT_BODY_BYTES: usize = 32 * 1024;

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
            Tier1Error::EventNotOpen { prequeue_at, opens_at } => {
                ApiError::conflict(ErrorCode::EventNotOpen, msg)
                    .with_field("prequeueAt", prequeue_at)
                    .with_field("opensAt", opens_at)
            }
            Tier1Error::EventClosed { reason } => {
                let e = ApiError::conflict(ErrorCode::EventClosed, msg);
                match reason {
                    Some(r) => e.with_field("closeReason", r.as_str()),
                    None => e,
                }
            }
            Tier1Error::Lifecycle(l) => match l {
                LifecycleError::NotFound => ApiError::not_found(ErrorCode::EventNotFound, msg),
                LifecycleError::InvalidTransition { state, .. } => {
                    ApiError::conflict(ErrorCode::InvalidTransition, msg).with_field("state", state.as_str())
                }
                LifecycleError::HasHistory => ApiError::conflict(ErrorCode::InvalidTransition, msg),
                LifecycleError::SealTimeFixed { state, .. } => {
                    ApiError::conflict(ErrorCode::InvalidTransition, msg).with_field("state", state.as_str())
                }
                LifecycleError::InvalidSchedule(_) => ApiError::bad_request(ErrorCode::InvalidSchedule, msg),
                LifecycleError::InvalidConfig(_) => ApiError::bad_request(ErrorCode::InvalidConfig, msg),
                LifecycleError::ShardsImmutable { current } => ApiError::conflict(
                    ErrorCode::ShardsImmutable,
                    format!(
                        "shards is fixed at {current} once an event exists; create a new event to change it"
                    ),
                ),
                LifecycleError::SealRequired => ApiError::internal(msg),
                LifecycleError::Page(_) => ApiError::bad_request(ErrorCode::InvalidPage, msg),
                LifecycleError::Pass(p) => match p {
                    PassError::BadTtl | PassError::BadLabel => {
                        ApiError::bad_request(ErrorCode::InvalidBody, msg)
                    }
                    PassError::NotFound => ApiError::not_found(ErrorCode::NotFound, msg),
                    PassError::TooMany | PassError::TooManyRecords => {
                        ApiError::conflict(ErrorCode::TooManyPasses, msg)
                    }
                    PassError::Expired => ApiError::new(StatusCode::GONE, ErrorCode::PassExpired, msg),
                },
            },
            Tier1Error::InvalidMessage(_) => ApiError::bad_request(ErrorCode::InvalidBody, msg),
            Tier1Error::AdmissionExpired => ApiError::new(StatusCode::GONE, ErrorCode::AdmissionExpired, msg),
            Tier1Error::ChallengeRequired { challenge, difficulty } => {
                ApiError::forbidden(ErrorCode::ChallengeRequired, msg)
                    .with_field("challenge", challenge)
                    .with_field("difficulty", difficulty)
            }
            Tier1Error::EnqueueTokenRequired => {
                ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::EnqueueTokenRequired, msg)
            }
            Tier1Error::ProofRequired => ApiError::forbidden(ErrorCode::ProofRequired, msg),
            Tier1Error::SessionEnded => ApiError::new(StatusCode::GONE, ErrorCode::SessionEnded, msg),
            Tier1Error::InvalidToken => ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::InvalidToken, msg),
            Tier1Error::ForeignToken => ApiError::forbidden(ErrorCode::InvalidToken, msg),
            Tier1Error::InvalidConfig(_) => ApiError::bad_request(ErrorCode::InvalidConfig, msg),
            Tier1Error::StandbyAlarmUnreadable { .. } => {
                ApiError::bad_request(ErrorCode::StandbyAlarmUnreadable, msg)
            }
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
        StoreError::Corrupt(m) => {
            tracing::error!(event = "tier1.corrupt_data", error = %m);
            ApiError::internal("stored data could not be read")
        }
    }
}

/// Routers here have no fallback so they can be merged; the caller adds
/// [`vwr_core::error::not_found_fallback`] at the top.
///
/// The public tier-1 API: `POST /vwr/assign/{eventId}`, `GET /vwr/check/{eventId}/{requestId}`,
/// `GET /vwr/status/{eventId}`.
pub fn public_router(svc: Svc) -> Router {
    Router::new()
        .route("/vwr/assign/{event_id}", post(assign))
        .route("/vwr/check/{event_id}/{request_id}", get(check))
        .route("/vwr/status/{event_id}", get(public_status))
        .route("/vwr/page/{event_id}", get(public_page))
        .route("/vwr/release/{event_id}", post(release))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(svc)
}

/// The header that carries the site's enqueue token (or the cookie `vwr_enqueue_{eventId}`).
pub const ENQUEUE_TOKEN_HEADER: &str = "x-vwr-enqueue-token";

#[derive(Debug, Default, Deserialize)]
struct PowBody {
    challenge: String,
    nonce: String,
}

#[derive(Debug, Default, Deserialize)]
struct AssignBody {
    /// A solved proof of work (docs/abuse.md#proof-of-work).
    pow: Option<PowBody>,
}

async fn assign(
    State(svc): State<Svc>,
    EventPath(event): EventPath,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    // The body is optional; when present it is a JSON object. Unknown fields are ignored (old
    // pages sent `{}` or other fields): only `pow` is read.
    let map: serde_json::Map<String, serde_json::Value> = json_body(&body)?;
    let parsed: AssignBody = match map.get("pow") {
        None | Some(serde_json::Value::Null) => AssignBody::default(),
        Some(v) => AssignBody {
            pow: Some(
                v.is_object().then(|| serde_json::from_value(v.clone())).and_then(Result::ok).ok_or_else(
                    || {
                        ApiError::bad_request(
                            ErrorCode::InvalidBody,
                            "pow must be {\"challenge\": \"…\", \"nonce\": \"…\"}",
                        )
                    },
                )?,
            ),
        },
    };
    let cookie_name = format!("vwr_enqueue_{event}");
    let enqueue_token = headers
        .get(ENQUEUE_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| cookie_value(&headers, &cookie_name));
    // A malformed nonce is refused whether or not a proof is asked (docs/abuse.md).
    let nonce_ok = |n: &str| {
        (1..=64).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    if let Some(p) = &parsed.pow
        && !nonce_ok(&p.nonce)
    {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidBody,
            "pow.nonce must be 1 to 64 characters of A-Z, a-z, 0-9, '_' or '-'",
        ));
    }
    let proof = JoinProof { pow: parsed.pow.map(|p| (p.challenge, p.nonce)), enqueue_token };
    let res = match svc.assign(&event, &proof).await {
        Ok(r) => r,
        Err(e) => return Err(refused(&svc, &event, e).await),
    };
    Ok(no_store((StatusCode::OK, Json(res)).into_response()))
}

/// A refused call of `assign` or `check`: its answer, counted by its code for the report
/// (docs/operate.md#the-report-after-the-sale).
async fn refused(svc: &Tier1Service, event: &vwr_core::EventId, e: Tier1Error) -> ApiError {
    let api = ApiError::from(e);
    svc.count_refusal(event, api.code.as_str()).await;
    api
}

fn cookie_value(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|h| vwr_core::identity::cookie(h, name).map(str::to_owned))
}

/// The header that carries a ticket's request secret (docs/tokens.md#request-secrets).
pub const REQUEST_SECRET_HEADER: &str = "x-vwr-request-secret";

async fn check(
    State(svc): State<Svc>,
    EventPath(event): EventPath,
    path: Result<Path<(String, String)>, PathRejection>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let Path((_, request_id)) = path.map_err(path_error)?;
    let secret = headers.get(REQUEST_SECRET_HEADER).and_then(|v| v.to_str().ok());
    // The visitor's tier-1 token, as release reads it: tier 2 renews it while it holds the
    // visitor (docs/invariants.md#19).
    let tokens = tier1_tokens(&svc, &event, &headers);
    let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
    // The hold tier 2 signed into the visitor's identity (docs/invariants.md#27).
    let holds = cookie_value(&headers, &format!("{IDENTITY_COOKIE_PREFIX}{event}"));
    let holds: Vec<&str> = holds.iter().map(String::as_str).collect();
    let presented = Presented { tokens: &tokens, holds: &holds };
    let outcome = match svc.check_with_tokens(&event, &request_id, secret, &presented).await {
        Ok(o) => o,
        Err(e) => return Err(refused(&svc, &event, e).await),
    };
    match outcome {
        CheckOutcome::Waiting(w) => Ok(no_store(Json(w).into_response())),
        CheckOutcome::Prequeue(p) => Ok(no_store(Json(p).into_response())),
        CheckOutcome::Closed(c) => Ok(no_store(Json(c).into_response())),
        CheckOutcome::Admitted(a) => {
            // The cookie outlives its token (the edge judges the token): a token that lapsed
            // during a long quiet wait in tier 2 is still sent at the turn, where tier 2 renews
            // it (docs/tokens.md#tier-2-holds).
            let max_age = a.expires_at.saturating_sub(a.answered_at).max(TOKEN_COOKIE_LIFE_SECS);
            let cookie =
                HeaderValue::from_str(&set_cookie(&token_cookie_name(&svc, &event), &a.token, max_age))
                    .map_err(|_| ApiError::internal("bad cookie"))?;
            let mut res = no_store(Json(a).into_response());
            res.headers_mut().insert(header::SET_COOKIE, cookie);
            Ok(res)
        }
    }
}

/// How long the tier-1 cookie lasts at least: a day, as tier 2's identity cookie.
pub const TOKEN_COOKIE_LIFE_SECS: u64 = 86_400;

/// The header that carries a visitor's tier-1 token (or the cookie `{prefix}{eventId}`).
pub const TOKEN_HEADER: &str = "x-vwr-token";

/// The name of the visitor's tier-1 cookie of `event`: `{prefix}{eventId}`, the prefix from
/// the settings (`VWR_COOKIE_PREFIX`).
pub fn token_cookie_name(svc: &Tier1Service, event: &vwr_core::EventId) -> String {
    format!("{}{}", svc.settings().cookie_prefix, event)
}

/// The tier-1 tokens a request carries: `x-vwr-token`, then the cookie `{prefix}{eventId}`.
fn tier1_tokens(
    svc: &Tier1Service,
    event: &vwr_core::EventId,
    headers: &axum::http::HeaderMap,
) -> Vec<String> {
    let cookie_name = token_cookie_name(svc, event);
    headers
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .into_iter()
        .chain(cookie_value(headers, &cookie_name))
        .collect()
}

/// `POST /vwr/release/{eventId}`: the site's "done" for a visitor, with the visitor's tier-1
/// token in `x-vwr-token` or the tier-1 cookie. 204, and the cookie is cleared.
async fn release(
    State(svc): State<Svc>,
    EventPath(event): EventPath,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let token = tier1_tokens(&svc, &event, &headers).into_iter().next().ok_or(Tier1Error::InvalidToken)?;
    svc.release(&event, &token).await?;
    let clear = HeaderValue::from_str(&cleared_cookie(&token_cookie_name(&svc, &event)))
        .map_err(|_| ApiError::internal("bad cookie"))?;
    let mut res = no_store(StatusCode::NO_CONTENT.into_response());
    res.headers_mut().insert(header::SET_COOKIE, clear);
    Ok(res)
}

/// Cache-Control of the public status document: every visitor gets the same body, and the
/// CDN may keep it for a second (docs/lifecycle.md#the-public-status-document).
pub const STATUS_CACHE_CONTROL: &str = "public, max-age=1";

async fn public_status(State(svc): State<Svc>, EventPath(event): EventPath) -> Response {
    public_document(svc.public_status(&event).await, STATUS_CACHE_CONTROL)
}

/// How long CDNs and browsers keep the page document (docs/brand.md): a minute, the same for
/// every visitor; a change of the settings shows within it.
pub const PAGE_CACHE_CONTROL: &str = "public, max-age=60";

/// `GET /vwr/page/{eventId}`: the page settings, cached like the status document but for a
/// minute.
async fn public_page(State(svc): State<Svc>, EventPath(event): EventPath) -> Response {
    public_document(svc.public_page(&event).await, PAGE_CACHE_CONTROL)
}

/// A public document (the same body for every visitor) with `cache_control`. An unknown event
/// is cached like a known one (a flood of made-up ids stays at the CDN); any other error is not
/// cached.
fn public_document<T: serde::Serialize>(
    answer: Result<T, Tier1Error>,
    cache_control: &'static str,
) -> Response {
    let mut res = match answer {
        Ok(doc) => Json(doc).into_response(),
        Err(Tier1Error::EventNotFound) => ApiError::from(Tier1Error::EventNotFound).into_response(),
        Err(e) => return ApiError::from(e).into_response(),
    };
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache_control));
    res
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    /// Required key; `null` clears.
    #[serde(default, deserialize_with = "vwr_core::http::opt_object")]
    message: Option<Message>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PauseBody {
    #[serde(default, deserialize_with = "vwr_core::http::opt_object")]
    message: Option<Message>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CloseBody {
    reason: Option<String>,
    #[serde(default, deserialize_with = "vwr_core::http::opt_object")]
    message: Option<Message>,
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

/// The least role of each tier-1 admin route (docs/console.md#roles), enforced by
/// [`require_role`] before the handler runs; a route missing here is admin only.
pub const ADMIN_ROLES: RouteRoles = &[
    ("GET", "/api/admin/vwr/whoami", Role::Viewer),
    ("GET", "/api/admin/vwr/events", Role::Viewer),
    ("GET", "/api/admin/vwr/status/{event_id}", Role::Viewer),
    ("GET", "/api/admin/vwr/audit/{event_id}", Role::Viewer),
    ("GET", "/api/admin/vwr/report/{event_id}", Role::Viewer),
    ("GET", "/api/admin/vwr/pass/{event_id}", Role::Viewer),
    ("POST", "/api/admin/vwr/pause/{event_id}", Role::Operator),
    ("POST", "/api/admin/vwr/resume/{event_id}", Role::Operator),
    ("PUT", "/api/admin/vwr/message/{event_id}", Role::Operator),
    ("POST", "/api/admin/vwr/advance/{event_id}", Role::Operator),
    ("PUT", "/api/admin/vwr/health/{event_id}", Role::Operator),
    ("POST", "/api/admin/vwr/pass/{event_id}", Role::Operator),
    ("DELETE", "/api/admin/vwr/pass/{event_id}/{pass_id}", Role::Operator),
    ("POST", "/api/admin/vwr/activate/{event_id}", Role::Admin),
    ("POST", "/api/admin/vwr/deactivate/{event_id}", Role::Admin),
    ("PUT", "/api/admin/vwr/schedule/{event_id}", Role::Admin),
    ("POST", "/api/admin/vwr/close/{event_id}", Role::Admin),
    ("PUT", "/api/admin/vwr/standby/{event_id}", Role::Admin),
    ("DELETE", "/api/admin/vwr/standby/{event_id}", Role::Admin),
    ("PUT", "/api/admin/vwr/page/{event_id}", Role::Admin),
];

/// The admin API under `/api/admin/vwr/...`, behind `auth`, each route open to the roles
/// [`ADMIN_ROLES`] gives it.
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
        .route("/api/admin/vwr/schedule/{event_id}", put(schedule))
        .route(
            "/api/admin/vwr/pause/{event_id}",
            post(pause).layer(DefaultBodyLimit::max(MAX_TEXT_BODY_BYTES)),
        )
        .route("/api/admin/vwr/resume/{event_id}", post(resume))
        .route(
            "/api/admin/vwr/close/{event_id}",
            post(close).layer(DefaultBodyLimit::max(MAX_TEXT_BODY_BYTES)),
        )
        .route(
            "/api/admin/vwr/message/{event_id}",
            put(message).layer(DefaultBodyLimit::max(MAX_TEXT_BODY_BYTES)),
        )
        .route("/api/admin/vwr/audit/{event_id}", get(audit))
        .route("/api/admin/vwr/report/{event_id}", get(report))
        .route("/api/admin/vwr/health/{event_id}", put(health))
        .route("/api/admin/vwr/events", get(list_active))
        .route("/api/admin/vwr/standby/{event_id}", put(standby).delete(end_standby))
        .route(
            "/api/admin/vwr/page/{event_id}",
            put(set_page).layer(DefaultBodyLimit::max(MAX_TEXT_BODY_BYTES)),
        )
        .route("/api/admin/vwr/pass/{event_id}", post(create_pass).get(list_passes))
        .route("/api/admin/vwr/pass/{event_id}/{pass_id}", delete(revoke_pass))
        .route("/api/admin/vwr/whoami", get(whoami))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(AdminState { svc, extra })
        .layer(middleware::from_fn_with_state(ADMIN_ROLES, require_role))
        .layer(middleware::from_fn_with_state(auth, require_admin))
}

/// `GET /api/admin/vwr/whoami`: the caller's `{name, role, via}`, so the console hides what
/// the role cannot do.
async fn whoami(Extension(who): Extension<AdminIdentity>) -> Response {
    no_store(Json(who).into_response())
}

async fn activate(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let patch: ConfigPatch = json_body(&body)?;
    Ok(no_store(Json(svc.activate(&event, patch, &who.name).await?).into_response()))
}

async fn deactivate(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.deactivate(&event, &who.name).await?).into_response()))
}

async fn schedule(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let req = schedule_request(&body)?;
    Ok(no_store(Json(svc.schedule(&event, req, &who.name).await?).into_response()))
}

/// `{prequeueAt, openAt, closeAt?, …the fields of activate}`: the times are taken out and the
/// rest must be a valid configuration patch (unknown fields refused).
fn schedule_request(body: &Bytes) -> Result<ScheduleRequest, ApiError> {
    let mut map: serde_json::Map<String, serde_json::Value> = json_body(body)?;
    let bad = |m: String| ApiError::bad_request(ErrorCode::InvalidBody, m);
    let mut time = |name: &str, required: bool| -> Result<Option<u64>, ApiError> {
        match map.remove(name) {
            None | Some(serde_json::Value::Null) if !required => Ok(None),
            None | Some(serde_json::Value::Null) => Err(bad(format!("{name} is required (unix seconds)"))),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| bad(format!("{name} must be unix seconds"))),
        }
    };
    let prequeue_at = time("prequeueAt", true)?.unwrap_or_default();
    let open_at = time("openAt", true)?.unwrap_or_default();
    let close_at = time("closeAt", false)?;
    let config: ConfigPatch = serde_json::from_value(serde_json::Value::Object(map))
        .map_err(|e| bad(format!("invalid body: {e}")))?;
    Ok(ScheduleRequest { prequeue_at, open_at, close_at, config })
}

async fn pause(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: PauseBody = json_body(&body)?;
    Ok(no_store(Json(svc.pause(&event, body.message, &who.name).await?).into_response()))
}

async fn resume(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.resume(&event, &who.name).await?).into_response()))
}

async fn close(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: CloseBody = json_body(&body)?;
    let reason = body.reason.as_deref().and_then(CloseReason::parse).ok_or_else(|| {
        ApiError::bad_request(ErrorCode::InvalidBody, "reason must be \"sold_out\" or \"ended\"")
    })?;
    Ok(no_store(Json(svc.close(&event, reason, body.message, &who.name).await?).into_response()))
}

async fn message(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    // `message` must be present: `{}` is refused so that a typo never clears a message.
    let raw: serde_json::Map<String, serde_json::Value> = json_body(&body)?;
    if !raw.contains_key("message") {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidBody,
            "body must be {\"message\": {\"en\": …, \"ko\": …}} or {\"message\": null}",
        ));
    }
    let body: MessageBody = json_body(&body)?;
    Ok(no_store(Json(svc.set_message(&event, body.message, &who.name).await?).into_response()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HealthBody {
    ok: Option<bool>,
    reason: Option<String>,
}

async fn health(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: HealthBody = json_body(&body)?;
    let ok = body.ok.ok_or_else(|| {
        ApiError::bad_request(ErrorCode::InvalidBody, "body must be {\"ok\": true|false, \"reason\": \"…\"}")
    })?;
    Ok(no_store(Json(svc.set_health(&event, ok, body.reason, &who.name).await?).into_response()))
}

async fn standby(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    // `{alarm, …the fields of activate}` (docs/lifecycle.md#standby): the alarm is taken out,
    // the rest must be a valid configuration patch (unknown fields refused).
    let mut map: serde_json::Map<String, serde_json::Value> = json_body(&body)?;
    let bad = |m: String| ApiError::bad_request(ErrorCode::InvalidBody, m);
    let alarm = match map.remove("alarm") {
        Some(serde_json::Value::String(a)) => a,
        _ => return Err(bad("alarm is required: the name of a CloudWatch alarm".into())),
    };
    let config: ConfigPatch = serde_json::from_value(serde_json::Value::Object(map))
        .map_err(|e| bad(format!("invalid body: {e}")))?;
    Ok(no_store(Json(svc.standby(&event, alarm, config, &who.name).await?).into_response()))
}

/// `PUT /api/admin/vwr/page/{eventId}` (docs/brand.md): the settings object, or `null` to go
/// back to the default page. An empty body is refused: a lost body never wipes a page.
async fn set_page(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidBody,
            "body must be the page settings object, or null for the default page",
        ));
    }
    let page: Option<PageSettings> = json_body(&body)?;
    Ok(no_store(Json(svc.set_page(&event, page, &who.name).await?).into_response()))
}

async fn end_standby(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.end_standby(&event, &who.name).await?).into_response()))
}

/// The body of `POST /api/admin/vwr/pass/{eventId}` (docs/passes.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PassBody {
    label: String,
    #[serde(default = "default_pass_ttl")]
    ttl_seconds: u64,
}

fn default_pass_ttl() -> u64 {
    3600
}

/// An empty body: no label (refused with its message).
impl Default for PassBody {
    fn default() -> Self {
        Self { label: String::new(), ttl_seconds: default_pass_ttl() }
    }
}

async fn create_pass(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: PassBody = json_body(&body)?;
    let created = svc.create_pass(&event, &body.label, body.ttl_seconds, &who.name).await?;
    Ok(no_store((StatusCode::CREATED, Json(created)).into_response()))
}

async fn list_passes(
    State(AdminState { svc, .. }): State<AdminState>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    let passes = svc.passes(&event).await?;
    Ok(no_store(Json(serde_json::json!({ "eventId": event.as_str(), "passes": passes })).into_response()))
}

async fn revoke_pass(
    State(AdminState { svc, .. }): State<AdminState>,
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    Path(params): Path<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let id = params.iter().find(|(k, _)| k == "pass_id").map(|(_, v)| v.as_str()).unwrap_or_default();
    Ok(no_store(Json(svc.revoke_pass(&event, id, &who.name).await?).into_response()))
}

/// The report after the sale (docs/operate.md#the-report-after-the-sale).
async fn report(
    State(AdminState { svc, .. }): State<AdminState>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    Ok(no_store(Json(svc.report(&event).await?).into_response()))
}

async fn audit(
    State(AdminState { svc, .. }): State<AdminState>,
    EventPath(event): EventPath,
) -> Result<Response, ApiError> {
    let entries = svc.audit(&event).await?;
    Ok(no_store(Json(serde_json::json!({ "eventId": event.as_str(), "entries": entries })).into_response()))
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
    Extension(who): Extension<AdminIdentity>,
    EventPath(event): EventPath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: AdvanceBody = json_body(&body)?;
    let by = body.by.ok_or_else(|| {
        ApiError::bad_request(ErrorCode::InvalidBody, "body must be {\"by\": <positive integer>}")
    })?;
    Ok(no_store(Json(svc.advance(&event, by, &who.name).await?).into_response()))
}

/// `GET /api/admin/vwr/events`: the known events (every state but inactive), and what the edge
/// configuration holds for them — `gated`, the events the edge sends to the waiting room
/// (scheduled and standby events are not), and `revoked`, the unexpired revoked passes (id →
/// expiry) — so a local edge (edge/local/proxy.mjs) decides as CloudFront does.
async fn list_active(State(AdminState { svc, .. }): State<AdminState>) -> Result<Response, ApiError> {
    let events = svc.store().list_active().await?;
    let now = svc.now();
    let ids: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    let gated: Vec<&str> = events.iter().filter(|e| e.state.gates()).map(|e| e.event.as_str()).collect();
    let revoked: std::collections::BTreeMap<&str, u64> =
        events.iter().flat_map(|e| crate::model::revoked_live(&e.passes, now)).collect();
    Ok(no_store(
        Json(serde_json::json!({ "events": ids, "gated": gated, "revoked": revoked })).into_response(),
    ))
}
