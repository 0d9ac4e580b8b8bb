//! Shared set-up of the tier-1 domain tests (in-memory store).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use vwr_core::admin_auth::AdminAuth;
use vwr_core::config::Env;
use vwr_core::time::ManualClock;
use vwr_core::token::Tier1Tokens;
use vwr_core::{EventId, HmacKeyring};
use vwr_tier1::Tier1Clients;
use vwr_tier1::Tier1Service;
use vwr_tier1::config::Tier1Config;
use vwr_tier1::http::{admin_router, public_router};
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::store::PositionStore;

pub fn ev(s: &str) -> EventId {
    EventId::parse(s).unwrap()
}

pub fn tokens() -> Tier1Tokens {
    Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge")
}

/// The configuration the Lambdas read from the environment, with the keys of `tokens` and no
/// cache (tests see writes at once).
pub fn config(tokens: &Tier1Tokens) -> Tier1Config {
    let keys = tokens.ring().to_text();
    Tier1Config::from_env(&Env::from_pairs([("VWR_TIER1_KEYS", keys.as_str()), ("VWR_CACHE_TTL_MS", "0")]))
        .unwrap()
}

/// A service over `store` with a manual clock and no cache, assembled as the Lambdas' is.
pub fn service(store: Arc<dyn PositionStore>, clock: Arc<ManualClock>) -> Tier1Service {
    service_with(Tier1Clients::new(store, clock), |_| {})
}

/// A service on `clients` (fakes of the edge list, the health signal) from [`config`] as
/// `edit` changes it.
pub fn service_with(clients: Tier1Clients, edit: impl FnOnce(&mut Tier1Config)) -> Tier1Service {
    let tokens = tokens();
    let mut cfg = config(&tokens);
    edit(&mut cfg);
    vwr_tier1::assemble(&cfg, tokens, clients)
}

pub const KEY: &str = "test-admin-key-0123456789";
pub const T0: u64 = 1_800_000_000;

/// The public and admin routers over one in-memory service with a manual clock at `T0`.
pub struct App {
    pub router: Router,
    pub svc: Arc<Tier1Service>,
    pub clock: Arc<ManualClock>,
}

pub fn app() -> App {
    let clock = Arc::new(ManualClock::new(T0));
    let svc = Arc::new(service(Arc::new(MemoryStore::new()), Arc::clone(&clock)));
    let router = public_router(Arc::clone(&svc))
        .merge(admin_router(Arc::clone(&svc), AdminAuth::bearer(KEY).unwrap()))
        .fallback(vwr_core::error::not_found_fallback);
    App { router, svc, clock }
}

pub struct Res {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Value,
}

/// One request; `admin` adds the bearer key. A body that is not JSON reads as `null`.
pub async fn call(app: &App, method: &str, uri: &str, body: Option<&str>, admin: bool) -> Res {
    let auth = format!("Bearer {KEY}");
    let headers: &[(&str, &str)] = if admin { &[("authorization", &auth)] } else { &[] };
    send(app, method, uri, body, headers).await
}

/// One request without a body, with `headers`.
pub async fn call_with(app: &App, method: &str, uri: &str, headers: &[(&str, &str)]) -> Res {
    send(app, method, uri, None, headers).await
}

/// One request with a body and `headers`.
pub async fn send_full(
    app: &App,
    method: &str,
    uri: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Res {
    send(app, method, uri, body, headers).await
}

async fn send(app: &App, method: &str, uri: &str, body: Option<&str>, headers: &[(&str, &str)]) -> Res {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let req = req.body(Body::from(body.unwrap_or("").to_owned())).unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Res { status, headers, body }
}
