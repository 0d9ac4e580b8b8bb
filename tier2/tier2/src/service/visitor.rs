//! The visitor's operations, called by the public router (`/api/queue/...`): `check` (the
//! join, the admission and its entry token), `status` (also a heartbeat), `heartbeat`, `leave`,
//! the line document, and the signed identity `http` sends as the identity cookie.

use vwr_core::EventId;
use vwr_core::hints::{estimated_wait_seconds, next_poll_seconds};
use vwr_core::hold::Held;

use super::{IdentityToken, LineDocument, QueueAnswer, Tier2Error, Tier2Service, estimate_rate, random_id};
use crate::entry_token::{EntryClaims, IDENTITY_AUDIENCE, IdentityClaims};
use crate::identity::{Caller, Source};
use crate::model::{LineOrder, LineScore, Place, StoreError};

impl Tier2Service {
    fn answer(&self, event: &EventId, user: &str, place: &Place) -> Result<QueueAnswer, Tier2Error> {
        match place {
            Place::Queued { position, figures, restored, score } => {
                let rate = estimate_rate(figures, self.settings.active_ttl_ms);
                Ok(QueueAnswer {
                    status: "queued",
                    position: *position,
                    people_ahead: position.saturating_sub(1),
                    people_behind: figures.queue_size.saturating_sub(*position),
                    queue_size: figures.queue_size,
                    estimated_wait_seconds: estimated_wait_seconds(*position, rate),
                    next_poll_seconds: next_poll_seconds(i64::try_from(*position).unwrap_or(i64::MAX)),
                    current_users: figures.active,
                    threshold: figures.threshold,
                    entry_token: None,
                    expires_at: None,
                    admission_ends_at: None,
                    restored: *restored,
                    // Back for an admission (score 0): no front passes it; the page asks
                    // `status` until it has the admission (docs/api.md#the-line-document).
                    line_score: line_score(*score),
                    checked_at_ms: line_score(*score).map(|_| self.clock.now_millis()),
                    admitted_at_ms: None,
                    held: line_score(*score).map(|score| Held::Waiting { score }),
                })
            }
            Place::Active { admission, figures, restored, .. } => {
                // The token ends when the store says (never after the admission), rounded
                // down to whole seconds: it never outlives the slot that counts it.
                let end_ms = match admission.token_expires_at_ms {
                    0 => admission.expires_at_ms,
                    t => t,
                };
                let claims = EntryClaims {
                    iss: self.tokens.issuer().to_owned(),
                    aud: self.tokens.audience().to_owned(),
                    sub: event.to_string(),
                    uid: user.to_owned(),
                    tier: 2,
                    iat: self.clock.now_secs().min(end_ms / 1000),
                    exp: end_ms / 1000,
                    jti: admission.jti.clone(),
                };
                let token = self
                    .tokens
                    .sign(&claims)
                    .map_err(|_| Tier2Error::Internal("could not sign the entry token"))?;
                let refresh = (self.settings.entry_token_ttl_ms / 3_000).clamp(1, 20);
                Ok(QueueAnswer {
                    status: "active",
                    position: 0,
                    people_ahead: 0,
                    people_behind: figures.queue_size,
                    queue_size: figures.queue_size,
                    estimated_wait_seconds: 0,
                    next_poll_seconds: refresh,
                    current_users: figures.active,
                    threshold: figures.threshold,
                    entry_token: Some(token),
                    expires_at: Some(claims.exp),
                    admission_ends_at: Some(admission.expires_at_ms / 1000),
                    restored: *restored,
                    line_score: None,
                    checked_at_ms: None,
                    admitted_at_ms: Some(admission.admitted_at_ms),
                    held: Some(Held::Admitted(admission.clone())),
                })
            }
        }
    }

    /// The tier-2 identity of `caller`, signed afresh at every call that finds them in tier 2
    /// (`http` sends it as the identity cookie) with the place tier 2 holds for them (`held`,
    /// docs/tokens.md#tier-2-holds), or `None` for local dev-header callers.
    pub fn identity_token(
        &self,
        event: &EventId,
        caller: &Caller,
        held: Option<&Held>,
    ) -> Result<Option<IdentityToken>, Tier2Error> {
        if caller.source == Source::DevHeader {
            return Ok(None);
        }
        let now = self.clock.now_secs();
        let ttl_secs = self.settings.identity_life_ms() / 1000;
        let claims = IdentityClaims {
            iss: self.tokens.issuer().to_owned(),
            aud: IDENTITY_AUDIENCE.to_owned(),
            sub: caller.user.clone(),
            eid: event.to_string(),
            pos: caller.tier1_position,
            tier: 2,
            iat: now,
            exp: now + ttl_secs,
            ls: match held {
                Some(Held::Waiting { score }) => Some(*score),
                _ => None,
            },
            adm: match held {
                Some(Held::Admitted(a)) => Some(a.encode()),
                _ => None,
            },
        };
        let token = self
            .tokens
            .sign_identity(&claims)
            .map_err(|_| Tier2Error::Internal("could not sign the identity"))?;
        Ok(Some(IdentityToken { token, ttl_secs }))
    }

    /// `POST /api/queue/check/{eventId}`. A caller known only by an expired tier-1 token
    /// ([`Caller::may_join`] false) finds a place, or a place a timeout took, they have, and
    /// never joins: 403 `tier1_token_required` without one.
    pub async fn check(&self, event: &EventId, caller: &Caller) -> Result<QueueAnswer, Tier2Error> {
        let jti = random_id()?;
        let place = self
            .with_meta(event, |meta| {
                let jti = jti.clone();
                async move {
                    let score = match meta.order {
                        LineOrder::Arrival => LineScore::Arrival,
                        LineOrder::Tier1 => match caller.tier1_position {
                            Some(p) => LineScore::Tier1Position(p),
                            None => return Err(StoreError::OrderMismatch("tier-1 position".into())),
                        },
                    };
                    let (user, proof) = (&caller.user, caller.proof.as_ref());
                    self.store
                        .check_in(event, user, score, &jti, &self.settings, caller.may_join(), proof)
                        .await
                }
            })
            .await
            .map_err(|e| match e {
                Tier2Error::Store(StoreError::OrderMismatch(_)) if caller.tier1_position.is_none() => {
                    Tier2Error::Tier1TokenRequired
                }
                Tier2Error::Store(StoreError::NoPlace) => Tier2Error::Tier1TokenRequired,
                e => e,
            })?;
        if let Place::Active { fresh: true, .. } = place {
            self.count(event, |m| m.admitted += 1);
            tracing::info!(event = "tier2.admitted_at_once", event_id = %event, jti = %jti);
        }
        self.flush_report_due().await;
        if place.restored() {
            tracing::info!(event = "tier2.place_restored", event_id = %event, active = matches!(place, Place::Active { .. }));
        }
        self.answer(event, &caller.user, &place)
    }

    /// `GET /api/queue/status/{eventId}` (also a heartbeat; an active user gets a fresh
    /// entry token).
    pub async fn status(&self, event: &EventId, user: &str) -> Result<QueueAnswer, Tier2Error> {
        let (ttl, touch) = (self.settings.entry_token_ttl_ms, self.settings.touch());
        match self.with_meta(event, |_| self.store.status(event, user, touch, ttl)).await? {
            Some(place) => self.answer(event, user, &place),
            None => Err(not_in_queue()),
        }
    }

    /// `POST /api/queue/heartbeat/{eventId}`: what tier 2 holds for the user (a place in line
    /// without its score: a heartbeat does not read it).
    pub async fn heartbeat(&self, event: &EventId, user: &str) -> Result<Option<Held>, Tier2Error> {
        let touch = self.settings.touch();
        match self.with_meta(event, |_| self.store.status(event, user, touch, 0)).await? {
            Some(Place::Active { admission, .. }) => Ok(Some(Held::Admitted(admission))),
            Some(Place::Queued { score, .. }) => Ok(score.map(|score| Held::Waiting { score })),
            None => Err(not_in_queue()),
        }
    }

    /// `GET /api/queue/line/{eventId}`: where the line stands, the same for everyone. Not
    /// cached here: CloudFront keeps it a second in front (and the origin is reachable only
    /// through CloudFront), and a second cache behind it would make it up to two seconds old —
    /// a second more of idle slot at every turn.
    pub async fn line(&self, event: &EventId) -> Result<LineDocument, Tier2Error> {
        // Stamped before the read: a document stamped at or after a `check` answer's
        // `checkedAt` was read after that join.
        let now = self.clock.now_millis();
        let view = self.with_meta(event, |_| self.store.line(event)).await?;
        Ok(LineDocument::of(event, &view, self.settings.active_ttl_ms, now))
    }

    /// `POST /api/queue/leave/{eventId}`: frees what the user held (idempotent).
    pub async fn leave(&self, event: &EventId, user: &str) -> Result<(), Tier2Error> {
        let left = self.with_meta(event, |_| self.store.leave(event, user)).await?;
        tracing::info!(event = "tier2.left", event_id = %event, was_waiting = left.was_waiting, was_active = left.was_active);
        Ok(())
    }
}

/// A queued place's score as the line document compares it: above 0 (a user back for an
/// admission waits at 0, ahead of everyone, and is told to ask `status` instead).
fn line_score(score: Option<u64>) -> Option<u64> {
    score.filter(|s| *s > 0)
}

fn not_in_queue() -> Tier2Error {
    Tier2Error::NotInQueue
}
