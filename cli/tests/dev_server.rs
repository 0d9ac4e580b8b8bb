//! End-to-end test of the README walk: the real `vwr dev` binary, `vwr admin activate`, assign
//! through `/vwr-api`, and `check` turning to admitted once the advancer passes the position —
//! on the in-memory store and on DynamoDB (moto server).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{Server, start};
use http::Method;
use serde_json::Value;
use vwr_loadtest::client::{Auth, HttpClient};

fn admin(server: &Server, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_vwr"))
        .args(["admin", "--json", "--url", &server.base])
        .args(args)
        .env("VWR_DEV_DIR", &server.dir)
        .env_remove("VWR_ADMIN_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "vwr admin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn walk(server: &Server) {
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    // A browser at the root is greeted: no event yet, so the hint to make one.
    let home = client.send(Method::GET, &format!("{}/", server.base), None, &Auth::None).await.unwrap();
    assert_eq!(home.status, 200);
    assert!(home.headers["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(String::from_utf8_lossy(&home.body).contains("vwr admin activate"));
    // The waiting page's language files and branding script (static/README.md#languages), as
    // scripts of the page's own origin; its policy lets an event's logo come over https.
    for asset in ["i18n/en.js", "i18n/ko.js", "i18n/ja.js", "i18n/zh-Hans.js", "i18n/zh-Hant.js", "brand.js"]
    {
        let r = client
            .send(Method::GET, &format!("{}/vwr/assets/{asset}", server.base), None, &Auth::None)
            .await
            .unwrap();
        assert_eq!(r.status, 200, "{asset}");
        assert!(r.headers["content-type"].to_str().unwrap().starts_with("text/javascript"), "{asset}");
    }
    let r = client
        .send(Method::GET, &format!("{}/vwr/assets/i18n/fr.js", server.base), None, &Auth::None)
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    let page = client.send(Method::GET, &format!("{}/vwr/e1", server.base), None, &Auth::None).await.unwrap();
    assert!(
        page.headers["content-security-policy"].to_str().unwrap().contains("img-src 'self' data: https:;")
    );
    let act = admin(server, &["activate", "e1", "--batch-size", "1", "--interval-seconds", "1"]);
    assert_eq!(act["active"], true);
    let url = |p: &str| format!("{}{p}", server.base);
    let home = client.send(Method::GET, &url("/"), None, &Auth::None).await.unwrap();
    assert!(String::from_utf8_lossy(&home.body).contains("href=\"/vwr/e1\""), "the home page lists e1");
    let mut tickets = Vec::new();
    let mut secrets = Vec::new();
    for want in 1..=3u64 {
        let r = client.send(Method::POST, &url("/vwr-api/vwr/assign/e1"), None, &Auth::None).await.unwrap();
        assert_eq!(r.status, 200, "{:?}", r.json());
        let body = r.json();
        assert_eq!(body["position"], want);
        tickets.push(body["requestId"].as_str().unwrap().to_owned());
        secrets.push(body["requestSecret"].as_str().unwrap().to_owned());
    }
    // The third ticket is admitted after the advancer passes position 3 (one per second).
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut saw_waiting = false;
    loop {
        let req = http::Request::get(url(&format!("/vwr-api/vwr/check/e1/{}", tickets[2])))
            .header("x-vwr-request-secret", &secrets[2])
            .body(http_body_util::Full::new(axum::body::Bytes::new()))
            .unwrap();
        let r = client.raw(req).await.unwrap();
        assert_eq!(r.status, 200, "{:?}", r.json());
        let body = r.json();
        if body["admitted"] == true {
            assert!(r.headers.get("set-cookie").unwrap().to_str().unwrap().starts_with("vwr_t1_e1="));
            assert!(body["token"].as_str().is_some());
            break;
        }
        saw_waiting = true;
        assert!(Instant::now() < deadline, "never admitted: {body}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(saw_waiting, "position 3 should wait at least one step");
    let st = admin(server, &["status", "e1"]);
    assert_eq!(st["issued"], 3);
    assert_eq!(st["admitted"], 1);
    // Admin without a key is refused.
    let r = client.send(Method::GET, &url("/api/admin/vwr/status/e1"), None, &Auth::None).await.unwrap();
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn readme_walk_on_the_memory_store() {
    let server = start("mem", &["--store", "memory"], &[]).await;
    walk(&server).await;
}

#[tokio::test]
async fn readme_walk_on_dynamodb() {
    let endpoint =
        std::env::var("VWR_TEST_AWS_ENDPOINT").expect("VWR_TEST_AWS_ENDPOINT (tests/run.sh sets it)");
    let table = format!("vwr-dev-{}-{}", std::process::id(), vwr_core::time::now_millis());
    let env = [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ];
    let server = start("ddb", &["--store", "dynamodb", "--table", &table], &env).await;
    walk(&server).await;
}

/// The booking page (static/queue/, docs/adr/0027-booking-page-path.md) at the deployed path and
/// at `/queue/{eventId}`, with the waiting page's policy; its client beside it; other names refused.
#[tokio::test]
async fn booking_page_and_its_client_are_served() {
    let server = start("booking", &["--store", "memory"], &[]).await;
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let get = async |p: &str| {
        client.send(Method::GET, &format!("{}{p}", server.base), None, &Auth::None).await.unwrap()
    };
    let waiting = get("/vwr/e1").await;
    for path in ["/vwr/queue/e1", "/queue/e1", "/vwr/queue/E_1-x"] {
        let page = get(path).await;
        assert_eq!(page.status, 200, "{path}");
        assert!(String::from_utf8_lossy(&page.body).contains("<main id=\"booking\""), "{path}");
        for h in ["content-type", "content-security-policy", "x-frame-options", "cache-control"] {
            assert_eq!(page.headers.get(h), waiting.headers.get(h), "{path}: {h} as the waiting page's");
        }
    }
    let js = get("/vwr/queue/tier2.js").await;
    assert_eq!(js.status, 200);
    assert!(js.headers["content-type"].to_str().unwrap().starts_with("text/javascript"));
    assert!(String::from_utf8_lossy(&js.body).contains("x-queue-entry-token"));
    for path in ["/vwr/queue/app.js", "/queue/e.1", "/vwr/queue/e1/x"] {
        let r = get(path).await;
        assert!(matches!(r.status.as_u16(), 400 | 404), "{path}: {}", r.status);
    }
    // The event page the waiting page sends visitors to by default is still the demo's.
    let demo = get("/events/e1").await;
    assert!(String::from_utf8_lossy(&demo.body).contains("Demo event"));
}

async fn send_as(client: &HttpClient, method: Method, url: &str, user: &str) -> (u16, Value) {
    // X-User-Id is only honoured because `vwr dev` is local development mode.
    let uri: http::Uri = url.parse().unwrap();
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("x-user-id", user)
        .body(http_body_util::Full::new(axum::body::Bytes::new()))
        .unwrap();
    let res = client.raw(req).await.unwrap();
    (res.status.as_u16(), res.json())
}

/// The tier-2 walk of the issue on `vwr dev --redis`: threshold 2, three users check, the
/// first two are active with entry tokens, the third is queued at position 1; one leaves; the
/// worker admits the third once the leaver's last entry token (10 s here) has expired.
#[tokio::test]
async fn tier2_walk_on_redis() {
    // Database 5 belongs to this test: the dev server's worker serves every event it finds.
    let redis = std::env::var("VWR_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let redis = format!("{}/5", redis.trim_end_matches('/'));
    let server =
        start("t2", &["--store", "memory", "--redis", &redis], &[("VWR_ENTRY_TOKEN_TTL_SECONDS", "10")])
            .await;
    let event = format!("walk{}x{}", std::process::id(), vwr_core::time::now_millis());
    let t = admin(&server, &["threshold", &event, "--threshold", "2"]);
    assert_eq!(t["threshold"], 2);
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let url = |p: &str| format!("{}{p}{event}", server.base);
    for user in ["alice", "bob"] {
        let (status, body) = send_as(&client, Method::POST, &url("/api/queue/check/"), user).await;
        assert_eq!((status, body["status"].as_str()), (200, Some("active")), "{body}");
        assert!(body["entryToken"].as_str().is_some_and(|t| t.starts_with("eyJ")));
    }
    let (_, carol) = send_as(&client, Method::POST, &url("/api/queue/check/"), "carol").await;
    assert_eq!((carol["status"].as_str(), carol["position"].as_u64()), (Some("queued"), Some(1)), "{carol}");
    let (status, _) = send_as(&client, Method::POST, &url("/api/queue/leave/"), "alice").await;
    assert_eq!(status, 204);
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let (_, body) = send_as(&client, Method::GET, &url("/api/queue/status/"), "carol").await;
        if body["status"] == "active" {
            assert!(body["entryToken"].as_str().is_some());
            break;
        }
        assert!(Instant::now() < deadline, "the worker never admitted carol: {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The entry token opens the demo's protected seats API for its owner only.
    let (_, bob) = send_as(&client, Method::GET, &url("/api/queue/status/"), "bob").await;
    let token = bob["entryToken"].as_str().unwrap();
    for (user, want) in [("bob", 200), ("carol", 403)] {
        let req = http::Request::get(url("/api/seats/"))
            .header("x-user-id", user)
            .header("x-queue-entry-token", token)
            .body(http_body_util::Full::new(axum::body::Bytes::new()))
            .unwrap();
        assert_eq!(client.raw(req).await.unwrap().status.as_u16(), want, "{user}");
    }
    let st = admin(&server, &["queue-status", &event]);
    assert_eq!((st["active"].as_u64(), st["waiting"].as_u64()), (Some(2), Some(0)));
    admin(&server, &["queue-remove", &event]);
}

/// A GET of `path` on `server` with `headers`: (status, JSON body or null, Location).
async fn get_with(
    client: &HttpClient,
    server: &Server,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, Value, String) {
    let mut req = http::Request::get(format!("{}{path}", server.base));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res =
        client.raw(req.body(http_body_util::Full::new(axum::body::Bytes::new())).unwrap()).await.unwrap();
    let location = res.headers.get("location").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (res.status.as_u16(), res.json(), location)
}

/// Reach (docs/apps.md, docs/passes.md) through the local edge: an app's Bearer tier-1 token
/// passes on an API path (not on a page), the refusal names the waiting page and the status
/// document; a pass opens a gated page as a cookie and an API path as a Bearer token, and is
/// refused within seconds of `vwr admin pass revoke`; both are in the audit trail.
#[tokio::test]
async fn bearer_tokens_and_passes_through_the_local_edge() {
    let server = start("reach", &["--store", "memory"], &[]).await;
    admin(&server, &["activate", "e1", "--batch-size", "1", "--interval-seconds", "1"]);
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let json = [("accept", "application/json")];

    // No token: the page is redirected, the API call refused with JSON.
    let (status, _, location) = get_with(&client, &server, "/events/e1", &[]).await;
    assert_eq!((status, location.as_str()), (302, "/vwr/e1?next=%2Fevents%2Fe1"));
    let (status, body, _) = get_with(&client, &server, "/api/seats/e1/A1", &json).await;
    assert_eq!(status, 403);
    assert_eq!(body["error"], "waiting_room_token_required");
    assert_eq!(body["redirectTo"], "/vwr/e1?next=%2Fapi%2Fseats%2Fe1%2FA1");
    assert_eq!(body["statusUrl"], "/vwr-api/vwr/status/e1");

    // A visitor's own tier-1 token, as an app holds it: assign, wait for the turn, check.
    let a = client
        .send(Method::POST, &format!("{}/vwr-api/vwr/assign/e1", server.base), None, &Auth::None)
        .await
        .unwrap();
    let (rid, secret) = (
        a.json()["requestId"].as_str().unwrap().to_owned(),
        a.json()["requestSecret"].as_str().unwrap().to_owned(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let token = loop {
        let (_, body, _) = get_with(
            &client,
            &server,
            &format!("/vwr-api/vwr/check/e1/{rid}"),
            &[("x-vwr-request-secret", &secret)],
        )
        .await;
        if body["admitted"] == true {
            break body["token"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "never admitted: {body}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let bearer = format!("Bearer {token}");
    // On the API path the edge lets it through (what answers next is tier 2's own gate).
    let (status, body, _) =
        get_with(&client, &server, "/api/seats/e1/A1", &[json[0], ("authorization", &bearer)]).await;
    assert_ne!(body["error"], "waiting_room_token_required", "{status} {body}");
    // Not on a page: there the cookie is the way.
    let (status, _, _) = get_with(&client, &server, "/events/e1", &[("authorization", &bearer)]).await;
    assert_eq!(status, 302);

    // A pass: a cookie on the page, a Bearer token on the API.
    let p = admin(&server, &["pass", "create", "e1", "--ttl", "10m", "--label", "synthetic monitor"]);
    let (id, pass) = (p["id"].as_str().unwrap().to_owned(), p["pass"].as_str().unwrap().to_owned());
    assert!(id.starts_with("e1."), "{p}");
    assert!(p["expiresAt"].as_u64().is_some(), "{p}");
    let cookie = format!("vwr_t1_e1={pass}");
    let (status, _, _) = get_with(&client, &server, "/events/e1", &[("cookie", &cookie)]).await;
    assert_eq!(status, 200, "a pass opens the gated page");
    let pass_bearer = format!("Bearer {pass}");
    let (_, body, _) =
        get_with(&client, &server, "/api/seats/e1/A1", &[json[0], ("authorization", &pass_bearer)]).await;
    assert_ne!(body["error"], "waiting_room_token_required", "{body}");
    let listed = admin(&server, &["pass", "list", "e1"]);
    assert_eq!(listed["passes"][0]["label"], "synthetic monitor");
    assert!(!listed.to_string().contains(&pass), "the list never shows the pass itself");

    // Revoked: refused within seconds, the visitor's own token unaffected.
    let r = admin(&server, &["pass", "revoke", &id]);
    assert!(r["revokedAt"].as_u64().is_some(), "{r}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, _, _) = get_with(&client, &server, "/events/e1", &[("cookie", &cookie)]).await;
        if status == 302 {
            break;
        }
        assert!(Instant::now() < deadline, "the revoked pass still opens the page");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, body, _) =
        get_with(&client, &server, "/api/seats/e1/A1", &[json[0], ("authorization", &pass_bearer)]).await;
    assert_eq!(body["error"], "waiting_room_token_required");
    let (_, body, _) =
        get_with(&client, &server, "/api/seats/e1/A1", &[json[0], ("authorization", &bearer)]).await;
    assert_ne!(body["error"], "waiting_room_token_required");

    let audit = admin(&server, &["audit", "e1"]);
    let actions: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert!(actions.ends_with(&["pass_create", "pass_revoke"]), "{actions:?}");
}

/// The example client of docs/apps.md runs end to end against `vwr dev`: two apps at a tier-2
/// threshold of 1, so one waits on the line document for the other to leave; both reach the
/// protected API with the Bearer tier-1 token and a renewed entry token.
#[tokio::test]
async fn the_example_app_client_runs_end_to_end() {
    let server = start("apps", &["--store", "memory"], &[("VWR_ENTRY_TOKEN_TTL_SECONDS", "10")]).await;
    admin(&server, &["activate", "e1", "--batch-size", "5", "--interval-seconds", "1"]);
    admin(&server, &["threshold", "e1", "--threshold", "1"]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/examples/app-client.mjs");
    let run = || {
        std::process::Command::new("node")
            .args([script, "--base", &server.base, "--event", "e1"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("node is needed for this test (tests/run.sh checks for it)")
    };
    let (a, b) = (run(), run());
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let mut waited = false;
    for out in &outs {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "client failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
        let steps: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(steps.last().unwrap()["step"], "done", "{text}");
        assert_eq!(steps.iter().filter(|s| s["step"] == "protected call").count(), 2, "{text}");
        waited |= steps.iter().any(|s| s["step"] == "tier2 waiting");
    }
    assert!(waited, "at a threshold of 1 one of the two waits in tier 2");
}

/// A standby event in `vwr dev` (docs/lifecycle.md#standby): ungated while its alarm is OK; the
/// alarm set by hand opens it within the advancer's next passes, and its pages are gated.
#[tokio::test]
async fn a_standby_event_opens_when_its_alarm_is_set() {
    let server = start("standby", &["--store", "memory"], &[]).await;
    // vwr dev reads an alarm never set as unreadable (a typo): set it first.
    let a = admin(&server, &["alarm", "cf-requests", "--state", "OK"]);
    assert_eq!(a["state"], "OK");
    let st = admin(
        &server,
        &["standby", "e1", "--alarm", "cf-requests", "--batch-size", "5", "--interval-seconds", "1"],
    );
    assert_eq!(st["state"], "standby");
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let (status, _, _) = get_with(&client, &server, "/events/e1", &[]).await;
    assert_eq!(status, 200, "not gated while on standby");
    let a = admin(&server, &["alarm", "cf-requests", "--state", "ALARM"]);
    assert_eq!(a["state"], "ALARM");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, _, location) = get_with(&client, &server, "/events/e1", &[]).await;
        if status == 302 {
            assert_eq!(location, "/vwr/e1?next=%2Fevents%2Fe1");
            break;
        }
        assert!(Instant::now() < deadline, "the standby never opened");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(admin(&server, &["status", "e1"])["state"], "open");
    let audit = admin(&server, &["audit", "e1"]);
    let actions: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions, ["standby", "standby_open"]);
}

/// The operator's message in every language of the page (docs/lifecycle.md#admin-routes):
/// `--text LANG=TEXT`, repeatable, reaches the public status document; a language the page
/// does not speak is refused before anything is sent.
#[tokio::test]
async fn a_message_in_japanese_reaches_the_status_document() {
    let server = start("message", &["--store", "memory"], &[]).await;
    admin(&server, &["activate", "e1", "--batch-size", "0"]);
    let st = admin(
        &server,
        &["pause", "e1", "--text", "ja=まもなく再開します", "--text", "zh-Hant=請稍候", "--en", "Back soon"],
    );
    assert_eq!(st["message"]["ja"], "まもなく再開します", "{st}");
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let doc = client
        .send(Method::GET, &format!("{}/vwr-api/vwr/status/e1", server.base), None, &Auth::None)
        .await
        .unwrap();
    let doc: Value = serde_json::from_slice(&doc.body).unwrap();
    assert_eq!(
        doc["message"],
        serde_json::json!({"en": "Back soon", "ja": "まもなく再開します", "zh-Hant": "請稍候"})
    );
    let out = Command::new(env!("CARGO_BIN_EXE_vwr"))
        .args(["admin", "--url", &server.base, "message", "e1", "--text", "fr=Patientez"])
        .env("VWR_DEV_DIR", &server.dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a language of the page"));
}
