//! One virtual visitor: joins tier 1, waits in line as the waiting page does, passes the edge
//! with its cookie, joins tier 2, heartbeats, calls the protected API with its entry token,
//! dwells and leaves — or abandons at a random point without leaving.
//!
//! In line, like the page (docs/lifecycle.md#the-public-status-document, docs/api.md#poll-hints-and-estimates):
//! after `assign` it reads only the CDN-cached public status document, first at the server's
//! `nextPollSeconds`, then every quarter of its own expected wait ((position − servingCounter) ÷
//! rate, the rate being `servedPerSecond` when above zero, else the one its last estimate
//! implied), 1–30 s, ± 20 %; it calls `check` only when `servingCounter` has reached its
//! position (or the document says the sale closed after its turn). With `--legacy-polling` it
//! polls `check` at the server's hints instead (the page before the status document).
//!
//! A no-show (`--no-show-rate`) joins and closes the tab: it makes no other call.
//!
//! A visitor who joins before the open of a scheduled sale (`assign` answers
//! `state: "prequeue"`) does what the waiting page does then (docs/lifecycle.md): it reads only
//! the public status document, every ~10 s, until `opensAt`; waits a random 0–5 s; and learns
//! its drawn position from its first `check`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Method, Request, header};
use http_body_util::Full;
use serde_json::Value;

use super::stats::{Counters, Latencies, Timeline};
use crate::client::{HttpClient, Reply};

/// Shared by all visitors.
pub struct Ctx {
    pub client: HttpClient,
    pub base: String,
    pub event: String,
    pub counters: Counters,
    pub latencies: Latencies,
    /// When each request was sent (request rates per second).
    pub timeline: Timeline,
    pub start: Instant,
    /// Unix time (seconds) at `start`: maps the server's `opensAt` to this clock.
    pub unix_start: f64,
    pub deadline: Instant,
    pub dwell: Duration,
    pub abandon_rate: f64,
    pub threshold: std::sync::atomic::AtomicU64,
    /// Requests in flight at once (the harness's own capacity; a queue here is not latency).
    pub in_flight: tokio::sync::Semaphore,
    /// Poll `check` at the server's hints (the page before the status document).
    pub legacy_polling: bool,
    /// Share of visitors who close the tab right after joining (`--no-show-rate`).
    pub no_show_rate: f64,
    /// What a join brings: the site's enqueue token, a proof of work (docs/abuse.md).
    pub proofs: super::bots::Proofs,
    /// What the visitors let slip, for the bots (`--bots`).
    pub leaks: super::bots::Leaks,
}

/// What happened to one visitor.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub arrived_s: f64,
    /// When `assign` succeeded.
    pub joined_s: f64,
    pub position: Option<u64>,
    pub tier1_admitted_s: Option<f64>,
    pub tier2_admitted_s: Option<f64>,
    pub done: bool,
    pub abandoned: bool,
    /// `assign` answered `state: "prequeue"`: the position comes from a `check` after the open.
    pub prequeue: bool,
    /// A pre-queue visitor's first `check` after its countdown (seconds since the start).
    pub first_check_s: Option<f64>,
    /// Reads of the public status document.
    pub status_polls: u64,
    /// `check` calls while waiting for tier-1 admission (the admitting one included).
    pub checks: u64,
    /// The first wait estimate (`estimatedWaitSeconds`): from `assign`, or for a pre-queue
    /// visitor from its first `check` after the open.
    pub estimate_s: Option<f64>,
    /// When that estimate was answered (seconds since the start): the real wait runs from here
    /// to `tier1_admitted_s`.
    pub estimated_at_s: Option<f64>,
    /// Closed the tab right after joining: no call after `assign`, so never a `check` after
    /// its turn (a no-show of docs/outflow.md#targetarrivals).
    pub no_show: bool,
}

/// A tiny deterministic PRNG (xorshift) per visitor.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `secs` × (1 ± 20 %), as the page's jitter.
    pub fn jitter(&mut self, secs: f64) -> Duration {
        Duration::from_secs_f64((secs * (0.8 + 0.4 * self.next_f64())).max(0.05))
    }
}

pub(super) enum Step {
    Reply(Reply),
    /// Gave up: deadline passed while the service kept failing.
    GaveUp,
}

fn claims_of(token: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
}

fn jti_of(token: &str) -> Option<String> {
    claims_of(token)?["jti"].as_str().map(str::to_owned)
}

/// The position a tier-1 token was issued for (its `pos` claim).
fn pos_of(token: &str) -> Option<u64> {
    claims_of(token)?["pos"].as_u64()
}

impl Ctx {
    fn secs(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The instant of a unix time on the server's clock (assumed to agree with ours).
    fn instant_of(&self, unix: f64) -> Instant {
        let offset = unix - self.unix_start;
        if offset > 0.0 { self.start + Duration::from_secs_f64(offset) } else { self.start }
    }

    /// One request with the waiting page's retry behaviour on 503/429/network errors.
    async fn call(
        &self,
        rng: &mut Rng,
        endpoint: &'static str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Step {
        self.send(rng, endpoint, method, path, headers, None).await
    }

    /// [`Self::call`] with an optional JSON body.
    pub(super) async fn send(
        &self,
        rng: &mut Rng,
        endpoint: &'static str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Step {
        let mut backoff = 1.0f64;
        loop {
            if Instant::now() > self.deadline {
                return Step::GaveUp;
            }
            let mut req = Request::builder().method(method.clone()).uri(format!("{}{path}", self.base));
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            let bytes = match body {
                Some(b) => {
                    req = req.header(header::CONTENT_TYPE, "application/json");
                    Bytes::from(b.to_string())
                }
                None => Bytes::new(),
            };
            let Ok(req) = req.body(Full::new(bytes)) else {
                return Step::GaveUp;
            };
            let Ok(_permit) = self.in_flight.acquire().await else {
                return Step::GaveUp;
            };
            let t0 = Instant::now();
            self.timeline.record(endpoint, t0.saturating_duration_since(self.start));
            match self.client.raw(req).await {
                Ok(reply) => {
                    self.latencies.record(endpoint, t0.elapsed().as_micros() as u64);
                    if endpoint == STATUS {
                        self.count_status_fetch(&reply);
                    }
                    let s = reply.status.as_u16();
                    if s == 503 || s == 429 {
                        let retry = reply
                            .headers
                            .get(header::RETRY_AFTER)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.parse::<f64>().ok());
                        match retry {
                            Some(r) => {
                                Counters::inc(&self.counters.degraded);
                                tokio::time::sleep(rng.jitter(r.max(0.5))).await;
                            }
                            None => {
                                Counters::inc(&self.counters.server_errors);
                                tokio::time::sleep(rng.jitter(backoff)).await;
                                backoff = (backoff * 2.0).min(30.0);
                            }
                        }
                        continue;
                    }
                    if s >= 500 {
                        Counters::inc(&self.counters.server_errors);
                        tokio::time::sleep(rng.jitter(backoff)).await;
                        backoff = (backoff * 2.0).min(30.0);
                        continue;
                    }
                    return Step::Reply(reply);
                }
                Err(_) => {
                    Counters::inc(&self.counters.network_errors);
                    tokio::time::sleep(rng.jitter(backoff)).await;
                    backoff = (backoff * 2.0).min(30.0);
                }
            }
        }
    }

    /// A status fetch answered by the CDN (`X-Cache: Hit …`) costs no Lambda call; anything
    /// else (`Miss`, `RefreshHit`, `Error`, or no `X-Cache` at all: no CDN in front) reached
    /// the origin.
    fn count_status_fetch(&self, reply: &Reply) {
        let c = &self.counters;
        match reply.headers.get("x-cache").map(|v| v.to_str().unwrap_or_default()) {
            Some(v) if v.starts_with("Hit") => Counters::inc(&c.status_hits),
            Some(_) => Counters::inc(&c.status_misses),
            None => Counters::inc(&c.status_uncached),
        }
    }

    fn check_threshold(&self, body: &Value) {
        let th = self.threshold.load(std::sync::atomic::Ordering::Relaxed);
        if let Some(cur) = body["currentUsers"].as_u64()
            && th > 0
            && cur > th.max(body["threshold"].as_u64().unwrap_or(0))
        {
            Counters::inc(&self.counters.over_threshold_responses);
        }
    }

    /// Before the open, as the waiting page: the public status document every ~10 s (jittered)
    /// until `opens_at` (unix seconds; the document may move it) or until it says the sale is
    /// no longer before its open; then a random 0–5 s so that the crowd's first `check`s
    /// spread out. `false`: gave up.
    async fn wait_for_open(&self, rng: &mut Rng, mut opens_at: f64, out: &mut Outcome) -> bool {
        let path = format!("/vwr-api/vwr/status/{}", self.event);
        loop {
            let left = self.instant_of(opens_at).saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            tokio::time::sleep(rng.jitter(STATUS_POLL_SECONDS).min(left)).await;
            if Instant::now() >= self.instant_of(opens_at) {
                break;
            }
            let Step::Reply(r) = self.call(rng, STATUS, Method::GET, &path, &[]).await else {
                return false;
            };
            out.status_polls += 1;
            let body = r.json();
            match body["state"].as_str() {
                Some("scheduled" | "prequeue") => {
                    if let Some(t) = body["opensAt"].as_f64() {
                        opens_at = t;
                    }
                }
                // Opened early (or paused, closed): on to `check`, which says which.
                Some(_) if r.status.is_success() => break,
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_secs_f64(rng.next_f64() * OPEN_SPREAD_SECONDS)).await;
        true
    }
}

/// Endpoint names (the keys of latencies and costs).
pub const ASSIGN: &str = "tier1.assign";
pub const CHECK: &str = "tier1.check";
pub const STATUS: &str = "tier1.status";
/// The harness's second `check` of an admitted ticket (a second tab, a reload), which must
/// answer the same identity: a safety probe, not what a waiting page does, so it is reported
/// apart and not counted in the visitors' costs.
pub const RECHECK: &str = "tier1.recheck";

/// The header that proves a `check` comes from whoever called `assign` (docs/api.md).
const SECRET_HEADER: &str = "x-vwr-request-secret";

/// The waiting page reads the status document every ~10 s before the open.
const STATUS_POLL_SECONDS: f64 = 10.0;
/// … and every ~15 s while the sale is paused.
const PAUSED_POLL_SECONDS: f64 = 15.0;
/// At the open, each page waits a random 0–5 s before its first `check`.
const OPEN_SPREAD_SECONDS: f64 = 5.0;

/// Seconds until the turn of `place` (1 = next) at `rate` positions per second; without a
/// rate `max(place ÷ 50, 5)` — the page's `waitSeconds`.
pub fn wait_seconds(place: u64, rate: Option<f64>) -> f64 {
    if place == 0 {
        return 0.0;
    }
    match rate {
        Some(r) if r > 0.0 && r.is_finite() => (place as f64 / r).ceil(),
        _ => ((place / 50) as f64).max(5.0),
    }
}

/// Seconds between looks at the status document in line: a quarter of the expected wait,
/// 1–30 s — the page's `pollForWait` (the server's `nextPollSeconds` follows the same rule).
pub fn poll_for_wait(wait: f64) -> f64 {
    (wait / 4.0).clamp(1.0, 30.0)
}

/// The server's poll hint as the page takes it: 1–60 s, 5 s when absent.
fn hint_of(body: &Value) -> f64 {
    body["nextPollSeconds"].as_f64().map_or(5.0, |s| s.clamp(1.0, 60.0))
}

/// What the page keeps of its place: the position, and the rate its last estimate implied
/// (`(peopleAhead + 1) ÷ estimatedWaitSeconds`), used while `servedPerSecond` is unknown.
#[derive(Debug, Default)]
struct Place {
    position: Option<u64>,
    rate: Option<f64>,
}

impl Place {
    /// From an `assign` or a waiting `check` answer.
    fn learn(&mut self, body: &Value) {
        if let Some(p) = body["position"].as_u64() {
            self.position = Some(p);
        }
        let ahead = body["peopleAhead"].as_u64().or_else(|| {
            let serving = body["servingCounter"].as_u64()?;
            Some(self.position?.saturating_sub(serving).saturating_sub(1))
        });
        if let (Some(ahead), Some(wait)) = (ahead, body["estimatedWaitSeconds"].as_f64())
            && wait > 0.0
        {
            self.rate = Some((ahead + 1) as f64 / wait);
        }
    }
}

/// What to ask next while in line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Check,
    Status,
}

/// Runs one visitor arriving at `arrival` after the start.
pub async fn visit(ctx: Arc<Ctx>, id: u64, arrival: Duration) -> Outcome {
    let mut rng = Rng::new(id + 1);
    tokio::time::sleep_until(tokio::time::Instant::from_std(ctx.start + arrival)).await;
    let mut out = Outcome { arrived_s: ctx.secs(), ..Outcome::default() };
    // Where this visitor gives up, if it does: in tier 1 (0) or tier 2 (1).
    let abandons = rng.next_f64() < ctx.abandon_rate;
    let abandon_in_tier2 = rng.next_f64() < 0.5;
    let abandon_after = Duration::from_secs_f64(1.0 + rng.next_f64() * 10.0);
    // Drawn after the others, so that adding no-shows leaves who abandons where unchanged.
    let no_show = rng.next_f64() < ctx.no_show_rate;
    let e = ctx.event.clone();

    // Tier 1: join (a scheduled sale not yet in its pre-queue: ask again shortly).
    let r = loop {
        // As the page: the site's enqueue cookie of this visitor's account goes along, and a
        // proof of work asked for is solved.
        let account = format!("visitor-{id}");
        let Step::Reply(r) = super::bots::assign(&ctx, &mut rng, ASSIGN, Some(&account), true).await else {
            return out;
        };
        if r.status.as_u16() == 409 && r.json()["error"] == "event_not_open" && Instant::now() < ctx.deadline
        {
            tokio::time::sleep(rng.jitter(1.0)).await;
            continue;
        }
        break r;
    };
    if !r.status.is_success() {
        Counters::inc(&ctx.counters.unexpected_4xx);
        return out;
    }
    Counters::inc(&ctx.counters.joined);
    out.joined_s = ctx.secs();
    let body = r.json();
    let Some(request_id) = body["requestId"].as_str().map(str::to_owned) else {
        return out;
    };
    // Proof of possession, where the server asks for it: `check` sends back the secret `assign`
    // answered.
    let secret = body["requestSecret"].as_str().map(str::to_owned);
    let proof: Vec<(&str, &str)> = secret.as_deref().map(|s| (SECRET_HEADER, s)).into_iter().collect();
    out.position = body["position"].as_u64();
    if out.position.is_some() {
        out.estimate_s = body["estimatedWaitSeconds"].as_f64();
        out.estimated_at_s = out.estimate_s.map(|_| out.joined_s);
    }
    if no_show {
        out.no_show = true;
        Counters::inc(&ctx.counters.no_shows);
        return out;
    }
    let quit_after = (abandons && !abandon_in_tier2).then_some(abandon_after);

    // Tier 1: wait for the turn.
    let Some((cookie, tier1_jti)) =
        wait_for_turn(&ctx, &mut rng, &mut out, &request_id, &proof, &body, quit_after).await
    else {
        return out;
    };
    // What leaks once the turn has come: the ticket (a log line, a pasted link) and the cookie
    // (copied to another device). Without its secret the ticket is worth nothing.
    ctx.leaks.ticket(&request_id);
    ctx.leaks.cookie(&cookie);

    // The edge: the event page with the cookie.
    let Step::Reply(r) = ctx
        .call(&mut rng, "edge.event_page", Method::GET, &format!("/events/{e}"), &[("cookie", &cookie)])
        .await
    else {
        return out;
    };
    if r.status.as_u16() != 200 {
        Counters::inc(&ctx.counters.edge_refused);
        return out;
    }
    Counters::inc(&ctx.counters.passed_edge);

    // Checking the same ticket again (a second tab, a reload) must give the same identity.
    if let Step::Reply(r) = ctx
        .call(&mut rng, RECHECK, Method::GET, &format!("/vwr-api/vwr/check/{e}/{request_id}"), &proof)
        .await
    {
        let again = r.json()["token"].as_str().and_then(jti_of);
        if r.status.is_success() && again != tier1_jti {
            Counters::inc(&ctx.counters.double_admitted);
        }
    }

    // Tier 2: check in, poll until active.
    let tier2_jti: Option<String>;
    let tier2_start = Instant::now();
    let mut path_kind = "check";
    let token = loop {
        if abandons && abandon_in_tier2 && tier2_start.elapsed() > abandon_after {
            Counters::inc(&ctx.counters.abandoned);
            out.abandoned = true;
            return out;
        }
        let (endpoint, method, path) = if path_kind == "check" {
            ("tier2.check", Method::POST, format!("/api/queue/check/{e}"))
        } else {
            ("tier2.status", Method::GET, format!("/api/queue/status/{e}"))
        };
        let Step::Reply(r) = ctx.call(&mut rng, endpoint, method, &path, &[("cookie", &cookie)]).await else {
            return out;
        };
        let body = r.json();
        if r.status.as_u16() == 404 && body["error"] == "not_in_queue" {
            // Lost our place (e.g. Redis restarted without persistence): check in again.
            Counters::inc(&ctx.counters.rejoined_tier2);
            path_kind = "check";
            continue;
        }
        if !r.status.is_success() {
            Counters::inc(&ctx.counters.unexpected_4xx);
            return out;
        }
        ctx.check_threshold(&body);
        if body["status"] == "active" {
            let token = body["entryToken"].as_str().unwrap_or_default().to_owned();
            ctx.leaks.entry_token(&token);
            tier2_jti = jti_of(&token);
            out.tier2_admitted_s = Some(ctx.secs());
            Counters::inc(&ctx.counters.active_tier2);
            break token;
        }
        path_kind = "status";
        tokio::time::sleep(rng.jitter(body["nextPollSeconds"].as_f64().unwrap_or(1.0))).await;
    };

    // The protected API with the entry token.
    let Step::Reply(r) = ctx
        .call(
            &mut rng,
            "seats",
            Method::GET,
            &format!("/api/seats/{e}"),
            &[("cookie", &cookie), ("x-queue-entry-token", &token)],
        )
        .await
    else {
        return out;
    };
    if r.status.as_u16() != 200 {
        Counters::inc(&ctx.counters.seats_refused);
    }

    // Dwell, heartbeating through status (which must keep the same identity).
    let dwell_end = Instant::now() + ctx.dwell;
    while Instant::now() < dwell_end {
        if abandons && abandon_in_tier2 {
            Counters::inc(&ctx.counters.abandoned);
            out.abandoned = true;
            return out;
        }
        tokio::time::sleep(ctx.dwell.min(Duration::from_secs(5))).await;
        let Step::Reply(r) = ctx
            .call(
                &mut rng,
                "tier2.heartbeat",
                Method::GET,
                &format!("/api/queue/status/{e}"),
                &[("cookie", &cookie)],
            )
            .await
        else {
            return out;
        };
        let body = r.json();
        if r.status.is_success() {
            ctx.check_threshold(&body);
            let jti = body["entryToken"].as_str().and_then(jti_of);
            if jti.is_some() && jti != tier2_jti {
                Counters::inc(&ctx.counters.double_admitted);
            }
        }
    }
    let Step::Reply(_) = ctx
        .call(&mut rng, "tier2.leave", Method::POST, &format!("/api/queue/leave/{e}"), &[("cookie", &cookie)])
        .await
    else {
        return out;
    };
    out.done = true;
    Counters::inc(&ctx.counters.done);
    out
}

/// Tier 1 after the join, until admitted: the cookie and the token's `jti`, or `None` when the
/// visitor gave up, abandoned (after `quit_after` in line) or was refused.
///
/// Page-like: the status document at the server's first hint, then every quarter of the
/// expected wait; `check` when `servingCounter` reaches the position. A pre-queue visitor first
/// waits for the open and makes one `check` to learn its drawn position. Legacy: `check` at the
/// server's hints.
async fn wait_for_turn(
    ctx: &Ctx,
    rng: &mut Rng,
    out: &mut Outcome,
    request_id: &str,
    proof: &[(&str, &str)],
    joined: &Value,
    quit_after: Option<Duration>,
) -> Option<(String, Option<String>)> {
    let e = &ctx.event;
    let check_path = format!("/vwr-api/vwr/check/{e}/{request_id}");
    let status_path = format!("/vwr-api/vwr/status/{e}");
    let mut place = Place::default();
    place.learn(joined);
    // Since when this visitor waits in line with a known position (its abandonment clock): a
    // pre-queue visitor's starts at the open, so that every drawn position is observed.
    let mut waiting_since = place.position.map(|_| Instant::now());
    // Legacy: the last hint, kept when an answer has none.
    let mut poll = joined["nextPollSeconds"].as_f64().unwrap_or(1.0);
    let (mut look, mut delay) = if ctx.legacy_polling {
        (Look::Check, rng.jitter(poll))
    } else {
        (Look::Status, rng.jitter(hint_of(joined)))
    };
    if place.position.is_none() && joined["state"] == "prequeue" {
        out.prequeue = true;
        let opens_at = joined["opensAt"].as_f64().unwrap_or(0.0);
        if !ctx.wait_for_open(rng, opens_at, out).await {
            return None;
        }
        out.first_check_s = Some(ctx.secs());
        poll = 0.0;
        (look, delay) = (Look::Check, rng.jitter(poll));
    }
    loop {
        if quit_after.is_some_and(|after| waiting_since.is_some_and(|t| t.elapsed() > after)) {
            Counters::inc(&ctx.counters.abandoned);
            out.abandoned = true;
            return None;
        }
        tokio::time::sleep(delay).await;
        if look == Look::Status {
            let Step::Reply(r) = ctx.call(rng, STATUS, Method::GET, &status_path, &[]).await else {
                return None;
            };
            out.status_polls += 1;
            if !r.status.is_success() {
                Counters::inc(&ctx.counters.unexpected_4xx);
                return None;
            }
            let d = r.json();
            let Some(position) = place.position else {
                (look, delay) = (Look::Check, Duration::ZERO);
                continue;
            };
            let serving = d["servingCounter"].as_u64().unwrap_or(0);
            let served = serving >= position;
            match d["state"].as_str().unwrap_or("open") {
                "inactive" => {
                    Counters::inc(&ctx.counters.unexpected_4xx);
                    return None;
                }
                "closed" if !served => return None,
                "scheduled" | "prequeue" => delay = rng.jitter(STATUS_POLL_SECONDS),
                _ if served => (look, delay) = (Look::Check, Duration::ZERO),
                "paused" => delay = rng.jitter(PAUSED_POLL_SECONDS),
                _ => {
                    let rate = d["servedPerSecond"].as_f64().filter(|r| *r > 0.0).or(place.rate);
                    delay = rng.jitter(poll_for_wait(wait_seconds(position - serving, rate)));
                }
            }
            continue;
        }
        let Step::Reply(r) = ctx.call(rng, CHECK, Method::GET, &check_path, proof).await else {
            return None;
        };
        out.checks += 1;
        let body = r.json();
        if !r.status.is_success() {
            Counters::inc(&ctx.counters.unexpected_4xx);
            return None;
        }
        if out.position.is_none() {
            out.position = body["position"].as_u64();
        }
        if body["admitted"] == true {
            let token = body["token"].as_str().unwrap_or_default().to_owned();
            if out.position.is_none() {
                out.position = pos_of(&token);
            }
            out.tier1_admitted_s = Some(ctx.secs());
            Counters::inc(&ctx.counters.admitted_tier1);
            return Some((format!("vwr_t1_{e}={token}"), jti_of(&token)));
        }
        if out.position.is_some() && waiting_since.is_none() {
            waiting_since = Some(Instant::now());
        }
        if out.estimate_s.is_none()
            && let Some(w) = body["estimatedWaitSeconds"].as_f64()
        {
            out.estimate_s = Some(w);
            out.estimated_at_s = Some(ctx.secs());
        }
        place.learn(&body);
        if ctx.legacy_polling {
            poll = body["nextPollSeconds"].as_f64().unwrap_or(poll);
            delay = rng.jitter(poll);
        } else if body["state"] == "closed" {
            return None;
        } else {
            // The first look after the server's hint; a pre-queue answer (the open is late):
            // ask again.
            look = if place.position.is_some() && body["state"] != "prequeue" {
                Look::Status
            } else {
                Look::Check
            };
            delay = rng.jitter(hint_of(&body));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_and_polls_as_the_page() {
        assert_eq!(wait_seconds(0, Some(10.0)), 0.0);
        assert_eq!(wait_seconds(101, Some(10.0)), 11.0);
        assert_eq!(wait_seconds(1_000, None), 20.0);
        assert_eq!(wait_seconds(10, Some(0.0)), 5.0);
        assert_eq!(poll_for_wait(2.0), 1.0);
        assert_eq!(poll_for_wait(40.0), 10.0);
        assert_eq!(poll_for_wait(1e6), 30.0);
        let mut p = Place::default();
        p.learn(&serde_json::json!({"position": 120, "servingCounter": 20, "estimatedWaitSeconds": 10, "nextPollSeconds": 2}));
        assert_eq!(p.position, Some(120));
        assert_eq!(p.rate, Some(10.0));
        p.learn(&serde_json::json!({"position": 120, "peopleAhead": 49, "estimatedWaitSeconds": 25}));
        assert_eq!(p.rate, Some(2.0));
        assert_eq!(hint_of(&serde_json::json!({"nextPollSeconds": 0})), 1.0);
        assert_eq!(hint_of(&serde_json::json!({})), 5.0);
    }
}
