//! `vwr dev`: the whole system on one port with the layout of docs/api.md#layout-behind-cloudfront:
//! the waiting page `/vwr/{eventId}`, the booking page `/vwr/queue/{eventId}` (also
//! `/queue/{eventId}`), the tier-1 API under `/vwr-api`, tier 2 under `/api/queue`, the admin
//! APIs (bearer key), a demo origin (`/events/{eventId}`, protected `/api/seats/**`), and the advancer and admission worker on timers. In-memory stores by
//! default; DynamoDB (`--store dynamodb`) and Redis (`--redis`) on request.
//!
//! The local platform, one room each (arrows point down, to the tiers' crates):
//! - this file: the options, both tiers put together on local clients as their Lambdas put
//!   them together (`vwr_tier1::assemble`, `vwr_tier2::assemble`) in [`build`], and [`run`];
//! - [`site`]: the greeting, the waiting and booking pages' files and the demo origin (`demo/`);
//! - [`console`]: the console at `/console/` and its `config.json` (docs/console.md);
//! - [`oidc`]: the console's sign-in: bearer JWTs of `vwr dev`'s own key (minted by
//!   `vwr admin console-token`) or of `--admin-oidc-issuer` (docs/console.md#sign-in-locally);
//! - [`behaviours`]: CloudFront's behaviours, from the file Terraform builds them from;
//! - [`edge`]: the edge check in front of everything, the shipped verifier's decision;
//! - [`cdn`]: CloudFront's cache of the public documents;
//! - [`state`]: the keys and admin key kept in `.vwr/dev.json`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use vwr_core::ErrorCode;

use axum::Router;
use axum::routing::get;
use vwr_core::EcKeyring;
use vwr_core::admin_auth::AdminAuth;
use vwr_core::config::Env;
use vwr_core::metrics::MetricsSink;
use vwr_core::tiers::ActiveEvents;
use vwr_core::time::{Clock, SystemClock};
use vwr_core::{ApiError, HmacKeyring};
use vwr_tier1::config::Tier1Config;
use vwr_tier1::store::PositionStore;
use vwr_tier1::{Tier1Clients, Tier1Service};
use vwr_tier1_store::dynamo::DynamoStore;
use vwr_tier2::config::Tier2Config;
use vwr_tier2::identity::Identity;
use vwr_tier2::notices::{MemoryNotices, NoticeSink};
use vwr_tier2::protect::{Protector, require_entry_token};
use vwr_tier2::registry::{MemoryRegistry, Registry};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2::worker::Worker;
use vwr_tier2::{Tier2Clients, Tier2Service};
use vwr_tier2_store::redis::{RedisConfig, RedisStore, redact_url};
use vwr_tier2_store::registry::DynamoRegistry;

pub mod alarms;
pub mod behaviours;
pub mod cdn;
pub mod console;
pub mod edge;
pub mod oidc;
pub mod site;
pub mod state;

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
    /// Tier-1 position store.
    #[arg(long, value_enum, default_value = "auto")]
    pub store: StoreChoice,
    /// DynamoDB table (with `--store dynamodb`).
    #[arg(long, default_value = "vwr-tier1", env = "VWR_TABLE")]
    pub table: String,
    /// How often the advancer looks for due steps, in seconds.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10))]
    pub advancer_tick: u64,
    /// Tier-2 admission store on Redis (e.g. redis://127.0.0.1:6379); in-memory when absent.
    /// Several comma-separated URLs with `--redis-cluster`.
    #[arg(long, env = "VWR_REDIS_URL")]
    pub redis: Option<String>,
    /// The Redis URLs are seeds of a Redis Cluster.
    #[arg(long)]
    pub redis_cluster: bool,
    /// SQS FIFO queue URL for admission notices (uses AWS_ENDPOINT_URL); kept in memory when absent.
    #[arg(long, env = "VWR_NOTICE_QUEUE_URL")]
    pub sqs_queue_url: Option<String>,
    /// How often the admission worker runs, in seconds.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=60))]
    pub worker_tick: u64,
    /// Refuse the `X-User-Id` header (accepted by default in local development).
    #[arg(long)]
    pub no_dev_user_header: bool,
    /// Edge check in front of the site paths: `native` (Rust, same decision as the shipped
    /// verifier) or `off` (when `node edge/local/proxy.mjs` runs the shipped JS in front).
    #[arg(long, value_enum, default_value = "native")]
    pub edge: EdgeMode,
    /// The console's sign-in (docs/console.md#sign-in-locally).
    #[command(flatten)]
    pub oidc: oidc::OidcArgs,
}

/// Who gates the site paths locally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EdgeMode {
    Native,
    Off,
}

/// A start-up failure of the local server.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    #[error(transparent)]
    State(#[from] state::DevStateError),
    #[error("configuration: {0}")]
    Config(String),
    #[error("DynamoDB at {endpoint}: {reason}")]
    Dynamo { endpoint: String, reason: String },
    #[error("Redis at {url}: {reason}")]
    Redis { url: String, reason: String },
    #[error("could not listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("server failed: {0}")]
    Serve(std::io::Error),
    #[error(transparent)]
    Behaviours(#[from] behaviours::BehavioursError),
    #[error(transparent)]
    Oidc(#[from] oidc::OidcError),
}

/// Everything the local server runs.
pub struct DevApp {
    pub router: Router,
    pub tier1: Arc<Tier1Service>,
    pub tier2: Arc<Tier2Service>,
    pub worker: Arc<Worker>,
    pub admin_key: String,
    pub store_name: &'static str,
    pub admission_store_name: &'static str,
    /// The emulated CDN cache of the status document (hits vs origin fetches).
    pub status_cache: Arc<cdn::StatusCache>,
}

/// The tier-1 master keys: `VWR_TIER1_KEYS` (signing with `VWR_TIER1_SIGNING_KID`), else the
/// state file's.
fn tier1_ring(env: &Env, state: &state::DevState) -> Result<HmacKeyring, DevError> {
    match env.get("VWR_TIER1_KEYS") {
        Some(text) => HmacKeyring::from_text(text, env.get("VWR_TIER1_SIGNING_KID")),
        None => HmacKeyring::from_text(&state.tier1_keys, None),
    }
    .map_err(|e| DevError::Config(format!("tier-1 keys: {e}")))
}

/// The tier-2 keys: `VWR_TIER2_KEYS` (signing with `VWR_TIER2_SIGNING_KID`), else the state
/// file's, else fresh ones.
fn tier2_ring(env: &Env, state: &state::DevState) -> Result<EcKeyring, DevError> {
    match (env.get("VWR_TIER2_KEYS"), &state.tier2_keys) {
        (Some(text), _) => EcKeyring::from_text(text, env.get("VWR_TIER2_SIGNING_KID")),
        (None, Some(text)) => EcKeyring::from_text(text, None),
        (None, None) => EcKeyring::generate("dev2"),
    }
    .map_err(|e| DevError::Config(format!("tier-2 keys: {e}")))
}

/// The tier-1 position store and, on the same backend, the durable copy of tier-2
/// registrations.
async fn position_store(
    opts: &DevOptions,
    env: &Env,
) -> Result<(Arc<dyn PositionStore>, Arc<dyn Registry>, &'static str), DevError> {
    let use_dynamo = match opts.store {
        StoreChoice::Dynamodb => true,
        StoreChoice::Memory => false,
        StoreChoice::Auto => env.get("AWS_ENDPOINT_URL").is_some(),
    };
    if !use_dynamo {
        return Ok((
            Arc::new(vwr_tier1::memory::MemoryStore::new()),
            Arc::new(MemoryRegistry::default()),
            "memory",
        ));
    }
    let sdk = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let endpoint = env.get("AWS_ENDPOINT_URL").unwrap_or("AWS").to_owned();
    let client = aws_sdk_dynamodb::Client::new(&sdk);
    let store = DynamoStore::new(client.clone(), opts.table.clone());
    store.ensure_table().await.map_err(|e| DevError::Dynamo { endpoint, reason: e.to_string() })?;
    Ok((Arc::new(store), Arc::new(DynamoRegistry::new(client, opts.table.clone())), "dynamodb"))
}

async fn admission_store(
    opts: &DevOptions,
    clock: Arc<dyn Clock>,
) -> Result<(Arc<dyn AdmissionStore>, &'static str), DevError> {
    let Some(raw) = &opts.redis else {
        return Ok((Arc::new(vwr_tier2::memory::MemoryStore::new(clock)), "memory"));
    };
    let cfg = RedisConfig {
        urls: raw.split(',').map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect(),
        cluster: opts.redis_cluster,
        ..RedisConfig::single(raw)
    };
    let store = RedisStore::connect(&cfg)
        .await
        .map_err(|e| DevError::Redis { url: redact_url(raw), reason: e.to_string() })?;
    Ok((Arc::new(store), if opts.redis_cluster { "redis-cluster" } else { "redis" }))
}

/// Where the worker sends admission notices: the SQS queue of `cfg` (`--sqs-queue-url`), or
/// memory.
async fn notice_sink(cfg: &Tier2Config) -> Arc<dyn NoticeSink> {
    match &cfg.notice_queue_url {
        None => Arc::new(MemoryNotices::default()),
        Some(_) => {
            let sdk = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
            vwr_tier2_store::notices(cfg, &sdk)
        }
    }
}

/// The console's sign-in: `vwr dev`'s own issuer (named by its base URL, `opts.addr`; its key
/// from the state file) and `--admin-oidc-issuer`'s, checked.
fn sign_in(opts: &DevOptions, state: &state::DevState) -> Result<oidc::SignIn, DevError> {
    let keys = state
        .console_keys
        .as_deref()
        .ok_or_else(|| oidc::OidcError::DevKey(format!("none in {}", state::path().display())))?;
    let issuer = state::reachable_url(opts.addr);
    let dev = oidc::dev_key::DevIssuer::from_text(keys, &issuer, opts.oidc.admin_oidc_groups_claim.trim())?;
    Ok(oidc::SignIn::new(&opts.oidc, dev)?)
}

/// Builds the all-in-one router and services: each tier assembled as its Lambdas assemble it
/// (`vwr_tier1::assemble`, `vwr_tier2::assemble`), on the local clients. `opts.addr` is where
/// it listens (the console tokens' issuer).
pub async fn build(opts: &DevOptions, env: &Env) -> Result<DevApp, DevError> {
    let state = state::load_or_create()?;
    let admin_key = env.get("VWR_ADMIN_KEY").map(str::to_owned).unwrap_or_else(|| state.admin_key.clone());
    let auth = AdminAuth::bearer(&admin_key)
        .map_err(|e| DevError::Config(format!("VWR_ADMIN_KEY: {e}")))?
        .with_groups_claim(&opts.oidc.admin_oidc_groups_claim)
        .map_err(|e| DevError::Config(format!("--admin-oidc-groups-claim: {e}")))?;
    let sign_in = sign_in(opts, &state)?;
    let auth = auth.with_verifier(sign_in.verifier());
    // The keys of the state file unless the environment gives them, read as the Lambdas read
    // theirs.
    let ring = tier1_ring(env, &state)?;
    let mut cfg_env = env.clone();
    cfg_env.set("VWR_TIER1_KEYS", &ring.to_text());
    cfg_env.set("VWR_TIER1_SIGNING_KID", ring.signing_kid());
    // Tier 1 reads tier 2's holds with its public keys, as the tier-1 API Lambda does.
    let ring2 = tier2_ring(env, &state)?;
    let jwks =
        serde_json::to_string(&ring2.jwks()).map_err(|e| DevError::Config(format!("tier-2 keys: {e}")))?;
    cfg_env.set("VWR_TIER2_JWKS", &jwks);
    let cfg = Tier1Config::from_env(&cfg_env).map_err(|e| DevError::Config(e.to_string()))?;
    let tokens = cfg.tokens(ring);
    let mut t2cfg = Tier2Config::from_env(env).map_err(|e| DevError::Config(e.to_string()))?;
    t2cfg.notice_queue_url.clone_from(&opts.sqs_queue_url);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);

    let (store, registry, store_name) = position_store(opts, env).await?;
    // Alarms by hand: what opens standby events here (CloudWatch in AWS).
    let alarms = Arc::new(vwr_tier1::store::ManualAlarms::default());
    let t1clients = Tier1Clients {
        alarms: Some(Arc::clone(&alarms) as Arc<dyn vwr_tier1::store::AlarmStates>),
        ..Tier1Clients::new(store, Arc::clone(&clock))
    };
    let tier1 = Arc::new(vwr_tier1::assemble(&cfg, tokens.clone(), t1clients));

    let (admissions, admission_store_name) = admission_store(opts, Arc::clone(&clock)).await?;
    let entry = t2cfg.tokens(ring2);
    let clients = Tier2Clients {
        store: admissions,
        registry,
        // Tier 1 itself says which events it gates.
        tier1: Arc::clone(&tier1) as Arc<dyn ActiveEvents>,
        clock: Arc::clone(&clock),
        metrics: MetricsSink::Log,
    };
    let tier2 = Arc::new(vwr_tier2::assemble(&t2cfg, entry.clone(), clients));
    let worker = Arc::new(Worker::new(Arc::clone(&tier2), notice_sink(&t2cfg).await, MetricsSink::Off));
    let link = (tokens.link().clone(), cfg.settings.cookie_prefix.clone());
    let identity = Identity {
        dev_user_header: !opts.no_dev_user_header,
        ..Identity::new(Some(link), Some(entry.verifier()), Arc::clone(&clock))
    };
    let protector = Arc::new(Protector { verifier: entry.verifier(), identity: identity.clone() });

    let router = Router::new()
        .nest("/vwr-api", vwr_tier1::http::public_router(Arc::clone(&tier1)))
        .merge(vwr_tier1::http::admin_router_with(
            Arc::clone(&tier1),
            auth.clone(),
            Some(Arc::clone(&tier2) as Arc<dyn vwr_core::tiers::StatusExtra>),
        ))
        .merge(vwr_tier2::http::public_router(Arc::clone(&tier2), identity))
        .merge(vwr_tier2::http::admin_router(Arc::clone(&tier2), auth.clone()))
        .merge(alarms::router(alarms, auth.clone()))
        .merge(site::home_page(Arc::clone(&tier1)))
        .merge(site::waiting_room())
        .merge(console::router(sign_in.console_config()))
        .merge(oidc::dev_key::router(Arc::clone(&sign_in.dev), auth.clone()))
        .merge(site::demo_pages())
        .merge(site::demo_seats().layer(axum::middleware::from_fn_with_state(protector, require_entry_token)))
        .route("/healthz", get(|| async { "ok" }))
        .fallback(|| async { ApiError::not_found(ErrorCode::NotFound, "no such route") });
    // CloudFront's behaviours, as deployed: its cache in front of the public documents (1 s,
    // path-only key), then the edge check in front of everything (the fallback included), as
    // CloudFront's viewer-request function does.
    let behaviours = Arc::new(behaviours::Behaviours::shipped()?);
    let status_cache = Arc::new(cdn::StatusCache::new(Arc::clone(&behaviours)));
    let router = router.layer(axum::middleware::from_fn_with_state(Arc::clone(&status_cache), cdn::layer));
    let router = match opts.edge {
        EdgeMode::Native => {
            let state = edge::EdgeState { tier1: Arc::clone(&tier1), behaviours };
            router.layer(axum::middleware::from_fn_with_state(state, edge::edge_check))
        }
        EdgeMode::Off => router,
    };
    Ok(DevApp { router, tier1, tier2, worker, admin_key, store_name, admission_store_name, status_cache })
}

/// Runs the local server until Ctrl-C.
pub async fn run(mut opts: DevOptions) -> Result<(), DevError> {
    let env = Env::from_process();
    if !opts.addr.ip().is_loopback() && !opts.no_dev_user_header {
        tracing::warn!(
            event = "dev.public_with_dev_header",
            addr = %opts.addr,
            "vwr dev listens beyond this machine while it accepts X-User-Id as the tier-2 identity: \
             anyone who can reach it can act as any user. Pass --no-dev-user-header, or bind 127.0.0.1"
        );
    }
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .map_err(|source| DevError::Bind { addr: opts.addr, source })?;
    // The address the other commands use when none is given (docs/cli.md#addressing-a-stack),
    // and the console tokens' issuer (`--addr 127.0.0.1:0` names its port).
    let bound = listener.local_addr().unwrap_or(opts.addr);
    opts.addr = bound;
    let app = build(&opts, &env).await?;
    state::record_url(&state::reachable_url(bound))?;
    let advancer = tokio::spawn(vwr_tier1::advancer::run_forever(
        Arc::clone(&app.tier1),
        Duration::from_secs(opts.advancer_tick),
        MetricsSink::Off,
    ));
    let worker = tokio::spawn(Arc::clone(&app.worker).run_forever(Duration::from_secs(opts.worker_tick)));
    tracing::info!(
        event = "dev.started",
        addr = %opts.addr,
        store = app.store_name,
        admission_store = app.admission_store_name,
        state_file = %state::path().display(),
        "vwr dev listening on http://{} (admin key in {}; `vwr admin` reads it from there)",
        opts.addr,
        state::path().display()
    );
    let res = axum::serve(listener, app.router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!(event = "dev.stopping");
        })
        .await
        .map_err(DevError::Serve);
    advancer.abort();
    worker.abort();
    // The report's last counts (docs/operate.md#the-report-after-the-sale): on DynamoDB they
    // outlive this process.
    if let Err(e) = app.tier1.flush_report().await {
        tracing::warn!(event = "dev.report_flush_failed", error = %e);
    }
    tracing::info!(
        event = "dev.status_cache",
        hits = app.status_cache.hits(),
        origin_fetches = app.status_cache.misses(),
        "status document: answered from the emulated CDN cache vs fetched from tier 1"
    );
    res
}
