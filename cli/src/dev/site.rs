//! What `vwr dev` serves besides the APIs: the static waiting page and booking page (the same
//! files that go to S3, embedded at build time) and a small demo origin — an event page that
//! joins tier 2 and a protected `/api/seats/**` behind the entry-token check.

use std::borrow::Cow;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use vwr_core::ErrorCode;
use vwr_core::{ApiError, EventId};
use vwr_tier1::Tier1Service;

const INDEX: &str = include_str!("../../../static/index.html");
const APP_JS: &str = include_str!("../../../static/assets/app.js");
const STYLE: &str = include_str!("../../../static/assets/style.css");
const POW_WORKER: &str = include_str!("../../../static/assets/pow-worker.js");
const DRAW_JS: &str = include_str!("../../../static/assets/draw.js");
const VERIFY_HTML: &str = include_str!("../../../static/assets/verify.html");
const VERIFY_JS: &str = include_str!("../../../static/assets/verify.js");
const BOOKING_PAGE: &str = include_str!("../../../static/queue/index.html");
const TIER2_JS: &str = include_str!("../../../static/queue/tier2.js");
const BRAND_JS: &str = include_str!("../../../static/assets/brand.js");
/// The waiting page's language files (static/README.md#languages): one per `<option>` of its
/// switcher; a new language is one more line here.
const LANGUAGES: &[(&str, &str)] = &[
    ("en.js", include_str!("../../../static/assets/i18n/en.js")),
    ("ko.js", include_str!("../../../static/assets/i18n/ko.js")),
    ("ja.js", include_str!("../../../static/assets/i18n/ja.js")),
    ("zh-Hans.js", include_str!("../../../static/assets/i18n/zh-Hans.js")),
    ("zh-Hant.js", include_str!("../../../static/assets/i18n/zh-Hant.js")),
];
const EVENT_PAGE: &str = include_str!("demo/event.html");
/// The preview's stand-in for the tier-1 API (docs/brand.md#previews): vwr dev only.
const PREVIEW_JS: &str = include_str!("preview.js");
/// The states a preview shows (`?preview=STATE`).
pub const PREVIEW_STATES: &[&str] = &["prequeue", "waiting", "turn", "paused", "closed"];

fn with_type(
    body: impl Into<Cow<'static, str>>,
    content_type: &'static str,
    cache: &'static str,
) -> Response {
    let mut res = body.into().into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}

/// The waiting page's Content-Security-Policy, as the CloudFront response headers policy of
/// terraform/modules/edge sends it (a header can say `frame-ancestors`, a meta tag cannot).
pub const WAITING_PAGE_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; \
     connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// A page of the waiting room (`static/`): its policy, and no framing. The booking page needs
/// nothing more than the waiting page (same-origin script, stylesheet and API calls:
/// static/queue/README.md), so both get the same headers.
fn room_page(body: Cow<'static, str>) -> Response {
    let mut res = with_type(body, "text/html; charset=utf-8", "public, max-age=60");
    res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(WAITING_PAGE_CSP));
    res.headers_mut().insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res
}

/// The languages of the page, by code (`en`, `zh-Hant`): the names of its language files.
pub fn languages() -> impl Iterator<Item = &'static str> {
    LANGUAGES.iter().filter_map(|(file, _)| file.strip_suffix(".js"))
}

/// A waiting-page query that asks for no page: the 400's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum PreviewQueryError {
    #[error("{0} may be given once")]
    Repeated(&'static str),
    #[error("preview must be one of {states}", states = PREVIEW_STATES.join(", "))]
    State,
    #[error("lang must be one of {langs}", langs = languages().collect::<Vec<_>>().join(", "))]
    Lang,
}

/// What a waiting-page query asks: `Ok(None)` the page as deployed, `Ok(Some((state, lang)))` a
/// preview. `preview` and `lang` may each be given once: the page's script reads the first of
/// repeated names, so a second one could let a check pass what the script then ignores (a
/// "preview" taking a real place).
fn preview_query(query: &[(String, String)]) -> Result<Option<(&str, Option<&str>)>, PreviewQueryError> {
    let once = |name: &'static str| -> Result<Option<&str>, PreviewQueryError> {
        let mut values = query.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
        match (values.next(), values.next()) {
            (first, None) => Ok(first),
            _ => Err(PreviewQueryError::Repeated(name)),
        }
    };
    let (Some(state), lang) = (once("preview")?, once("lang")?) else { return Ok(None) };
    if !PREVIEW_STATES.contains(&state) {
        return Err(PreviewQueryError::State);
    }
    if let Some(lang) = lang
        && !languages().any(|l| l == lang)
    {
        return Err(PreviewQueryError::Lang);
    }
    Ok(Some((state, lang)))
}

/// The waiting page; with `?preview=STATE[&lang=L]`, the page in that state without joining the
/// line (docs/brand.md#previews): the same page with `preview.js` loaded before `app.js`.
async fn waiting_page(Path(event): Path<String>, Query(query): Query<Vec<(String, String)>>) -> Response {
    if EventId::parse(&event).is_err() {
        return ApiError::bad_request(ErrorCode::InvalidEventId, "no such waiting room").into_response();
    }
    match preview_query(&query) {
        Ok(None) => room_page(INDEX.into()),
        Ok(Some(_)) => {
            let mut res = room_page(preview_page().into());
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => ApiError::bad_request(ErrorCode::InvalidRequest, e.to_string()).into_response(),
    }
}

/// `index.html` with the preview script first: a plain script runs before the deferred ones.
pub fn preview_page() -> String {
    INDEX.replacen(
        "<script src=\"/vwr/assets/i18n/en.js\" defer></script>",
        "<script src=\"/vwr/assets/preview.js\"></script>\n<script src=\"/vwr/assets/i18n/en.js\" defer></script>",
        1,
    )
}

/// Where a previewed page goes at its turn: 204 No Content, so the browser stays on it.
async fn stay() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// The booking page (`/queue/{eventId}`, and `/vwr/queue/{eventId}` where CloudFront serves it:
/// docs/adr/0027-booking-page-path.md).
async fn booking_page(Path(event): Path<String>) -> Response {
    if EventId::parse(&event).is_err() {
        return ApiError::bad_request(ErrorCode::InvalidEventId, "no such booking line").into_response();
    }
    room_page(BOOKING_PAGE.into())
}

/// `/vwr/queue/{name}`: the booking page's client, or the page of an event (an event id has no
/// dot, so the two never meet).
async fn booking_file(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "tier2.js" => with_type(TIER2_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        _ => booking_page(Path(name)).await,
    }
}

async fn asset(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "app.js" => with_type(APP_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "style.css" => with_type(STYLE, "text/css; charset=utf-8", "public, max-age=300"),
        "pow-worker.js" => with_type(POW_WORKER, "text/javascript; charset=utf-8", "public, max-age=300"),
        "draw.js" => with_type(DRAW_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "verify.js" => with_type(VERIFY_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "brand.js" => with_type(BRAND_JS, "text/javascript; charset=utf-8", "public, max-age=300"),
        "preview.js" => with_type(PREVIEW_JS, "text/javascript; charset=utf-8", "no-store"),
        "verify.html" => {
            let mut res = with_type(VERIFY_HTML, "text/html; charset=utf-8", "public, max-age=300");
            res.headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(WAITING_PAGE_CSP));
            res
        }
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

async fn language(Path(name): Path<String>) -> Response {
    match LANGUAGES.iter().find(|(file, _)| *file == name) {
        Some((_, text)) => with_type(*text, "text/javascript; charset=utf-8", "public, max-age=300"),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// `/vwr/{eventId}`, `/vwr/assets/{file}`, `/vwr/assets/i18n/{file}`, and the booking page:
/// `/vwr/queue/{eventId}` as deployed, `/queue/{eventId}` as the demo site had it,
/// `/vwr/queue/tier2.js`.
pub fn waiting_room() -> Router {
    Router::new()
        .route("/vwr/{event_id}", get(waiting_page))
        .route("/vwr/assets/{name}", get(asset))
        .route("/vwr/queue/{name}", get(booking_file))
        .route("/queue/{event_id}", get(booking_page))
        .route("/vwr/assets/i18n/{name}", get(language))
        .route("/vwr-dev/stay", get(stay))
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

/// The demo origin's event page, `/events/{eventId}`, where the waiting page sends visitors by
/// default (the protected `/api/seats/{eventId}/…` is [`demo_seats`]).
pub fn demo_pages() -> Router {
    Router::new().route("/events/{event_id}", get(event_page))
}

/// Demo protected API.
pub fn demo_seats() -> Router {
    Router::new()
        .route("/api/seats/{event_id}", get(seats))
        .route("/api/seats/{event_id}/{*rest}", get(seats))
}

/// `GET /`: the greeting of `vwr dev` for a browser — the local events that the room gates,
/// with links to each one's pages and status document, or how to make one.
async fn home(State(tier1): State<Arc<Tier1Service>>) -> Response {
    let events = match tier1.active_ids().await {
        Ok(ids) => ids,
        Err(e) => {
            return ApiError::unavailable(format!("the event list is unavailable: {e}")).into_response();
        }
    };
    let mut res = Html(home_html(&events)).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The home page for these gated events (ids are `[A-Za-z0-9_-]`: nothing to escape).
pub fn home_html(events: &[EventId]) -> String {
    let list = if events.is_empty() {
        "<p>No event is gated yet. Make one in another terminal:</p>\n\
         <pre>vwr admin activate demo --batch-size 2 --interval-seconds 1</pre>\n\
         <p>then reload this page.</p>"
            .to_owned()
    } else {
        let rows: String = events
            .iter()
            .map(|e| {
                format!(
                    "<li><strong>{e}</strong>: <a href=\"/events/{e}\">the event page</a> (gated: \
                     sends you through the line) · <a href=\"/vwr/{e}\">the waiting page</a> · \
                     <a href=\"/vwr-api/vwr/status/{e}\">status document</a> · \
                     <a href=\"/queue/{e}\">the booking page (tier 2)</a></li>\n"
                )
            })
            .collect();
        format!("<p>Events the waiting room gates now:</p>\n<ul>\n{rows}</ul>")
    };
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>vwr dev</title>\n<style>body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; \
         margin: 2rem auto; padding: 0 1rem; }} pre {{ background: #f3f3f3; padding: .5rem; }}</style>\n\
         </head>\n<body>\n<h1>vwr dev</h1>\n<p>The whole waiting room on one port: the waiting page, \
         both tiers' APIs, the admin API (bearer key in the state file; <code>vwr admin</code> reads it) \
         and a demo site.</p>\n{list}\n<p>Reference: <code>docs/</code> in the repository \
         (<a href=\"https://github.com/vwr-dev/vwr/tree/main/docs\">online</a>): the tutorial, the API, \
         the settings.</p>\n</body>\n</html>\n"
    )
}

/// `GET /`.
pub fn home_page(tier1: Arc<Tier1Service>) -> Router {
    Router::new().route("/", get(home)).with_state(tier1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_page_links_each_event_or_says_how_to_make_one() {
        let none = home_html(&[]);
        assert!(none.contains("vwr admin activate"), "{none}");
        let Ok(e1) = EventId::parse("e1") else { return };
        let one = home_html(&[e1]);
        for link in ["/events/e1", "/vwr/e1", "/vwr-api/vwr/status/e1", "/queue/e1"] {
            assert!(one.contains(&format!("href=\"{link}\"")), "{link} in {one}");
        }
        assert!(!one.contains("vwr admin activate"));
    }

    #[test]
    fn a_preview_names_its_state_and_language_once() {
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
        };
        assert_eq!(preview_query(&q(&[])), Ok(None));
        assert_eq!(preview_query(&q(&[("next", "/events/e1")])), Ok(None));
        assert_eq!(preview_query(&q(&[("preview", "turn"), ("lang", "ja")])), Ok(Some(("turn", Some("ja")))));
        // The review's case: the server read the last `preview`, the page's script the first.
        for bad in [
            q(&[("preview", "bogus"), ("preview", "turn")]),
            q(&[("preview", "turn"), ("preview", "turn")]),
            q(&[("preview", "turn"), ("lang", "en"), ("lang", "fr")]),
        ] {
            assert!(matches!(preview_query(&bad), Err(m) if m.to_string().contains("once")), "{bad:?}");
        }
        assert!(preview_query(&q(&[("preview", "queued")])).is_err());
        assert!(preview_query(&q(&[("preview", "turn"), ("lang", "fr")])).is_err());
    }

    #[test]
    fn a_preview_loads_its_script_before_the_page_and_only_a_preview_does() {
        let page = preview_page();
        let (Some(p), Some(app)) = (page.find("/vwr/assets/preview.js"), page.find("/vwr/assets/app.js"))
        else {
            panic!("both scripts in {page}");
        };
        assert!(p < app);
        assert!(!page[..p].contains("defer") || page[p..].starts_with("/vwr/assets/preview.js\"></script>"));
        assert!(!INDEX.contains("preview.js"));
        assert_eq!(languages().collect::<Vec<_>>(), ["en", "ko", "ja", "zh-Hans", "zh-Hant"]);
    }
}
