//! Lambda: API Gateway (REST) request authorizer for protected APIs. Reads
//! `x-queue-entry-token` and checks signature (public keys), tier, the event of the path, the
//! caller (tier-1 token or tier-2 identity cookie) and expiry; answers an IAM policy. JWT only:
//! no store, no SDK but Secrets Manager (for the tier-1 link keys: derived, never the master
//! keys). The composition root.

use std::sync::Arc;

use aws_lambda_events::apigw::ApiGatewayCustomAuthorizerRequestTypeRequest;
use lambda_runtime::{LambdaEvent, service_fn};
use vwr_core::config::{Env, TIER2_KEYS};
use vwr_core::keys::EcKey;
use vwr_core::time::SystemClock;
use vwr_lambda::{secrets, startup_error};
use vwr_tier2::config::Tier2Config;
use vwr_tier2::identity::Identity;
use vwr_tier2::protect::Protector;
use vwr_tier2_authorizer::{Keys, decide};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let cfg = Tier2Config::from_env(&env).map_err(|e| startup_error("authorizer configuration", e))?;
    let verifier = match vwr_tier2_authorizer::keys(&env, &cfg)
        .map_err(|e| startup_error("authorizer configuration", e))?
    {
        Keys::Jwks(verifier) => verifier,
        Keys::Ring(keys) => {
            let ring = secrets::ring::<EcKey>(keys, TIER2_KEYS, &sdk)
                .await
                .map_err(|e| startup_error("tier-2 keys", e))?;
            cfg.tokens(ring).verifier()
        }
    };
    let tier1 = secrets::tier1_link(&env, &sdk).await.map_err(|e| startup_error("tier-1 link keys", e))?;
    let identity = Identity::new(tier1, Some(verifier.clone()), Arc::new(SystemClock));
    let protector = Arc::new(Protector { verifier, identity });
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<ApiGatewayCustomAuthorizerRequestTypeRequest>| {
        let protector = Arc::clone(&protector);
        async move { Ok::<_, lambda_runtime::Error>(decide(&protector, &ev.payload)) }
    }))
    .await
}
