//! Shared set-up of the tier-2 domain tests (in-memory store).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use vwr_core::EcKeyring;
use vwr_core::EventId;
use vwr_core::tiers::NoActiveEvents;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier2::Tier2Service;
use vwr_tier2::entry_token::EntryTokens;
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::model::Tier2Settings;
use vwr_tier2::store::AdmissionStore;

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

pub fn service(store: Arc<dyn AdmissionStore>, settings: Tier2Settings) -> Tier2Service {
    Tier2Service::new(store, entry_tokens(), settings, Arc::new(NoActiveEvents), Duration::ZERO)
}

pub fn manual_clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(vwr_core::time::now_secs()))
}
