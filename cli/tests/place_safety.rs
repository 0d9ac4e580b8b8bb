//! Place safety seen from outside (issue 19; docs/invariants.md#16 to #19): the real `vwr dev`
//! binary on DynamoDB (moto server), driven over HTTP as a visitor, a site and an attacker
//! holding the edge key would. Tier-1 keys are generated here and given to the server, so the
//! test can build what tier 2 (or the attacker) would sign.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::Server;
use http::Method;
use serde_json::{Value, json};
use vwr_core::HmacKeyring;
use vwr_core::keys::EcKeyring;
use vwr_core::token::{Tier1Claims, Tier1Link, Tier1Tokens};
use vwr_loadtest::client::{Auth, HttpClient};

const KEY: &str = "place-safety-admin-key-0123456789";

fn table(tag: &str) -> String {
    format!("vwr-ps-{tag}-{}-{}", std::process::id(), vwr_core::time::now_millis())
}

/// `vwr dev` on DynamoDB table `table` with the tier-1 master keys `keys` and `env`.
async fn start(tag: &str, table: &str, keys: &HmacKeyring, env: &[(&str, &str)]) -> Server {
    let endpoint =
        std::env::var("VWR_TEST_AWS_ENDPOINT").expect("VWR_TEST_AWS_ENDPOINT (tests/run.sh sets it)");
    let text = keys.to_text();
    let mut all = vec![
        ("VWR_ADMIN_KEY", KEY),
        ("VWR_TIER1_KEYS", text.as_str()),
        ("VWR_TIER1_SIGNING_KID", keys.signing_kid()),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ];
    all.extend_from_slice(env);
    common::start(&format!("ps-{tag}"), &["--store", "dynamodb", "--table", table], &all).await
}

fn client() -> HttpClient {
    HttpClient::new(Duration::from_secs(5)).unwrap()
}

fn now() -> u64 {
    vwr_core::time::now_secs()
}

async fn admin(server: &Server, method: Method, path: &str, body: Value) -> Value {
    let r = client()
        .send(method, &format!("{}{path}", server.base), Some(&body), &Auth::Bearer(KEY.into()))
        .await
        .unwrap();
    assert!(r.status.is_success(), "{path}: {} {:?}", r.status, r.json());
    r.json()
}

/// One request with `headers`; `(status, body, set-cookie)`.
async fn call(
    server: &Server,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, Value, Option<String>) {
    let mut req = http::Request::builder().method(method).uri(format!("{}{path}", server.base));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let bytes = body.map(|b| b.to_string()).unwrap_or_default();
    if !bytes.is_empty() {
        req = req.header("content-type", "application/json");
    }
    let r = client().raw(req.body(http_body_util::Full::new(bytes.into())).unwrap()).await.unwrap();
    let cookie = r.headers.get("set-cookie").map(|v| v.to_str().unwrap().to_owned());
    (r.status.as_u16(), r.json(), cookie)
}

/// A ticket and its secret.
struct Ticket {
    rid: String,
    secret: String,
}

async fn assign(server: &Server, event: &str, headers: &[(&str, &str)], body: Option<Value>) -> (u16, Value) {
    let (status, body, _) =
        call(server, Method::POST, &format!("/vwr-api/vwr/assign/{event}"), headers, body).await;
    (status, body)
}

fn ticket(body: &Value) -> Ticket {
    Ticket {
        rid: body["requestId"].as_str().unwrap().to_owned(),
        secret: body["requestSecret"].as_str().unwrap().to_owned(),
    }
}

async fn check(
    server: &Server,
    event: &str,
    t: &Ticket,
    extra: &[(&str, &str)],
) -> (u16, Value, Option<String>) {
    let mut headers = vec![("x-vwr-request-secret", t.secret.as_str())];
    headers.extend_from_slice(extra);
    call(server, Method::GET, &format!("/vwr-api/vwr/check/{event}/{}", t.rid), &headers, None).await
}

/// Checks until admitted (the advancer lets one in per second); any error fails at once.
async fn admit(server: &Server, event: &str, t: &Ticket) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body, _) = check(server, event, t, &[]).await;
        assert_eq!(status, 200, "{body}");
        if body["admitted"] == true {
            return body["token"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "never admitted: {body}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// F3: with 60-s tickets, a pre-queue of 63 s. Its first joiners are admitted after the open
/// (they got 410 `request_id_expired` at the open before).
#[tokio::test]
async fn vwr_dev_prequeue_longer_than_the_ticket_life_keeps_its_tickets() {
    let keys = HmacKeyring::generate("k1").unwrap();
    let server = start("pq", &table("pq"), &keys, &[("VWR_TICKET_TTL_SECONDS", "60")]).await;
    let open_at = now() + 63;
    let body = json!({"prequeueAt": now(), "openAt": open_at, "batchSize": 10, "intervalSeconds": 1});
    admin(&server, Method::PUT, "/api/admin/vwr/schedule/pq", body).await;
    let mut tickets = Vec::new();
    for _ in 0..3 {
        let (status, body) = assign(&server, "pq", &[], None).await;
        assert_eq!((status, body["state"].as_str()), (200, Some("prequeue")), "{body}");
        tickets.push(ticket(&body));
    }
    while now() < open_at + 1 {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for t in &tickets {
        admit(&server, "pq", t).await;
    }
}

/// F4: one place per account with 60-s tickets. After the account's ticket expired, its next
/// join gets a fresh ticket (every join answered 500 before).
#[tokio::test]
async fn vwr_dev_an_account_whose_ticket_expired_gets_a_fresh_one() {
    let keys = HmacKeyring::generate("k1").unwrap();
    let site = EcKeyring::generate("site1").unwrap();
    let jwks = serde_json::to_string(&site.jwks()).unwrap();
    let env = [("VWR_TICKET_TTL_SECONDS", "60"), ("VWR_ENQUEUE_JWKS", jwks.as_str())];
    let server = start("acct", &table("acct"), &keys, &env).await;
    admin(
        &server,
        Method::POST,
        "/api/admin/vwr/activate/acct",
        json!({"enqueueTokenRequired": true, "batchSize": 0}),
    )
    .await;
    let event = vwr_core::EventId::parse("acct").unwrap();
    let token = vwr_tier1::enqueue::sign(&site, "alice", &event, now() + 600).unwrap();
    let headers = [("x-vwr-enqueue-token", token.as_str())];
    let (status, first) = assign(&server, "acct", &headers, None).await;
    assert_eq!(status, 200, "{first}");
    let deadline = now() + 61;
    while now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (status, again) = assign(&server, "acct", &headers, None).await;
    assert_eq!(status, 200, "an account whose ticket expired: {again}");
    assert_ne!(again["requestId"], first["requestId"]);
    let (status, same) = assign(&server, "acct", &headers, None).await;
    assert_eq!((status, &same["requestId"]), (200, &again["requestId"]));
}

/// F7: two `vwr dev` servers (two instances) on one table take one proof-of-work solution
/// once between them.
#[tokio::test]
async fn vwr_dev_two_servers_on_one_table_take_a_pow_solution_once() {
    let keys = HmacKeyring::generate("k1").unwrap();
    let table = table("pow");
    let a = start("pow-a", &table, &keys, &[]).await;
    let b = start("pow-b", &table, &keys, &[]).await;
    admin(&a, Method::POST, "/api/admin/vwr/activate/pow", json!({"powDifficulty": 8, "batchSize": 0})).await;
    let (status, refused) = assign(&a, "pow", &[], None).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("challenge_required")), "{refused}");
    let challenge = refused["challenge"].as_str().unwrap();
    let nonce = vwr_tier1::pow::solve_from(challenge, 8, "5afe");
    let body = json!({"pow": {"challenge": challenge, "nonce": nonce}});
    let (status, placed) = assign(&a, "pow", &[], Some(body.clone())).await;
    assert_eq!(status, 200, "{placed}");
    let (status, replay) = assign(&b, "pow", &[], Some(body)).await;
    assert_eq!((status, replay["error"].as_str()), (403, Some("challenge_required")), "{replay}");
}

/// F11 and F2 on one admission: a token minted with the edge key alone (right position, made-up
/// `jti`) releases nothing; once the session is past its end, the tier-1 cookie tier 2 renewed
/// (same claims and place proof, a later `exp`) is honoured by `check`, and then releases.
#[tokio::test]
async fn vwr_dev_release_and_check_honour_only_the_admissions_own_token() {
    let keys = HmacKeyring::generate("k1").unwrap();
    let server = start("sess", &table("sess"), &keys, &[]).await;
    let body = json!({"batchSize": 1, "intervalSeconds": 1, "tokenTtlSeconds": 30, "reentryGraceSeconds": 0});
    admin(&server, Method::POST, "/api/admin/vwr/activate/sess", body).await;
    let (status, body) = assign(&server, "sess", &[], None).await;
    assert_eq!(status, 200, "{body}");
    let t = ticket(&body);
    let token = admit(&server, "sess", &t).await;
    let tokens = Tier1Tokens::new(keys.clone(), "vwr", "vwr-edge");
    let claims = tokens.verify(&token, &vwr_core::EventId::parse("sess").unwrap(), now()).unwrap();

    let edge_only = Tier1Link::new(
        tokens.edge_ring().clone(),
        HmacKeyring::generate("k1").unwrap().place_ring(),
        "vwr",
        "vwr-edge",
    );
    let forged =
        edge_only.resign(&Tier1Claims { jti: "AAAAAAAAAAAAAAAAAAAAAA".into(), ..claims.clone() }).unwrap();
    let (status, body, _) =
        call(&server, Method::POST, "/vwr-api/vwr/release/sess", &[("x-vwr-token", &forged)], None).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("invalid_token")), "{body}");

    // The token expires (30 s, no grace): the session is over for tier 1 alone…
    let deadline = claims.exp + 1;
    while now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (status, body, _) = check(&server, "sess", &t, &[]).await;
    assert_eq!((status, body["error"].as_str()), (410, Some("admission_expired")), "{body}");
    // …but tier 2 holds the visitor and renewed its cookie.
    let n = now();
    let renewed =
        tokens.link().resign(&Tier1Claims { iat: n, nbf: n, exp: n + 300, ..claims.clone() }).unwrap();
    let cookie = format!("vwr_t1_sess={renewed}");
    let (status, body, set) = check(&server, "sess", &t, &[("cookie", &cookie)]).await;
    assert_eq!(
        (status, body["admitted"].as_bool(), body["token"].as_str()),
        (200, Some(true), Some(renewed.as_str())),
        "{body}"
    );
    assert!(set.unwrap().starts_with(&format!("vwr_t1_sess={renewed};")));
    let (status, body, _) =
        call(&server, Method::POST, "/vwr-api/vwr/release/sess", &[("cookie", &cookie)], None).await;
    assert_eq!(status, 204, "{body}");
    let (status, body, _) = check(&server, "sess", &t, &[("cookie", &cookie)]).await;
    assert_eq!((status, body["error"].as_str()), (410, Some("session_ended")), "{body}");
}
