//! Lambda: API Gateway (REST) request authorizer for protected APIs. Reads
//! `x-queue-entry-token` and checks signature (public keys), tier, the event of the path, the
//! caller (tier-1 token or tier-2 identity cookie) and expiry; answers an IAM policy. JWT only:
//! no store, no SDK but Secrets Manager (for the tier-1 link keys: derived, never the master
//! keys). The composition root.

use std::sync::Arc;

use aws_lambda_events::apigw::ApiGatewayCustomAuthorizerRequestTypeRequest;
use lambda_runtime::{LambdaEvent, service_fn};
use vwr_core::config::{ConfigError, Env, TIER2_KEYS};
use vwr_core::keys::EcKey;
use vwr_core::time::SystemClock;
use vwr_lambda::{secrets, startup_error};
use vwr_tier2::config::Tier2Config;
use vwr_tier2::entry_token::EntryVerifier;
use vwr_tier2::identity::Identity;
use vwr_tier2::protect::Protector;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    vwr_core::logging::init_json();
    let sdk = vwr_lambda::sdk_config().await;
    let env = Env::from_process();
    let cfg = Tier2Config::from_env(&env).map_err(|e| startup_error("authorizer configuration", e))?;
    // Public keys from VWR_TIER2_JWKS (the usual way: no secret), or derived from the keys.
    let verifier = match (env.get("VWR_TIER2_JWKS"), &cfg.keys) {
        (Some(jwks), _) => EntryVerifier::from_jwks(jwks, &cfg.issuer, &cfg.audience).map_err(|e| {
            startup_error(
                "authorizer configuration",
                ConfigError::Invalid {
                    name: "VWR_TIER2_JWKS".into(),
                    value: "…".into(),
                    reason: e.to_string(),
                },
            )
        })?,
        (None, Some(keys)) => {
            let ring = secrets::ring::<EcKey>(keys, TIER2_KEYS, &sdk)
                .await
                .map_err(|e| startup_error("tier-2 keys", e))?;
            cfg.tokens(ring).verifier()
        }
        (None, None) => {
            return Err(startup_error(
                "authorizer configuration",
                ConfigError::Missing {
                    name: "VWR_TIER2_JWKS".into(),
                    hint: "set VWR_TIER2_JWKS (the public JWKS) or VWR_TIER2_KEYS".into(),
                },
            ));
        }
    };
    let tier1 = secrets::tier1_link(&env, &sdk).await.map_err(|e| startup_error("tier-1 link keys", e))?;
    let identity = Identity {
        cookie_prefix: tier1.as_ref().map_or_else(|| "vwr_t1_".to_owned(), |(_, p)| p.clone()),
        tier1: tier1.map(|(t, _)| t),
        tier2: Some(verifier.clone()),
        dev_user_header: false,
        clock: Arc::new(SystemClock),
    };
    let protector = Arc::new(Protector { verifier, identity });
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<ApiGatewayCustomAuthorizerRequestTypeRequest>| {
        let protector = Arc::clone(&protector);
        async move { Ok::<_, lambda_runtime::Error>(vwr_tier2_authorizer::decide(&protector, &ev.payload)) }
    }))
    .await
}
