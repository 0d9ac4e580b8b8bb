//! The one way a tier-1 service is put together — by the three Lambdas, `vwr dev` and the
//! tests alike: [`assemble`] takes the typed configuration ([`Tier1Config`], read from the
//! environment), the token issuer and the clients the service runs on ([`Tier1Clients`]).
//! The Lambdas' clients are built by `vwr_tier1_store::clients` (DynamoDB, the CloudFront
//! KeyValueStore, CloudWatch alarms); `vwr dev` and the tests bring theirs (the in-memory
//! store or DynamoDB, a manual clock, fakes).

use std::sync::Arc;

use vwr_core::time::Clock;
use vwr_core::token::Tier1Tokens;

use crate::Tier1Service;
use crate::config::Tier1Config;
use crate::edge_sync::EdgeConfigStore;
use crate::store::{AlarmStates, HealthSignal, PositionStore};

/// What a tier-1 service runs on.
pub struct Tier1Clients {
    /// Events, positions, tickets' records and the audit log.
    pub store: Arc<dyn PositionStore>,
    pub clock: Arc<dyn Clock>,
    /// The edge verifier's event list, kept in step with the events' states (the CloudFront
    /// KeyValueStore of `VWR_EDGE_KVS_ARN`); none: not kept.
    pub edge: Option<Arc<dyn EdgeConfigStore>>,
    /// Holds the advancer while an alarm fires (the CloudWatch alarms of `VWR_HEALTH_ALARMS`).
    pub health: Option<Arc<dyn HealthSignal>>,
    /// The alarms that open standby events (CloudWatch); none: standby events wait for an
    /// operator (docs/lifecycle.md#standby).
    pub alarms: Option<Arc<dyn AlarmStates>>,
}

impl Tier1Clients {
    /// `store` on `clock`, with no edge list and no health signal (`vwr dev`, the tests).
    pub fn new(store: Arc<dyn PositionStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock, edge: None, health: None, alarms: None }
    }
}

/// The tier-1 service of `cfg` on `clients`, signing with `tokens`: its settings, the site's
/// enqueue keys when `VWR_ENQUEUE_JWKS` gave them, and tier 2's public keys when
/// `VWR_TIER2_JWKS` did.
pub fn assemble(cfg: &Tier1Config, tokens: Tier1Tokens, clients: Tier1Clients) -> Tier1Service {
    let Tier1Clients { store, clock, edge, health, alarms } = clients;
    let mut svc = Tier1Service::new(store, tokens, cfg.settings.clone(), clock);
    if let Some(edge) = edge {
        svc = svc.with_edge_sync(edge);
    }
    if let Some(health) = health {
        svc = svc.with_health_signal(health);
    }
    if let Some(alarms) = alarms {
        svc = svc.with_alarm_states(alarms);
    }
    if let Some(v) = &cfg.enqueue {
        svc = svc.with_enqueue_verifier(v.clone());
    }
    if let Some(v) = &cfg.tier2_holds {
        svc = svc.with_hold_verifier(v.clone());
    }
    svc
}
