//! The CDN in front of the public documents, emulated by `vwr dev`: CloudFront caches the
//! documents (the behaviours of `terraform/modules/edge/behaviours.json` that forward nothing
//! of the viewer's request: tier 1's status document `GET /vwr-api/vwr/status/{eventId}`, its
//! page document, tier 2's line document `GET /api/queue/line/{eventId}`) for the `max-age` the
//! origin answers, keyed on the path only, and collapses concurrent misses into one origin
//! request. Emulating it makes the local figures (origin requests per second, Lambda calls per
//! visitor) mean what they will mean behind CloudFront
//! (docs/lifecycle.md#the-public-status-document). The page document is cached a minute behind
//! CloudFront (docs/brand.md), at most a second here like the rest, so a change of the settings
//! shows at once locally.
//!
//! Written here rather than taken from a caching crate: what matters is CloudFront's exact
//! behaviour on this one route (path-only key, `max-age` from the origin, request collapsing,
//! `X-Cache`/`Age` headers), not a general HTTP cache.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;

use super::behaviours::Behaviours;

/// Largest body kept (the status document is well under 2 KB).
const MAX_BODY: usize = 64 * 1024;
/// Longest time an entry is kept, whatever the origin says (CloudFront's behaviour max TTL).
const MAX_TTL: Duration = Duration::from_secs(1);

#[derive(Clone)]
struct Entry {
    stored: Instant,
    ttl: Duration,
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// The emulated edge cache and its counters.
pub struct StatusCache {
    behaviours: Arc<Behaviours>,
    slots: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Entry>>>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl std::fmt::Debug for StatusCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusCache").field("hits", &self.hits()).field("misses", &self.misses()).finish()
    }
}

impl StatusCache {
    /// A cache of the documents among `behaviours`.
    pub fn new(behaviours: Arc<Behaviours>) -> Self {
        Self { behaviours, slots: Mutex::default(), hits: AtomicU64::default(), misses: AtomicU64::default() }
    }

    /// Requests answered from the cache.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Requests that went to the origin (the tier-1 Lambda in AWS).
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    fn slot(&self, key: &str) -> Arc<tokio::sync::Mutex<Option<Entry>>> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(slots.entry(key.to_owned()).or_default())
    }
}

/// `max-age` of a `Cache-Control: public, max-age=N` answer, if it may be shared.
fn shared_max_age(headers: &HeaderMap) -> Option<Duration> {
    let cc = headers.get(header::CACHE_CONTROL)?.to_str().ok()?;
    let mut public = false;
    let mut age = None;
    for d in cc.split(',').map(str::trim) {
        if d.eq_ignore_ascii_case("public") {
            public = true;
        } else if d.eq_ignore_ascii_case("no-store") || d.eq_ignore_ascii_case("private") {
            return None;
        } else if let Some(v) = d.strip_prefix("max-age=") {
            age = v.parse::<u64>().ok();
        }
    }
    public.then_some(Duration::from_secs(age?)).map(|d| d.min(MAX_TTL))
}

fn answer(e: &Entry, hit: bool) -> Response {
    let mut res = (e.status, e.body.clone()).into_response();
    *res.headers_mut() = e.headers.clone();
    let h = res.headers_mut();
    h.insert("x-cache", HeaderValue::from_static(if hit { "Hit from vwr-dev" } else { "Miss from vwr-dev" }));
    if hit && let Ok(v) = HeaderValue::from_str(&e.stored.elapsed().as_secs().to_string()) {
        h.insert(header::AGE, v);
    }
    res
}

/// Middleware: serves `GET` of the documents from the cache when fresh, else from the origin
/// (one origin request at a time per path; the others wait for its answer).
pub async fn layer(State(cache): State<Arc<StatusCache>>, req: Request, next: Next) -> Response {
    if req.method() != Method::GET || !cache.behaviours.route(req.uri().path()).is_document() {
        return next.run(req).await;
    }
    // The key is the path alone: cookies, headers and the query string never vary the answer.
    let key = req.uri().path().to_owned();
    let slot = cache.slot(&key);
    let mut guard = slot.lock().await;
    if let Some(e) = guard.as_ref()
        && e.stored.elapsed() < e.ttl
    {
        cache.hits.fetch_add(1, Ordering::Relaxed);
        return answer(e, true);
    }
    cache.misses.fetch_add(1, Ordering::Relaxed);
    let (mut parts, body) = req.into_parts();
    // Like CloudFront with an origin request policy that forwards nothing.
    parts.headers.remove(header::COOKIE);
    parts.uri = match key.parse() {
        Ok(u) => u,
        Err(_) => parts.uri,
    };
    let res = next.run(Request::from_parts(parts, body)).await;
    let Some(ttl) = shared_max_age(res.headers()) else {
        *guard = None;
        return res;
    };
    let (parts, body) = res.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return (StatusCode::BAD_GATEWAY, "status document too large").into_response(),
    };
    let entry = Entry { stored: Instant::now(), ttl, status: parts.status, headers: parts.headers, body };
    let res = answer(&entry, false);
    *guard = Some(entry);
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    fn shipped() -> Arc<Behaviours> {
        Arc::new(Behaviours::shipped().unwrap())
    }

    fn app(cache: Arc<StatusCache>, calls: Arc<AtomicU64>, cc: &'static str) -> Router {
        Router::new()
            .route(
                "/vwr-api/vwr/status/{e}",
                get(move || {
                    let calls = Arc::clone(&calls);
                    async move {
                        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                        ([(header::CACHE_CONTROL, cc)], format!("{{\"n\":{n}}}"))
                    }
                }),
            )
            .route(
                "/api/queue/line/{e}",
                get(|| async { ([(header::CACHE_CONTROL, "public, max-age=1")], "{\"line\":1}") }),
            )
            .route("/other", get(|| async { "x" }))
            .layer(axum::middleware::from_fn_with_state(cache, layer))
    }

    async fn get_body(app: &Router, uri: &str, cookie: Option<&str>) -> (String, Option<String>) {
        let mut req = Request::builder().uri(uri);
        if let Some(c) = cookie {
            req = req.header(header::COOKIE, c);
        }
        let res = app.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        let xc = res.headers().get("x-cache").map(|v| v.to_str().unwrap().to_owned());
        let b = res.into_body().collect().await.unwrap().to_bytes();
        (String::from_utf8(b.to_vec()).unwrap(), xc)
    }

    #[tokio::test]
    async fn one_origin_call_per_path_per_second_whatever_the_query_or_cookie() {
        let cache = Arc::new(StatusCache::new(shipped()));
        let calls = Arc::new(AtomicU64::new(0));
        let app = app(Arc::clone(&cache), Arc::clone(&calls), "public, max-age=1");
        let (a, x) = get_body(&app, "/vwr-api/vwr/status/e1", None).await;
        assert_eq!((a.as_str(), x.as_deref()), ("{\"n\":1}", Some("Miss from vwr-dev")));
        for (uri, cookie) in [("/vwr-api/vwr/status/e1?x=1", None), ("/vwr-api/vwr/status/e1", Some("a=b"))] {
            let (b, x) = get_body(&app, uri, cookie).await;
            assert_eq!((b.as_str(), x.as_deref()), ("{\"n\":1}", Some("Hit from vwr-dev")));
        }
        // Tier 2's line document is cached the same way.
        let (l, x) = get_body(&app, "/api/queue/line/e1", Some("vwr_t2_e1=a")).await;
        assert_eq!((l.as_str(), x.as_deref()), ("{\"line\":1}", Some("Miss from vwr-dev")));
        let (_, x) = get_body(&app, "/api/queue/line/e1", None).await;
        assert_eq!(x.as_deref(), Some("Hit from vwr-dev"));
        let (c, _) = get_body(&app, "/vwr-api/vwr/status/e2", None).await;
        assert_eq!(c, "{\"n\":2}", "another path is another object");
        // Concurrent misses collapse into one origin call.
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let app = app.clone();
                tokio::spawn(async move { get_body(&app, "/vwr-api/vwr/status/e3", None).await.0 })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap(), "{\"n\":3}");
        }
        assert_eq!((cache.hits(), cache.misses()), (22, 4));
    }

    #[tokio::test]
    async fn stale_entries_are_fetched_again_and_no_store_is_never_kept() {
        let cache = Arc::new(StatusCache::new(shipped()));
        let calls = Arc::new(AtomicU64::new(0));
        let app = app(Arc::clone(&cache), Arc::clone(&calls), "public, max-age=0");
        get_body(&app, "/vwr-api/vwr/status/e1", None).await;
        get_body(&app, "/vwr-api/vwr/status/e1", None).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2, "max-age=0 is stale at once");
        let calls2 = Arc::new(AtomicU64::new(0));
        let app = app_no_store(Arc::new(StatusCache::new(shipped())), Arc::clone(&calls2));
        get_body(&app, "/vwr-api/vwr/status/e1", None).await;
        get_body(&app, "/vwr-api/vwr/status/e1", None).await;
        assert_eq!(calls2.load(Ordering::SeqCst), 2);
        let (o, x) = get_body(&app, "/other", None).await;
        assert_eq!((o.as_str(), x), ("x", None), "other routes pass through");
    }

    fn app_no_store(cache: Arc<StatusCache>, calls: Arc<AtomicU64>) -> Router {
        app(cache, calls, "no-store")
    }

    #[test]
    fn cache_control_parsing() {
        let h = |v: &'static str| {
            let mut m = HeaderMap::new();
            m.insert(header::CACHE_CONTROL, HeaderValue::from_static(v));
            m
        };
        assert_eq!(shared_max_age(&h("public, max-age=1")), Some(Duration::from_secs(1)));
        assert_eq!(shared_max_age(&h("public, max-age=60")), Some(MAX_TTL));
        assert_eq!(shared_max_age(&h("max-age=1")), None);
        assert_eq!(shared_max_age(&h("public, no-store, max-age=1")), None);
        assert_eq!(shared_max_age(&HeaderMap::new()), None);
    }
}
