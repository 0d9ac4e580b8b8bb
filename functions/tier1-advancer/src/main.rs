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
    let svc = Arc::new(vwr_tier1::assemble(&cfg, cfg.tokens(ring), vwr_tier1_store::clients(&cfg, &sdk)));
    let tick = cfg.advancer_tick;
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| {
        let svc = Arc::clone(&svc);
        async move {
            let budget = vwr_lambda::scheduled_budget(ev.context.deadline);
            let reply = vwr_tier1::advancer::scheduled(&svc, tick, budget, MetricsSink::Emf).await;
            Ok::<_, lambda_runtime::Error>(reply)
        }
    }))
    .await
}
