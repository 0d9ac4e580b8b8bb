//! vwr tier 2, the adapters: the Redis admission store ([`redis::RedisStore`], one Lua script
//! per state change, Cluster-safe keys), the SQS FIFO notice sink ([`sqs::SqsNotices`]) and the
//! DynamoDB copy of registrations ([`registry::DynamoRegistry`]); [`service`] puts a tier-2
//! service together on them for the Lambdas.

pub mod redis;
pub mod registry;
mod scripts;
pub mod sqs;

use std::sync::Arc;
use std::time::Duration;

use vwr_core::config::{ConfigError, Env};
use vwr_core::metrics::MetricsSink;
use vwr_core::tiers::ActiveEvents;
use vwr_core::time::SystemClock;
use vwr_tier2::Tier2Service;
use vwr_tier2::config::Tier2Config;
use vwr_tier2::entry_token::EntryTokens;
use vwr_tier2::notices::{MemoryNotices, NoticeSink};
use vwr_tier2::registry::{MemoryRegistry, Registry};

/// What a tier-2 Lambda runs on.
pub struct Parts {
    pub service: Arc<Tier2Service>,
    pub notices: Arc<dyn NoticeSink>,
}

/// The tier-2 service of the Lambdas on Redis (`redis`), with its registrations kept in the
/// table `VWR_TABLE` (or only in Redis, with a warning), notices to `VWR_NOTICE_QUEUE_URL` (or
/// kept in memory), and `active` telling which events tier 1 gates.
pub async fn service(
    env: &Env,
    cfg: &Tier2Config,
    tokens: EntryTokens,
    redis: &redis::RedisConfig,
    sdk: &aws_config::SdkConfig,
    active: Arc<dyn ActiveEvents>,
) -> Result<Parts, ConfigError> {
    let store = redis::RedisStore::connect(redis).await.map_err(|e| ConfigError::Invalid {
        name: "VWR_REDIS_URL".into(),
        value: "…".into(),
        reason: format!("cannot connect: {e}"),
    })?;
    let registry: Arc<dyn Registry> = match env.get("VWR_TABLE") {
        Some(table) => Arc::new(registry::DynamoRegistry::new(aws_sdk_dynamodb::Client::new(sdk), table)),
        None => {
            tracing::warn!(
                event = "tier2.registry_in_memory",
                "VWR_TABLE is not set: tier-2 registrations live only in Redis; a Redis data loss resets thresholds"
            );
            Arc::new(MemoryRegistry::default())
        }
    };
    let notices: Arc<dyn NoticeSink> = match &cfg.notice_queue_url {
        Some(url) => {
            Arc::new(sqs::SqsNotices::new(aws_sdk_sqs::Client::new(sdk), url.clone(), cfg.notice_timeout))
        }
        None => Arc::new(MemoryNotices::default()),
    };
    let service = Tier2Service::new(Arc::new(store), tokens, cfg.settings, active, Duration::from_secs(1))
        .with_registry(registry)
        .with_clock(Arc::new(SystemClock))
        .with_metrics(MetricsSink::Emf);
    Ok(Parts { service: Arc::new(service), notices })
}
