//! HTTP tests of the tier-1 routers (in-memory store): status codes and bodies of docs/api.md#tier-1,
//! bad input → 4xx with no state change, admin auth.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::body::Body;
use http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;
use vwr_core::admin_auth::AdminAuth;
use vwr_core::time::ManualClock;
use vwr_tier1::Tier1Clients;
use vwr_tier1::http::admin_router;
use vwr_tier1::memory::MemoryStore;

use common::{App, Res, T0, app, call};

async fn activate(app: &App, event: &str, body: &str) -> Res {
    call(app, "POST", &format!("/api/admin/vwr/activate/{event}"), Some(body), true).await
}

async fn assign(app: &App, event: &str) -> Res {
    call(app, "POST", &format!("/vwr/assign/{event}"), None, false).await
}

/// `check` as the page calls it: with the ticket's request secret.
async fn check(app: &App, event: &str, rid: &str) -> Res {
    let secret = app.svc.request_secret(rid).unwrap_or_default();
    common::call_with(app, "GET", &format!("/vwr/check/{event}/{rid}"), &[("x-vwr-request-secret", &secret)])
        .await
}

async fn status(app: &App, event: &str) -> Value {
    let r = call(app, "GET", &format!("/api/admin/vwr/status/{event}"), None, true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    r.body
}

fn assert_error(r: &Res, status: StatusCode, code: &str) {
    assert_eq!(r.status, status, "body {:?}", r.body);
    assert_eq!(r.body["error"], code, "body {:?}", r.body);
    assert!(r.body["message"].as_str().is_some_and(|m| !m.is_empty()), "message missing: {:?}", r.body);
}

#[tokio::test]
async fn full_walk_assign_wait_admit_with_cookie_and_same_jti() {
    let app = app();
    let r = activate(&app, "e1", r#"{"batchSize":0}"#).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.body["config"],
        json!({"batchSize":0,"intervalSeconds":10,"shards":1,"tokenTtlSeconds":600,"mode":"fixed",
               "targetArrivalsPerMinute":0,"maxBatchSize":5000,"reentryGraceSeconds":300,"maxSessionSeconds":1800,
               "powDifficulty":0,"enqueueTokenRequired":false})
    );

    let a1 = assign(&app, "e1").await;
    assert_eq!(a1.status, StatusCode::OK);
    assert_eq!(a1.headers.get(header::CACHE_CONTROL).unwrap(), "no-store");
    let keys: Vec<&str> = a1.body.as_object().unwrap().keys().map(String::as_str).collect();
    for k in
        ["requestId", "position", "queueLength", "servingCounter", "estimatedWaitSeconds", "nextPollSeconds"]
    {
        assert!(keys.contains(&k), "{k} missing in {:?}", a1.body);
    }
    assert_eq!(a1.body["position"], 1);
    let a2 = assign(&app, "e1").await;
    assert_eq!(a2.body["position"], 2);
    assert_eq!(a2.body["queueLength"], 2);
    let rid2 = a2.body["requestId"].as_str().unwrap().to_owned();

    let w = check(&app, "e1", &rid2).await;
    assert_eq!(w.status, StatusCode::OK);
    assert_eq!(
        w.body,
        json!({"admitted":false,"state":"open","position":2,"servingCounter":0,"peopleAhead":1,"estimatedWaitSeconds":5,"nextPollSeconds":1})
    );

    let adv = call(&app, "POST", "/api/admin/vwr/advance/e1", Some(r#"{"by":1}"#), true).await;
    assert_eq!(adv.body["servingCounter"], 1);
    let w = check(&app, "e1", &rid2).await;
    assert_eq!(w.body["peopleAhead"], 0);
    assert_eq!(w.body["admitted"], false);

    // Advance far past: capped at the highest issued position (2).
    let adv = call(&app, "POST", "/api/admin/vwr/advance/e1", Some(r#"{"by":1000}"#), true).await;
    assert_eq!(adv.body["servingCounter"], 2);

    let ok = check(&app, "e1", &rid2).await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.body["admitted"], true);
    let token = ok.body["token"].as_str().unwrap().to_owned();
    assert_eq!(ok.body["expiresAt"], T0 + 600);
    let cookie = ok.headers.get(header::SET_COOKIE).unwrap().to_str().unwrap();
    assert!(cookie.starts_with(&format!("vwr_t1_e1={token};")), "{cookie}");
    for attr in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=86400"] {
        assert!(cookie.contains(attr), "{attr} missing in {cookie}");
    }
    let claims = app.svc.tokens().verify(&token, &common::ev("e1"), T0).unwrap();
    assert_eq!(claims.pos, 2);
    assert_eq!(claims.sub, rid2);
    assert_eq!(claims.tier, 1);

    // A later check with the same ticket: same jti, same expiry (no fresh identity).
    app.clock.advance(30);
    let again = check(&app, "e1", &rid2).await;
    let claims2 =
        app.svc.tokens().verify(again.body["token"].as_str().unwrap(), &common::ev("e1"), T0 + 30).unwrap();
    assert_eq!(claims2.jti, claims.jti);
    assert_eq!(claims2.exp, claims.exp);
    assert_eq!(again.body["token"], ok.body["token"]);

    let st = status(&app, "e1").await;
    assert_eq!(
        (
            st["issued"].as_u64(),
            st["servingCounter"].as_u64(),
            st["waiting"].as_u64(),
            st["admitted"].as_u64()
        ),
        (Some(2), Some(2), Some(0), Some(1))
    );

    // Past the token's life and the re-entry grace period the admission is over: 410, the
    // page joins again (within the grace period it would be re-admitted: tests/outflow.rs).
    app.clock.advance(600 + 300);
    assert_error(&check(&app, "e1", &rid2).await, StatusCode::GONE, "admission_expired");
}

#[tokio::test]
async fn unknown_and_inactive_events() {
    let app = app();
    assert_error(&assign(&app, "nope").await, StatusCode::NOT_FOUND, "event_not_found");
    activate(&app, "e1", "").await;
    let a = assign(&app, "e1").await;
    let rid = a.body["requestId"].as_str().unwrap().to_owned();
    let r = call(&app, "POST", "/api/admin/vwr/deactivate/e1", None, true).await;
    assert_eq!(r.body["active"], false);
    assert_error(&assign(&app, "e1").await, StatusCode::CONFLICT, "event_not_active");
    assert_error(&check(&app, "e1", &rid).await, StatusCode::CONFLICT, "event_not_active");
    assert_error(
        &call(&app, "POST", "/api/admin/vwr/deactivate/nope", None, true).await,
        StatusCode::NOT_FOUND,
        "event_not_found",
    );
    assert_error(
        &call(&app, "GET", "/api/admin/vwr/status/nope", None, true).await,
        StatusCode::NOT_FOUND,
        "event_not_found",
    );
}

#[tokio::test]
async fn bad_event_ids_are_400_and_change_nothing() {
    let app = app();
    activate(&app, "e1", "").await;
    let long = "x".repeat(65);
    for bad in ["a.b", "a%20b", "%E2%82%AC", long.as_str(), "a%2Fb", "%ZZ"] {
        let r = assign(&app, bad).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {:?}", r.body);
        let r = check(&app, bad, "v1.t1.YQ.YQ").await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {:?}", r.body);
        let r = activate(&app, bad, "").await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {:?}", r.body);
    }
    let ids = call(&app, "GET", "/api/admin/vwr/events", None, true).await;
    assert_eq!(ids.body, json!({"events":["e1"], "gated":["e1"], "revoked":{}}));
    assert_eq!(status(&app, "e1").await["issued"], 0);
}

/// An event id in a path is spelled literally: every percent-encoding of a valid id (`%65%31`
/// for `e1`) would be its own CDN cache entry of the status document, each one reaching the
/// origin. Every route refuses them, before any store access.
#[tokio::test]
async fn percent_encoded_event_ids_are_refused_on_every_route() {
    let app = app();
    activate(&app, "e1", "").await;
    for spelled in ["%65%31", "e%31", "%651"] {
        for (method, path, admin) in [
            ("GET", format!("/vwr/status/{spelled}"), false),
            ("POST", format!("/vwr/assign/{spelled}"), false),
            ("GET", format!("/vwr/check/{spelled}/v1.t1.YQ.YQ"), false),
            ("POST", format!("/vwr/release/{spelled}"), false),
            ("GET", format!("/api/admin/vwr/status/{spelled}"), true),
            ("POST", format!("/api/admin/vwr/activate/{spelled}"), true),
            ("POST", format!("/api/admin/vwr/deactivate/{spelled}"), true),
            ("POST", format!("/api/admin/vwr/advance/{spelled}"), true),
            ("POST", format!("/api/admin/vwr/pause/{spelled}"), true),
            ("GET", format!("/api/admin/vwr/audit/{spelled}"), true),
        ] {
            let r = call(&app, method, &path, None, admin).await;
            assert_error(&r, StatusCode::BAD_REQUEST, "invalid_event_id");
        }
    }
    // The literal spelling is served, and nothing above changed the event.
    assert_eq!(call(&app, "GET", "/vwr/status/e1", None, false).await.status, StatusCode::OK);
    // Nested under a prefix (as `vwr dev` serves it), the same.
    let nested = axum::Router::new().nest("/vwr-api", vwr_tier1::http::public_router(Arc::clone(&app.svc)));
    for (uri, want) in
        [("/vwr-api/vwr/status/%65%31", StatusCode::BAD_REQUEST), ("/vwr-api/vwr/status/e1", StatusCode::OK)]
    {
        let res = nested.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), want, "{uri}");
    }
    let st = status(&app, "e1").await;
    assert_eq!(
        (st["issued"].as_u64(), st["state"].as_str(), st["rev"].as_u64()),
        (Some(0), Some("open"), Some(1))
    );
}

#[tokio::test]
async fn tampered_foreign_and_malformed_tickets_are_4xx_without_state_change() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    activate(&app, "e2", r#"{"batchSize":0}"#).await;
    let rid = assign(&app, "e1").await.body["requestId"].as_str().unwrap().to_owned();
    let foreign = assign(&app, "e2").await.body["requestId"].as_str().unwrap().to_owned();
    call(&app, "POST", "/api/admin/vwr/advance/e1", Some(r#"{"by":5}"#), true).await;
    call(&app, "POST", "/api/admin/vwr/advance/e2", Some(r#"{"by":5}"#), true).await;
    let before = (status(&app, "e1").await, status(&app, "e2").await);

    assert_error(&check(&app, "e1", &foreign).await, StatusCode::FORBIDDEN, "wrong_event");
    // Flip a character inside the MAC (not the last one, whose low bits base64 ignores).
    let mut bytes = rid.clone().into_bytes();
    let i = bytes.len() - 5;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let mac_flipped = String::from_utf8(bytes).unwrap();
    assert_error(&check(&app, "e1", &mac_flipped).await, StatusCode::FORBIDDEN, "invalid_request_id");
    for junk in ["x", "v1.t1.a.b", "v1..", &"v".repeat(300)] {
        assert_error(&check(&app, "e1", junk).await, StatusCode::BAD_REQUEST, "invalid_request_id");
    }
    // A ticket signed with other keys.
    let other = common::service(Arc::new(MemoryStore::new()), Arc::clone(&app.clock));
    other.activate(&common::ev("e1"), Default::default(), "test").await.unwrap();
    let alien = other
        .assign(&common::ev("e1"), &vwr_tier1::service::JoinProof::default())
        .await
        .unwrap()
        .request_id()
        .to_owned();
    assert_error(&check(&app, "e1", &alien).await, StatusCode::FORBIDDEN, "invalid_request_id");

    assert_eq!((status(&app, "e1").await, status(&app, "e2").await), before, "refused checks changed state");
    // The genuine ticket still works afterwards.
    assert_eq!(check(&app, "e1", &rid).await.body["admitted"], true);
}

#[tokio::test]
async fn expired_ticket_is_410() {
    let app = app();
    activate(&app, "e1", "").await;
    let rid = assign(&app, "e1").await.body["requestId"].as_str().unwrap().to_owned();
    app.clock.advance(86_400);
    assert_error(&check(&app, "e1", &rid).await, StatusCode::GONE, "request_id_expired");
}

#[tokio::test]
async fn bad_bodies_are_400_and_change_nothing() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":7}"#).await;
    let cases = [
        ("/api/admin/vwr/activate/e1", "{", "invalid_body"),
        ("/api/admin/vwr/activate/e1", "[]", "invalid_body"),
        ("/api/admin/vwr/activate/e1", r#"{"batchSize":-1}"#, "invalid_body"),
        ("/api/admin/vwr/activate/e1", r#"{"batchSize":"10"}"#, "invalid_body"),
        ("/api/admin/vwr/activate/e1", r#"{"bogus":1}"#, "invalid_body"),
        ("/api/admin/vwr/activate/e1", r#"{"shards":0}"#, "invalid_config"),
        ("/api/admin/vwr/activate/e1", r#"{"shards":65}"#, "invalid_config"),
        ("/api/admin/vwr/activate/e1", r#"{"intervalSeconds":0}"#, "invalid_config"),
        ("/api/admin/vwr/activate/e1", r#"{"tokenTtlSeconds":1}"#, "invalid_config"),
        ("/api/admin/vwr/activate/e1", r#"{"batchSize":1000001}"#, "invalid_config"),
        ("/api/admin/vwr/advance/e1", "", "invalid_body"),
        ("/api/admin/vwr/advance/e1", r#"{"by":0}"#, "invalid_body"),
        ("/api/admin/vwr/advance/e1", r#"{"by":-3}"#, "invalid_body"),
        ("/api/admin/vwr/advance/e1", r#"{"by":99999999999}"#, "invalid_body"),
        ("/api/admin/vwr/advance/e1", r#"{"by":1.5}"#, "invalid_body"),
    ];
    let before = status(&app, "e1").await;
    for (path, body, code) in cases {
        let r = call(&app, "POST", path, Some(body), true).await;
        assert_error(&r, StatusCode::BAD_REQUEST, code);
    }
    let r = call(&app, "POST", "/vwr/assign/e1", Some("not json"), false).await;
    assert_error(&r, StatusCode::BAD_REQUEST, "invalid_body");
    let huge = format!("{{\"a\":\"{}\"}}", "x".repeat(10_000));
    let r = call(&app, "POST", "/api/admin/vwr/activate/e1", Some(&huge), true).await;
    assert!(r.status.is_client_error(), "{:?}", r.status);
    assert_eq!(status(&app, "e1").await, before);
}

#[tokio::test]
async fn shards_are_fixed_after_creation_and_reactivation_keeps_counters() {
    let app = app();
    activate(&app, "e1", r#"{"shards":4,"batchSize":0}"#).await;
    let mut positions: Vec<u64> = Vec::new();
    for _ in 0..8 {
        positions.push(assign(&app, "e1").await.body["position"].as_u64().unwrap());
    }
    positions.sort_unstable();
    assert_eq!(positions, (1..=8).collect::<Vec<_>>());
    call(&app, "POST", "/api/admin/vwr/advance/e1", Some(r#"{"by":3}"#), true).await;
    assert_error(&activate(&app, "e1", r#"{"shards":2}"#).await, StatusCode::CONFLICT, "shards_immutable");
    let r = activate(&app, "e1", r#"{"shards":4,"batchSize":9,"tokenTtlSeconds":120}"#).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!((r.body["issued"].as_u64(), r.body["servingCounter"].as_u64()), (Some(8), Some(3)));
    assert_eq!(r.body["config"]["batchSize"], 9);
    let r = activate(&app, "e1", "").await;
    assert_eq!(r.body["config"]["batchSize"], 9, "an empty activate keeps the config");
    let next = assign(&app, "e1").await.body["position"].as_u64().unwrap();
    assert!((9..=12).contains(&next), "positions continue after re-activation, got {next}");
}

#[tokio::test]
async fn admin_routes_need_the_key() {
    let app = app();
    for (method, path) in [
        ("POST", "/api/admin/vwr/activate/e1"),
        ("POST", "/api/admin/vwr/deactivate/e1"),
        ("GET", "/api/admin/vwr/status/e1"),
        ("POST", "/api/admin/vwr/advance/e1"),
        ("GET", "/api/admin/vwr/events"),
    ] {
        let r = call(&app, method, path, Some("{}"), false).await;
        assert_error(&r, StatusCode::UNAUTHORIZED, "unauthorized");
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, "Bearer wrong-key-wrong-key-wrong")
            .body(Body::empty())
            .unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
    assert!(call(&app, "GET", "/api/admin/vwr/events", None, false).await.body["events"].is_null());
    // IAM mode refuses requests that arrive without an IAM identity.
    let iam = admin_router(Arc::clone(&app.svc), AdminAuth::iam(Default::default()));
    let res = iam.oneshot(Request::get("/api/admin/vwr/events").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(AdminAuth::bearer("short").is_err());
}

#[tokio::test]
async fn advancer_steps_in_http_view() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":2,"intervalSeconds":10}"#).await;
    for _ in 0..5 {
        assign(&app, "e1").await;
    }
    app.clock.set(T0 + 10);
    let out = app.svc.advance_due().await.unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(status(&app, "e1").await["servingCounter"], 2);
    // Same step again: nothing.
    app.svc.advance_due().await.unwrap();
    assert_eq!(status(&app, "e1").await["servingCounter"], 2);
    for t in [20, 30, 40] {
        app.clock.set(T0 + t);
        app.svc.advance_due().await.unwrap();
    }
    let st = status(&app, "e1").await;
    assert_eq!(st["servingCounter"], 5, "capped at the highest issued position");
    assert_eq!(st["waiting"], 0);
}

#[tokio::test]
async fn unknown_routes_are_404_json() {
    let app = app();
    assert_error(&call(&app, "GET", "/nope", None, false).await, StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn activation_publishes_active_events_to_the_edge_config() {
    let clock = Arc::new(ManualClock::new(T0));
    let edge = Arc::new(vwr_tier1::edge_sync::MemoryEdgeConfig::new(r#"{"rules":[],"failMode":"closed"}"#));
    let clients =
        Tier1Clients { edge: Some(edge.clone()), ..Tier1Clients::new(Arc::new(MemoryStore::new()), clock) };
    let svc = common::service_with(clients, |_| {});
    let events = |v: String| serde_json::from_str::<Value>(&v).unwrap()["events"].clone();
    svc.activate(&common::ev("b"), Default::default(), "test").await.unwrap();
    svc.activate(&common::ev("a"), Default::default(), "test").await.unwrap();
    assert_eq!(events(edge.value()), json!(["a", "b"]));
    svc.deactivate(&common::ev("b"), "test").await.unwrap();
    assert_eq!(events(edge.value()), json!(["a"]));
    svc.reconcile_edge().await.unwrap();
    assert_eq!(events(edge.value()), json!(["a"]));
    // An unusable edge config fails the admin call with 503 (the change itself is stored).
    let broken = Arc::new(vwr_tier1::edge_sync::MemoryEdgeConfig::new("oops"));
    let clients = Tier1Clients {
        edge: Some(broken),
        ..Tier1Clients::new(Arc::new(MemoryStore::new()), Arc::new(ManualClock::new(T0)))
    };
    let svc = common::service_with(clients, |_| {});
    let err = vwr_core::ApiError::from(
        svc.activate(&common::ev("c"), Default::default(), "test").await.unwrap_err(),
    );
    assert_eq!((err.status, err.code.as_str()), (StatusCode::SERVICE_UNAVAILABLE, "edge_sync_failed"));
    assert!(svc.status(&common::ev("c")).await.unwrap().active);
}

/// Proof of possession (docs/tokens.md#request-secrets): a `requestId` seen in a log or a
/// pasted URL, without the secret `assign` answered beside it, gets nothing — not even whether
/// it is admitted — and changes nothing.
#[tokio::test]
async fn a_request_id_without_its_secret_is_worth_nothing() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    let a = assign(&app, "e1").await;
    let rid = a.body["requestId"].as_str().unwrap().to_owned();
    let secret = a.body["requestSecret"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 22);
    assert!(!rid.contains(&secret), "the ticket does not carry its secret");
    call(&app, "POST", "/api/admin/vwr/advance/e1", Some(r#"{"by":1}"#), true).await;
    let other = assign(&app, "e1").await.body["requestSecret"].as_str().unwrap().to_owned();
    for headers in
        [vec![], vec![("x-vwr-request-secret", "")], vec![("x-vwr-request-secret", other.as_str())]]
    {
        let r = common::call_with(&app, "GET", &format!("/vwr/check/e1/{rid}"), &headers).await;
        assert_error(&r, StatusCode::FORBIDDEN, "proof_required");
        assert!(r.headers.get(header::SET_COOKIE).is_none());
    }
    assert_eq!(status(&app, "e1").await["admitted"], 0, "no admission was recorded");
    let ok =
        common::call_with(&app, "GET", &format!("/vwr/check/e1/{rid}"), &[("x-vwr-request-secret", &secret)])
            .await;
    assert_eq!(ok.body["admitted"], true);
}

/// Passes over HTTP (docs/passes.md): 201 with the pass shown once; bad bodies 400 and bad
/// ids 404, each changing nothing; the admin key is required.
#[tokio::test]
async fn pass_routes_answer_as_documented() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    let r =
        call(&app, "POST", "/api/admin/vwr/pass/e1", Some(r#"{"label":"monitor","ttlSeconds":600}"#), true)
            .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.body);
    assert_eq!(r.headers.get(header::CACHE_CONTROL).unwrap(), "no-store");
    let keys: Vec<&str> = r.body.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["eventId", "expiresAt", "id", "label", "pass", "passId"]);
    let pass_id = r.body["passId"].as_str().unwrap().to_owned();
    let audit_len = || async {
        call(&app, "GET", "/api/admin/vwr/audit/e1", None, true).await.body["entries"]
            .as_array()
            .unwrap()
            .len()
    };
    let before = audit_len().await;
    for body in [
        "",
        "{}",
        r#"{"label":"x","ttlSeconds":43201}"#,
        r#"{"label":"x","extra":1}"#,
        r#"{"label":"a\nb"}"#,
        "[1]",
    ] {
        let r = call(&app, "POST", "/api/admin/vwr/pass/e1", Some(body), true).await;
        assert_error(&r, StatusCode::BAD_REQUEST, "invalid_body");
    }
    assert_error(
        &call(&app, "DELETE", "/api/admin/vwr/pass/e1/nope", None, true).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &call(&app, "DELETE", "/api/admin/vwr/pass/e1/AAAAAAAAAAAA", None, true).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &call(&app, "POST", "/api/admin/vwr/pass/nope", Some(r#"{"label":"x"}"#), true).await,
        StatusCode::NOT_FOUND,
        "event_not_found",
    );
    assert_eq!(audit_len().await, before, "refused: nothing written");
    assert_eq!(
        call(&app, "POST", "/api/admin/vwr/pass/e1", Some(r#"{"label":"x"}"#), false).await.status,
        StatusCode::UNAUTHORIZED
    );
    let r = call(&app, "DELETE", &format!("/api/admin/vwr/pass/e1/{pass_id}"), None, true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert!(r.body["revokedAt"].as_u64().is_some());
    let list = call(&app, "GET", "/api/admin/vwr/pass/e1", None, true).await;
    assert_eq!(list.body["passes"][0]["passId"], pass_id.as_str());
    assert!(list.body["passes"][0].get("pass").is_none());
}

/// The page document over HTTP (docs/brand.md): public, cached a minute; a low-contrast theme
/// is refused with 400 `invalid_page` and changes nothing.
#[tokio::test]
async fn page_routes_answer_as_documented() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    let low = r##"{"colors":{"accent":"#0b5fff","background":"#ffffff","text":"#aaaaaa"}}"##;
    let r = call(&app, "PUT", "/api/admin/vwr/page/e1", Some(low), true).await;
    assert_error(&r, StatusCode::BAD_REQUEST, "invalid_page");
    assert!(r.body["message"].as_str().unwrap().contains("WCAG AA"), "{:?}", r.body);
    assert_error(
        &call(&app, "PUT", "/api/admin/vwr/page/e1", Some(r#"{"oops":1}"#), true).await,
        StatusCode::BAD_REQUEST,
        "invalid_body",
    );
    let ok = r##"{"title":{"en":"Summer tour"},"colors":{"accent":"#0b5fff","background":"#ffffff","text":"#111111"}}"##;
    let r = call(&app, "PUT", "/api/admin/vwr/page/e1", Some(ok), true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let doc = call(&app, "GET", "/vwr/page/e1", None, false).await;
    assert_eq!(doc.status, StatusCode::OK);
    assert_eq!(doc.headers.get(header::CACHE_CONTROL).unwrap(), "public, max-age=60");
    assert_eq!(doc.body["title"]["en"], "Summer tour");
    let missing = call(&app, "GET", "/vwr/page/nope", None, false).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.headers.get(header::CACHE_CONTROL).unwrap(), "public, max-age=60");
    assert_eq!(
        call(&app, "PUT", "/api/admin/vwr/page/e1", Some(ok), false).await.status,
        StatusCode::UNAUTHORIZED
    );
}

/// An empty body never wipes a page (the message route refuses one for the same reason):
/// 400 and the page stays; `null` is how to go back to the default page.
#[tokio::test]
async fn an_empty_page_body_is_refused_and_changes_nothing() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    let ok = r#"{"title":{"en":"Summer tour"}}"#;
    assert_eq!(call(&app, "PUT", "/api/admin/vwr/page/e1", Some(ok), true).await.status, StatusCode::OK);
    for empty in ["", "  \n"] {
        let r = call(&app, "PUT", "/api/admin/vwr/page/e1", Some(empty), true).await;
        assert_error(&r, StatusCode::BAD_REQUEST, "invalid_body");
        assert!(r.body["message"].as_str().unwrap().contains("null"), "{:?}", r.body);
        assert_eq!(call(&app, "GET", "/vwr/page/e1", None, false).await.body["title"]["en"], "Summer tour");
    }
    let r = call(&app, "PUT", "/api/admin/vwr/page/e1", Some("null"), true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let doc = call(&app, "GET", "/vwr/page/e1", None, false).await;
    assert!(doc.body.get("title").is_none(), "the default page: {:?}", doc.body);
}

/// Page settings and the operator's message at every documented limit (docs/brand.md,
/// docs/lifecycle.md: five languages of 80 / 300 / 500 characters, three 512-character URLs)
/// are taken, even with every character an astral one written as a JSON escape (12 bytes);
/// other routes keep their 4 KiB cap.
#[tokio::test]
async fn page_settings_at_every_limit_fit_the_body_cap() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    let escaped = |n: usize| "\\ud83c\\udfab".repeat(n);
    let langs = ["en", "ko", "ja", "zh-Hans", "zh-Hant"];
    let texts =
        |n: usize| langs.iter().map(|l| format!("\"{l}\":\"{}\"", escaped(n))).collect::<Vec<_>>().join(",");
    let url = |p: &str| format!("https://cdn.example.com/{p}{}", "a".repeat(512 - 24 - p.len()));
    let body = format!(
        r##"{{"title":{{{}}},"message":{{{}}},"logoUrl":"{}","links":{{"help":"{}","terms":"{}"}},"colors":{{"accent":"#0b5fff","background":"#ffffff","text":"#1a1a1a"}},"languages":["en","ko","ja","zh-Hans","zh-Hant"],"defaultLanguage":"ko"}}"##,
        texts(80),
        texts(300),
        url("l"),
        url("h"),
        url("t"),
    );
    let cap = vwr_tier1::http::MAX_TEXT_BODY_BYTES;
    assert!(body.len() > 16 * 1024 && body.len() <= cap, "{}", body.len());
    let r = call(&app, "PUT", "/api/admin/vwr/page/e1", Some(&body), true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let doc = call(&app, "GET", "/vwr/page/e1", None, false).await;
    assert_eq!(doc.body["message"]["zh-Hant"].as_str().unwrap().chars().count(), 300);
    assert_eq!(doc.body["logoUrl"].as_str().unwrap().len(), 512);
    // One byte more than the cap: 413, as on every route.
    let over = format!("{body}{}", " ".repeat(cap + 1 - body.len()));
    assert_error(
        &call(&app, "PUT", "/api/admin/vwr/page/e1", Some(&over), true).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
    );
    // The operator's message at its limits, in the five languages, on each route that takes it.
    let message = format!(r#"{{"message":{{{}}}}}"#, texts(500));
    assert!(message.len() > 16 * 1024 && message.len() <= cap, "{}", message.len());
    let r = call(&app, "PUT", "/api/admin/vwr/message/e1", Some(&message), true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let r = call(&app, "POST", "/api/admin/vwr/pause/e1", Some(&message), true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    // Other routes keep their 4 KiB.
    let big = format!(r#"{{"by":1,"x":"{}"}}"#, "a".repeat(5000));
    assert_error(
        &call(&app, "POST", "/api/admin/vwr/advance/e1", Some(&big), true).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
    );
}

/// The report after the sale (docs/operate.md#the-report-after-the-sale): admin only, 404 for
/// an unknown event, and a refused `check` counted by its code.
#[tokio::test]
async fn report_route_answers_as_documented() {
    let app = app();
    activate(&app, "e1", r#"{"batchSize":0}"#).await;
    let joined = call(&app, "POST", "/vwr/assign/e1", None, false).await;
    assert_eq!(joined.status, StatusCode::OK, "{:?}", joined.body);
    let rid = joined.body["requestId"].as_str().unwrap().to_owned();
    // No request secret: refused with `proof_required`, and counted.
    let refused = call(&app, "GET", &format!("/vwr/check/e1/{rid}"), None, false).await;
    assert_error(&refused, StatusCode::FORBIDDEN, "proof_required");
    let r = call(&app, "GET", "/api/admin/vwr/report/e1", None, true).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert_eq!(r.headers.get(header::CACHE_CONTROL).unwrap(), "no-store");
    assert_eq!(r.body["totals"]["joins"], 1, "{:?}", r.body);
    assert_eq!(r.body["totals"]["refusals"]["proof_required"], 1, "{:?}", r.body);
    assert_eq!(r.body["minutes"].as_array().unwrap().len(), 1);
    assert_error(
        &call(&app, "GET", "/api/admin/vwr/report/nope", None, true).await,
        StatusCode::NOT_FOUND,
        "event_not_found",
    );
    assert_error(
        &call(&app, "GET", "/api/admin/vwr/report/bad%20id", None, true).await,
        StatusCode::BAD_REQUEST,
        "invalid_event_id",
    );
    assert_eq!(
        call(&app, "GET", "/api/admin/vwr/report/e1", None, false).await.status,
        StatusCode::UNAUTHORIZED
    );
}
