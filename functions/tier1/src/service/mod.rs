//! Tier-1 behaviour on top of a [`PositionStore`]: assign, check, admin operations and the
//! advancer step. HTTP-agnostic: failures are [`Tier1Error`]s, mapped to answers in `http`;
//! the answers are typed data, and `http` alone turns them into headers and cookies.
//!
//! One [`Tier1Service`], its operations in rooms by caller:
//! - this file: the service, its construction, the instance caches, the edge sync and the
//!   lifecycle write (`transition`) that the admin and the advancer share;
//! - `visitor.rs`: `assign`, `check`, `release` and the public status (the public router);
//! - `admin.rs`: the lifecycle transitions, manual advance, status and audit (the admin router);
//! - `passes.rs`: passes for staff, monitors and callbacks (the admin router, docs/passes.md);
//! - `report.rs`: the report after the sale — counting, its flush, the report (admin);
//! - `steps.rs`: the advancer's pass over the events (the advancer Lambda and `vwr dev`);
//! - `answers.rs`: what the operations answer; `error.rs`: why they fail.
//!
//! The public surface is re-exported here: callers name `vwr_tier1::service::X`.

mod admin;
mod answers;
mod error;
mod passes;
mod report;
mod steps;
mod visitor;

pub use admin::ScheduleRequest;
pub use answers::{
    Admitted, AssignResponse, CheckOutcome, ClosedAnswer, EventStatus, OutflowFigures, Placed, PrequeueJoin,
    PrequeueWait, PublicPage, PublicStatus, Rates, StandbyAlarmState, Waiting,
};
pub use error::Tier1Error;
pub use passes::{CreatedPass, PassView};
pub use steps::{ADVANCER_ACTOR, PREQUEUE_COUNT_EVERY_SECS, STEP_SKEW_LEEWAY_SECS, StepOutcome};
pub use visitor::{JoinProof, Presented, position_of, ticket_life_start};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use vwr_core::EventId;
use vwr_core::cache::TtlCache;
use vwr_core::time::Clock;
use vwr_core::token::Tier1Tokens;

use crate::edge_sync::{self, EdgeConfigStore};
use crate::lifecycle::{self, Action, Facts};
use crate::model::{AuditEntry, EventRecord, EventState, StoreError, revoked_live};
use crate::store::{AlarmStates, HealthSignal, PositionStore};
use crate::ticket::TicketSigner;

/// Compare-and-set retries before giving up with 503.
const CAS_ATTEMPTS: usize = 8;

/// Settings of the tier-1 service.
#[derive(Debug, Clone)]
pub struct Tier1Settings {
    /// How long a ticket (`requestId`) stays valid.
    pub ticket_ttl_secs: u64,
    /// Cookie name prefix; the cookie is `{prefix}{eventId}`. Read by `http` (and `vwr dev`'s
    /// edge) only: the service answers tokens, never cookies.
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
    alarms: Option<Arc<dyn AlarmStates>>,
    pow: crate::pow::PowIssuer,
    /// Proof-of-work solutions seen on this instance, with when they stop mattering: a cheap
    /// first filter; the store's record decides (docs/invariants.md#18).
    pow_seen: Mutex<HashMap<String, u64>>,
    enqueue: Option<crate::enqueue::EnqueueVerifier>,
    /// Tier 2's public keys, to read the holds it signs into visitors' identities
    /// (`VWR_TIER2_JWKS`, docs/invariants.md#27).
    holds: Option<vwr_core::hold::HoldVerifier>,
    /// This instance's counts for the report, not yet in the store.
    tally: crate::report::Tally,
}

impl Tier1Service {
    /// The service on `store`; [`crate::assemble()`] is the way to make one.
    pub(crate) fn new(
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
        let clock_now = clock.now_secs();
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
            alarms: None,
            pow,
            pow_seen: Mutex::new(HashMap::new()),
            enqueue: None,
            holds: None,
            tally: crate::report::Tally::new(clock_now),
        }
    }

    /// Verifies the site's enqueue tokens with these public keys (one place per account).
    pub(crate) fn with_enqueue_verifier(mut self, verifier: crate::enqueue::EnqueueVerifier) -> Self {
        self.enqueue = Some(verifier);
        self
    }

    /// Reads tier 2's holds with these public keys: a visitor tier 2 holds keeps their session.
    pub(crate) fn with_hold_verifier(mut self, verifier: vwr_core::hold::HoldVerifier) -> Self {
        self.holds = Some(verifier);
        self
    }

    /// Whether enqueue tokens can be checked (events may require them only then).
    pub fn has_enqueue_keys(&self) -> bool {
        self.enqueue.is_some()
    }

    /// Holds the advancer while one of these alarms is in ALARM.
    pub(crate) fn with_health_signal(mut self, health: Arc<dyn HealthSignal>) -> Self {
        self.health = Some(health);
        self
    }

    /// Opens standby events when their alarm fires (docs/lifecycle.md#standby).
    pub(crate) fn with_alarm_states(mut self, alarms: Arc<dyn AlarmStates>) -> Self {
        self.alarms = Some(alarms);
        self
    }

    /// Keeps the edge verifier's event list in step with the events' states.
    pub(crate) fn with_edge_sync(mut self, edge: Arc<dyn EdgeConfigStore>) -> Self {
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
    ///
    /// First the revoked passes (docs/passes.md) of the indexed events and of `fresh`, the
    /// record just written (the index may not show it yet), into their own entry
    /// (`publish_revoked` keeps what it holds until it expires); then the list. Revocations
    /// that do not fit their entry fail only `revoking` (a revocation's own call), logged as
    /// every failure is: the event list never fails because of passes.
    async fn sync_edge(
        &self,
        changed: Option<(&EventId, bool)>,
        fresh: Option<&EventRecord>,
        revoking: bool,
    ) -> Result<(), Tier1Error> {
        let Some(edge) = &self.edge else {
            return Ok(());
        };
        let failed = |e: edge_sync::EdgeSyncError| {
            tracing::error!(event = "tier1.edge_sync_failed", error = %e);
            Tier1Error::EdgeSync(e.to_string())
        };
        let now = self.now();
        let records = self.store.list_active().await?;
        let mut revoked: BTreeMap<String, u64> = BTreeMap::new();
        for r in records.iter().chain(fresh) {
            revoked.extend(revoked_live(&r.passes, now).map(|(id, exp)| (id.to_owned(), exp)));
        }
        let indexed: HashMap<String, bool> =
            records.into_iter().map(|r| (r.event.as_str().to_owned(), r.state.gates())).collect();
        let (raw, _) = edge.get().await.map_err(failed)?;
        let legacy = edge_sync::legacy_revoked(&raw, now);
        let revocations =
            edge_sync::publish_revoked(edge.as_ref(), &revoked, &legacy, now).await.map_err(failed);
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
            if edge_sync::write_events(edge.as_ref(), &raw, &version, &gated, revocations.is_ok())
                .await
                .map_err(failed)?
                .is_some()
            {
                return match revocations {
                    Err(e) if revoking => Err(e),
                    _ => Ok(()),
                };
            }
        }
        Err(failed(edge_sync::EdgeSyncError::Conflict))
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
                // The edge's configuration holds the gated events and the revoked passes:
                // written again when either changed.
                let revoked = |r: &EventRecord| {
                    revoked_live(&r.passes, now).map(|(id, _)| id.to_owned()).collect::<Vec<_>>()
                };
                let revoking = old.as_ref().map_or_else(Vec::new, revoked) != revoked(&new);
                if from.is_some_and(EventState::gates) != new.state.gates() || revoking {
                    self.sync_edge(Some((event, new.state.gates())), Some(&new), revoking).await?;
                }
                return Ok(new);
            }
        }
        Err(Tier1Error::Busy)
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
