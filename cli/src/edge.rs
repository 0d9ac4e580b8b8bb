//! The edge check inside `vwr dev`, for the site paths of active events (`/events/{eventId}`,
//! `/api/seats/{eventId}/…`, `/api/reservations/{eventId}/…`): the same decision as the
//! shipped edge verifier (`edge/`), made with the Rust token verifier. It runs as a route
//! layer, after routing, on the event id the route extracted (percent-decoded), so encoded
//! variants of a path cannot slip past. `--edge off` turns it off when the shipped JS runs in
//! front instead (`node edge/local/proxy.mjs`, as the browser test does).

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use vwr_core::identity::cookie;
use vwr_core::{ApiError, EventId};
use vwr_tier1::Tier1Service;

/// Longest `next` kept (as the JS verifier).
const MAX_NEXT: usize = 2000;

/// `encodeURIComponent`.
fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Gate for the site routes: pass with a valid tier-1 token of the event, or when the event
/// is not active; else 302 to the waiting page (navigation) or 403 JSON (API call).
pub async fn edge_check(
    State(tier1): State<Arc<Tier1Service>>,
    Path(params): Path<Vec<(String, String)>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(event) = params.iter().find(|(k, _)| k == "event_id").and_then(|(_, v)| EventId::parse(v).ok())
    else {
        return next.run(req).await;
    };
    let active = match tier1.cached_event(&event).await {
        Ok(rec) => rec.is_some_and(|r| r.active),
        // Fail closed, as the deployed verifier does by default.
        Err(e) => return ApiError::from(e).into_response(),
    };
    if !active {
        return next.run(req).await;
    }
    let name = format!("{}{}", tier1.settings().cookie_prefix, event);
    let now = tier1.now();
    let valid = req
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|h| cookie(h, &name))
        .take(4)
        .any(|t| tier1.tokens().verify(t, &event, now).is_ok());
    if valid {
        return next.run(req).await;
    }
    let uri = req.uri();
    let mut target = uri.path_and_query().map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned());
    if target.len() > MAX_NEXT {
        target = if uri.path().len() > MAX_NEXT { String::new() } else { uri.path().to_owned() };
    }
    let mut to = format!("/vwr/{event}");
    if !target.is_empty() {
        to.push_str("?next=");
        to.push_str(&encode_component(&target));
    }
    let api = uri.path().starts_with("/api/")
        || req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("application/json"));
    if api {
        return ApiError::forbidden(
            "waiting_room_token_required",
            "This page is behind the waiting room; join the queue first.",
        )
        .with_field("redirectTo", to)
        .into_response();
    }
    let mut res = StatusCode::FOUND.into_response();
    if let Ok(loc) = HeaderValue::from_str(&to) {
        res.headers_mut().insert(header::LOCATION, loc);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_encode_uri_component() {
        assert_eq!(encode_component("/events/e1?a=1&b=é"), "%2Fevents%2Fe1%3Fa%3D1%26b%3D%C3%A9");
        assert_eq!(encode_component("A-z_0.!~*'()"), "A-z_0.!~*'()");
    }
}
