//! Roles on the tier-1 admin router over DynamoDB (moto server; docs/console.md#roles): a call
//! outside the caller's role is 403 `forbidden_role` and the stored event, its passes and its
//! audit trail read back equal; a call within it is carried out and audited under the
//! person's name. Every route against every role runs in memory (functions/tier1/tests/roles.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use common::ev;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use vwr_core::admin_auth::{AdminAuth, PrincipalPatterns, Role, VerifiedClaims};
use vwr_core::time::ManualClock;
use vwr_tier1::Tier1Service;
use vwr_tier1::model::ConfigPatch;
use vwr_tier1::service::JoinProof;

const T0: u64 = 1_800_000_000;

async fn snapshot(svc: &Tier1Service) -> Value {
    let e1 = ev("e1");
    serde_json::json!({
        "status": serde_json::to_value(svc.status(&e1).await.unwrap()).unwrap(),
        "passes": serde_json::to_value(svc.passes(&e1).await.unwrap()).unwrap(),
        "audit": serde_json::to_value(svc.audit(&e1).await.unwrap()).unwrap(),
    })
}

async fn call(router: &Router, method: &str, action: &str, body: &str, role: Role) -> (StatusCode, Value) {
    let claims = VerifiedClaims::from_strings([
        ("email".to_owned(), format!("{role}@example.com")),
        ("cognito:groups".to_owned(), format!("[{}]", role.group())),
    ]);
    let mut req = Request::builder()
        .method(method)
        .uri(format!("/api/admin/vwr/{action}/e1"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    req.extensions_mut().insert(claims);
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn refused_calls_change_nothing_and_the_audit_names_the_person_on_dynamodb() {
    let store = Arc::new(common::dynamo_store("roles").await);
    let svc = Arc::new(common::service(store, Arc::new(ManualClock::new(T0))));
    let e1 = ev("e1");
    svc.activate(&e1, ConfigPatch { batch_size: Some(0), ..Default::default() }, "setup").await.unwrap();
    for _ in 0..2 {
        svc.assign(&e1, &JoinProof::default()).await.unwrap();
    }
    let router =
        vwr_tier1::http::admin_router(Arc::clone(&svc), AdminAuth::iam(PrincipalPatterns::default()));

    // A viewer's writes and an operator's admin-only ones: refused, nothing stored.
    let before = snapshot(&svc).await;
    for (role, method, action, body) in [
        (Role::Viewer, "POST", "pause", "{}"),
        (Role::Viewer, "POST", "advance", r#"{"by": 1}"#),
        (Role::Viewer, "POST", "pass", r#"{"label": "qa"}"#),
        (Role::Operator, "POST", "close", r#"{"reason": "ended"}"#),
        (Role::Operator, "POST", "deactivate", ""),
        (Role::Operator, "PUT", "page", "null"),
    ] {
        let (status, res) = call(&router, method, action, body, role).await;
        assert_eq!(
            (status, res["error"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden_role")),
            "{action}"
        );
        assert_eq!(snapshot(&svc).await, before, "{role} {action} changed the stored event");
    }

    // Within the role: done, and the trail names who did it.
    for (role, method, action, body) in [
        (Role::Operator, "POST", "advance", r#"{"by": 1}"#),
        (Role::Operator, "POST", "pause", "{}"),
        (Role::Admin, "POST", "close", r#"{"reason": "ended"}"#),
    ] {
        let (status, res) = call(&router, method, action, body, role).await;
        assert_eq!(status, StatusCode::OK, "{action}: {res}");
        let last = svc.audit(&e1).await.unwrap().pop().unwrap();
        assert_eq!(last.actor, format!("{role}@example.com"), "{action}: {last:?}");
    }
    assert_eq!(svc.status(&e1).await.unwrap().serving_counter, 1);
}
