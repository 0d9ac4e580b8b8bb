//! Tier-2 place safety black-box through the real `vwr dev` (docs/invariants.md#23, #24):
//! a Redis outage longer than the heartbeat timeout, with no data lost, evicts nobody, and a
//! visitor evicted by a timeout gets the old place back; a tier-1 token minted with the edge
//! keys alone takes no place. Redis here is a private `redis-server` with `appendonly` on its
//! own port, stopped and started again by the test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use http::Method;
use http_body_util::Full;
use serde_json::{Value, json};
use vwr_core::HmacKeyring;
use vwr_core::token::{Tier1Claims, Tier1Link};
use vwr_loadtest::client::{Auth, HttpClient, Reply};

const KEY: &str = "place-safety-admin-key-0123456789";

/// A private Redis with `appendonly` (an outage loses no data), stopped and started on demand.
struct Redis {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Redis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("vwr-t2-outage-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = Self { port, dir, child: None };
        r.up();
        r
    }

    fn up(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir", self.dir.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops it the way an operator would (`SHUTDOWN`: the append-only file is flushed).
    fn down(&mut self) {
        let _ = Command::new("redis-cli").args(["-p", &self.port.to_string(), "shutdown"]).output();
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn call(client: &HttpClient, method: Method, url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut req = http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    client.raw(req.body(Full::new(Bytes::new())).unwrap()).await.unwrap()
}

async fn as_user(client: &HttpClient, method: Method, url: &str, user: &str) -> (u16, Value) {
    let r = call(client, method, url, &[("x-user-id", user)]).await;
    (r.status.as_u16(), r.json())
}

/// Review finding F5 through `vwr dev` on Redis: a 14 s Redis outage (longer than the 5 s
/// heartbeat timeout set here, and than the 10 s after which a missing worker step counts as
/// a silence) with no data lost. Before, the worker's first step after it evicted both
/// admitted users; now nobody. Then a visitor who stops polling is evicted, and their
/// re-check gets their old place, ahead of the one who waited behind them.
#[tokio::test]
async fn a_redis_outage_evicts_nobody_and_an_evicted_visitor_keeps_the_place() {
    let mut redis = Redis::start();
    let url = redis.url();
    let server = common::start_dev(
        "t2-outage",
        KEY,
        &[
            ("VWR_REDIS_URL", url.as_str()),
            ("VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS", "5"),
            ("VWR_ENTRY_TOKEN_TTL_SECONDS", "10"),
        ],
    )
    .await;
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let event = format!("outage{}", std::process::id());
    let q = |path: &str| format!("{}/api/queue/{path}/{event}", server.base);
    let r = client
        .send(Method::PUT, &q("admin/threshold"), Some(&json!({"threshold": 2})), &Auth::Bearer(KEY.into()))
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{:?}", r.json());
    let users = ["alice", "bob", "carol", "dave"];
    for (i, u) in users.iter().enumerate() {
        let (status, body) = as_user(&client, Method::POST, &q("check"), u).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["status"], if i < 2 { "active" } else { "queued" }, "{u}: {body}");
    }
    for _ in 0..3 {
        for u in users {
            assert_eq!(as_user(&client, Method::GET, &q("status"), u).await.0, 200);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    // The outage: visitors get 503 meanwhile.
    redis.down();
    let outage = Instant::now();
    let (status, _) = as_user(&client, Method::GET, &q("status"), "alice").await;
    assert_eq!(status, 503);
    tokio::time::sleep(Duration::from_secs(14).saturating_sub(outage.elapsed())).await;
    redis.up();
    // Back: wait for the store to answer (the admin view touches no heartbeat), then let the
    // worker step a few times before any visitor is heard again.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = client.send(Method::GET, &q("admin/status"), None, &Auth::Bearer(KEY.into())).await.unwrap();
        if r.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "vwr dev never reached Redis again: {:?}", r.json());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let places: Vec<(String, Option<u64>)> = {
        let mut out = Vec::new();
        for u in users {
            let (status, body) = as_user(&client, Method::GET, &q("status"), u).await;
            assert_eq!(status, 200, "{u} lost their place to the outage: {body}");
            out.push((body["status"].as_str().unwrap().to_owned(), body["position"].as_u64()));
        }
        out
    };
    assert_eq!(
        places,
        [("active", Some(0)), ("active", Some(0)), ("queued", Some(1)), ("queued", Some(2))]
            .map(|(s, p)| (s.to_owned(), p)),
    );

    // Bob stops answering: evicted after 5 s, his slot goes to carol once his last entry token
    // (10 s) has expired.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        for u in ["alice", "carol", "dave"] {
            assert_eq!(as_user(&client, Method::GET, &q("status"), u).await.0, 200, "{u}");
        }
        let (_, carol) = as_user(&client, Method::GET, &q("status"), "carol").await;
        if carol["status"] == "active" {
            break;
        }
        assert!(Instant::now() < deadline, "bob's slot never freed: {carol}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let (status, _) = as_user(&client, Method::GET, &q("status"), "bob").await;
    assert_eq!(status, 404, "bob was evicted");
    let (status, bob) = as_user(&client, Method::POST, &q("check"), "bob").await;
    assert_eq!(status, 200, "{bob}");
    assert_eq!((bob["status"].as_str(), bob["position"].as_u64()), (Some("queued"), Some(1)), "{bob}");
    assert_eq!(bob["restored"], true, "{bob}");
    let (_, dave) = as_user(&client, Method::GET, &q("status"), "dave").await;
    assert_eq!(dave["position"], 2, "{dave}");
}

/// Review finding F11 through `vwr dev`: whoever holds the edge keys (not the place-proof
/// keys) can mint a tier-1 token the edge accepts, `pos: 0`; tier 2 gives it no place. A
/// token tier 1 issued takes its place.
#[tokio::test]
async fn a_token_minted_with_the_edge_keys_takes_no_place_in_vwr_dev() {
    let master = HmacKeyring::generate("k1").unwrap();
    let keys = master.to_text();
    let server = common::start_dev("t2-minted", KEY, &[("VWR_TIER1_KEYS", keys.as_str())]).await;
    let client = HttpClient::new(Duration::from_secs(5)).unwrap();
    let event = format!("minted{}", std::process::id());
    let url = |p: &str| format!("{}{p}", server.base);
    let r = client
        .send(
            Method::POST,
            &url(&format!("/api/admin/vwr/activate/{event}")),
            Some(&json!({"batchSize": 10, "intervalSeconds": 1})),
            &Auth::Bearer(KEY.into()),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{:?}", r.json());
    let now = vwr_core::time::now_secs();
    let forger = Tier1Link::new(master.edge_ring(), HmacKeyring::generate("k1").unwrap(), "vwr", "vwr-edge");
    let minted = forger
        .resign(&Tier1Claims {
            iss: "vwr".into(),
            aud: "vwr-edge".into(),
            sub: "v1.k1.bm90LWEtdGlja2V0.bm90LWEtbWFj".into(),
            eid: event.clone(),
            pos: 0,
            tier: 1,
            iat: now,
            nbf: now,
            exp: now + 600,
            jti: "forged".into(),
            t2: None,
        })
        .unwrap();
    let check = url(&format!("/api/queue/check/{event}"));
    let cookie = format!("vwr_t1_{event}={minted}");
    let alone = call(&client, Method::POST, &check, &[("cookie", cookie.as_str())]).await;
    assert_eq!((alone.status.as_u16(), alone.json()["error"].clone()), (401, json!("identity_required")));
    let with_user =
        call(&client, Method::POST, &check, &[("cookie", cookie.as_str()), ("x-user-id", "mallory")]).await;
    assert_eq!(
        (with_user.status.as_u16(), with_user.json()["error"].clone()),
        (403, json!("tier1_token_required")),
        "the minted token gave a position"
    );

    // An honest visitor: assign, wait for the turn, check in tier 1, then tier 2.
    let r = client.send(Method::POST, &url(&format!("/vwr-api/vwr/assign/{event}")), None, &Auth::None).await;
    let ticket = r.unwrap().json();
    let (id, secret) = (ticket["requestId"].as_str().unwrap(), ticket["requestSecret"].as_str().unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    let token = loop {
        let r = call(
            &client,
            Method::GET,
            &url(&format!("/vwr-api/vwr/check/{event}/{id}")),
            &[("x-vwr-request-secret", secret)],
        )
        .await;
        let body = r.json();
        if body["admitted"] == true {
            break body["token"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "never admitted by tier 1: {body}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let r =
        call(&client, Method::POST, &check, &[("cookie", format!("vwr_t1_{event}={token}").as_str())]).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    assert_eq!(r.json()["status"], "active");
}
