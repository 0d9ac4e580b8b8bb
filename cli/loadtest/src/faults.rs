//! Faults on demand: stop/start commands (e.g. Redis) at chosen times; an HTTP
//! fault-injecting proxy in front of the AWS emulator that can make DynamoDB throttle or fail
//! and make SQS unreachable during chosen windows; and an HTTP proxy between the visitors and
//! vwr (the place of a WAF, CloudFront and API Gateway) that can answer the tier-1 `check` with
//! their 403s during chosen windows.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, Full};

use crate::client::HttpClient;
use crate::error::{LoadtestError, OptionsError};

/// A fault window: `KIND@START+DURATION` (seconds), e.g. `redis@20+3`, `dynamodb@10+5`,
/// `sqs@5+30`, `check403@40+60`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub start: Duration,
    pub duration: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Runs `--redis-stop-cmd` at the start and `--redis-start-cmd` at the end.
    Redis,
    /// The AWS proxy answers DynamoDB calls with throttling (400) and 500s.
    Dynamodb,
    /// The AWS proxy refuses SQS calls (503 without body, as an unreachable endpoint would fail).
    Sqs,
    /// The front proxy answers every tier-1 `check` with a 403 that is no verdict of the tier-1
    /// API: a WAF's HTML page or API Gateway's `{"message":"Forbidden"}`, in turn.
    Check403,
}

impl FaultKind {
    /// The name in `--fault` and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Self::Redis => "redis",
            Self::Dynamodb => "dynamodb",
            Self::Sqs => "sqs",
            Self::Check403 => "check403",
        }
    }
}

impl std::str::FromStr for Fault {
    type Err = OptionsError;

    fn from_str(s: &str) -> Result<Self, OptionsError> {
        let err = || OptionsError::Fault(s.to_owned());
        let (kind, rest) = s.split_once('@').ok_or_else(err)?;
        let (start, dur) = rest.split_once('+').ok_or_else(err)?;
        let kind = match kind {
            "redis" => FaultKind::Redis,
            "dynamodb" => FaultKind::Dynamodb,
            "sqs" => FaultKind::Sqs,
            "check403" => FaultKind::Check403,
            _ => return Err(err()),
        };
        let secs =
            |v: &str| v.trim_end_matches('s').parse::<f64>().ok().filter(|x| *x >= 0.0).ok_or_else(err);
        Ok(Fault {
            kind,
            start: Duration::from_secs_f64(secs(start)?),
            duration: Duration::from_secs_f64(secs(dur)?),
        })
    }
}

/// Faults currently injected by the proxy (bit set).
#[derive(Default)]
pub struct ProxyFaults(AtomicU8);

const DYNAMO: u8 = 1;
const SQS: u8 = 2;
const CHECK403: u8 = 4;

impl ProxyFaults {
    pub fn set(&self, kind: FaultKind, on: bool) {
        let bit = match kind {
            FaultKind::Dynamodb => DYNAMO,
            FaultKind::Sqs => SQS,
            FaultKind::Check403 => CHECK403,
            FaultKind::Redis => return,
        };
        if on {
            self.0.fetch_or(bit, Ordering::SeqCst);
        } else {
            self.0.fetch_and(!bit, Ordering::SeqCst);
        }
    }

    fn has(&self, bit: u8) -> bool {
        self.0.load(Ordering::SeqCst) & bit != 0
    }
}

/// What the proxy saw and did: calls per AWS operation, throttled writes.
#[derive(Default)]
pub struct ProxyStats {
    calls: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
    throttled: std::sync::atomic::AtomicU64,
    /// 403s the front proxy answered in place of vwr.
    forbidden: std::sync::atomic::AtomicU64,
    /// Per-item write budget (a model of DynamoDB's ~1,000 writes/s per item), if any.
    item_limit: Option<f64>,
    buckets: std::sync::Mutex<std::collections::HashMap<String, (f64, std::time::Instant)>>,
}

impl ProxyStats {
    pub fn with_item_limit(writes_per_second: Option<f64>) -> Self {
        Self { item_limit: writes_per_second, ..Self::default() }
    }

    pub fn calls(&self) -> std::collections::BTreeMap<String, u64> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn throttled(&self) -> u64 {
        self.throttled.load(Ordering::Relaxed)
    }

    /// 403s the front proxy answered in place of vwr.
    pub fn forbidden(&self) -> u64 {
        self.forbidden.load(Ordering::Relaxed)
    }

    fn count(&self, op: &str) {
        *self.calls.lock().unwrap_or_else(|p| p.into_inner()).entry(op.to_owned()).or_default() += 1;
    }

    /// Token bucket per item key: `false` when this write exceeds the item's budget.
    fn admit_write(&self, item: &str) -> bool {
        let Some(rate) = self.item_limit else { return true };
        let now = std::time::Instant::now();
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let (tokens, at) = b.entry(item.to_owned()).or_insert((rate, now));
        *tokens = (*tokens + at.elapsed().as_secs_f64() * rate).min(rate);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The AWS proxy's `GET /_vwr/stats`: calls per AWS operation (`x-amz-target`) and throttled
/// writes since it started.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProxyReport {
    pub calls: std::collections::BTreeMap<String, u64>,
    pub throttled_writes: u64,
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    client: HttpClient,
    faults: Arc<ProxyFaults>,
    stats: Arc<ProxyStats>,
}

fn service_of(req: &Request, body: &[u8]) -> &'static str {
    let target = req.headers().get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if target.starts_with("DynamoDB") {
        "dynamodb"
    } else if target.starts_with("AmazonSQS") || body.windows(7).any(|w| w == b"Action=") {
        "sqs"
    } else {
        "other"
    }
}

async fn forward(State(st): State<ProxyState>, req: Request) -> Response {
    if let Some(res) = control(&st, &req) {
        return res;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = body.collect().await.map(|b| b.to_bytes()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let probe = Request::from_parts(parts.clone(), Body::empty());
    let target =
        parts.headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or("other").to_owned();
    st.stats.count(&target);
    if target.ends_with(".UpdateItem") || target.ends_with(".PutItem") {
        let item = serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|v| {
                format!(
                    "{}|{}",
                    v["TableName"],
                    if v["Key"].is_null() { &v["Item"]["pk"] } else { &v["Key"]["pk"] }
                )
            })
            .unwrap_or_default();
        if !st.stats.admit_write(&item) {
            st.stats.throttled.fetch_add(1, Ordering::Relaxed);
            let body = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"per-item write limit (vwr loadtest model)"}"#;
            let mut res = (StatusCode::BAD_REQUEST, body).into_response();
            res.headers_mut().insert("content-type", HeaderValue::from_static("application/x-amz-json-1.0"));
            return res;
        }
    }
    match service_of(&probe, &bytes) {
        "dynamodb" if st.faults.has(DYNAMO) => {
            // Alternate throttling and internal errors, as DynamoDB does under trouble.
            let throttle = bytes.len() % 2 == 0;
            let (status, kind) = if throttle {
                (StatusCode::BAD_REQUEST, "com.amazonaws.dynamodb.v20120810#ThrottlingException")
            } else {
                (StatusCode::INTERNAL_SERVER_ERROR, "com.amazonaws.dynamodb.v20120810#InternalServerError")
            };
            let mut res = (status, format!(r#"{{"__type":"{kind}","message":"injected by vwr loadtest"}}"#))
                .into_response();
            res.headers_mut().insert("content-type", HeaderValue::from_static("application/x-amz-json-1.0"));
            return res;
        }
        "sqs" if st.faults.has(SQS) => return StatusCode::SERVICE_UNAVAILABLE.into_response(),
        _ => {}
    }
    relay(&st.client, &st.upstream, parts, bytes).await
}

/// Sends the request of `parts` and `bytes` on to `upstream` as it is (its host aside) and
/// answers what came back (a 502 when nothing did).
async fn relay(client: &HttpClient, upstream: &str, parts: http::request::Parts, bytes: Bytes) -> Response {
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(uri) = format!("{upstream}{path}").parse::<Uri>() else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let mut out = http::Request::builder().method(parts.method).uri(uri);
    for (k, v) in &parts.headers {
        if k != http::header::HOST {
            out = out.header(k, v);
        }
    }
    let Ok(out) = out.body(Full::new(bytes)) else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    match client.raw(out).await {
        Ok(reply) => {
            let mut res = (reply.status, reply.body).into_response();
            for (k, v) in &reply.headers {
                if k != http::header::CONTENT_LENGTH && k != http::header::TRANSFER_ENCODING {
                    res.headers_mut().append(k, v.clone());
                }
            }
            res
        }
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}

/// The path prefix of the tier-1 `check` as the visitors call it (behind the CDN's `/vwr-api`).
const CHECK_PREFIX: &str = "/vwr-api/vwr/check/";

/// The body of a WAF's (or CloudFront's) block page: HTML, not the tier-1 API's JSON.
const WAF_403_HTML: &str = "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\" \"http://www.w3.org/TR/html4/loose.dtd\">\n<HTML><HEAD><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=iso-8859-1\">\n<TITLE>ERROR: The request could not be satisfied</TITLE>\n</HEAD><BODY>\n<H1>403 ERROR</H1>\n<H2>The request could not be satisfied.</H2>\n<HR noshade size=\"1px\">\nRequest blocked.\n</BODY></HTML>\n";

/// The `n`-th injected 403: a WAF's HTML block page (even `n`) or API Gateway's own
/// `{"message":"Forbidden"}` (odd `n`), as each sends them.
pub fn forbidden_reply(n: u64) -> Response {
    let mut res = if n.is_multiple_of(2) {
        let mut res = (StatusCode::FORBIDDEN, WAF_403_HTML).into_response();
        res.headers_mut().insert("content-type", HeaderValue::from_static("text/html"));
        res.headers_mut().insert("x-cache", HeaderValue::from_static("Error from cloudfront"));
        res
    } else {
        let mut res = (StatusCode::FORBIDDEN, r#"{"message":"Forbidden"}"#).into_response();
        res.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
        res.headers_mut().insert("x-amzn-errortype", HeaderValue::from_static("ForbiddenException"));
        res
    };
    res.headers_mut().insert("cache-control", HeaderValue::from_static("no-store"));
    res
}

#[derive(Clone)]
struct FrontState {
    upstream: String,
    client: HttpClient,
    faults: Arc<ProxyFaults>,
    stats: Arc<ProxyStats>,
}

/// The front proxy: everything on to vwr, except a tier-1 `check` while `check403` is on.
async fn front(State(st): State<FrontState>, req: Request) -> Response {
    if st.faults.has(CHECK403)
        && req.method() == http::Method::GET
        && req.uri().path().starts_with(CHECK_PREFIX)
    {
        let n = st.stats.forbidden.fetch_add(1, Ordering::Relaxed);
        return forbidden_reply(n);
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = body.collect().await.map(|b| b.to_bytes()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    relay(&st.client, &st.upstream, parts, bytes).await
}

/// Starts the front proxy on `listen` (port 0: any free port), forwarding to `upstream` (the
/// vwr under test); answers the address it listens on. Its faults are switched in-process.
pub async fn start_front_proxy(
    listen: SocketAddr,
    upstream: &str,
    faults: Arc<ProxyFaults>,
    stats: Arc<ProxyStats>,
) -> Result<SocketAddr, LoadtestError> {
    let client = HttpClient::new(Duration::from_secs(30))?;
    let st = FrontState { upstream: upstream.trim_end_matches('/').to_owned(), client, faults, stats };
    let app = axum::Router::new().fallback(front).with_state(st);
    let failed = |source| LoadtestError::Listen { what: "front proxy", listen, source };
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(failed)?;
    let addr = listener.local_addr().map_err(failed)?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(addr)
}

/// Control endpoints of the proxy (never paths of the AWS APIs it fronts):
/// `GET /_vwr/stats` → `{"calls": {operation: n}, "throttledWrites": n}`;
/// `POST /_vwr/fault/{dynamodb|sqs}/{on|off}`.
fn control(st: &ProxyState, req: &Request) -> Option<Response> {
    let path = req.uri().path().strip_prefix("/_vwr/")?;
    let res = match (req.method().as_str(), path.split('/').collect::<Vec<_>>().as_slice()) {
        ("GET", ["stats"]) => {
            axum::Json(ProxyReport { calls: st.stats.calls(), throttled_writes: st.stats.throttled() })
                .into_response()
        }
        ("POST", ["fault", kind, state]) => {
            let kind = match *kind {
                "dynamodb" => FaultKind::Dynamodb,
                "sqs" => FaultKind::Sqs,
                _ => return Some(StatusCode::NOT_FOUND.into_response()),
            };
            st.faults.set(kind, *state == "on");
            tracing::info!(event = "aws_proxy.fault", kind = ?kind, on = *state == "on");
            StatusCode::NO_CONTENT.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    };
    Some(res)
}

/// Runs the AWS fault proxy in the foreground (`vwr aws-proxy`).
pub async fn serve_proxy(
    listen: SocketAddr,
    upstream: &str,
    item_writes_per_second: Option<f64>,
) -> Result<(), LoadtestError> {
    start_proxy(
        listen,
        upstream,
        Arc::new(ProxyFaults::default()),
        Arc::new(ProxyStats::with_item_limit(item_writes_per_second)),
    )
    .await?;
    tracing::info!(event = "aws_proxy.started", %listen, upstream, "AWS fault proxy on http://{listen} → {upstream}");
    let _ = tokio::signal::ctrl_c().await;
    Ok(())
}

/// Starts the AWS fault proxy on `listen`, forwarding to `upstream`.
pub async fn start_proxy(
    listen: SocketAddr,
    upstream: &str,
    faults: Arc<ProxyFaults>,
    stats: Arc<ProxyStats>,
) -> Result<(), LoadtestError> {
    let client = HttpClient::new(Duration::from_secs(30))?;
    let st = ProxyState { upstream: upstream.trim_end_matches('/').to_owned(), client, faults, stats };
    let app = axum::Router::new().fallback(forward).with_state(st);
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|source| LoadtestError::Listen {
        what: "fault proxy",
        listen,
        source,
    })?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(())
}

/// One fault window as the report tells it (`faults[]`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultRecord {
    /// `redis`, `dynamodb`, `sqs` or `check403`.
    pub kind: String,
    /// Seconds since the start.
    pub started_at: f64,
    pub ended_at: f64,
    /// The stop command, the proxy or the front proxy took the fault on, and off again.
    pub injected: bool,
    pub recovered: bool,
    /// `check403`: the 403s answered in place of vwr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<u64>,
    /// `redis`: what the probes saw ([`Outage::effect`]), and the probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Outage>,
}

/// A probe answered with a 503 within this much more than vwr's `/healthz` (asked just
/// before, which needs no Redis: the load on vwr itself) saw Redis refuse the connection (the
/// request dropped); later (vwr's Redis response timeout is 1 s by default) or not at all, Redis
/// took the connection and did not answer (paused).
pub const REFUSED_WITHIN_MS: u64 = 900;

/// What vwr's tier 2 answered while a Redis fault lasted: its admin status (which reads Redis)
/// probed 1 s after the stop command and every 2 s after that.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outage {
    pub probes: u64,
    /// A 503 within [`REFUSED_WITHIN_MS`] beyond `/healthz`: the request dropped.
    pub refused: u64,
    /// A later 503, or no answer within 5 s: the request paused.
    pub slow: u64,
    /// A success: Redis answered, the fault had not taken (or had ended).
    pub answered: u64,
    /// Milliseconds each probe took beyond `/healthz`: median and most.
    pub p50_ms: u64,
    pub max_ms: u64,
}

impl Outage {
    /// Records one probe: its status (`None`: no answer) and how many milliseconds it took
    /// beyond `/healthz`.
    pub fn record(&mut self, status: Option<u16>, excess_ms: u64, samples: &mut Vec<u64>) {
        self.probes += 1;
        match status {
            Some(503) if excess_ms < REFUSED_WITHIN_MS => self.refused += 1,
            Some(s) if (200..300).contains(&s) => self.answered += 1,
            _ => self.slow += 1,
        }
        samples.push(excess_ms);
        samples.sort_unstable();
        self.p50_ms = super::stats::quantile(samples, 0.5).unwrap_or(0);
        self.max_ms = samples.last().copied().unwrap_or(0);
    }

    /// `dropped` (no probe answered, most refused fast: what a stopped Redis does), `paused`
    /// (at least half of the probes waited: a Redis that takes connections and never answers),
    /// `partial` (some probe answered), `none` (every probe answered), `unobserved`.
    pub fn effect(&self) -> &'static str {
        if self.probes == 0 {
            "unobserved"
        } else if self.answered == self.probes {
            "none"
        } else if self.slow * 2 >= self.probes {
            "paused"
        } else if self.answered > 0 {
            "partial"
        } else {
            "dropped"
        }
    }
}

/// Probes vwr's tier-2 admin status (admin `auth`, the harness's event) until `end`, each probe
/// timed against a `/healthz` just before it.
pub async fn watch_outage(
    base: &str,
    auth: &crate::client::Auth,
    event: &str,
    end: tokio::time::Instant,
) -> Outage {
    let mut out = Outage::default();
    let mut samples = Vec::new();
    let Ok(client) = HttpClient::new(Duration::from_secs(5)) else {
        tokio::time::sleep_until(end).await;
        return out;
    };
    let (health, url) = (format!("{base}/healthz"), format!("{base}/api/queue/admin/status/{event}"));
    let mut next = tokio::time::Instant::now() + Duration::from_secs(1);
    while next + Duration::from_millis(500) < end {
        tokio::time::sleep_until(next).await;
        let t0 = std::time::Instant::now();
        let _ = client.send(http::Method::GET, &health, None, &crate::client::Auth::None).await;
        let control = t0.elapsed().as_millis() as u64;
        let t1 = std::time::Instant::now();
        let status = client.send(http::Method::GET, &url, None, auth).await.ok().map(|r| r.status.as_u16());
        out.record(status, (t1.elapsed().as_millis() as u64).saturating_sub(control), &mut samples);
        next += Duration::from_secs(2);
    }
    tokio::time::sleep_until(end).await;
    out
}

/// Runs a shell command (fault control), logging failures.
pub async fn run_cmd(cmd: &str) -> bool {
    match tokio::process::Command::new("sh").arg("-c").arg(cmd).status().await {
        Ok(s) if s.success() => true,
        Ok(s) => {
            tracing::warn!(event = "loadtest.fault_cmd_failed", cmd, status = %s);
            false
        }
        Err(e) => {
            tracing::warn!(event = "loadtest.fault_cmd_failed", cmd, error = %e);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_faults() {
        let f: Fault = "redis@20+3".parse().unwrap();
        assert_eq!(
            (f.kind, f.start, f.duration),
            (FaultKind::Redis, Duration::from_secs(20), Duration::from_secs(3))
        );
        assert!("x@1+2".parse::<Fault>().is_err());
        assert!("redis@a+2".parse::<Fault>().is_err());
        assert!("sqs@5s+1.5s".parse::<Fault>().is_ok());
        let f: Fault = "check403@40+60".parse().unwrap();
        assert_eq!((f.kind, f.kind.name()), (FaultKind::Check403, "check403"));
        assert!("check404@1+2".parse::<Fault>().is_err());
    }

    /// A stand-in for vwr: `check` answers 200 JSON with a cookie; anything else echoes the
    /// request's method, path and `cookie` header.
    async fn upstream() -> String {
        async fn answer(req: Request) -> Response {
            let cookie =
                req.headers().get("cookie").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            let body = serde_json::json!({"method": req.method().as_str(), "path": req.uri().path(), "cookie": cookie});
            let mut res = axum::Json(body).into_response();
            res.headers_mut()
                .insert("set-cookie", HeaderValue::from_static("vwr_t2_e1=abc; Max-Age=60; Path=/"));
            res.headers_mut().insert("retry-after", HeaderValue::from_static("2"));
            res
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, axum::Router::new().fallback(answer)).await;
        });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn the_front_proxy_answers_check_with_403s_only_while_the_fault_is_on() {
        let up = upstream().await;
        let (faults, stats) = (Arc::new(ProxyFaults::default()), Arc::new(ProxyStats::default()));
        let addr = start_front_proxy(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            &up,
            Arc::clone(&faults),
            Arc::clone(&stats),
        )
        .await
        .unwrap();
        let client = HttpClient::new(Duration::from_secs(5)).unwrap();
        let get = |path: &str| {
            let req = http::Request::builder()
                .method(http::Method::GET)
                .uri(format!("http://{addr}{path}"))
                .header("cookie", "vwr_t1_e1=tok")
                .body(Full::new(Bytes::new()))
                .unwrap();
            client.raw(req)
        };
        let check = "/vwr-api/vwr/check/e1/r1";

        // Off: everything goes through as it is, both ways.
        let r = get(check).await.unwrap();
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.json()["path"], check);
        assert_eq!(r.json()["cookie"], "vwr_t1_e1=tok");
        assert_eq!(r.headers["set-cookie"], "vwr_t2_e1=abc; Max-Age=60; Path=/");
        assert_eq!(r.headers["retry-after"], "2");

        // On: the check gets a WAF's HTML page, then API Gateway's JSON, in turn; nothing
        // else changes (the status document, the tier-2 check).
        faults.set(FaultKind::Check403, true);
        let waf = get(check).await.unwrap();
        assert_eq!(waf.status, StatusCode::FORBIDDEN);
        assert!(waf.headers["content-type"].to_str().unwrap().starts_with("text/html"));
        assert!(waf.json().is_null(), "not JSON");
        assert!(String::from_utf8_lossy(&waf.body).contains("403 ERROR"));
        let apigw = get(check).await.unwrap();
        assert_eq!(apigw.status, StatusCode::FORBIDDEN);
        assert_eq!(apigw.json(), serde_json::json!({"message": "Forbidden"}));
        assert_eq!(apigw.headers["x-amzn-errortype"], "ForbiddenException");
        assert_eq!(get("/vwr-api/vwr/status/e1").await.unwrap().status, StatusCode::OK);
        assert_eq!(get("/api/queue/check/e1").await.unwrap().status, StatusCode::OK);
        assert_eq!(stats.forbidden(), 2);

        // Off again: through.
        faults.set(FaultKind::Check403, false);
        assert_eq!(get(check).await.unwrap().status, StatusCode::OK);
        assert_eq!(stats.forbidden(), 2);
    }

    #[test]
    fn an_outage_is_dropped_when_its_probes_were_refused_fast() {
        let probe = |answers: &[(Option<u16>, u64)]| {
            let (mut o, mut samples) = (Outage::default(), Vec::new());
            for (status, ms) in answers {
                o.record(*status, *ms, &mut samples);
            }
            o
        };
        let stopped = probe(&[(Some(503), 3), (Some(503), 12), (Some(503), 5)]);
        assert_eq!(
            (stopped.effect(), stopped.refused, stopped.p50_ms, stopped.max_ms),
            ("dropped", 3, 5, 12)
        );
        // A paused Redis takes the connection and never answers: vwr's 503 comes after its
        // Redis timeout, or nothing comes at all.
        assert_eq!(probe(&[(Some(503), 4), (Some(503), 1_004)]).effect(), "paused");
        assert_eq!(probe(&[(Some(503), 4), (None, 5_000)]).effect(), "paused");
        // One probe slowed by the load among many refused at once: still dropped.
        assert_eq!(probe(&[(Some(503), 4), (Some(503), 950), (Some(503), 3)]).effect(), "dropped");
        assert_eq!(probe(&[(Some(503), 4), (Some(200), 2)]).effect(), "partial");
        assert_eq!(probe(&[(Some(200), 2)]).effect(), "none");
        assert_eq!(Outage::default().effect(), "unobserved");
    }
}
