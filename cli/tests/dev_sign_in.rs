//! Sign-in locally (docs/console.md#sign-in-locally), on the real `vwr dev` binary: the console
//! tokens of `vwr admin console-token` carry a role the server enforces and a name the audit
//! keeps; forged, expired and misdirected tokens are refused; an OpenID Connect issuer of
//! `--admin-oidc-issuer` (a small one served by this test: discovery, JWKS, its own keys) is
//! trusted for its tokens and refused for others; an issuer that does not answer is a 503.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use common::{Server, start};
use http::Method;
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use vwr_core::EcKeyring;
use vwr_core::keys::KeyMaterial;
use vwr_loadtest::client::{Auth, HttpClient, Reply};

fn client() -> HttpClient {
    HttpClient::new(Duration::from_secs(10)).unwrap()
}

/// `vwr dev`'s state file in `dir`.
fn state(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("dev.json")).unwrap()).unwrap()
}

fn now() -> u64 {
    vwr_core::time::now_secs()
}

/// A `vwr dev` to call: its base URL and state directory.
#[derive(Clone, Copy)]
struct At<'a> {
    base: &'a str,
    dir: &'a Path,
}

fn at(server: &Server) -> At<'_> {
    At { base: &server.base, dir: &server.dir }
}

/// `vwr admin ARGS…` against `dev` with the key of its state file; (ok, stdout, stderr).
fn admin_cli(dev: At<'_>, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vwr"))
        .args(["admin", "--url", dev.base])
        .args(args)
        .env("VWR_DEV_DIR", dev.dir)
        .env_remove("VWR_ADMIN_KEY")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// A console token of `role` (and `name`) from `vwr admin console-token --json`.
fn console_token(dev: At<'_>, role: &str, name: Option<&str>) -> Value {
    let mut args = vec!["--json", "console-token", "--role", role];
    if let Some(n) = name {
        args.extend(["--name", n]);
    }
    let (ok, out, err) = admin_cli(dev, &args);
    assert!(ok, "console-token {role}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let token = v["token"].as_str().unwrap();
    assert_eq!(v["url"], format!("{}/console/#token={token}", dev.base));
    v
}

async fn call(server: &Server, method: Method, path: &str, token: &str, body: Option<Value>) -> Reply {
    call_at(&server.base, method, path, token, body).await
}

async fn call_at(base: &str, method: Method, path: &str, token: &str, body: Option<Value>) -> Reply {
    let auth = Auth::Bearer(token.to_owned());
    client().send(method, &format!("{base}{path}"), body.as_ref(), &auth).await.unwrap()
}

fn sign(claims: &Value, alg: Algorithm, kid: &str, key: &EncodingKey) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn ec_key(ring: &EcKeyring) -> EncodingKey {
    EncodingKey::from_ec_der(ring.signing_key().bytes())
}

/// An RSA key (2048 bits) for RS256, through PEM as jsonwebtoken reads it.
fn rsa_key() -> EncodingKey {
    use aws_lc_rs::encoding::AsDer;
    let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    let der = pair.as_der().unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
    let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
    let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"));
    EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap()
}

fn public_jwk(key: &EncodingKey, alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(key, alg).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    jwk.common.key_algorithm = Some(KeyAlgorithm::from(alg));
    jwk
}

#[tokio::test]
async fn console_tokens_carry_roles_the_server_enforces() {
    let server = start("signin", &["--store", "memory"], &[]).await;
    let (ok, _, err) = admin_cli(at(&server), &["activate", "e1", "--batch-size", "1"]);
    assert!(ok, "{err}");

    // The text form: the token and the console's address.
    let (ok, out, err) = admin_cli(at(&server), &["console-token", "--role", "viewer", "--ttl", "30m"]);
    assert!(ok, "{err}");
    assert!(out.contains("console token for dev-viewer (viewer), valid until"), "{out}");
    assert!(out.contains(&format!("{}/console/#token=ey", server.base)), "{out}");

    let viewer = console_token(at(&server), "viewer", Some("Vera Viewer"));
    let operator = console_token(at(&server), "operator", Some("olga@example.com"));
    let admin = console_token(at(&server), "admin", None);
    assert_eq!((admin["name"].as_str(), admin["role"].as_str()), (Some("dev-admin"), Some("admin")));
    let exp = admin["expiresAt"].as_u64().unwrap();
    assert!(exp.abs_diff(now() + 3600) < 60, "one hour by default: {exp}");
    let [viewer, operator, admin] =
        [&viewer, &operator, &admin].map(|v| v["token"].as_str().unwrap().to_owned());

    // The viewer reads, and is told who it is; what it may not do is refused and changes nothing.
    let who = call(&server, Method::GET, "/api/admin/vwr/whoami", &viewer, None).await;
    assert_eq!(who.status, 200);
    assert_eq!(who.json(), json!({"name": "Vera Viewer", "role": "viewer", "via": "oidc"}));
    let before = call(&server, Method::GET, "/api/admin/vwr/status/e1", &viewer, None).await;
    assert_eq!(before.status, 200);
    let audit_before = call(&server, Method::GET, "/api/admin/vwr/audit/e1", &viewer, None).await.json();
    let r = call(&server, Method::POST, "/api/admin/vwr/pause/e1", &viewer, Some(json!({}))).await;
    assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (403, Some("forbidden_role")));
    assert!(r.json()["message"].as_str().unwrap().contains("needs the operator role"), "{:?}", r.json());
    let after = call(&server, Method::GET, "/api/admin/vwr/status/e1", &viewer, None).await.json();
    assert_eq!(after["state"], before.json()["state"]);
    let audit_after = call(&server, Method::GET, "/api/admin/vwr/audit/e1", &viewer, None).await.json();
    assert_eq!(audit_after["entries"], audit_before["entries"], "nothing written");

    // The operator pauses but does not activate; the admin activates.
    let r = call(&server, Method::POST, "/api/admin/vwr/activate/e2", &operator, Some(json!({}))).await;
    assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (403, Some("forbidden_role")));
    let r = call(&server, Method::POST, "/api/admin/vwr/pause/e1", &operator, Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    let r = call(&server, Method::POST, "/api/admin/vwr/activate/e2", &admin, Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    let st = call(&server, Method::GET, "/api/admin/vwr/status/e1", &viewer, None).await.json();
    assert_eq!(st["state"], "paused");

    // The audit names the person.
    let audit = call(&server, Method::GET, "/api/admin/vwr/audit/e1", &viewer, None).await.json();
    let last = audit["entries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["actor"].as_str(), last["action"].as_str()), (Some("olga@example.com"), Some("pause")));
    let audit = call(&server, Method::GET, "/api/admin/vwr/audit/e2", &admin, None).await.json();
    assert_eq!(audit["entries"][0]["actor"], "dev-admin");

    // vwr dev's alarms by hand: an admin's call.
    let alarm = Some(json!({"state": "ALARM"}));
    let r = call(&server, Method::PUT, "/api/admin/vwr/alarm/site-5xx", &operator, alarm.clone()).await;
    assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (403, Some("forbidden_role")));
    let r = call(&server, Method::PUT, "/api/admin/vwr/alarm/site-5xx", &admin, alarm).await;
    assert_eq!(r.status, 200, "{:?}", r.json());

    // Only the admin key mints tokens: a token, even an admin's, does not.
    let mint = Some(json!({"role": "admin"}));
    let r = call(&server, Method::POST, "/api/admin/vwr/dev/console-token", &admin, mint.clone()).await;
    assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (403, Some("forbidden")));
    let key = state(&server.dir)["adminKey"].as_str().unwrap().to_owned();
    for bad in
        [json!({"role": "owner"}), json!({"role": "admin", "ttlSeconds": 43_201}), json!({"ttlSeconds": 60})]
    {
        let r =
            call(&server, Method::POST, "/api/admin/vwr/dev/console-token", &key, Some(bad.clone())).await;
        assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (400, Some("invalid_body")), "{bad}");
    }
    let (ok, _, err) = admin_cli(at(&server), &["console-token", "--role", "admin", "--ttl", "13h"]);
    assert!(!ok && err.contains("ttlSeconds must be 1 to 43200"), "{err}");

    // Forged, expired, misdirected: 401.
    let st = state(&server.dir);
    let ring = EcKeyring::from_text(st["consoleKeys"].as_str().unwrap(), None).unwrap();
    let kid = ring.signing_kid().to_owned();
    let claims = |aud: &str, exp: u64| json!({"iss": server.base, "aud": aud, "sub": "x", "exp": exp, "cognito:groups": ["vwr-admin"]});
    let good = sign(&claims("vwr-console", now() + 600), Algorithm::ES256, &kid, &ec_key(&ring));
    assert_eq!(call(&server, Method::GET, "/api/admin/vwr/events", &good, None).await.status, 200);
    let other = EcKeyring::generate(&kid).unwrap();
    for (what, token) in [
        ("another key", sign(&claims("vwr-console", now() + 600), Algorithm::ES256, &kid, &ec_key(&other))),
        ("expired", sign(&claims("vwr-console", now() - 3600), Algorithm::ES256, &kid, &ec_key(&ring))),
        ("another audience", sign(&claims("other-app", now() + 600), Algorithm::ES256, &kid, &ec_key(&ring))),
        (
            "another issuer",
            sign(
                &json!({"iss": "http://127.0.0.1:1", "aud": "vwr-console", "sub": "x", "exp": now() + 600}),
                Algorithm::ES256,
                &kid,
                &ec_key(&ring),
            ),
        ),
    ] {
        let r = call(&server, Method::GET, "/api/admin/vwr/events", &token, None).await;
        assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (401, Some("unauthorized")), "{what}");
    }

    // The console's side: the JWKS, the discovery document, config.json.
    let get = async |p: &str| {
        client().send(Method::GET, &format!("{}{p}", server.base), None, &Auth::None).await.unwrap()
    };
    let jwks: JwkSet = serde_json::from_slice(&get("/console/jwks.json").await.body).unwrap();
    assert_eq!(jwks.keys.len(), 1);
    assert_eq!(jwks.keys[0].common.key_id.as_deref(), Some(kid.as_str()));
    let disco = get("/.well-known/openid-configuration").await.json();
    assert_eq!(disco["issuer"], server.base.as_str());
    assert_eq!(disco["jwks_uri"], format!("{}/console/jwks.json", server.base));
    let cfg = get("/console/config.json").await.json();
    assert_eq!((cfg["clientId"].as_str(), cfg["devTokens"].as_bool()), (Some(""), Some(true)));
}

/// A `vwr dev` child on a port and state directory of the test's choosing (killed on drop).
struct Dev(Child);

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vwr-test-{name}-{}-{}",
        std::process::id(),
        vwr_core::time::now_millis()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dev_command(dir: &Path, port: u16, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vwr"));
    cmd.args(["dev", "--store", "memory", "--addr", &format!("127.0.0.1:{port}")])
        .args(args)
        .env("VWR_DEV_DIR", dir)
        .env("RUST_LOG", "warn")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("VWR_ADMIN_KEY")
        .env_remove("VWR_REDIS_URL")
        .env_remove("VWR_ADDR")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

async fn dev_at(dir: &Path, port: u16) -> Dev {
    let dev = Dev(dev_command(dir, port, &[]).stderr(Stdio::inherit()).spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r =
            client().send(Method::GET, &format!("http://127.0.0.1:{port}/healthz"), None, &Auth::None).await;
        if r.is_ok_and(|r| r.status.is_success()) {
            return dev;
        }
        assert!(Instant::now() < deadline, "vwr dev did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The key is kept in the state directory: a token outlives a restart on the same address.
#[tokio::test]
async fn a_console_token_outlives_a_restart() {
    let dir = temp_dir("signin-restart");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let dev = dev_at(&dir, port).await;
    let target = At { base: &base, dir: &dir };
    let token = console_token(target, "operator", Some("ops"))["token"].as_str().unwrap().to_owned();
    drop(dev);
    let dev = dev_at(&dir, port).await;
    let who = call_at(&base, Method::GET, "/api/admin/vwr/whoami", &token, None).await;
    assert_eq!(who.status, 200);
    assert_eq!(who.json()["name"], "ops");
    drop(dev);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad sign-in flags stop `vwr dev` at start, saying what is wrong.
#[test]
fn bad_issuer_flags_are_refused_at_start() {
    let dir = temp_dir("signin-flags");
    for (args, says) in [
        (
            vec!["--admin-oidc-issuer", "http://idp.example.com", "--admin-oidc-client-id", "c"],
            "http only on this machine",
        ),
        (
            vec!["--admin-oidc-issuer", "https://idp.example.com"],
            "needs --admin-oidc-audience or --admin-oidc-client-id",
        ),
        (vec!["--admin-oidc-groups-claim", "two words"], "--admin-oidc-groups-claim"),
    ] {
        let out = dev_command(&dir, 0, &args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small OpenID Connect issuer: discovery and JWKS (an RSA key for RS256, a P-256 key for
/// ES256), counting the JWKS fetches.
struct Issuer {
    url: String,
    rsa: EncodingKey,
    ec: EcKeyring,
    jwks_fetches: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn issuer() -> Issuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let rsa = rsa_key();
    let ec = EcKeyring::generate("ec1").unwrap();
    let jwks = JwkSet {
        keys: vec![
            public_jwk(&rsa, Algorithm::RS256, "rsa1"),
            public_jwk(&ec_key(&ec), Algorithm::ES256, "ec1"),
        ],
    };
    let jwks = serde_json::to_value(jwks).unwrap();
    let discovery = json!({
        "issuer": url,
        "jwks_uri": format!("{url}/keys"),
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
    });
    let jwks_fetches = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&jwks_fetches);
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || async move { axum::Json(discovery) }),
        )
        .route(
            "/keys",
            axum::routing::get(move || async move {
                count.fetch_add(1, Ordering::SeqCst);
                axum::Json(jwks)
            }),
        );
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Issuer { url, rsa, ec, jwks_fetches, task }
}

#[tokio::test]
async fn an_oidc_issuer_signs_in_with_the_role_of_its_groups() {
    let idp = issuer().await;
    let server = start(
        "signin-oidc",
        &[
            "--store",
            "memory",
            "--admin-oidc-issuer",
            &format!("{}/", idp.url),
            "--admin-oidc-client-id",
            "console-app",
            "--admin-oidc-groups-claim",
            "groups",
        ],
        &[],
    )
    .await;
    let (ok, _, err) = admin_cli(at(&server), &["activate", "e1"]);
    assert!(ok, "{err}");

    // The console is told to sign in with the issuer.
    let cfg = client()
        .send(Method::GET, &format!("{}/console/config.json", server.base), None, &Auth::None)
        .await
        .unwrap()
        .json();
    assert_eq!(
        (cfg["issuer"].as_str(), cfg["clientId"].as_str()),
        (Some(idp.url.as_str()), Some("console-app"))
    );

    let base = |extra: Value| {
        let mut c = json!({"iss": idp.url, "sub": "u-1", "exp": now() + 600, "iat": now()});
        c.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        c
    };
    // An ID token (RS256, aud = the client) of an operator.
    let id_token = sign(
        &base(json!({"aud": "console-app", "email": "ann@example.com", "groups": ["staff", "vwr-operator"]})),
        Algorithm::RS256,
        "rsa1",
        &idp.rsa,
    );
    let who = call(&server, Method::GET, "/api/admin/vwr/whoami", &id_token, None).await;
    assert_eq!(who.status, 200, "{:?}", who.json());
    assert_eq!(who.json(), json!({"name": "ann@example.com", "role": "operator", "via": "oidc"}));
    let r = call(&server, Method::POST, "/api/admin/vwr/pause/e1", &id_token, Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    let r =
        call(&server, Method::POST, "/api/admin/vwr/close/e1", &id_token, Some(json!({"reason": "ended"})))
            .await;
    assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (403, Some("forbidden_role")));
    let audit = call(&server, Method::GET, "/api/admin/vwr/audit/e1", &id_token, None).await.json();
    assert_eq!(audit["entries"].as_array().unwrap().last().unwrap()["actor"], "ann@example.com");

    // An access token (ES256, client_id instead of aud) of a viewer.
    let access = sign(
        &base(json!({"client_id": "console-app", "username": "bo", "groups": "vwr-viewer"})),
        Algorithm::ES256,
        "ec1",
        &ec_key(&idp.ec),
    );
    let who = call(&server, Method::GET, "/api/admin/vwr/whoami", &access, None).await;
    assert_eq!(who.json(), json!({"name": "bo", "role": "viewer", "via": "oidc"}));
    assert_eq!(idp.jwks_fetches.load(Ordering::SeqCst), 1, "the keys are kept");

    // No vwr group: 403. Another key under a known kid, an unknown kid, another audience: 401.
    let no_group =
        sign(&base(json!({"aud": "console-app", "groups": ["staff"]})), Algorithm::RS256, "rsa1", &idp.rsa);
    let r = call(&server, Method::GET, "/api/admin/vwr/whoami", &no_group, None).await;
    assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (403, Some("forbidden_role")));
    let operator = base(json!({"aud": "console-app", "groups": ["vwr-admin"]}));
    let stranger = rsa_key();
    let forged = sign(&operator, Algorithm::RS256, "rsa1", &stranger);
    let unknown = sign(&operator, Algorithm::RS256, "rsa2", &stranger);
    let unknown_again = sign(&operator, Algorithm::RS256, "rsa3", &stranger);
    let elsewhere =
        sign(&base(json!({"aud": "other-app", "groups": ["vwr-admin"]})), Algorithm::RS256, "rsa1", &idp.rsa);
    for (what, token) in [
        ("forged", &forged),
        ("unknown kid", &unknown),
        ("unknown kid again", &unknown_again),
        ("audience", &elsewhere),
    ] {
        let r = call(&server, Method::GET, "/api/admin/vwr/events", token, None).await;
        assert_eq!((r.status.as_u16(), r.json()["error"].as_str()), (401, Some("unauthorized")), "{what}");
    }
    // Unknown kids within a minute of the last fetch do not fetch again (the refetch after a
    // minute: cli/src/dev/oidc/remote.rs's tests).
    assert_eq!(idp.jwks_fetches.load(Ordering::SeqCst), 1);

    // vwr dev's own tokens still work, their role in the configured claim.
    let dev = console_token(at(&server), "viewer", Some("local"));
    let who = call(&server, Method::GET, "/api/admin/vwr/whoami", dev["token"].as_str().unwrap(), None).await;
    assert_eq!(who.json(), json!({"name": "local", "role": "viewer", "via": "oidc"}));
}

#[tokio::test]
async fn an_issuer_that_does_not_answer_is_a_503() {
    let gone = format!("http://127.0.0.1:{}", free_port());
    let server = start(
        "signin-down",
        &["--store", "memory", "--admin-oidc-issuer", &gone, "--admin-oidc-audience", "a"],
        &[],
    )
    .await;
    let token = sign(
        &json!({"iss": gone, "aud": "a", "sub": "s", "exp": now() + 600, "cognito:groups": ["vwr-admin"]}),
        Algorithm::ES256,
        "k",
        &ec_key(&EcKeyring::generate("k").unwrap()),
    );
    let r = call(&server, Method::GET, "/api/admin/vwr/events", &token, None).await;
    assert_eq!(
        (r.status.as_u16(), r.json()["error"].as_str()),
        (503, Some("service_unavailable")),
        "{:?}",
        r.json()
    );
    assert!(r.headers.contains_key("retry-after"));
    assert!(r.json()["message"].as_str().unwrap().contains("could not be checked"), "{:?}", r.json());
    // The admin key does not depend on the issuer.
    let key = state(&server.dir)["adminKey"].as_str().unwrap().to_owned();
    assert_eq!(call(&server, Method::GET, "/api/admin/vwr/events", &key, None).await.status, 200);
}
