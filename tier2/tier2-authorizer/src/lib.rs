//! The API Gateway REST API Lambda authorizer (type REQUEST) in front of protected APIs: the
//! typed event in, the entry-token check of `vwr_tier2::protect`, an IAM policy out.

use aws_lambda_events::apigw::{
    ApiGatewayCustomAuthorizerPolicy, ApiGatewayCustomAuthorizerRequestTypeRequest,
    ApiGatewayCustomAuthorizerResponse,
};
use aws_lambda_events::iam::{IamPolicyEffect, IamPolicyStatement};
use vwr_core::ApiError;
use vwr_core::ErrorCode;
use vwr_core::config::{ConfigError, Env, KeySource};
use vwr_tier2::config::Tier2Config;
use vwr_tier2::entry_token::EntryVerifier;
use vwr_tier2::protect::Protector;

/// Where the authorizer's public keys come from.
#[derive(Debug)]
pub enum Keys<'a> {
    /// `VWR_TIER2_JWKS`, parsed (the usual way: no secret).
    Jwks(EntryVerifier),
    /// The tier-2 key ring (its public half), from the environment or Secrets Manager.
    Ring(&'a KeySource),
}

/// The authorizer's keys: `VWR_TIER2_JWKS` first, else the tier-2 keys; an error naming the
/// variable when the JWKS does not parse or neither is set.
pub fn keys<'a>(env: &Env, cfg: &'a Tier2Config) -> Result<Keys<'a>, ConfigError> {
    match (env.get("VWR_TIER2_JWKS"), &cfg.keys) {
        (Some(jwks), _) => EntryVerifier::from_jwks(jwks, &cfg.issuer, &cfg.audience)
            .map(Keys::Jwks)
            .map_err(|e| ConfigError::Invalid {
                name: "VWR_TIER2_JWKS".into(),
                value: "…".into(),
                reason: e.to_string(),
            }),
        (None, Some(keys)) => Ok(Keys::Ring(keys)),
        (None, None) => Err(ConfigError::Missing {
            name: "VWR_TIER2_JWKS".into(),
            hint: "set VWR_TIER2_JWKS (the public JWKS) or VWR_TIER2_KEYS".into(),
        }),
    }
}

fn policy(effect: IamPolicyEffect, method_arn: &str) -> ApiGatewayCustomAuthorizerPolicy {
    let mut statement = IamPolicyStatement::default();
    statement.action = vec!["execute-api:Invoke".to_owned()];
    statement.effect = effect;
    statement.resource = vec![method_arn.to_owned()];
    let mut p = ApiGatewayCustomAuthorizerPolicy::default();
    p.version = Some("2012-10-17".to_owned());
    p.statement = vec![statement];
    p
}

/// The decision for one request: Allow with the context `{userId, eventId, jti}`, or Deny with
/// `{error, message, redirectTo}` — map those into the `ACCESS_DENIED` gateway response
/// template so callers get `{"error":"queue_entry_token_required","redirectTo":"/vwr/queue/{eventId}"}`.
pub fn decide(
    p: &Protector,
    event: &ApiGatewayCustomAuthorizerRequestTypeRequest,
) -> ApiGatewayCustomAuthorizerResponse {
    let method_arn = event.method_arn.as_deref().unwrap_or("*");
    let path = event.path.as_deref().unwrap_or("/");
    let mut req = http::Request::builder()
        .uri(path.parse::<http::Uri>().unwrap_or_else(|_| http::Uri::from_static("/")));
    for (name, value) in &event.headers {
        req = req.header(name, value);
    }
    let decision = match req.body(()) {
        Ok(r) => p.authorize(&r.into_parts().0),
        Err(_) => Err(ApiError::forbidden(ErrorCode::QueueEntryTokenRequired, "unreadable request")),
    };
    let mut out = ApiGatewayCustomAuthorizerResponse::default();
    match decision {
        Ok(c) => {
            out.principal_id = Some(c.uid.clone());
            out.policy_document = policy(IamPolicyEffect::Allow, method_arn);
            out.context = serde_json::json!({"userId": c.uid, "eventId": c.sub, "jti": c.jti});
        }
        Err(e) => {
            let body = e.body();
            out.principal_id = Some("anonymous".to_owned());
            out.policy_document = policy(IamPolicyEffect::Deny, method_arn);
            out.context = serde_json::json!({
                "error": e.code.as_str(),
                "message": body["message"],
                "redirectTo": body["redirectTo"],
            });
        }
    }
    out
}
