//! Tier-2 behaviour: check / status / heartbeat / leave, entry tokens, identity cookies, wait
//! estimates, registration (with its durable copy). HTTP-agnostic: failures are
//! [`Tier2Error`]s, mapped to answers in `http`; the answers are typed data, and `http` alone
//! turns them into headers and cookies.
//!
//! One [`Tier2Service`], its operations in rooms by caller, as tier 1's `service/`:
//! - this file: the service, its construction, the event's registration (cached, restored from
//!   its durable copy) that the visitor's and the admin's operations share;
//! - `visitor.rs`: `check`, `status`, `heartbeat`, `leave`, the line document and the identity
//!   (the public router);
//! - `admin.rs`: the threshold, unregistering and the admin status (the admin router);
//! - `report.rs`: the report after the sale — counting, its flush, the report (admin);
//! - `answers.rs`: what the operations answer; `error.rs`: why they fail.
//!
//! The public surface is re-exported here: callers name `vwr_tier2::service::X`.

mod admin;
mod answers;
mod error;
mod report;
mod visitor;

pub use answers::{
    IdentityToken, LINE_DOCUMENT_TTL, LineDocument, MEASURED_RATE_AFTER_SECS, QueueAnswer, Tier2Status,
    epoch_secs, estimate_rate,
};
pub use error::Tier2Error;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use vwr_core::EventId;
use vwr_core::cache::TtlCache;
use vwr_core::metrics::{MetricsSink, Unit};
use vwr_core::tiers::ActiveEvents;
use vwr_core::time::{Clock, SystemClock};

use crate::entry_token::EntryTokens;
use crate::model::{EventMeta, LineOrder, RegisterMode, StoreError, Tier2Settings};
use crate::registry::{MemoryRegistry, Registry};
use crate::store::AdmissionStore;

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
}
