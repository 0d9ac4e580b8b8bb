//! Roles on the tier-1 admin router (docs/console.md#roles), in-memory store: every admin
//! route against each role — allowed and carried out, or 403 `forbidden_role` with nothing
//! changed (state, passes and audit read back equal) — the audit naming the person, `whoami`,
//! and the three ways in (the console's verified claims, IAM, `vwr dev`'s bearer key or JWT).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use base64::Engine;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use vwr_core::admin_auth::{
    AdminAuth, AdminCaller, BearerTokenError, BearerTokenVerifier, Claims, PrincipalPatterns, Role,
    VerifiedClaims,
};
use vwr_core::time::ManualClock;
use vwr_tier1::Tier1Service;
use vwr_tier1::http::{ADMIN_ROLES, admin_router, public_router};
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{ConfigPatch, Message};
use vwr_tier1::service::JoinProof;

use common::{KEY, T0, ev};

/// Events of the fixture: e1 open (with a pass, two people in line), e4 on standby, e5 paused; e2 and e3 unknown.
const EVENTS: [&str; 5] = ["e1", "e2", "e3", "e4", "e5"];

struct Fixture {
    svc: Arc<Tier1Service>,
    router: Router,
    pass: String,
}

/// A fresh service and its routers, `auth` on the admin one.
async fn fixture(auth: AdminAuth) -> Fixture {
    let clock = Arc::new(ManualClock::new(T0));
    let svc = Arc::new(common::service(Arc::new(MemoryStore::new()), clock));
    let open = ConfigPatch { batch_size: Some(0), ..Default::default() };
    svc.activate(&ev("e1"), open, "setup").await.unwrap();
    let pass = svc.create_pass(&ev("e1"), "staff", 3600, "setup").await.unwrap().pass_id;
    // Two people in line: `advance` has someone to let through.
    for _ in 0..2 {
        svc.assign(&ev("e1"), &JoinProof::default()).await.unwrap();
    }
    svc.standby(&ev("e4"), "site-down".into(), ConfigPatch::default(), "setup").await.unwrap();
    svc.activate(&ev("e5"), open, "setup").await.unwrap();
    svc.pause(&ev("e5"), None::<Message>, "setup").await.unwrap();
    let router = public_router(Arc::clone(&svc))
        .merge(admin_router(Arc::clone(&svc), auth))
        .fallback(vwr_core::error::not_found_fallback);
    Fixture { svc, router, pass }
}

/// Everything an admin call could change: each event's status, passes and audit trail, and
/// the list of known events.
async fn snapshot(svc: &Tier1Service) -> Value {
    let mut out = serde_json::Map::new();
    for e in EVENTS {
        let e = ev(e);
        let status = svc.status(&e).await.map(|s| serde_json::to_value(s).unwrap()).unwrap_or(Value::Null);
        let passes = svc.passes(&e).await.map(|p| serde_json::to_value(p).unwrap()).unwrap_or(Value::Null);
        let audit = svc.audit(&e).await.map(|a| serde_json::to_value(a).unwrap()).unwrap_or(Value::Null);
        out.insert(e.to_string(), json!({"status": status, "passes": passes, "audit": audit}));
    }
    let known: Vec<String> =
        svc.store().list_active().await.unwrap().iter().map(|r| r.event.to_string()).collect();
    out.insert("known".into(), json!(known));
    Value::Object(out)
}

/// One admin route: method, router path, the path called (`{pass}` = the fixture's pass),
/// the body, the least role, the success status.
struct Case {
    method: &'static str,
    route: &'static str,
    uri: &'static str,
    body: Option<&'static str>,
    least: Role,
    ok: StatusCode,
}

const fn case(
    method: &'static str,
    route: &'static str,
    uri: &'static str,
    body: Option<&'static str>,
    least: Role,
    ok: u16,
) -> Case {
    let ok = match StatusCode::from_u16(ok) {
        Ok(s) => s,
        Err(_) => StatusCode::OK,
    };
    Case { method, route, uri, body, least, ok }
}

/// Every tier-1 admin route, with the least role docs/console.md#roles gives it.
const CASES: &[Case] = &[
    case("GET", "/api/admin/vwr/whoami", "/api/admin/vwr/whoami", None, Role::Viewer, 200),
    case("GET", "/api/admin/vwr/events", "/api/admin/vwr/events", None, Role::Viewer, 200),
    case("GET", "/api/admin/vwr/status/{event_id}", "/api/admin/vwr/status/e1", None, Role::Viewer, 200),
    case("GET", "/api/admin/vwr/audit/{event_id}", "/api/admin/vwr/audit/e1", None, Role::Viewer, 200),
    case("GET", "/api/admin/vwr/report/{event_id}", "/api/admin/vwr/report/e1", None, Role::Viewer, 200),
    case("GET", "/api/admin/vwr/pass/{event_id}", "/api/admin/vwr/pass/e1", None, Role::Viewer, 200),
    case(
        "POST",
        "/api/admin/vwr/pause/{event_id}",
        "/api/admin/vwr/pause/e1",
        Some("{}"),
        Role::Operator,
        200,
    ),
    case("POST", "/api/admin/vwr/resume/{event_id}", "/api/admin/vwr/resume/e5", None, Role::Operator, 200),
    case(
        "PUT",
        "/api/admin/vwr/message/{event_id}",
        "/api/admin/vwr/message/e1",
        Some(r#"{"message": {"en": "Back at noon"}}"#),
        Role::Operator,
        200,
    ),
    case(
        "POST",
        "/api/admin/vwr/advance/{event_id}",
        "/api/admin/vwr/advance/e1",
        Some(r#"{"by": 1}"#),
        Role::Operator,
        200,
    ),
    case(
        "PUT",
        "/api/admin/vwr/health/{event_id}",
        "/api/admin/vwr/health/e1",
        Some(r#"{"ok": false, "reason": "payments slow"}"#),
        Role::Operator,
        200,
    ),
    case(
        "POST",
        "/api/admin/vwr/pass/{event_id}",
        "/api/admin/vwr/pass/e1",
        Some(r#"{"label": "qa"}"#),
        Role::Operator,
        201,
    ),
    case(
        "DELETE",
        "/api/admin/vwr/pass/{event_id}/{pass_id}",
        "/api/admin/vwr/pass/e1/{pass}",
        None,
        Role::Operator,
        200,
    ),
    case(
        "POST",
        "/api/admin/vwr/activate/{event_id}",
        "/api/admin/vwr/activate/e2",
        Some("{}"),
        Role::Admin,
        200,
    ),
    case(
        "POST",
        "/api/admin/vwr/deactivate/{event_id}",
        "/api/admin/vwr/deactivate/e1",
        None,
        Role::Admin,
        200,
    ),
    case(
        "PUT",
        "/api/admin/vwr/schedule/{event_id}",
        "/api/admin/vwr/schedule/e3",
        Some(r#"{"prequeueAt": 1800000600, "openAt": 1800001200}"#),
        Role::Admin,
        200,
    ),
    case(
        "POST",
        "/api/admin/vwr/close/{event_id}",
        "/api/admin/vwr/close/e1",
        Some(r#"{"reason": "sold_out"}"#),
        Role::Admin,
        200,
    ),
    case(
        "PUT",
        "/api/admin/vwr/standby/{event_id}",
        "/api/admin/vwr/standby/e2",
        Some(r#"{"alarm": "site-down"}"#),
        Role::Admin,
        200,
    ),
    case("DELETE", "/api/admin/vwr/standby/{event_id}", "/api/admin/vwr/standby/e4", None, Role::Admin, 200),
    case("PUT", "/api/admin/vwr/page/{event_id}", "/api/admin/vwr/page/e1", Some("null"), Role::Admin, 200),
];

/// Whom the console signs in with `role`: their e-mail, and their groups as API Gateway's JWT
/// authorizer passes them (one string).
fn person(role: Role) -> (String, VerifiedClaims) {
    let name = format!("{role}@example.com");
    let claims = VerifiedClaims::from_strings([
        ("sub".to_owned(), format!("sub-{role}")),
        ("email".to_owned(), name.clone()),
        ("cognito:groups".to_owned(), format!("[staff {}]", role.group())),
    ]);
    (name, claims)
}

struct Res {
    status: StatusCode,
    body: Value,
}

async fn send(
    router: &Router,
    method: &str,
    uri: &str,
    body: Option<&str>,
    ext: impl FnOnce(&mut Request<Body>),
) -> Res {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let mut req = req.body(Body::from(body.unwrap_or("").to_owned())).unwrap();
    ext(&mut req);
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Res { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

/// The event a call acts on (`…/{action}/{eventId}[/…]`).
fn target(uri: &str) -> Option<&str> {
    uri.split('/').nth(5)
}

/// The table in the code names exactly the routes these tests call, with the same roles.
#[test]
fn the_role_table_is_the_documented_one() {
    let table: BTreeSet<(&str, &str, Role)> = ADMIN_ROLES.iter().copied().collect();
    let cases: BTreeSet<(&str, &str, Role)> = CASES.iter().map(|c| (c.method, c.route, c.least)).collect();
    assert_eq!(table, cases);
    assert_eq!(ADMIN_ROLES.len(), CASES.len(), "a route twice in the table");
}

/// Every admin route, each role: at or above the route's least role the call is carried out
/// and audited under the person's name; below it, 403 `forbidden_role` and nothing changed.
#[tokio::test]
async fn every_admin_route_for_every_role() {
    for c in CASES {
        for role in Role::ALL {
            let fx = fixture(AdminAuth::iam(PrincipalPatterns::default())).await;
            let uri = c.uri.replace("{pass}", &fx.pass);
            let (name, claims) = person(role);
            let before = snapshot(&fx.svc).await;
            let r = send(&fx.router, c.method, &uri, c.body, |req| {
                req.extensions_mut().insert(claims);
            })
            .await;
            let what = format!("{} {uri} as {role}", c.method);
            if role < c.least {
                assert_eq!(r.status, StatusCode::FORBIDDEN, "{what}: {}", r.body);
                assert_eq!(r.body["error"], "forbidden_role", "{what}: {}", r.body);
                let needs = format!("needs the {} role", c.least);
                assert!(r.body["message"].as_str().unwrap().contains(&needs), "{what}: {}", r.body);
                assert_eq!(snapshot(&fx.svc).await, before, "{what}: a refused call changed something");
                continue;
            }
            assert_eq!(r.status, c.ok, "{what}: {}", r.body);
            if c.method == "GET" {
                assert_eq!(snapshot(&fx.svc).await, before, "{what}: a read changed something");
                continue;
            }
            let event = ev(target(&uri).unwrap());
            let audit = fx.svc.audit(&event).await.unwrap();
            let last = audit.last().unwrap();
            assert_eq!(last.actor, name, "{what}: the audit names the person ({last:?})");
        }
    }
}

/// `whoami` answers the caller as the guard saw them, however they signed in.
#[tokio::test]
async fn whoami_for_each_way_in() {
    let fx = fixture(AdminAuth::iam(PrincipalPatterns::default())).await;
    let who = "/api/admin/vwr/whoami";
    let (_, claims) = person(Role::Operator);
    let r = send(&fx.router, "GET", who, None, |req| {
        req.extensions_mut().insert(claims);
    })
    .await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::OK, json!({"name": "operator@example.com", "role": "operator", "via": "oidc"}))
    );
    let arn = "arn:aws:sts::123456789012:assumed-role/ops/alice";
    let r = send(&fx.router, "GET", who, None, |req| {
        req.extensions_mut().insert(AdminCaller(arn.into()));
    })
    .await;
    assert_eq!(r.body, json!({"name": arn, "role": "admin", "via": "iam"}));
    // Neither IAM nor a sign-in: refused by the guard.
    let r = send(&fx.router, "GET", who, None, |_| {}).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
}

/// IAM callers stay admins, named by their ARN in the audit; a signed-in person without one of
/// vwr's groups gets nothing, not even reads.
#[tokio::test]
async fn iam_is_admin_and_no_vwr_group_is_no_access() {
    let fx = fixture(AdminAuth::iam(PrincipalPatterns::default())).await;
    let arn = "arn:aws:iam::123456789012:user/ops";
    let r = send(&fx.router, "POST", "/api/admin/vwr/deactivate/e1", None, |req| {
        req.extensions_mut().insert(AdminCaller(arn.into()));
    })
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(fx.svc.audit(&ev("e1")).await.unwrap().last().unwrap().actor, arn);

    let before = snapshot(&fx.svc).await;
    for (method, uri) in [("GET", "/api/admin/vwr/status/e1"), ("POST", "/api/admin/vwr/activate/e1")] {
        let r = send(&fx.router, method, uri, Some("{}"), |req| {
            req.extensions_mut().insert(VerifiedClaims::from_strings([
                ("email".to_owned(), "guest@example.com".to_owned()),
                ("cognito:groups".to_owned(), "[staff]".to_owned()),
            ]));
        })
        .await;
        assert_eq!(
            (r.status, r.body["error"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden_role")),
            "{uri}"
        );
    }
    assert_eq!(snapshot(&fx.svc).await, before);
}

/// `vwr dev`: the admin key is the `dev` admin; a bearer JWT goes to the plugged verifier and
/// its claims give the role as API Gateway's do.
struct SignedBy(&'static str);

#[async_trait::async_trait]
impl BearerTokenVerifier for SignedBy {
    async fn verify(&self, token: &str) -> Result<Claims, BearerTokenError> {
        let parts: Vec<&str> = token.split('.').collect();
        if parts.get(2) != Some(&self.0) {
            return Err(BearerTokenError::Invalid("bad signature".into()));
        }
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(parts[1]).unwrap();
        Ok(serde_json::from_slice(&raw).unwrap())
    }
}

fn token(claims: Value, sig: &str) -> String {
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.{sig}", b64(json!({"alg": "ES256", "typ": "JWT"})), b64(claims))
}

#[tokio::test]
async fn dev_bearer_key_and_bearer_jwts() {
    let auth = AdminAuth::bearer(KEY).unwrap().with_verifier(Arc::new(SignedBy("devsig")));
    let fx = fixture(auth).await;
    let bearer = |v: String| {
        move |req: &mut Request<Body>| {
            req.headers_mut().insert(header::AUTHORIZATION, format!("Bearer {v}").parse().unwrap());
        }
    };
    let r = send(&fx.router, "GET", "/api/admin/vwr/whoami", None, bearer(KEY.into())).await;
    assert_eq!(r.body, json!({"name": "dev", "role": "admin", "via": "bearer"}));
    let r = send(&fx.router, "POST", "/api/admin/vwr/pause/e1", Some("{}"), bearer(KEY.into())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(fx.svc.audit(&ev("e1")).await.unwrap().last().unwrap().actor, "dev");

    let viewer = token(json!({"sub": "s1", "name": "Vic", "cognito:groups": ["vwr-viewer"]}), "devsig");
    let r = send(&fx.router, "GET", "/api/admin/vwr/whoami", None, bearer(viewer.clone())).await;
    assert_eq!(r.body, json!({"name": "Vic", "role": "viewer", "via": "oidc"}));
    let before = snapshot(&fx.svc).await;
    let r = send(&fx.router, "POST", "/api/admin/vwr/resume/e1", None, bearer(viewer)).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden_role")));
    assert_eq!(snapshot(&fx.svc).await, before);

    let forged = token(json!({"sub": "s1", "cognito:groups": ["vwr-admin"]}), "other");
    let r = send(&fx.router, "POST", "/api/admin/vwr/resume/e1", None, bearer(forged)).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));
    assert_eq!(snapshot(&fx.svc).await, before);
}
