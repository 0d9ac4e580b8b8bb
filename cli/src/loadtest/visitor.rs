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
//!
//! Place safety (README "Load testing"): a visitor forgets its ticket
//! only on the tier-1 API's verdicts on it ([`TICKET_VERDICTS`]) and then joins again; any
//! other refusal (a WAF's or API Gateway's 403 or 429, `origin_forbidden`, a non-JSON body, a
//! 5xx, a network error) keeps the ticket and backs off as the page does (2, 4 … 60 s). Sent
//! back to the waiting room by the edge or by tier 2 (its tier-1 token no longer taken), it
//! `check`s its ticket again, as the page does. It keeps the tier-2 identity cookie as a
//! browser would, and when tier 2 answers `not_in_queue` although it never left, it checks in
//! again. Every way its place can be seen moving backwards is counted once per visitor in
//! `placesLostToFaults` (see [`Visitor::lose_place`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Method, header};
use serde_json::Value;

use super::ctx::{ASSIGN, CHECK, Ctx, RECHECK, Rng, SECRET_HEADER, STATUS, Step, claims_of};
use super::stats::Counters;
use crate::client::Reply;

/// How a visitor's run ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum End {
    /// Still on its way (in a line, dwelling, or still trying to join) when the run ended
    /// (`--max-seconds`): `unfinished`, not lost.
    #[default]
    Unfinished,
    /// Through: admitted in both tiers, served by the protected API, dwelled and left.
    Done,
    Abandoned,
    NoShow,
    /// `assign` refused its first join: it never had a place.
    Refused,
    /// The system lost it: its run ended without getting through, for this reason.
    Lost(&'static str),
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
    /// How its run ended.
    pub end: End,
    /// The first way its place moved backwards, if it did (the causes in [`cause`]).
    pub place_lost: Option<&'static str>,
}

fn jti_of(token: &str) -> Option<String> {
    claims_of(token)?["jti"].as_str().map(str::to_owned)
}

/// The position a tier-1 token was issued for (its `pos` claim).
fn pos_of(token: &str) -> Option<u64> {
    claims_of(token)?["pos"].as_u64()
}

/// The waiting page reads the status document every ~10 s before the open.
const STATUS_POLL_SECONDS: f64 = 10.0;
/// … and every ~15 s while the sale is paused.
const PAUSED_POLL_SECONDS: f64 = 15.0;
/// At the open, each page waits a random 0–5 s before its first `check`.
const OPEN_SPREAD_SECONDS: f64 = 5.0;

/// Before the open, as the waiting page: the public status document every ~10 s (jittered)
/// until `opens_at` (unix seconds; the document may move it) or until it says the sale is
/// no longer before its open; then a random 0–5 s so that the crowd's first `check`s
/// spread out. `false`: gave up.
async fn wait_for_open(ctx: &Ctx, rng: &mut Rng, mut opens_at: f64, out: &mut Outcome) -> bool {
    let path = format!("/vwr-api/vwr/status/{}", ctx.event);
    loop {
        let left = ctx.instant_of(opens_at).saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        tokio::time::sleep(rng.jitter(STATUS_POLL_SECONDS).min(left)).await;
        if Instant::now() >= ctx.instant_of(opens_at) {
            break;
        }
        let Step::Reply(r) = ctx.call(rng, STATUS, Method::GET, &path, &[]).await else {
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

/// The tier-1 API's verdicts on a ticket (docs/api.md, `check`): the only answers on which the
/// waiting page forgets its ticket and joins again. An honest visitor of the harness (the right
/// secret, its own event, a ticket within its lifetime, never released) causes none of them.
pub const TICKET_VERDICTS: [&str; 6] = [
    "invalid_request_id",
    "wrong_event",
    "proof_required",
    "request_id_expired",
    "admission_expired",
    "session_ended",
];

/// The verdict of a `check` answer, if it is one of the tier-1 API's verdicts on the ticket: a
/// 400, 403 or 410 whose JSON `error` is in [`TICKET_VERDICTS`]. Anything else — a WAF's HTML
/// page, API Gateway's `{"message": "Forbidden"}`, `origin_forbidden`, a 429 — is no verdict.
pub fn ticket_verdict(status: u16, body: &Value) -> Option<&'static str> {
    if !matches!(status, 400 | 403 | 410) {
        return None;
    }
    let code = body["error"].as_str()?;
    TICKET_VERDICTS.iter().find(|v| **v == code).copied()
}

/// The page's back-off after `errors` failures in a row: 2, 4, 8 … 60 s (before jitter).
pub fn backoff_seconds(errors: u32) -> f64 {
    2f64.powi(i32::try_from(errors.clamp(1, 6)).unwrap_or(6)).min(60.0)
}

/// How a place can be seen moving backwards: the causes of `placesLostToFaults`.
pub mod cause {
    /// Tier 1 gave a verdict on the ticket of a visitor that caused none: it joins again.
    pub const TICKET_REPLACED: &str = "ticketReplaced";
    /// A `check` answered another position than the ticket's.
    pub const TIER1_POSITION_CHANGED: &str = "tier1PositionChanged";
    /// A later `check` of a ticket tier 1 had admitted answered it as waiting, or refused it.
    pub const TIER1_UNADMITTED: &str = "tier1Unadmitted";
    /// Tier 2 stopped holding a visitor that never left, and the check-in after it gave
    /// neither `active` nor `restored: true`.
    pub const TIER2_NOT_RESTORED: &str = "tier2NotRestored";
    /// An active visitor answered `queued` by tier 2.
    pub const TIER2_DEMOTED: &str = "tier2Demoted";
    /// Tier 2 answered `position_taken`: another identity holds this visitor's tier-1 position.
    pub const TIER2_POSITION_TAKEN: &str = "tier2PositionTaken";
}

/// What a tier-2 answer means for the visitor.
#[derive(Debug, Clone, PartialEq)]
pub enum Tier2Answer {
    /// Where the visitor is (`queued` or `active`).
    Place(Value),
    /// 404 `not_in_queue`: tier 2 holds nothing for this caller.
    NotInQueue,
    /// 401/403 about who the caller is: the tier-1 token was not taken; back to tier 1.
    Identity,
    /// 409 `position_taken`.
    PositionTaken,
    /// The event is gone for tier 2 (404 `event_not_found`).
    Gone,
    /// No verdict on the place: back off and try again.
    Transient,
}

pub fn tier2_answer(status: u16, body: &Value) -> Tier2Answer {
    let code = body["error"].as_str();
    match (status, code) {
        (200..=299, _) if body["status"].is_string() => Tier2Answer::Place(body.clone()),
        (404, Some("not_in_queue")) => Tier2Answer::NotInQueue,
        (404, Some("event_not_found")) => Tier2Answer::Gone,
        (401, Some("identity_required")) | (403, Some("invalid_identity" | "tier1_token_required")) => {
            Tier2Answer::Identity
        }
        (409, Some("position_taken")) => Tier2Answer::PositionTaken,
        _ => Tier2Answer::Transient,
    }
}

/// Whether a check-in after tier 2 stopped holding the visitor gave its place back: `active`,
/// or `restored: true` (tier 2's word that the old place was given back).
pub fn place_kept(body: &Value) -> bool {
    body["status"] == "active" || body["restored"] == true
}

/// The value of cookie `name` that a reply sets: `Some(None)` when it clears it (empty,
/// `Max-Age=0`), `None` when it does not mention it.
pub fn set_cookie(reply: &Reply, name: &str) -> Option<Option<String>> {
    let prefix = format!("{name}=");
    let line = reply
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .rfind(|v| v.starts_with(&prefix))?;
    let mut parts = line.split(';').map(str::trim);
    let value = parts.next().unwrap_or_default().strip_prefix(&prefix).unwrap_or_default();
    let cleared = value.is_empty() || parts.any(|a| a.eq_ignore_ascii_case("max-age=0"));
    Some((!cleared).then(|| value.to_owned()))
}

/// A visitor's ticket.
#[derive(Debug, Clone)]
struct Ticket {
    request_id: String,
    /// The request secret `assign` answered (sent back with every `check`).
    secret: Option<String>,
    /// Its position, once known (a pre-queue ticket learns it at its first `check`).
    position: Option<u64>,
}

/// Why a stage stopped before the visitor got through.
enum Stop {
    /// A verdict on the ticket: forget it and join again.
    Rejoin(&'static str),
    /// Tier 1 answers the admitted ticket as waiting: back in line.
    Line,
    End(End),
}

/// Where this visitor gives up, if it does.
struct Abandon {
    /// In tier 1, this long after it has a known position in line.
    in_tier1: Option<Duration>,
    /// In tier 2, `after` after checking in (or at once while dwelling).
    in_tier2: bool,
    after: Duration,
}

struct Visitor<'a> {
    ctx: &'a Ctx,
    id: u64,
    rng: Rng,
    out: Outcome,
    abandon: Abandon,
    ticket: Option<Ticket>,
    /// Still the first ticket (its position is the outcome's).
    first_ticket: bool,
    /// The last `assign` or `check` answer in line (the hints of the next wait).
    answer: Value,
    /// `vwr_t1_{e}=<token>` once admitted.
    t1: Option<String>,
    t1_jti: Option<String>,
    /// `vwr_t2_{e}=<identity>` as tier 2 last set it.
    t2: Option<String>,
    t2_jti: Option<String>,
    /// Tier 2 said it holds nothing for this visitor, who never left: the next check-in must
    /// give the place back.
    evicted: bool,
    /// Refusals that were no verdict, in a row (the page's back-off).
    errors: u32,
    passed_edge: bool,
}

/// Runs one visitor arriving at `arrival` after the start.
pub async fn visit(ctx: Arc<Ctx>, id: u64, arrival: Duration) -> Outcome {
    let mut rng = Rng::new(id + 1);
    tokio::time::sleep_until(tokio::time::Instant::from_std(ctx.start + arrival)).await;
    let out = Outcome { arrived_s: ctx.secs(), ..Outcome::default() };
    // Where this visitor gives up, if it does: in tier 1 or in tier 2.
    let abandons = rng.next_f64() < ctx.abandon_rate;
    let abandon_in_tier2 = rng.next_f64() < 0.5;
    let abandon_after = Duration::from_secs_f64(1.0 + rng.next_f64() * 10.0);
    // Drawn after the others, so that adding no-shows leaves who abandons where unchanged.
    let no_show = rng.next_f64() < ctx.no_show_rate;
    let mut v = Visitor {
        ctx: &ctx,
        id,
        rng,
        out,
        abandon: Abandon {
            in_tier1: (abandons && !abandon_in_tier2).then_some(abandon_after),
            in_tier2: abandons && abandon_in_tier2,
            after: abandon_after,
        },
        ticket: None,
        first_ticket: true,
        answer: Value::Null,
        t1: None,
        t1_jti: None,
        t2: None,
        t2_jti: None,
        evicted: false,
        errors: 0,
        passed_edge: false,
    };
    let end = v.run(no_show).await;
    v.out.end = end;
    v.out.done = end == End::Done;
    v.out.abandoned = end == End::Abandoned;
    v.out.no_show = end == End::NoShow;
    v.out
}

impl Visitor<'_> {
    async fn run(&mut self, no_show: bool) -> End {
        if let Err(stop) = self.join().await {
            return self.ended(stop);
        }
        if no_show {
            Counters::inc(&self.ctx.counters.no_shows);
            return End::NoShow;
        }
        let mut rejoins = 0u32;
        loop {
            match self.through().await {
                Ok(()) => return End::Done,
                Err(Stop::Line) => {}
                Err(Stop::Rejoin(code)) => {
                    // As the page: forget the ticket and join again, three times at once,
                    // then with back-off.
                    self.ctx.counters.verdict(code);
                    self.lose_place(cause::TICKET_REPLACED);
                    (self.ticket, self.t1, self.first_ticket) = (None, None, false);
                    rejoins += 1;
                    if rejoins > 3 {
                        tokio::time::sleep(self.rng.jitter(backoff_seconds(rejoins - 3))).await;
                    }
                    if let Err(stop) = self.join().await {
                        return self.ended(stop);
                    }
                }
                Err(Stop::End(end)) => return end,
            }
        }
    }

    fn ended(&self, stop: Stop) -> End {
        match stop {
            Stop::End(end) => end,
            Stop::Rejoin(_) | Stop::Line => End::Lost("refused"),
        }
    }

    /// Counts a place moving backwards: each time by `why` (the report's
    /// `placesLost.byCause`), and the visitor once in `placesLostToFaults`.
    ///
    /// Seen from the visitor: tier 1 replacing its ticket after a verdict it did not cause, a
    /// `check` answering another position, an admitted ticket answered as waiting or refused,
    /// tier 2 no longer holding it (it never left) without giving the place back at the next
    /// check-in, tier 2 answering an active visitor `queued`, or another identity holding its
    /// tier-1 position in tier 2.
    fn lose_place(&mut self, why: &'static str) {
        self.ctx.counters.place_loss(why);
        if self.out.place_lost.is_none() {
            self.out.place_lost = Some(why);
            Counters::inc(&self.ctx.counters.places_lost);
        }
    }

    /// A refusal that is no verdict on the place: counted, and the page's back-off to wait.
    fn transient(&mut self) -> Duration {
        Counters::inc(&self.ctx.counters.transient_refusals);
        self.errors += 1;
        self.rng.jitter(backoff_seconds(self.errors))
    }

    fn proof(&self) -> Vec<(&'static str, String)> {
        self.ticket.as_ref().and_then(|t| t.secret.clone()).map(|s| (SECRET_HEADER, s)).into_iter().collect()
    }

    fn check_path(&self) -> Option<String> {
        let t = self.ticket.as_ref()?;
        Some(format!("/vwr-api/vwr/check/{}/{}", self.ctx.event, t.request_id))
    }

    /// The `Cookie` header: the tier-1 token and the tier-2 identity, as a browser sends them.
    fn cookies(&self) -> String {
        [self.t1.as_deref(), self.t2.as_deref()].into_iter().flatten().collect::<Vec<_>>().join("; ")
    }

    fn keep_identity(&mut self, reply: &Reply) {
        let name = format!("vwr_t2_{}", self.ctx.event);
        if let Some(v) = set_cookie(reply, &name) {
            self.t2 = v.map(|v| format!("{name}={v}"));
        }
    }

    /// A tier-1 token answered for the ticket: the visitor's cookie from now on.
    fn admitted(&mut self, token: &str) {
        let e = &self.ctx.event;
        self.t1 = Some(format!("vwr_t1_{e}={token}"));
        self.t1_jti = jti_of(token);
        if self.out.tier1_admitted_s.is_none() {
            self.out.tier1_admitted_s = Some(self.ctx.secs());
            Counters::inc(&self.ctx.counters.admitted_tier1);
        }
    }

    /// A position a `check` answered (or an admitted token carries) for the ticket.
    fn position_seen(&mut self, position: Option<u64>) {
        let Some(p) = position else { return };
        let known = self.ticket.as_ref().and_then(|t| t.position);
        match known {
            Some(k) if k != p => self.lose_place(cause::TIER1_POSITION_CHANGED),
            Some(_) => {}
            None => {
                if let Some(t) = self.ticket.as_mut() {
                    t.position = Some(p);
                }
                if self.first_ticket && self.out.position.is_none() {
                    self.out.position = Some(p);
                }
            }
        }
    }

    /// A refused `check` that is no verdict on the ticket but on the event: how the run ends.
    fn event_refusal(status: u16, body: &Value) -> Option<End> {
        match (status, body["error"].as_str()) {
            (404, Some("event_not_found")) => Some(End::Lost("event_not_found")),
            (409, Some("event_closed")) => Some(End::Lost("closed")),
            (409, Some("event_not_active")) => Some(End::Lost("inactive")),
            _ => None,
        }
    }

    /// `assign`: the first join, or a new ticket after a verdict on the old one.
    async fn join(&mut self) -> Result<(), Stop> {
        let ctx = self.ctx;
        let refused = if self.first_ticket { End::Refused } else { End::Lost("rejoin_refused") };
        // A scheduled sale not yet in its pre-queue: ask again shortly.
        let r = loop {
            // As the page: the site's enqueue cookie of this visitor's account goes along, and a
            // proof of work asked for is solved.
            let account = format!("visitor-{}", self.id);
            let Step::Reply(r) = ctx.assign(&mut self.rng, ASSIGN, Some(&account), true).await else {
                return Err(Stop::End(End::Unfinished));
            };
            if r.status.as_u16() == 409
                && r.json()["error"] == "event_not_open"
                && Instant::now() < ctx.deadline
            {
                tokio::time::sleep(self.rng.jitter(1.0)).await;
                continue;
            }
            break r;
        };
        if !r.status.is_success() {
            Counters::inc(&ctx.counters.unexpected_4xx);
            return Err(Stop::End(refused));
        }
        let body = r.json();
        let Some(request_id) = body["requestId"].as_str().map(str::to_owned) else {
            return Err(Stop::End(refused));
        };
        if self.first_ticket {
            Counters::inc(&ctx.counters.joined);
            self.out.joined_s = ctx.secs();
            self.out.position = body["position"].as_u64();
            if self.out.position.is_some() {
                self.out.estimate_s = body["estimatedWaitSeconds"].as_f64();
                self.out.estimated_at_s = self.out.estimate_s.map(|_| self.out.joined_s);
            }
        }
        // Proof of possession, where the server asks for it: `check` sends back the secret
        // `assign` answered.
        self.ticket = Some(Ticket {
            request_id,
            secret: body["requestSecret"].as_str().map(str::to_owned),
            position: body["position"].as_u64(),
        });
        self.answer = body;
        Ok(())
    }

    /// From the ticket to the leave; `Stop::Line` when the visitor is back in line.
    async fn through(&mut self) -> Result<(), Stop> {
        if self.t1.is_none() {
            self.wait_for_turn().await?;
        }
        let ctx = self.ctx;
        let e = &ctx.event;
        // What leaks once the turn has come: the ticket (a log line, a pasted link) and the
        // cookie (copied to another device). Without its secret the ticket is worth nothing.
        if let Some(t) = &self.ticket {
            ctx.leaks.ticket(&t.request_id);
        }
        if let Some(c) = &self.t1 {
            ctx.leaks.cookie(c);
        }

        // The edge: the event page with the cookie; sent back to the waiting room, the page
        // checks its ticket and comes back once.
        let page = format!("/events/{e}");
        let mut tries = 0;
        loop {
            let cookie = self.cookies();
            let Step::Reply(r) =
                ctx.call(&mut self.rng, "edge.event_page", Method::GET, &page, &[("cookie", &cookie)]).await
            else {
                return Err(Stop::End(End::Unfinished));
            };
            if r.status.as_u16() == 200 {
                break;
            }
            tries += 1;
            if tries > 1 {
                Counters::inc(&ctx.counters.edge_refused);
                return Err(Stop::End(End::Lost("edge_refused")));
            }
            self.readmit().await?;
        }
        if !self.passed_edge {
            self.passed_edge = true;
            Counters::inc(&ctx.counters.passed_edge);
        }

        self.recheck().await;
        self.tier2().await
    }

    /// Checking the same ticket again (a second tab, a reload) must give the same identity,
    /// and must still find it admitted.
    async fn recheck(&mut self) {
        let ctx = self.ctx;
        let (Some(path), proof) = (self.check_path(), self.proof()) else { return };
        let headers: Vec<(&str, &str)> = proof.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let Step::Reply(r) = ctx.call(&mut self.rng, RECHECK, Method::GET, &path, &headers).await else {
            return;
        };
        let body = r.json();
        if r.status.is_success() {
            if body["admitted"] == true {
                let again = body["token"].as_str().and_then(jti_of);
                if again != self.t1_jti {
                    Counters::inc(&ctx.counters.double_admitted);
                }
            } else if body["state"] != "closed" {
                self.lose_place(cause::TIER1_UNADMITTED);
            }
        } else if ticket_verdict(r.status.as_u16(), &body).is_some() {
            self.lose_place(cause::TIER1_UNADMITTED);
        }
    }

    /// Back at the waiting page with an admitted ticket (the edge or tier 2 did not take its
    /// cookie): `check` it until tier 1 answers, as the page does.
    async fn readmit(&mut self) -> Result<(), Stop> {
        let ctx = self.ctx;
        let Some(path) = self.check_path() else {
            return Err(Stop::End(End::Lost("refused")));
        };
        loop {
            let proof = self.proof();
            let headers: Vec<(&str, &str)> = proof.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let Step::Reply(r) = ctx.call(&mut self.rng, CHECK, Method::GET, &path, &headers).await else {
                return Err(Stop::End(End::Unfinished));
            };
            let (status, body) = (r.status.as_u16(), r.json());
            if !r.status.is_success() {
                if let Some(code) = ticket_verdict(status, &body) {
                    return Err(Stop::Rejoin(code));
                }
                if let Some(end) = Self::event_refusal(status, &body) {
                    Counters::inc(&ctx.counters.unexpected_4xx);
                    return Err(Stop::End(end));
                }
                let wait = self.transient();
                tokio::time::sleep(wait).await;
                continue;
            }
            self.errors = 0;
            if body["admitted"] == true {
                let token = body["token"].as_str().unwrap_or_default().to_owned();
                self.position_seen(pos_of(&token));
                self.admitted(&token);
                return Ok(());
            }
            if body["state"] == "closed" {
                return Err(Stop::End(End::Lost("closed")));
            }
            // Admitted before, waiting now: back in line.
            self.lose_place(cause::TIER1_UNADMITTED);
            self.position_seen(body["position"].as_u64());
            self.t1 = None;
            self.answer = body;
            return Err(Stop::Line);
        }
    }

    /// Tier 1 after the join, until admitted (the cookie kept in `t1`).
    ///
    /// Page-like: the status document at the server's first hint, then every quarter of the
    /// expected wait; `check` when `servingCounter` reaches the position. A pre-queue visitor
    /// first waits for the open and makes one `check` to learn its drawn position. Legacy:
    /// `check` at the server's hints. A refusal that is no verdict keeps the ticket: back off
    /// (2, 4 … 60 s) and ask again.
    async fn wait_for_turn(&mut self) -> Result<(), Stop> {
        let ctx = self.ctx;
        let e = &ctx.event;
        let Some(check_path) = self.check_path() else {
            return Err(Stop::End(End::Lost("refused")));
        };
        let status_path = format!("/vwr-api/vwr/status/{e}");
        let answer = self.answer.clone();
        let mut place = Place::default();
        place.learn(&answer);
        if place.position.is_none() {
            place.position = self.ticket.as_ref().and_then(|t| t.position);
        }
        // Since when this visitor waits in line with a known position (its abandonment clock):
        // a pre-queue visitor's starts at the open, so that every drawn position is observed.
        let mut waiting_since = place.position.map(|_| Instant::now());
        // Legacy: the last hint, kept when an answer has none.
        let mut poll = answer["nextPollSeconds"].as_f64().unwrap_or(1.0);
        let (mut look, mut delay) = if ctx.legacy_polling {
            (Look::Check, self.rng.jitter(poll))
        } else {
            (Look::Status, self.rng.jitter(hint_of(&answer)))
        };
        if place.position.is_none() && answer["state"] == "prequeue" {
            if self.first_ticket {
                self.out.prequeue = true;
            }
            let opens_at = answer["opensAt"].as_f64().unwrap_or(0.0);
            if !wait_for_open(ctx, &mut self.rng, opens_at, &mut self.out).await {
                return Err(Stop::End(End::Unfinished));
            }
            if self.first_ticket {
                self.out.first_check_s = Some(ctx.secs());
            }
            poll = 0.0;
            (look, delay) = (Look::Check, self.rng.jitter(poll));
        }
        loop {
            if self.abandon.in_tier1.is_some_and(|after| waiting_since.is_some_and(|t| t.elapsed() > after)) {
                Counters::inc(&ctx.counters.abandoned);
                return Err(Stop::End(End::Abandoned));
            }
            tokio::time::sleep(delay).await;
            if look == Look::Status {
                let Step::Reply(r) = ctx.call(&mut self.rng, STATUS, Method::GET, &status_path, &[]).await
                else {
                    return Err(Stop::End(End::Unfinished));
                };
                self.out.status_polls += 1;
                if !r.status.is_success() {
                    if r.status.as_u16() == 404 && r.json()["error"] == "event_not_found" {
                        Counters::inc(&ctx.counters.unexpected_4xx);
                        return Err(Stop::End(End::Lost("event_not_found")));
                    }
                    delay = self.transient();
                    continue;
                }
                self.errors = 0;
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
                        return Err(Stop::End(End::Lost("inactive")));
                    }
                    "closed" if !served => return Err(Stop::End(End::Lost("closed"))),
                    "scheduled" | "prequeue" => delay = self.rng.jitter(STATUS_POLL_SECONDS),
                    _ if served => (look, delay) = (Look::Check, Duration::ZERO),
                    "paused" => delay = self.rng.jitter(PAUSED_POLL_SECONDS),
                    _ => {
                        let rate = d["servedPerSecond"].as_f64().filter(|r| *r > 0.0).or(place.rate);
                        delay = self.rng.jitter(poll_for_wait(wait_seconds(position - serving, rate)));
                    }
                }
                continue;
            }
            let proof = self.proof();
            let headers: Vec<(&str, &str)> = proof.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let Step::Reply(r) = ctx.call(&mut self.rng, CHECK, Method::GET, &check_path, &headers).await
            else {
                return Err(Stop::End(End::Unfinished));
            };
            self.out.checks += 1;
            let (status, body) = (r.status.as_u16(), r.json());
            if !r.status.is_success() {
                if let Some(code) = ticket_verdict(status, &body) {
                    return Err(Stop::Rejoin(code));
                }
                if let Some(end) = Self::event_refusal(status, &body) {
                    Counters::inc(&ctx.counters.unexpected_4xx);
                    return Err(Stop::End(end));
                }
                // No verdict (a WAF, API Gateway, the origin secret): the ticket stays.
                (look, delay) = (Look::Check, self.transient());
                continue;
            }
            self.errors = 0;
            if body["admitted"] == true {
                let token = body["token"].as_str().unwrap_or_default().to_owned();
                self.position_seen(pos_of(&token));
                self.admitted(&token);
                return Ok(());
            }
            self.position_seen(body["position"].as_u64());
            if place.position.is_none() {
                place.position = self.ticket.as_ref().and_then(|t| t.position);
            }
            if place.position.is_some() && waiting_since.is_none() {
                waiting_since = Some(Instant::now());
            }
            if self.first_ticket
                && self.out.estimate_s.is_none()
                && let Some(w) = body["estimatedWaitSeconds"].as_f64()
            {
                self.out.estimate_s = Some(w);
                self.out.estimated_at_s = Some(ctx.secs());
            }
            place.learn(&body);
            if ctx.legacy_polling {
                poll = body["nextPollSeconds"].as_f64().unwrap_or(poll);
                delay = self.rng.jitter(poll);
            } else if body["state"] == "closed" {
                return Err(Stop::End(End::Lost("closed")));
            } else {
                // The first look after the server's hint; a pre-queue answer (the open is
                // late): ask again.
                look = if place.position.is_some() && body["state"] != "prequeue" {
                    Look::Status
                } else {
                    Look::Check
                };
                delay = self.rng.jitter(hint_of(&body));
            }
            self.answer = body;
        }
    }

    /// One tier-2 request with the visitor's cookies; the identity cookie it sets is kept.
    async fn tier2_call(
        &mut self,
        endpoint: &'static str,
        method: Method,
        path: &str,
    ) -> Result<Reply, Stop> {
        let cookie = self.cookies();
        let Step::Reply(r) =
            self.ctx.call(&mut self.rng, endpoint, method, path, &[("cookie", &cookie)]).await
        else {
            return Err(Stop::End(End::Unfinished));
        };
        self.keep_identity(&r);
        Ok(r)
    }

    /// What a tier-2 answer that is not a place means: `Ok` to ask again (after the back-off
    /// it slept, or tier 1 having been asked again), or how the visitor stops.
    async fn tier2_refused(&mut self, answer: Tier2Answer, identity_refusals: &mut u32) -> Result<(), Stop> {
        let c = &self.ctx.counters;
        match answer {
            Tier2Answer::Place(_) => Ok(()),
            Tier2Answer::NotInQueue => {
                // It never left: check in again.
                self.evicted = true;
                Counters::inc(&c.rejoined_tier2);
                Ok(())
            }
            Tier2Answer::Identity => {
                // Its tier-1 token no longer taken: the page goes back to the waiting room,
                // which checks the ticket (a fresh token, or a verdict).
                *identity_refusals += 1;
                if *identity_refusals > 3 {
                    Counters::inc(&c.unexpected_4xx);
                    return Err(Stop::End(End::Lost("tier2_identity")));
                }
                self.readmit().await
            }
            Tier2Answer::PositionTaken => {
                Counters::inc(&c.unexpected_4xx);
                self.lose_place(cause::TIER2_POSITION_TAKEN);
                Err(Stop::End(End::Lost("position_taken")))
            }
            Tier2Answer::Gone => {
                Counters::inc(&c.unexpected_4xx);
                Err(Stop::End(End::Lost("event_not_found")))
            }
            Tier2Answer::Transient => {
                let wait = self.transient();
                tokio::time::sleep(wait).await;
                Ok(())
            }
        }
    }

    /// Tier 2: check in, poll until active, the protected API, dwell with heartbeats, leave.
    /// Told `not_in_queue` without having left, the visitor checks in again; the answer must
    /// give its place back (`active`, or `restored: true`).
    async fn tier2(&mut self) -> Result<(), Stop> {
        let ctx = self.ctx;
        let e = ctx.event.clone();
        let started = Instant::now();
        let mut dwell_end: Option<Instant> = None;
        let mut check_in = true;
        let mut identity_refusals = 0u32;
        'admission: loop {
            // Check in, then poll until active.
            let token = loop {
                if self.abandon.in_tier2 && started.elapsed() > self.abandon.after {
                    Counters::inc(&ctx.counters.abandoned);
                    return Err(Stop::End(End::Abandoned));
                }
                let r = if check_in {
                    self.tier2_call("tier2.check", Method::POST, &format!("/api/queue/check/{e}")).await?
                } else {
                    self.tier2_call("tier2.status", Method::GET, &format!("/api/queue/status/{e}")).await?
                };
                let answer = tier2_answer(r.status.as_u16(), &r.json());
                let Tier2Answer::Place(body) = answer else {
                    check_in = check_in || answer != Tier2Answer::Transient;
                    self.tier2_refused(answer, &mut identity_refusals).await?;
                    continue;
                };
                (identity_refusals, self.errors) = (0, 0);
                ctx.check_threshold(&body);
                if self.evicted {
                    self.evicted = false;
                    if !place_kept(&body) {
                        self.lose_place(cause::TIER2_NOT_RESTORED);
                    }
                }
                if body["status"] == "active" {
                    let token = body["entryToken"].as_str().unwrap_or_default().to_owned();
                    ctx.leaks.entry_token(&token);
                    self.t2_jti = jti_of(&token);
                    if self.out.tier2_admitted_s.is_none() {
                        self.out.tier2_admitted_s = Some(ctx.secs());
                        Counters::inc(&ctx.counters.active_tier2);
                    }
                    break token;
                }
                check_in = false;
                tokio::time::sleep(self.rng.jitter(body["nextPollSeconds"].as_f64().unwrap_or(1.0))).await;
            };

            // The protected API with the entry token (sent back to the waiting room by the
            // edge: the ticket checked again, and once more).
            let seats = format!("/api/seats/{e}");
            for attempt in 0..2 {
                let cookie = self.cookies();
                let headers = [("cookie", cookie.as_str()), ("x-queue-entry-token", token.as_str())];
                let Step::Reply(r) = ctx.call(&mut self.rng, "seats", Method::GET, &seats, &headers).await
                else {
                    return Err(Stop::End(End::Unfinished));
                };
                if r.status.as_u16() == 200 {
                    break;
                }
                if attempt == 0 && r.json()["error"] == "waiting_room_token_required" {
                    self.readmit().await?;
                    continue;
                }
                Counters::inc(&ctx.counters.seats_refused);
                break;
            }

            // Dwell, heartbeating through status (which must keep the same identity).
            let end = *dwell_end.get_or_insert_with(|| Instant::now() + ctx.dwell);
            while Instant::now() < end {
                if self.abandon.in_tier2 {
                    Counters::inc(&ctx.counters.abandoned);
                    return Err(Stop::End(End::Abandoned));
                }
                tokio::time::sleep(ctx.dwell.min(Duration::from_secs(5))).await;
                let r = self
                    .tier2_call("tier2.heartbeat", Method::GET, &format!("/api/queue/status/{e}"))
                    .await?;
                match tier2_answer(r.status.as_u16(), &r.json()) {
                    Tier2Answer::Place(body) => {
                        identity_refusals = 0;
                        ctx.check_threshold(&body);
                        if body["status"] != "active" {
                            // Active a moment ago, waiting now.
                            self.lose_place(cause::TIER2_DEMOTED);
                            check_in = false;
                            continue 'admission;
                        }
                        let jti = body["entryToken"].as_str().and_then(jti_of);
                        if jti.is_some() && jti != self.t2_jti {
                            Counters::inc(&ctx.counters.double_admitted);
                        }
                    }
                    Tier2Answer::Transient => Counters::inc(&ctx.counters.transient_refusals),
                    other => {
                        let not_in_queue = other == Tier2Answer::NotInQueue;
                        self.tier2_refused(other, &mut identity_refusals).await?;
                        if not_in_queue {
                            check_in = true;
                            continue 'admission;
                        }
                    }
                }
            }
            break;
        }
        self.tier2_call("tier2.leave", Method::POST, &format!("/api/queue/leave/{e}")).await?;
        Counters::inc(&ctx.counters.done);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Bytes;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::super::stats::{Latencies, Timeline};
    use super::*;
    use crate::client::HttpClient;

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
        assert_eq!(
            [0, 1, 2, 5, 6, 9].map(backoff_seconds),
            [2.0, 2.0, 4.0, 32.0, 60.0, 60.0],
            "the page's back-off: 2, 4 … 60 s"
        );
    }

    #[test]
    fn only_the_tier1_apis_verdicts_make_a_visitor_forget_its_ticket() {
        use serde_json::json;
        for (status, code) in [
            (400, "invalid_request_id"),
            (403, "invalid_request_id"),
            (403, "wrong_event"),
            (403, "proof_required"),
            (410, "request_id_expired"),
            (410, "admission_expired"),
            (410, "session_ended"),
        ] {
            assert_eq!(ticket_verdict(status, &json!({"error": code, "message": "x"})), Some(code));
        }
        // A WAF's HTML page (no JSON: the body reads as null), API Gateway's own 403 and 429,
        // the origin secret refused during a rotation, a 5xx, an unknown code: no verdict.
        for (status, body) in [
            (403, Value::Null),
            (403, json!({"message": "Forbidden"})),
            (429, json!({"message": "Too Many Requests"})),
            (403, json!({"error": "origin_forbidden", "message": "x"})),
            (500, json!({"error": "internal_error"})),
            (404, json!({"error": "invalid_request_id"})),
            (403, json!({"error": "something_new"})),
            (403, json!({"error": {"code": "proof_required"}})),
        ] {
            assert_eq!(ticket_verdict(status, &body), None, "{status} {body}");
        }
    }

    #[test]
    fn tier2_answers_and_cookies() {
        use serde_json::json;
        let queued = json!({"status": "queued", "position": 3});
        assert_eq!(tier2_answer(200, &queued), Tier2Answer::Place(queued.clone()));
        assert_eq!(tier2_answer(404, &json!({"error": "not_in_queue"})), Tier2Answer::NotInQueue);
        assert_eq!(tier2_answer(404, &json!({"error": "event_not_found"})), Tier2Answer::Gone);
        for (s, code) in
            [(401, "identity_required"), (403, "invalid_identity"), (403, "tier1_token_required")]
        {
            assert_eq!(tier2_answer(s, &json!({"error": code})), Tier2Answer::Identity);
        }
        assert_eq!(tier2_answer(409, &json!({"error": "position_taken"})), Tier2Answer::PositionTaken);
        assert_eq!(tier2_answer(403, &Value::Null), Tier2Answer::Transient);
        assert_eq!(tier2_answer(200, &Value::Null), Tier2Answer::Transient);
        assert!(place_kept(&json!({"status": "active"})));
        assert!(place_kept(&json!({"status": "queued", "restored": true})));
        assert!(!place_kept(&queued));
        assert!(!place_kept(&json!({"status": "queued", "restored": "true"})));

        let reply = |cookies: &[&str]| {
            let mut headers = http::HeaderMap::new();
            for c in cookies {
                headers.append(header::SET_COOKIE, c.parse().unwrap());
            }
            Reply { status: http::StatusCode::OK, headers, body: Bytes::new() }
        };
        let r = reply(&["other=1", "vwr_t2_e1=abc.def; Max-Age=600; Path=/; HttpOnly"]);
        assert_eq!(set_cookie(&r, "vwr_t2_e1"), Some(Some("abc.def".into())));
        assert_eq!(set_cookie(&reply(&["vwr_t2_e1=; Max-Age=0; Path=/"]), "vwr_t2_e1"), Some(None));
        assert_eq!(set_cookie(&reply(&["vwr_t2_e1=x; max-age=0"]), "vwr_t2_e1"), Some(None));
        assert_eq!(set_cookie(&reply(&["vwr_t2_e10=x"]), "vwr_t2_e1"), None);
    }

    // -- One visitor against a scripted vwr: what the place counters see --

    /// A route's answer for its `n`-th call (from 0), or `None` for the happy path.
    type Script = fn(&str, u32) -> Option<(u16, Value)>;

    struct Mock {
        script: Script,
        calls: std::sync::Mutex<std::collections::BTreeMap<&'static str, u32>>,
    }

    fn token(claims: Value) -> String {
        format!("h.{}.s", URL_SAFE_NO_PAD.encode(claims.to_string()))
    }

    fn active() -> Value {
        serde_json::json!({"status": "active", "position": 0, "entryToken": token(serde_json::json!({"jti": "t2"})),
                           "nextPollSeconds": 1, "currentUsers": 1, "threshold": 10})
    }

    fn queued() -> Value {
        serde_json::json!({"status": "queued", "position": 1, "nextPollSeconds": 0.1, "currentUsers": 1, "threshold": 10})
    }

    fn admitted(pos: u64) -> Value {
        serde_json::json!({"admitted": true, "token": token(serde_json::json!({"jti": format!("j{pos}"), "pos": pos}))})
    }

    fn happy(route: &str) -> (u16, Value) {
        use serde_json::json;
        match route {
            "assign" => (
                200,
                json!({"requestId": "r1", "requestSecret": "s1", "position": 1, "servingCounter": 0,
                       "estimatedWaitSeconds": 1, "nextPollSeconds": 1, "state": "open"}),
            ),
            "status" => (200, json!({"state": "open", "servingCounter": 100})),
            "check" => (200, admitted(1)),
            "t2check" | "t2status" => (200, active()),
            _ => (200, json!({})),
        }
    }

    async fn mock(
        axum::extract::State(m): axum::extract::State<Arc<Mock>>,
        req: axum::extract::Request,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        let path = req.uri().path();
        let route = match req.method().as_str() {
            "POST" if path.starts_with("/vwr-api/vwr/assign/") => "assign",
            "GET" if path.starts_with("/vwr-api/vwr/status/") => "status",
            "GET" if path.starts_with("/vwr-api/vwr/check/") => "check",
            "GET" if path.starts_with("/events/") => "edge",
            "POST" if path.starts_with("/api/queue/check/") => "t2check",
            "GET" if path.starts_with("/api/queue/status/") => "t2status",
            "GET" if path.starts_with("/api/seats/") => "seats",
            "POST" if path.starts_with("/api/queue/leave/") => "leave",
            _ => "other",
        };
        let n = {
            let mut calls = m.calls.lock().unwrap();
            let c = calls.entry(route).or_default();
            *c += 1;
            *c - 1
        };
        let (status, body) = (m.script)(route, n).unwrap_or_else(|| happy(route));
        let status = http::StatusCode::from_u16(status).unwrap();
        if body.is_string() {
            // Not JSON: a WAF's page.
            return (
                status,
                [(header::CONTENT_TYPE, "text/html")],
                body.as_str().unwrap_or_default().to_owned(),
            )
                .into_response();
        }
        let mut res = (status, axum::Json(body)).into_response();
        if route.starts_with("t2") {
            res.headers_mut()
                .insert(header::SET_COOKIE, "vwr_t2_e1=id; Max-Age=600; Path=/".parse().unwrap());
        }
        res
    }

    /// One visitor (no abandonment) against `script`: its outcome and the shared counters.
    async fn one_visitor(script: Script) -> (Outcome, Arc<Ctx>) {
        let m = Arc::new(Mock { script, calls: std::sync::Mutex::default() });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(mock).with_state(m);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let start = Instant::now();
        let ctx = Arc::new(Ctx {
            client: HttpClient::new(Duration::from_secs(5)).unwrap(),
            base: base.clone(),
            origin: base,
            event: "e1".into(),
            counters: Counters::default(),
            latencies: Latencies::default(),
            timeline: Timeline::default(),
            start,
            unix_start: 0.0,
            deadline: start + Duration::from_secs(60),
            dwell: Duration::from_millis(300),
            abandon_rate: 0.0,
            threshold: std::sync::atomic::AtomicU64::new(10),
            in_flight: tokio::sync::Semaphore::new(8),
            legacy_polling: false,
            no_show_rate: 0.0,
            proofs: super::super::ctx::Proofs::new(None, "e1").unwrap(),
            leaks: super::super::ctx::Leaks::default(),
        });
        let out = visit(Arc::clone(&ctx), 0, Duration::ZERO).await;
        (out, ctx)
    }

    fn losses(ctx: &Ctx) -> Vec<(&'static str, u64)> {
        Counters::counts(&ctx.counters.place_losses).into_iter().collect()
    }

    #[tokio::test]
    async fn the_happy_path_loses_no_place() {
        let (out, ctx) = one_visitor(|_, _| None).await;
        assert_eq!((out.end, out.place_lost, out.position), (End::Done, None, Some(1)));
        assert_eq!(Counters::get(&ctx.counters.places_lost), 0);
        assert_eq!(Counters::get(&ctx.counters.transient_refusals), 0);
    }

    #[tokio::test]
    async fn a_wafs_403_on_check_keeps_the_ticket() {
        let (out, ctx) = one_visitor(|route, n| {
            (route == "check" && n == 0).then(|| (403, Value::String("<html>403 ERROR</html>".into())))
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, None), "{:?}", losses(&ctx));
        assert_eq!(Counters::get(&ctx.counters.transient_refusals), 1);
        assert!(Counters::counts(&ctx.counters.verdicts).is_empty());
    }

    #[tokio::test]
    async fn a_verdict_on_an_honest_visitors_ticket_is_a_place_lost() {
        let (out, ctx) = one_visitor(|route, n| match (route, n) {
            ("check", 0) => Some((410, serde_json::json!({"error": "request_id_expired", "message": "x"}))),
            ("assign", 1) => Some((
                200,
                serde_json::json!({"requestId": "r2", "requestSecret": "s2", "position": 7, "nextPollSeconds": 1, "state": "open"}),
            )),
            ("check", _) => Some((200, admitted(7))),
            _ => None,
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TICKET_REPLACED)));
        assert_eq!(out.position, Some(1), "the outcome keeps the first ticket's position");
        assert_eq!(losses(&ctx), [(cause::TICKET_REPLACED, 1)]);
        assert_eq!(
            Counters::counts(&ctx.counters.verdicts).into_iter().collect::<Vec<_>>(),
            [("request_id_expired", 1)]
        );
        assert_eq!(Counters::get(&ctx.counters.places_lost), 1);
    }

    #[tokio::test]
    async fn a_check_answering_another_position_is_a_place_lost() {
        let (out, ctx) = one_visitor(|route, n| {
            (route == "check" && n == 0).then(|| {
                (200, serde_json::json!({"admitted": false, "position": 2, "state": "open", "nextPollSeconds": 1}))
            })
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER1_POSITION_CHANGED)));
        assert_eq!(losses(&ctx), [(cause::TIER1_POSITION_CHANGED, 1)]);
    }

    #[tokio::test]
    async fn an_admitted_ticket_answered_as_waiting_is_a_place_lost() {
        // The harness's second check of the admitted ticket.
        let (out, ctx) = one_visitor(|route, n| {
            (route == "check" && n == 1)
                .then(|| (200, serde_json::json!({"admitted": false, "position": 1, "state": "open"})))
        })
        .await;
        assert_eq!(
            (out.end, out.place_lost),
            (End::Done, Some(cause::TIER1_UNADMITTED)),
            "{:?}",
            losses(&ctx)
        );
    }

    #[tokio::test]
    async fn tier2_dropping_a_visitor_who_never_left_must_give_the_place_back() {
        // Evicted while dwelling (its first heartbeat: not_in_queue); the check-in after it
        // lands in the line without `restored`.
        let (out, ctx) = one_visitor(|route, n| match (route, n) {
            ("t2status", 0) => Some((404, serde_json::json!({"error": "not_in_queue"}))),
            ("t2check", 1) => Some((200, queued())),
            _ => None,
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER2_NOT_RESTORED)));
        assert_eq!(Counters::get(&ctx.counters.rejoined_tier2), 1);
        assert_eq!(Counters::get(&ctx.counters.places_lost), 1);

        // The same with tier 2's word that the old place was given back.
        let (out, ctx) = one_visitor(|route, n| match (route, n) {
            ("t2status", 0) => Some((404, serde_json::json!({"error": "not_in_queue"}))),
            ("t2check", 1) => {
                let mut q = queued();
                q["restored"] = true.into();
                Some((200, q))
            }
            _ => None,
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, None), "{:?}", losses(&ctx));
        assert_eq!(Counters::get(&ctx.counters.rejoined_tier2), 1);

        // Or an `active` answer.
        let (out, _) = one_visitor(|route, n| {
            (route == "t2status" && n == 0).then(|| (404, serde_json::json!({"error": "not_in_queue"})))
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, None));
    }

    #[tokio::test]
    async fn an_active_visitor_answered_queued_is_a_place_lost() {
        let (out, ctx) =
            one_visitor(|route, n| (route == "t2status" && n == 0).then(|| (200, queued()))).await;
        assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TIER2_DEMOTED)), "{:?}", losses(&ctx));
    }

    #[tokio::test]
    async fn tier2_refusing_the_tier1_token_sends_the_visitor_to_check_its_ticket() {
        // A fresh token from tier 1: nothing lost.
        let (out, ctx) = one_visitor(|route, n| {
            (route == "t2check" && n == 0).then(|| (401, serde_json::json!({"error": "identity_required"})))
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, None), "{:?}", losses(&ctx));
        // Tier 1 ends the session of a visitor tier 2 was about to take: a new ticket, a
        // place lost.
        let (out, ctx) = one_visitor(|route, n| match (route, n) {
            ("t2check", 0) => Some((403, serde_json::json!({"error": "tier1_token_required"}))),
            ("check", 2) => Some((410, serde_json::json!({"error": "admission_expired"}))),
            _ => None,
        })
        .await;
        assert_eq!((out.end, out.place_lost), (End::Done, Some(cause::TICKET_REPLACED)));
        assert_eq!(
            Counters::counts(&ctx.counters.verdicts).into_iter().collect::<Vec<_>>(),
            [("admission_expired", 1)]
        );
    }

    #[tokio::test]
    async fn another_identity_on_the_visitors_tier1_position_is_a_place_lost() {
        let (out, _) = one_visitor(|route, _| {
            (route == "t2check").then(|| (409, serde_json::json!({"error": "position_taken"})))
        })
        .await;
        assert_eq!(
            (out.end, out.place_lost),
            (End::Lost("position_taken"), Some(cause::TIER2_POSITION_TAKEN))
        );
    }
}
