//! Tier-1 behaviour on top of a [`PositionStore`]: assign, check, admin operations and the
//! advancer step. HTTP-agnostic: failures are [`Tier1Error`]s, mapped to answers in `http`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use vwr_core::EventId;
use vwr_core::cache::TtlCache;
use vwr_core::hints::{estimated_wait_seconds, next_poll_seconds};
use vwr_core::ticket::{Ticket, TicketError, TicketSigner};
use vwr_core::time::Clock;
use vwr_core::token::{Tier1Claims, Tier1Tokens};

use crate::edge_sync::{self, EdgeConfigStore};
use crate::model::{
    ConfigPatch, EventConfig, EventRecord, MAX_ADVANCE_BY, RATE_WINDOW_SECS, Sample, ShardCounts, StoreError,
    joins_per_second, push_sample,
};
use crate::store::{PositionStore, ServingUpdate};

/// How long a redemption record is kept after its ticket expired (DynamoDB TTL).
const REDEMPTION_GRACE_SECS: u64 = 86_400;
/// Compare-and-set retries before giving up with 503.
const CAS_ATTEMPTS: usize = 8;

/// Why a tier-1 operation failed: the domain's own errors; `http` maps them to answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Tier1Error {
    #[error("request id refused: {0}")]
    Ticket(TicketError),
    #[error("no such event")]
    EventNotFound,
    #[error("this event is not being queued")]
    EventNotActive,
    #[error("this admission has expired; join the line again")]
    AdmissionExpired,
    #[error("{0}")]
    InvalidConfig(String),
    #[error("{0}")]
    InvalidAdvance(String),
    /// A compare-and-set kept losing: retry shortly.
    #[error("the serving counter is changing too fast; retry")]
    Busy,
    /// The change is stored; the edge configuration could not be updated.
    #[error(
        "the change is stored, but the edge configuration could not be updated ({0}); retry — it is idempotent"
    )]
    EdgeSync(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(&'static str),
}

/// Settings of the tier-1 service.
#[derive(Debug, Clone)]
pub struct Tier1Settings {
    /// How long a ticket (`requestId`) stays valid.
    pub ticket_ttl_secs: u64,
    /// Cookie name prefix; the cookie is `{prefix}{eventId}`.
    pub cookie_prefix: String,
    /// How long an event item (and so `servingCounter`) may be served from the instance cache.
    pub cache_ttl: Duration,
    /// First shard of the round robin; `None` = random (so instances spread). Tests fix it.
    pub shard_start: Option<u64>,
}

impl Default for Tier1Settings {
    fn default() -> Self {
        Self {
            ticket_ttl_secs: 86_400,
            cookie_prefix: "vwr_t1_".into(),
            cache_ttl: Duration::from_secs(1),
            shard_start: None,
        }
    }
}

/// Answer of `assign`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssignResponse {
    pub request_id: String,
    pub position: u64,
    pub queue_length: u64,
    pub serving_counter: u64,
    pub estimated_wait_seconds: u64,
    pub next_poll_seconds: u64,
}

/// Answer of `check` while waiting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    pub admitted: bool,
    pub position: u64,
    pub serving_counter: u64,
    pub people_ahead: u64,
    pub estimated_wait_seconds: u64,
    pub next_poll_seconds: u64,
}

/// Answer of `check` once admitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Admitted {
    pub admitted: bool,
    pub token: String,
    pub expires_at: u64,
    #[serde(skip)]
    pub cookie: String,
}

/// Answer of `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    Waiting(Waiting),
    Admitted(Admitted),
}

/// Admin status of an event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventStatus {
    pub event_id: String,
    pub active: bool,
    /// Positions handed out.
    pub issued: u64,
    pub serving_counter: u64,
    /// Highest position handed out (the advancer's ceiling).
    pub highest_position: u64,
    /// Positions handed out and not yet served.
    pub waiting: u64,
    /// Tickets redeemed (first admissions).
    pub admitted: u64,
    pub config: EventConfig,
    pub rates: Rates,
    /// Start (unix seconds) of the last advancer step applied; 0 = none yet.
    pub last_step_at: u64,
    pub created_at: u64,
    pub updated_at: u64,
}

/// Recent rates over the last minute (`null` while unknown).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rates {
    pub window_seconds: u64,
    pub served_per_second: Option<f64>,
    pub joins_per_second: Option<f64>,
}

/// What the advancer did for one event. `step` is the start (unix seconds) of the step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    Advanced {
        event: EventId,
        step: u64,
        from: u64,
        to: u64,
        waiting: u64,
    },
    /// Nothing to serve (everyone issued is already served) or manual-only event
    /// (`automatic: false`).
    Idle {
        event: EventId,
        step: u64,
        waiting: u64,
        automatic: bool,
    },
    /// Another invocation already applied this step.
    AlreadyDone {
        event: EventId,
        step: u64,
    },
    /// The stored step lies in the future: this event cannot advance until the clock gets
    /// there. Never expected (a clock far ahead on another advancer, or a hand-edited item):
    /// logged and metered so an operator sees a stuck line.
    Stuck {
        event: EventId,
        step: u64,
        last_step_at: u64,
    },
    NotDue {
        event: EventId,
    },
}

/// How far the stored step may lie ahead of this instance's clock before the event counts as
/// stuck (clock skew between advancer instances).
pub const STEP_SKEW_LEEWAY_SECS: u64 = 5;

/// The tier-1 service.
pub struct Tier1Service {
    store: Arc<dyn PositionStore>,
    tokens: Tier1Tokens,
    tickets: TicketSigner,
    settings: Tier1Settings,
    clock: Arc<dyn Clock>,
    cache: TtlCache<EventId, Option<EventRecord>>,
    active_cache: TtlCache<(), Vec<EventId>>,
    round_robin: AtomicU64,
    rng: SystemRandom,
    edge: Option<Arc<dyn EdgeConfigStore>>,
}

impl Tier1Service {
    pub fn new(
        store: Arc<dyn PositionStore>,
        tokens: Tier1Tokens,
        settings: Tier1Settings,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let tickets = TicketSigner::new(tokens.ring(), settings.ticket_ttl_secs);
        let rng = SystemRandom::new();
        let mut seed = [0u8; 8];
        // Start instances at different shards; a failed random fill just starts at 0.
        let _ = rng.fill(&mut seed);
        let start = settings.shard_start.unwrap_or(u64::from_le_bytes(seed));
        Self {
            store,
            tokens,
            tickets,
            cache: TtlCache::with_clock(settings.cache_ttl, Arc::clone(&clock)),
            active_cache: TtlCache::with_clock(settings.cache_ttl, Arc::clone(&clock)),
            settings,
            clock,
            round_robin: AtomicU64::new(start),
            rng,
            edge: None,
        }
    }

    /// Keeps the edge verifier's active-event list in step with activations.
    pub fn with_edge_sync(mut self, edge: Arc<dyn EdgeConfigStore>) -> Self {
        self.edge = Some(edge);
        self
    }

    /// Publishes the active events to the edge configuration, with `changed` forced in or out
    /// (the active-event index may lag the write that just happened).
    async fn sync_edge(&self, changed: Option<(&EventId, bool)>) -> Result<(), Tier1Error> {
        let Some(edge) = &self.edge else {
            return Ok(());
        };
        let mut ids: Vec<EventId> = self.store.list_active().await?.into_iter().map(|r| r.event).collect();
        if let Some((event, active)) = changed {
            ids.retain(|e| e != event);
            if active {
                ids.push(event.clone());
            }
        }
        edge_sync::publish(edge.as_ref(), &ids).await.map(|_| ()).map_err(|e| {
            tracing::error!(event = "tier1.edge_sync_failed", error = %e);
            Tier1Error::EdgeSync(e.to_string())
        })
    }

    /// Reconciles the edge configuration with the active events (each advancer run).
    pub async fn reconcile_edge(&self) -> Result<(), Tier1Error> {
        self.sync_edge(None).await
    }

    pub fn store(&self) -> &Arc<dyn PositionStore> {
        &self.store
    }

    pub fn tokens(&self) -> &Tier1Tokens {
        &self.tokens
    }

    pub fn settings(&self) -> &Tier1Settings {
        &self.settings
    }

    pub fn now(&self) -> u64 {
        self.clock.now_secs()
    }

    /// The event item, from the instance cache if it is younger than `cache_ttl`.
    pub async fn cached_event(&self, event: &EventId) -> Result<Option<EventRecord>, StoreError> {
        if let Some(rec) = self.cache.get(event) {
            return Ok(rec);
        }
        let rec = self.store.get_event(event).await?;
        self.cache.insert(event.clone(), rec.clone());
        Ok(rec)
    }

    fn invalidate(&self, event: &EventId) {
        self.cache.remove(event);
        self.active_cache.remove(&());
    }

    /// The ids of the active events, from the instance cache if younger than `cache_ttl`
    /// (the local edge check matches paths against them case-insensitively).
    pub async fn active_ids(&self) -> Result<Vec<EventId>, StoreError> {
        if let Some(ids) = self.active_cache.get(&()) {
            return Ok(ids);
        }
        let ids: Vec<EventId> = self.store.list_active().await?.into_iter().map(|r| r.event).collect();
        self.active_cache.insert((), ids.clone());
        Ok(ids)
    }

    async fn active_event(&self, event: &EventId) -> Result<EventRecord, Tier1Error> {
        match self.cached_event(event).await? {
            None => Err(Tier1Error::EventNotFound),
            Some(r) if !r.active => Err(Tier1Error::EventNotActive),
            Some(r) => Ok(r),
        }
    }

    /// `POST /vwr/assign/{eventId}`: hands out the next position and its ticket.
    pub async fn assign(&self, event: &EventId) -> Result<AssignResponse, Tier1Error> {
        let rec = self.active_event(event).await?;
        let shards = rec.config.shards.max(1);
        let shard = (self.round_robin.fetch_add(1, Ordering::Relaxed) % u64::from(shards)) + 1;
        let shard = u32::try_from(shard).unwrap_or(1);
        let count = self.store.next_in_shard(event, shard).await?;
        let position = crate::model::position_of(u64::from(shard), count, u64::from(shards));
        let now = self.now();
        let request_id = self.tickets.issue(&Ticket { event: event.clone(), position, issued_at: now });
        let ahead = position.saturating_sub(rec.serving_counter).saturating_sub(1);
        tracing::debug!(event = "tier1.assigned", event_id = %event, position, shard);
        Ok(AssignResponse {
            request_id,
            position,
            queue_length: position.saturating_sub(rec.serving_counter),
            serving_counter: rec.serving_counter,
            estimated_wait_seconds: estimated_wait_seconds(ahead + 1, rec.served_per_second(now)),
            next_poll_seconds: next_poll_seconds(i64::try_from(ahead + 1).unwrap_or(i64::MAX)),
        })
    }

    /// `GET /vwr/check/{eventId}/{requestId}`.
    pub async fn check(&self, event: &EventId, request_id: &str) -> Result<CheckOutcome, Tier1Error> {
        let now = self.now();
        let ticket = self.tickets.verify(request_id, event, now).map_err(Tier1Error::Ticket)?;
        let rec = self.active_event(event).await?;
        if ticket.position > rec.serving_counter {
            let ahead = ticket.position - rec.serving_counter - 1;
            return Ok(CheckOutcome::Waiting(Waiting {
                admitted: false,
                position: ticket.position,
                serving_counter: rec.serving_counter,
                people_ahead: ahead,
                estimated_wait_seconds: estimated_wait_seconds(ahead + 1, rec.served_per_second(now)),
                next_poll_seconds: next_poll_seconds(i64::try_from(ahead + 1).unwrap_or(i64::MAX)),
            }));
        }
        let jti = self.fresh_jti()?;
        let expires_at = ticket.issued_at + self.tickets.ttl_secs() + REDEMPTION_GRACE_SECS;
        let red = self.store.redeem(event, ticket.position, rec.config.shards, &jti, now, expires_at).await?;
        let exp = red.redeemed_at + rec.config.token_ttl_seconds;
        if now >= exp {
            return Err(Tier1Error::AdmissionExpired);
        }
        let claims = Tier1Claims {
            iss: self.tokens.issuer().to_owned(),
            aud: self.tokens.audience().to_owned(),
            sub: request_id.to_owned(),
            eid: event.as_str().to_owned(),
            pos: ticket.position,
            tier: 1,
            iat: red.redeemed_at,
            nbf: red.redeemed_at,
            exp,
            jti: red.jti,
        };
        let token =
            self.tokens.sign(&claims).map_err(|_| Tier1Error::Internal("could not sign the token"))?;
        if red.fresh {
            tracing::info!(event = "tier1.admitted", event_id = %event, position = ticket.position, jti = %claims.jti);
        }
        let cookie = format!(
            "{}{}={}; Max-Age={}; Path=/; Secure; HttpOnly; SameSite=Lax",
            self.settings.cookie_prefix,
            event,
            token,
            exp - now
        );
        Ok(CheckOutcome::Admitted(Admitted { admitted: true, token, expires_at: exp, cookie }))
    }

    fn fresh_jti(&self) -> Result<String, Tier1Error> {
        let mut b = [0u8; 16];
        self.rng.fill(&mut b).map_err(|_| Tier1Error::Internal("random generator failed"))?;
        Ok(URL_SAFE_NO_PAD.encode(b))
    }

    /// Admin: create or update an event and mark it active.
    pub async fn activate(&self, event: &EventId, patch: ConfigPatch) -> Result<EventStatus, Tier1Error> {
        patch.validate().map_err(Tier1Error::InvalidConfig)?;
        let rec = self.store.activate(event, patch, self.now()).await?;
        self.invalidate(event);
        tracing::info!(event = "tier1.activated", event_id = %event, config = ?rec.config);
        self.sync_edge(Some((event, true))).await?;
        self.status_of(rec).await
    }

    /// Admin: stop gating an event.
    pub async fn deactivate(&self, event: &EventId) -> Result<EventStatus, Tier1Error> {
        let rec = self.store.deactivate(event, self.now()).await?;
        self.invalidate(event);
        tracing::info!(event = "tier1.deactivated", event_id = %event);
        self.sync_edge(Some((event, false))).await?;
        self.status_of(rec).await
    }

    /// Admin: counters, waiting, admitted and recent rates.
    pub async fn status(&self, event: &EventId) -> Result<EventStatus, Tier1Error> {
        let rec = self.store.get_event(event).await?.ok_or(StoreError::NotFound)?;
        self.status_of(rec).await
    }

    async fn status_of(&self, rec: EventRecord) -> Result<EventStatus, Tier1Error> {
        let counts = self.store.shard_counts(&rec.event, rec.config.shards).await?;
        Ok(build_status(rec, &counts, self.now()))
    }

    /// Admin: raise `servingCounter` by `by`, capped at the highest issued position.
    pub async fn advance(&self, event: &EventId, by: u64) -> Result<EventStatus, Tier1Error> {
        if !(1..=MAX_ADVANCE_BY).contains(&by) {
            return Err(Tier1Error::InvalidAdvance(format!("by must be between 1 and {MAX_ADVANCE_BY}")));
        }
        for _ in 0..CAS_ATTEMPTS {
            let rec = self.store.get_event(event).await?.ok_or(StoreError::NotFound)?;
            let counts = self.store.shard_counts(event, rec.config.shards).await?;
            let now = self.now();
            let new = rec.serving_counter.saturating_add(by).min(counts.highest()).max(rec.serving_counter);
            if new == rec.serving_counter {
                return Ok(build_status(rec, &counts, now));
            }
            let samples =
                push_sample(&rec.samples, Sample { at: now, serving: new, issued: counts.total_issued() });
            let update = ServingUpdate {
                expected: rec.serving_counter,
                new,
                step: None,
                samples: samples.clone(),
                now,
            };
            if self.store.update_serving(event, update).await? {
                self.invalidate(event);
                tracing::info!(event = "tier1.advanced_manually", event_id = %event, from = rec.serving_counter, to = new);
                let rec = EventRecord { serving_counter: new, samples, updated_at: now, ..rec };
                return Ok(build_status(rec, &counts, now));
            }
        }
        Err(Tier1Error::Busy)
    }

    /// One advancer pass at `now`: every active event whose step is due moves by its batch.
    pub async fn advance_due(&self) -> Result<Vec<StepOutcome>, StoreError> {
        let events = self.store.list_active().await?;
        let mut out = Vec::with_capacity(events.len());
        for rec in events {
            let now = self.now();
            match self.advance_step(rec, now).await {
                Ok(o) => out.push(o),
                // One event's trouble does not stop the others.
                Err(e) => tracing::warn!(event = "tier1.advance_failed", error = %e),
            }
        }
        Ok(out)
    }

    /// Applies the step due at `now` to one event, at most once per step across all callers.
    pub async fn advance_step(&self, mut rec: EventRecord, now: u64) -> Result<StepOutcome, StoreError> {
        let event = rec.event.clone();
        // Steps are identified by their start time, not by `now / interval`: a step number
        // taken in one interval's units is meaningless after `intervalSeconds` changes.
        let step = now - now % rec.config.interval_seconds.max(1);
        for _ in 0..CAS_ATTEMPTS {
            if rec.last_step_at > now.saturating_add(STEP_SKEW_LEEWAY_SECS) {
                return Ok(StepOutcome::Stuck { event, step, last_step_at: rec.last_step_at });
            }
            if rec.last_step_at >= step {
                return Ok(StepOutcome::AlreadyDone { event, step });
            }
            if !rec.active {
                return Ok(StepOutcome::NotDue { event });
            }
            let counts = self.store.shard_counts(&event, rec.config.shards).await?;
            let waiting = counts.waiting(rec.serving_counter);
            let new = rec
                .serving_counter
                .saturating_add(rec.config.batch_size)
                .min(counts.highest())
                .max(rec.serving_counter);
            if new == rec.serving_counter {
                return Ok(StepOutcome::Idle { event, step, waiting, automatic: rec.config.batch_size > 0 });
            }
            let samples =
                push_sample(&rec.samples, Sample { at: now, serving: new, issued: counts.total_issued() });
            let update = ServingUpdate { expected: rec.serving_counter, new, step: Some(step), samples, now };
            if self.store.update_serving(&event, update).await? {
                self.invalidate(&event);
                return Ok(StepOutcome::Advanced {
                    event,
                    step,
                    from: rec.serving_counter,
                    to: new,
                    waiting: counts.waiting(new),
                });
            }
            match self.store.get_event(&event).await? {
                Some(r) => rec = r,
                None => return Ok(StepOutcome::NotDue { event }),
            }
        }
        Err(StoreError::Unavailable(format!("advancer step for {event} kept conflicting")))
    }
}

fn build_status(rec: EventRecord, counts: &ShardCounts, now: u64) -> EventStatus {
    let issued = counts.total_issued();
    EventStatus {
        event_id: rec.event.to_string(),
        active: rec.active,
        issued,
        serving_counter: rec.serving_counter,
        highest_position: counts.highest(),
        waiting: counts.waiting(rec.serving_counter),
        admitted: counts.total_redeemed(),
        config: rec.config,
        rates: Rates {
            window_seconds: RATE_WINDOW_SECS,
            served_per_second: rec.served_per_second(now),
            joins_per_second: joins_per_second(&rec.samples, now, issued),
        },
        last_step_at: rec.last_step_at,
        created_at: rec.created_at,
        updated_at: rec.updated_at,
    }
}

#[async_trait::async_trait]
impl vwr_core::tiers::ActiveEvents for Tier1Service {
    async fn is_active(&self, event: &EventId) -> Result<bool, vwr_core::tiers::LookupError> {
        match self.cached_event(event).await {
            Ok(rec) => Ok(rec.is_some_and(|r| r.active)),
            Err(e) => Err(vwr_core::tiers::LookupError(e.to_string())),
        }
    }
}
