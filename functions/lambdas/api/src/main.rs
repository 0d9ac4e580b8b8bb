//! Lambda: the public tier-1 API (`POST /vwr/assign/{eventId}`, `GET /vwr/check/{eventId}/{requestId}`).

use vwr_lambda::{serve, startup_error};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let svc = vwr_tier1::config::dynamo_service(&vwr_core::config::Env::from_process(), &sdk)
        .await
        .map_err(|e| startup_error("tier-1 configuration", e))?;
    serve(vwr_tier1::http::public_router(svc)).await
}
