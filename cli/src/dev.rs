//! `vwr dev`: the whole system on one port with the layout of SPEC §2 "Where things live":
//! `/vwr-api/vwr/...` (tier-1 API), `/api/admin/vwr/...` (admin, bearer key), the advancer on
//! a timer, the in-memory store by default or DynamoDB (`--store dynamodb`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use vwr_core::admin_auth::AdminAuth;
use vwr_core::config::Env;
use vwr_core::metrics::MetricsSink;
use vwr_core::time::SystemClock;
use vwr_core::token::Tier1Tokens;
use vwr_core::{ApiError, HmacKeyring};
use vwr_tier1::Tier1Service;
use vwr_tier1::dynamo::DynamoStore;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::store::PositionStore;

use crate::devstate;

/// Which position store the local server uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreChoice {
    /// DynamoDB when `AWS_ENDPOINT_URL` is set, else in-memory.
    Auto,
    Memory,
    Dynamodb,
}

/// Options of `vwr dev`.
#[derive(Debug, Clone, clap::Args)]
pub struct DevOptions {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "VWR_ADDR")]
    pub addr: SocketAddr,
    /// Position store.
    #[arg(long, value_enum, default_value = "auto")]
    pub store: StoreChoice,
    /// DynamoDB table (with `--store dynamodb`).
    #[arg(long, default_value = "vwr-tier1", env = "VWR_TABLE")]
    pub table: String,
    /// How often the advancer looks for due steps, in seconds.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10))]
    pub advancer_tick: u64,
}

/// A start-up failure of the local server.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    #[error(transparent)]
    State(#[from] devstate::DevStateError),
    #[error("configuration: {0}")]
    Config(String),
    #[error("DynamoDB at {endpoint}: {reason}")]
    Dynamo { endpoint: String, reason: String },
    #[error("could not listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("server failed: {0}")]
    Serve(std::io::Error),
}

/// Everything the local server runs.
pub struct DevApp {
    pub router: Router,
    pub tier1: Arc<Tier1Service>,
    pub admin_key: String,
    pub store_name: &'static str,
}

/// Builds the keys: env first, else the dev state file.
fn tier1_tokens(env: &Env, state: &devstate::DevState) -> Result<Tier1Tokens, DevError> {
    let ring = match env.get("VWR_TIER1_KEYS") {
        Some(text) => HmacKeyring::from_text(text, env.get("VWR_TIER1_SIGNING_KID")),
        None => HmacKeyring::from_text(&state.tier1_keys, None),
    }
    .map_err(|e| DevError::Config(format!("tier-1 keys: {e}")))?;
    Ok(Tier1Tokens::new(
        ring,
        env.string("VWR_TOKEN_ISSUER", "vwr"),
        env.string("VWR_TOKEN_AUDIENCE", "vwr-edge"),
    ))
}

/// Builds the all-in-one router and services.
pub async fn build(opts: &DevOptions, env: &Env) -> Result<DevApp, DevError> {
    let state = devstate::load_or_create()?;
    let admin_key = env.get("VWR_ADMIN_KEY").map(str::to_owned).unwrap_or_else(|| state.admin_key.clone());
    let auth = AdminAuth::bearer(&admin_key).map_err(|e| DevError::Config(format!("VWR_ADMIN_KEY: {e}")))?;
    let tokens = tier1_tokens(env, &state)?;
    let mut cfg_env = env.clone();
    cfg_env.set("VWR_TIER1_KEYS", &tokens.ring().to_text());
    cfg_env.set("VWR_TIER1_SIGNING_KID", tokens.ring().signing_kid());
    let cfg =
        vwr_tier1::config::Tier1Config::from_env(&cfg_env).map_err(|e| DevError::Config(e.to_string()))?;

    let use_dynamo = match opts.store {
        StoreChoice::Dynamodb => true,
        StoreChoice::Memory => false,
        StoreChoice::Auto => env.get("AWS_ENDPOINT_URL").is_some(),
    };
    let (store, store_name): (Arc<dyn PositionStore>, &'static str) = if use_dynamo {
        let sdk = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
        let endpoint = env.get("AWS_ENDPOINT_URL").unwrap_or("AWS").to_owned();
        let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(&sdk), opts.table.clone());
        store.ensure_table().await.map_err(|e| DevError::Dynamo { endpoint, reason: e.to_string() })?;
        (Arc::new(store), "dynamodb")
    } else {
        (Arc::new(MemoryStore::new()), "memory")
    };
    let tier1 = Arc::new(Tier1Service::new(store, tokens, cfg.settings, Arc::new(SystemClock)));
    let router = Router::new()
        .nest("/vwr-api", vwr_tier1::http::public_router(Arc::clone(&tier1)))
        .merge(vwr_tier1::http::admin_router(Arc::clone(&tier1), auth))
        .route("/healthz", get(|| async { "ok" }))
        .fallback(|| async { ApiError::not_found("not_found", "no such route") });
    Ok(DevApp { router, tier1, admin_key, store_name })
}

/// Runs the local server until Ctrl-C.
pub async fn run(opts: DevOptions) -> Result<(), DevError> {
    let env = Env::from_process();
    let app = build(&opts, &env).await?;
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .map_err(|source| DevError::Bind { addr: opts.addr, source })?;
    let advancer = tokio::spawn(vwr_tier1::advancer::run_forever(
        Arc::clone(&app.tier1),
        Duration::from_secs(opts.advancer_tick),
        MetricsSink::Off,
    ));
    tracing::info!(
        event = "dev.started",
        addr = %opts.addr,
        store = app.store_name,
        state_file = %devstate::path().display(),
        "vwr dev listening on http://{} (admin key in {}; `vwr admin` reads it from there)",
        opts.addr,
        devstate::path().display()
    );
    let res = axum::serve(listener, app.router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!(event = "dev.stopping");
        })
        .await
        .map_err(DevError::Serve);
    advancer.abort();
    res
}
