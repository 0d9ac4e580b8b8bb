//! The one way a tier-2 service is put together — by the tier-2 API and worker Lambdas,
//! `vwr dev` and the tests alike: [`assemble`] takes the typed configuration ([`Tier2Config`],
//! read from the environment), the token issuer and the clients the service runs on
//! ([`Tier2Clients`]). The Lambdas' clients are built by `vwr_tier2_store::clients` (Redis,
//! the DynamoDB registry); `vwr dev` and the tests bring theirs (the in-memory store, tier 1
//! itself as the judge of which events it gates, a manual clock).

use std::sync::Arc;

use vwr_core::metrics::MetricsSink;
use vwr_core::tiers::{ActiveEvents, NoActiveEvents};
use vwr_core::time::{Clock, SystemClock};

use crate::Tier2Service;
use crate::config::Tier2Config;
use crate::entry_token::EntryTokens;
use crate::registry::{MemoryRegistry, Registry};
use crate::store::AdmissionStore;

/// What a tier-2 service runs on.
pub struct Tier2Clients {
    /// Lines, admissions and notices waiting to be sent.
    pub store: Arc<dyn AdmissionStore>,
    /// The durable copy of registrations (the table of `VWR_TABLE`); in memory, the store is
    /// their only copy.
    pub registry: Arc<dyn Registry>,
    /// Which events tier 1 gates (registered on first use, in tier-1 order).
    pub tier1: Arc<dyn ActiveEvents>,
    /// The clock of entry tokens and identity cookies.
    pub clock: Arc<dyn Clock>,
    pub metrics: MetricsSink,
}

impl Tier2Clients {
    /// `store` alone: registrations kept in memory besides it, no event gated by tier 1, the
    /// system clock, no metrics (the tests; the Lambdas and `vwr dev` set the rest).
    pub fn new(store: Arc<dyn AdmissionStore>) -> Self {
        Self {
            store,
            registry: Arc::new(MemoryRegistry::default()),
            tier1: Arc::new(NoActiveEvents),
            clock: Arc::new(SystemClock),
            metrics: MetricsSink::Off,
        }
    }
}

/// The tier-2 service of `cfg` on `clients`, signing with `tokens`: its admission settings,
/// and registrations cached per instance for `cfg.registration_cache_ttl`.
pub fn assemble(cfg: &Tier2Config, tokens: EntryTokens, clients: Tier2Clients) -> Tier2Service {
    let Tier2Clients { store, registry, tier1, clock, metrics } = clients;
    Tier2Service::new(store, tokens, cfg.settings, tier1, cfg.registration_cache_ttl)
        .with_registry(registry)
        .with_clock(clock)
        .with_metrics(metrics)
}
