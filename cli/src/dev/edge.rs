//! The edge check inside `vwr dev`: the same decision as the shipped edge verifier
//! (`edge/src/verifier-core.js`), made with the Rust token verifier, in front of every path
//! (before routing, so paths no route knows are judged too). Rules are the demo layout
//! (`/events/{eventId}`, `/api/seats/{eventId}/…`, `/api/reservations/{eventId}/…`). Both are
//! held to `edge/test/path-vectors.json` (`cli/tests/edge_paths.rs`). `--edge off` turns it off
//! when the shipped JS runs in front instead (`node edge/local/proxy.mjs`).
//!
//! Written by hand, not with a URL library: the point is to read a path exactly as the JS
//! does (percent-escapes as single bytes, `;` cut before decoding, `%2f`/`%5c` as separators),
//! which no general-purpose URL parser does.

use std::sync::Arc;
use vwr_core::ErrorCode;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use vwr_core::identity::cookie;
use vwr_core::{ApiError, EventId};
use vwr_tier1::Tier1Service;
use vwr_tier1::model::revoked_live;

use super::behaviours::Behaviours;

/// Longest `next` kept (as the JS verifier).
const MAX_NEXT: usize = 2000;
/// Message of the 400 for a non-canonical protected path (as the JS `BAD_PATH`).
const BAD_PATH_MESSAGE: &str = "Bad path, or no event id in it.";

/// What the edge check reads: tier 1 (the active events, the tokens) and the distribution's
/// behaviours (where the verifier runs).
#[derive(Clone)]
pub struct EdgeState {
    pub tier1: Arc<Tier1Service>,
    pub behaviours: Arc<Behaviours>,
}

/// A protected-path rule: the path starts with `prefix` (segments, lower case) and the event
/// id is segment `at` (0-based). `exact` is the prefix as configured (`/events/`): the only
/// spelling that passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub prefix: Vec<String>,
    pub exact: String,
    pub at: usize,
}

impl Rule {
    /// A rule for the prefix segments `segments` (as configured) with the event id at `at`.
    pub fn new(segments: &[&str], at: usize) -> Self {
        Self {
            prefix: segments.iter().map(|s| s.to_lowercase()).collect(),
            exact: format!("/{}/", segments.join("/")),
            at,
        }
    }
}

/// API paths: where an app's `Authorization: Bearer` tier-1 token is read (the JS config's
/// `apiPrefix`, default `/api/`; docs/apps.md), matched on the raw path as configured.
pub const API_PREFIX: &str = "/api/";

/// The demo site's rules (`DEFAULT_BASE_CONFIG` of `edge/local/proxy.mjs`).
pub fn demo_rules() -> Vec<Rule> {
    vec![Rule::new(&["events"], 1), Rule::new(&["api", "seats"], 2), Rule::new(&["api", "reservations"], 2)]
}

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

/// Decodes `%XX` escapes each to the one character of that code (as the JS does with
/// `String.fromCharCode`), leaving anything else as it is; never fails.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(char::from(h * 16 + l));
            i += 3;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// Splits a path into segments as the JS `segments()`: at `/`, `\`, `%2f`, `%5c`; `;params`
/// cut; each decoded; empty and `.` dropped; `..` going up, or kept when `keep_dots`.
fn segments(path: &str, keep_dots: bool) -> Vec<String> {
    let mut pieces = Vec::new();
    let (b, mut start, mut i) = (path.as_bytes(), 0, 0);
    while i < b.len() {
        let sep = match b[i] {
            b'/' | b'\\' => 1,
            b'%' if i + 2 < b.len()
                && (b[i + 1..i + 3].eq_ignore_ascii_case(b"2f")
                    || b[i + 1..i + 3].eq_ignore_ascii_case(b"5c")) =>
            {
                3
            }
            _ => 0,
        };
        if sep > 0 {
            pieces.push(&path[start..i]);
            i += sep;
            start = i;
        } else {
            i += 1;
        }
    }
    pieces.push(&path[start..]);
    let mut out: Vec<String> = Vec::new();
    for p in pieces {
        let s = decode(p.split(';').next().unwrap_or_default());
        if s == ".." && !keep_dots {
            out.pop();
        } else if !s.is_empty() && s != "." {
            out.push(s);
        }
    }
    out
}

/// Whether the raw path is not canonical (the JS `odd`): `//`, `\`, `;`, `%2f`, `%5c`, an
/// escaped `%` (`%25`, which a second decoding turns into dots and slashes) or a `%u` escape
/// (IIS-style), or a `.`/`..` segment, raw or `%2e`-encoded.
fn not_canonical(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if ["//", "\\", ";", "%2f", "%5c", "%25", "%u"].iter().any(|bad| lower.contains(bad)) {
        return true;
    }
    // "/" followed by one or two of "." / "%2e", then "/" or the end.
    let b = lower.as_bytes();
    for (i, _) in lower.match_indices('/') {
        let mut j = i + 1;
        for _ in 0..2 {
            if b.get(j) == Some(&b'.') {
                j += 1;
            } else if lower.as_bytes()[j..].starts_with(b"%2e") {
                j += 3;
            } else {
                break;
            }
            if j == b.len() || b[j] == b'/' {
                return true;
            }
        }
    }
    false
}

/// A request as the gate sees it (the JS `request()`).
#[derive(Debug, Clone)]
pub struct EdgeRequest {
    uri: String,
    query: String,
    path: String,
    segs: Vec<String>,
    lit: Vec<String>,
    odd: bool,
    api: bool,
    room: bool,
}

impl EdgeRequest {
    pub fn new(uri: &str, query: &str, accept: &str) -> Self {
        let path = uri.split('?').next().unwrap_or_default();
        let segs = segments(path, false);
        let lit = segments(path, true);
        let is_api = |s: Option<&String>| s.is_some_and(|s| s.eq_ignore_ascii_case("api"));
        let is_room = |s: Option<&String>| s.is_some_and(|s| s == "vwr" || s == "vwr-api");
        Self {
            uri: uri.to_owned(),
            query: query.to_owned(),
            path: path.to_owned(),
            odd: not_canonical(path),
            api: is_api(segs.first())
                || is_api(lit.first())
                || accept.to_ascii_lowercase().contains("application/json"),
            room: is_room(segs.first()) && is_room(lit.first()),
            segs,
            lit,
        }
    }
}

/// What the gate decides before any token is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Not an active event's protected path (or the waiting room): pass.
    Pass,
    /// A protected path that is not canonical, or without a valid event id: 400.
    BadPath,
    /// The active event (its configured id) whose protected path this is.
    Event(EventId),
}

fn under(rule: &Rule, segs: &[String]) -> bool {
    rule.prefix.iter().enumerate().all(|(j, p)| segs.get(j).is_some_and(|s| s.to_lowercase() == *p))
}

/// The JS `gatedEvent()`: a path under a rule's prefix (any case or encoding, either form)
/// that is not canonical or does not spell the prefix exactly as configured is refused; ids
/// match case-insensitively, an exact spelling wins, else the first active id spelled so.
pub fn gate(rules: &[Rule], active: &[EventId], req: &EdgeRequest) -> Gate {
    if req.room {
        return Gate::Pass;
    }
    for rule in rules {
        let id = req.segs.get(rule.at);
        let bad = req.odd || !format!("{}/", req.path).starts_with(&rule.exact);
        let hit = if bad { under(rule, &req.lit) || under(rule, &req.segs) } else { id.is_some() };
        if !hit {
            continue;
        }
        let Some(id) = id.filter(|_| !bad) else { return Gate::BadPath };
        let Ok(parsed) = EventId::parse(id) else { return Gate::BadPath };
        let exact = active.iter().find(|a| **a == parsed);
        let lower = id.to_lowercase();
        if let Some(a) = exact.or_else(|| active.iter().find(|a| a.as_str().to_lowercase() == lower)) {
            return Gate::Event(a.clone());
        }
    }
    Gate::Pass
}

/// The answer when there is no valid pass: 302 to the waiting page, or 403 JSON for API calls.
pub fn gate_response(req: &EdgeRequest, event: &EventId) -> Response {
    let mut next = if req.query.is_empty() { req.uri.clone() } else { format!("{}?{}", req.uri, req.query) };
    if next.len() > MAX_NEXT {
        next = if req.uri.len() > MAX_NEXT { String::new() } else { req.uri.clone() };
    }
    let mut to = format!("/vwr/{event}");
    if !next.is_empty() {
        to.push_str("?next=");
        to.push_str(&encode_component(&next));
    }
    if req.api {
        return ApiError::forbidden(ErrorCode::WaitingRoomTokenRequired, "Join the waiting room first.")
            .with_field("redirectTo", to)
            .with_field("statusUrl", format!("/vwr-api/vwr/status/{event}"))
            .into_response();
    }
    let mut res = StatusCode::FOUND.into_response();
    if let Ok(loc) = HeaderValue::from_str(&to) {
        res.headers_mut().insert(header::LOCATION, loc);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The 400 for a non-canonical protected path.
pub fn bad_path_response(req: &EdgeRequest) -> Response {
    if req.api {
        return ApiError::bad_request(ErrorCode::BadPath, BAD_PATH_MESSAGE).into_response();
    }
    let mut res = (StatusCode::BAD_REQUEST, format!("{BAD_PATH_MESSAGE}\n")).into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The token of an `Authorization: Bearer …` header (the JS `withBearer`: the scheme in any
/// case, one or more spaces, then the token, printable ASCII without spaces).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    let token = rest.trim_start_matches(' ');
    let printable = |t: &str| !t.is_empty() && t.bytes().all(|b| (b'!'..=b'~').contains(&b));
    (scheme.eq_ignore_ascii_case("bearer") && printable(token)).then_some(token)
}

/// Whether the request holds a valid tier-1 token of `event` that the operator did not revoke
/// (a pass, docs/passes.md): the cookie's values (the first four), then, on an API path
/// (`api_path`), a Bearer token (docs/apps.md).
pub async fn has_pass(tier1: &Tier1Service, headers: &HeaderMap, event: &EventId, api_path: bool) -> bool {
    let name = vwr_tier1::http::token_cookie_name(tier1, event);
    let now = tier1.now();
    let mut tokens: Vec<&str> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|h| cookie(h, &name))
        .take(4)
        .collect();
    if api_path && let Some(t) = bearer(headers) {
        tokens.push(t);
    }
    if tokens.is_empty() {
        return false;
    }
    // As the edge: the tokens tried weigh at most MAX_TOKEN_LEN together (edge/README.md).
    let mut left = vwr_core::token::MAX_TOKEN_LEN;
    tokens.retain(|t| match left.checked_sub(t.len()) {
        Some(l) => {
            left = l;
            true
        }
        None => {
            left = 0;
            false
        }
    });
    // The revoked passes, from the event item as this instance caches it (the edge reads them
    // from its configuration, written at the revocation): refused within the cache's life.
    let revoked: Vec<String> = match tier1.cached_event(event).await {
        Ok(Some(rec)) => revoked_live(&rec.passes, now).map(|(id, _)| id.to_owned()).collect(),
        _ => Vec::new(),
    };
    tokens.iter().any(|t| tier1.tokens().verify(t, event, now).is_ok_and(|c| !revoked.contains(&c.jti)))
}

/// Deletes every request header named `x-vwr-*` (the JS `dropViewerHeaders`).
pub fn drop_viewer_headers(headers: &mut HeaderMap) {
    let names: Vec<_> = headers.keys().filter(|k| k.as_str().starts_with("x-vwr-")).cloned().collect();
    for name in names {
        headers.remove(name);
    }
}

/// Middleware: the edge decision in front of the whole local site, and the viewer's `x-vwr-*`
/// headers dropped wherever the deployed verifier runs (the behaviours whose viewer request is
/// the verifier: the site's and the protected APIs', not the waiting page's, `/vwr-api/*` or
/// `/api/queue/*`, whose origins read them), so local origins see what deployed ones do.
pub async fn edge_check(State(edge): State<EdgeState>, mut req: Request, next: Next) -> Response {
    let tier1 = &edge.tier1;
    if edge.behaviours.route(req.uri().path()).runs_verifier() {
        drop_viewer_headers(req.headers_mut());
    }
    let uri = req.uri();
    let accept = req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let er = EdgeRequest::new(uri.path(), uri.query().unwrap_or_default(), accept);
    if er.room {
        return next.run(req).await;
    }
    let active = match tier1.active_ids().await {
        Ok(a) => a,
        // Fail closed, as the deployed verifier does by default.
        Err(e) => return ApiError::from(e).into_response(),
    };
    match gate(&demo_rules(), &active, &er) {
        Gate::Pass => next.run(req).await,
        Gate::BadPath => bad_path_response(&er),
        Gate::Event(event) => {
            let api_path = req.uri().path().starts_with(API_PREFIX);
            if has_pass(tier1, req.headers(), &event, api_path).await {
                next.run(req).await
            } else {
                gate_response(&er, &event)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_encode_uri_component() {
        assert_eq!(encode_component("/events/e1?a=1&b=é"), "%2Fevents%2Fe1%3Fa%3D1%26b%3D%C3%A9");
        assert_eq!(encode_component("A-z_0.!~*'()"), "A-z_0.!~*'()");
    }

    #[test]
    fn reads_paths_like_the_js() {
        assert_eq!(segments("/events/%65%31", false), ["events", "e1"]);
        assert_eq!(segments("/x/../events/e1;a=1/", false), ["events", "e1"]);
        assert_eq!(segments("/events/e1/..", true), ["events", "e1", ".."]);
        assert_eq!(segments("/a%2Fb%5cc", false), ["a", "b", "c"]);
        assert_eq!(decode("%zz%4"), "%zz%4");
        for odd in
            ["/a//b", "/a/./b", "/a/..", "/a/%2E%2e/b", "/a\\b", "/a;x", "/a%2fb", "/a/%252e", "/a/%U002E"]
        {
            assert!(not_canonical(odd), "{odd}");
        }
        for ok in ["/a/b", "/a/.b", "/a/..b", "/a/b.", "/"] {
            assert!(!not_canonical(ok), "{ok}");
        }
    }
}
