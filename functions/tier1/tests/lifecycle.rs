//! The life of a sale over HTTP (in-memory store, manual clock): schedule, pre-queue, the
//! randomized open, pause, resume, close, messages, the public status document and the audit
//! trail (docs/lifecycle.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use http::{StatusCode, header};
use serde_json::{Value, json};
use vwr_tier1::draw::{self, Seed};
use vwr_tier1::service::StepOutcome;

use common::{App, Res, T0, app};

async fn call(app: &App, method: &str, uri: &str, body: Option<Value>) -> Res {
    let body = body.map(|b| b.to_string());
    common::call(app, method, uri, body.as_deref(), uri.starts_with("/api/admin/")).await
}

async fn admin(app: &App, method: &str, action: &str, body: Option<Value>) -> Res {
    call(app, method, &format!("/api/admin/vwr/{action}/e1"), body).await
}

async fn ok(app: &App, method: &str, action: &str, body: Option<Value>) -> Value {
    let r = admin(app, method, action, body).await;
    assert_eq!(r.status, StatusCode::OK, "{action}: {:?}", r.body);
    r.body
}

async fn assign(app: &App) -> Res {
    call(app, "POST", "/vwr/assign/e1", None).await
}

async fn check(app: &App, rid: &str) -> Res {
    let secret = app.svc.request_secret(rid).unwrap_or_default();
    common::call_with(app, "GET", &format!("/vwr/check/e1/{rid}"), &[("x-vwr-request-secret", &secret)]).await
}

async fn public(app: &App) -> Res {
    call(app, "GET", "/vwr/status/e1", None).await
}

/// Runs the advancer for e1 at the current time.
async fn tick(app: &App) -> StepOutcome {
    app.svc.advance_event(&common::ev("e1")).await.unwrap()
}

fn schedule_body(shards: u32) -> Value {
    json!({"prequeueAt": T0 + 60, "openAt": T0 + 120, "closeAt": T0 + 3600, "batchSize": 5, "intervalSeconds": 1, "shards": shards})
}

#[tokio::test]
async fn a_sale_from_schedule_to_close() {
    let app = app();
    let st = ok(&app, "PUT", "schedule", Some(schedule_body(3))).await;
    assert_eq!(st["state"], "scheduled");
    assert_eq!((st["prequeueAt"].as_u64(), st["openAt"].as_u64()), (Some(T0 + 60), Some(T0 + 120)));
    let commitment = st["seedCommitment"].as_str().unwrap().to_owned();
    assert_eq!(commitment.len(), 64);
    assert!(st.get("seed").is_none(), "the seed stays secret until the open: {st}");

    // Scheduled: not gated yet, no joins.
    let r = assign(&app).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::CONFLICT, Some("event_not_open")));
    assert_eq!(r.body["opensAt"], T0 + 120);
    assert!(!app.svc.active_ids().await.unwrap().contains(&common::ev("e1")));
    let doc = public(&app).await;
    assert_eq!(doc.status, StatusCode::OK);
    assert_eq!(doc.headers.get(header::CACHE_CONTROL).unwrap(), "public, max-age=1");
    assert!(doc.headers.get(header::SET_COOKIE).is_none());
    assert_eq!(
        (doc.body["state"].as_str(), doc.body["opensAt"].as_u64()),
        (Some("scheduled"), Some(T0 + 120))
    );
    assert_eq!(doc.body["seedCommitment"], commitment);
    assert!(doc.body.get("seed").is_none());

    // The advancer starts the pre-queue at prequeueAt; the edge gates from then on.
    assert!(matches!(tick(&app).await, StepOutcome::NotDue { .. }));
    app.clock.advance(60);
    assert!(matches!(tick(&app).await, StepOutcome::Transition { .. }));
    assert!(app.svc.active_ids().await.unwrap().contains(&common::ev("e1")));
    let mut pre = Vec::new();
    for _ in 0..10 {
        let r = assign(&app).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.body["state"], "prequeue");
        assert_eq!(r.body["opensAt"], T0 + 120);
        assert!(r.body.get("position").is_none(), "no position before the draw: {:?}", r.body);
        pre.push(r.body["requestId"].as_str().unwrap().to_owned());
    }
    let c = check(&app, &pre[0]).await;
    assert_eq!(c.body["state"], "prequeue");
    assert_eq!(c.body["admitted"], false);
    tick(&app).await; // counts the pre-queue for the status documents
    assert_eq!(public(&app).await.body["prequeueSize"], 10);

    // The open: sealed, the seed revealed, the pre-queue shuffled into 1..=10.
    app.clock.advance(60);
    assert!(matches!(tick(&app).await, StepOutcome::Transition { .. }));
    let st = ok(&app, "GET", "status", None).await;
    assert_eq!(st["state"], "open");
    assert_eq!(st["prequeueSize"], 10);
    let seed_hex = st["seed"].as_str().unwrap().to_owned();
    let seed = Seed::from_hex(&seed_hex).unwrap();
    assert_eq!(seed.commitment(), commitment, "the revealed seed matches the commitment");
    let doc = public(&app).await.body;
    assert_eq!(doc["seed"], seed_hex);
    assert!(doc.get("opensAt").is_none());
    let counts: Vec<u64> = serde_json::from_value(doc["sealedCounts"].clone()).unwrap();
    assert_eq!(counts.iter().sum::<u64>(), 10);

    let mut positions = Vec::new();
    for rid in &pre {
        let c = check(&app, rid).await;
        assert_eq!(c.body["state"], "open");
        let p = c.body["position"].as_u64().unwrap();
        // Anyone can recompute it from the ticket, the sealed counts and the seed.
        let i = pre_index(rid);
        let rank = draw::rank_of_pre_index(&counts, i).unwrap();
        assert_eq!(draw::position(&seed, 10, rank).unwrap(), p);
        positions.push(p);
    }
    assert_eq!(positions.iter().copied().collect::<BTreeSet<_>>(), (1..=10).collect());
    assert_ne!(positions, (1..=10).collect::<Vec<_>>(), "arrival order is not the order of the line");
    // Later joins stand behind the pre-queue.
    let late = assign(&app).await;
    assert_eq!(late.body["state"], "open");
    let late_position = late.body["position"].as_u64().unwrap();
    assert!(
        (11..=13).contains(&late_position),
        "the first regular join of 3 shards is 10 + k: {late_position}"
    );

    // Steps serve the drawn order.
    app.clock.advance(1);
    assert!(matches!(tick(&app).await, StepOutcome::Advanced { to: 5, .. }));
    let first = positions.iter().position(|p| *p == 1).unwrap();
    let c = check(&app, &pre[first]).await;
    assert_eq!(c.body["admitted"], true, "{:?}", c.body);
    let last = positions.iter().position(|p| *p == 10).unwrap();

    // Pause: places kept, joins continue, the advancer stands still, served positions still get in.
    let st =
        ok(&app, "POST", "pause", Some(json!({"message": {"en": "Back in 5 minutes", "ko": "5분 후 재개"}})))
            .await;
    assert_eq!(st["state"], "paused");
    let during = assign(&app).await.body["position"].as_u64().unwrap();
    assert!(during > 10 && during != late_position, "joins continue behind the pre-queue: {during}");
    app.clock.advance(5);
    assert!(matches!(tick(&app).await, StepOutcome::NotDue { .. }));
    assert_eq!(ok(&app, "GET", "status", None).await["servingCounter"], 5);
    let w = check(&app, &pre[last]).await;
    assert_eq!((w.body["state"].as_str(), w.body["admitted"].as_bool()), (Some("paused"), Some(false)));
    assert_eq!(w.body["message"]["en"], "Back in 5 minutes");
    let second = positions.iter().position(|p| *p == 2).unwrap();
    assert_eq!(check(&app, &pre[second]).await.body["admitted"], true);
    assert_eq!(public(&app).await.body["message"]["ko"], "5분 후 재개");

    // Resume, then clear the message.
    assert_eq!(ok(&app, "POST", "resume", None).await["state"], "open");
    assert!(ok(&app, "PUT", "message", Some(json!({"message": null}))).await.get("message").is_none());
    app.clock.advance(1);
    assert!(matches!(tick(&app).await, StepOutcome::Advanced { to: 10, .. }));

    // Close: no joins, nobody new admitted, earlier admissions answered again, the edge keeps gating.
    let st = ok(&app, "POST", "close", Some(json!({"reason": "sold_out"}))).await;
    assert_eq!((st["state"].as_str(), st["closeReason"].as_str()), (Some("closed"), Some("sold_out")));
    let r = assign(&app).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::CONFLICT, Some("event_closed")));
    assert_eq!(r.body["closeReason"], "sold_out");
    let c = check(&app, &pre[last]).await; // served (≤ 10) but never came: too late now
    assert_eq!(c.body, json!({"admitted": false, "state": "closed", "closeReason": "sold_out"}));
    let again = check(&app, &pre[first]).await;
    assert_eq!(again.body["admitted"], true, "an admission made before the close stays valid");
    assert!(app.svc.active_ids().await.unwrap().contains(&common::ev("e1")));
    assert_eq!(public(&app).await.body["closeReason"], "sold_out");

    // The audit trail: every change, oldest first, with who and before/after.
    let audit = ok(&app, "GET", "audit", None).await;
    let entries = audit["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["schedule", "prequeue", "open", "pause", "resume", "message", "close"]);
    let actors: Vec<&str> = entries.iter().map(|e| e["actor"].as_str().unwrap()).collect();
    assert_eq!(actors, ["dev", "advancer", "advancer", "dev", "dev", "dev", "dev"]);
    assert_eq!(entries[0]["before"], Value::Null);
    for pair in entries.windows(2) {
        assert_eq!(pair[0]["after"], pair[1]["before"], "each change starts where the last ended");
    }
    assert_eq!(entries[3]["after"]["message"]["en"], "Back in 5 minutes");
}

/// The ticket's pre-queue index, read from its (unsigned-readable) payload.
fn pre_index(rid: &str) -> u64 {
    use base64::Engine;
    let payload = rid.split('.').nth(2).unwrap();
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap();
    let text = String::from_utf8(raw).unwrap();
    text.split(':').nth(1).unwrap().strip_prefix('q').unwrap().parse().unwrap()
}

#[tokio::test]
async fn close_at_ends_the_sale() {
    let app = app();
    ok(&app, "PUT", "schedule", Some(schedule_body(1))).await;
    app.clock.advance(60);
    tick(&app).await;
    let rid = assign(&app).await.body["requestId"].as_str().unwrap().to_owned();
    app.clock.advance(60);
    assert!(matches!(tick(&app).await, StepOutcome::Transition { .. }));
    assert_eq!(check(&app, &rid).await.body["position"], 1);
    assert_eq!(assign(&app).await.body["position"], 2);
    // closeAt (T0 + 3600) closes it with reason "ended".
    app.clock.advance(3600);
    assert!(matches!(tick(&app).await, StepOutcome::Transition { .. }));
    let st = ok(&app, "GET", "status", None).await;
    assert_eq!((st["state"].as_str(), st["closeReason"].as_str()), (Some("closed"), Some("ended")));
    let audit = ok(&app, "GET", "audit", None).await;
    assert_eq!(audit["entries"].as_array().unwrap().last().unwrap()["actor"], "advancer");
}

/// Invariant 21: once the pre-queue has started, nobody chooses when it is sealed — not by
/// opening early (`activate`), not by moving `openAt` (`schedule`), not by deactivating and
/// activating again; only `close` ends the sale early. Whoever can read the seed could
/// otherwise watch the counts and seal at the moment that suits their tickets.
#[tokio::test]
async fn the_seal_time_is_fixed_once_the_prequeue_starts() {
    let app = app();
    ok(&app, "PUT", "schedule", Some(schedule_body(1))).await;
    app.clock.advance(60);
    tick(&app).await;
    let mut pre = Vec::new();
    for _ in 0..3 {
        pre.push(assign(&app).await.body["requestId"].as_str().unwrap().to_owned());
    }
    let rev = ok(&app, "GET", "status", None).await["rev"].as_u64().unwrap();
    let refused = |r: &Res, what: &str| {
        assert_eq!(
            (r.status, r.body["error"].as_str(), r.body["state"].as_str()),
            (StatusCode::CONFLICT, Some("invalid_transition"), Some("prequeue")),
            "{what}: {:?}",
            r.body
        );
        assert!(r.body["message"].as_str().unwrap().contains("openAt"), "{what}: {:?}", r.body);
    };
    // Opening early would seal now.
    refused(&admin(&app, "POST", "activate", Some(json!({}))).await, "activate");
    refused(&admin(&app, "POST", "activate", Some(json!({"batchSize": 9}))).await, "activate with config");
    // Moving the times would move the seal.
    for (p, o) in [(T0 + 60, T0 + 90), (T0 + 60, T0 + 600), (T0 + 30, T0 + 120)] {
        let body = json!({"prequeueAt": p, "openAt": o, "closeAt": T0 + 3600});
        refused(&admin(&app, "PUT", "schedule", Some(body)).await, "schedule with other times");
    }
    let st = ok(&app, "GET", "status", None).await;
    assert_eq!((st["state"].as_str(), st["rev"].as_u64()), (Some("prequeue"), Some(rev)), "nothing written");
    assert!(st.get("sealedCounts").is_none(), "nothing sealed: {st}");
    let later = assign(&app).await;
    assert_eq!(later.body["state"], "prequeue", "joins still go to the pre-queue: {:?}", later.body);
    pre.push(later.body["requestId"].as_str().unwrap().to_owned());

    // The configuration and closeAt may still change, with the same times.
    let body = json!({"prequeueAt": T0 + 60, "openAt": T0 + 120, "closeAt": T0 + 7200, "batchSize": 7});
    let st = ok(&app, "PUT", "schedule", Some(body)).await;
    assert_eq!(
        (st["state"].as_str(), st["config"]["batchSize"].as_u64(), st["closeAt"].as_u64()),
        (Some("prequeue"), Some(7), Some(T0 + 7200))
    );

    // Deactivating and activating again would seal at a chosen moment too.
    ok(&app, "POST", "deactivate", None).await;
    let r = admin(&app, "POST", "activate", Some(json!({}))).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::CONFLICT, Some("invalid_transition")));
    let r = admin(&app, "PUT", "schedule", Some(json!({"prequeueAt": T0 + 60, "openAt": T0 + 90}))).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::CONFLICT, Some("invalid_transition")));
    // Gating it again with the same times is allowed: the seal stays at openAt.
    let body = json!({"prequeueAt": T0 + 60, "openAt": T0 + 120, "closeAt": T0 + 7200});
    assert_eq!(ok(&app, "PUT", "schedule", Some(body)).await["state"], "prequeue");

    // The advancer seals at openAt, not a second before.
    app.clock.advance(59);
    assert!(matches!(tick(&app).await, StepOutcome::NotDue { .. }));
    app.clock.advance(1);
    assert!(matches!(tick(&app).await, StepOutcome::Transition { .. }));
    let st = ok(&app, "GET", "status", None).await;
    assert_eq!((st["state"].as_str(), st["prequeueSize"].as_u64()), (Some("open"), Some(4)));
    let mut positions = positions_of(&app, &pre).await;
    positions.sort_unstable();
    assert_eq!(positions, [1, 2, 3, 4]);
    let audit = ok(&app, "GET", "audit", None).await;
    let actions: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["schedule", "prequeue", "schedule", "deactivate", "schedule", "open"]);
}

async fn positions_of(app: &App, rids: &[String]) -> Vec<u64> {
    let mut out = Vec::new();
    for rid in rids {
        out.push(check(app, rid).await.body["position"].as_u64().unwrap());
    }
    out
}

#[tokio::test]
async fn refused_changes_leave_everything_as_it_was() {
    let app = app();
    // Unknown event.
    let r = admin(&app, "POST", "pause", None).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::NOT_FOUND, Some("event_not_found")));
    assert_eq!(public(&app).await.status, StatusCode::NOT_FOUND);
    assert_eq!(public(&app).await.headers.get(header::CACHE_CONTROL).unwrap(), "public, max-age=1");
    // Bad schedules.
    for body in [
        json!({"prequeueAt": T0 + 100, "openAt": T0 + 100}),
        json!({"prequeueAt": T0 - 100, "openAt": T0 - 10}),
        json!({"prequeueAt": T0 + 1, "openAt": T0 + 100, "closeAt": T0 + 50}),
    ] {
        let r = admin(&app, "PUT", "schedule", Some(body)).await;
        assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_schedule")));
    }
    let r =
        admin(&app, "PUT", "schedule", Some(json!({"prequeueAt": T0 + 1, "openAt": T0 + 100, "color": 1})))
            .await;
    assert_eq!(r.body["error"], "invalid_body");
    assert_eq!(admin(&app, "GET", "status", None).await.status, StatusCode::NOT_FOUND, "nothing was created");

    ok(&app, "POST", "activate", Some(json!({}))).await;
    let rev = ok(&app, "GET", "status", None).await["rev"].clone();
    // Transitions the state machine does not allow.
    let r = admin(&app, "POST", "resume", None).await;
    assert_eq!(
        (r.status, r.body["error"].as_str(), r.body["state"].as_str()),
        (StatusCode::CONFLICT, Some("invalid_transition"), Some("open"))
    );
    let r = admin(&app, "PUT", "schedule", Some(schedule_body(1))).await;
    assert_eq!(r.body["error"], "invalid_transition");
    // Bad bodies.
    for (m, action, body) in [
        ("POST", "close", json!({})),
        ("POST", "close", json!({"reason": "bored"})),
        ("PUT", "message", json!({})),
        ("PUT", "message", json!({"message": {"fr": "non"}})),
        ("PUT", "message", json!({"message": {"en": "x".repeat(501)}})),
        ("POST", "pause", json!({"message": {"en": "bell \u{7}"}})),
    ] {
        let r = admin(&app, m, action, Some(body.clone())).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{action} {body}: {:?}", r.body);
    }
    // A used line cannot get a pre-queue after the fact.
    assign(&app).await;
    ok(&app, "POST", "deactivate", None).await;
    let r = admin(&app, "PUT", "schedule", Some(schedule_body(1))).await;
    assert_eq!(r.body["error"], "invalid_transition", "{:?}", r.body);
    let st = ok(&app, "GET", "status", None).await;
    assert_eq!(st["state"], "inactive");
    assert_eq!(st["rev"].as_u64(), rev.as_u64().map(|r| r + 1), "only the deactivation was written");
    assert_eq!(ok(&app, "GET", "audit", None).await["entries"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_public_document_for_an_event_without_a_schedule() {
    let app = app();
    ok(&app, "POST", "activate", Some(json!({"batchSize": 0}))).await;
    assign(&app).await;
    let doc = public(&app).await.body;
    assert_eq!(doc["state"], "open");
    for absent in ["opensAt", "seed", "seedCommitment", "prequeueSize", "message", "closeReason"] {
        assert!(doc.get(absent).is_none(), "{absent} in {doc}");
    }
    ok(&app, "POST", "deactivate", None).await;
    assert_eq!(public(&app).await.body["state"], "inactive");
}
