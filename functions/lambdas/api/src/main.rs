//! Lambda: the public tier-1 API (`POST /vwr/assign/{eventId}`, `GET /vwr/check/{eventId}/{requestId}`).

use vwr_lambda::{serve_with, startup_error};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = vwr_core::config::Env::from_process();
    let origin = vwr_tier1::config::origin_secret(&env, Some(&sdk))
        .await
        .map_err(|e| startup_error("origin configuration", e))?;
    let svc = vwr_tier1::config::dynamo_service(&env, &sdk)
        .await
        .map_err(|e| startup_error("tier-1 configuration", e))?;
    serve_with(vwr_tier1::http::public_router(svc), origin).await
}
