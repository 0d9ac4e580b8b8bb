//! Tier 2, as the page after the edge: check in, poll until active, the protected API with the
//! entry token, dwell with heartbeats, leave; and what each tier-2 answer means.

use std::time::{Duration, Instant};

use http::Method;
use serde_json::Value;

use super::{End, Stop, Visitor, cause, jti_of};
use crate::client::Reply;
use crate::ctx::{LINE, Step};
use crate::page::{
    LINE_STALE_SECONDS, first_line_read, line_doc_rate, line_read_delay, next_line_read, place_from_marks,
};
use crate::stats::Counters;

/// How fast the visitor's place moved since `before` (that place, and when), if it moved.
pub fn progress(before: Option<(u64, Instant)>, place: u64, now: Instant) -> Option<f64> {
    let (p, at) = before?;
    let secs = now.checked_duration_since(at)?.as_secs_f64();
    (secs > 0.0 && p > place).then(|| (p - place) as f64 / secs)
}

/// Seconds since the epoch, as the server's times (`admittedAt`; docs/api.md#times).
fn now_secs() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
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

impl Visitor<'_> {
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
        self.keep_cookies(&r);
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

    /// After `answer` (a place with its `lineScore`), reads the line document until its front
    /// passes that score (the visitor has left the line: admitted, most likely); `Ok(false)`
    /// when the document could not be read as such (the caller asks tier 2 instead).
    /// Only a document read after the join (`updatedAt` ≥ the check's `checkedAt`) can tell:
    /// an older one may not have the visitor in line yet.
    /// Both are seconds since the epoch with a millisecond fraction (docs/api.md#times).
    async fn wait_on_line(&mut self, answer: &Value, started: Instant) -> Result<bool, Stop> {
        let ctx = self.ctx;
        let path = format!("/api/queue/line/{}", ctx.event);
        let score = answer["lineScore"].as_u64().unwrap_or(0);
        let checked_at = answer["checkedAt"].as_f64().unwrap_or(0.0);
        let (mut seen, mut observed): (Option<(u64, Instant)>, Option<f64>) = (None, None);
        // The first read when this place could have moved, as the page.
        tokio::time::sleep(Duration::from_secs_f64(first_line_read(answer))).await;
        loop {
            if self.abandon.in_tier2 && started.elapsed() > self.abandon.after {
                return Ok(false);
            }
            let Step::Reply(r) = ctx.call(&mut self.rng, LINE, Method::GET, &path, &[]).await else {
                return Err(Stop::End(End::Unfinished));
            };
            self.out.line_reads += 1;
            let doc = r.json();
            if !r.status.is_success() || !doc["waiting"].is_u64() {
                return Ok(false);
            }
            if doc["updatedAt"].as_f64().unwrap_or(0.0) < checked_at {
                // Read before this visitor joined: the next one will not be (a second's cache).
                tokio::time::sleep(Duration::from_secs_f64(LINE_STALE_SECONDS)).await;
                continue;
            }
            let front = doc["front"].as_u64();
            if front.is_none_or(|f| f > score) {
                return Ok(true);
            }
            let marks: Vec<(u64, u64)> = doc["marks"]
                .as_array()
                .map(|a| a.iter().filter_map(|m| Some((m[0].as_u64()?, m[1].as_u64()?))).collect())
                .unwrap_or_default();
            let place = place_from_marks(&marks, score);
            let now = Instant::now();
            observed = progress(seen, place, now).or(observed);
            seen = Some((place, now));
            let hint =
                next_line_read(place, doc["threshold"].as_u64().unwrap_or(1), line_doc_rate(&doc), observed);
            let wait = line_read_delay(hint, self.rng.next_f64());
            tokio::time::sleep(Duration::from_secs_f64(wait)).await;
        }
    }

    /// Tier 2: check in, poll until active, the protected API, dwell with heartbeats, leave.
    /// Told `not_in_queue` without having left, the visitor checks in again; the answer must
    /// give its place back (`active`, or `restored: true`).
    pub(super) async fn tier2(&mut self) -> Result<(), Stop> {
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
                let known_at = now_secs();
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
                        // The slot was idle from the admission to the answer that told of it (an
                        // admission made by this very call idled for its answer's way back).
                        if let Some(at) = body["admittedAt"].as_f64() {
                            self.out.tier2_idle_s = Some((known_at - at).max(0.0));
                        }
                    }
                    break token;
                }
                // In line. As the booking page: read the line document (CDN-cached) until its
                // front passes this visitor's score, then `check` once (it answers the
                // admission, or the place and score anew). `--legacy-tier2`: `status` at the
                // server's hints, as before (ADR 0026).
                match body["lineScore"].as_u64() {
                    Some(_) if !ctx.legacy_tier2 => {
                        let left = self.wait_on_line(&body, started).await?;
                        check_in = true;
                        if !left {
                            tokio::time::sleep(self.rng.jitter(1.0)).await;
                        }
                    }
                    _ => {
                        check_in = false;
                        tokio::time::sleep(self.rng.jitter(body["nextPollSeconds"].as_f64().unwrap_or(1.0)))
                            .await;
                    }
                }
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
    use std::time::{Duration, Instant};

    use super::progress;

    #[test]
    fn progress_is_how_fast_the_place_moved() {
        let t0 = Instant::now();
        let t20 = t0 + Duration::from_secs(20);
        assert_eq!(progress(Some((1500, t0)), 500, t20), Some(50.0));
        assert_eq!(progress(Some((500, t0)), 500, t20), None, "nothing moved");
        assert_eq!(progress(None, 500, t20), None);
    }
}
