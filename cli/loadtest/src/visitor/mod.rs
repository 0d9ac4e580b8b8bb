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
//! Place safety (docs/performance.md#load-testing): a visitor forgets its ticket only on the
//! tier-1 API's verdicts on it ([`crate::page::TICKET_VERDICTS`]) and then joins again; any
//! other refusal (a WAF's or API Gateway's 403 or 429, `origin_forbidden`, a non-JSON body, a
//! 5xx, a network error) keeps the ticket and backs off as the page does (2, 4 … 60 s). Sent
//! back to the waiting room by the edge or by tier 2 (its tier-1 token no longer taken), it
//! `check`s its ticket again, as the page does. It keeps the tier-2 identity cookie as a
//! browser would, and when tier 2 answers `not_in_queue` although it never left, it checks in
//! again. Every way its place can be seen moving backwards is counted once per visitor in
//! `placesLostToFaults` (see [`Visitor::lose_place`]).
//!
//! Here the join, the edge and the re-checks; waiting in line in `line`, tier 2 in `tier2`; the
//! page's rules they follow (verdicts, pace, back-off, jitter) in [`crate::page`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Method, header};
use serde_json::Value;

use super::ctx::{ASSIGN, CHECK, Ctx, RECHECK, Rng, SECRET_HEADER, Step, claims_of};
use super::stats::Counters;
use crate::client::Reply;
use crate::page::{Refusal, backoff_seconds, refusal, ticket_verdict};

mod line;
#[cfg(test)]
mod tests;
mod tier2;

pub use self::tier2::{Tier2Answer, place_kept, tier2_answer};

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
    /// Seconds from its tier-2 admission (the server's `admittedAt`) to its first answer that
    /// knew of it: how long its slot sat idle (`tier2.idleSlotSecondsP90`).
    pub tier2_idle_s: Option<f64>,
    /// Reads of tier 2's line document.
    pub line_reads: u64,
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

/// The value of cookie `name` that a reply sets: `Some(None)` when it clears it (empty,
/// `Max-Age=0`), `None` when it does not mention it.
pub fn set_cookie(reply: &Reply, name: &str) -> Option<Option<String>> {
    set_cookie_for(reply, name).map(|c| c.map(|(value, _)| value))
}

/// [`set_cookie`] with the cookie's `Max-Age` (seconds), when it has one.
pub fn set_cookie_for(reply: &Reply, name: &str) -> Option<Option<(String, Option<u64>)>> {
    let prefix = format!("{name}=");
    let line = reply
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .rfind(|v| v.starts_with(&prefix))?;
    let mut parts = line.split(';').map(str::trim);
    let value = parts.next().unwrap_or_default().strip_prefix(&prefix).unwrap_or_default();
    let max_age = parts
        .filter_map(|a| a.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("max-age"))
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    let cleared = value.is_empty() || max_age == Some(0);
    Some((!cleared).then(|| (value.to_owned(), max_age)))
}

/// A cookie as a browser keeps it: `name=value`, until its `Max-Age` runs out (then the
/// browser no longer sends it).
#[derive(Debug, Clone)]
struct Cookie {
    pair: String,
    until: Option<Instant>,
}

impl Cookie {
    fn live(&self) -> bool {
        self.until.is_none_or(|u| Instant::now() < u)
    }
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
    /// `vwr_t1_{e}=<token>` once admitted: as tier 1, or tier 2 renewing it, last set it.
    t1: Option<Cookie>,
    t1_jti: Option<String>,
    /// `vwr_t2_{e}=<identity>` as tier 2 last set it.
    t2: Option<Cookie>,
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

    /// The `Cookie` header: the tier-1 token and the tier-2 identity, as a browser sends them
    /// (on every path of the site: both are `Path=/`), while their `Max-Age` lasts.
    fn cookies(&self) -> String {
        [&self.t1, &self.t2]
            .into_iter()
            .flatten()
            .filter(|c| c.live())
            .map(|c| c.pair.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The headers of a tier-1 `check`: the request secret and the cookies, as the page's.
    fn check_headers(&self) -> Vec<(&'static str, String)> {
        let mut h = self.proof();
        let cookies = self.cookies();
        if !cookies.is_empty() {
            h.push(("cookie", cookies));
        }
        h
    }

    /// Keeps the cookies a reply sets, as a browser does: the tier-2 identity, and the tier-1
    /// token (set by tier 1, and renewed by tier 2 while it holds the visitor).
    fn keep_cookies(&mut self, reply: &Reply) {
        let e = &self.ctx.event;
        for (name, slot) in [(format!("vwr_t1_{e}"), &mut self.t1), (format!("vwr_t2_{e}"), &mut self.t2)] {
            if let Some(v) = set_cookie_for(reply, &name) {
                *slot = v.map(|(value, max_age)| Cookie {
                    pair: format!("{name}={value}"),
                    until: max_age.map(|a| Instant::now() + Duration::from_secs(a)),
                });
            }
        }
    }

    /// A tier-1 token answered for the ticket: the visitor's cookie from now on (for as long
    /// as the reply's cookie says, which [`Self::keep_cookies`] read).
    fn admitted(&mut self, token: &str) {
        let e = &self.ctx.event;
        let until = self.t1.as_ref().and_then(|c| c.until);
        self.t1 = Some(Cookie { pair: format!("vwr_t1_{e}={token}"), until });
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

    /// A refused `check` as the page reads it: a verdict on the ticket (join again), the
    /// event's answer (the run ends), or `Ok`: no verdict, back off and ask again.
    fn refused(&self, body: &Value) -> Result<(), Stop> {
        match refusal(body) {
            Refusal::Rejoin(code) => Err(Stop::Rejoin(code)),
            Refusal::End(why) => {
                Counters::inc(&self.ctx.counters.unexpected_4xx);
                Err(Stop::End(End::Lost(why)))
            }
            Refusal::Backoff => Ok(()),
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
            ctx.leaks.cookie(&c.pair);
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
        let (Some(path), sent) = (self.check_path(), self.check_headers()) else { return };
        let headers: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let Step::Reply(r) = ctx.call(&mut self.rng, RECHECK, Method::GET, &path, &headers).await else {
            return;
        };
        self.keep_cookies(&r);
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
        } else if ticket_verdict(&body).is_some() {
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
            // With the cookies: what tier 2 gives a visitor it holds (a renewed tier-1 token, the
            // hold in its identity) keeps the admission (docs/invariants.md#19, #27).
            let sent = self.check_headers();
            let headers: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let Step::Reply(r) = ctx.call(&mut self.rng, CHECK, Method::GET, &path, &headers).await else {
                return Err(Stop::End(End::Unfinished));
            };
            self.keep_cookies(&r);
            let body = r.json();
            if !r.status.is_success() {
                self.refused(&body)?;
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
}
