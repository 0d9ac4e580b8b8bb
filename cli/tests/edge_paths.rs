//! `vwr dev`'s native edge check against the shared path vectors (`edge/test/path-vectors.json`,
//! also run through both shipped JS builds by `edge/test/path-vectors.test.mjs`): the same
//! status, the same gated event, the same `Location` / `redirectTo`, for every vector.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use vwr_cli::dev::behaviours::Behaviours;
use vwr_cli::dev::edge::{EdgeRequest, EdgeState, Gate, demo_rules, edge_check, gate};
use vwr_core::EventId;
use vwr_core::time::ManualClock;
use vwr_core::token::Tier1Claims;
use vwr_tier1::Tier1Service;
use vwr_tier1::model::ConfigPatch;

const NOW: u64 = 1_800_000_000;

fn vectors() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../edge/test/path-vectors.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(doc["cookiePrefix"], "vwr_t1_");
    let rules = doc["rules"].as_array().unwrap();
    assert_eq!(rules.len(), demo_rules().len(), "the vectors' rules are the demo layout");
    doc["vectors"].as_array().unwrap().clone()
}

fn encode_component(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn service(active: &[EventId]) -> Arc<Tier1Service> {
    let svc = common::memory_tier1(Arc::new(ManualClock::new(NOW)));
    for e in active {
        svc.activate(e, ConfigPatch::default(), "test").await.unwrap();
    }
    Arc::new(svc)
}

/// The edge check's state: tier 1 and the shipped behaviours.
fn edge_state(svc: &Arc<Tier1Service>) -> EdgeState {
    EdgeState { tier1: Arc::clone(svc), behaviours: Arc::new(Behaviours::shipped().unwrap()) }
}

fn pass_for(svc: &Tier1Service, event: &EventId) -> String {
    let c = Tier1Claims {
        iss: "vwr".into(),
        aud: "vwr-edge".into(),
        sub: "v1.t1.vector.mac".into(),
        eid: event.to_string(),
        pos: 1,
        tier: 1,
        iat: NOW,
        nbf: NOW,
        exp: NOW + 600,
        jti: "j".into(),
        t2: None,
    };
    format!("vwr_t1_{event}={}", svc.tokens().sign(&c).unwrap())
}

#[tokio::test]
async fn native_check_decides_every_path_vector_as_the_js() {
    let mut whole = 0;
    for v in vectors() {
        let name = v["name"].as_str().unwrap();
        let uri = v["uri"].as_str().unwrap();
        let query = v["query"].as_str().unwrap_or_default();
        let accept = v["accept"].as_str().unwrap_or_default();
        let active: Vec<EventId> = v["active"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| EventId::parse(a.as_str().unwrap()).unwrap())
            .collect();
        let want_status = v["expect"]["status"].as_u64();
        let want_event = v["expect"]["event"].as_str();
        // The decision itself.
        let got = gate(&demo_rules(), &active, &EdgeRequest::new(uri, query, accept));
        match (&got, want_status, want_event) {
            (Gate::BadPath, Some(400), _) => {}
            (Gate::Event(e), _, Some(want)) if e.as_str() == want => {}
            (Gate::Pass, None, None) => {}
            _ => panic!("{name}: gate {got:?}, want status {want_status:?} event {want_event:?}"),
        }
        // The whole middleware, where the raw path is a valid HTTP request target.
        let target = if query.is_empty() { uri.to_owned() } else { format!("{uri}?{query}") };
        let Ok(parsed) = target.parse::<http::Uri>() else { continue };
        whole += 1;
        let svc = service(&active).await;
        let router = Router::new()
            .fallback(|| async { "origin" })
            .layer(axum::middleware::from_fn_with_state(edge_state(&svc), edge_check));
        let mut req = Request::get(parsed);
        if !accept.is_empty() {
            req = req.header(header::ACCEPT, accept);
        }
        if v["cookie"] == "valid" {
            let cookies: Vec<String> = active.iter().map(|e| pass_for(&svc, e)).collect();
            req = req.header(header::COOKIE, cookies.join("; "));
        }
        let res = router.oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        let status = res.status();
        let location = res.headers().get(header::LOCATION).map(|l| l.to_str().unwrap().to_owned());
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let to = want_event.map(|e| format!("/vwr/{e}?next={}", encode_component(&target)));
        match want_status {
            None => assert_eq!((status, &body[..]), (StatusCode::OK, &b"origin"[..]), "{name}"),
            Some(302) => {
                assert_eq!(status, StatusCode::FOUND, "{name}");
                assert_eq!(location, to, "{name}");
            }
            Some(403) => {
                assert_eq!(status, StatusCode::FORBIDDEN, "{name}");
                let j: Value = serde_json::from_slice(&body).unwrap();
                assert_eq!(j["error"], "waiting_room_token_required", "{name}");
                assert_eq!(j["redirectTo"].as_str().map(str::to_owned), to, "{name}");
            }
            Some(400) => assert_eq!(status, StatusCode::BAD_REQUEST, "{name}"),
            other => panic!("{name}: unexpected status in the vector: {other:?}"),
        }
    }
    assert!(whole > 60, "only {whole} vectors ran through the middleware");
}

/// The header names starting with `x-vwr-` that reached the origin, sorted and joined.
async fn origin_sees_x_vwr(headers: http::HeaderMap) -> String {
    let mut names: Vec<&str> =
        headers.keys().map(|k| k.as_str()).filter(|n| n.starts_with("x-vwr-")).collect();
    names.sort_unstable();
    names.join(",")
}

#[tokio::test]
async fn native_check_strips_viewer_x_vwr_headers_where_the_verifier_runs() {
    let e1 = EventId::parse("e1").unwrap();
    let svc = service(std::slice::from_ref(&e1)).await;
    let router = Router::new()
        .fallback(origin_sees_x_vwr)
        .layer(axum::middleware::from_fn_with_state(edge_state(&svc), edge_check));
    let all = "x-vwr-event,x-vwr-origin-secret,x-vwr-request-secret,x-vwr-token,x-vwr-user";
    // (path, what the origin sees): the behaviours without the verifier (/vwr/*, /vwr-api/*,
    // /api/queue/*, spelled exactly as CloudFront's case-sensitive patterns; behaviours.json of
    // terraform/modules/edge) keep them; every other path is the site's or a protected API's,
    // where the deployed verifier runs.
    let cases = [
        ("/api/seats/e1/A1", ""),
        ("/events/e1", ""),
        ("/about", ""),
        ("/events/off", ""),
        ("/vwr/e1/..", all),
        ("/%76wr-api/vwr/check/e1/x", ""),
        ("/API/queue/status/e1", ""),
        ("/vwr-api/vwr/check/e1/x", all),
        ("/vwr-api/vwr/release/e1", all),
        ("/api/queue/status/e1", all),
        ("/vwr/e1", all),
    ];
    for (path, want) in cases {
        let req = Request::get(path)
            .header(header::COOKIE, pass_for(&svc, &e1))
            .header("X-VWR-User", "admin")
            .header("x-vwr-event", "e2")
            .header("x-vwr-origin-secret", "guess")
            .header("x-vwr-token", "t")
            .header("x-vwr-request-secret", "s")
            .header("x-other", "kept")
            .body(Body::empty())
            .unwrap();
        let res = router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(std::str::from_utf8(&body).unwrap(), want, "{path}");
    }
}
