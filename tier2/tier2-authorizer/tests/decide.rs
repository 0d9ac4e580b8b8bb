//! The authorizer's decision on API Gateway's typed REQUEST event: Allow with the caller's
//! context for a genuine entry token of the caller, Deny with the redirect context otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use aws_lambda_events::apigw::ApiGatewayCustomAuthorizerRequestTypeRequest;
use vwr_core::EcKeyring;
use vwr_core::config::Env;
use vwr_core::time::{Clock, ManualClock};
use vwr_core::token::{Tier1Claims, Tier1Tokens};
use vwr_core::{EventId, HmacKeyring};
use vwr_tier2::Tier2Clients;
use vwr_tier2::config::Tier2Config;
use vwr_tier2::entry_token::EntryTokens;
use vwr_tier2::identity::{Caller, Identity, Source};
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::protect::Protector;

#[tokio::test]
async fn rest_authorizer_allows_and_denies_with_context() {
    let clock = Arc::new(ManualClock::new(vwr_core::time::now_secs()));
    let store = Arc::new(MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>));
    let tokens = EntryTokens::new(EcKeyring::generate("t2").unwrap(), "vwr", "vwr-api");
    let mut cfg = Tier2Config::from_env(&Env::default()).unwrap();
    cfg.registration_cache_ttl = Duration::ZERO;
    let clients = Tier2Clients { clock: Arc::clone(&clock) as Arc<dyn Clock>, ..Tier2Clients::new(store) };
    let svc = vwr_tier2::assemble(&cfg, tokens, clients);
    let e1 = EventId::parse("e1").unwrap();
    svc.set_threshold(&e1, 5, None).await.unwrap();
    let tier1 = Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge");
    let now = clock.now_secs();
    let t1 = tier1
        .sign(&Tier1Claims {
            iss: "vwr".into(),
            aud: "vwr-edge".into(),
            sub: "ticket-7".into(),
            eid: "e1".into(),
            pos: 7,
            tier: 1,
            iat: now,
            nbf: now,
            exp: now + 600,
            jti: "j-7".into(),
            t2: None,
        })
        .unwrap();
    let user = vwr_core::identity::tier1_user_id("ticket-7");
    let caller =
        Caller { user: user.clone(), tier1_position: Some(7), source: Source::Tier1Token, proof: None };
    let entry = svc.check(&e1, &caller).await.unwrap().entry_token.unwrap();
    let link = Some((tier1.into(), "vwr_t1_".to_owned()));
    let identity = Identity::new(link, Some(svc.tokens().verifier()), Arc::clone(&clock) as Arc<dyn Clock>);
    let p = Protector { verifier: svc.tokens().verifier(), identity };
    let arn = "arn:aws:execute-api:eu-west-1:123:api/prod/GET/api/seats/e1";
    let ev = |value: serde_json::Value| -> ApiGatewayCustomAuthorizerRequestTypeRequest {
        serde_json::from_value(value).unwrap()
    };
    let with = |entry: &str| {
        ev(
            serde_json::json!({"type": "REQUEST", "requestContext": {}, "methodArn": arn, "path": "/api/seats/e1/A1",
            "headers": {"x-queue-entry-token": entry, "Cookie": format!("vwr_t1_e1={t1}")}}),
        )
    };
    let allow = serde_json::to_value(vwr_tier2_authorizer::decide(&p, &with(&entry))).unwrap();
    assert_eq!(allow["policyDocument"]["Statement"][0]["Effect"], "Allow", "{allow}");
    assert_eq!(allow["policyDocument"]["Statement"][0]["Resource"][0], arn);
    assert_eq!(allow["policyDocument"]["Version"], "2012-10-17");
    // The user is a digest of the ticket, never the ticket (a bearer credential) itself.
    assert_eq!(allow["principalId"], user.as_str());
    assert!(!allow.to_string().contains("ticket-7"), "{allow}");
    assert_eq!(allow["context"]["eventId"], "e1");
    let deny = serde_json::to_value(vwr_tier2_authorizer::decide(&p, &with("not-a-token"))).unwrap();
    assert_eq!(deny["policyDocument"]["Statement"][0]["Effect"], "Deny");
    assert_eq!(deny["context"]["error"], "queue_entry_token_required");
    assert_eq!(deny["context"]["redirectTo"], "/vwr/queue/e1");
    // No identity (no tier-1 cookie): denied even with a genuine entry token.
    let anon = ev(
        serde_json::json!({"requestContext": {}, "methodArn": arn, "path": "/api/seats/e1", "headers": {"x-queue-entry-token": entry}}),
    );
    let r = serde_json::to_value(vwr_tier2_authorizer::decide(&p, &anon)).unwrap();
    assert_eq!(r["policyDocument"]["Statement"][0]["Effect"], "Deny");
}
