//! Lambda: the tier-1 admin API. API Gateway authenticates callers with IAM (SigV4); the
//! router additionally refuses any request that arrives without an IAM identity.

use vwr_lambda::{serve, startup_error};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = vwr_core::config::Env::from_process();
    let auth =
        vwr_tier1::config::iam_admin_auth(&env).map_err(|e| startup_error("admin configuration", e))?;
    let svc = vwr_tier1::config::dynamo_service(&env, &sdk)
        .await
        .map_err(|e| startup_error("tier-1 configuration", e))?;
    serve(vwr_tier1::http::admin_router(svc, auth)).await
}
