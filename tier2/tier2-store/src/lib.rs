//! vwr tier 2, the adapters: the Redis admission store ([`redis::RedisStore`], one Lua script
//! per state change, Cluster-safe keys), the SQS FIFO notice sink ([`sqs::SqsNotices`]) and the
//! DynamoDB copy of registrations ([`registry::DynamoRegistry`]); [`clients`] and [`notices`]
//! build the Lambdas' clients of a tier-2 service and worker on them (which
//! `vwr_tier2::assemble` and `vwr_tier2::worker::Worker` put together).

pub mod redis;
pub mod registry;
mod scripts;
pub mod sqs;

use std::sync::Arc;

use vwr_core::config::ConfigError;
use vwr_core::metrics::MetricsSink;
use vwr_core::tiers::ActiveEvents;
use vwr_core::time::SystemClock;
use vwr_tier2::Tier2Clients;
use vwr_tier2::config::Tier2Config;
use vwr_tier2::notices::{MemoryNotices, NoticeSink};
use vwr_tier2::registry::{MemoryRegistry, Registry};

/// The clients of the Lambdas' tier-2 service: Redis (`redis`), the registrations' durable
/// copy in the table `cfg.table` (or only in Redis, with a warning), `tier1` telling which
/// events tier 1 gates, the system clock and metrics in the embedded format.
pub async fn clients(
    cfg: &Tier2Config,
    redis: &redis::RedisConfig,
    sdk: &aws_config::SdkConfig,
    tier1: Arc<dyn ActiveEvents>,
) -> Result<Tier2Clients, ConfigError> {
    let store = redis::RedisStore::connect(redis).await.map_err(|e| ConfigError::Invalid {
        name: "VWR_REDIS_URL".into(),
        value: "…".into(),
        reason: format!("cannot connect: {e}"),
    })?;
    let registry: Arc<dyn Registry> = match &cfg.table {
        Some(table) => {
            Arc::new(registry::DynamoRegistry::new(aws_sdk_dynamodb::Client::new(sdk), table.clone()))
        }
        None => {
            tracing::warn!(
                event = "tier2.registry_in_memory",
                "VWR_TABLE is not set: tier-2 registrations live only in Redis; a Redis data loss resets thresholds"
            );
            Arc::new(MemoryRegistry::default())
        }
    };
    Ok(Tier2Clients {
        store: Arc::new(store),
        registry,
        tier1,
        clock: Arc::new(SystemClock),
        metrics: MetricsSink::Emf,
    })
}

/// Where the worker sends admission notices: the SQS FIFO queue `cfg.notice_queue_url`, or
/// memory (not sent) without one.
pub fn notices(cfg: &Tier2Config, sdk: &aws_config::SdkConfig) -> Arc<dyn NoticeSink> {
    match &cfg.notice_queue_url {
        Some(url) => {
            Arc::new(sqs::SqsNotices::new(aws_sdk_sqs::Client::new(sdk), url.clone(), cfg.notice_timeout))
        }
        None => Arc::new(MemoryNotices::default()),
    }
}
