//! The visitor's rules, and one visitor against a scripted vwr: what the place counters see.

use axum::body::Bytes;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::super::stats::{Latencies, Timeline};
use super::line::Place;
use super::*;
use crate::client::HttpClient;

// The page's rules themselves (verdicts, pace, back-off, jitter, Retry-After, the line's
// marks): the vectors of static/test/page-rules.json, in tests/page_rules.rs.

#[test]
fn the_place_keeps_the_rate_of_the_last_estimate() {
    let mut p = Place::default();
    p.learn(&serde_json::json!({"position": 120, "servingCounter": 20, "estimatedWaitSeconds": 10, "nextPollSeconds": 2}));
    assert_eq!(p.position, Some(120));
    assert_eq!(p.rate, Some(10.0));
    p.learn(&serde_json::json!({"position": 120, "peopleAhead": 49, "estimatedWaitSeconds": 25}));
    assert_eq!(p.rate, Some(2.0));
}

#[test]
fn tier2_answers_and_cookies() {
    use serde_json::json;
    let queued = json!({"status": "queued", "position": 3});
    assert_eq!(tier2_answer(200, &queued), Tier2Answer::Place(queued.clone()));
    assert_eq!(tier2_answer(404, &json!({"error": "not_in_queue"})), Tier2Answer::NotInQueue);
    assert_eq!(tier2_answer(404, &json!({"error": "event_not_found"})), Tier2Answer::Gone);
    for (s, code) in [(401, "identity_required"), (403, "invalid_identity"), (403, "tier1_token_required")] {
        assert_eq!(tier2_answer(s, &json!({"error": code})), Tier2Answer::Identity);
    }
    assert_eq!(tier2_answer(409, &json!({"error": "position_taken"})), Tier2Answer::PositionTaken);
    assert_eq!(tier2_answer(403, &Value::Null), Tier2Answer::Transient);
    assert_eq!(tier2_answer(200, &Value::Null), Tier2Answer::Transient);
    assert!(place_kept(&json!({"status": "active"})));
    assert!(place_kept(&json!({"status": "queued", "restored": true})));
    assert!(!place_kept(&queued));
    assert!(!place_kept(&json!({"status": "queued", "restored": "true"})));

    let reply = |cookies: &[&str]| {
        let mut headers = http::HeaderMap::new();
        for c in cookies {
            headers.append(header::SET_COOKIE, c.parse().unwrap());
        }
        Reply { status: http::StatusCode::OK, headers, body: Bytes::new() }
    };
    let r = reply(&["other=1", "vwr_t2_e1=abc.def; Max-Age=600; Path=/; HttpOnly"]);
    assert_eq!(set_cookie(&r, "vwr_t2_e1"), Some(Some("abc.def".into())));
    assert_eq!(set_cookie(&reply(&["vwr_t2_e1=; Max-Age=0; Path=/"]), "vwr_t2_e1"), Some(None));
    assert_eq!(set_cookie(&reply(&["vwr_t2_e1=x; max-age=0"]), "vwr_t2_e1"), Some(None));
    assert_eq!(set_cookie(&reply(&["vwr_t2_e10=x"]), "vwr_t2_e1"), None);
}

// -- One visitor against a scripted vwr: what the place counters see --

/// A route's answer for its `n`-th call (from 0), or `None` for the happy path.
type Script = fn(&str, u32) -> Option<(u16, Value)>;

struct Mock {
    script: Script,
    calls: std::sync::Mutex<std::collections::BTreeMap<&'static str, u32>>,
}

fn token(claims: Value) -> String {
    format!("h.{}.s", URL_SAFE_NO_PAD.encode(claims.to_string()))
}

fn active() -> Value {
    serde_json::json!({"status": "active", "position": 0, "entryToken": token(serde_json::json!({"jti": "t2"})),
                       "nextPollSeconds": 1, "currentUsers": 1, "threshold": 10})
}

fn queued() -> Value {
    serde_json::json!({"status": "queued", "position": 1, "nextPollSeconds": 0.1, "currentUsers": 1, "threshold": 10})
}

fn admitted(pos: u64) -> Value {
    serde_json::json!({"admitted": true, "token": token(serde_json::json!({"jti": format!("j{pos}"), "pos": pos}))})
}

fn happy(route: &str) -> (u16, Value) {
    use serde_json::json;
    match route {
        "assign" => (
            200,
            json!({"requestId": "r1", "requestSecret": "s1", "position": 1, "servingCounter": 0,
                   "estimatedWaitSeconds": 1, "nextPollSeconds": 1, "state": "open"}),
        ),
        "status" => (200, json!({"state": "open", "servingCounter": 100})),
        "check" => (200, admitted(1)),
        "t2check" | "t2status" => (200, active()),
        _ => (200, json!({})),
    }
}

async fn mock(
    axum::extract::State(m): axum::extract::State<Arc<Mock>>,
    req: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = req.uri().path();
    let route = match req.method().as_str() {
        "POST" if path.starts_with("/vwr-api/vwr/assign/") => "assign",
        "GET" if path.starts_with("/vwr-api/vwr/status/") => "status",
        "GET" if path.starts_with("/vwr-api/vwr/check/") => "check",
        "GET" if path.starts_with("/events/") => "edge",
        "POST" if path.starts_with("/api/queue/check/") => "t2check",
        "GET" if path.starts_with("/api/queue/status/") => "t2status",
        "GET" if path.starts_with("/api/queue/line/") => "line",
        "GET" if path.starts_with("/api/seats/") => "seats",
        "POST" if path.starts_with("/api/queue/leave/") => "leave",
        _ => "other",
    };
    let n = {
        let mut calls = m.calls.lock().unwrap();
        let c = calls.entry(route).or_default();
        *c += 1;
        *c - 1
    };
    let (status, body) = (m.script)(route, n).unwrap_or_else(|| happy(route));
    let status = http::StatusCode::from_u16(status).unwrap();
    if body.is_string() {
        // Not JSON: a WAF's page.
        return (status, [(header::CONTENT_TYPE, "text/html")], body.as_str().unwrap_or_default().to_owned())
            .into_response();
    }
    let mut res = (status, axum::Json(body)).into_response();
    if route.starts_with("t2") {
        res.headers_mut().insert(header::SET_COOKIE, "vwr_t2_e1=id; Max-Age=600; Path=/".parse().unwrap());
    }
    res
}

/// One visitor (no abandonment) against `script`: its outcome and the shared counters.
async fn one_visitor(script: Script) -> (Outcome, Arc<Ctx>) {
    let m = Arc::new(Mock { script, calls: std::sync::Mutex::default() });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(mock).with_state(m);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let start = Instant::now();
    let ctx = Arc::new(Ctx {
        client: HttpClient::new(Duration::from_secs(5)).unwrap(),
        base: base.clone(),
        origin: base,
        event: "e1".into(),
        counters: Counters::default(),
        latencies: Latencies::default(),
        timeline: Timeline::default(),
        start,
        unix_start: 0.0,
        deadline: start + Duration::from_secs(60),
        dwell: Duration::from_millis(300),
        abandon_rate: 0.0,
        threshold: std::sync::atomic::AtomicU64::new(10),
        in_flight: tokio::sync::Semaphore::new(8),
        legacy_polling: false,
        legacy_tier2: false,
        no_show_rate: 0.0,
        proofs: super::super::ctx::Proofs::new(None, "e1").unwrap(),
        leaks: super::super::ctx::Leaks::default(),
    });
    let out = visit(Arc::clone(&ctx), 0, Duration::ZERO).await;
    (out, ctx)
}

fn losses(ctx: &Ctx) -> Vec<(&'static str, u64)> {
    Counters::counts(&ctx.counters.place_losses).into_iter().collect()
}

#[tokio::test]
async fn the_happy_path_loses_no_place() {
    let (out, ctx) = one_visitor(|_, _| None).await;
    assert_eq!((out.end, out.place_lost, out.position), (End::Done, None, Some(1)));
    assert_eq!(Counters::get(&ctx.counters.places_lost), 0);
    assert_eq!(Counters::get(&ctx.counters.transient_refusals), 0);
}

#[tokio::test]
async fn a_wafs_403_on_check_keeps_the_ticket() {
    let (out, ctx) = one_visitor(|route, n| {
        (route == "check" && n == 0).then(|| (403, Value::String("<html>403 ERROR</html>".into())))
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, None), "{:?}", losses(&ctx));
    assert_eq!(Counters::get(&ctx.counters.transient_refusals), 1);
    assert!(Counters::counts(&ctx.counters.verdicts).is_empty());
}

#[tokio::test]
async fn a_verdict_on_an_honest_visitors_ticket_is_a_place_lost() {
    let (out, ctx) = one_visitor(|route, n| match (route, n) {
        ("check", 0) => Some((410, serde_json::json!({"error": "request_id_expired", "message": "x"}))),
        ("assign", 1) => Some((
            200,
            serde_json::json!({"requestId": "r2", "requestSecret": "s2", "position": 7, "nextPollSeconds": 1, "state": "open"}),
        )),
        ("check", _) => Some((200, admitted(7))),
        _ => None,
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TICKET_REPLACED)));
    assert_eq!(out.position, Some(1), "the outcome keeps the first ticket's position");
    assert_eq!(losses(&ctx), [(cause::TICKET_REPLACED, 1)]);
    assert_eq!(
        Counters::counts(&ctx.counters.verdicts).into_iter().collect::<Vec<_>>(),
        [("request_id_expired", 1)]
    );
    assert_eq!(Counters::get(&ctx.counters.places_lost), 1);
}

#[tokio::test]
async fn a_check_answering_another_position_is_a_place_lost() {
    let (out, ctx) = one_visitor(|route, n| {
        (route == "check" && n == 0).then(|| {
            (
                200,
                serde_json::json!({"admitted": false, "position": 2, "state": "open", "nextPollSeconds": 1}),
            )
        })
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER1_POSITION_CHANGED)));
    assert_eq!(losses(&ctx), [(cause::TIER1_POSITION_CHANGED, 1)]);
}

#[tokio::test]
async fn an_admitted_ticket_answered_as_waiting_is_a_place_lost() {
    // The harness's second check of the admitted ticket.
    let (out, ctx) = one_visitor(|route, n| {
        (route == "check" && n == 1)
            .then(|| (200, serde_json::json!({"admitted": false, "position": 1, "state": "open"})))
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER1_UNADMITTED)), "{:?}", losses(&ctx));
}

#[tokio::test]
async fn tier2_dropping_a_visitor_who_never_left_must_give_the_place_back() {
    // Evicted while dwelling (its first heartbeat: not_in_queue); the check-in after it
    // lands in the line without `restored`.
    let (out, ctx) = one_visitor(|route, n| match (route, n) {
        ("t2status", 0) => Some((404, serde_json::json!({"error": "not_in_queue"}))),
        ("t2check", 1) => Some((200, queued())),
        _ => None,
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER2_NOT_RESTORED)));
    assert_eq!(Counters::get(&ctx.counters.rejoined_tier2), 1);
    assert_eq!(Counters::get(&ctx.counters.places_lost), 1);

    // The same with tier 2's word that the old place was given back.
    let (out, ctx) = one_visitor(|route, n| match (route, n) {
        ("t2status", 0) => Some((404, serde_json::json!({"error": "not_in_queue"}))),
        ("t2check", 1) => {
            let mut q = queued();
            q["restored"] = true.into();
            Some((200, q))
        }
        _ => None,
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, None), "{:?}", losses(&ctx));
    assert_eq!(Counters::get(&ctx.counters.rejoined_tier2), 1);

    // Or an `active` answer.
    let (out, _) = one_visitor(|route, n| {
        (route == "t2status" && n == 0).then(|| (404, serde_json::json!({"error": "not_in_queue"})))
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, None));
}

#[tokio::test]
async fn an_active_visitor_answered_queued_is_a_place_lost() {
    let (out, ctx) = one_visitor(|route, n| (route == "t2status" && n == 0).then(|| (200, queued()))).await;
    assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER2_DEMOTED)), "{:?}", losses(&ctx));
}

#[tokio::test]
async fn tier2_refusing_the_tier1_token_sends_the_visitor_to_check_its_ticket() {
    // A fresh token from tier 1: nothing lost.
    let (out, ctx) = one_visitor(|route, n| {
        (route == "t2check" && n == 0).then(|| (401, serde_json::json!({"error": "identity_required"})))
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, None), "{:?}", losses(&ctx));
    // Tier 1 ends the session of a visitor tier 2 was about to take: a new ticket, a
    // place lost.
    let (out, ctx) = one_visitor(|route, n| match (route, n) {
        ("t2check", 0) => Some((403, serde_json::json!({"error": "tier1_token_required"}))),
        ("check", 2) => Some((410, serde_json::json!({"error": "admission_expired"}))),
        _ => None,
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TICKET_REPLACED)));
    assert_eq!(
        Counters::counts(&ctx.counters.verdicts).into_iter().collect::<Vec<_>>(),
        [("admission_expired", 1)]
    );
}

#[tokio::test]
async fn another_identity_on_the_visitors_tier1_position_is_a_place_lost() {
    let (out, _) = one_visitor(|route, _| {
        (route == "t2check").then(|| (409, serde_json::json!({"error": "position_taken"})))
    })
    .await;
    assert_eq!((out.end, out.place_lost), (End::Lost("position_taken"), Some(cause::TIER2_POSITION_TAKEN)));
}

#[tokio::test]
async fn tier2_times_are_seconds_since_the_epoch() {
    // `checkedAt`, `updatedAt` and `admittedAt` are seconds with a millisecond fraction
    // (docs/api.md#times). A line document stamped a millisecond before the join says nobody
    // waits: it was read before the visitor joined, so it is read again, not believed.
    let (out, _) = one_visitor(|route, n| {
        let checked = 1_764_337_871.234;
        let doc = |updated: f64| {
            serde_json::json!({"eventId": "e1", "waiting": 0, "active": 1, "threshold": 10, "front": null,
                               "marks": [], "admittedPerSecond": 0.0, "estimateRate": null, "updatedAt": updated})
        };
        match (route, n) {
            ("t2check", 0) => Some((
                200,
                serde_json::json!({"status": "queued", "position": 1, "nextPollSeconds": 1, "currentUsers": 1,
                                   "threshold": 10, "lineScore": 500, "checkedAt": checked}),
            )),
            ("line", 0) => Some((200, doc(checked - 0.001))),
            ("line", _) => Some((200, doc(checked))),
            ("t2check", _) => {
                // Admitted two seconds before this answer.
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64());
                let mut a = active();
                a["admittedAt"] = (now - 2.0).into();
                Some((200, a))
            }
            _ => None,
        }
    })
    .await;
    assert_eq!(out.end, End::Done);
    assert_eq!(out.line_reads, 2, "the older document is read again");
    assert!(out.tier2_idle_s.is_some_and(|s| (1.5..10.0).contains(&s)), "{:?}", out.tier2_idle_s);
}
