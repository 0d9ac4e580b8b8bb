//! Tier-1 behaviour on top of a [`PositionStore`]: assign, check, admin operations and the
//! advancer step. HTTP-agnostic: failures are [`Tier1Error`]s, mapped to answers in `http`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::ticket::{Ticket, TicketError, TicketSigner};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use vwr_core::EventId;
use vwr_core::cache::TtlCache;
use vwr_core::hints::{estimated_wait_seconds, poll_seconds_for_wait};
use vwr_core::time::Clock;
use vwr_core::token::{Tier1Claims, Tier1Tokens};

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use crate::draw::{self, Seed};
use crate::ticket::Place;

use crate::edge_sync::{self, EdgeConfigStore};
use crate::lifecycle::{self, Action, Facts, LifecycleError};
use crate::model::{
    AuditEntry, CloseReason, ConfigPatch, EventConfig, EventRecord, EventState, HoldBy, Line, MAX_ADVANCE_BY,
    MAX_HOLD_REASON_CHARS, Message, OutflowMode, RATE_WINDOW_SECS, Redemption, Sample, Schedule, ShardCounts,
    StoreError, joins_per_second, push_sample,
};
use crate::outflow;
use crate::store::{HealthSignal, PositionStore, ServingUpdate};

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
    /// Scheduled: the waiting room opens its pre-queue at `prequeue_at`.
    #[error("this sale is not open yet")]
    EventNotOpen { prequeue_at: u64, opens_at: u64 },
    #[error("this sale is closed")]
    EventClosed { reason: Option<CloseReason> },
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    #[error("{0}")]
    InvalidMessage(String),
    #[error("this admission has expired; join the line again")]
    AdmissionExpired,
    #[error("this visit was ended by the site; join the line again")]
    SessionEnded,
    #[error("this request id needs its request secret (X-VWR-Request-Secret), as assign answered it")]
    ProofRequired,
    /// Proof of work needed: solve `challenge` to `difficulty` leading zero bits.
    #[error("solve the challenge first")]
    ChallengeRequired { challenge: String, difficulty: u32 },
    #[error("this sale needs the site's enqueue token (X-VWR-Enqueue-Token): sign in on the site first")]
    EnqueueTokenRequired,
    #[error("the tier-1 token is missing, invalid or not for this event")]
    InvalidToken,
    /// A valid tier-1 token that is not the token of an admission of this event (another
    /// `jti`, or a position never admitted).
    #[error("the tier-1 token does not belong to an admission of this event")]
    ForeignToken,
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
    /// The seed of every draw, hex; `None` = a fresh random seed per schedule. Only for tests
    /// that compare two stores (a fixed seed makes the draw predictable: never set it in a
    /// deployment — no environment variable does).
    pub fixed_seed: Option<String>,
}

impl Default for Tier1Settings {
    fn default() -> Self {
        Self {
            ticket_ttl_secs: 86_400,
            cookie_prefix: "vwr_t1_".into(),
            cache_ttl: Duration::from_secs(1),
            shard_start: None,
            fixed_seed: None,
        }
    }
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

/// Answer of `assign` once the event is open: a place in line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placed {
    pub request_id: String,
    /// Proof of possession: `check` requires it (docs/tokens.md#request-secrets).
    pub request_secret: String,
    pub position: u64,
    pub queue_length: u64,
    pub serving_counter: u64,
    pub estimated_wait_seconds: u64,
    pub next_poll_seconds: u64,
    pub state: EventState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `assign` before the open: a ticket whose position is drawn at the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrequeueJoin {
    pub request_id: String,
    pub request_secret: String,
    pub state: EventState,
    pub opens_at: u64,
    pub next_poll_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `assign`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AssignResponse {
    Placed(Placed),
    Prequeue(PrequeueJoin),
}

impl AssignResponse {
    pub fn request_id(&self) -> &str {
        match self {
            Self::Placed(p) => &p.request_id,
            Self::Prequeue(p) => &p.request_id,
        }
    }

    pub fn request_secret(&self) -> &str {
        match self {
            Self::Placed(p) => &p.request_secret,
            Self::Prequeue(p) => &p.request_secret,
        }
    }

    /// The position, once known.
    pub fn position(&self) -> Option<u64> {
        match self {
            Self::Placed(p) => Some(p.position),
            Self::Prequeue(_) => None,
        }
    }
}

/// Answer of `check` while waiting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    pub admitted: bool,
    pub state: EventState,
    pub position: u64,
    pub serving_counter: u64,
    pub people_ahead: u64,
    pub estimated_wait_seconds: u64,
    pub next_poll_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `check` before the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrequeueWait {
    pub admitted: bool,
    pub state: EventState,
    pub opens_at: u64,
    pub next_poll_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `check` after the close for a ticket that was never admitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedAnswer {
    pub admitted: bool,
    pub state: EventState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<CloseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
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
    Prequeue(PrequeueWait),
    Closed(ClosedAnswer),
}

/// Admin status of an event (docs/api.md#admin-routes-apiadminvwr, docs/lifecycle.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventStatus {
    pub event_id: String,
    pub state: EventState,
    /// `state != inactive`.
    pub active: bool,
    /// Positions handed out, the pre-queue included.
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
    pub rev: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prequeue_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<CloseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_commitment: Option<String>,
    /// Only once the pre-queue is sealed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_counts: Option<Vec<u64>>,
    /// Pre-queue joins so far, or P once sealed.
    pub prequeue_size: u64,
    /// `health` while the health gate holds the advancer (an alarm hold is only seen by the
    /// advancer: logs and the `AdvancerHeld` metric).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<HoldBy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_since: Option<u64>,
    pub outflow: OutflowFigures,
}

/// How the line is flowing out (docs/outflow.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutflowFigures {
    pub mode: OutflowMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_per_minute: Option<u64>,
    /// Redeemed admissions over the last minute (`null` until a minute of samples exists).
    pub redeemed_per_minute: Option<f64>,
    /// Positions served over the last minute.
    pub served_per_minute: Option<f64>,
    /// Share of served positions that did not show up, from the lagged window the
    /// `targetArrivals` controller uses (`null` without enough data).
    pub no_show_share: Option<f64>,
    /// Admissions the site ended early (`release`).
    pub released: u64,
}

/// The public status document (docs/lifecycle.md#the-public-status-document): the same body
/// for every visitor, cacheable for a second.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicStatus {
    pub event_id: String,
    pub state: EventState,
    pub serving_counter: u64,
    pub issued: u64,
    pub served_per_second: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<CloseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_commitment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_counts: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prequeue_size: Option<u64>,
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

/// The body of `schedule`: the times and any configuration field of `activate`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleRequest {
    pub prequeue_at: u64,
    pub open_at: u64,
    pub close_at: Option<u64>,
    pub config: ConfigPatch,
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
    /// The advancer is held (health gate or alarm): nobody new is let in.
    Held {
        event: EventId,
        by: HoldBy,
        reason: String,
    },
    /// The advancer moved the event to another state (pre-queue, open, closed at `closeAt`).
    Transition {
        event: EventId,
        from: EventState,
        to: EventState,
    },
    NotDue {
        event: EventId,
    },
}

/// How far the stored step may lie ahead of this instance's clock before the event counts as
/// stuck (clock skew between advancer instances).
pub const STEP_SKEW_LEEWAY_SECS: u64 = 5;
/// How often the advancer recounts a pre-queue, or the places handed out of a line that did
/// not step, for the status documents.
pub const PREQUEUE_COUNT_EVERY_SECS: u64 = 5;
/// Actor of the advancer's transitions in the audit trail.
pub const ADVANCER_ACTOR: &str = "advancer";

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
    /// When this instance last counted each pre-queue.
    prequeue_counted: Mutex<HashMap<EventId, u64>>,
    /// When this instance last counted the places handed out of each open or paused event.
    issued_counted: Mutex<HashMap<EventId, u64>>,
    health: Option<Arc<dyn HealthSignal>>,
    pow: crate::pow::PowIssuer,
    /// Proof-of-work solutions seen on this instance, with when they stop mattering: a cheap
    /// first filter; the store's record decides (docs/invariants.md#18).
    pow_seen: Mutex<HashMap<String, u64>>,
    enqueue: Option<crate::enqueue::EnqueueVerifier>,
}

impl Tier1Service {
    pub fn new(
        store: Arc<dyn PositionStore>,
        tokens: Tier1Tokens,
        settings: Tier1Settings,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let tickets = TicketSigner::new(tokens.ring(), settings.ticket_ttl_secs);
        let pow = crate::pow::PowIssuer::new(tokens.ring());
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
            prequeue_counted: Mutex::new(HashMap::new()),
            issued_counted: Mutex::new(HashMap::new()),
            health: None,
            pow,
            pow_seen: Mutex::new(HashMap::new()),
            enqueue: None,
        }
    }

    /// Verifies the site's enqueue tokens with these public keys (one place per account).
    pub fn with_enqueue_verifier(mut self, verifier: crate::enqueue::EnqueueVerifier) -> Self {
        self.enqueue = Some(verifier);
        self
    }

    /// Whether enqueue tokens can be checked (events may require them only then).
    pub fn has_enqueue_keys(&self) -> bool {
        self.enqueue.is_some()
    }

    /// Holds the advancer while one of these alarms is in ALARM.
    pub fn with_health_signal(mut self, health: Arc<dyn HealthSignal>) -> Self {
        self.health = Some(health);
        self
    }

    /// Keeps the edge verifier's event list in step with the events' states.
    pub fn with_edge_sync(mut self, edge: Arc<dyn EdgeConfigStore>) -> Self {
        self.edge = Some(edge);
        self
    }

    /// Publishes the gated events to the edge configuration, with `changed` forced in or out
    /// (the active-event index may lag the write that just happened).
    ///
    /// The index is eventually consistent, so its word alone never changes the list
    /// (docs/invariants.md#22): an event the list holds and the index does not show as gated —
    /// or one the index shows as gated and the list lacks — is decided by a strongly
    /// consistent read of its event item; an event both show is kept. Each attempt decides on
    /// the list as it reads it and writes against its version, so a list another instance
    /// changed meanwhile is decided again.
    async fn sync_edge(&self, changed: Option<(&EventId, bool)>) -> Result<(), Tier1Error> {
        let Some(edge) = &self.edge else {
            return Ok(());
        };
        let failed = |e: edge_sync::EdgeSyncError| {
            tracing::error!(event = "tier1.edge_sync_failed", error = %e);
            Tier1Error::EdgeSync(e.to_string())
        };
        let indexed: HashMap<String, bool> = self
            .store
            .list_active()
            .await?
            .into_iter()
            .map(|r| (r.event.as_str().to_owned(), r.state.gates()))
            .collect();
        for _ in 0..edge_sync::PUBLISH_ATTEMPTS {
            let (raw, version) = edge.get().await.map_err(failed)?;
            let listed: BTreeSet<String> = edge_sync::events_of(&raw).map_err(failed)?.into_iter().collect();
            let mut candidates: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
            candidates.extend(indexed.keys().map(String::as_str));
            if let Some((event, _)) = changed {
                candidates.insert(event.as_str());
            }
            let mut gated = Vec::new();
            for id in candidates {
                // Not an event id: nothing vwr wrote; it goes.
                let Ok(event) = EventId::parse(id) else { continue };
                let gates = match changed {
                    Some((c, gates)) if *c == event => gates,
                    _ => {
                        let on_list = listed.contains(id);
                        if indexed.get(id).copied().unwrap_or(false) == on_list {
                            on_list
                        } else {
                            self.store.get_event(&event).await?.is_some_and(|r| r.state.gates())
                        }
                    }
                };
                if gates {
                    gated.push(event);
                }
            }
            if edge_sync::write_events(edge.as_ref(), &raw, &version, &gated).await.map_err(failed)?.is_some()
            {
                return Ok(());
            }
        }
        Err(failed(edge_sync::EdgeSyncError::Conflict))
    }

    /// Reconciles the edge configuration with the gated events (each advancer run).
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

    /// The ids of the events the edge gates (pre-queue, open, paused, closed), from the
    /// instance cache if younger than `cache_ttl` (the local edge check matches paths against
    /// them case-insensitively).
    pub async fn active_ids(&self) -> Result<Vec<EventId>, StoreError> {
        if let Some(ids) = self.active_cache.get(&()) {
            return Ok(ids);
        }
        let ids: Vec<EventId> = self
            .store
            .list_active()
            .await?
            .into_iter()
            .filter(|r| r.state.gates())
            .map(|r| r.event)
            .collect();
        self.active_cache.insert((), ids.clone());
        Ok(ids)
    }

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
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        let now = self.now();
        match rec.state {
            EventState::Inactive => return Err(Tier1Error::EventNotActive),
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
    async fn join(&self, rec: &EventRecord, now: u64) -> Result<AssignResponse, Tier1Error> {
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
        self.check_with_tokens(event, request_id, secret, &[]).await
    }

    /// [`Self::check`] with the tier-1 tokens the request presents (the cookie, `x-vwr-token`):
    /// once tier 1's own session is over, a token tier 2 renewed for this very admission is
    /// answered as it is (docs/invariants.md#19).
    pub async fn check_with_tokens(
        &self,
        event: &EventId,
        request_id: &str,
        secret: Option<&str>,
        presented: &[&str],
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
            EventState::Inactive => return Err(Tier1Error::EventNotActive),
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
            self.store.redeem(event, position, rec.config.shards, &jti, now, expires_at).await?
        };
        let jti = redemption.jti.clone();
        let (redemption, iat, exp) = match self.session_token(&rec, position, redemption, now).await {
            Err(Tier1Error::AdmissionExpired) => {
                // Over for tier 1 alone; tier 2 may still hold the visitor.
                return match self.held_by_tier2(event, request_id, position, &jti, presented, now) {
                    Some(admitted) => {
                        tracing::debug!(event = "tier1.admitted_as_held", event_id = %event, position);
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
        if redemption.fresh {
            tracing::info!(event = "tier1.admitted", event_id = %event, position, jti = %claims.jti);
        }
        Ok(CheckOutcome::Admitted(self.admitted(event, token, exp, now)))
    }

    /// The admitted answer with `token` (expiring at `exp`) and its cookie.
    fn admitted(&self, event: &EventId, token: String, exp: u64, now: u64) -> Admitted {
        let cookie = format!(
            "{}{}={}; Max-Age={}; Path=/; Secure; HttpOnly; SameSite=Lax",
            self.settings.cookie_prefix,
            event,
            token,
            exp.saturating_sub(now)
        );
        Admitted { admitted: true, token, expires_at: exp, cookie }
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
            same.then(|| self.admitted(event, (*token).to_owned(), c.exp, now))
        })
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
    /// Returns the name of the cookie to clear.
    pub async fn release(&self, event: &EventId, token: &str) -> Result<String, Tier1Error> {
        let now = self.now();
        let claims = self.tokens.verify(token, event, now).map_err(|_| Tier1Error::InvalidToken)?;
        let rec = self.cached_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        match self.store.release(event, claims.pos, rec.config.shards, &claims.jti, now).await? {
            Some(r) if !same_jti(&r.jti, &claims.jti) => {
                tracing::info!(event = "tier1.release_refused", event_id = %event, position = claims.pos);
                return Err(Tier1Error::ForeignToken);
            }
            Some(r) if r.fresh => {
                tracing::info!(event = "tier1.released", event_id = %event, position = claims.pos);
            }
            Some(_) => {}
            None => return Err(Tier1Error::ForeignToken),
        }
        Ok(format!("{}{}", self.settings.cookie_prefix, event))
    }

    /// Admin: the health gate. `ok: false` holds the advancer until `ok: true`.
    pub async fn set_health(
        &self,
        event: &EventId,
        ok: bool,
        reason: Option<String>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        if let Some(r) = &reason
            && (r.chars().count() > MAX_HOLD_REASON_CHARS || r.chars().any(char::is_control))
        {
            return Err(Tier1Error::InvalidMessage(format!(
                "reason must be plain text of at most {MAX_HOLD_REASON_CHARS} characters"
            )));
        }
        let rec = self.transition(event, actor, Action::SetHealth { ok, reason }).await?;
        self.status_of(rec).await
    }

    fn fresh_jti(&self) -> Result<String, Tier1Error> {
        let mut b = [0u8; 16];
        self.rng.fill(&mut b).map_err(|_| Tier1Error::Internal("random generator failed"))?;
        Ok(URL_SAFE_NO_PAD.encode(b))
    }

    /// `GET /vwr/status/{eventId}`: the public status document, from the instance cache.
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

    /// One lifecycle change: read, check with [`lifecycle::apply`], write with the revision
    /// read and the audit entry, retry on a concurrent change. Seals the pre-queue first
    /// when the change opens an event that has one.
    async fn transition(
        &self,
        event: &EventId,
        actor: &str,
        action: Action,
    ) -> Result<EventRecord, Tier1Error> {
        for _ in 0..CAS_ATTEMPTS {
            let old = self.store.get_event(event).await?;
            let now = self.now();
            let mut action = action.clone();
            let mut facts = Facts { now, regular_joins: 0, prequeue_joins: 0 };
            if let Some(o) = &old
                && (matches!(action, Action::Schedule { .. })
                    || (o.needs_seal() && matches!(action, Action::Activate { .. })))
            {
                let counts = self.store.shard_counts(event, o.config.shards).await?;
                facts.regular_joins = counts.total_issued();
                facts.prequeue_joins = counts.total_pre();
            }
            if let Some(o) = &old
                && o.needs_seal()
                && !matches!(o.state, EventState::Open | EventState::Paused | EventState::Closed)
                && matches!(action, Action::Activate { .. } | Action::Open { .. })
            {
                // Decide first: a refused change must not seal the pre-queue (its seal time
                // is fixed, docs/invariants.md#21).
                let mut probe = action.clone();
                match &mut probe {
                    Action::Activate { sealed, .. } => *sealed = Some(Vec::new()),
                    Action::Open { sealed } => *sealed = Vec::new(),
                    _ => {}
                }
                lifecycle::apply(event, old.as_ref(), &probe, facts)?;
                match &mut action {
                    Action::Activate { sealed, .. } => {
                        *sealed = Some(self.store.seal(event, o.config.shards).await?)
                    }
                    Action::Open { sealed } => *sealed = self.store.seal(event, o.config.shards).await?,
                    _ => {}
                }
            }
            let new = lifecycle::apply(event, old.as_ref(), &action, facts)?;
            let audit = AuditEntry {
                seq: new.audit_seq,
                at: now,
                actor: actor.to_owned(),
                action: action.name().to_owned(),
                before: old.as_ref().map_or(serde_json::Value::Null, EventRecord::audit_view),
                after: new.audit_view(),
            };
            if self.store.write_event(old.as_ref().map(|o| o.rev), &new, &audit).await? {
                self.invalidate(event);
                let from = old.as_ref().map(|o| o.state);
                tracing::info!(
                    event = "tier1.lifecycle",
                    event_id = %event,
                    action = action.name(),
                    actor,
                    from = from.map_or("absent", EventState::as_str),
                    to = new.state.as_str(),
                    rev = new.rev
                );
                if from.is_some_and(EventState::gates) != new.state.gates() {
                    self.sync_edge(Some((event, new.state.gates()))).await?;
                }
                return Ok(new);
            }
        }
        Err(Tier1Error::Busy)
    }

    /// Admin: create or update an event; opens it unless it is open, paused or closed.
    pub async fn activate(
        &self,
        event: &EventId,
        patch: ConfigPatch,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        self.validate_patch(&patch)?;
        let rec = self.transition(event, actor, Action::Activate { patch, sealed: None }).await?;
        if rec.state == EventState::Open {
            // An activation of an already open event may have been a no-op for the edge.
            self.sync_edge(Some((event, true))).await?;
        }
        self.status_of(rec).await
    }

    fn validate_patch(&self, patch: &ConfigPatch) -> Result<(), Tier1Error> {
        patch.validate().map_err(Tier1Error::InvalidConfig)?;
        if patch.enqueue_token_required == Some(true) && self.enqueue.is_none() {
            return Err(Tier1Error::InvalidConfig(
                "enqueueTokenRequired needs the site's public keys: set VWR_ENQUEUE_JWKS".into(),
            ));
        }
        Ok(())
    }

    /// Admin: schedule (or reschedule) a sale with a pre-queue and a randomized open.
    pub async fn schedule(
        &self,
        event: &EventId,
        req: ScheduleRequest,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let patch = req.config;
        self.validate_patch(&patch)?;
        let seed = match &self.settings.fixed_seed {
            Some(hex) => {
                Seed::from_hex(hex).map_err(|_| Tier1Error::Internal("the fixed seed is not hex"))?
            }
            None => Seed::generate().map_err(|_| Tier1Error::Internal("random generator failed"))?,
        };
        let schedule =
            Schedule { prequeue_at: req.prequeue_at, open_at: req.open_at, close_at: req.close_at };
        let rec =
            self.transition(event, actor, Action::Schedule { schedule, patch, seed: seed.to_hex() }).await?;
        self.status_of(rec).await
    }

    /// Admin: stop gating an event.
    pub async fn deactivate(&self, event: &EventId, actor: &str) -> Result<EventStatus, Tier1Error> {
        let rec = self.transition(event, actor, Action::Deactivate).await?;
        self.status_of(rec).await
    }

    /// Admin: hold the line; everybody keeps their place.
    pub async fn pause(
        &self,
        event: &EventId,
        message: Option<Message>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let message = normalize(message)?;
        let rec = self.transition(event, actor, Action::Pause { message }).await?;
        self.status_of(rec).await
    }

    pub async fn resume(&self, event: &EventId, actor: &str) -> Result<EventStatus, Tier1Error> {
        let rec = self.transition(event, actor, Action::Resume).await?;
        self.status_of(rec).await
    }

    /// Admin: no more joins or admissions; the edge keeps gating.
    pub async fn close(
        &self,
        event: &EventId,
        reason: CloseReason,
        message: Option<Message>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let message = normalize(message)?;
        let rec = self.transition(event, actor, Action::Close { reason, message }).await?;
        self.status_of(rec).await
    }

    /// Admin: set (`Some`) or clear (`None`) the message to the visitors.
    pub async fn set_message(
        &self,
        event: &EventId,
        message: Option<Message>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let message = normalize(message)?;
        let rec = self.transition(event, actor, Action::SetMessage(message)).await?;
        self.status_of(rec).await
    }

    /// Admin: the audit trail, oldest first.
    pub async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, Tier1Error> {
        if self.store.get_event(event).await?.is_none() {
            return Err(Tier1Error::EventNotFound);
        }
        Ok(self.store.audit(event).await?)
    }

    /// Admin: counters, waiting, admitted and recent rates.
    pub async fn status(&self, event: &EventId) -> Result<EventStatus, Tier1Error> {
        let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        self.status_of(rec).await
    }

    async fn status_of(&self, rec: EventRecord) -> Result<EventStatus, Tier1Error> {
        let counts = self.store.shard_counts(&rec.event, rec.config.shards).await?;
        Ok(build_status(rec, &counts, self.now()))
    }

    /// Admin: raise `servingCounter` by `by`, capped at the highest issued position. Allowed
    /// while the event is open, paused or inactive.
    pub async fn advance(&self, event: &EventId, by: u64, actor: &str) -> Result<EventStatus, Tier1Error> {
        if !(1..=MAX_ADVANCE_BY).contains(&by) {
            return Err(Tier1Error::InvalidAdvance(format!("by must be between 1 and {MAX_ADVANCE_BY}")));
        }
        for _ in 0..CAS_ATTEMPTS {
            let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
            if !matches!(rec.state, EventState::Open | EventState::Paused | EventState::Inactive)
                || rec.needs_seal()
            {
                return Err(LifecycleError::InvalidTransition { action: "advance", state: rec.state }.into());
            }
            let counts = self.store.shard_counts(event, rec.config.shards).await?;
            let line = Line { counts: &counts, p: rec.prequeue_total() };
            let now = self.now();
            let new = rec.serving_counter.saturating_add(by).min(line.highest()).max(rec.serving_counter);
            if new == rec.serving_counter {
                return Ok(build_status(rec, &counts, now));
            }
            let samples = push_sample(
                &rec.samples,
                Sample {
                    at: now,
                    serving: new,
                    issued: line.issued(),
                    redeemed: counts.total_redeemed(),
                    released: counts.total_released(),
                },
            );
            let update = ServingUpdate {
                expected: rec.serving_counter,
                new,
                step: None,
                samples: samples.clone(),
                now,
            };
            let audit = AuditEntry {
                seq: rec.audit_seq + 1,
                at: now,
                actor: actor.to_owned(),
                action: "advance".into(),
                before: serde_json::json!({ "servingCounter": rec.serving_counter }),
                after: serde_json::json!({ "servingCounter": new }),
            };
            if self.store.update_serving(event, update, Some(&audit)).await? {
                self.invalidate(event);
                tracing::info!(event = "tier1.advanced_manually", event_id = %event, actor, from = rec.serving_counter, to = new);
                let rec = EventRecord {
                    serving_counter: new,
                    samples,
                    updated_at: now,
                    audit_seq: audit.seq,
                    ..rec
                };
                return Ok(build_status(rec, &counts, now));
            }
        }
        Err(Tier1Error::Busy)
    }

    /// One advancer pass: every event's due transition (pre-queue, open, close at
    /// `closeAt`) and, for open events, the due step.
    pub async fn advance_due(&self) -> Result<Vec<StepOutcome>, StoreError> {
        let events = self.store.list_active().await?;
        let mut out = Vec::with_capacity(events.len());
        for rec in events {
            let now = self.now();
            let event = rec.event.clone();
            match self.due(rec, now).await {
                Ok(o) => out.push(o),
                // One event's trouble does not stop the others.
                Err(e) => tracing::warn!(event = "tier1.advance_failed", event_id = %event, error = %e),
            }
        }
        Ok(out)
    }

    /// The advancer's work for one event at the current time (what [`Self::advance_due`]
    /// does for each event).
    pub async fn advance_event(&self, event: &EventId) -> Result<StepOutcome, Tier1Error> {
        let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        self.due(rec, self.now()).await
    }

    async fn due(&self, rec: EventRecord, now: u64) -> Result<StepOutcome, Tier1Error> {
        let event = rec.event.clone();
        let from = rec.state;
        let action = match (rec.state, rec.schedule) {
            (EventState::Scheduled, Some(s)) if now >= s.prequeue_at => Some(Action::StartPrequeue),
            (EventState::Prequeue, Some(s)) if now >= s.open_at => Some(Action::Open { sealed: Vec::new() }),
            (EventState::Open | EventState::Paused, Some(Schedule { close_at: Some(c), .. })) if now >= c => {
                Some(Action::Close { reason: CloseReason::Ended, message: None })
            }
            _ => None,
        };
        if let Some(action) = action {
            let new = self.transition(&event, ADVANCER_ACTOR, action).await?;
            return Ok(StepOutcome::Transition { event, from, to: new.state });
        }
        match rec.state {
            EventState::Open => {
                let out = self.open_step(&rec, now).await?;
                if !matches!(out, StepOutcome::Advanced { .. }) {
                    self.count_issued(&rec, now).await;
                }
                Ok(out)
            }
            EventState::Paused => {
                self.count_issued(&rec, now).await;
                Ok(StepOutcome::NotDue { event })
            }
            EventState::Prequeue => {
                self.count_prequeue(&rec, now).await?;
                Ok(StepOutcome::NotDue { event })
            }
            _ => Ok(StepOutcome::NotDue { event }),
        }
    }

    /// The step of an open event, unless an alarm holds it.
    async fn open_step(&self, rec: &EventRecord, now: u64) -> Result<StepOutcome, Tier1Error> {
        let event = rec.event.clone();
        let step = now - now % rec.config.interval_seconds.max(1);
        // Ask the alarms only when a step is due and nothing else holds it.
        if let Some(health) = &self.health
            && rec.last_step_at < step
            && rec.hold.is_none()
        {
            match health.alarm(&event).await {
                Ok(Some(alarm)) => {
                    return Ok(StepOutcome::Held { event, by: HoldBy::Alarm, reason: alarm });
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(event = "tier1.health_check_failed", event_id = %event, error = %e)
                }
            }
        }
        Ok(self.advance_step(rec.clone(), now).await?)
    }

    /// Refreshes the places handed out shown in the status documents while the line does
    /// not step (held, paused, idle, between steps), every few seconds: one write when the
    /// count changed, never one per visitor. A failure only delays the figure (logged).
    async fn count_issued(&self, rec: &EventRecord, now: u64) {
        if rec.needs_seal() {
            return;
        }
        {
            let mut seen = self.issued_counted.lock().unwrap_or_else(|p| p.into_inner());
            if seen.get(&rec.event).is_some_and(|at| now < at + PREQUEUE_COUNT_EVERY_SECS) {
                return;
            }
            seen.insert(rec.event.clone(), now);
        }
        let shown = rec.samples.last().map_or(0, |s| s.issued).max(rec.issued_count);
        let counted = match self.store.shard_counts(&rec.event, rec.config.shards).await {
            Ok(counts) => Line { counts: &counts, p: rec.prequeue_total() }.issued(),
            Err(e) => {
                tracing::warn!(event = "tier1.count_issued_failed", event_id = %rec.event, error = %e);
                return;
            }
        };
        if counted > shown {
            match self.store.set_issued_count(&rec.event, counted, now).await {
                Ok(()) => self.invalidate(&rec.event),
                Err(e) => {
                    tracing::warn!(event = "tier1.count_issued_failed", event_id = %rec.event, error = %e)
                }
            }
        }
    }

    /// Refreshes the pre-queue size shown in the status documents, every few seconds.
    async fn count_prequeue(&self, rec: &EventRecord, now: u64) -> Result<(), Tier1Error> {
        {
            let mut seen = self.prequeue_counted.lock().unwrap_or_else(|p| p.into_inner());
            if seen.get(&rec.event).is_some_and(|at| now < at + PREQUEUE_COUNT_EVERY_SECS) {
                return Ok(());
            }
            seen.insert(rec.event.clone(), now);
        }
        let size = self.store.shard_counts(&rec.event, rec.config.shards).await?.total_pre();
        if size != rec.prequeue_size {
            self.store.set_prequeue_size(&rec.event, size, now).await?;
            self.invalidate(&rec.event);
        }
        Ok(())
    }

    /// Applies the step due at `now` to one open event, at most once per step across all
    /// callers.
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
            if rec.state != EventState::Open || rec.needs_seal() {
                return Ok(StepOutcome::NotDue { event });
            }
            if let Some(hold) = &rec.hold {
                return Ok(StepOutcome::Held { event, by: hold.by, reason: hold.reason.clone() });
            }
            let counts = self.store.shard_counts(&event, rec.config.shards).await?;
            let line = Line { counts: &counts, p: rec.prequeue_total() };
            let waiting = line.waiting(rec.serving_counter);
            let batch = match rec.config.mode {
                OutflowMode::Fixed => rec.config.batch_size,
                OutflowMode::TargetArrivals => {
                    let plan = outflow::plan(&outflow::StepInputs {
                        config: &rec.config,
                        samples: &rec.samples,
                        now,
                        serving: rec.serving_counter,
                        redeemed: counts.total_redeemed(),
                        released: counts.total_released(),
                        steady_since: rec.steady_since(),
                    });
                    tracing::debug!(
                        event = "tier1.outflow_plan",
                        event_id = %event,
                        batch = plan.batch,
                        show_rate = plan.show_rate,
                        base = plan.base,
                        feedback = plan.feedback,
                        arrivals_per_minute = plan.arrivals_per_minute,
                        released = plan.released
                    );
                    plan.batch
                }
            };
            let new = rec.serving_counter.saturating_add(batch).min(line.highest()).max(rec.serving_counter);
            if new == rec.serving_counter {
                let automatic = rec.config.batch_size > 0 || rec.config.mode == OutflowMode::TargetArrivals;
                return Ok(StepOutcome::Idle { event, step, waiting, automatic });
            }
            let samples = push_sample(
                &rec.samples,
                Sample {
                    at: now,
                    serving: new,
                    issued: line.issued(),
                    redeemed: counts.total_redeemed(),
                    released: counts.total_released(),
                },
            );
            let update = ServingUpdate { expected: rec.serving_counter, new, step: Some(step), samples, now };
            if self.store.update_serving(&event, update, None).await? {
                self.invalidate(&event);
                return Ok(StepOutcome::Advanced {
                    event,
                    step,
                    from: rec.serving_counter,
                    to: new,
                    waiting: line.waiting(new),
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

fn normalize(message: Option<Message>) -> Result<Option<Message>, Tier1Error> {
    match message {
        None => Ok(None),
        Some(m) => m.normalize().map_err(Tier1Error::InvalidMessage),
    }
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

fn commitment(rec: &EventRecord) -> Option<String> {
    rec.seed.as_deref().and_then(|s| Seed::from_hex(s).ok()).map(|s| s.commitment())
}

fn outflow_figures(rec: &EventRecord, counts: &ShardCounts, now: u64) -> OutflowFigures {
    let inputs = outflow::StepInputs {
        config: &rec.config,
        samples: &rec.samples,
        now,
        serving: rec.serving_counter,
        redeemed: counts.total_redeemed(),
        released: counts.total_released(),
        steady_since: rec.steady_since(),
    };
    let plan = outflow::plan(&inputs);
    let has_data = rec.serving_counter >= outflow::MIN_SERVED_FOR_ESTIMATE;
    OutflowFigures {
        mode: rec.config.mode,
        target_per_minute: (rec.config.mode == OutflowMode::TargetArrivals)
            .then_some(rec.config.target_arrivals_per_minute),
        redeemed_per_minute: plan.arrivals_per_minute,
        served_per_minute: rec.served_per_second(now).map(|r| r * 60.0),
        no_show_share: has_data.then(|| 1.0 - outflow::show_rate(&inputs)),
        released: counts.total_released(),
    }
}

fn build_status(rec: EventRecord, counts: &ShardCounts, now: u64) -> EventStatus {
    let outflow = outflow_figures(&rec, counts, now);
    let sealed = rec.sealed_counts.is_some();
    let line = Line { counts, p: rec.prequeue_total() };
    // Before the seal, the pre-queue joins stand in line too (their positions are drawn later).
    let unsealed_pre = if sealed { 0 } else { counts.total_pre() };
    let issued = line.issued() + unsealed_pre;
    EventStatus {
        event_id: rec.event.to_string(),
        state: rec.state,
        active: rec.active(),
        issued,
        serving_counter: rec.serving_counter,
        highest_position: line.highest(),
        waiting: line.waiting(rec.serving_counter) + unsealed_pre,
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
        rev: rec.rev,
        prequeue_at: rec.schedule.map(|s| s.prequeue_at),
        open_at: rec.schedule.map(|s| s.open_at),
        close_at: rec.schedule.and_then(|s| s.close_at),
        opened_at: rec.opened_at,
        close_reason: rec.close_reason,
        message: rec.message.clone(),
        seed_commitment: commitment(&rec),
        seed: rec.seed.clone().filter(|_| sealed),
        sealed_counts: rec.sealed_counts.clone(),
        prequeue_size: if sealed { rec.prequeue_total() } else { counts.total_pre() },
        held_by: rec.hold.as_ref().map(|h| h.by),
        hold_reason: rec.hold.as_ref().map(|h| h.reason.clone()),
        held_since: rec.hold.as_ref().map(|h| h.since),
        outflow,
    }
}

#[async_trait::async_trait]
impl vwr_core::tiers::ActiveEvents for Tier1Service {
    async fn is_active(&self, event: &EventId) -> Result<bool, vwr_core::tiers::LookupError> {
        match self.cached_event(event).await {
            Ok(rec) => Ok(rec.is_some_and(|r| r.state.gates())),
            Err(e) => Err(vwr_core::tiers::LookupError(e.to_string())),
        }
    }
}
