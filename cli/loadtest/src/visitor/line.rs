//! In line in tier 1, as the waiting page: the pre-queue's wait for the open, the status
//! document at the page's pace, `check` at the turn (or at the server's hints with
//! `--legacy-polling`).

use std::time::{Duration, Instant};

use http::Method;
use serde_json::Value;

use super::{End, Outcome, Stop, Visitor, pos_of};
use crate::ctx::{CHECK, Ctx, Rng, STATUS, Step};
use crate::page::{Look as Next, STATUS_POLL_SECONDS, hint_of, open_spread, status_look};
use crate::stats::Counters;

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
    tokio::time::sleep(Duration::from_secs_f64(open_spread(rng.next_f64()))).await;
    true
}

/// What the page keeps of its place: the position, and the rate its last estimate implied
/// (`(peopleAhead + 1) ÷ estimatedWaitSeconds`), used while `servedPerSecond` is unknown.
#[derive(Debug, Default)]
pub(super) struct Place {
    pub(super) position: Option<u64>,
    pub(super) rate: Option<f64>,
}

impl Place {
    /// From an `assign` or a waiting `check` answer.
    pub(super) fn learn(&mut self, body: &Value) {
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

impl Visitor<'_> {
    /// Tier 1 after the join, until admitted (the cookie kept in `t1`).
    ///
    /// Page-like: the status document at the server's first hint, then every quarter of the
    /// expected wait; `check` when `servingCounter` reaches the position. A pre-queue visitor
    /// first waits for the open and makes one `check` to learn its drawn position. Legacy:
    /// `check` at the server's hints. A refusal that is no verdict keeps the ticket: back off
    /// (2, 4 … 60 s) and ask again.
    pub(super) async fn wait_for_turn(&mut self) -> Result<(), Stop> {
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
                let d = r.json();
                // Not the status document (as the page: a 200 with a `state`): back off.
                if !r.status.is_success() || !d["state"].is_string() {
                    if d["error"] == "event_not_found" {
                        Counters::inc(&ctx.counters.unexpected_4xx);
                        return Err(Stop::End(End::Lost("event_not_found")));
                    }
                    delay = self.transient();
                    continue;
                }
                self.errors = 0;
                let Some(position) = place.position else {
                    (look, delay) = (Look::Check, Duration::ZERO);
                    continue;
                };
                match status_look(&d, position, place.rate) {
                    Next::End(why) => {
                        if why == "inactive" {
                            Counters::inc(&ctx.counters.unexpected_4xx);
                        }
                        return Err(Stop::End(End::Lost(why)));
                    }
                    Next::Check => (look, delay) = (Look::Check, Duration::ZERO),
                    Next::Status(secs) => delay = self.rng.jitter(secs),
                    Next::Backoff => delay = self.transient(),
                }
                continue;
            }
            let sent = self.check_headers();
            let headers: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let Step::Reply(r) = ctx.call(&mut self.rng, CHECK, Method::GET, &check_path, &headers).await
            else {
                return Err(Stop::End(End::Unfinished));
            };
            self.keep_cookies(&r);
            self.out.checks += 1;
            let body = r.json();
            if !r.status.is_success() {
                self.refused(&body)?;
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
}
