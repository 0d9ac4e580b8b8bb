//! Lambda: the tier-2 admission worker. EventBridge Scheduler invokes it every minute; it
//! ticks (default every second) until shortly before the deadline. Overlapping invocations
//! are safe: every step is one atomic script.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use vwr_core::metrics::MetricsSink;
use vwr_lambda::startup_error;
use vwr_tier2::worker::Worker;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = vwr_core::config::Env::from_process();
    let parts = vwr_tier2::config::aws_parts(&env, &sdk)
        .await
        .map_err(|e| startup_error("tier-2 configuration", e))?;
    let tick = parts.worker_tick;
    let worker = Arc::new(Worker::new(parts.service, parts.notices, MetricsSink::Emf));
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| {
        let worker = Arc::clone(&worker);
        async move {
            let budget = vwr_lambda::scheduled_budget(ev.context.deadline);
            let r = worker.run_for(tick, budget).await;
            tracing::info!(event = "tier2.worker_run", events = r.events, admitted = r.admitted, notices_sent = r.notices_sent, notices_failed = r.notices_failed, errors = r.errors);
            Ok::<_, lambda_runtime::Error>(serde_json::json!({
                "admitted": r.admitted, "noticesSent": r.notices_sent, "noticesFailed": r.notices_failed, "errors": r.errors
            }))
        }
    }))
    .await
}
