//! Tier-2 behaviour: check / status / heartbeat / leave, entry tokens, identity cookies, wait
//! estimates, registration (with its durable copy). HTTP-agnostic: failures are
//! [`Tier2Error`]s, mapped to answers in `http`; the answers are typed data, and `http` alone
//! turns them into headers and cookies.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use vwr_core::cache::TtlCache;
use vwr_core::hints::{estimated_wait_seconds, next_poll_seconds};
use vwr_core::hold::Held;
use vwr_core::metrics::{MetricsSink, Unit};
use vwr_core::tiers::{ActiveEvents, LookupError};
use vwr_core::time::{Clock, SystemClock};
use vwr_core::{ApiError, EventId};

use crate::entry_token::{EntryClaims, EntryTokens, IDENTITY_AUDIENCE, IdentityClaims};
use crate::identity::{Caller, Source};
use crate::model::{
    EventMeta, Figures, LineOrder, LineScore, LineView, MAX_THRESHOLD, Place, RegisterMode, Snapshot,
    StoreError, Tier2Settings,
};
use crate::registry::{MemoryRegistry, Registry};
use crate::store::AdmissionStore;

/// Why a tier-2 operation failed: the domain's own errors; `http` maps them to answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Tier2Error {
    #[error("this event has no waiting room")]
    EventNotFound,
    #[error("you are neither waiting nor admitted; check in first")]
    NotInQueue,
    /// The line is ordered by tier-1 position and the caller brings none.
    #[error("pass the waiting room first (no valid tier-1 token)")]
    Tier1TokenRequired,
    #[error("{0}")]
    InvalidThreshold(String),
    /// Tier 1 (asked whether it gates the event) is unreachable.
    #[error("{0}")]
    Tier1Unavailable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(&'static str),
}

/// The answer of check / status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueAnswer {
    pub status: &'static str,
    pub position: u64,
    pub people_ahead: u64,
    pub people_behind: u64,
    pub queue_size: u64,
    pub estimated_wait_seconds: u64,
    /// Waiting: when to poll again. Active: when to call `status` again for a fresh entry
    /// token (well before `expiresAt`).
    pub next_poll_seconds: u64,
    pub current_users: u64,
    pub threshold: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_token: Option<String>,
    /// When the entry token expires (seconds since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When the admission itself ends (seconds since the epoch); tokens are refreshed up to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission_ends_at: Option<u64>,
    /// This `check` gave back the place a timeout had taken (docs/invariants.md#23); absent
    /// otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restored: bool,
    /// Queued, in a `check` answer: the caller's score in line. While the line document's
    /// `front` is at or below it the caller is still in line; once `front` passes it (or is
    /// `null`), the caller has left the line and asks `status` (docs/api.md#the-line-document).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_score: Option<u64>,
    /// With `lineScore`: when this answer was made, kept in milliseconds since the epoch and
    /// answered as `checkedAt` in seconds with a millisecond fraction (docs/api.md#times). A
    /// line document tells about the caller only if its `updatedAt` is not earlier: an older
    /// one was read before the caller joined, and its `front` may have passed a score not yet
    /// in line.
    #[serde(
        rename = "checkedAt",
        skip_serializing_if = "Option::is_none",
        serialize_with = "epoch_secs::opt"
    )]
    pub checked_at_ms: Option<u64>,
    /// Active: when the admission was made (the store's clock), kept in milliseconds since the
    /// epoch and answered as `admittedAt` in seconds with a millisecond fraction.
    #[serde(
        rename = "admittedAt",
        skip_serializing_if = "Option::is_none",
        serialize_with = "epoch_secs::opt"
    )]
    pub admitted_at_ms: Option<u64>,
    /// What tier 2 holds for the caller, signed into their identity cookie (not in the body).
    #[serde(skip)]
    pub held: Option<Held>,
}

/// The line document of an event, `GET /api/queue/line/{eventId}`: the same for everyone,
/// cached by CloudFront for a second (docs/api.md#the-line-document).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineDocument {
    pub event_id: String,
    /// People in the line.
    pub waiting: u64,
    /// Slots taken.
    pub active: u64,
    pub threshold: u64,
    /// The score of the first person in line; `null` when nobody waits.
    pub front: Option<u64>,
    /// `[place, score]` of up to 16 people spread over the line, the front and the back
    /// included: a visitor's place is between the two marks around its own score.
    pub marks: Vec<[u64; 2]>,
    /// Admissions per second over the last minute.
    pub admitted_per_second: f64,
    /// The rate wait estimates use (admissions per second; docs/api.md#poll-hints-and-estimates).
    pub estimate_rate: Option<f64>,
    /// When the read behind this document began, kept in milliseconds since the epoch and
    /// answered as `updatedAt` in seconds with a millisecond fraction (docs/api.md#times): it
    /// knows of every join answered (`checkedAt`) before then.
    #[serde(rename = "updatedAt", serialize_with = "epoch_secs::serialize")]
    pub updated_at_ms: u64,
}

/// Times in an answer: seconds since the Unix epoch, with a fraction of milliseconds where
/// they are kept to the millisecond (docs/api.md#times, docs/adr/0034-times-in-seconds.md).
/// `ms / 1000` is the f64 nearest to the decimal, which serde_json prints in its shortest form
/// (`1764337871234` → `1764337871.234`); it keeps the order of the milliseconds, so clients
/// compare two such times as the server did.
pub mod epoch_secs {
    use serde::Serializer;

    /// Seconds since the epoch of `ms` milliseconds since the epoch.
    pub fn of_millis(ms: u64) -> f64 {
        ms as f64 / 1000.0
    }

    /// Serializes milliseconds since the epoch as seconds.
    pub fn serialize<S: Serializer>(ms: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(of_millis(*ms))
    }

    /// [`serialize`] for an optional time (absent ones are skipped by the field).
    pub fn opt<S: Serializer>(ms: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Some(ms) => serialize(ms, s),
            None => s.serialize_none(),
        }
    }
}

impl LineDocument {
    fn of(event: &EventId, v: &LineView, admission_ttl_ms: u64, now_ms: u64) -> Self {
        Self {
            event_id: event.to_string(),
            waiting: v.figures.queue_size,
            active: v.figures.active,
            threshold: v.figures.threshold,
            front: v.front,
            marks: v.marks.iter().map(|(p, s)| [*p, *s]).collect(),
            admitted_per_second: v.figures.admitted_last_60s as f64 / 60.0,
            estimate_rate: estimate_rate(&v.figures, admission_ttl_ms),
            updated_at_ms: now_ms,
        }
    }
}

/// A signed tier-2 identity (docs/tokens.md) and how long it lasts: `http` sends it as the
/// identity cookie `vwr_t2_{eventId}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityToken {
    pub token: String,
    pub ttl_secs: u64,
}

/// Tier-2 figures for the admin status.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier2Status {
    pub event_id: String,
    pub registered: bool,
    pub threshold: Option<u64>,
    pub line_order: Option<LineOrder>,
    pub waiting: u64,
    /// Slots taken (released slots still held by a valid entry token included).
    pub active: u64,
    /// Of `active`: slots of users who left, held until their last entry token expires.
    pub held: u64,
    /// Places and admissions kept for users a timeout removed, until they come back
    /// (docs/invariants.md#23).
    pub evicted_places: u64,
    pub pending_notices: u64,
    pub admitted_last_60s: u64,
    pub admitted_per_second: f64,
}

/// The tier-2 service.
pub struct Tier2Service {
    store: Arc<dyn AdmissionStore>,
    registry: Arc<dyn Registry>,
    tokens: EntryTokens,
    settings: Tier2Settings,
    tier1: Arc<dyn ActiveEvents>,
    meta_cache: TtlCache<EventId, EventMeta>,
    clock: Arc<dyn Clock>,
    metrics: MetricsSink,
    /// This instance's counts for the report, not yet in the store.
    tally: crate::report::Tally,
}

fn random_id() -> Result<String, Tier2Error> {
    vwr_core::keys::random_bytes(12)
        .map(|b| URL_SAFE_NO_PAD.encode(b))
        .map_err(|_| Tier2Error::Internal("random generator failed"))
}

fn not_found() -> Tier2Error {
    Tier2Error::EventNotFound
}

impl From<LookupError> for Tier2Error {
    fn from(e: LookupError) -> Self {
        Self::Tier1Unavailable(e.0)
    }
}

impl Tier2Service {
    /// A service with an in-memory registry, the system clock and no metrics; see the
    /// `with_*` methods. [`crate::assemble()`] is the way to make one.
    pub(crate) fn new(
        store: Arc<dyn AdmissionStore>,
        tokens: EntryTokens,
        settings: Tier2Settings,
        tier1: Arc<dyn ActiveEvents>,
        meta_ttl: Duration,
    ) -> Self {
        Self {
            store,
            registry: Arc::new(MemoryRegistry::default()),
            tokens,
            settings,
            tier1,
            meta_cache: TtlCache::new(meta_ttl),
            clock: Arc::new(SystemClock),
            metrics: MetricsSink::Off,
            tally: crate::report::Tally::new(SystemClock.now_secs()),
        }
    }

    /// Where registrations are kept durably (DynamoDB in AWS).
    pub(crate) fn with_registry(mut self, registry: Arc<dyn Registry>) -> Self {
        self.registry = registry;
        self
    }

    /// The clock of identity cookies and of the report's minutes (tests move it).
    pub(crate) fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.tally = crate::report::Tally::new(clock.now_secs());
        self.clock = clock;
        self
    }

    pub(crate) fn with_metrics(mut self, metrics: MetricsSink) -> Self {
        self.metrics = metrics;
        self
    }

    pub fn store(&self) -> &Arc<dyn AdmissionStore> {
        &self.store
    }

    /// Counts something of `event` now, for the report (docs/operate.md#the-report-after-the-sale).
    pub fn count(&self, event: &EventId, f: impl FnOnce(&mut crate::report::Tier2Minute)) {
        self.tally.record(event, self.clock.now_secs(), f);
    }

    /// Adds this instance's counts to the store when a minute has passed since it last did;
    /// a failed write keeps them for the next time.
    pub async fn flush_report_due(&self) {
        let batch = self.tally.take_due(self.clock.now_secs());
        let _ = self.write_counts(batch).await;
    }

    /// Adds all of this instance's counts to the store now.
    pub async fn flush_report(&self) -> Result<(), Tier2Error> {
        let batch = self.tally.take_all(self.clock.now_secs());
        self.write_counts(batch).await
    }

    /// Writes `batch`; what fails waits in the tally for the next flush.
    async fn write_counts(
        &self,
        batch: vwr_core::tally::Batch<crate::report::Tier2Minute>,
    ) -> Result<(), Tier2Error> {
        let store = &self.store;
        self.tally
            .write_batch(batch, |event, minute, counts| async move {
                let r = store.add_report_minute(&event, minute, &counts).await;
                if let Err(e) = &r {
                    tracing::warn!(event = "tier2.report_flush_failed", event_id = %event, minute, error = %e);
                }
                r
            })
            .await
            .map_err(Tier2Error::from)
    }

    /// `GET /api/queue/admin/report/{eventId}`: tier 2's minutes of the sale; 404 for an
    /// event tier 2 neither holds nor has counted.
    pub async fn report(&self, event: &EventId) -> Result<crate::report::Tier2Report, Tier2Error> {
        self.flush_report().await?;
        let minutes = self.store.report_minutes(event).await?;
        let threshold = self.store.meta(event).await?.map(|m| m.threshold);
        if threshold.is_none() && minutes.is_empty() {
            return Err(Tier2Error::EventNotFound);
        }
        Ok(crate::report::Tier2Report::build(event, threshold, &minutes, self.clock.now_secs()))
    }

    pub fn registry(&self) -> &Arc<dyn Registry> {
        &self.registry
    }

    pub fn tokens(&self) -> &EntryTokens {
        &self.tokens
    }

    pub fn settings(&self) -> &Tier2Settings {
        &self.settings
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The event's registration. A registration Redis lost is re-hydrated from the durable
    /// copy; an event active in tier 1 is registered on first use (durably too); an
    /// unregistered event stays unknown.
    pub async fn meta(&self, event: &EventId) -> Result<EventMeta, Tier2Error> {
        if let Some(m) = self.meta_cache.get(event) {
            return Ok(m);
        }
        let meta = match self.store.meta(event).await? {
            Some(m) => m,
            None => self.restore(event).await?,
        };
        self.meta_cache.insert(event.clone(), meta);
        Ok(meta)
    }

    async fn restore(&self, event: &EventId) -> Result<EventMeta, Tier2Error> {
        // A durable registration the store does not have: the store lost it (and, with it, every
        // place), which the registration records (`Rehydrate`, docs/invariants.md#27).
        let (reg, mode) = match self.registry.get(event).await? {
            Some(r) if r.removed => return Err(not_found()),
            Some(r) => {
                tracing::warn!(
                    event = "tier2.registration_rehydrated",
                    event_id = %event,
                    threshold = r.threshold,
                    order = r.order.as_str(),
                    "the admission store had lost this event's registration; restored from the durable copy"
                );
                self.metrics.emit(
                    &[("EventId", event.as_str())],
                    &[("RegistrationRehydrated", 1.0, Unit::Count)],
                    self.clock.now_millis(),
                );
                (r, RegisterMode::Rehydrate)
            }
            None if self.tier1.is_active(event).await? => {
                let r =
                    self.registry.create(event, self.settings.default_threshold, LineOrder::Tier1).await?;
                if r.removed {
                    return Err(not_found());
                }
                tracing::info!(event = "tier2.registered_from_tier1", event_id = %event, threshold = r.threshold);
                (r, RegisterMode::Implicit)
            }
            None => return Err(not_found()),
        };
        self.store.register(event, reg.threshold, reg.order, mode).await?.ok_or_else(not_found)
    }

    /// Admin: sets the threshold and registers the event (durably first). The line order is
    /// kept from the first registration; for a new event it is `order`, or tier-1 order when
    /// tier 1 gates it.
    pub async fn set_threshold(
        &self,
        event: &EventId,
        threshold: u64,
        order: Option<LineOrder>,
    ) -> Result<EventMeta, Tier2Error> {
        if !(1..=MAX_THRESHOLD).contains(&threshold) {
            return Err(Tier2Error::InvalidThreshold(format!(
                "threshold must be between 1 and {MAX_THRESHOLD}"
            )));
        }
        let order = match order {
            Some(o) => o,
            None if self.tier1.is_active(event).await? => LineOrder::Tier1,
            None => LineOrder::Arrival,
        };
        let reg = self.registry.set(event, threshold, order).await?;
        let meta = self
            .store
            .register(event, reg.threshold, reg.order, RegisterMode::Admin)
            .await?
            .ok_or(Tier2Error::Internal("the admin registration was refused"))?;
        self.meta_cache.remove(event);
        tracing::info!(event = "tier2.threshold_set", event_id = %event, threshold, order = meta.order.as_str());
        Ok(meta)
    }

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

    /// Runs `op`; if the store lost the event's registration since it was cached, drops the
    /// cache, restores the registration and runs `op` once more.
    async fn with_meta<T, F, Fut>(&self, event: &EventId, op: F) -> Result<T, Tier2Error>
    where
        F: Fn(EventMeta) -> Fut,
        Fut: std::future::Future<Output = Result<T, StoreError>>,
    {
        let meta = self.meta(event).await?;
        match op(meta).await {
            Err(StoreError::UnknownEvent) => {
                self.meta_cache.remove(event);
                let meta = self.meta(event).await?;
                Ok(op(meta).await?)
            }
            other => Ok(other?),
        }
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

    /// Admin: removes the event and all its tier-2 state (everyone waiting or active), for
    /// good: it is not re-created implicitly even while tier 1 gates it, until an admin
    /// registers it again.
    pub async fn unregister(&self, event: &EventId) -> Result<bool, Tier2Error> {
        let durable = self.registry.get(event).await?.is_some_and(|r| !r.removed);
        self.registry.remove(event).await?;
        let was = self.store.unregister(event).await? || durable;
        self.meta_cache.remove(event);
        tracing::info!(event = "tier2.unregistered", event_id = %event, was_registered = was);
        Ok(was)
    }

    /// Tier-2 figures of an event.
    pub async fn admin_status(&self, event: &EventId) -> Result<Tier2Status, Tier2Error> {
        let s: Snapshot = self.store.snapshot(event).await?;
        Ok(Tier2Status {
            event_id: event.to_string(),
            registered: s.meta.is_some(),
            threshold: s.meta.map(|m| m.threshold),
            line_order: s.meta.map(|m| m.order),
            waiting: s.waiting,
            active: s.active,
            held: s.held,
            evicted_places: s.ghosts,
            pending_notices: s.pending_notices,
            admitted_last_60s: s.admitted_last_60s,
            admitted_per_second: s.admitted_last_60s as f64 / 60.0,
        })
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

/// How long CloudFront keeps a line document (`max-age`).
pub const LINE_DOCUMENT_TTL: Duration = Duration::from_secs(1);

/// How long admissions must have run before their measured rate is trusted: the rate window.
pub const MEASURED_RATE_AFTER_SECS: u64 = 60;

/// The admission rate a queued user's wait is estimated from
/// (docs/api.md#poll-hints-and-estimates), as tier 1 does with its own data: admissions per
/// second over the last 60 s once the event's first admission is a minute old and the rate is
/// above 0; before that (a young event, or a minute without admissions), the configured rate
/// `threshold ÷ admission TTL` (in steady state each slot frees up once per admission TTL);
/// `None` without either.
pub fn estimate_rate(figures: &Figures, admission_ttl_ms: u64) -> Option<f64> {
    let measured_for = figures.since_first_admission_secs.unwrap_or(0);
    if measured_for >= MEASURED_RATE_AFTER_SECS && figures.admitted_last_60s > 0 {
        return Some(figures.admitted_last_60s as f64 / 60.0);
    }
    (figures.threshold > 0 && admission_ttl_ms > 0)
        .then(|| figures.threshold as f64 * 1000.0 / admission_ttl_ms as f64)
}

#[async_trait]
impl vwr_core::tiers::StatusExtra for Tier2Service {
    fn key(&self) -> &'static str {
        "tier2"
    }

    async fn figures(&self, event: &EventId) -> Result<Option<serde_json::Value>, ApiError> {
        let st = self.admin_status(event).await.map_err(ApiError::from)?;
        if !st.registered {
            return Ok(None);
        }
        serde_json::to_value(st).map(Some).map_err(|e| ApiError::internal(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use vwr_core::hints::estimated_wait_seconds;

    use super::*;

    fn figures(threshold: u64, admitted_last_60s: u64, since: Option<u64>) -> Figures {
        Figures {
            queue_size: 1000,
            active: threshold,
            threshold,
            admitted_last_60s,
            since_first_admission_secs: since,
        }
    }

    /// Until the first admission is a minute old the configured rate (threshold ÷ admission
    /// TTL); then the measured one while it is above 0 (issue 12 #4, as tier 1).
    #[test]
    fn the_configured_rate_until_a_minute_of_admissions() {
        let ttl = 600_000; // 10 min: 100 slots free up 1/6 per second
        let configured = Some(100.0 / 600.0);
        assert_eq!(estimate_rate(&figures(100, 0, None), ttl), configured, "nobody admitted yet");
        assert_eq!(estimate_rate(&figures(100, 300, Some(0)), ttl), configured, "a burst at the start");
        assert_eq!(estimate_rate(&figures(100, 300, Some(59)), ttl), configured);
        assert_eq!(estimate_rate(&figures(100, 300, Some(60)), ttl), Some(5.0), "a whole minute");
        assert_eq!(estimate_rate(&figures(100, 30, Some(3600)), ttl), Some(0.5));
        assert_eq!(
            estimate_rate(&figures(100, 0, Some(3600)), ttl),
            configured,
            "a minute without admissions"
        );
        assert_eq!(estimate_rate(&figures(0, 0, None), ttl), None);
        assert_eq!(estimate_rate(&figures(100, 0, None), 0), None);
        // Place 100 of a young event: 600 s, not the placeholder max(100 / 50, 5) = 5 s.
        assert_eq!(estimated_wait_seconds(100, estimate_rate(&figures(100, 300, Some(10)), ttl)), 600);
        assert_eq!(estimated_wait_seconds(100, estimate_rate(&figures(100, 300, Some(61)), ttl)), 20);
    }

    /// Every time of an answer is in seconds since the epoch; those kept to the millisecond
    /// carry it as a fraction, printed in the shortest form (docs/api.md#times).
    #[test]
    fn times_are_answered_in_seconds_with_a_millisecond_fraction() {
        let view = LineView { figures: figures(2, 0, None), front: None, marks: Vec::new() };
        let doc = LineDocument::of(&EventId::parse("e1").unwrap(), &view, 600_000, 1_764_337_871_234);
        let text = serde_json::to_string(&doc).unwrap();
        assert!(text.contains(r#""updatedAt":1764337871.234"#), "{text}");
        let doc = LineDocument { updated_at_ms: 1_764_337_871_000, ..doc };
        assert!(serde_json::to_string(&doc).unwrap().contains(r#""updatedAt":1764337871.0"#));
        // Distinct milliseconds stay distinct and in order once in seconds.
        let ms = 1_764_337_871_999u64;
        assert!(epoch_secs::of_millis(ms) < epoch_secs::of_millis(ms + 1));
        assert_eq!(epoch_secs::of_millis(ms).to_string(), "1764337871.999");
    }
}
