//! HTTP tests of the tier-2 routers (in-memory store): the docs/api.md#tier-2 contract, identity rules,
//! tier-1 ordering, bad input, the JWKS and the protected-API check.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use vwr_core::admin_auth::AdminAuth;
use vwr_core::identity::UpstreamUser;
use vwr_core::time::{Clock, ManualClock};
use vwr_core::token::{Tier1Claims, Tier1Tokens};
use vwr_core::{EventId, HmacKeyring};
use vwr_tier2::Tier2Clients;
use vwr_tier2::Tier2Service;
use vwr_tier2::entry_token::EntryVerifier;
use vwr_tier2::identity::Identity;
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::model::Tier2Settings;
use vwr_tier2::protect::{Protector, require_entry_token};
use vwr_tier2::worker::Worker;

const KEY: &str = "tier2-admin-key-0123456789";

struct App {
    router: Router,
    svc: Arc<Tier2Service>,
    worker: Worker,
    tier1: Tier1Tokens,
    clock: Arc<ManualClock>,
}

fn app(dev_header: bool) -> App {
    let clock = common::manual_clock();
    let store = Arc::new(MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>));
    let clients = Tier2Clients { clock: Arc::clone(&clock) as Arc<dyn Clock>, ..Tier2Clients::new(store) };
    let svc = Arc::new(common::service_with(clients, Tier2Settings::default()));
    let tier1 = Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge");
    let link = Some((tier1.clone().into(), "vwr_t1_".to_owned()));
    let identity = Identity {
        dev_user_header: dev_header,
        ..Identity::new(link, Some(svc.tokens().verifier()), Arc::clone(&clock) as Arc<dyn Clock>)
    };
    let protector = Arc::new(Protector { verifier: svc.tokens().verifier(), identity: identity.clone() });
    let seats = Router::new()
        .route("/api/seats/{e}", axum::routing::get(|| async { "seats" }))
        .layer(axum::middleware::from_fn_with_state(protector, require_entry_token));
    let router = vwr_tier2::http::public_router(Arc::clone(&svc), identity)
        .merge(vwr_tier2::http::admin_router(Arc::clone(&svc), AdminAuth::bearer(KEY).unwrap()))
        .merge(seats)
        .fallback(vwr_core::error::not_found_fallback);
    let worker = Worker::new(
        Arc::clone(&svc),
        Arc::new(vwr_tier2::notices::MemoryNotices::default()),
        vwr_core::metrics::MetricsSink::Off,
    );
    App { router, svc, worker, tier1, clock }
}

struct Res {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Value,
}

async fn send(app: &App, req: Request<Body>) -> Res {
    let res = app.router.clone().oneshot(req).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Res { status, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

fn req(method: &str, uri: &str, user: Option<&str>, body: &str) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(uri);
    if let Some(u) = user {
        r = r.header("x-user-id", u);
    }
    r.body(Body::from(body.to_owned())).unwrap()
}

async fn threshold(app: &App, event: &str, body: &str) -> Res {
    let r = Request::put(format!("/api/queue/admin/threshold/{event}"))
        .header(header::AUTHORIZATION, format!("Bearer {KEY}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    send(app, r).await
}

fn assert_error(r: &Res, status: StatusCode, code: &str) {
    assert_eq!(r.status, status, "{:?}", r.body);
    assert_eq!(r.body["error"], code, "{:?}", r.body);
}

fn tier1_token(app: &App, event: &str, sub: &str, pos: u64) -> String {
    let now = app.clock.now_secs();
    app.tier1
        .sign(&Tier1Claims {
            iss: "vwr".into(),
            aud: "vwr-edge".into(),
            sub: sub.into(),
            eid: event.into(),
            pos,
            tier: 1,
            iat: now,
            nbf: now,
            exp: now + 600,
            jti: format!("j-{sub}"),
            t2: None,
        })
        .unwrap()
}

/// The scripted walk of the issue: threshold 2, three users, two active with entry tokens,
/// the third queued at position 1; one leaves; the worker admits the third.
#[tokio::test]
async fn walk_threshold_two_three_users() {
    let app = app(true);
    let r = threshold(&app, "e1", r#"{"threshold":2}"#).await;
    assert_eq!(r.body, json!({"eventId":"e1","threshold":2,"lineOrder":"arrival"}));
    let mut tokens = Vec::new();
    for u in ["alice", "bob"] {
        let r = send(&app, req("POST", "/api/queue/check/e1", Some(u), "")).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.body["status"], "active");
        assert_eq!(r.headers.get(header::CACHE_CONTROL).unwrap(), "no-store");
        let keys: Vec<&str> = r.body.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "status",
            "position",
            "peopleAhead",
            "peopleBehind",
            "queueSize",
            "estimatedWaitSeconds",
            "nextPollSeconds",
            "currentUsers",
            "threshold",
            "entryToken",
        ] {
            assert!(keys.contains(&k), "{k} missing: {:?}", r.body);
        }
        tokens.push(r.body["entryToken"].as_str().unwrap().to_owned());
    }
    let carol = send(&app, req("POST", "/api/queue/check/e1", Some("carol"), "")).await;
    assert_eq!(carol.body["status"], "queued");
    assert_eq!(
        (
            carol.body["position"].as_u64(),
            carol.body["peopleAhead"].as_u64(),
            carol.body["queueSize"].as_u64()
        ),
        (Some(1), Some(0), Some(1))
    );
    assert_eq!((carol.body["currentUsers"].as_u64(), carol.body["threshold"].as_u64()), (Some(2), Some(2)));
    assert!(carol.body.get("entryToken").is_none());
    // Entry tokens verify for their user and event only.
    let v: EntryVerifier = app.svc.tokens().verifier();
    let e1 = EventId::parse("e1").unwrap();
    let now = app.clock.now_secs();
    let alice = v.verify(&tokens[0], &e1, "alice", now).unwrap();
    assert!(v.verify(&tokens[0], &e1, "bob", now).is_err());
    // Status doubles as heartbeat and keeps the same jti.
    let again = send(&app, req("GET", "/api/queue/status/e1", Some("alice"), "")).await;
    assert_eq!(
        v.verify(again.body["entryToken"].as_str().unwrap(), &e1, "alice", now).unwrap().jti,
        alice.jti
    );
    // Leave, then the worker admits carol once alice's last entry token has expired (until
    // then her slot still counts: her token still opens the protected API).
    let r = send(&app, req("POST", "/api/queue/leave/e1", Some("alice"), "")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(app.worker.tick().await.admitted, 0, "alice's token is still valid");
    app.clock.advance(app.svc.settings().entry_token_ttl_ms / 1000);
    let report = app.worker.tick().await;
    assert_eq!(report.admitted, 1);
    let carol = send(&app, req("GET", "/api/queue/status/e1", Some("carol"), "")).await;
    assert_eq!(carol.body["status"], "active", "{:?}", carol.body);
    // Alice is gone: 404 not_in_queue on status and heartbeat.
    assert_error(
        &send(&app, req("GET", "/api/queue/status/e1", Some("alice"), "")).await,
        StatusCode::NOT_FOUND,
        "not_in_queue",
    );
    assert_error(
        &send(&app, req("POST", "/api/queue/heartbeat/e1", Some("alice"), "")).await,
        StatusCode::NOT_FOUND,
        "not_in_queue",
    );
    assert_eq!(
        send(&app, req("POST", "/api/queue/heartbeat/e1", Some("carol"), "")).await.status,
        StatusCode::NO_CONTENT
    );
    // Admin status.
    let r = send(
        &app,
        Request::get("/api/queue/admin/status/e1")
            .header(header::AUTHORIZATION, format!("Bearer {KEY}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        (r.body["active"].as_u64(), r.body["waiting"].as_u64(), r.body["threshold"].as_u64()),
        (Some(2), Some(0), Some(2))
    );
    // Tier 2's part of the report (docs/operate.md#the-report-after-the-sale): the three let
    // in (two at once, carol when alice left); admin only; 404 for an event tier 2 never held.
    let admin_get = |path: &str| {
        Request::get(path).header(header::AUTHORIZATION, format!("Bearer {KEY}")).body(Body::empty()).unwrap()
    };
    let r = send(&app, admin_get("/api/queue/admin/report/e1")).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert_eq!(
        (r.body["totals"]["admitted"].as_u64(), r.body["threshold"].as_u64()),
        (Some(3), Some(2)),
        "{:?}",
        r.body
    );
    assert_error(
        &send(&app, admin_get("/api/queue/admin/report/never")).await,
        StatusCode::NOT_FOUND,
        "event_not_found",
    );
    let anon = Request::get("/api/queue/admin/report/e1").body(Body::empty()).unwrap();
    assert_eq!(send(&app, anon).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_refresh_keeps_the_place() {
    let app = app(true);
    threshold(&app, "e1", r#"{"threshold":1}"#).await;
    for u in ["a", "b", "c"] {
        send(&app, req("POST", "/api/queue/check/e1", Some(u), "")).await;
    }
    // c checks again (a page refresh): still position 2, not the back of the line.
    for _ in 0..3 {
        let r = send(&app, req("POST", "/api/queue/check/e1", Some("c"), "")).await;
        assert_eq!(r.body["position"], 2);
    }
    send(&app, req("POST", "/api/queue/check/e1", Some("d"), "")).await;
    assert_eq!(send(&app, req("POST", "/api/queue/check/e1", Some("c"), "")).await.body["position"], 2);
}

#[tokio::test]
async fn unknown_events_and_identity_rules() {
    let app = app(false);
    // Unknown event: 404, no state created.
    let r = send(&app, req("POST", "/api/queue/check/nope", Some("a"), "")).await;
    assert!(r.status == StatusCode::NOT_FOUND || r.status == StatusCode::UNAUTHORIZED, "{:?}", r.body);
    threshold(&app, "e1", r#"{"threshold":5}"#).await;
    // Without dev mode, X-User-Id is not an identity.
    assert_error(
        &send(&app, req("POST", "/api/queue/check/e1", Some("mallory"), "")).await,
        StatusCode::UNAUTHORIZED,
        "identity_required",
    );
    // The verified tier-1 token's subject is.
    let tok = tier1_token(&app, "e1", "ticket-1", 5);
    let r = send(
        &app,
        Request::post("/api/queue/check/e1")
            .header("cookie", format!("other=1; vwr_t1_e1={tok}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.body["status"], "active", "{:?}", r.body);
    // A tier-1 token for another event is no identity here.
    let other = tier1_token(&app, "e2", "ticket-2", 5);
    let r = send(
        &app,
        Request::post("/api/queue/check/e1").header("x-vwr-token", other).body(Body::empty()).unwrap(),
    )
    .await;
    assert_error(&r, StatusCode::UNAUTHORIZED, "identity_required");
    // An upstream authorizer's subject is (Lambda glue puts it in the extensions).
    let mut r = Request::post("/api/queue/check/e1").body(Body::empty()).unwrap();
    r.extensions_mut().insert(UpstreamUser("site-user-9".into()));
    assert_eq!(send(&app, r).await.body["status"], "active");
    let nobody = app.svc.store().snapshot(&EventId::parse("nope").unwrap()).await.unwrap();
    assert!(nobody.meta.is_none() && nobody.waiting == 0);
}

#[tokio::test]
async fn tier1_ordered_line_takes_positions_only_from_verified_tokens() {
    let app = app(true);
    threshold(&app, "e1", r#"{"threshold":1,"lineOrder":"tier1"}"#).await;
    let first = tier1_token(&app, "e1", "t-first", 50);
    send(
        &app,
        Request::post("/api/queue/check/e1").header("x-vwr-token", first).body(Body::empty()).unwrap(),
    )
    .await;
    // No tier-1 token: refused even in dev mode with an identity.
    assert_error(
        &send(&app, req("POST", "/api/queue/check/e1", Some("x"), "")).await,
        StatusCode::FORBIDDEN,
        "tier1_token_required",
    );
    // A client-supplied position in the body is refused outright.
    assert_error(
        &send(&app, req("POST", "/api/queue/check/e1", Some("x"), r#"{"vwrPosition":1}"#)).await,
        StatusCode::BAD_REQUEST,
        "invalid_body",
    );
    let late = tier1_token(&app, "e1", "t-late", 900);
    let early = tier1_token(&app, "e1", "t-early", 100);
    let r1 = send(
        &app,
        Request::post("/api/queue/check/e1").header("x-vwr-token", late).body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(r1.body["position"], 1);
    let r2 = send(
        &app,
        Request::post("/api/queue/check/e1")
            .header("x-vwr-token", early.clone())
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r2.body["position"], 1, "the earlier tier-1 position goes first");
    // The same tier-1 token cannot line up a second identity.
    let mut r =
        Request::post("/api/queue/check/e1").header("x-vwr-token", early).body(Body::empty()).unwrap();
    r.extensions_mut().insert(UpstreamUser("someone-else".into()));
    assert_error(&send(&app, r).await, StatusCode::CONFLICT, "position_taken");
}

#[tokio::test]
async fn bad_input_is_4xx_without_state_change() {
    let app = app(true);
    threshold(&app, "e1", r#"{"threshold":3}"#).await;
    let before = app.svc.store().snapshot(&EventId::parse("e1").unwrap()).await.unwrap();
    for (m, uri, user, body, status) in [
        ("POST", "/api/queue/check/a.b", Some("u"), "", StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/%ZZ", Some("u"), "", StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/%65%31", Some("u"), "", StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/e1", Some("u"), "{", StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/e1", Some("u"), r#"{"position":1}"#, StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/e1", Some(&"x".repeat(300)), "", StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/e1", Some("a b"), "", StatusCode::BAD_REQUEST),
        ("POST", "/api/queue/check/e1", None, "", StatusCode::UNAUTHORIZED),
    ] {
        let r = send(&app, req(m, uri, user, body)).await;
        assert_eq!(r.status, status, "{m} {uri} {body}: {:?}", r.body);
        assert!(r.body["error"].is_string());
    }
    for body in [
        r#"{"threshold":0}"#,
        r#"{"threshold":-1}"#,
        r#"{"threshold":"5"}"#,
        "{}",
        r#"{"threshold":5,"x":1}"#,
        r#"{"threshold":5,"lineOrder":"vip"}"#,
    ] {
        let r = threshold(&app, "e1", body).await;
        assert_error(&r, StatusCode::BAD_REQUEST, "invalid_body");
    }
    let r = send(
        &app,
        Request::put("/api/queue/admin/threshold/e1").body(Body::from(r#"{"threshold":9}"#)).unwrap(),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.svc.store().snapshot(&EventId::parse("e1").unwrap()).await.unwrap(), before);
}

#[tokio::test]
async fn jwks_and_protected_api() {
    let app = app(true);
    threshold(&app, "e1", r#"{"threshold":5}"#).await;
    threshold(&app, "e2", r#"{"threshold":5}"#).await;
    let r = send(&app, req("GET", "/api/queue/.well-known/jwks.json", None, "")).await;
    assert_eq!(r.body["keys"][0]["kty"], "EC");
    assert!(r.body["keys"][0].get("d").is_none(), "private key published");
    let jwks = EntryVerifier::from_jwks(&r.body.to_string(), "vwr", "vwr-api").unwrap();
    let tok = send(&app, req("POST", "/api/queue/check/e1", Some("alice"), "")).await.body["entryToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let tok2 = send(&app, req("POST", "/api/queue/check/e2", Some("alice"), "")).await.body["entryToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(jwks.verify(&tok, &EventId::parse("e1").unwrap(), "alice", app.clock.now_secs()).is_ok());
    let seats = |user: Option<&str>, token: Option<&str>| {
        let mut r = Request::get("/api/seats/e1");
        if let Some(u) = user {
            r = r.header("x-user-id", u);
        }
        if let Some(t) = token {
            r = r.header("x-queue-entry-token", t);
        }
        r.body(Body::empty()).unwrap()
    };
    let ok = app.router.clone().oneshot(seats(Some("alice"), Some(&tok))).await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let t1 = tier1_token(&app, "e1", "alice", 1);
    for (user, token) in [
        (Some("alice"), None),
        (Some("bob"), Some(tok.as_str())),
        (Some("alice"), Some(tok2.as_str())),
        (None, Some(tok.as_str())),
        (Some("alice"), Some(t1.as_str())),
    ] {
        let r = send(&app, seats(user, token)).await;
        assert_error(&r, StatusCode::FORBIDDEN, "queue_entry_token_required");
        assert_eq!(r.body["redirectTo"], "/vwr/queue/e1");
    }
    app.clock.advance(601);
    let r = send(&app, seats(Some("alice"), Some(&tok))).await;
    assert_error(&r, StatusCode::FORBIDDEN, "queue_entry_token_required");
}

/// The `Set-Cookie` value of the tier-2 identity cookie of `event` in `r`, as a `Cookie` pair.
fn identity_cookie(r: &Res, event: &str) -> String {
    let prefix = format!("vwr_t2_{event}=");
    r.headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&prefix))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("no {prefix} cookie in {:?}", r.headers))
        .to_owned()
}

/// Review finding 2: a tier-2 wait longer than the tier-1 token's life must not send the
/// visitor to the back. Tier-1 token of 30 s, tier-2 wait of 40 s: the tier-2 identity cookie
/// keeps them known, in place, and they are admitted.
#[tokio::test]
async fn tier2_identity_outlives_a_short_tier1_token() {
    let app = app(false);
    threshold(&app, "e1", r#"{"threshold":1,"lineOrder":"tier1"}"#).await;
    let now = app.clock.now_secs();
    let short = |sub: &str, pos: u64| {
        app.tier1
            .sign(&Tier1Claims {
                iss: "vwr".into(),
                aud: "vwr-edge".into(),
                sub: sub.into(),
                eid: "e1".into(),
                pos,
                tier: 1,
                iat: now,
                nbf: now,
                exp: now + 30,
                jti: format!("j-{sub}"),
                t2: None,
            })
            .unwrap()
    };
    let check = |tok: String| {
        Request::post("/api/queue/check/e1")
            .header("cookie", format!("vwr_t1_e1={tok}"))
            .body(Body::empty())
            .unwrap()
    };
    let first = send(&app, check(short("ticket-a", 1))).await;
    assert_eq!(first.body["status"], "active", "{:?}", first.body);
    let waiting = send(&app, check(short("ticket-b", 2))).await;
    assert_eq!(
        (waiting.body["status"].as_str(), waiting.body["position"].as_u64()),
        (Some("queued"), Some(1))
    );
    let mut cookie = identity_cookie(&waiting, "e1");
    let t1_cookie = format!("vwr_t1_e1={}", short("ticket-b", 2));
    // 40 s in line, polling every 10 s: the tier-1 token expires at 30 s.
    for _ in 0..4 {
        app.clock.advance(10);
        let r = send(
            &app,
            Request::get("/api/queue/status/e1")
                .header("cookie", format!("{t1_cookie}; {cookie}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
        assert_eq!((r.body["status"].as_str(), r.body["position"].as_u64()), (Some("queued"), Some(1)));
        cookie = identity_cookie(&r, "e1");
    }
    // The first user leaves (their tier-1 token has expired too: their identity cookie says
    // who they are; their last entry token expired at 30 s, so the slot is free at once) and
    // the worker admits the second, who gets an entry token for the same tier-2 identity.
    let first_cookie = identity_cookie(&first, "e1");
    let r = send(
        &app,
        Request::post("/api/queue/leave/e1").header("cookie", first_cookie).body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{:?}", r.body);
    assert_eq!(app.worker.tick().await.admitted, 1);
    let r = send(
        &app,
        Request::get("/api/queue/status/e1").header("cookie", cookie).body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(r.body["status"], "active", "{:?}", r.body);
    let entry = r.body["entryToken"].as_str().unwrap();
    let user = vwr_core::identity::tier1_user_id("ticket-b");
    assert!(
        app.svc
            .tokens()
            .verifier()
            .verify(entry, &EventId::parse("e1").unwrap(), &user, app.clock.now_secs())
            .is_ok()
    );
}

/// Review finding 6: the tier-2 user id was the `requestId` (a bearer ticket) and travelled
/// in entry tokens, notices and to the site. It is now a digest.
#[tokio::test]
async fn tier2_user_is_a_digest_of_the_ticket() {
    let app = app(false);
    threshold(&app, "e1", r#"{"threshold":5}"#).await;
    let ticket = "v1.k1.cmVxdWVzdC1pZA.c2VjcmV0LW1hYw";
    let tok = tier1_token(&app, "e1", ticket, 3);
    let r = send(
        &app,
        Request::post("/api/queue/check/e1")
            .header("cookie", format!("vwr_t1_e1={tok}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.body["status"], "active");
    let entry = r.body["entryToken"].as_str().unwrap();
    let payload = entry.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload).unwrap(),
    )
    .unwrap();
    assert_eq!(claims["uid"], vwr_core::identity::tier1_user_id(ticket).as_str());
    let notices = Arc::new(vwr_tier2::notices::MemoryNotices::default());
    let worker = Worker::new(Arc::clone(&app.svc), notices.clone(), vwr_core::metrics::MetricsSink::Off);
    worker.tick().await;
    let sent = notices.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1.user_id, vwr_core::identity::tier1_user_id(ticket));
    let everything = format!("{claims} {:?} {:?}", sent, r.headers);
    assert!(!everything.contains(ticket), "the ticket leaked: {everything}");
}

/// Review finding 17: an oversize body got axum's plain-text 413; every error is JSON.
#[tokio::test]
async fn oversize_bodies_get_a_json_413() {
    let app = app(true);
    threshold(&app, "e1", r#"{"threshold":5}"#).await;
    let big = "x".repeat(vwr_tier2::http::MAX_BODY_BYTES + 1);
    let r = send(&app, req("POST", "/api/queue/check/e1", Some("a"), &big)).await;
    assert_error(&r, StatusCode::PAYLOAD_TOO_LARGE, "body_too_large");
    let r = send(&app, req("DELETE", "/api/queue/check/e1", Some("a"), "")).await;
    assert_error(&r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
}

/// The line document of an unknown event is a 404 CloudFront may share for a second, as tier
/// 1's documents are: made-up ids asked again do not each reach the Lambda, Redis and DynamoDB.
/// A store that is down is still 503, never cached.
#[tokio::test]
async fn an_unknown_events_line_document_is_cached_for_a_second() {
    let app = app(true);
    let r = send(&app, req("GET", "/api/queue/line/nope", None, "")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{:?}", r.body);
    assert_eq!(r.body["error"], "event_not_found");
    assert_eq!(r.headers.get(header::CACHE_CONTROL).unwrap(), "public, max-age=1");
    threshold(&app, "e1", r#"{"threshold":2}"#).await;
    let r = send(&app, req("GET", "/api/queue/line/e1", None, "")).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert_eq!(r.headers.get(header::CACHE_CONTROL).unwrap(), "public, max-age=1");
}
