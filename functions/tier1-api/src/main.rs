//! Lambda: the public tier-1 API (`POST /vwr/assign/{eventId}`, `GET /vwr/check/{eventId}/{requestId}`).
//! The composition root: configuration, keys, the DynamoDB service, the router.

use std::sync::Arc;

use vwr_core::config::Env;
use vwr_lambda::{secrets, serve_with, startup_error};
use vwr_tier1::config::{TIER1_KEYS, Tier1Config};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let cfg = Tier1Config::from_env(&env).map_err(|e| startup_error("tier-1 configuration", e))?;
    let ring =
        secrets::ring(&cfg.keys, TIER1_KEYS, &sdk).await.map_err(|e| startup_error("tier-1 keys", e))?;
    let origin =
        secrets::origin_secret(&env, &sdk).await.map_err(|e| startup_error("origin configuration", e))?;
    let svc = Arc::new(vwr_tier1::assemble(&cfg, cfg.tokens(ring), vwr_tier1_store::clients(&cfg, &sdk)));
    // The report's last counts when Lambda stops the instance (docs/operate.md#the-report-after-the-sale).
    let flush = Arc::clone(&svc);
    vwr_lambda::on_shutdown(move || async move {
        let _ = flush.flush_report().await;
    })
    .await;
    serve_with(vwr_tier1::http::public_router(svc), origin).await
}
