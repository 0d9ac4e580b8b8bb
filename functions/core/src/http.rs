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
/// `invalid_event_id` for a bad id, or for an id spelled with percent-encoding).
///
/// An event id is spelled literally (its characters never need encoding): `/vwr/status/%65%31`
/// would be a CDN cache entry of its own for `e1`'s status document, one per spelling, each
/// reaching the origin.
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
        let event = parse_event_id(raw)?;
        // The parameter arrives decoded: a path segment that is encoded and decodes to the id
        // is the id spelled another way.
        let encoded = parts
            .uri
            .path()
            .split('/')
            .any(|seg| seg.contains('%') && percent_decoded(seg).as_deref() == Some(event.as_str()));
        if encoded {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidEventId,
                "spell the event id literally, without percent-encoding",
            ));
        }
        Ok(Self(event))
    }
}

/// `seg` with its `%XX` escapes decoded; `None` if an escape is malformed or the result is not
/// UTF-8.
fn percent_decoded(seg: &str) -> Option<String> {
    let bytes = seg.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Reads an optional JSON body: empty (or whitespace) means `T::default()`. Integral numbers
/// written with a fraction (`3094.0`) are integers, as JSON Schema counts them
/// ([`integral_numbers`]).
pub fn json_body<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    strict_json(body)
}

/// Reads a JSON body: a JSON object (or `null`), integral numbers written with a fraction
/// counted as integers. No vwr route takes an array, a string, a number or a boolean.
pub fn strict_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let bad = |e: serde_json::Error| ApiError::bad_request(ErrorCode::InvalidBody, e.to_string());
    let mut value: serde_json::Value = serde_json::from_slice(body).map_err(bad)?;
    if !(value.is_object() || value.is_null()) {
        return Err(ApiError::bad_request(ErrorCode::InvalidBody, "the body must be a JSON object"));
    }
    integral_numbers(&mut value);
    serde_json::from_value(value).map_err(bad)
}

/// For `#[serde(default, deserialize_with = "vwr_core::http::opt_object")]` on an optional
/// field of a request body that is a struct: only a JSON object (or `null`, absent) is taken.
/// serde's derived structs also read a JSON array (`{"message": [null, null]}` was a message),
/// which no vwr route documents.
pub fn opt_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    use serde::de::Error;
    match <serde_json::Value as serde::Deserialize>::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        v @ serde_json::Value::Object(_) => serde_json::from_value(v).map(Some).map_err(D::Error::custom),
        _ => Err(D::Error::custom("expected a JSON object")),
    }
}

/// Rewrites every number with a zero fraction that fits an integer (`49.0`, `1e3`) as that
/// integer: JSON Schema (and so docs/openapi.yaml's `integer`) counts it as one, serde's
/// integer types do not. Other numbers stay as they are.
pub fn integral_numbers(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0) {
                // Within ±2^53 an f64 is exact; beyond, `49.0`-style input is not an integer
                // anyone meant, and is left to be refused by the field's own type.
                const EXACT: f64 = 9_007_199_254_740_992.0;
                if (0.0..=EXACT).contains(&f) {
                    *v = serde_json::Value::from(f as u64);
                } else if (-EXACT..0.0).contains(&f) {
                    *v = serde_json::Value::from(f as i64);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(integral_numbers),
        serde_json::Value::Object(o) => o.values_mut().for_each(integral_numbers),
        _ => {}
    }
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

/// An instance also reloads this often while every request carries a known value, so it sees a
/// rotation (and the end of the previous value) without waiting for an unknown value.
pub const ORIGIN_RELOAD_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

/// How long after an instance saw a rotation it still accepts the previous value: CloudFront
/// takes minutes to deploy the new header to every edge; a value rotated out because it leaked
/// is refused after this.
pub const ORIGIN_PREVIOUS_GRACE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The values an instance accepts: the current one, and values rotated out, each until a
/// deadline (clock milliseconds).
#[derive(Debug, Clone)]
struct Accepted {
    current: std::sync::Arc<str>,
    previous: Vec<(std::sync::Arc<str>, u64)>,
}

impl Accepted {
    /// `values` (current first) as loaded at `now`: a previous value keeps the deadline it got
    /// when this instance first saw it rotated out; a newly seen one gets `now + grace`.
    fn load(old: Option<&Self>, values: Vec<std::sync::Arc<str>>, now: u64, grace: u64) -> Option<Self> {
        let mut values = values.into_iter();
        let current = values.next()?;
        let previous = values
            .filter(|v| *v != current)
            .map(|v| {
                let until = old
                    .and_then(|o| o.previous.iter().find(|(p, _)| *p == v).map(|(_, u)| *u))
                    .unwrap_or(now.saturating_add(grace));
                (v, until)
            })
            .collect();
        Some(Self { current, previous })
    }
}

/// The secret that proves a request came through CloudFront (terraform/README.md, "Locking
/// origins to CloudFront"). Requests to an API behind CloudFront without it are refused, so
/// the gate and the WAF cannot be bypassed by calling the `execute-api` endpoint directly.
///
/// It holds the current value and any previous one. With a reload ([`OriginSecret::reloading`])
/// the instance loads the values again every [`ORIGIN_RELOAD_EVERY`], and when a request
/// carries none of them — at most once per [`ORIGIN_RELOAD_MIN_INTERVAL`] — and checks once
/// more: so when a rotation gives CloudFront a new value, the first request with it brings the
/// instance up to date, while requests still carrying the old one (edges not yet updated)
/// match the previous value the reload keeps. A previous value is accepted while the reload
/// lists it, and never longer than [`ORIGIN_PREVIOUS_GRACE`] after this instance first saw it
/// rotated out.
#[derive(Clone)]
pub struct OriginSecret {
    accepted: std::sync::Arc<std::sync::RwLock<Accepted>>,
    reload: Option<OriginSecretReload>,
    // When the values were last (re)loaded (clock milliseconds); also the single-flight gate
    // of a reload.
    loaded_at: std::sync::Arc<tokio::sync::Mutex<u64>>,
    min_interval: std::time::Duration,
    clock: std::sync::Arc<dyn crate::time::Clock>,
}

impl std::fmt::Debug for OriginSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OriginSecret(…)")
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl OriginSecret {
    /// One fixed value; refuses secrets too short to be secret.
    pub fn new(secret: &str) -> Result<Self, String> {
        Self::build(&[secret.to_owned()], None)
    }

    /// The values `initial` (the first is the current one), loaded again by `reload`
    /// periodically and when a request carries none of them.
    pub fn reloading(initial: &[String], reload: OriginSecretReload) -> Result<Self, String> {
        Self::build(initial, Some(reload))
    }

    /// The same with reloads at most every `interval` (tests).
    pub fn with_min_interval(mut self, interval: std::time::Duration) -> Self {
        self.min_interval = interval;
        self
    }

    /// The same on `clock` (tests move time); call it right after construction.
    pub fn with_clock(mut self, clock: std::sync::Arc<dyn crate::time::Clock>) -> Self {
        let now = clock.now_millis();
        if let Ok(mut at) = self.loaded_at.try_lock() {
            *at = now;
        }
        let mut accepted = self.accepted.write().unwrap_or_else(|p| p.into_inner());
        for (_, until) in accepted.previous.iter_mut() {
            *until = now.saturating_add(millis(ORIGIN_PREVIOUS_GRACE));
        }
        drop(accepted);
        self.clock = clock;
        self
    }

    fn build(values: &[String], reload: Option<OriginSecretReload>) -> Result<Self, String> {
        let clock: std::sync::Arc<dyn crate::time::Clock> = std::sync::Arc::new(crate::time::SystemClock);
        let now = clock.now_millis();
        let accepted = Accepted::load(None, Self::checked(values)?, now, millis(ORIGIN_PREVIOUS_GRACE))
            .ok_or("no origin secret")?;
        Ok(Self {
            accepted: std::sync::Arc::new(std::sync::RwLock::new(accepted)),
            reload,
            loaded_at: std::sync::Arc::new(tokio::sync::Mutex::new(now)),
            min_interval: ORIGIN_RELOAD_MIN_INTERVAL,
            clock,
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
        let now = self.clock.now_millis();
        let accepted = self.accepted.read().unwrap_or_else(|p| p.into_inner());
        // Every value is compared (constant time each), so the time says nothing of which.
        let eq = |v: &str| aws_lc_rs::constant_time::verify_slices_are_equal(given, v.as_bytes()).is_ok();
        let mut hit = eq(&accepted.current);
        for (v, until) in accepted.previous.iter() {
            hit |= eq(v) & (now < *until);
        }
        hit
    }

    /// Loads the values again (the caller holds the reload gate `loaded_at`).
    async fn reload_now(&self, reload: &OriginSecretReload, loaded_at: &mut u64, now: u64) {
        *loaded_at = now;
        match reload().await.and_then(|v| Self::checked(&v)) {
            Ok(values) => {
                let mut accepted = self.accepted.write().unwrap_or_else(|p| p.into_inner());
                if let Some(new) = Accepted::load(Some(&accepted), values, now, millis(ORIGIN_PREVIOUS_GRACE))
                {
                    if new.current != accepted.current {
                        tracing::info!(event = "http.origin_secret_rotation_seen");
                    }
                    tracing::info!(event = "http.origin_secret_reloaded", values = 1 + new.previous.len());
                    *accepted = new;
                }
            }
            Err(e) => tracing::warn!(event = "http.origin_secret_reload_failed", error = %e),
        }
    }

    /// Whether `given` is an accepted value: after a periodic reload if one is due, and
    /// reloading once more if it is not accepted and the last load is old enough.
    pub async fn accepts(&self, given: Option<&[u8]>) -> bool {
        let Some(given) = given else { return false };
        let Some(reload) = &self.reload else { return self.matches(given) };
        // The periodic reload: one request per instance does it; the others go on with the
        // values they have (they do not wait).
        if let Ok(mut loaded_at) = self.loaded_at.try_lock() {
            let now = self.clock.now_millis();
            if now.saturating_sub(*loaded_at) >= millis(ORIGIN_RELOAD_EVERY) {
                self.reload_now(reload, &mut loaded_at, now).await;
            }
        }
        if self.matches(given) {
            return true;
        }
        // One reload at a time; whoever waited for it checks against its result.
        let mut loaded_at = self.loaded_at.lock().await;
        let now = self.clock.now_millis();
        if now.saturating_sub(*loaded_at) >= millis(self.min_interval) {
            self.reload_now(reload, &mut loaded_at, now).await;
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
    fn integral_numbers_with_a_fraction_are_integers() {
        #[derive(Debug, serde::Deserialize, PartialEq)]
        struct B {
            by: u64,
            n: i32,
            ratio: f64,
        }
        let b: B = strict_json(br#"{"by": 9999999.0, "n": -3.0, "ratio": 0.5}"#).unwrap();
        assert_eq!(b, B { by: 9_999_999, n: -3, ratio: 0.5 });
        let b: B = strict_json(br#"{"by": 1e3, "n": 0, "ratio": 2.0}"#).unwrap();
        assert_eq!(b, B { by: 1000, n: 0, ratio: 2.0 });
        assert!(strict_json::<B>(br#"{"by": 1.5, "n": 0, "ratio": 0}"#).is_err());
        assert!(strict_json::<B>(br#"{"by": 1e300, "n": 0, "ratio": 0}"#).is_err());
        assert!(json_body::<serde_json::Value>(&Bytes::from_static(b"  ")).unwrap().is_null());
    }

    #[test]
    fn bodies_and_nested_structs_are_json_objects() {
        #[derive(Debug, Default, serde::Deserialize, PartialEq)]
        struct Inner {
            en: Option<String>,
        }
        #[derive(Debug, Default, serde::Deserialize, PartialEq)]
        struct Outer {
            #[serde(default, deserialize_with = "opt_object")]
            message: Option<Inner>,
        }
        for bad in [&b"[1]"[..], b"\"x\"", b"3", b"true", br#"{"message": [null]}"#, br#"{"message": "hi"}"#]
        {
            assert!(strict_json::<Outer>(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let ok: Outer = strict_json(br#"{"message": {"en": "hi"}}"#).unwrap();
        assert_eq!(ok.message, Some(Inner { en: Some("hi".into()) }));
        assert_eq!(strict_json::<Outer>(br#"{"message": null}"#).unwrap(), Outer::default());
        assert_eq!(strict_json::<Outer>(b"{}").unwrap(), Outer::default());
    }

    #[test]
    fn percent_decoding_of_path_segments() {
        assert_eq!(percent_decoded("%65%31").as_deref(), Some("e1"));
        assert_eq!(percent_decoded("e%31").as_deref(), Some("e1"));
        assert_eq!(percent_decoded("%4A%4a").as_deref(), Some("JJ"));
        assert_eq!(percent_decoded("e1").as_deref(), Some("e1"));
        for bad in ["%", "%6", "%zz", "%FF", "e%3"] {
            assert_eq!(percent_decoded(bad), None, "{bad}");
        }
    }

    #[test]
    fn origin_secrets_must_be_long() {
        assert!(OriginSecret::new("short").is_err());
        assert!(
            OriginSecret::reloading(&[], std::sync::Arc::new(|| Box::pin(async { Ok(vec![]) }))).is_err()
        );
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

    /// A warm instance whose requests all carry a known value still sees a rotation (it reloads
    /// every few minutes), and accepts the rotated-out value only for an hour after it saw the
    /// rotation — whatever the source keeps listing (terraform/README.md, "Rotation").
    #[tokio::test]
    async fn a_rotated_out_value_is_refused_an_hour_after_the_instance_saw_the_rotation() {
        use std::sync::atomic::Ordering::SeqCst;
        let (old, new) = ("o".repeat(40), "n".repeat(40));
        let clock = std::sync::Arc::new(crate::time::ManualClock::new(1_800_000_000));
        let (now, calls, reload) = source(&[&old]);
        let s =
            OriginSecret::reloading(std::slice::from_ref(&old), reload).unwrap().with_clock(clock.clone());
        assert!(s.accepts(Some(old.as_bytes())).await);
        // The secret rotates. This instance's edge is slow: it keeps sending the old value, so
        // no unknown value ever arrives; the periodic reload sees the rotation anyway.
        *now.lock().unwrap() = vec![new.clone(), old.clone()];
        clock.advance(299);
        assert!(s.accepts(Some(old.as_bytes())).await);
        assert_eq!(calls.load(SeqCst), 0, "no reload within five minutes of the last");
        clock.advance(1);
        assert!(s.accepts(Some(old.as_bytes())).await, "edges not yet updated still pass");
        assert_eq!(calls.load(SeqCst), 1, "the periodic reload saw the rotation");
        assert!(s.accepts(Some(new.as_bytes())).await, "the new value passes without a reload");
        assert_eq!(calls.load(SeqCst), 1);
        // The source keeps listing the previous value (its own clock is off, say): the instance
        // still refuses it an hour after it saw the rotation, through periodic reloads.
        for _ in 0..11 {
            clock.advance(300);
            assert!(s.accepts(Some(old.as_bytes())).await);
        }
        clock.advance(299);
        assert!(s.accepts(Some(old.as_bytes())).await, "59:59 after the rotation was seen");
        clock.advance(1);
        assert!(!s.accepts(Some(old.as_bytes())).await, "an hour after it, the old value is refused");
        assert!(s.accepts(Some(new.as_bytes())).await);
        assert!(calls.load(SeqCst) >= 12, "reloaded every five minutes: {}", calls.load(SeqCst));

        // An instance that starts within the hour takes both, and drops the previous value as
        // soon as the source does, at its next periodic reload — without any unknown value.
        let (now, calls, reload) = source(&[&new, &old]);
        let s =
            OriginSecret::reloading(&[new.clone(), old.clone()], reload).unwrap().with_clock(clock.clone());
        assert!(s.accepts(Some(old.as_bytes())).await);
        *now.lock().unwrap() = vec![new.clone()];
        clock.advance(300);
        assert!(!s.accepts(Some(old.as_bytes())).await, "dropped with the source");
        assert!(s.accepts(Some(new.as_bytes())).await);
        assert_eq!(calls.load(SeqCst), 1);

        // A source that fails keeps the values, and the hour still ends the previous one.
        let failing: OriginSecretReload = std::sync::Arc::new(|| Box::pin(async { Err("down".to_owned()) }));
        let s =
            OriginSecret::reloading(&[new.clone(), old.clone()], failing).unwrap().with_clock(clock.clone());
        clock.advance(3599);
        assert!(s.accepts(Some(old.as_bytes())).await);
        clock.advance(1);
        assert!(!s.accepts(Some(old.as_bytes())).await);
        assert!(s.accepts(Some(new.as_bytes())).await);
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
