//! Shared set-up of the tier-2 domain tests (in-memory store).
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

/// A unique event id.
pub fn unique_event(tag: &str) -> EventId {
    let n = vwr_core::keys::random_bytes(4).unwrap();
    EventId::parse(&format!("{tag}-{}-{:02x}{:02x}{:02x}{:02x}", std::process::id(), n[0], n[1], n[2], n[3]))
        .unwrap()
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
