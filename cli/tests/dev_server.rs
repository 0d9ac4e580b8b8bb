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
use vwr_cli::client::{Auth, HttpClient};

fn admin(server: &Server, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_vwr"))
        .args(["admin", "--url", &server.base])
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
