//! What the visitors and the bots share (neither imports the other): the run's context, their
//! requests with the waiting page's retries, their random numbers, the page's `assign` with
//! the proofs a join brings (the site's enqueue token, a proof of work), and what the real
//! visitors let slip for the bots to use.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Method, Request, header};
use http_body_util::Full;
use serde_json::{Value, json};
use vwr_core::EventId;
use vwr_core::keys::EcKeyring;

use super::stats::{Counters, Latencies, Timeline};
use crate::client::{HttpClient, Reply};
use crate::error::LoadtestError;
use crate::page::{backoff_seconds, jitter_seconds, retry_after_seconds, retry_after_wait};

/// Endpoint names (the keys of latencies and costs).
pub const ASSIGN: &str = "tier1.assign";
pub const CHECK: &str = "tier1.check";
pub const STATUS: &str = "tier1.status";
/// The harness's second `check` of an admitted ticket (a second tab, a reload), which must
/// answer the same identity: a safety probe, not what a waiting page does, so it is reported
/// apart and not counted in the visitors' costs.
pub const RECHECK: &str = "tier1.recheck";
/// Tier 2's line document (`GET /api/queue/line/{eventId}`, behind the CDN).
pub const LINE: &str = "tier2.line";

/// Most proof-of-work refusals in a row before a join gives up (a real page backs off then).
const MAX_CHALLENGES: usize = 3;
/// The header of the site's enqueue token (docs/abuse.md#one-place-per-account).
const ENQUEUE_HEADER: &str = "x-vwr-enqueue-token";
/// The header that proves a `check` comes from whoever called `assign` (docs/api.md).
pub(super) const SECRET_HEADER: &str = "x-vwr-request-secret";

/// Shared by all visitors and bots.
pub struct Ctx {
    pub client: HttpClient,
    /// Where the visitors send their requests: vwr, or the front proxy in front of it.
    pub base: String,
    /// vwr itself (the harness's admin reads go here, never through the front proxy).
    pub origin: String,
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
    /// Tier 2: poll `status` at the server's hints instead of reading the line document and
    /// calling `check` when its front passes the visitor (`--legacy-tier2`).
    pub legacy_tier2: bool,
    /// Share of visitors who close the tab right after joining (`--no-show-rate`).
    pub no_show_rate: f64,
    /// What a join brings: the site's enqueue token, a proof of work (docs/abuse.md).
    pub proofs: Proofs,
    /// What the visitors let slip, for the bots (`--bots`).
    pub leaks: Leaks,
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
        Duration::from_secs_f64(jitter_seconds(secs, self.next_f64()).max(0.0))
    }
}

pub(super) enum Step {
    Reply(Reply),
    /// Gave up: deadline passed while the service kept failing.
    GaveUp,
}

/// Milliseconds since the epoch: the clock a `Retry-After` date is read against.
fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// The claims of a JWT (its payload, unverified).
pub(super) fn claims_of(token: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
}

impl Ctx {
    pub(super) fn secs(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The instant of a unix time on the server's clock (assumed to agree with ours).
    pub(super) fn instant_of(&self, unix: f64) -> Instant {
        let offset = unix - self.unix_start;
        if offset > 0.0 { self.start + Duration::from_secs_f64(offset) } else { self.start }
    }

    /// One request with the waiting page's retry behaviour on 503/429/5xx/network errors: its
    /// back-off, or a 503's or 429's `Retry-After`.
    pub(super) async fn call(
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
        // Failed answers in a row: the page's back-off (2, 4 … 60 s), or a `Retry-After`.
        let mut errors = 0u32;
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
                    } else if endpoint == LINE {
                        self.count_line_fetch(&reply);
                    }
                    let s = reply.status.as_u16();
                    if s == 503 || s == 429 {
                        errors += 1;
                        let header = reply.headers.get(header::RETRY_AFTER).and_then(|v| v.to_str().ok());
                        match retry_after_seconds(header, now_ms()) {
                            Some(r) => {
                                Counters::inc(&self.counters.degraded);
                                // At least half a second: a `Retry-After: 0` is no reason to spin.
                                let wait = retry_after_wait(r as f64, rng.next_f64()).max(0.5);
                                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
                            }
                            None => {
                                // vwr never answers 429 (API Gateway's throttle or a WAF does):
                                // no server error, but no verdict either.
                                let c = &self.counters;
                                Counters::inc(if s == 429 {
                                    &c.transient_refusals
                                } else {
                                    &c.server_errors
                                });
                                tokio::time::sleep(rng.jitter(backoff_seconds(errors))).await;
                            }
                        }
                        continue;
                    }
                    if s >= 500 {
                        Counters::inc(&self.counters.server_errors);
                        errors += 1;
                        tokio::time::sleep(rng.jitter(backoff_seconds(errors))).await;
                        continue;
                    }
                    return Step::Reply(reply);
                }
                Err(_) => {
                    Counters::inc(&self.counters.network_errors);
                    errors += 1;
                    tokio::time::sleep(rng.jitter(backoff_seconds(errors))).await;
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

    /// A line document fetch, counted as [`Self::count_status_fetch`] counts status fetches:
    /// only those that reached the origin are tier-2 Lambda calls.
    fn count_line_fetch(&self, reply: &Reply) {
        let c = &self.counters;
        match reply.headers.get("x-cache").map(|v| v.to_str().unwrap_or_default()) {
            Some(v) if v.starts_with("Hit") => Counters::inc(&c.line_hits),
            Some(_) => Counters::inc(&c.line_misses),
            None => Counters::inc(&c.line_uncached),
        }
    }

    pub(super) fn check_threshold(&self, body: &Value) {
        let th = self.threshold.load(std::sync::atomic::Ordering::Relaxed);
        if let Some(cur) = body["currentUsers"].as_u64()
            && th > 0
            && cur > th.max(body["threshold"].as_u64().unwrap_or(0))
        {
            Counters::inc(&self.counters.over_threshold_responses);
        }
    }

    /// `assign` as the waiting page makes it: with the account's enqueue token when there is one,
    /// and, asked for a proof of work, solving it (`solve_pow`) and asking again with `{pow}` —
    /// at most [`MAX_CHALLENGES`] times. The last answer (`None`: the deadline passed).
    pub(super) async fn assign(
        &self,
        rng: &mut Rng,
        endpoint: &'static str,
        account: Option<&str>,
        solve_pow: bool,
    ) -> Step {
        let token = account.and_then(|a| self.proofs.enqueue_token(a));
        let headers: Vec<(&str, &str)> = token.as_deref().map(|t| (ENQUEUE_HEADER, t)).into_iter().collect();
        let path = format!("/vwr-api/vwr/assign/{}", self.event);
        let mut body = None;
        let mut challenges = 0;
        loop {
            let step = self.send(rng, endpoint, Method::POST, &path, &headers, body.as_ref()).await;
            let Step::Reply(r) = &step else {
                return step;
            };
            let v = r.json();
            let challenged = r.status.as_u16() == 403 && v["error"] == "challenge_required";
            challenges += 1;
            if !(challenged && solve_pow) || challenges > MAX_CHALLENGES {
                return step;
            }
            let (Some(challenge), Some(difficulty)) = (v["challenge"].as_str(), v["difficulty"].as_u64())
            else {
                return step;
            };
            let Some(nonce) =
                solve(challenge.to_owned(), u32::try_from(difficulty).unwrap_or(u32::MAX), rng).await
            else {
                return Step::GaveUp;
            };
            body = Some(json!({"pow": {"challenge": challenge, "nonce": nonce}}));
        }
    }
}

/// What a join needs beyond the call: the site's key (to sign the enqueue token of an
/// account, as the site does after its login) and whether to solve a proof of work.
pub struct Proofs {
    site: Option<EcKeyring>,
    event: EventId,
}

impl Proofs {
    /// `site_key`: the site's private key as `vwr keys generate` prints `SITE_ENQUEUE_KEY`.
    pub fn new(site_key: Option<&str>, event: &str) -> Result<Self, LoadtestError> {
        let event = EventId::parse(event)?;
        let site = match site_key {
            Some(text) => Some(EcKeyring::from_text(text, None).map_err(LoadtestError::EnqueueKey)?),
            None => None,
        };
        Ok(Self { site, event })
    }

    /// The site's enqueue token for `account`, valid 10 minutes (none without a site key).
    pub fn enqueue_token(&self, account: &str) -> Option<String> {
        let site = self.site.as_ref()?;
        vwr_tier1::enqueue::sign(site, account, &self.event, vwr_core::time::now_secs() + 600).ok()
    }
}

/// Solves a proof of work off the async threads (it is CPU work), with nonces from a random
/// 12-hex-digit prefix as the page's (a server takes each solution once).
async fn solve(challenge: String, difficulty: u32, rng: &mut Rng) -> Option<String> {
    let prefix = format!("{:012x}", (rng.next_f64() * (1u64 << 48) as f64) as u64);
    tokio::task::spawn_blocking(move || vwr_tier1::pow::solve_from(&challenge, difficulty, &prefix))
        .await
        .ok()
}

/// What the real visitors let slip, for the bots to use.
#[derive(Default)]
pub struct Leaks {
    /// `requestId`s of visitors whose turn came (their owners were admitted).
    tickets: Mutex<Vec<String>>,
    /// Tier-1 cookies (`vwr_t1_{e}=…`) of admitted visitors.
    cookies: Mutex<Vec<String>>,
    /// The tier-2 subjects (`sub`) of the real visitors' entry tokens.
    subjects: Mutex<HashSet<String>>,
    /// Set when the visitors are done: the bots stop.
    pub stop: AtomicBool,
}

impl Leaks {
    pub fn ticket(&self, request_id: &str) {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner()).push(request_id.to_owned());
    }

    pub fn cookie(&self, cookie: &str) {
        self.cookies.lock().unwrap_or_else(|p| p.into_inner()).push(cookie.to_owned());
    }

    /// A real visitor's tier-2 entry token.
    pub fn entry_token(&self, token: &str) {
        if let Some(sub) = subject(token) {
            self.subjects.lock().unwrap_or_else(|p| p.into_inner()).insert(sub);
        }
    }

    /// The `i`-th leaked ticket, once there is one.
    pub fn ticket_at(&self, i: usize) -> Option<String> {
        Self::nth(&self.tickets, i)
    }

    /// The `i`-th leaked cookie, once there is one.
    pub fn cookie_at(&self, i: usize) -> Option<String> {
        Self::nth(&self.cookies, i)
    }

    /// The tier-2 subjects of the real visitors' entry tokens so far.
    pub fn subjects(&self) -> HashSet<String> {
        self.subjects.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn nth(list: &Mutex<Vec<String>>, i: usize) -> Option<String> {
        list.lock().unwrap_or_else(|p| p.into_inner()).get(i).cloned()
    }
}

/// The subject (`sub`) of a JWT.
pub(super) fn subject(token: &str) -> Option<String> {
    claims_of(token)?["sub"].as_str().map(str::to_owned)
}
