//! Faults on demand: stop/start commands (e.g. Redis) at chosen times, and an HTTP
//! fault-injecting proxy in front of the AWS emulator that can make DynamoDB throttle or fail
//! and make SQS unreachable during chosen windows.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, Full};

use crate::client::HttpClient;

/// A fault window: `KIND@START+DURATION` (seconds), e.g. `redis@20+3`, `dynamodb@10+5`,
/// `sqs@5+30`.
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
}

impl std::str::FromStr for Fault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let err = || format!("fault {s:?}: expected KIND@START+DURATION, KIND one of redis, dynamodb, sqs");
        let (kind, rest) = s.split_once('@').ok_or_else(err)?;
        let (start, dur) = rest.split_once('+').ok_or_else(err)?;
        let kind = match kind {
            "redis" => FaultKind::Redis,
            "dynamodb" => FaultKind::Dynamodb,
            "sqs" => FaultKind::Sqs,
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

impl ProxyFaults {
    pub fn set(&self, kind: FaultKind, on: bool) {
        let bit = match kind {
            FaultKind::Dynamodb => DYNAMO,
            FaultKind::Sqs => SQS,
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
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(uri) = format!("{}{path}", st.upstream).parse::<Uri>() else {
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
    match st.client.raw(out).await {
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

/// Control endpoints of the proxy (never paths of the AWS APIs it fronts):
/// `GET /_vwr/stats` → `{"calls": {operation: n}, "throttledWrites": n}`;
/// `POST /_vwr/fault/{dynamodb|sqs}/{on|off}`.
fn control(st: &ProxyState, req: &Request) -> Option<Response> {
    let path = req.uri().path().strip_prefix("/_vwr/")?;
    let res = match (req.method().as_str(), path.split('/').collect::<Vec<_>>().as_slice()) {
        ("GET", ["stats"]) => axum::Json(serde_json::json!({
            "calls": st.stats.calls(), "throttledWrites": st.stats.throttled()
        }))
        .into_response(),
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
) -> Result<(), String> {
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
) -> Result<(), String> {
    let client = HttpClient::new(Duration::from_secs(30)).map_err(|e| e.to_string())?;
    let st = ProxyState { upstream: upstream.trim_end_matches('/').to_owned(), client, faults, stats };
    let app = axum::Router::new().fallback(forward).with_state(st);
    let listener =
        tokio::net::TcpListener::bind(listen).await.map_err(|e| format!("fault proxy on {listen}: {e}"))?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(())
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
    }
}
