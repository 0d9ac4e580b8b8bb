//! Lambda: the tier-1 admin API. API Gateway authenticates callers with IAM (SigV4), or on the
//! console API with a JWT authorizer; the router additionally refuses any request that arrives
//! with neither identity, from a principal outside `VWR_ADMIN_PRINCIPALS`, or outside the
//! caller's role (docs/console.md#roles). The composition root.

use std::sync::Arc;

use vwr_core::config::Env;
use vwr_lambda::{secrets, serve, startup_error};
use vwr_tier1::config::{TIER1_KEYS, Tier1Config};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let auth = secrets::iam_admin_auth(&env).map_err(|e| startup_error("admin configuration", e))?;
    let cfg = Tier1Config::from_env(&env).map_err(|e| startup_error("tier-1 configuration", e))?;
    let ring =
        secrets::ring(&cfg.keys, TIER1_KEYS, &sdk).await.map_err(|e| startup_error("tier-1 keys", e))?;
    let svc = Arc::new(vwr_tier1::assemble(&cfg, cfg.tokens(ring), vwr_tier1_store::clients(&cfg, &sdk)));
    // The report's last counts when Lambda stops the instance (docs/operate.md#the-report-after-the-sale).
    let flush = Arc::clone(&svc);
    vwr_lambda::on_shutdown(move || async move {
        let _ = flush.flush_report().await;
    })
    .await;
    serve(vwr_tier1::http::admin_router(svc, auth)).await
}
