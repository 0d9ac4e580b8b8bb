//! Shared set-up of the tier-1 domain tests (in-memory store).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use vwr_core::time::ManualClock;
use vwr_core::token::Tier1Tokens;
use vwr_core::{EventId, HmacKeyring};
use vwr_tier1::Tier1Service;
use vwr_tier1::service::Tier1Settings;
use vwr_tier1::store::PositionStore;

pub fn ev(s: &str) -> EventId {
    EventId::parse(s).unwrap()
}

pub fn tokens() -> Tier1Tokens {
    Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge")
}

/// A service over `store` with a manual clock and no cache (tests see writes at once).
pub fn service(store: Arc<dyn PositionStore>, clock: Arc<ManualClock>) -> Tier1Service {
    let settings = Tier1Settings { cache_ttl: std::time::Duration::ZERO, ..Tier1Settings::default() };
    Tier1Service::new(store, tokens(), settings, clock)
}
