//! `vwr watch --once` against a tiny admin API on 127.0.0.1: the snapshot shows the status
//! figures (the health gate's hold and the outflow figures included), the bearer key is sent,
//! the tier-2 admin status is used with `--tier2-url`, and error answers come back as the API's
//! message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use serde_json::{Value, json};
use vwr_loadtest::client::AdminTarget;
use vwr_watch::{self as watch, WatchArgs};

const KEY: &str = "watch-test-admin-key-0123456789";

/// A request the server saw: path and `Authorization` header.
type Request = (String, Option<String>);

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Request>>>);

fn status_json(event: &str) -> Value {
    json!({
        "eventId": event, "active": true, "state": "paused",
        "issued": 1200, "servingCounter": 1000, "highestPosition": 1200,
        "waiting": 200, "admitted": 950, "prequeueSize": 300,
        "config": {"batchSize": 50, "intervalSeconds": 5, "shards": 4, "tokenTtlSeconds": 600},
        "rates": {"windowSeconds": 60, "servedPerSecond": 10.0, "joinsPerSecond": 12.5},
        "message": {"en": "Back in 5 minutes"},
        "seedCommitment": "3f2a9c0b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
        "seed": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
        "tier2": {"eventId": event, "registered": true, "threshold": 100, "lineOrder": "tier1",
                  "waiting": 20, "active": 80, "held": 3, "pendingNotices": 0,
                  "admittedLast60s": 60, "admittedPerSecond": 1.0},
        "lastStepAt": 0, "createdAt": 0, "updatedAt": 0, "rev": 3
    })
}

/// A `targetArrivals` event held by the health gate (docs/outflow.md).
fn held_json(event: &str) -> Value {
    json!({
        "eventId": event, "active": true, "state": "open",
        "issued": 5000, "servingCounter": 4000, "highestPosition": 5000,
        "waiting": 1000, "admitted": 3000, "prequeueSize": 0,
        "config": {"batchSize": 50, "intervalSeconds": 5, "shards": 4, "tokenTtlSeconds": 600,
                   "mode": "targetArrivals", "targetArrivalsPerMinute": 600, "maxBatchSize": 5000,
                   "reentryGraceSeconds": 300, "maxSessionSeconds": 1800},
        "rates": {"windowSeconds": 60, "servedPerSecond": 0.0, "joinsPerSecond": 3.0},
        "outflow": {"mode": "targetArrivals", "targetPerMinute": 600, "redeemedPerMinute": 0.0,
                    "servedPerMinute": 0.0, "noShowShare": 0.18, "released": 42},
        "heldBy": "health", "holdReason": "origin 5xx", "heldSince": 1_790_000_000u64 + 3 * 3600 + 4 * 60 + 4,
        "lastStepAt": 0, "createdAt": 0, "updatedAt": 0, "rev": 9
    })
}

fn authorized(headers: &HeaderMap, seen: &Seen, path: String) -> bool {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let ok = auth.as_deref() == Some(&format!("Bearer {KEY}"));
    seen.0.lock().unwrap().push((path, auth));
    ok
}

fn unauthorized() -> (StatusCode, Json<Value>) {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "unauthorized", "message": "missing or wrong admin key"})),
    )
}

async fn tier1_status(
    State(seen): State<Seen>,
    Path(event): Path<String>,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    if !authorized(&headers, &seen, format!("/api/admin/vwr/status/{event}")) {
        return unauthorized();
    }
    match event.as_str() {
        "sale1" => (StatusCode::OK, Json(status_json(&event))),
        "held1" => (StatusCode::OK, Json(held_json(&event))),
        "weird" => (StatusCode::OK, Json(json!(["not", "an", "object"]))),
        _ => (StatusCode::NOT_FOUND, Json(json!({"error": "event_not_found", "message": "no such event"}))),
    }
}

async fn tier2_status(
    State(seen): State<Seen>,
    Path(event): Path<String>,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    if !authorized(&headers, &seen, format!("/api/queue/admin/status/{event}")) {
        return unauthorized();
    }
    (
        StatusCode::OK,
        Json(json!({"eventId": event, "registered": true, "threshold": 500, "lineOrder": "tier1",
                    "waiting": 7, "active": 321, "held": 2, "pendingNotices": 0,
                    "admittedLast60s": 120, "admittedPerSecond": 2.0})),
    )
}

async fn server() -> (String, Seen) {
    let seen = Seen::default();
    let app = Router::new()
        .route("/api/admin/vwr/status/{event}", get(tier1_status))
        .route("/api/queue/admin/status/{event}", get(tier2_status))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

fn args(url: &str, event: &str, key: &str) -> WatchArgs {
    WatchArgs {
        event_id: event.to_owned(),
        target: AdminTarget::bearer(url, key),
        interval: Duration::from_secs(1),
        once: true,
        json: false,
    }
}

#[tokio::test]
async fn watch_once_prints_the_figures_and_sends_the_bearer_key() {
    let (url, seen) = server().await;
    let text = watch::snapshot(&args(&format!("{url}/"), "sale1", KEY)).await.unwrap();
    println!("{text}");
    for needle in [
        "vwr watch sale1",
        "paused",
        "Back in 5 minutes",
        "3f2a9c0b1d4e… · revealed",
        "1200",
        "1000",
        "950",
        "300",
        "5.0 %",
        "20s",
        "12.5 (60 s)",
        "served 10.0 (60 s)",
        "active 80/100 · waiting 20 · held 3",
        "the tier-1 status",
        "refreshed",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in\n{text}");
    }
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![("/api/admin/vwr/status/sale1".to_owned(), Some(format!("Bearer {KEY}")))],
        "one GET of the status, with the bearer key (the trailing / of --url is dropped)"
    );
}

#[tokio::test]
async fn watch_once_shows_the_hold_and_the_outflow_figures() {
    let (url, _) = server().await;
    let text = watch::snapshot(&args(&url, "held1", KEY)).await.unwrap();
    println!("{text}");
    // 1_790_000_000 is 14:13:20Z; held since 3 h 4 min 4 s later
    for needle in [
        "state               open\n",
        "hold                HELD by health: origin 5xx since 17:17:24Z",
        "mode                targetArrivals · target 600/min · at most 5000/step\n",
        "per minute          redeemed 0.0 · served 0.0 · 0 % of target\n",
        "released            42\n",
        // the status's recent figure, not 1 - 3000/4000 = 25 %
        "no-show share       18.0 % (recent)\n",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in\n{text}");
    }

    // an event that is not held (a status without outflow figures): no hold line, the mode
    // from the configuration, the no-show share computed over the whole sale
    let text = watch::snapshot(&args(&url, "sale1", KEY)).await.unwrap();
    assert!(!text.contains("HELD") && !text.contains("\nhold "), "{text}");
    assert!(text.contains("mode                fixed · 50 every 5s\n"), "{text}");
    assert!(text.contains("no-show share       5.0 % (whole sale)\n"), "{text}");
    assert!(text.contains("released            —\n"), "{text}");
}

#[tokio::test]
async fn watch_once_uses_the_tier2_admin_status_when_given() {
    let (url, seen) = server().await;
    let mut a = args(&url, "sale1", KEY);
    a.target.tier2_url = Some(url.clone());
    let text = watch::snapshot(&a).await.unwrap();
    assert!(text.contains("active 321/500 · waiting 7 · held 2"), "{text}");
    assert!(text.contains("the tier-2 admin status"), "{text}");
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1], ("/api/queue/admin/status/sale1".to_owned(), Some(format!("Bearer {KEY}"))));

    // a tier-2 API that does not answer: the tier-1 figures and the error show
    a.target.tier2_url = Some("http://127.0.0.1:1".to_owned());
    let text = watch::snapshot(&a).await.unwrap();
    assert!(text.contains("active 80/100"), "{text}");
    assert!(text.contains("tier-2 error"), "{text}");
}

#[tokio::test]
async fn watch_once_json_is_the_status_with_tier2s_beside_it() {
    let (url, _) = server().await;
    let mut a = args(&url, "sale1", KEY);
    a.json = true;
    let v: serde_json::Value = serde_json::from_str(&watch::snapshot_json(&a).await.unwrap()).unwrap();
    assert_eq!(v["eventId"], "sale1", "{v}");
    a.target.tier2_url = Some(url.clone());
    let v: serde_json::Value = serde_json::from_str(&watch::snapshot_json(&a).await.unwrap()).unwrap();
    assert_eq!(v["tier2"]["threshold"], 500, "{v}");
    // A tier-2 API that does not answer is an error here: JSON has no place for a note.
    a.target.tier2_url = Some("http://127.0.0.1:1".to_owned());
    assert!(watch::snapshot_json(&a).await.unwrap_err().to_string().contains("127.0.0.1:1"));
}

#[tokio::test]
async fn watch_once_fails_with_the_api_error_message() {
    let (url, _) = server().await;
    let e = watch::snapshot(&args(&url, "nope", KEY)).await.unwrap_err().to_string();
    assert!(e.contains("404") && e.contains("event_not_found: no such event"), "{e}");
    let e = watch::snapshot(&args(&url, "sale1", "wrong-key-wrong-key-wrong")).await.unwrap_err().to_string();
    assert!(e.contains("401") && e.contains("unauthorized"), "{e}");
    let e = watch::snapshot(&args(&url, "weird", KEY)).await.unwrap_err().to_string();
    assert!(e.contains("not a JSON object"), "{e}");
    let e = watch::snapshot(&args("http://127.0.0.1:1", "sale1", KEY)).await.unwrap_err().to_string();
    assert!(e.contains("could not reach"), "{e}");
    let e = watch::snapshot(&args(&url, "bad id!", KEY)).await.unwrap_err().to_string();
    assert!(e.contains("event id"), "{e}");
}

#[tokio::test]
async fn watch_run_once_succeeds_and_the_console_refuses_a_non_terminal() {
    let (url, _) = server().await;
    watch::run(args(&url, "sale1", KEY)).await.unwrap();
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return; // run by hand in a terminal: the console would take it over
    }
    let mut a = args(&url, "sale1", KEY);
    a.once = false;
    let e = watch::run(a).await.unwrap_err().to_string();
    assert!(e.contains("needs a terminal") && e.contains("--once"), "{e}");
}
