//! Abuse resistance over HTTP (in memory; docs/abuse.md): proof of work before `assign`, one
//! place per account with the site's enqueue token.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::Router;
use common::{App, KEY, T0};
use http::StatusCode;
use serde_json::{Value, json};
use vwr_core::admin_auth::AdminAuth;
use vwr_core::keys::EcKeyring;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier1::Tier1Clients;
use vwr_tier1::enqueue::EnqueueVerifier;
use vwr_tier1::http::{admin_router, public_router};
use vwr_tier1::memory::MemoryStore;

fn site_token(site: &EcKeyring, account: &str, event: &str, exp: u64) -> String {
    vwr_tier1::enqueue::sign(site, account, &common::ev(event), exp).unwrap()
}

fn app_with_site(site: &EcKeyring) -> App {
    let clock = Arc::new(ManualClock::new(T0));
    let verifier = EnqueueVerifier::from_jwks(&serde_json::to_string(&site.jwks()).unwrap()).unwrap();
    let clients = Tier1Clients::new(Arc::new(MemoryStore::new()), Arc::clone(&clock) as Arc<dyn Clock>);
    let svc = Arc::new(common::service_with(clients, |c| c.enqueue = Some(verifier)));
    let router: Router = public_router(Arc::clone(&svc))
        .merge(admin_router(Arc::clone(&svc), AdminAuth::bearer(KEY).unwrap()))
        .fallback(vwr_core::error::not_found_fallback);
    App { router, svc, clock }
}

async fn assign(app: &App, body: Option<Value>, headers: &[(&str, &str)]) -> common::Res {
    let body = body.map(|b| b.to_string());
    common::send_full(app, "POST", "/vwr/assign/e1", body.as_deref(), headers).await
}

#[tokio::test]
async fn assign_needs_a_fresh_solved_challenge_when_the_event_asks_for_work() {
    let app = common::app();
    let r =
        common::call(&app, "POST", "/api/admin/vwr/activate/e1", Some(r#"{"powDifficulty":10}"#), true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let refused = assign(&app, None, &[]).await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("challenge_required"))
    );
    assert_eq!(refused.body["difficulty"], 10);
    let challenge = refused.body["challenge"].as_str().unwrap().to_owned();
    // A wrong or lazy solution: refused again, nothing assigned.
    let lazy =
        (0..).map(|n: u64| format!("{n:x}")).find(|n| vwr_tier1::pow::work(&challenge, n) < 10).unwrap();
    let r = assign(&app, Some(json!({"pow": {"challenge": challenge, "nonce": lazy}})), &[]).await;
    assert_eq!(r.body["error"], "challenge_required");
    let nonce = vwr_tier1::pow::solve(&challenge, 10);
    let ok = assign(&app, Some(json!({"pow": {"challenge": challenge, "nonce": nonce}})), &[]).await;
    assert_eq!((ok.status, ok.body["position"].as_u64()), (StatusCode::OK, Some(1)), "{:?}", ok.body);
    // The same solution again on this instance: refused.
    let replay = assign(&app, Some(json!({"pow": {"challenge": challenge, "nonce": nonce}})), &[]).await;
    assert_eq!(replay.body["error"], "challenge_required");
    // Two minutes later the challenge is stale.
    app.clock.advance(121);
    let nonce2 = vwr_tier1::pow::solve(&challenge, 10);
    let stale =
        assign(&app, Some(json!({"pow": {"challenge": challenge, "nonce": nonce2 + "0"}})), &[]).await;
    assert_eq!(stale.body["error"], "challenge_required");
    let st = common::call(&app, "GET", "/api/admin/vwr/status/e1", None, true).await;
    assert_eq!(st.body["issued"], 1, "refused joins take no place");
    let bad = assign(&app, Some(json!({"pow": "nope"})), &[]).await;
    assert_eq!(bad.body["error"], "invalid_body");
}

#[tokio::test]
async fn one_account_holds_one_place_whatever_it_tries() {
    let site = EcKeyring::generate("site1").unwrap();
    let app = app_with_site(&site);
    let r = common::call(
        &app,
        "POST",
        "/api/admin/vwr/activate/e1",
        Some(r#"{"enqueueTokenRequired":true,"batchSize":0}"#),
        true,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let none = assign(&app, None, &[]).await;
    assert_eq!(
        (none.status, none.body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("enqueue_token_required"))
    );
    let alice = site_token(&site, "alice", "e1", T0 + 300);
    let first = assign(&app, None, &[("x-vwr-enqueue-token", &alice)]).await;
    assert_eq!(first.body["position"], 1, "{:?}", first.body);
    // Again, with a fresh token for the same account, or through the cookie: the same ticket.
    let alice2 = site_token(&site, "alice", "e1", T0 + 600);
    let cookie = format!("vwr_enqueue_e1={alice2}");
    for headers in [vec![("x-vwr-enqueue-token", alice.as_str())], vec![("cookie", cookie.as_str())]] {
        let again = assign(&app, None, &headers).await;
        assert_eq!(again.body["requestId"], first.body["requestId"]);
        assert_eq!(again.body["requestSecret"], first.body["requestSecret"]);
        assert_eq!(again.body["position"], 1);
    }
    let bob = site_token(&site, "bob", "e1", T0 + 300);
    assert_eq!(assign(&app, None, &[("x-vwr-enqueue-token", &bob)]).await.body["position"], 2);
    // Tokens for another event, expired, or signed by someone else: refused.
    let other_event = site_token(&site, "carol", "e2", T0 + 300);
    let expired = site_token(&site, "carol", "e1", T0 - 1);
    let forged = site_token(&EcKeyring::generate("site1").unwrap(), "carol", "e1", T0 + 300);
    for t in [other_event, expired, forged, "garbage".to_owned()] {
        let r = assign(&app, None, &[("x-vwr-enqueue-token", &t)]).await;
        assert_eq!(r.body["error"], "enqueue_token_required");
    }
    let st = common::call(&app, "GET", "/api/admin/vwr/status/e1", None, true).await;
    assert_eq!(st.body["issued"], 2);
}

#[tokio::test]
async fn enqueue_tokens_cannot_be_required_without_the_sites_keys() {
    let app = common::app();
    let r = common::call(
        &app,
        "POST",
        "/api/admin/vwr/activate/e1",
        Some(r#"{"enqueueTokenRequired":true}"#),
        true,
    )
    .await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_config")));
}
