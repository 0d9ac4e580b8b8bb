//! Small pieces shared by the axum routers of both tiers.

use crate::ErrorCode;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path};
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
    EventId::parse(raw).map_err(|e| ApiError::bad_request(ErrorCode::InvalidEventId, e.to_string()))
}

/// A path that axum could not extract (bad percent-encoding…): 400 `invalid_path`.
pub fn path_error(rej: PathRejection) -> ApiError {
    ApiError::bad_request(ErrorCode::InvalidPath, rej.body_text())
}

/// The validated event id of a route's `{event_id}` segment: the extractor every handler uses
/// instead of its own prologue (400 `invalid_path` for an unreadable path, 400
/// `invalid_event_id` for a bad id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPath(pub EventId);

impl<S: Send + Sync> FromRequestParts<S> for EventPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, ApiError> {
        let Path(params): Path<Vec<(String, String)>> =
            Path::from_request_parts(parts, state).await.map_err(path_error)?;
        let raw = params
            .iter()
            .find(|(k, _)| k == "event_id")
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| ApiError::internal("route without an {event_id} segment"))?;
        parse_event_id(raw).map(Self)
    }
}

/// Reads an optional JSON body: empty (or whitespace) means `T::default()`.
pub fn json_body<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(ErrorCode::InvalidBody, e.to_string()))
}

/// Header in which CloudFront sends every origin the shared origin secret.
pub const ORIGIN_SECRET_HEADER: &str = "x-vwr-origin-secret";

/// Loads the accepted origin secrets again (in AWS: the current value of the Secrets Manager
/// secret, and the previous one for a while after a rotation).
pub type OriginSecretReload = std::sync::Arc<
    dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<String>, String>> + Send>>
        + Send
        + Sync,
>;

/// Reloads are at most this frequent per instance, however many requests carry a wrong value.
pub const ORIGIN_RELOAD_MIN_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

/// The secret that proves a request came through CloudFront (terraform/README.md, "Locking
/// origins to CloudFront"). Requests to an API behind CloudFront without it are refused, so
/// the gate and the WAF cannot be bypassed by calling the `execute-api` endpoint directly.
///
/// It holds every value accepted now. With a reload ([`OriginSecret::reloading`]) a request
/// carrying none of them makes the instance load the values again — at most once per
/// [`ORIGIN_RELOAD_MIN_INTERVAL`] — and checks once more: so when a rotation gives CloudFront a
/// new value, the first request with it brings the instance up to date, while requests still
/// carrying the old one (edges not yet updated) match the previous value the reload keeps.
#[derive(Clone)]
pub struct OriginSecret {
    accepted: std::sync::Arc<std::sync::RwLock<Vec<std::sync::Arc<str>>>>,
    reload: Option<OriginSecretReload>,
    // When the values were last (re)loaded; also the single-flight gate of a reload.
    loaded_at: std::sync::Arc<tokio::sync::Mutex<std::time::Instant>>,
    min_interval: std::time::Duration,
}

impl std::fmt::Debug for OriginSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OriginSecret(…)")
    }
}

impl OriginSecret {
    /// One fixed value; refuses secrets too short to be secret.
    pub fn new(secret: &str) -> Result<Self, String> {
        Self::build(&[secret.to_owned()], None)
    }

    /// The values `initial` (the first is the current one), loaded again by `reload` when a
    /// request carries none of them.
    pub fn reloading(initial: &[String], reload: OriginSecretReload) -> Result<Self, String> {
        Self::build(initial, Some(reload))
    }

    /// The same with reloads at most every `interval` (tests).
    pub fn with_min_interval(mut self, interval: std::time::Duration) -> Self {
        self.min_interval = interval;
        self
    }

    fn build(values: &[String], reload: Option<OriginSecretReload>) -> Result<Self, String> {
        Ok(Self {
            accepted: std::sync::Arc::new(std::sync::RwLock::new(Self::checked(values)?)),
            reload,
            loaded_at: std::sync::Arc::new(tokio::sync::Mutex::new(std::time::Instant::now())),
            min_interval: ORIGIN_RELOAD_MIN_INTERVAL,
        })
    }

    fn checked(values: &[String]) -> Result<Vec<std::sync::Arc<str>>, String> {
        let mut out = Vec::new();
        for v in values {
            let s = v.trim();
            if s.len() < 32 || !s.bytes().all(|b| b.is_ascii_graphic()) {
                return Err("the origin secret must be at least 32 visible ASCII characters".into());
            }
            out.push(std::sync::Arc::from(s));
        }
        if out.is_empty() {
            return Err("no origin secret".into());
        }
        Ok(out)
    }

    fn matches(&self, given: &[u8]) -> bool {
        let accepted = self.accepted.read().unwrap_or_else(|p| p.into_inner());
        // Every value is compared (constant time each), so the time says nothing of which.
        let mut hit = false;
        for v in accepted.iter() {
            hit |= aws_lc_rs::constant_time::verify_slices_are_equal(given, v.as_bytes()).is_ok();
        }
        hit
    }

    /// Whether `given` is an accepted value, reloading them once if it is not and the last
    /// load is old enough.
    pub async fn accepts(&self, given: Option<&[u8]>) -> bool {
        let Some(given) = given else { return false };
        if self.matches(given) {
            return true;
        }
        let Some(reload) = &self.reload else { return false };
        // One reload at a time; whoever waited for it checks against its result.
        let mut loaded_at = self.loaded_at.lock().await;
        if loaded_at.elapsed() >= self.min_interval {
            *loaded_at = std::time::Instant::now();
            match reload().await.and_then(|v| Self::checked(&v)) {
                Ok(values) => {
                    tracing::info!(event = "http.origin_secret_reloaded", values = values.len());
                    *self.accepted.write().unwrap_or_else(|p| p.into_inner()) = values;
                }
                Err(e) => tracing::warn!(event = "http.origin_secret_reload_failed", error = %e),
            }
        }
        drop(loaded_at);
        self.matches(given)
    }
}

/// Middleware: refuses (403 `origin_forbidden`) a request without the origin secret. Admin
/// requests authenticated by IAM ([`crate::admin_auth::AdminCaller`]) do not come through
/// CloudFront and are exempt; add this layer inside the one that sets that extension.
pub async fn require_origin_secret(
    axum::extract::State(secret): axum::extract::State<OriginSecret>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use axum::response::IntoResponse;
    let iam_admin = req.extensions().get::<crate::admin_auth::AdminCaller>().is_some();
    if iam_admin || secret.accepts(req.headers().get(ORIGIN_SECRET_HEADER).map(|v| v.as_bytes())).await {
        return next.run(req).await;
    }
    tracing::warn!(event = "http.origin_refused", path = %req.uri().path());
    ApiError::forbidden(ErrorCode::OriginForbidden, "this API is only reachable through the site's CDN")
        .into_response()
}

/// Middleware: every error answer is the JSON error contract, including those axum writes
/// itself as plain text (413 from the body limit, 405, 415, bad paths).
pub async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let res = next.run(req).await;
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let (code, message) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (ErrorCode::BodyTooLarge, "the request body is too large"),
        StatusCode::METHOD_NOT_ALLOWED => {
            (ErrorCode::MethodNotAllowed, "this route does not take this method")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (ErrorCode::UnsupportedMediaType, "send JSON (application/json)")
        }
        StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such route"),
        s if s.is_client_error() => (ErrorCode::InvalidRequest, "the request could not be read"),
        _ => (ErrorCode::InternalError, "the request failed"),
    };
    let allow = res.headers().get(header::ALLOW).cloned();
    let mut out = ApiError::new(status, code, message).into_response();
    if let Some(a) = allow {
        out.headers_mut().insert(header::ALLOW, a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_secrets_must_be_long() {
        assert!(OriginSecret::new("short").is_err());
        let s = OriginSecret::new(&"x".repeat(40)).unwrap();
        assert!(s.matches("x".repeat(40).as_bytes()));
        assert!(!s.matches("x".repeat(39).as_bytes()));
        assert!(!format!("{s:?}").contains("xxxx"));
    }

    /// A reload whose values the test sets, counting its calls.
    fn source(
        values: &[&str],
    ) -> (
        std::sync::Arc<std::sync::Mutex<Vec<String>>>,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
        OriginSecretReload,
    ) {
        let now = std::sync::Arc::new(std::sync::Mutex::new(
            values.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
        ));
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (n, c) = (now.clone(), calls.clone());
        let reload: OriginSecretReload = std::sync::Arc::new(move || {
            c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let v = n.lock().unwrap().clone();
            Box::pin(async move { Ok(v) })
        });
        (now, calls, reload)
    }

    #[tokio::test]
    async fn a_rotation_is_picked_up_by_the_first_request_with_the_new_value() {
        let (old, new, bogus) = ("o".repeat(40), "n".repeat(40), "b".repeat(40));
        let (now, calls, reload) = source(&[&old]);
        let s = OriginSecret::reloading(std::slice::from_ref(&old), reload)
            .unwrap()
            .with_min_interval(std::time::Duration::ZERO);
        assert!(s.accepts(Some(old.as_bytes())).await);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0, "a match needs no reload");
        // The secret rotates: the current value is new, the previous one is still accepted.
        *now.lock().unwrap() = vec![new.clone(), old.clone()];
        assert!(s.accepts(Some(new.as_bytes())).await, "the first request with the new value reloads");
        assert!(s.accepts(Some(old.as_bytes())).await, "edges not yet updated still pass");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        // The grace period ends: the source drops the previous value.
        *now.lock().unwrap() = vec![new.clone()];
        assert!(!s.accepts(Some(bogus.as_bytes())).await);
        assert!(!s.accepts(Some(old.as_bytes())).await, "the old value is refused once dropped");
        assert!(s.accepts(Some(new.as_bytes())).await);
        assert!(!s.accepts(None).await);
    }

    #[tokio::test]
    async fn wrong_values_cannot_make_an_instance_reload_more_than_once_per_interval() {
        let (good, bogus) = ("g".repeat(40), "b".repeat(40));
        let (_now, calls, reload) = source(&[&good]);
        let s = OriginSecret::reloading(std::slice::from_ref(&good), reload).unwrap();
        for _ in 0..100 {
            assert!(!s.accepts(Some(bogus.as_bytes())).await);
        }
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "loaded at start: no reload within 30 s"
        );
        let s = s.with_min_interval(std::time::Duration::ZERO);
        for _ in 0..3 {
            assert!(!s.accepts(Some(bogus.as_bytes())).await);
        }
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            3,
            "without the interval each would reload"
        );
        // A reload that fails keeps the values.
        let failing: OriginSecretReload = std::sync::Arc::new(|| Box::pin(async { Err("down".to_owned()) }));
        let s = OriginSecret::reloading(std::slice::from_ref(&good), failing)
            .unwrap()
            .with_min_interval(std::time::Duration::ZERO);
        assert!(!s.accepts(Some(bogus.as_bytes())).await);
        assert!(s.accepts(Some(good.as_bytes())).await);
    }
}
