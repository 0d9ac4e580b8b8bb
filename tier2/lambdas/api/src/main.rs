//! Lambda: the tier-2 API (`/api/queue/...`, the JWKS) and the tier-2 admin routes
//! (`/api/queue/admin/...`, IAM auth at API Gateway, checked again here).

use vwr_lambda::{serve_with, startup_error};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = vwr_core::config::Env::from_process();
    let auth =
        vwr_tier1::config::iam_admin_auth(&env).map_err(|e| startup_error("admin configuration", e))?;
    let origin = vwr_tier1::config::origin_secret(&env, Some(&sdk))
        .await
        .map_err(|e| startup_error("origin configuration", e))?;
    let parts = vwr_tier2::config::aws_parts(&env, &sdk)
        .await
        .map_err(|e| startup_error("tier-2 configuration", e))?;
    let router = vwr_tier2::http::public_router(parts.service.clone(), parts.identity)
        .merge(vwr_tier2::http::admin_router(parts.service, auth));
    serve_with(router, origin).await
}
