//! Lambda: the tier-2 admission worker. EventBridge Scheduler invokes it every minute; it
//! ticks (default every second) until shortly before the deadline. Overlapping invocations
//! are safe: every step is one atomic script. The composition root.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use vwr_core::config::{Env, TIER2_KEYS};
use vwr_core::keys::EcKey;
use vwr_core::metrics::MetricsSink;
use vwr_core::tiers::NoActiveEvents;
use vwr_lambda::{secrets, startup_error};
use vwr_tier2::config::Tier2Config;
use vwr_tier2::worker::Worker;
use vwr_tier2_store::redis::RedisConfig;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let cfg = Tier2Config::from_env(&env).map_err(|e| startup_error("tier-2 configuration", e))?;
    let keys = cfg.required_keys().map_err(|e| startup_error("tier-2 keys", e))?;
    let ring =
        secrets::ring::<EcKey>(keys, TIER2_KEYS, &sdk).await.map_err(|e| startup_error("tier-2 keys", e))?;
    let (url, var) = secrets::redis_url(&env, &sdk).await.map_err(|e| startup_error("Redis", e))?;
    let redis = RedisConfig::from_env(&env, &url, var).map_err(|e| startup_error("Redis", e))?;
    let clients = vwr_tier2_store::clients(&cfg, &redis, &sdk, Arc::new(NoActiveEvents))
        .await
        .map_err(|e| startup_error("tier-2 configuration", e))?;
    let svc = Arc::new(vwr_tier2::assemble(&cfg, cfg.tokens(ring), clients));
    let worker = Arc::new(Worker::new(svc, vwr_tier2_store::notices(&cfg, &sdk), MetricsSink::Emf));
    let tick = cfg.worker_tick;
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| {
        let worker = Arc::clone(&worker);
        async move {
            let budget = vwr_lambda::scheduled_budget(ev.context.deadline);
            Ok::<_, lambda_runtime::Error>(worker.scheduled(tick, budget).await)
        }
    }))
    .await
}
