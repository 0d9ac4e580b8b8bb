//! Shared set-up of the tier-2 integration tests: the real Redis started by tests/run.sh
//! (`VWR_TEST_REDIS_URL`, default redis://127.0.0.1:6379) and the 3-node cluster it starts
//! (`VWR_TEST_REDIS_CLUSTER_URLS`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use vwr_core::EcKeyring;
use vwr_core::EventId;
use vwr_core::config::Env;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier2::config::Tier2Config;
use vwr_tier2::entry_token::EntryTokens;
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::model::Tier2Settings;
use vwr_tier2::store::AdmissionStore;
use vwr_tier2::{Tier2Clients, Tier2Service};
use vwr_tier2_store::redis::{RedisConfig, RedisStore};

pub fn redis_url() -> String {
    std::env::var("VWR_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

pub fn cluster_urls() -> Vec<String> {
    let raw = std::env::var("VWR_TEST_REDIS_CLUSTER_URLS").unwrap_or_else(|_| {
        panic!("VWR_TEST_REDIS_CLUSTER_URLS is not set: run tests/run.sh (it starts a 3-node Redis Cluster)")
    });
    raw.split(',').map(str::to_owned).collect()
}

/// A unique event id (tests share one Redis).
pub fn unique_event(tag: &str) -> EventId {
    let n = vwr_core::keys::random_bytes(4).unwrap();
    EventId::parse(&format!("{tag}-{}-{:02x}{:02x}{:02x}{:02x}", std::process::id(), n[0], n[1], n[2], n[3]))
        .unwrap()
}

pub async fn redis() -> RedisStore {
    RedisStore::connect(&RedisConfig::single(&redis_url())).await.expect("Redis on VWR_TEST_REDIS_URL")
}

/// A store on Redis logical database `db`, emptied first. Tests that run a worker (which
/// serves every registered event) each own one database so they never touch each other.
pub async fn redis_db(db: u8) -> RedisStore {
    let url = format!("{}/{db}", redis_url().trim_end_matches('/'));
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHDB").query_async(&mut conn).await.unwrap();
    RedisStore::connect(&RedisConfig::single(&url)).await.expect("Redis on VWR_TEST_REDIS_URL")
}

pub async fn cluster() -> RedisStore {
    let cfg = RedisConfig {
        urls: cluster_urls(),
        cluster: true,
        connect_timeout: Duration::from_secs(2),
        response_timeout: Duration::from_secs(2),
    };
    RedisStore::connect(&cfg).await.expect("Redis Cluster on VWR_TEST_REDIS_CLUSTER_URLS")
}

pub fn memory(clock: Arc<dyn Clock>) -> MemoryStore {
    MemoryStore::new(clock)
}

pub fn entry_tokens() -> EntryTokens {
    EntryTokens::new(EcKeyring::generate("t2").unwrap(), "vwr", "vwr-api")
}

/// The configuration the Lambdas read (from an environment without tier-2 variables), with
/// `settings` and no registration cache (tests see writes at once).
pub fn config(settings: Tier2Settings) -> Tier2Config {
    let mut cfg = Tier2Config::from_env(&Env::default()).unwrap();
    cfg.settings = settings;
    cfg.registration_cache_ttl = Duration::ZERO;
    cfg
}

/// A service over `store` with `settings`, assembled as the Lambdas' is.
pub fn service(store: Arc<dyn AdmissionStore>, settings: Tier2Settings) -> Tier2Service {
    service_with(Tier2Clients::new(store), settings)
}

/// A service on `clients` (a manual clock, events gated by tier 1, a registry) with `settings`.
pub fn service_with(clients: Tier2Clients, settings: Tier2Settings) -> Tier2Service {
    vwr_tier2::assemble(&config(settings), entry_tokens(), clients)
}

pub fn manual_clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(vwr_core::time::now_secs()))
}
