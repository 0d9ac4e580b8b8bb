//! Lambda: API Gateway (REST) request authorizer for protected APIs. Reads
//! `x-queue-entry-token` and checks signature (public keys), tier, the event of the path, the
//! caller (tier-1 token subject) and expiry; answers an IAM policy.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use vwr_lambda::startup_error;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = vwr_core::config::Env::from_process();
    let protector = Arc::new(
        vwr_tier2::config::protector(&env, &sdk)
            .await
            .map_err(|e| startup_error("authorizer configuration", e))?,
    );
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| {
        let protector = Arc::clone(&protector);
        async move { Ok::<_, lambda_runtime::Error>(vwr_tier2::protect::rest_authorizer(&protector, &ev.payload)) }
    }))
    .await
}
