//! vwr tier 1, the adapters: the DynamoDB [`dynamo::DynamoStore`] (the real
//! `vwr_tier1::store::PositionStore`) and the CloudFront KeyValueStore [`kvs::KvsEdgeConfig`]
//! (the real `vwr_tier1::edge_sync::EdgeConfigStore`), and [`clients`], the Lambdas' clients
//! of a tier-1 service on them (which `vwr_tier1::assemble` puts together); [`gated_events`]
//! tells tier 2 which events tier 1 gates, without any tier-1 key.

pub mod alarms;
pub mod dynamo;
pub mod kvs;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use vwr_core::EventId;
use vwr_core::cache::TtlCache;
use vwr_core::tiers::{ActiveEvents, LookupError};
use vwr_core::time::{Clock, SystemClock};
use vwr_tier1::Tier1Clients;
use vwr_tier1::config::Tier1Config;
use vwr_tier1::edge_sync::EdgeConfigStore;
use vwr_tier1::store::{AlarmStates, HealthSignal, PositionStore};

/// Which events tier 1 gates, read from its event items (cached per instance for
/// `cache_ttl`, as tier 1 caches them, ADR 0006). For the tier-2 API: it needs no tier-1 key,
/// so it never holds the tier-1 master keys (docs/invariants.md#24).
pub struct GatedEvents {
    store: Arc<dyn PositionStore>,
    cache: TtlCache<EventId, bool>,
}

impl GatedEvents {
    pub fn new(store: Arc<dyn PositionStore>, cache_ttl: Duration) -> Self {
        Self { store, cache: TtlCache::new(cache_ttl) }
    }
}

#[async_trait]
impl ActiveEvents for GatedEvents {
    async fn is_active(&self, event: &EventId) -> Result<bool, LookupError> {
        if let Some(gated) = self.cache.get(event) {
            return Ok(gated);
        }
        let gated = match self.store.get_event(event).await {
            Ok(rec) => rec.is_some_and(|r| r.state.gates()),
            Err(e) => return Err(LookupError(e.to_string())),
        };
        self.cache.insert(event.clone(), gated);
        Ok(gated)
    }
}

/// [`GatedEvents`] on the DynamoDB table `table`.
pub fn gated_events(table: &str, sdk: &aws_config::SdkConfig) -> Arc<dyn ActiveEvents> {
    let store = dynamo::DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), table);
    Arc::new(GatedEvents::new(Arc::new(store), Duration::from_secs(1)))
}

/// The clients of the Lambdas' tier-1 service: the DynamoDB table `cfg.table`, the system
/// clock, the edge configuration kept in step when `cfg.edge_kvs_arn` is set, and CloudWatch
/// holding the advancer when `cfg.health_alarms` name alarms.
pub fn clients(cfg: &Tier1Config, sdk: &aws_config::SdkConfig) -> Tier1Clients {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let store = dynamo::DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), cfg.table.clone());
    let edge = cfg
        .edge_kvs_arn
        .as_ref()
        .map(|arn| -> Arc<dyn EdgeConfigStore> { Arc::new(kvs::KvsEdgeConfig::new(sdk, arn.clone())) });
    let health = (!cfg.health_alarms.is_empty()).then(|| -> Arc<dyn HealthSignal> {
        let cw = aws_sdk_cloudwatch::Client::new(sdk);
        Arc::new(alarms::CloudWatchAlarms::new(cw, cfg.health_alarms.clone(), Arc::clone(&clock)))
    });
    let cw = aws_sdk_cloudwatch::Client::new(sdk);
    let alarms: Arc<dyn AlarmStates> = Arc::new(alarms::CloudWatchAlarmStates::new(cw, Arc::clone(&clock)));
    Tier1Clients { store: Arc::new(store), clock, edge, health, alarms: Some(alarms) }
}
