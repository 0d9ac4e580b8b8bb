//! Place safety in tier 2 (docs/invariants.md#20, #23, #24; ADR 0023, 0024), each on the
//! in-memory store, a real Redis and the 3-node Redis Cluster, through the tier-2 routers where
//! the visitor feels it:
//! - time in which the servers could not hear visitors (Redis or the worker down, the API down
//!   with people in line) does not count against heartbeats;
//! - a visitor removed by a timeout who comes back gets the old place (an admission: itself);
//! - tier 2 renews the tier-1 cookie of a visitor it holds, and of nobody else;
//! - a tier-1 token minted with the edge keys alone takes no place;
//! - lowering the threshold evicts nobody (the documented limit).
//!
//! Time is virtual: a manual clock for the service and the memory store, the Redis scripts'
//! clock moved with the store's offset. The worker is stood for by its steps (`admit`,
//! `cleanup`), run every few seconds as the worker would, except where it is down.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;
use vwr_core::admin_auth::AdminAuth;
use vwr_core::identity::{UpstreamUser, tier1_user_id};
use vwr_core::time::{Clock, ManualClock};
use vwr_core::token::{Tier1Claims, Tier1Link, Tier1Tokens};
use vwr_core::{EventId, HmacKeyring};
use vwr_tier2::Tier2Clients;
use vwr_tier2::Tier2Service;
use vwr_tier2::identity::Identity;
use vwr_tier2::model::{LineOrder, LineScore, Place, RegisterMode, Tier2Settings, Touch};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::RedisStore;

const KEY: &str = "tier2-admin-key-0123456789";

/// One store under test with everything around it.
struct H {
    name: &'static str,
    store: Arc<dyn AdmissionStore>,
    svc: Arc<Tier2Service>,
    router: Router,
    tier1: Tier1Tokens,
    clock: Arc<ManualClock>,
    redis: Option<RedisStore>,
    memory: Option<Arc<vwr_tier2::memory::MemoryStore>>,
}

#[derive(Clone, Copy)]
enum Backend {
    Memory,
    Redis,
    Cluster,
}

/// The harness of the review's findings: with a waiting timeout (150 s), the mode in which
/// waiting visitors poll and a stopped poll is judged (F5).
async fn harness(backend: Backend) -> H {
    harness_with(backend, Tier2Settings { waiting_timeout_ms: 150_000, ..Tier2Settings::default() }).await
}

async fn harness_with(backend: Backend, settings: Tier2Settings) -> H {
    let clock = common::manual_clock();
    let memory = matches!(backend, Backend::Memory)
        .then(|| Arc::new(common::memory(Arc::clone(&clock) as Arc<dyn Clock>)));
    let (name, store, redis): (_, Arc<dyn AdmissionStore>, _) = match backend {
        Backend::Memory => ("memory", memory.clone().unwrap() as Arc<dyn AdmissionStore>, None),
        Backend::Redis => {
            let r = common::redis().await;
            ("redis", Arc::new(r.clone()), Some(r))
        }
        Backend::Cluster => {
            let r = common::cluster().await;
            ("cluster", Arc::new(r.clone()), Some(r))
        }
    };
    let clients =
        Tier2Clients { clock: Arc::clone(&clock) as Arc<dyn Clock>, ..Tier2Clients::new(Arc::clone(&store)) };
    let svc = Arc::new(common::service_with(clients, settings));
    let tier1 = Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge");
    let link = Some((tier1.clone().into(), "vwr_t1_".to_owned()));
    let identity = Identity::new(link, Some(svc.tokens().verifier()), Arc::clone(&clock) as Arc<dyn Clock>);
    let router = vwr_tier2::http::public_router(Arc::clone(&svc), identity)
        .merge(vwr_tier2::http::admin_router(Arc::clone(&svc), AdminAuth::bearer(KEY).unwrap()));
    let h = H { name, store, svc, router, tier1, clock, redis, memory };
    h.advance(0);
    h
}

impl H {
    /// Moves every clock by `secs` (the scripts' clock never moves back).
    fn advance(&self, secs: u64) {
        self.clock.advance(secs);
        if let Some(r) = &self.redis {
            let offset = self.clock.now_millis() as i64 - vwr_core::time::now_millis() as i64;
            r.set_time_offset_ms(offset.max(r.time_offset_ms()));
        }
    }

    fn settings(&self) -> Tier2Settings {
        *self.svc.settings()
    }

    async fn register(&self, order: LineOrder, threshold: u64) -> EventId {
        let event = common::unique_event("safe");
        self.store.register(&event, threshold, order, RegisterMode::Admin).await.unwrap();
        event
    }

    /// A worker step (cleanup, then admissions).
    async fn step(&self, e: &EventId) -> vwr_tier2::model::AdmitReport {
        self.store.admit(e, "w", &self.settings()).await.unwrap()
    }

    /// `secs` seconds in steps of `every` seconds: at each, the visitors `polling` poll
    /// (`status`) and the worker steps.
    async fn run(&self, e: &EventId, secs: u64, every: u64, polling: &[&Visitor]) -> (u64, u64) {
        let (mut evicted, mut stale) = (0, 0);
        let mut t = 0;
        while t < secs {
            self.advance(every);
            t += every;
            for v in polling {
                let r = self.send(v.status(e)).await;
                assert_eq!(
                    r.status,
                    StatusCode::OK,
                    "{}: {} lost its place at +{t} s: {:?}",
                    self.name,
                    v.sub,
                    r.body
                );
            }
            let r = self.step(e).await;
            evicted += r.evicted;
            stale += r.stale;
        }
        (evicted, stale)
    }

    async fn send(&self, req: Request<Body>) -> Res {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let (status, headers) = (res.status(), res.headers().clone());
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
        Res { status, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
    }

    /// A tier-1 token as tier 1 issues it (with its place proof), valid for `ttl` seconds.
    fn token(&self, e: &EventId, sub: &str, pos: u64, ttl: u64) -> String {
        let now = self.clock.now_secs();
        self.tier1.sign(&claims(e, sub, pos, now, ttl)).unwrap()
    }

    /// The store loses everything of `e`, as a Redis restarted without its data.
    async fn lose_data(&self, e: &EventId) {
        match (&self.redis, &self.memory) {
            (Some(r), _) => r.purge(e).await.unwrap(),
            (None, Some(m)) => m.purge(e),
            (None, None) => unreachable!(),
        }
    }

    fn visitor(&self, e: &EventId, sub: &str, pos: u64) -> Visitor {
        Visitor { sub: sub.to_owned(), token: self.token(e, sub, pos, 3600) }
    }
}

fn claims(e: &EventId, sub: &str, pos: u64, now: u64, ttl: u64) -> Tier1Claims {
    Tier1Claims {
        iss: "vwr".into(),
        aud: "vwr-edge".into(),
        sub: sub.into(),
        eid: e.to_string(),
        pos,
        tier: 1,
        iat: now,
        nbf: now,
        exp: now + ttl,
        jti: format!("j-{sub}"),
        t2: None,
    }
}

/// A visitor known by their tier-1 token (the user is its subject's digest).
struct Visitor {
    sub: String,
    token: String,
}

impl Visitor {
    fn request(&self, method: &str, path: &str, e: &EventId) -> Request<Body> {
        Request::builder()
            .method(method)
            .uri(format!("/api/queue/{path}/{e}"))
            .header("cookie", format!("vwr_t1_{e}={}", self.token))
            .body(Body::empty())
            .unwrap()
    }

    fn check(&self, e: &EventId) -> Request<Body> {
        self.request("POST", "check", e)
    }

    /// `check` with an identity cookie (the hold tier 2 signed into it), as a browser sends it.
    fn check_holding(&self, e: &EventId, identity: &str) -> Request<Body> {
        Request::builder()
            .method("POST")
            .uri(format!("/api/queue/check/{e}"))
            .header("cookie", format!("vwr_t1_{e}={}; vwr_t2_{e}={identity}", self.token))
            .body(Body::empty())
            .unwrap()
    }

    fn status(&self, e: &EventId) -> Request<Body> {
        self.request("GET", "status", e)
    }

    fn leave(&self, e: &EventId) -> Request<Body> {
        self.request("POST", "leave", e)
    }

    fn user(&self) -> String {
        tier1_user_id(&self.sub)
    }
}

struct Res {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Value,
}

impl Res {
    /// The value of the `Set-Cookie` named `name`, if any.
    fn cookie(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}=");
        self.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|c| c.starts_with(&prefix))
            .map(str::to_owned)
    }

    /// The identity cookie's value this answer sets for `e`.
    fn identity(&self, e: &EventId) -> String {
        let line = self.cookie(&format!("vwr_t2_{e}")).expect("an identity cookie");
        line.split(';').next().unwrap().split_once('=').unwrap().1.to_owned()
    }

    /// The jti of the entry token this answer hands out.
    fn entry_jti(&self) -> Option<String> {
        let token = self.body["entryToken"].as_str()?;
        let payload = token.split('.').nth(1)?;
        let bytes =
            base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload).ok()?;
        serde_json::from_slice::<Value>(&bytes).ok()?["jti"].as_str().map(str::to_owned)
    }

    fn place(&self) -> (Option<&str>, Option<u64>) {
        (self.body["status"].as_str(), self.body["position"].as_u64())
    }
}

async fn on_every_backend<F, Fut>(test: F)
where
    F: Fn(H) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for backend in [Backend::Memory, Backend::Redis, Backend::Cluster] {
        test(harness(backend).await).await;
    }
}

// ---------------------------------------------------------------------------------------------
// docs/invariants.md#23

/// Review finding F5: Redis (or the worker) down for 200 s, with no data lost. Before, the
/// first worker step after it evicted both admitted users (60 s heartbeat timeout) and
/// dropped both waiting ones (150 s). Nobody could be heard, so nobody is removed; once the
/// servers hear again, the timeouts run as before.
async fn outage_evicts_nobody(h: H) {
    let e = h.register(LineOrder::Arrival, 2).await;
    let v: Vec<Visitor> = ["a", "b", "c", "d"].iter().map(|s| h.visitor(&e, s, 1)).collect();
    for (i, visitor) in v.iter().enumerate() {
        let r = h.send(visitor.check(&e)).await;
        assert_eq!(r.status, StatusCode::OK, "{}: {:?}", h.name, r.body);
        let want = if i < 2 { "active" } else { "queued" };
        assert_eq!(r.body["status"], want, "{}", h.name);
    }
    let everyone: Vec<&Visitor> = v.iter().collect();
    h.run(&e, 6, 2, &everyone).await;
    // The outage: no worker step, no call.
    h.advance(200);
    let r = h.step(&e).await;
    assert_eq!((r.evicted, r.stale), (0, 0), "{}: removed for the servers' silence", h.name);
    let snap = h.store.snapshot(&e).await.unwrap();
    assert_eq!((snap.active, snap.waiting), (2, 2), "{}: {snap:?}", h.name);
    for visitor in &v {
        let r = h.send(visitor.status(&e)).await;
        assert_eq!(r.status, StatusCode::OK, "{}: {} lost their place: {:?}", h.name, visitor.sub, r.body);
    }
    assert_eq!(h.send(v[2].status(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);
    // Heard again: d stays away and leaves the line 150 s later, the others keep their places.
    let (_, stale) = h.run(&e, 160, 5, &everyone[..3]).await;
    assert_eq!(stale, 1, "{}: the waiting timeout runs again", h.name);
    assert_eq!(h.send(v[3].status(&e)).await.status, StatusCode::NOT_FOUND, "{}", h.name);
}

#[tokio::test]
async fn an_outage_longer_than_the_timeouts_evicts_nobody() {
    on_every_backend(outage_evicts_nobody).await;
}

/// The API in front is down (every call fails before it reaches tier 2) while Redis and the
/// worker run: with a crowd in the line, a total silence is the servers', not the visitors'.
async fn api_outage_evicts_nobody(h: H) {
    let e = h.register(LineOrder::Arrival, 1).await;
    let v: Vec<Visitor> = (0..12).map(|i| h.visitor(&e, &format!("v{i}"), 1)).collect();
    for visitor in &v {
        assert_eq!(h.send(visitor.check(&e)).await.status, StatusCode::OK, "{}", h.name);
    }
    let everyone: Vec<&Visitor> = v.iter().collect();
    h.run(&e, 4, 1, &everyone).await;
    // 200 s without a single call; the worker keeps stepping every 2 s.
    let (evicted, stale) = h.run(&e, 200, 2, &[]).await;
    assert_eq!((evicted, stale), (0, 0), "{}: removed while nobody could reach tier 2", h.name);
    let r = h.send(v[0].status(&e)).await;
    assert_eq!(r.body["status"], "active", "{}: the admitted visitor lost the slot: {:?}", h.name, r.body);
    for (i, visitor) in v.iter().enumerate().skip(1) {
        assert_eq!(h.send(visitor.status(&e)).await.place(), (Some("queued"), Some(i as u64)), "{}", h.name);
    }
}

#[tokio::test]
async fn an_api_outage_with_a_crowd_in_line_evicts_nobody() {
    on_every_backend(api_outage_evicts_nobody).await;
}

/// Review finding F5: a visitor dropped from the line for a stopped poll (a phone in a
/// tunnel) came back at the tail. Now at the old place, `restored: true`; a visitor who left
/// goes to the tail as before.
async fn evicted_waiting_visitor_gets_the_old_place(h: H) {
    let e = h.register(LineOrder::Arrival, 1).await;
    let v: Vec<Visitor> = ["a", "b", "c", "d"].iter().map(|s| h.visitor(&e, s, 1)).collect();
    for visitor in &v {
        assert_eq!(h.send(visitor.check(&e)).await.status, StatusCode::OK, "{}", h.name);
    }
    // c (position 2) stops polling; the others poll every 10 s; 160 s later c is out.
    let (_, stale) = h.run(&e, 160, 5, &[&v[0], &v[1], &v[3]]).await;
    assert_eq!(stale, 1, "{}", h.name);
    assert_eq!(h.send(v[2].status(&e)).await.status, StatusCode::NOT_FOUND, "{}", h.name);
    let late = h.visitor(&e, "late", 1);
    assert_eq!(h.send(late.check(&e)).await.place(), (Some("queued"), Some(3)), "{}", h.name);
    let back = h.send(v[2].check(&e)).await;
    assert_eq!(back.place(), (Some("queued"), Some(2)), "{}: not the old place: {:?}", h.name, back.body);
    assert_eq!(back.body["restored"], true, "{}", h.name);
    let again = h.send(v[2].check(&e)).await;
    assert!(again.body.get("restored").is_none(), "{}: restored once only: {:?}", h.name, again.body);
    // Leaving is a verdict: back at the tail.
    assert_eq!(h.send(v[1].leave(&e)).await.status, StatusCode::NO_CONTENT, "{}", h.name);
    let r = h.send(v[1].check(&e)).await;
    assert_eq!(r.place(), (Some("queued"), Some(4)), "{}: {:?}", h.name, r.body);
    assert!(r.body.get("restored").is_none(), "{}", h.name);
}

#[tokio::test]
async fn a_visitor_evicted_by_a_timeout_gets_the_old_place_back() {
    on_every_backend(evicted_waiting_visitor_gets_the_old_place).await;
}

/// Review finding F5: an admitted buyer whose heartbeat stopped for a minute was evicted, and
/// their re-check joined behind everyone (in a tier-1 line, "admitted before → tail"). Now they
/// wait ahead of everyone and get their admission back as it was: the same `jti`, the same end.
async fn evicted_admission_comes_back(h: H) {
    let e = h.register(LineOrder::Tier1, 1).await;
    let (a, b, c) = (h.visitor(&e, "a", 10), h.visitor(&e, "b", 20), h.visitor(&e, "c", 30));
    let first = h.send(a.check(&e)).await;
    assert_eq!(first.body["status"], "active", "{}: {:?}", h.name, first.body);
    let verifier = h.svc.tokens().verifier();
    let jti = verifier.verify(first.body["entryToken"].as_str().unwrap(), &e, &a.user(), h.clock.now_secs());
    let jti = jti.unwrap().jti;
    let ends = first.body["admissionEndsAt"].as_u64().unwrap();
    for visitor in [&b, &c] {
        assert_eq!(h.send(visitor.check(&e)).await.body["status"], "queued", "{}", h.name);
    }
    // a's heartbeat stops: evicted after a minute; b gets the slot.
    let (evicted, _) = h.run(&e, 70, 5, &[&b, &c]).await;
    assert_eq!(evicted, 1, "{}", h.name);
    assert_eq!(h.send(b.status(&e)).await.body["status"], "active", "{}", h.name);
    let back = h.send(a.check(&e)).await;
    assert_eq!(
        back.place(),
        (Some("queued"), Some(1)),
        "{}: not ahead of everyone waiting: {:?}",
        h.name,
        back.body
    );
    assert_eq!(back.body["restored"], true, "{}", h.name);
    // Back for an admission, a waits at score 0 ahead of everyone: it is no front the others
    // have to pass (c would never see its turn while a waits), and it is told to ask `status`
    // rather than wait on the document (issue 32: 30 % of admissions went uncollected).
    assert!(back.body.get("lineScore").is_none(), "{}: {:?}", h.name, back.body);
    let doc = h.store.line(&e).await.unwrap();
    assert_eq!((doc.front, doc.figures.queue_size), (Some(30), 2), "{}: the front is c", h.name);
    // b leaves; once b's last entry token has expired, the worker gives a the admission back.
    assert_eq!(h.send(b.leave(&e)).await.status, StatusCode::NO_CONTENT, "{}", h.name);
    h.run(&e, 35, 5, &[&a, &c]).await;
    let r = h.send(a.status(&e)).await;
    assert_eq!(r.body["status"], "active", "{}: {:?}", h.name, r.body);
    assert_eq!(
        r.body["admissionEndsAt"].as_u64(),
        Some(ends),
        "{}: a new admission, not the old one",
        h.name
    );
    let now = h.clock.now_secs();
    let claims = verifier.verify(r.body["entryToken"].as_str().unwrap(), &e, &a.user(), now).unwrap();
    assert_eq!(claims.jti, jti, "{}", h.name);
    assert_eq!(h.send(c.status(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);
}

#[tokio::test]
async fn an_evicted_admission_comes_back_as_it_was() {
    on_every_backend(evicted_admission_comes_back).await;
}

// ---------------------------------------------------------------------------------------------
// docs/invariants.md#20

/// Review finding F2: tier 2 held the visitor, but the edge wants a live tier-1 token on the
/// protected paths. Every answer that finds them renews it: the same claims and place proof,
/// re-signed, valid for the identity window — the edge verifier accepts it. With the identity
/// cookie gone too, the expired token still finds the place.
async fn held_visitor_gets_a_renewed_cookie(h: H) {
    let e = h.register(LineOrder::Tier1, 1).await;
    let a = h.visitor(&e, "a", 1);
    assert_eq!(h.send(a.check(&e)).await.body["status"], "active", "{}", h.name);
    let short = Visitor { sub: "b".into(), token: h.token(&e, "b", 2, 30) };
    assert_eq!(h.send(short.check(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);
    h.run(&e, 40, 10, &[&a]).await;
    // b's tier-1 token has expired (30 s); b never polled: no identity cookie either.
    let r = h.send(short.status(&e)).await;
    assert_eq!(r.status, StatusCode::OK, "{}: {:?}", h.name, r.body);
    assert_eq!(r.place(), (Some("queued"), Some(1)), "{}", h.name);
    let set = r.cookie(&format!("vwr_t1_{e}")).unwrap_or_else(|| panic!("{}: no tier-1 cookie", h.name));
    assert!(set.contains("Path=/; Secure; HttpOnly; SameSite=Lax"), "{set}");
    let renewed = set.split(';').next().unwrap().split_once('=').unwrap().1.to_owned();
    let now = h.clock.now_secs();
    let edge = h.tier1.verify(&renewed, &e, now).expect("the edge accepts the renewed token");
    let window = h.settings().identity_ttl_ms() / 1000;
    // The token lasts the window; its cookie as long as the identity (a quiet wait in line).
    let life = h.settings().identity_life_ms() / 1000;
    assert!(set.contains(&format!("Max-Age={life}")), "{set}");
    assert_eq!((edge.sub.as_str(), edge.pos, edge.jti.as_str(), edge.exp), ("b", 2, "j-b", now + window));
    let link: Tier1Link = h.tier1.link().clone();
    assert!(link.verify(&renewed, &e, now).is_ok(), "{}: the place proof went missing", h.name);
    // With the renewed cookie b is known as ever, and admitted in turn.
    let b = Visitor { sub: "b".into(), token: renewed };
    assert_eq!(h.send(a.leave(&e)).await.status, StatusCode::NO_CONTENT, "{}", h.name);
    h.run(&e, 35, 5, &[&b]).await;
    let r = h.send(b.status(&e)).await;
    assert_eq!(r.body["status"], "active", "{}: {:?}", h.name, r.body);
}

#[tokio::test]
async fn a_held_visitor_gets_a_renewed_tier1_cookie_the_edge_accepts() {
    on_every_backend(held_visitor_gets_a_renewed_cookie).await;
}

/// Tier 2 renews nobody it does not hold: after a leave, or for a token that never had a place
/// here (a lapsed token finds a place; it never makes one).
async fn unheld_visitor_gets_no_cookie(h: H) {
    let e = h.register(LineOrder::Tier1, 1).await;
    let a = h.visitor(&e, "a", 1);
    assert_eq!(h.send(a.check(&e)).await.body["status"], "active", "{}", h.name);
    let gone = Visitor { sub: "g".into(), token: h.token(&e, "g", 2, 30) };
    assert_eq!(h.send(gone.check(&e)).await.body["status"], "queued", "{}", h.name);
    assert_eq!(h.send(gone.leave(&e)).await.status, StatusCode::NO_CONTENT, "{}", h.name);
    let stranger = Visitor { sub: "s".into(), token: h.token(&e, "s", 3, 30) };
    h.advance(40);
    let before = h.store.snapshot(&e).await.unwrap();
    for (who, path, method) in
        [(&gone, "status", "GET"), (&stranger, "status", "GET"), (&stranger, "check", "POST")]
    {
        let r = h.send(who.request(method, path, &e)).await;
        assert!(r.status.is_client_error(), "{}: {} {path}: {:?}", h.name, who.sub, r.body);
        assert!(r.cookie(&format!("vwr_t1_{e}")).is_none(), "{}: {} got a tier-1 cookie", h.name, who.sub);
    }
    let r = h.send(stranger.check(&e)).await;
    assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::FORBIDDEN, Some("tier1_token_required")));
    assert_eq!(h.store.snapshot(&e).await.unwrap(), before, "{}: a lapsed token made a place", h.name);
}

#[tokio::test]
async fn a_visitor_tier2_does_not_hold_gets_no_tier1_cookie() {
    on_every_backend(unheld_visitor_gets_no_cookie).await;
}

// ---------------------------------------------------------------------------------------------
// docs/invariants.md#24

/// Review finding F11: with only the edge keys (readable from the CloudFront configuration),
/// anyone could mint a tier-1 token with `pos: 0` — or a position never served — and go first.
/// Without a place proof of tier 1's, such a token is no identity and no position: alone, 401
/// `identity_required`; beside a site login, 403 `tier1_token_required` in a tier-1 line.
async fn minted_token_takes_no_place(h: H) {
    let e = h.register(LineOrder::Tier1, 1).await;
    let honest = h.visitor(&e, "honest", 7);
    assert_eq!(h.send(honest.check(&e)).await.body["status"], "active", "{}", h.name);
    let waiting = h.visitor(&e, "waiting", 8);
    assert_eq!(h.send(waiting.check(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);
    // The forger has the edge ring, not the place-proof ring.
    let forger =
        Tier1Link::new(h.tier1.edge_ring().clone(), HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge");
    let now = h.clock.now_secs();
    for (pos, t2) in [(0, None), (1, None), (5, Some("t1.AAAAAAAAAAAAAAAAAAAAAA".to_owned()))] {
        let minted =
            forger.resign(&Tier1Claims { t2, ..claims(&e, &format!("bot{pos}"), pos, now, 600) }).unwrap();
        assert!(h.tier1.verify(&minted, &e, now).is_ok(), "the edge would let it through");
        // Alone, it is no identity at all.
        let bot = Visitor { sub: format!("bot{pos}"), token: minted.clone() };
        let r = h.send(bot.check(&e)).await;
        assert_eq!(
            (r.status, r.body["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("identity_required")),
            "{}: a minted token (pos {pos}) took a place: {:?}",
            h.name,
            r.body
        );
        // With a signed-in site user, it gives no position.
        let mut req = Request::post(format!("/api/queue/check/{e}"))
            .header("x-vwr-token", minted)
            .body(Body::empty())
            .unwrap();
        req.extensions_mut().insert(UpstreamUser(format!("site-user-{pos}")));
        let r = h.send(req).await;
        assert_eq!(
            (r.status, r.body["error"].as_str()),
            (StatusCode::FORBIDDEN, Some("tier1_token_required")),
            "{}: a minted token (pos {pos}) gave a position: {:?}",
            h.name,
            r.body
        );
    }
    let snap = h.store.snapshot(&e).await.unwrap();
    assert_eq!((snap.active, snap.waiting), (1, 1), "{}: {snap:?}", h.name);
    assert_eq!(h.send(waiting.status(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);
    // A real token still takes its place.
    let real = h.visitor(&e, "real", 3);
    assert_eq!(h.send(real.check(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);
}

#[tokio::test]
async fn a_token_minted_with_the_edge_keys_takes_no_place() {
    on_every_backend(minted_token_takes_no_place).await;
}

// ---------------------------------------------------------------------------------------------
// ADR 0023

/// Review finding F13 (the limit, kept on purpose): lowering the threshold evicts nobody; the
/// users inside keep their slots, and nobody is admitted until the slots taken fall below the
/// new threshold.
async fn lowering_evicts_nobody(h: H) {
    let e = h.register(LineOrder::Arrival, 3).await;
    let s = Tier2Settings { entry_token_ttl_ms: 0, ..h.settings() };
    for u in ["a", "b", "c", "d", "e"] {
        h.store.check(&e, u, LineScore::Arrival, u, &s).await.unwrap();
    }
    h.store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    let step = h.store.admit(&e, "w", &s).await.unwrap();
    assert_eq!((step.evicted, step.admitted.len(), step.active), (0, 0, 3), "{}", h.name);
    for (leaver, admitted) in [("a", 0), ("b", 0), ("c", 1)] {
        h.store.leave(&e, leaver).await.unwrap();
        let step = h.store.admit(&e, "w", &s).await.unwrap();
        assert_eq!(step.admitted.len(), admitted, "{}: after {leaver} left", h.name);
    }
    let d = h.store.status(&e, "d", Touch::No, 0).await.unwrap();
    assert!(matches!(d, Some(Place::Active { .. })), "{}: {d:?}", h.name);
}

#[tokio::test]
async fn lowering_the_threshold_evicts_nobody_and_admits_nobody_until_below() {
    on_every_backend(lowering_evicts_nobody).await;
}

// ---------------------------------------------------------------------------------------------
// docs/invariants.md#26 and docs/api.md#the-line-document: waiting visitors read the line
// document and make no call until their turn (the default: no waiting timeout).

async fn on_every_backend_by_default<F, Fut>(test: F)
where
    F: Fn(H) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for backend in [Backend::Memory, Backend::Redis, Backend::Cluster] {
        test(harness_with(backend, Tier2Settings::default()).await).await;
    }
}

fn line(e: &EventId) -> Request<Body> {
    Request::builder().uri(format!("/api/queue/line/{e}")).body(Body::empty()).unwrap()
}

/// The line document is public and shared (no identity, no cookie, a second of CDN cache),
/// and its `front` passes a visitor's `lineScore` exactly when the visitor has left the line.
async fn line_document_tells_who_left(h: H) {
    let e = h.register(LineOrder::Arrival, 1).await;
    let v: Vec<Visitor> = ["a", "b", "c"].iter().map(|s| h.visitor(&e, s, 1)).collect();
    let mut scores = Vec::new();
    // A clock off the whole second: the answers' times carry its milliseconds.
    h.clock.advance_millis(234);
    let mut checked = 0.0;
    for (i, visitor) in v.iter().enumerate() {
        let r = h.send(visitor.check(&e)).await;
        assert_eq!(r.body["status"], if i == 0 { "active" } else { "queued" }, "{}: {:?}", h.name, r.body);
        assert_eq!(r.body["lineScore"].is_u64(), i > 0, "{}: {:?}", h.name, r.body);
        scores.push(r.body["lineScore"].as_u64().unwrap_or(0));
        assert_eq!(r.body["checkedAt"].is_number(), i > 0, "{}: {:?}", h.name, r.body);
        if i > 0 {
            // Seconds since the epoch with a millisecond fraction, not milliseconds
            // (docs/api.md#times).
            assert_eq!(r.body["checkedAt"].to_string(), format!("{}.234", h.clock.now_secs()), "{}", h.name);
            checked = r.body["checkedAt"].as_f64().unwrap_or(0.0);
        }
    }
    let (sb, sc) = (scores[1], scores[2]);
    assert!(sb < sc, "{}", h.name);
    h.advance(1);
    let doc = h.send(line(&e)).await;
    let updated = doc.body["updatedAt"].as_f64().unwrap_or(0.0);
    assert_eq!(
        updated,
        h.clock.now_millis() as f64 / 1000.0,
        "{}: a fresh read, in seconds: {:?}",
        h.name,
        doc.body
    );
    assert!(updated >= checked, "{}: read after the joins", h.name);
    assert_eq!(doc.status, StatusCode::OK, "{}: {:?}", h.name, doc.body);
    assert_eq!(doc.headers[header::CACHE_CONTROL], "public, max-age=1", "{}", h.name);
    assert!(doc.headers.get(header::SET_COOKIE).is_none(), "{}: the document is the same for all", h.name);
    assert_eq!((doc.body["waiting"].as_u64(), doc.body["active"].as_u64()), (Some(2), Some(1)), "{}", h.name);
    assert_eq!(doc.body["front"].as_u64(), Some(sb), "{}", h.name);
    assert_eq!(doc.body["marks"], serde_json::json!([[1, sb], [2, sc]]), "{}", h.name);
    // a leaves; its slot is held for its last entry token (30 s); then b is admitted.
    assert_eq!(h.send(v[0].leave(&e)).await.status, StatusCode::NO_CONTENT);
    h.advance(31);
    let step = h.step(&e).await;
    assert_eq!(step.admitted.len(), 1, "{}", h.name);
    h.advance(1);
    let doc = h.send(line(&e)).await;
    assert_eq!(doc.body["front"].as_u64(), Some(sc), "{}: {:?}", h.name, doc.body);
    assert!(sb < sc, "b sees the front pass its score, c does not");
    let r = h.send(v[1].status(&e)).await;
    assert_eq!(r.body["status"], "active", "{}: {:?}", h.name, r.body);
    // The store's clock, in seconds since the epoch: within a few seconds of the test's.
    let now = h.clock.now_millis() as f64 / 1000.0;
    assert!(r.body["admittedAt"].as_f64().is_some_and(|t| t <= now + 5.0 && t > now - 60.0), "{:?}", r.body);
    // Nobody waits: the front is null.
    assert_eq!(h.send(v[2].leave(&e)).await.status, StatusCode::NO_CONTENT);
    h.advance(1);
    let doc = h.send(line(&e)).await;
    assert!(doc.body["front"].is_null() && doc.body["marks"] == serde_json::json!([]), "{:?}", doc.body);
    // An unknown event: 404, as every tier-2 route.
    let unknown = EventId::parse("no-such-event").unwrap();
    assert_eq!(h.send(line(&unknown)).await.status, StatusCode::NOT_FOUND, "{}", h.name);
}

#[tokio::test]
async fn the_line_document_tells_each_visitor_when_it_has_left_the_line() {
    on_every_backend_by_default(line_document_tells_who_left).await;
}

/// Waiting visitors make no call while they wait: 5 minutes of silence removes nobody from
/// the line. An admission nobody collects frees its slot `collect` seconds after it was made
/// (the next in line gets it), and its visitor, back later, gets it back (`restored`) as after
/// any timeout.
async fn uncollected_admission_frees_its_slot(h: H) {
    let e = h.register(LineOrder::Arrival, 1).await;
    let v: Vec<Visitor> = ["a", "b", "c"].iter().map(|s| h.visitor(&e, s, 1)).collect();
    for visitor in &v {
        assert_eq!(h.send(visitor.check(&e)).await.status, StatusCode::OK, "{}", h.name);
    }
    // Five quiet minutes (twice the old waiting timeout); a polls (it is admitted: its
    // heartbeat and tokens).
    let (evicted, stale) = h.run(&e, 300, 5, &[&v[0]]).await;
    assert_eq!((evicted, stale), (0, 0), "{}: a silent wait in line is no reason to leave it", h.name);
    assert_eq!(h.send(v[0].leave(&e)).await.status, StatusCode::NO_CONTENT);
    // The worker steps every second (a longer gap would be a silence, which does not count).
    let mut admitted = 0;
    for _ in 0..40 {
        h.advance(1);
        admitted += h.step(&e).await.admitted.len();
        if admitted > 0 {
            break;
        }
    }
    assert_eq!(admitted, 1, "{}: b admitted once a's last token ended", h.name);
    // b never comes for it: after `collect` (10 s) the slot goes to c.
    let collect = h.settings().collect_ms / 1000;
    let mut freed_after = None;
    for t in 1..=collect + 2 {
        h.advance(1);
        let r = h.step(&e).await;
        if r.evicted > 0 {
            freed_after = Some(t);
            assert_eq!(r.admitted.len(), 1, "{}: the freed slot goes to the next in line", h.name);
            break;
        }
    }
    assert!(
        freed_after.is_some_and(|t| t >= collect && t <= collect + 1),
        "{}: freed after {freed_after:?} s",
        h.name
    );
    assert_eq!(h.send(v[2].status(&e)).await.body["status"], "active", "{}", h.name);
    // b comes back: the admission was kept for it; it waits at the front for a slot.
    let back = h.send(v[1].check(&e)).await;
    assert_eq!(back.body["restored"], true, "{}: {:?}", h.name, back.body);
    assert_eq!(back.place(), (Some("queued"), Some(1)), "{}: {:?}", h.name, back.body);
    // At the very front (score 0), which is no front the others wait on: b asks `status`.
    assert!(back.body.get("lineScore").is_none(), "{}: {:?}", h.name, back.body);
    let front = h.store.line(&e).await.unwrap().front;
    assert!(front.is_none_or(|f| f > 0), "{}: front {front:?}", h.name);
}

#[tokio::test]
async fn an_admission_nobody_collects_frees_its_slot_and_is_given_back() {
    on_every_backend_by_default(uncollected_admission_frees_its_slot).await;
}

// ---------------------------------------------------------------------------------------------
// docs/invariants.md#27

/// Issue 32: a Redis without persistence restarted mid-sale lost every place; the visitors came
/// back to the tail (arrival order), or with a fresh admission behind those who waited. Each
/// identity cookie tier 2 sets carries the place it holds (a hold); after the loss, a `check`
/// with a hold signed before it gets that place back: a place in line at its old score, an
/// admission as it was (same jti, from the front). A hold of another visitor, a hold signed
/// after the loss (a visitor who left since), and any hold while the store lost nothing give
/// nothing back.
async fn lost_places_come_back_by_their_holds(h: H) {
    let e = common::unique_event("hold");
    h.svc.set_threshold(&e, 2, Some(LineOrder::Arrival)).await.unwrap();
    let [a, b, c, d, x] = ["a", "b", "c", "d", "x"].map(|s| h.visitor(&e, s, 1));
    let mut holds = Vec::new();
    let mut jtis = Vec::new();
    for v in [&a, &b, &c, &d] {
        h.advance(1);
        let r = h.send(v.check(&e)).await;
        assert_eq!(r.status, StatusCode::OK, "{}: {:?}", h.name, r.body);
        holds.push(r.identity(&e));
        jtis.push(r.entry_jti());
    }
    assert_eq!((jtis[0].is_some(), jtis[1].is_some(), jtis[2].is_some()), (true, true, false), "{}", h.name);
    // x joins, leaves, and comes back with the hold of its first visit: no loss, no gift.
    let r = h.send(x.check(&e)).await;
    let x_hold = r.identity(&e);
    h.send(x.leave(&e)).await;
    let r = h.send(x.check_holding(&e, &x_hold)).await;
    assert!(r.body.get("restored").is_none(), "{}: a hold without a loss: {:?}", h.name, r.body);
    h.send(x.leave(&e)).await;
    h.advance(5);

    h.lose_data(&e).await;
    h.advance(5);
    // a (admitted): back, as it was, at once (nobody waits, the slots are free).
    let r = h.send(a.check_holding(&e, &holds[0])).await;
    assert_eq!(
        (r.body["status"].as_str(), r.body["restored"].as_bool()),
        (Some("active"), Some(true)),
        "{}: {:?}",
        h.name,
        r.body
    );
    assert_eq!(r.entry_jti(), jtis[0], "{}: the same admission", h.name);
    // d (waiting behind c): back at its old place in line — ahead of whoever joins now.
    let r = h.send(d.check_holding(&e, &holds[3])).await;
    assert_eq!(
        (r.body["restored"].as_bool(), r.body["status"].as_str()),
        (Some(true), Some("active")),
        "{}: a free slot, nobody waiting: {:?}",
        h.name,
        r.body
    );
    // A newcomer (x's tier-1 token, a's hold) gets no place of a's: it joins the line.
    let newcomer = h.visitor(&e, "n", 1);
    let r = h.send(newcomer.check_holding(&e, &holds[0])).await;
    assert_eq!(
        (r.body["status"].as_str(), r.body["restored"].as_bool()),
        (Some("queued"), None),
        "{}: {:?}",
        h.name,
        r.body
    );
    // c (waiting, before d and the newcomer): at its old score, ahead of the newcomer.
    let r = h.send(c.check_holding(&e, &holds[2])).await;
    assert_eq!(r.place(), (Some("queued"), Some(1)), "{}: {:?}", h.name, r.body);
    assert_eq!(r.body["restored"], true, "{}", h.name);
    // b (admitted): its admission from the front, ahead of c, at the next free slot.
    let r = h.send(b.check_holding(&e, &holds[1])).await;
    assert_eq!(
        (r.place(), r.body["restored"].as_bool()),
        ((Some("queued"), Some(1)), Some(true)),
        "{}: {:?}",
        h.name,
        r.body
    );
    h.send(a.leave(&e)).await;
    h.advance(40);
    h.step(&e).await;
    let r = h.send(b.status(&e)).await;
    assert_eq!(
        (r.body["status"].as_str(), r.entry_jti()),
        (Some("active"), jtis[1].clone()),
        "{}: b's own admission back: {:?}",
        h.name,
        r.body
    );
    assert_eq!(h.send(c.status(&e)).await.place(), (Some("queued"), Some(1)), "{}", h.name);

    // d leaves and comes back with the hold it got after the loss: to the tail, as any leaver.
    let r = h.send(d.status(&e)).await;
    let d_after = r.identity(&e);
    h.send(d.leave(&e)).await;
    let r = h.send(d.check_holding(&e, &d_after)).await;
    assert_eq!(
        (r.place(), r.body["restored"].as_bool()),
        ((Some("queued"), Some(3)), None),
        "{}: {:?}",
        h.name,
        r.body
    );
}

#[tokio::test]
async fn a_store_that_lost_its_data_gives_each_place_back_by_its_hold() {
    for backend in [Backend::Memory, Backend::Redis, Backend::Cluster] {
        lost_places_come_back_by_their_holds(harness_with(backend, Tier2Settings::default()).await).await;
    }
}
