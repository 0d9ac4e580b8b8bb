//! Lambda: the tier-2 API (`/api/queue/...`, the JWKS) and the tier-2 admin routes
//! (`/api/queue/admin/...`: IAM auth at API Gateway, or the console API's JWT authorizer;
//! checked again here, with the caller's role). The composition
//! root, and one of the two places that wire both tiers: tier 1's DynamoDB table tells tier 2
//! which events tier 1 gates, and the tier-1 link keys (derived; never the master keys) read
//! callers' tier-1 tokens.

use std::sync::Arc;

use vwr_core::config::{Env, TIER2_KEYS};
use vwr_core::keys::EcKey;
use vwr_core::tiers::{ActiveEvents, NoActiveEvents};
use vwr_core::time::SystemClock;
use vwr_lambda::{behind_cdn, secrets, serve, startup_error};
use vwr_tier2::config::Tier2Config;
use vwr_tier2::identity::Identity;
use vwr_tier2_store::redis::RedisConfig;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let auth = secrets::iam_admin_auth(&env).map_err(|e| startup_error("admin configuration", e))?;
    let origin =
        secrets::origin_secret(&env, &sdk).await.map_err(|e| startup_error("origin configuration", e))?;
    let cfg = Tier2Config::from_env(&env).map_err(|e| startup_error("tier-2 configuration", e))?;
    let keys = cfg.required_keys().map_err(|e| startup_error("tier-2 keys", e))?;
    let ring =
        secrets::ring::<EcKey>(keys, TIER2_KEYS, &sdk).await.map_err(|e| startup_error("tier-2 keys", e))?;
    let (url, var) = secrets::redis_url(&env, &sdk).await.map_err(|e| startup_error("Redis", e))?;
    let redis = RedisConfig::from_env(&env, &url, var).map_err(|e| startup_error("Redis", e))?;
    let tier1 = secrets::tier1_link(&env, &sdk).await.map_err(|e| startup_error("tier-1 link keys", e))?;
    // Events tier 1 gates are known to tier 2 implicitly: read from tier 1's table.
    let gated: Arc<dyn ActiveEvents> = match (&tier1, &cfg.table) {
        (Some(_), Some(table)) => vwr_tier1_store::gated_events(table, &sdk),
        _ => Arc::new(NoActiveEvents),
    };
    let clients = vwr_tier2_store::clients(&cfg, &redis, &sdk, gated)
        .await
        .map_err(|e| startup_error("tier-2 configuration", e))?;
    let svc = Arc::new(vwr_tier2::assemble(&cfg, cfg.tokens(ring), clients));
    // The report's last counts when Lambda stops the instance (docs/operate.md#the-report-after-the-sale).
    let flush = Arc::clone(&svc);
    vwr_lambda::on_shutdown(move || async move {
        let _ = flush.flush_report().await;
    })
    .await;
    let identity = Identity::new(tier1, Some(svc.tokens().verifier()), Arc::new(SystemClock));
    // The origin secret guards the public routes only: the admin routes come through the admin
    // API (IAM) and the console API (JWT), never through CloudFront.
    let router = behind_cdn(vwr_tier2::http::public_router(Arc::clone(&svc), identity), origin)
        .merge(vwr_tier2::http::admin_router(svc, auth));
    serve(router).await
}
