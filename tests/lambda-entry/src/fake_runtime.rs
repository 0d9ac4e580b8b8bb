//! A fake Lambda Runtime API for testing the real Lambda binaries: it hands out the given
//! events one by one (`GET …/invocation/next`), records what the function answers
//! (`POST …/response` / `…/error`, `…/init/error`), and holds the next poll open once the
//! events are used up. Start a binary with `AWS_LAMBDA_RUNTIME_API` = [`FakeRuntime::address`]
//! and the variables of [`FakeRuntime::lambda_env`].

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

#[derive(Default)]
struct Shared {
    events: Mutex<VecDeque<(serde_json::Value, u64)>>,
    replies: Mutex<Vec<(String, serde_json::Value)>>,
    next_id: Mutex<u64>,
}

/// The fake runtime.
pub struct FakeRuntime {
    address: SocketAddr,
    shared: Arc<Shared>,
}

async fn next(State(s): State<Arc<Shared>>) -> Response {
    let item = s.events.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    let Some((event, deadline)) = item else {
        // No more work: hold the poll as the real runtime does.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        return StatusCode::NO_CONTENT.into_response();
    };
    let id = {
        let mut n = s.next_id.lock().unwrap_or_else(|p| p.into_inner());
        *n += 1;
        format!("req-{n}")
    };
    let mut h = HeaderMap::new();
    let put = |h: &mut HeaderMap, k: &'static str, v: String| {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    };
    put(&mut h, "lambda-runtime-aws-request-id", id);
    put(&mut h, "lambda-runtime-deadline-ms", deadline.to_string());
    put(
        &mut h,
        "lambda-runtime-invoked-function-arn",
        "arn:aws:lambda:us-east-1:000000000000:function:test".into(),
    );
    put(&mut h, "lambda-runtime-trace-id", "Root=1-00000000-000000000000000000000000".into());
    (StatusCode::OK, h, event.to_string()).into_response()
}

async fn reply(
    State(s): State<Arc<Shared>>,
    Path((_, kind)): Path<(String, String)>,
    body: Bytes,
) -> StatusCode {
    record(&s, &kind, &body);
    StatusCode::ACCEPTED
}

async fn init_error(State(s): State<Arc<Shared>>, body: Bytes) -> StatusCode {
    record(&s, "init_error", &body);
    StatusCode::ACCEPTED
}

fn record(s: &Shared, kind: &str, body: &[u8]) {
    let v = serde_json::from_slice(body)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(body).into_owned()));
    s.replies.lock().unwrap_or_else(|p| p.into_inner()).push((kind.to_owned(), v));
}

impl FakeRuntime {
    /// Serves `events`; each gets a deadline `deadline` after it is handed out… approximately:
    /// the deadline is fixed now, `deadline` from the start.
    pub async fn start(events: Vec<serde_json::Value>, deadline: Duration) -> std::io::Result<Self> {
        let deadline_ms = now_millis() + u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
        let shared = Arc::new(Shared::default());
        shared
            .events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(events.into_iter().map(|e| (e, deadline_ms)));
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/{kind}", post(reply))
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { address, shared })
    }

    /// `host:port` for `AWS_LAMBDA_RUNTIME_API`.
    pub fn address(&self) -> String {
        self.address.to_string()
    }

    /// The variables every Lambda process gets.
    pub fn lambda_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_LAMBDA_RUNTIME_API", self.address()),
            ("AWS_LAMBDA_FUNCTION_NAME", "test".into()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128".into()),
            ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".into()),
        ]
    }

    /// Waits until `n` replies arrived (or `timeout`), and returns all so far:
    /// (`response` | `error` | `init_error`, body).
    pub async fn replies(&self, n: usize, timeout: Duration) -> Vec<(String, serde_json::Value)> {
        let end = tokio::time::Instant::now() + timeout;
        loop {
            let r = self.shared.replies.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if r.len() >= n || tokio::time::Instant::now() > end || r.iter().any(|(k, _)| k == "init_error") {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
