//! What `vwr dev` serves besides the APIs: the static waiting page (the same files that go to
//! S3, embedded at build time) and a small demo origin — an event page that joins tier 2 and
//! a protected `/api/seats/**` behind the entry-token check.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use vwr_core::ErrorCode;
use vwr_core::{ApiError, EventId};

const INDEX: &str = include_str!("../../static/index.html");
const APP_JS: &str = include_str!("../../static/assets/app.js");
const STYLE: &str = include_str!("../../static/assets/style.css");
const POW_WORKER: &str = include_str!("../../static/assets/pow-worker.js");
const DRAW_JS: &str = include_str!("../../static/assets/draw.js");
const VERIFY_HTML: &str = include_str!("../../static/assets/verify.html");
const VERIFY_JS: &str = include_str!("../../static/assets/verify.js");
const EVENT_PAGE: &str = include_str!("demo/event.html");

fn with_type(body: &'static str, content_type: &'static str, cache: &'static str) -> Response {
    let mut res = body.into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}

/// The waiting page's Content-Security-Policy, as the CloudFront response headers policy of
/// terraform/modules/edge sends it (a header can say `frame-ancestors`, a meta tag cannot).
pub const WAITING_PAGE_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

async fn waiting_page(Path(event): Path<String>) -> Response {
    if EventId::parse(&event).is_err() {
        return ApiError::bad_request(ErrorCode::InvalidEventId, "no such waiting room").into_response();
    }
    let mut res = with_type(INDEX, "text/html; charset=utf-8", "public, max-age=60");
    res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(WAITING_PAGE_CSP));
    res.headers_mut().insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res
}

async fn asset(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "app.js" => with_type(APP_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "style.css" => with_type(STYLE, "text/css; charset=utf-8", "public, max-age=300"),
        "pow-worker.js" => with_type(POW_WORKER, "text/javascript; charset=utf-8", "public, max-age=300"),
        "draw.js" => with_type(DRAW_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "verify.js" => with_type(VERIFY_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "verify.html" => {
            let mut res = with_type(VERIFY_HTML, "text/html; charset=utf-8", "public, max-age=300");
            res.headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(WAITING_PAGE_CSP));
            res
        }
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// `/vwr/{eventId}` and `/vwr/assets/{file}`.
pub fn waiting_room() -> Router {
    Router::new().route("/vwr/{event_id}", get(waiting_page)).route("/vwr/assets/{name}", get(asset))
}

async fn event_page(Path(event): Path<String>) -> Response {
    match EventId::parse(&event) {
        Ok(_) => {
            let mut res = Html(EVENT_PAGE).into_response();
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => ApiError::bad_request(ErrorCode::InvalidEventId, e.to_string()).into_response(),
    }
}

async fn seats(Path(params): Path<Vec<(String, String)>>) -> Response {
    let event = params.iter().find(|(k, _)| k == "event_id").map(|(_, v)| v.clone()).unwrap_or_default();
    let seats: Vec<serde_json::Value> =
        (1..=12).map(|i| serde_json::json!({"seat": format!("A{i}"), "available": i % 3 != 0})).collect();
    axum::Json(serde_json::json!({"eventId": event, "seats": seats})).into_response()
}

/// The demo origin: `/events/{eventId}`, `/queue/{eventId}` (same page) and the protected
/// `/api/seats/{eventId}/…` (put the entry-token check in front of the latter).
pub fn demo_pages() -> Router {
    Router::new().route("/events/{event_id}", get(event_page)).route("/queue/{event_id}", get(event_page))
}

/// Demo protected API.
pub fn demo_seats() -> Router {
    Router::new()
        .route("/api/seats/{event_id}", get(seats))
        .route("/api/seats/{event_id}/{*rest}", get(seats))
}
