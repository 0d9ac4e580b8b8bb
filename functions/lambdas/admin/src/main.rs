//! Lambda: the tier-1 admin API. API Gateway authenticates callers with IAM (SigV4); the
//! router additionally refuses any request that arrives without an IAM identity.

use vwr_core::admin_auth::AdminAuth;
use vwr_lambda::{serve, startup_error};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let svc = vwr_tier1::config::dynamo_service(&vwr_core::config::Env::from_process(), &sdk)
        .await
        .map_err(|e| startup_error("tier-1 configuration", e))?;
    serve(vwr_tier1::http::admin_router(svc, AdminAuth::Iam)).await
}
