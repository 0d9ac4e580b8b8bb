//! The real Lambda binaries (debug builds) served events by a fake Lambda Runtime API, with
//! DynamoDB on moto and Redis: config loading, the lambda_http adapter and routing, the IAM
//! check of the admin API, the scheduled advancer and worker, and the authorizer.
//! Build them first: `cargo build --workspace --bins` (tests/run.sh does).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use vwr_core::{EventId, HmacKeyring};
use vwr_lambda_entry::fake_runtime::FakeRuntime;
use vwr_tier1::store::PositionStore;
use vwr_tier1_store::dynamo::DynamoStore;

fn binary(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let p = target.join("debug").join(name);
    assert!(p.exists(), "{} is not built: run `cargo build --workspace --bins`", p.display());
    p
}

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(name: &str, rt: &FakeRuntime, env: &[(&str, String)]) -> Proc {
    let mut cmd = Command::new(binary(name));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in rt.lambda_env() {
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    Proc(cmd.spawn().unwrap())
}

fn moto() -> String {
    std::env::var("VWR_TEST_AWS_ENDPOINT").expect("VWR_TEST_AWS_ENDPOINT (tests/run.sh starts moto)")
}

/// An API Gateway HTTP API (payload 2.0) event.
fn http_event(method: &str, path: &str, iam_user: Option<&str>) -> Value {
    let mut ctx = json!({
        "accountId": "000000000000", "apiId": "api", "domainName": "example.com", "domainPrefix": "api",
        "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "test"},
        "requestId": "r1", "routeKey": "$default", "stage": "$default", "time": "25/Nov/2026:00:00:00 +0000", "timeEpoch": 0
    });
    if let Some(arn) = iam_user {
        ctx["authorizer"] = json!({"iam": {"accessKey": "AKIA", "accountId": "000000000000", "callerId": "AIDA",
            "principalOrgId": null, "userArn": arn, "userId": "AIDA"}});
    }
    json!({"version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
           "headers": {"host": "example.com", "content-type": "application/json"},
           "requestContext": ctx, "isBase64Encoded": false, "body": ""})
}

/// [`http_event`] through the console API: its JWT authorizer verified a token of `email`
/// with the groups `groups` (claims as strings, an array as `[a b]`), and `body`.
fn console_event(method: &str, path: &str, email: &str, groups: &str, body: &str) -> Value {
    let mut e = http_event(method, path, None);
    e["requestContext"]["authorizer"] = json!({"jwt": {"claims": {
        "sub": "0c5e-user", "email": email, "cognito:groups": groups, "token_use": "id"
    }, "scopes": null}});
    e["body"] = json!(body);
    e
}

async fn table() -> (DynamoStore, String) {
    let creds = aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "t");
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .endpoint_url(moto())
        .build();
    let name = format!("lambda-{}-{}", std::process::id(), vwr_core::time::now_millis());
    let store = DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(conf), name.clone());
    store.ensure_table().await.unwrap();
    (store, name)
}

fn tier1_env(table: &str, keys: &HmacKeyring) -> Vec<(&'static str, String)> {
    vec![("AWS_ENDPOINT_URL", moto()), ("VWR_TABLE", table.into()), ("VWR_TIER1_KEYS", keys.to_text())]
}

fn status_and_body(reply: &Value) -> (u64, Value) {
    let body =
        reply["body"].as_str().map(|b| serde_json::from_str(b).unwrap_or(Value::Null)).unwrap_or(Value::Null);
    (reply["statusCode"].as_u64().unwrap_or(0), body)
}

#[tokio::test]
async fn tier1_api_admin_and_advancer_lambdas() {
    let (store, table) = table().await;
    let keys = HmacKeyring::generate("lk").unwrap();
    let e1 = EventId::parse("e1").unwrap();
    let patch = vwr_tier1::model::ConfigPatch {
        batch_size: Some(2),
        interval_seconds: Some(1),
        ..Default::default()
    };
    let open = vwr_tier1::lifecycle::Action::Activate { patch, sealed: None };
    vwr_tier1::lifecycle::apply_to(&store, &e1, &open, "test", vwr_core::time::now_secs()).await.unwrap();

    // The public API: assign twice, then a bad event id.
    let rt = FakeRuntime::start(
        vec![
            http_event("POST", "/vwr/assign/e1", None),
            http_event("POST", "/vwr/assign/e1", None),
            http_event("POST", "/vwr/assign/x.y", None),
        ],
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let _api = spawn("vwr-tier1-api", &rt, &tier1_env(&table, &keys));
    let replies = rt.replies(3, Duration::from_secs(30)).await;
    assert_eq!(replies.len(), 3, "{replies:?}");
    let (s, b) = status_and_body(&replies[0].1);
    assert_eq!((s, b["position"].as_u64()), (200, Some(1)), "{replies:?}");
    assert_eq!(status_and_body(&replies[1].1).1["position"], 2);
    let (s, b) = status_and_body(&replies[2].1);
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_event_id")));

    // The admin API: refused without an IAM identity, served with one; through the console
    // API, the JWT authorizer's claims give the person and the role (docs/console.md#roles).
    let viewer = |method: &str, path: &str, body: &str| {
        console_event(method, path, "vic@example.com", "[staff vwr-viewer]", body)
    };
    let rt = FakeRuntime::start(
        vec![
            http_event("GET", "/api/admin/vwr/events", None),
            http_event("GET", "/api/admin/vwr/status/e1", Some("arn:aws:iam::000000000000:user/ops")),
            viewer("GET", "/api/admin/vwr/whoami", ""),
            viewer("POST", "/api/admin/vwr/pause/e1", "{}"),
            console_event("GET", "/api/admin/vwr/status/e1", "guest@example.com", "[staff]", ""),
        ],
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let _admin = spawn("vwr-tier1-admin", &rt, &tier1_env(&table, &keys));
    let replies = rt.replies(5, Duration::from_secs(30)).await;
    assert_eq!(status_and_body(&replies[0].1).0, 403, "{replies:?}");
    let (s, b) = status_and_body(&replies[1].1);
    assert_eq!((s, b["issued"].as_u64()), (200, Some(2)), "{replies:?}");
    let (s, b) = status_and_body(&replies[2].1);
    assert_eq!((s, b), (200, json!({"name": "vic@example.com", "role": "viewer", "via": "oidc"})));
    let (s, b) = status_and_body(&replies[3].1);
    assert_eq!((s, b["error"].as_str()), (403, Some("forbidden_role")), "{replies:?}");
    let (s, b) = status_and_body(&replies[4].1);
    assert_eq!((s, b["error"].as_str()), (403, Some("forbidden_role")), "{replies:?}");

    // The viewer's pause changed nothing: the event is open, and the advancer serves it.
    // The advancer: one scheduled invocation with a short deadline raises the counter.
    let rt =
        FakeRuntime::start(vec![json!({"source": "aws.scheduler"})], Duration::from_secs(6)).await.unwrap();
    let _adv = spawn("vwr-tier1-advancer", &rt, &tier1_env(&table, &keys));
    let replies = rt.replies(1, Duration::from_secs(30)).await;
    assert_eq!(replies.first().map(|r| r.0.as_str()), Some("response"), "{replies:?}");
    assert!(replies[0].1["ticks"].as_u64().unwrap_or(0) >= 1, "{replies:?}");
    let rec = store.get_event(&e1).await.unwrap().unwrap();
    assert_eq!(rec.serving_counter, 2, "the advancer served both issued positions");
}

/// Every log line written during an invocation carries the runtime's request id
/// (`span.requestId`), so a CloudWatch line leads back to its request.
#[tokio::test]
async fn log_lines_carry_the_request_id() {
    let (store, table) = table().await;
    let keys = HmacKeyring::generate("lk").unwrap();
    let e1 = EventId::parse("e1").unwrap();
    let open = vwr_tier1::lifecycle::Action::Activate { patch: Default::default(), sealed: None };
    vwr_tier1::lifecycle::apply_to(&store, &e1, &open, "test", vwr_core::time::now_secs()).await.unwrap();
    let rt = FakeRuntime::start(vec![http_event("POST", "/vwr/assign/e1", None)], Duration::from_secs(30))
        .await
        .unwrap();
    let log = std::env::temp_dir().join(format!(
        "vwr-entry-log-{}-{}",
        std::process::id(),
        vwr_core::time::now_millis()
    ));
    let mut env = tier1_env(&table, &keys);
    env.push(("RUST_LOG", "debug".into()));
    let mut cmd = Command::new(binary("vwr-tier1-api"));
    cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in
        [("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"), ("AWS_REGION", "us-east-1")]
    {
        cmd.env(k, v);
    }
    for (k, v) in rt.lambda_env().into_iter().chain(env) {
        cmd.env(k, v);
    }
    cmd.stdout(std::fs::File::create(&log).unwrap()).stderr(Stdio::null());
    let proc = Proc(cmd.spawn().unwrap());
    let replies = rt.replies(1, Duration::from_secs(30)).await;
    assert_eq!(status_and_body(&replies[0].1).0, 200, "{replies:?}");
    drop(proc);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let line = text
        .lines()
        .find(|l| l.contains("tier1.assigned"))
        .unwrap_or_else(|| panic!("no tier1.assigned line in {text}"));
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["span"]["requestId"], "req-1", "{line}");
}

/// Bad configuration stops the function at start-up with a log line naming the variable
/// (Lambda then reports the init failure; the line is what shows in CloudWatch).
#[tokio::test]
async fn a_lambda_with_bad_configuration_fails_at_start_with_a_clear_log() {
    let rt = FakeRuntime::start(vec![http_event("POST", "/vwr/assign/e1", None)], Duration::from_secs(10))
        .await
        .unwrap();
    let mut cmd = Command::new(binary("vwr-tier1-api"));
    cmd.env_clear().env("VWR_TIER1_KEYS", "k1:too-short").env("AWS_REGION", "us-east-1");
    for (k, v) in rt.lambda_env() {
        cmd.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().unwrap();
    assert!(!out.status.success());
    let log = String::from_utf8_lossy(&out.stdout);
    let line = log
        .lines()
        .find(|l| l.contains("startup_failed"))
        .unwrap_or_else(|| panic!("no startup_failed line in {log}"));
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["event"], "startup_failed");
    assert!(v["error"].as_str().unwrap().contains("VWR_TIER1_KEYS"), "{line}");
    assert!(rt.replies(1, Duration::from_millis(200)).await.is_empty(), "no invocation was served");
}

/// Review finding F12: the tier-2 API and authorizer read the tier-1 master keys although they
/// only verify. Given them, they now refuse to start, naming the variable; they take the
/// derived link keys only (docs/tokens.md#place-proofs).
#[tokio::test]
async fn tier2_lambdas_refuse_the_tier1_master_keys() {
    let master = vwr_core::HmacKeyring::generate("k1").unwrap().to_text();
    let jwks = serde_json::to_string(&vwr_core::EcKeyring::generate("ek").unwrap().jwks()).unwrap();
    for (name, extra) in [
        ("vwr-tier2-api", ("VWR_TIER2_KEYS", vwr_core::EcKeyring::generate("ek").unwrap().to_text())),
        ("vwr-tier2-authorizer", ("VWR_TIER2_JWKS", jwks.clone())),
    ] {
        let rt = FakeRuntime::start(vec![], Duration::from_secs(10)).await.unwrap();
        let mut cmd = Command::new(binary(name));
        cmd.env_clear()
            .env("VWR_TIER1_KEYS", &master)
            .env(extra.0, &extra.1)
            .env("VWR_REDIS_URL", "redis://127.0.0.1:1")
            .env("AWS_REGION", "us-east-1");
        for (k, v) in rt.lambda_env() {
            cmd.env(k, v);
        }
        let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().unwrap();
        assert!(!out.status.success(), "{name} started with the master keys");
        let log = String::from_utf8_lossy(&out.stdout);
        let line = log
            .lines()
            .find(|l| l.contains("startup_failed"))
            .unwrap_or_else(|| panic!("{name}: no startup_failed line in {log}"));
        let v: Value = serde_json::from_str(line).unwrap();
        let error = v["error"].as_str().unwrap();
        assert!(error.contains("VWR_TIER1_KEYS") && error.contains("VWR_TIER1_LINK_SECRET_ID"), "{line}");
    }
}

#[tokio::test]
async fn tier2_api_worker_and_authorizer_lambdas() {
    let redis = std::env::var("VWR_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    // Database 8 belongs to this test (the worker serves every registered event).
    let redis = format!("{}/8", redis.trim_end_matches('/'));
    let entry = vwr_core::EcKeyring::generate("ek").unwrap();
    let env = vec![("VWR_REDIS_URL", redis.clone()), ("VWR_TIER2_KEYS", entry.to_text())];
    let store =
        vwr_tier2_store::redis::RedisStore::connect(&vwr_tier2_store::redis::RedisConfig::single(&redis))
            .await
            .unwrap();
    use vwr_tier2::store::AdmissionStore;
    let event = EventId::parse(&format!("l{}", std::process::id())).unwrap();
    store
        .register(&event, 1, vwr_tier2::model::LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin)
        .await
        .unwrap();

    // API: the JWKS, and the admin route refused without IAM.
    let rt = FakeRuntime::start(
        vec![
            http_event("GET", "/api/queue/.well-known/jwks.json", None),
            http_event("GET", &format!("/api/queue/admin/status/{event}"), None),
            http_event("GET", &format!("/api/queue/admin/status/{event}"), Some("arn:aws:iam::0:user/ops")),
            http_event("POST", &format!("/api/queue/check/{event}"), None),
        ],
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let _api = spawn("vwr-tier2-api", &rt, &env);
    let replies = rt.replies(4, Duration::from_secs(30)).await;
    assert_eq!(replies.len(), 4, "{replies:?}");
    let (s, b) = status_and_body(&replies[0].1);
    assert_eq!((s, b["keys"][0]["kid"].as_str()), (200, Some("ek")), "{replies:?}");
    assert_eq!(status_and_body(&replies[1].1).0, 403);
    assert_eq!(status_and_body(&replies[2].1).1["registered"], true);
    // No identity in AWS without an authorizer or tier-1 token (X-User-Id is dev-only).
    assert_eq!(status_and_body(&replies[3].1).1["error"], "identity_required");

    // Behind CloudFront (origin secret set): the public routes need the secret; the admin
    // routes, reached through the admin and console APIs, do not — their callers are checked,
    // with their role.
    let status_path = format!("/api/queue/admin/status/{event}");
    let threshold_path = format!("/api/queue/admin/threshold/{event}");
    let rt = FakeRuntime::start(
        vec![
            http_event("GET", "/api/queue/.well-known/jwks.json", None),
            console_event("GET", &status_path, "vic@example.com", "[vwr-viewer]", ""),
            console_event("PUT", &threshold_path, "vic@example.com", "[vwr-viewer]", r#"{"threshold": 9}"#),
            console_event(
                "PUT",
                &threshold_path,
                "olga@example.com",
                "[vwr-operator]",
                r#"{"threshold": 3}"#,
            ),
            http_event("GET", &status_path, None),
        ],
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let mut behind_cdn = env.clone();
    behind_cdn.push(("VWR_ORIGIN_SECRET", "s".repeat(40)));
    let _api = spawn("vwr-tier2-api", &rt, &behind_cdn);
    let replies = rt.replies(5, Duration::from_secs(30)).await;
    assert_eq!(replies.len(), 5, "{replies:?}");
    let (s, b) = status_and_body(&replies[0].1);
    assert_eq!((s, b["error"].as_str()), (403, Some("origin_forbidden")), "{replies:?}");
    let (s, b) = status_and_body(&replies[1].1);
    assert_eq!((s, b["registered"].as_bool()), (200, Some(true)), "{replies:?}");
    let (s, b) = status_and_body(&replies[2].1);
    assert_eq!((s, b["error"].as_str()), (403, Some("forbidden_role")), "{replies:?}");
    let (s, b) = status_and_body(&replies[3].1);
    assert_eq!((s, b["threshold"].as_u64()), (200, Some(3)), "{replies:?}");
    let (s, b) = status_and_body(&replies[4].1);
    assert_eq!((s, b["error"].as_str()), (403, Some("forbidden")), "{replies:?}");
    // Back to the threshold the worker below expects.
    store
        .register(&event, 1, vwr_tier2::model::LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin)
        .await
        .unwrap();

    // Worker: one scheduled run admits from the line.
    // Store-level checks hand out no entry token, so a's leave frees the slot at once.
    let s = vwr_tier2::model::Tier2Settings { entry_token_ttl_ms: 0, ..Default::default() };
    use vwr_tier2::model::LineScore;
    store.check(&event, "a", LineScore::Arrival, "j1", &s).await.unwrap();
    store.check(&event, "b", LineScore::Arrival, "j2", &s).await.unwrap();
    store.leave(&event, "a").await.unwrap();
    let rt = FakeRuntime::start(vec![json!({})], Duration::from_secs(6)).await.unwrap();
    let _worker = spawn("vwr-tier2-worker", &rt, &env);
    let replies = rt.replies(1, Duration::from_secs(30)).await;
    assert_eq!(replies.first().map(|r| r.0.as_str()), Some("response"), "{replies:?}");
    assert!(replies[0].1["admitted"].as_u64().unwrap_or(0) >= 1, "{replies:?}");
    assert!(matches!(
        store.status(&event, "b", vwr_tier2::model::Touch::No, 0).await.unwrap(),
        Some(vwr_tier2::model::Place::Active { .. })
    ));
    store.unregister(&event).await.unwrap();

    // Authorizer: a request without an entry token is denied with the redirect context.
    let jwks = serde_json::to_string(&entry.jwks()).unwrap();
    let rt = FakeRuntime::start(
        vec![json!({"type": "REQUEST", "requestContext": {}, "methodArn": "arn:aws:execute-api:us-east-1:0:api/prod/GET/api/seats/e1", "path": "/api/seats/e1", "headers": {}})],
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    let _authz = spawn("vwr-tier2-authorizer", &rt, &[("VWR_TIER2_JWKS", jwks)]);
    let replies = rt.replies(1, Duration::from_secs(30)).await;
    let r = &replies.first().expect("authorizer answered").1;
    assert_eq!(r["policyDocument"]["Statement"][0]["Effect"], "Deny", "{r}");
    assert_eq!(r["context"]["redirectTo"], "/vwr/queue/e1");
}
