//! Lambda: the tier-1 advancer. EventBridge Scheduler invokes it every minute
//! (`rate(1 minute)`); each invocation ticks until shortly before its deadline, so a 10 s
//! event gets 6 steps per invocation. Overlapping or repeated invocations never
//! double-advance a step (conditional writes keyed on the step). The composition root.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use vwr_core::config::Env;
use vwr_core::metrics::MetricsSink;
use vwr_lambda::{secrets, startup_error};
use vwr_tier1::config::{TIER1_KEYS, Tier1Config};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let cfg = Tier1Config::from_env(&env).map_err(|e| startup_error("tier-1 configuration", e))?;
    let ring =
        secrets::ring(&cfg.keys, TIER1_KEYS, &sdk).await.map_err(|e| startup_error("tier-1 keys", e))?;
    let tick = cfg.advancer_tick;
    let svc = vwr_tier1_store::service(&cfg, cfg.tokens(ring), &sdk);

    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| {
        let svc = Arc::clone(&svc);
        async move {
            let budget = vwr_lambda::scheduled_budget(ev.context.deadline);
            // Heal any missed edge-configuration update (no-op without VWR_EDGE_KVS_ARN).
            if let Err(e) = svc.reconcile_edge().await {
                tracing::warn!(event = "tier1.edge_reconcile_failed", error = %e);
            }
            let summary = vwr_tier1::advancer::run(&svc, tick, Some(budget), MetricsSink::Emf).await;
            tracing::info!(event = "tier1.advancer_run", ticks = summary.ticks, advanced = summary.advanced, served = summary.served, errors = summary.errors, stuck = summary.stuck);
            Ok::<_, lambda_runtime::Error>(serde_json::json!({
                "ticks": summary.ticks, "advanced": summary.advanced, "served": summary.served, "errors": summary.errors, "stuck": summary.stuck
            }))
        }
    }))
    .await
}
