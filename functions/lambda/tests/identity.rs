//! The Lambda entry's identity layer on real API Gateway events (payload 2.0): the JWT
//! authorizer's claims reach the admin guard, which makes them a person and a role
//! (docs/console.md#roles); the IAM caller stays an admin; the claims' subject is also the
//! upstream user tier 2 reads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use axum::routing::get;
use axum::{Extension, Json, Router, middleware};
use serde_json::{Value, json};
use tower::ServiceExt;
use vwr_core::admin_auth::{AdminIdentity, require_admin};
use vwr_core::config::Env;
use vwr_core::identity::UpstreamUser;

/// An HTTP API event for `GET /who` with `authorizer` as its request context's authorizer.
fn event(authorizer: Option<Value>) -> String {
    let mut ctx = json!({
        "accountId": "123456789012", "apiId": "api", "domainName": "example.com", "domainPrefix": "api",
        "http": {"method": "GET", "path": "/who", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "test"},
        "requestId": "r1", "routeKey": "GET /who", "stage": "$default", "time": "25/Nov/2026:00:00:00 +0000", "timeEpoch": 0
    });
    if let Some(a) = authorizer {
        ctx["authorizer"] = a;
    }
    json!({"version": "2.0", "routeKey": "GET /who", "rawPath": "/who", "rawQueryString": "",
           "headers": {"host": "example.com"}, "requestContext": ctx, "isBase64Encoded": false})
    .to_string()
}

/// The console API's JWT authorizer: every claim a string, the groups as `[a b]`.
fn jwt(groups: &str) -> Value {
    json!({"jwt": {"claims": {
        "sub": "5f1c-user", "email": "ops@example.com", "cognito:groups": groups, "groups": "[vwr-viewer]"
    }, "scopes": null}})
}

/// Answers the admin identity and the upstream user, behind the guard of the Lambdas'
/// configuration (`env`), behind the identity layer as `vwr_lambda::serve` runs it.
async fn answer(env: &Env, authorizer: Option<Value>) -> (u16, Value) {
    let auth = vwr_lambda::secrets::iam_admin_auth(env).unwrap();
    let router = Router::new()
        .route(
            "/who",
            get(
                |Extension(who): Extension<AdminIdentity>, user: Option<Extension<UpstreamUser>>| async move {
                    Json(json!({"who": who, "upstream": user.map(|Extension(UpstreamUser(u))| u)}))
                },
            ),
        )
        .layer(middleware::from_fn_with_state(auth, require_admin))
        .layer(middleware::from_fn(vwr_lambda::identity_layer));
    let req = lambda_http::request::from_str(&event(authorizer)).unwrap();
    let res = router.oneshot(req).await.unwrap();
    let status = res.status().as_u16();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn jwt_claims_become_the_person_and_role() {
    let env = Env::default();
    let (status, body) = answer(&env, Some(jwt("[staff vwr-operator vwr-viewer]"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["who"], json!({"name": "ops@example.com", "role": "operator", "via": "oidc"}));
    assert_eq!(body["upstream"], "5f1c-user");

    // No vwr group: refused.
    let (status, body) = answer(&env, Some(jwt("[staff]"))).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("forbidden_role")), "{body}");

    // VWR_ADMIN_GROUPS_CLAIM names another claim.
    let env = Env::from_pairs([("VWR_ADMIN_GROUPS_CLAIM", "groups")]);
    let (status, body) = answer(&env, Some(jwt("[vwr-admin]"))).await;
    assert_eq!((status, &body["who"]["role"]), (200, &json!("viewer")), "{body}");
}

#[tokio::test]
async fn iam_stays_admin_and_no_authorizer_is_refused() {
    let arn = "arn:aws:sts::123456789012:assumed-role/ops/alice";
    let iam = json!({"iam": {"accessKey": "AKIA", "accountId": "123456789012", "callerId": "AROA",
        "principalOrgId": null, "userArn": arn, "userId": "AROA:alice"}});
    let (status, body) = answer(&Env::default(), Some(iam)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["who"], json!({"name": arn, "role": "admin", "via": "iam"}));
    let (status, body) = answer(&Env::default(), None).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("forbidden")), "{body}");
}
