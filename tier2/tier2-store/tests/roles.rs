//! Roles on the tier-2 admin router (docs/console.md#roles), in memory and on Redis: every
//! admin route against each role — allowed and carried out, or 403 `forbidden_role` with the
//! event's line and registration read back unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;
use vwr_core::EventId;
use vwr_core::admin_auth::{AdminAuth, AdminCaller, PrincipalPatterns, Role, VerifiedClaims};
use vwr_core::time::Clock;
use vwr_tier2::Tier2Clients;
use vwr_tier2::Tier2Service;
use vwr_tier2::http::{ADMIN_ROLES, admin_router};
use vwr_tier2::model::{LineOrder, LineScore, RegisterMode, Tier2Settings};
use vwr_tier2::store::AdmissionStore;

/// One admin route: method, router path, action, body, least role, success status.
type Case = (&'static str, &'static str, &'static str, Option<&'static str>, Role, u16);

/// Every tier-2 admin route.
const CASES: &[Case] = &[
    ("GET", "/api/queue/admin/status/{event_id}", "status", None, Role::Viewer, 200),
    ("GET", "/api/queue/admin/report/{event_id}", "report", None, Role::Viewer, 200),
    (
        "PUT",
        "/api/queue/admin/threshold/{event_id}",
        "threshold",
        Some(r#"{"threshold": 7}"#),
        Role::Operator,
        200,
    ),
    ("DELETE", "/api/queue/admin/event/{event_id}", "event", None, Role::Admin, 204),
];

async fn stores() -> Vec<(&'static str, Arc<dyn AdmissionStore>)> {
    let clock = common::manual_clock();
    vec![
        ("memory", Arc::new(common::memory(clock as Arc<dyn Clock>))),
        ("redis", Arc::new(common::redis().await)),
    ]
}

/// A registered event (threshold 2) with two people in line, and the admin router over it.
async fn fixture(store: &Arc<dyn AdmissionStore>) -> (Arc<Tier2Service>, Router, EventId) {
    let event = common::unique_event("roles");
    store.register(&event, 2, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    let settings = Tier2Settings::default();
    for (user, join) in [("a", "j1"), ("b", "j2")] {
        store.check(&event, user, LineScore::Arrival, join, &settings).await.unwrap();
    }
    let svc = Arc::new(common::service_with(Tier2Clients::new(Arc::clone(store)), settings));
    let router = admin_router(Arc::clone(&svc), AdminAuth::iam(PrincipalPatterns::default()))
        .fallback(vwr_core::error::not_found_fallback);
    (svc, router, event)
}

/// What an admin call could change: the event's figures and registration.
async fn snapshot(svc: &Tier2Service, event: &EventId) -> Value {
    serde_json::to_value(svc.admin_status(event).await.unwrap()).unwrap()
}

async fn send(
    router: &Router,
    method: &str,
    uri: &str,
    body: Option<&str>,
    who: impl Send + Sync + Clone + 'static,
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let mut req = req.body(Body::from(body.unwrap_or("").to_owned())).unwrap();
    req.extensions_mut().insert(who);
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// The console's sign-in with `role`, as API Gateway's JWT authorizer passes it.
fn signed_in(role: Role) -> VerifiedClaims {
    VerifiedClaims::from_strings([
        ("email".to_owned(), format!("{role}@example.com")),
        ("cognito:groups".to_owned(), format!("[{}]", role.group())),
    ])
}

#[test]
fn the_role_table_is_the_documented_one() {
    let table: BTreeSet<(&str, &str, Role)> = ADMIN_ROLES.iter().copied().collect();
    let cases: BTreeSet<(&str, &str, Role)> = CASES.iter().map(|c| (c.0, c.1, c.4)).collect();
    assert_eq!((table, ADMIN_ROLES.len()), (cases, CASES.len()));
}

#[tokio::test]
async fn every_admin_route_for_every_role() {
    for (name, store) in stores().await {
        for (method, _, action, body, least, ok) in CASES {
            for role in Role::ALL {
                let (svc, router, event) = fixture(&store).await;
                let uri = format!("/api/queue/admin/{action}/{event}");
                let what = format!("{name}: {method} {uri} as {role}");
                let before = snapshot(&svc, &event).await;
                let (status, res) = send(&router, method, &uri, *body, signed_in(role)).await;
                let after = snapshot(&svc, &event).await;
                if role < *least {
                    assert_eq!(status, StatusCode::FORBIDDEN, "{what}: {res}");
                    assert_eq!(res["error"], "forbidden_role", "{what}: {res}");
                    assert!(
                        res["message"].as_str().unwrap().contains(&format!("needs the {least} role")),
                        "{what}"
                    );
                    assert_eq!(after, before, "{what}: a refused call changed something");
                } else {
                    assert_eq!(status.as_u16(), *ok, "{what}: {res}");
                    match *action {
                        "threshold" => assert_eq!(after["threshold"], 7, "{what}: {after}"),
                        "event" => assert_eq!(after["registered"], false, "{what}: {after}"),
                        _ => assert_eq!(after, before, "{what}: a read changed something"),
                    }
                }
                store.unregister(&event).await.unwrap();
            }
        }
    }
}

/// IAM callers stay admins; a sign-in without one of vwr's groups reads nothing.
#[tokio::test]
async fn iam_is_admin_and_no_vwr_group_is_no_access() {
    for (name, store) in stores().await {
        let (svc, router, event) = fixture(&store).await;
        let before = snapshot(&svc, &event).await;
        let guest = VerifiedClaims::from_strings([
            ("email".to_owned(), "guest@example.com".to_owned()),
            ("cognito:groups".to_owned(), "[staff]".to_owned()),
        ]);
        let (status, res) =
            send(&router, "GET", &format!("/api/queue/admin/status/{event}"), None, guest).await;
        assert_eq!(
            (status, res["error"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden_role")),
            "{name}"
        );
        assert_eq!(snapshot(&svc, &event).await, before, "{name}");
        let iam = AdminCaller("arn:aws:iam::123456789012:user/ops".into());
        let (status, _) =
            send(&router, "DELETE", &format!("/api/queue/admin/event/{event}"), None, iam).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{name}");
    }
}
