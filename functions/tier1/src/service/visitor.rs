//! The visitor's operations, called by the public router (`/vwr/...`): `assign` (with its
//! proofs: proof of work, the site's enqueue token), `check` (the wait, the admission and its
//! session), `release` and the public status document.

use std::sync::atomic::Ordering;

use aws_lc_rs::rand::SecureRandom;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use vwr_core::EventId;
use vwr_core::hints::{estimated_wait_seconds, poll_seconds_for_wait};
use vwr_core::token::Tier1Claims;

use super::answers::commitment;
use super::{
    Admitted, AssignResponse, CAS_ATTEMPTS, CheckOutcome, ClosedAnswer, Placed, PrequeueJoin, PrequeueWait,
    PublicPage, PublicStatus, Tier1Error, Tier1Service, Waiting,
};
use crate::draw::{self, Seed};
use crate::model::{EventRecord, EventState, Redemption};
use crate::ticket::{Place, Ticket};

/// How long a redemption record is kept after its ticket expired (DynamoDB TTL).
const REDEMPTION_GRACE_SECS: u64 = 86_400;

/// What a `check` brings besides the ticket and its secret, read from the cookies and
/// headers: what tier 2 gives a visitor it holds (docs/invariants.md#19, #27).
#[derive(Debug, Clone, Copy, Default)]
pub struct Presented<'a> {
    /// Tier-1 tokens (`x-vwr-token`, the tier-1 cookie): tier 2 renews them.
    pub tokens: &'a [&'a str],
    /// Tier-2 identity tokens (the cookie `vwr_t2_{eventId}`), with the hold tier 2 signed.
    pub holds: &'a [&'a str],
}

/// What a join brings besides the event (docs/abuse.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinProof {
    /// `(challenge, nonce)`: a solved proof of work.
    pub pow: Option<(String, String)>,
    /// The site's enqueue token.
    pub enqueue_token: Option<String>,
}

/// A verified proof-of-work solution, before it is taken: its record key and the end of its
/// validity.
struct UsedProof {
    key: String,
    until: u64,
}

/// Solutions remembered per instance before old ones are swept.
const POW_SEEN_MAX: usize = 100_000;

/// How long past its validity a used solution stays recorded (clock skew between instances).
const POW_RECORD_MARGIN_SECS: u64 = crate::pow::BUCKET_SECS;

impl Tier1Service {
    fn next_shard(&self, shards: u32) -> u32 {
        let shards = shards.max(1);
        let k = (self.round_robin.fetch_add(1, Ordering::Relaxed) % u64::from(shards)) + 1;
        u32::try_from(k).unwrap_or(1)
    }

    /// `POST /vwr/assign/{eventId}`: hands out the next place and its ticket — after the
    /// event's proofs (docs/abuse.md): a proof of work when `powDifficulty` > 0, the site's
    /// enqueue token when `enqueueTokenRequired` (then an account that already holds a ticket
    /// gets the same ticket again, never a second place).
    pub async fn assign(&self, event: &EventId, proof: &JoinProof) -> Result<AssignResponse, Tier1Error> {
        let answer = self.assign_once(event, proof).await;
        self.flush_report_due().await;
        answer
    }

    async fn assign_once(&self, event: &EventId, proof: &JoinProof) -> Result<AssignResponse, Tier1Error> {
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        let now = self.now();
        match rec.state {
            // A standby event is not gated: nobody lines up (docs/lifecycle.md#standby).
            EventState::Inactive | EventState::Standby => return Err(Tier1Error::EventNotActive),
            EventState::Scheduled => return Err(not_open(&rec)),
            EventState::Closed => return Err(Tier1Error::EventClosed { reason: rec.close_reason }),
            EventState::Prequeue | EventState::Open | EventState::Paused => {}
        }
        // Every proof is checked before anything is written.
        let work =
            (rec.config.pow_difficulty > 0).then(|| self.verified_work(&rec, proof, now)).transpose()?;
        let account =
            rec.config.enqueue_token_required.then(|| self.account_of(event, proof, now)).transpose()?;
        if let Some(work) = work {
            self.take_work(&rec, work, now).await?;
        }
        let Some(account) = account else {
            return self.join(&rec, now).await;
        };
        let mut held = self.store.account_ticket(event, &account).await?;
        if let Some(rid) = &held
            && let Some(answer) = self.answer_held(&rec, rid, now)?
        {
            return Ok(answer);
        }
        // No ticket yet, or one that expired (an explicit verdict on that place): a new join,
        // at the back (docs/invariants.md#17).
        let answer = self.join(&rec, now).await?;
        let expires_at = ticket_life_start(&rec, now) + self.tickets.ttl_secs() + REDEMPTION_GRACE_SECS;
        for _ in 0..CAS_ATTEMPTS {
            let taken = match &held {
                None => self.store.claim_account(event, &account, answer.request_id(), expires_at).await?,
                Some(old) => {
                    self.store
                        .replace_account_ticket(event, &account, old, answer.request_id(), expires_at)
                        .await?
                }
            };
            let Some(rid) = taken else {
                if held.is_some() {
                    tracing::info!(event = "tier1.account_ticket_replaced", event_id = %event);
                }
                return Ok(answer);
            };
            // Two joins of one account raced: the first ticket stands; this place stays empty
            // (the advancer passes it like a no-show).
            tracing::info!(event = "tier1.account_race", event_id = %event);
            if let Some(again) = self.answer_held(&rec, &rid, now)? {
                return Ok(again);
            }
            held = Some(rid);
        }
        Err(Tier1Error::Busy)
    }

    /// The answer that asks for a proof of work.
    fn challenge_required(&self, rec: &EventRecord, now: u64) -> Tier1Error {
        Tier1Error::ChallengeRequired {
            challenge: self.pow.challenge(&rec.event, now),
            difficulty: rec.config.pow_difficulty,
        }
    }

    /// A solved, fresh proof of work for `rec`'s difficulty that this instance has not seen
    /// taken (no write yet: [`Self::take_work`] records it).
    fn verified_work(&self, rec: &EventRecord, proof: &JoinProof, now: u64) -> Result<UsedProof, Tier1Error> {
        let Some((challenge, nonce)) = &proof.pow else {
            return Err(self.challenge_required(rec, now));
        };
        if let Err(e) = self.pow.verify(&rec.event, now, challenge, nonce, rec.config.pow_difficulty) {
            tracing::info!(event = "tier1.proof_refused", kind = "pow", event_id = %rec.event, reason = %e);
            return Err(self.challenge_required(rec, now));
        }
        let key = proof_digest(challenge, nonce);
        let until = crate::pow::valid_until(challenge).unwrap_or(now + 2 * crate::pow::BUCKET_SECS);
        let seen_here = {
            let mut seen = self.pow_seen.lock().unwrap_or_else(|p| p.into_inner());
            if seen.len() > POW_SEEN_MAX {
                seen.retain(|_, until| *until > now);
            }
            seen.get(&key).is_some_and(|until| *until > now)
        };
        if seen_here {
            tracing::info!(event = "tier1.proof_refused", kind = "pow_replay", event_id = %rec.event);
            return Err(self.challenge_required(rec, now));
        }
        Ok(UsedProof { key, until })
    }

    /// Takes a verified solution: good for at most two minutes, and once across all instances —
    /// a conditional write records it (docs/invariants.md#18).
    async fn take_work(&self, rec: &EventRecord, work: UsedProof, now: u64) -> Result<(), Tier1Error> {
        let UsedProof { key, until } = work;
        let first = self
            .store
            .use_proof_once(&rec.event, &key, until.saturating_add(POW_RECORD_MARGIN_SECS), now)
            .await?;
        self.pow_seen.lock().unwrap_or_else(|p| p.into_inner()).insert(key, until);
        if !first {
            tracing::info!(event = "tier1.proof_refused", kind = "pow_replay", event_id = %rec.event);
            return Err(self.challenge_required(rec, now));
        }
        Ok(())
    }

    /// The account digest of the join's enqueue token.
    fn account_of(&self, event: &EventId, proof: &JoinProof, now: u64) -> Result<String, Tier1Error> {
        let verifier = self.enqueue.as_ref().ok_or(Tier1Error::Internal("no enqueue keys configured"))?;
        let token = proof.enqueue_token.as_deref().ok_or(Tier1Error::EnqueueTokenRequired)?;
        verifier.verify(token, event, now).map_err(|e| {
            tracing::info!(event = "tier1.proof_refused", kind = "enqueue_token", event_id = %event, reason = e.code());
            Tier1Error::EnqueueTokenRequired
        })
    }

    /// The answer for a ticket the account already holds (its place, or the pre-queue), or
    /// `None` once that ticket no longer verifies: it expired, or its key was retired.
    fn answer_held(
        &self,
        rec: &EventRecord,
        request_id: &str,
        now: u64,
    ) -> Result<Option<AssignResponse>, Tier1Error> {
        let verified = self.tickets.verify_signed(request_id, &rec.event).and_then(|t| {
            self.tickets.check_life(&t, ticket_life_start(rec, t.issued_at), now)?;
            Ok(t)
        });
        let ticket = match verified {
            Ok(t) => t,
            Err(e) => {
                tracing::info!(event = "tier1.account_ticket_over", event_id = %rec.event, reason = %e);
                return Ok(None);
            }
        };
        let request_id = request_id.to_owned();
        if rec.state == EventState::Prequeue {
            return Ok(Some(self.prequeue_with(rec, request_id, now)));
        }
        Ok(Some(match position_of(rec, ticket.place)? {
            Some(position) => self.placed_with(rec, request_id, position, now),
            None => self.prequeue_with(rec, request_id, now),
        }))
    }

    /// Takes the next place.
    /// A new place in the line (counted for the report).
    async fn join(&self, rec: &EventRecord, now: u64) -> Result<AssignResponse, Tier1Error> {
        let answer = self.take_place(rec, now).await?;
        self.count(&rec.event, |m| m.joins += 1);
        Ok(answer)
    }

    async fn take_place(&self, rec: &EventRecord, now: u64) -> Result<AssignResponse, Tier1Error> {
        let event = &rec.event;
        let shard = self.next_shard(rec.config.shards);
        let n = u64::from(rec.config.shards.max(1));
        if rec.state == EventState::Prequeue {
            if let Some(c) = self.store.join_prequeue(event, shard).await? {
                let place = Place::Pre(draw::pre_index(u64::from(shard), c, n));
                tracing::debug!(event = "tier1.prequeue_joined", event_id = %event, place = %place);
                return Ok(self.prequeue_join(rec, place, now));
            }
            // The shard is sealed: the open is under way. A regular join, whose position
            // needs the sealed P from the event item.
            let j = self.store.next_in_shard(event, shard).await?;
            let place = Place::Join(crate::model::position_of(u64::from(shard), j, n));
            return match self.store.get_event(event).await? {
                Some(fresh) if !fresh.needs_seal() && fresh.state != EventState::Prequeue => {
                    self.cache.insert(event.clone(), Some(fresh.clone()));
                    self.placed(&fresh, place, now)
                }
                _ => Ok(self.prequeue_join(rec, place, now)),
            };
        }
        let j = self.store.next_in_shard(event, shard).await?;
        let place = Place::Join(crate::model::position_of(u64::from(shard), j, n));
        self.placed(rec, place, now)
    }

    fn prequeue_join(&self, rec: &EventRecord, place: Place, now: u64) -> AssignResponse {
        let request_id = self.tickets.issue(&Ticket { event: rec.event.clone(), place, issued_at: now });
        self.prequeue_with(rec, request_id, now)
    }

    fn prequeue_with(&self, rec: &EventRecord, request_id: String, now: u64) -> AssignResponse {
        let opens_at = rec.schedule.map_or(now, |s| s.open_at);
        AssignResponse::Prequeue(PrequeueJoin {
            request_secret: self.tickets.secret_for(&request_id).unwrap_or_default(),
            request_id,
            state: EventState::Prequeue,
            opens_at,
            next_poll_seconds: prequeue_poll_seconds(opens_at, now),
            message: rec.message.clone(),
        })
    }

    fn placed(&self, rec: &EventRecord, place: Place, now: u64) -> Result<AssignResponse, Tier1Error> {
        let position = position_of(rec, place)?.ok_or(Tier1Error::Internal("a join without a position"))?;
        let request_id = self.tickets.issue(&Ticket { event: rec.event.clone(), place, issued_at: now });
        tracing::debug!(event = "tier1.assigned", event_id = %rec.event, position);
        Ok(self.placed_with(rec, request_id, position, now))
    }

    fn placed_with(&self, rec: &EventRecord, request_id: String, position: u64, now: u64) -> AssignResponse {
        let ahead = position.saturating_sub(rec.serving_counter).saturating_sub(1);
        let wait = estimated_wait_seconds(ahead + 1, rec.estimate_rate(now));
        AssignResponse::Placed(Placed {
            request_secret: self.tickets.secret_for(&request_id).unwrap_or_default(),
            request_id,
            position,
            queue_length: position.saturating_sub(rec.serving_counter),
            serving_counter: rec.serving_counter,
            estimated_wait_seconds: wait,
            next_poll_seconds: poll_seconds_for_wait(wait),
            state: rec.state,
            message: rec.message.clone(),
        })
    }

    /// The request secret of a ticket this service issued (what `assign` answered with it).
    pub fn request_secret(&self, request_id: &str) -> Option<String> {
        self.tickets.secret_for(request_id)
    }

    /// `GET /vwr/check/{eventId}/{requestId}` with the request secret (proof of possession):
    /// without it, or with another, 403 `proof_required` before any store access.
    pub async fn check(
        &self,
        event: &EventId,
        request_id: &str,
        secret: Option<&str>,
    ) -> Result<CheckOutcome, Tier1Error> {
        self.check_with_tokens(event, request_id, secret, &Presented::default()).await
    }

    /// [`Self::check`] with what the request presents besides the ticket: once tier 1's own
    /// session is over, a token tier 2 renewed for this very admission is answered as it is
    /// (docs/invariants.md#19), and a hold tier 2 signed for this ticket's visitor brings a
    /// new token (docs/invariants.md#27).
    pub async fn check_with_tokens(
        &self,
        event: &EventId,
        request_id: &str,
        secret: Option<&str>,
        presented: &Presented<'_>,
    ) -> Result<CheckOutcome, Tier1Error> {
        let answer = self.check_once(event, request_id, secret, presented).await;
        self.flush_report_due().await;
        answer
    }

    async fn check_once(
        &self,
        event: &EventId,
        request_id: &str,
        secret: Option<&str>,
        presented: &Presented<'_>,
    ) -> Result<CheckOutcome, Tier1Error> {
        let now = self.now();
        let ticket = self.tickets.verify_signed(request_id, event).map_err(Tier1Error::Ticket)?;
        if !secret.is_some_and(|s| self.tickets.secret_matches(request_id, s)) {
            // A ticket without its secret: a stolen or pasted requestId, or a page from before
            // the secrets (docs/abuse.md).
            let kind = if secret.is_some() { "request_secret_wrong" } else { "request_secret_missing" };
            tracing::info!(event = "tier1.proof_refused", kind, event_id = %event);
            return Err(Tier1Error::ProofRequired);
        }
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        // The ticket's life counts from the open when it was issued before (a pre-queue of
        // any length: docs/invariants.md#16).
        let life_start = ticket_life_start(&rec, ticket.issued_at);
        self.tickets.check_life(&ticket, life_start, now).map_err(Tier1Error::Ticket)?;
        let position = match rec.state {
            EventState::Inactive | EventState::Standby => return Err(Tier1Error::EventNotActive),
            EventState::Scheduled => return Err(not_open(&rec)),
            EventState::Prequeue => None,
            _ => position_of(&rec, ticket.place)?,
        };
        let Some(position) = position else {
            if rec.state == EventState::Closed {
                return Ok(closed_answer(&rec));
            }
            let opens_at = rec.schedule.map_or(now, |s| s.open_at);
            return Ok(CheckOutcome::Prequeue(PrequeueWait {
                admitted: false,
                state: EventState::Prequeue,
                opens_at,
                next_poll_seconds: prequeue_poll_seconds(opens_at, now),
                message: rec.message.clone(),
            }));
        };
        // The wait of this place's first redemption, when this call made it.
        let mut first_wait = None;
        let redemption = if rec.state == EventState::Closed {
            // Nobody more is admitted; an admission made before the close is answered again.
            match self.store.redemption(event, position).await? {
                Some(r) => r,
                None => return Ok(closed_answer(&rec)),
            }
        } else if position > rec.serving_counter {
            let ahead = position - rec.serving_counter - 1;
            let wait = estimated_wait_seconds(ahead + 1, rec.estimate_rate(now));
            return Ok(CheckOutcome::Waiting(Waiting {
                admitted: false,
                state: rec.state,
                position,
                serving_counter: rec.serving_counter,
                people_ahead: ahead,
                estimated_wait_seconds: wait,
                next_poll_seconds: poll_seconds_for_wait(wait),
                message: rec.message.clone(),
            }));
        } else {
            let jti = self.fresh_jti()?;
            let expires_at = self.tickets.expires_at(&ticket, life_start) + REDEMPTION_GRACE_SECS;
            let r = self.store.redeem(event, position, rec.config.shards, &jti, now, expires_at).await?;
            if r.fresh {
                // The wait: from the join, or from the open for a pre-queue ticket.
                let wait = now.saturating_sub(life_start);
                first_wait = Some(wait);
                self.count(event, |m| m.redeemed_after(wait));
            }
            r
        };
        let jti = redemption.jti.clone();
        let (redemption, iat, exp) = match self.session_token(&rec, position, redemption, now).await {
            Err(Tier1Error::AdmissionExpired) => {
                // Over for tier 1 alone; tier 2 may still hold the visitor: by the token it renews,
                // or by the hold it signed into their identity (however long their quiet wait).
                if let Some(admitted) =
                    self.held_by_tier2(event, request_id, position, &jti, presented.tokens, now)
                {
                    tracing::debug!(event = "tier1.admitted_as_held", event_id = %event, position);
                    return Ok(CheckOutcome::Admitted(admitted));
                }
                return match self.held_by_tier2_hold(
                    &rec,
                    request_id,
                    position,
                    &jti,
                    presented.holds,
                    now,
                )? {
                    Some(admitted) => {
                        tracing::info!(event = "tier1.admitted_by_tier2_hold", event_id = %event, position);
                        Ok(CheckOutcome::Admitted(admitted))
                    }
                    None => Err(Tier1Error::AdmissionExpired),
                };
            }
            other => other?,
        };
        let claims = Tier1Claims {
            iss: self.tokens.issuer().to_owned(),
            aud: self.tokens.audience().to_owned(),
            sub: request_id.to_owned(),
            eid: event.as_str().to_owned(),
            pos: position,
            tier: 1,
            iat,
            nbf: iat,
            exp,
            jti: redemption.jti,
            t2: None,
        };
        let token =
            self.tokens.sign(&claims).map_err(|_| Tier1Error::Internal("could not sign the token"))?;
        if let Some(wait_seconds) = first_wait {
            // `wait_seconds`: the dashboard's wait percentiles (a log metric filter).
            tracing::info!(event = "tier1.admitted", event_id = %event, position, jti = %claims.jti, wait_seconds);
        } else if redemption.fresh {
            tracing::info!(event = "tier1.admitted", event_id = %event, position, jti = %claims.jti);
        }
        Ok(CheckOutcome::Admitted(admitted(token, exp, now)))
    }

    /// The admission tier 2 still holds (docs/invariants.md#19): among `presented`, a tier-1
    /// token valid now, with its place proof, for this ticket (`sub`), `position` and the
    /// admission's `jti` — what tier 2 renews for as long as it holds the visitor. Answered as
    /// it is: nothing beyond its own `exp`.
    fn held_by_tier2(
        &self,
        event: &EventId,
        request_id: &str,
        position: u64,
        jti: &str,
        presented: &[&str],
        now: u64,
    ) -> Option<Admitted> {
        presented.iter().find_map(|token| {
            let c = self.tokens.link().verify(token, event, now).ok()?;
            let same = c.sub == request_id && c.pos == position && same_jti(&c.jti, jti);
            same.then(|| admitted((*token).to_owned(), c.exp, now))
        })
    }

    /// The admission tier 2 holds by the hold it signed (docs/invariants.md#27): among `holds`
    /// (identity cookies), one tier 2's public keys verify, of this event, whose user is this
    /// ticket's (the digest of the `requestId`) at this position, and which still holds a place
    /// — in line (until the turn, however long), or an admission not yet ended. Answered with a
    /// new token of the admission (same position and `jti`, the event's token life); nothing
    /// is written. `None` without a hold verifier (`VWR_TIER2_JWKS` unset) or such a hold.
    fn held_by_tier2_hold(
        &self,
        rec: &EventRecord,
        request_id: &str,
        position: u64,
        jti: &str,
        holds: &[&str],
        now: u64,
    ) -> Result<Option<Admitted>, Tier1Error> {
        let Some(verifier) = &self.holds else { return Ok(None) };
        let user = vwr_core::identity::tier1_user_id(request_id);
        let now_ms = now.saturating_mul(1000);
        let held = holds
            .iter()
            .filter_map(|t| verifier.verify(t, &rec.event, now).ok())
            .any(|c| c.sub == user && c.pos == Some(position) && c.holds_at(now_ms));
        if !held {
            return Ok(None);
        }
        let exp = now.saturating_add(rec.config.token_ttl_seconds);
        let claims = Tier1Claims {
            iss: self.tokens.issuer().to_owned(),
            aud: self.tokens.audience().to_owned(),
            sub: request_id.to_owned(),
            eid: rec.event.as_str().to_owned(),
            pos: position,
            tier: 1,
            iat: now,
            nbf: now,
            exp,
            jti: jti.to_owned(),
            t2: None,
        };
        let token =
            self.tokens.sign(&claims).map_err(|_| Tier1Error::Internal("could not sign the token"))?;
        Ok(Some(admitted(token, exp, now)))
    }

    /// The token window of an admission at `now` (docs/outflow.md#sessions): the current token
    /// while it is valid; once it expired, a new one at once if it expired less than
    /// `reentryGraceSeconds` ago and the session (from the first admission) is younger than
    /// `maxSessionSeconds` — never the back of the line; else 410. No token runs past the
    /// session's end, and a session the site released is over.
    async fn session_token(
        &self,
        rec: &EventRecord,
        position: u64,
        redemption: Redemption,
        now: u64,
    ) -> Result<(Redemption, u64, u64), Tier1Error> {
        let c = &rec.config;
        if redemption.released_at.is_some() {
            return Err(Tier1Error::SessionEnded);
        }
        let session_end = redemption.redeemed_at.saturating_add(c.max_session_seconds);
        let (iat, exp) = redemption.token_window(c.token_ttl_seconds);
        let capped = exp.min(session_end);
        if now < capped {
            return Ok((redemption, iat, capped));
        }
        if now >= session_end || now >= exp.saturating_add(c.reentry_grace_seconds) {
            return Err(Tier1Error::AdmissionExpired);
        }
        let new_exp = now.saturating_add(c.token_ttl_seconds).min(session_end);
        let renewed = self
            .store
            .renew(&rec.event, position, exp, now, new_exp)
            .await?
            .ok_or(Tier1Error::Internal("the admission vanished"))?;
        let (iat, exp) = renewed.token_window(c.token_ttl_seconds);
        if now >= exp {
            return Err(Tier1Error::Busy);
        }
        if renewed.fresh {
            tracing::info!(event = "tier1.readmitted", event_id = %rec.event, position, exp);
        }
        Ok((renewed, iat, exp.min(session_end)))
    }

    /// `POST /vwr/release/{eventId}`: the site says the visitor is done (with the visitor's
    /// tier-1 token); the session ends, and in `targetArrivals` mode its place is handed on at
    /// the next step. Only the admission's own token ends it: its `jti` must be the
    /// redemption's (a conditional write), so a token minted with the edge key alone ends
    /// nobody's session (403). Tokens tier 2 renewed keep the `jti` and release. Idempotent.
    pub async fn release(&self, event: &EventId, token: &str) -> Result<(), Tier1Error> {
        let answer = self.release_once(event, token).await;
        self.flush_report_due().await;
        answer
    }

    async fn release_once(&self, event: &EventId, token: &str) -> Result<(), Tier1Error> {
        let now = self.now();
        let claims = self.tokens.verify(token, event, now).map_err(|_| Tier1Error::InvalidToken)?;
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        match self.store.release(event, claims.pos, rec.config.shards, &claims.jti, now).await? {
            Some(r) if !same_jti(&r.jti, &claims.jti) => {
                tracing::info!(event = "tier1.release_refused", event_id = %event, position = claims.pos);
                return Err(Tier1Error::ForeignToken);
            }
            Some(r) if r.fresh => {
                self.count(event, |m| m.released += 1);
                tracing::info!(event = "tier1.released", event_id = %event, position = claims.pos);
            }
            Some(_) => {}
            None => return Err(Tier1Error::ForeignToken),
        }
        Ok(())
    }

    fn fresh_jti(&self) -> Result<String, Tier1Error> {
        let mut b = [0u8; 16];
        self.rng.fill(&mut b).map_err(|_| Tier1Error::Internal("random generator failed"))?;
        Ok(URL_SAFE_NO_PAD.encode(b))
    }

    /// `GET /vwr/status/{eventId}`: the public status document, from the instance cache.
    /// `GET /vwr/page/{eventId}`: the page settings (docs/brand.md), from the instance cache.
    pub async fn public_page(&self, event: &EventId) -> Result<PublicPage, Tier1Error> {
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        Ok(PublicPage {
            event_id: rec.event.to_string(),
            page: rec.page.unwrap_or_default(),
            updated_at: rec.updated_at,
        })
    }

    pub async fn public_status(&self, event: &EventId) -> Result<PublicStatus, Tier1Error> {
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        let now = self.now();
        let sealed = rec.sealed_counts.is_some();
        let before_open = matches!(rec.state, EventState::Scheduled | EventState::Prequeue);
        let issued = if sealed || !before_open {
            // The last step's sample, or the advancer's count since if the line stood still.
            rec.samples.last().map_or(0, |s| s.issued).max(rec.prequeue_total()).max(rec.issued_count)
        } else {
            rec.prequeue_size
        };
        Ok(PublicStatus {
            event_id: rec.event.to_string(),
            state: rec.state,
            serving_counter: rec.serving_counter,
            issued,
            served_per_second: rec.served_per_second(now),
            opens_at: rec.schedule.filter(|_| before_open).map(|s| s.open_at),
            closes_at: rec.schedule.and_then(|s| s.close_at),
            message: rec.message.clone(),
            close_reason: rec.close_reason.filter(|_| rec.state == EventState::Closed),
            seed_commitment: commitment(&rec),
            seed: rec.seed.clone().filter(|_| sealed),
            sealed_counts: rec.sealed_counts.clone(),
            prequeue_size: if sealed {
                Some(rec.prequeue_total())
            } else if rec.seed.is_some() {
                Some(rec.prequeue_size)
            } else {
                None
            },
            updated_at: rec.updated_at,
        })
    }
}

/// When a ticket's life starts counting (docs/tokens.md#tickets): at its issue, or at the open
/// of its event if that is later, so a pre-queue of any length never uses up the life of its
/// tickets (docs/invariants.md#16). Until the event has opened, its scheduled open stands in.
pub fn ticket_life_start(rec: &EventRecord, issued_at: u64) -> u64 {
    let scheduled = match (rec.state, rec.opened_at) {
        (EventState::Scheduled | EventState::Prequeue, _) | (_, None) => {
            rec.schedule.map_or(0, |s| s.open_at)
        }
        _ => 0,
    };
    issued_at.max(rec.opened_at.unwrap_or(0)).max(scheduled)
}

/// The admitted answer with `token`, expiring at `exp`, made at `now`.
fn admitted(token: String, exp: u64, now: u64) -> Admitted {
    Admitted { admitted: true, token, expires_at: exp, answered_at: now }
}

/// The record key of a used proof-of-work solution: a digest, so the item key stays short.
fn proof_digest(challenge: &str, nonce: &str) -> String {
    let d = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("vwr/pow-used/v1:{challenge}:{nonce}").as_bytes(),
    );
    URL_SAFE_NO_PAD.encode(d.as_ref())
}

/// Whether two `jti`s are the same (constant time: a stored `jti` never leaks by timing).
fn same_jti(a: &str, b: &str) -> bool {
    aws_lc_rs::constant_time::verify_slices_are_equal(a.as_bytes(), b.as_bytes()).is_ok()
}

fn not_open(rec: &EventRecord) -> Tier1Error {
    let (prequeue_at, opens_at) = rec.schedule.map_or((0, 0), |s| (s.prequeue_at, s.open_at));
    Tier1Error::EventNotOpen { prequeue_at, opens_at }
}

fn closed_answer(rec: &EventRecord) -> CheckOutcome {
    CheckOutcome::Closed(ClosedAnswer {
        admitted: false,
        state: EventState::Closed,
        close_reason: rec.close_reason,
        message: rec.message.clone(),
    })
}

/// Before the open the page counts down from the status document; a check is only useful
/// near the open: poll at half the remaining time, 1–30 s.
fn prequeue_poll_seconds(opens_at: u64, now: u64) -> u64 {
    (opens_at.saturating_sub(now) / 2).clamp(1, 30)
}

/// The position of a ticket's place on `rec`, once it is known: a regular join stands
/// behind the sealed pre-queue, a pre-queue join gets its drawn position
/// (docs/lifecycle.md#pre-queue-and-the-randomized-open).
pub fn position_of(rec: &EventRecord, place: Place) -> Result<Option<u64>, Tier1Error> {
    match place {
        Place::Join(j) if !rec.needs_seal() => Ok(Some(rec.prequeue_total() + j)),
        Place::Join(_) => Ok(None),
        Place::Pre(i) => {
            let (Some(counts), Some(seed)) = (&rec.sealed_counts, &rec.seed) else {
                return Ok(None);
            };
            let seed = Seed::from_hex(seed).map_err(|_| {
                tracing::error!(event = "tier1.corrupt_data", event_id = %rec.event, "the stored seed is not hex");
                Tier1Error::Internal("stored data could not be read")
            })?;
            let rank = draw::rank_of_pre_index(counts, i).map_err(|e| {
                // A correctly signed pre-queue index outside the sealed counts would mean a
                // join counted after its shard's seal: it cannot happen (docs/invariants.md#12).
                tracing::error!(event = "tier1.prequeue_index_outside_seal", event_id = %rec.event, index = i, error = %e);
                Tier1Error::Internal("this pre-queue ticket is not part of the sealed pre-queue")
            })?;
            let position = draw::position(&seed, rec.prequeue_total(), rank)
                .map_err(|_| Tier1Error::Internal("the draw failed"))?;
            Ok(Some(position))
        }
    }
}
