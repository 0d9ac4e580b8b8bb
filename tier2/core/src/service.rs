//! Tier-2 behaviour: check / status / heartbeat / leave, entry tokens, wait estimates,
//! registration. HTTP-agnostic apart from the shared error contract.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use vwr_core::cache::TtlCache;
use vwr_core::hints::{estimated_wait_seconds, next_poll_seconds};
use vwr_core::{ApiError, EventId};

use crate::entry_token::{EntryClaims, EntryTokens};
use crate::model::{
    EventMeta, LineOrder, LineScore, MAX_THRESHOLD, Place, Snapshot, StoreError, Tier2Settings,
};
use crate::store::AdmissionStore;

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(_) => {
                ApiError::unavailable("the admission store is unavailable; retry shortly")
            }
            StoreError::UnknownEvent => {
                ApiError::not_found("event_not_found", "this event has no waiting room")
            }
            StoreError::OrderMismatch(order) => ApiError::forbidden(
                "tier1_token_required",
                format!("this event's line is ordered by {order}; pass the waiting room first"),
            ),
            StoreError::PositionTaken => ApiError::conflict(
                "position_taken",
                "this waiting-room admission is already in line under another user",
            ),
            StoreError::Protocol(m) => {
                tracing::error!(event = "tier2.protocol_error", error = %m);
                ApiError::internal("unexpected reply from the admission store")
            }
        }
    }
}

/// Does tier 1 gate this event? (Events active in tier 1 are known to tier 2 implicitly, and
/// their line is ordered by tier-1 position.)
#[async_trait]
pub trait Tier1Lookup: Send + Sync + 'static {
    async fn is_active(&self, event: &EventId) -> Result<bool, ApiError>;
}

/// No tier 1 in front (tier 2 stand-alone).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTier1;

#[async_trait]
impl Tier1Lookup for NoTier1 {
    async fn is_active(&self, _: &EventId) -> Result<bool, ApiError> {
        Ok(false)
    }
}

#[async_trait]
impl Tier1Lookup for vwr_tier1::Tier1Service {
    async fn is_active(&self, event: &EventId) -> Result<bool, ApiError> {
        Ok(self.cached_event(event).await?.is_some_and(|r| r.active))
    }
}

/// The caller of a tier-2 request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    /// The position from the caller's verified tier-1 token for this event, if any.
    pub tier1_position: Option<u64>,
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
    pub next_poll_seconds: u64,
    pub current_users: u64,
    pub threshold: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_token: Option<String>,
    /// When the entry token expires (seconds since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
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
    pub active: u64,
    pub admitted_last_60s: u64,
    pub admitted_per_second: f64,
}

/// The tier-2 service.
pub struct Tier2Service {
    store: Arc<dyn AdmissionStore>,
    tokens: EntryTokens,
    settings: Tier2Settings,
    tier1: Arc<dyn Tier1Lookup>,
    meta_cache: TtlCache<EventId, EventMeta>,
}

fn random_id() -> Result<String, ApiError> {
    vwr_core::keys::random_bytes(12)
        .map(|b| URL_SAFE_NO_PAD.encode(b))
        .map_err(|_| ApiError::internal("random generator failed"))
}

impl Tier2Service {
    pub fn new(
        store: Arc<dyn AdmissionStore>,
        tokens: EntryTokens,
        settings: Tier2Settings,
        tier1: Arc<dyn Tier1Lookup>,
        meta_ttl: Duration,
    ) -> Self {
        Self { store, tokens, settings, tier1, meta_cache: TtlCache::new(meta_ttl) }
    }

    pub fn store(&self) -> &Arc<dyn AdmissionStore> {
        &self.store
    }

    pub fn tokens(&self) -> &EntryTokens {
        &self.tokens
    }

    pub fn settings(&self) -> &Tier2Settings {
        &self.settings
    }

    /// The event's registration; events active in tier 1 are registered on first use.
    pub async fn meta(&self, event: &EventId) -> Result<EventMeta, ApiError> {
        if let Some(m) = self.meta_cache.get(event) {
            return Ok(m);
        }
        let meta = match self.store.meta(event).await? {
            Some(m) => m,
            None if self.tier1.is_active(event).await? => {
                let m = self.store.register(event, self.settings.default_threshold, LineOrder::Tier1).await?;
                tracing::info!(event = "tier2.registered_from_tier1", event_id = %event, threshold = m.threshold);
                m
            }
            None => return Err(ApiError::not_found("event_not_found", "this event has no waiting room")),
        };
        self.meta_cache.insert(event.clone(), meta);
        Ok(meta)
    }

    /// Admin: sets the threshold and registers the event. The line order is kept from the
    /// first registration; for a new event it is `order`, or tier-1 order when tier 1 gates it.
    pub async fn set_threshold(
        &self,
        event: &EventId,
        threshold: u64,
        order: Option<LineOrder>,
    ) -> Result<EventMeta, ApiError> {
        if !(1..=MAX_THRESHOLD).contains(&threshold) {
            return Err(ApiError::bad_request(
                "invalid_body",
                format!("threshold must be between 1 and {MAX_THRESHOLD}"),
            ));
        }
        let order = match order {
            Some(o) => o,
            None if self.tier1.is_active(event).await? => LineOrder::Tier1,
            None => LineOrder::Arrival,
        };
        let meta = self.store.register(event, threshold, order).await?;
        self.meta_cache.remove(event);
        tracing::info!(event = "tier2.threshold_set", event_id = %event, threshold, order = meta.order.as_str());
        Ok(meta)
    }

    fn answer(&self, event: &EventId, user: &str, place: &Place) -> Result<QueueAnswer, ApiError> {
        match place {
            Place::Queued { position, figures } => {
                let rate = (figures.admitted_last_60s > 0).then(|| figures.admitted_last_60s as f64 / 60.0);
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
                })
            }
            Place::Active { admission, figures, .. } => {
                let claims = EntryClaims {
                    iss: self.tokens.issuer().to_owned(),
                    aud: self.tokens.audience().to_owned(),
                    sub: event.to_string(),
                    uid: user.to_owned(),
                    tier: 2,
                    iat: admission.admitted_at_ms / 1000,
                    exp: admission.expires_at_ms / 1000,
                    jti: admission.jti.clone(),
                };
                let token = self
                    .tokens
                    .sign(&claims)
                    .map_err(|_| ApiError::internal("could not sign the entry token"))?;
                Ok(QueueAnswer {
                    status: "active",
                    position: 0,
                    people_ahead: 0,
                    people_behind: figures.queue_size,
                    queue_size: figures.queue_size,
                    estimated_wait_seconds: 0,
                    next_poll_seconds: next_poll_seconds(0),
                    current_users: figures.active,
                    threshold: figures.threshold,
                    entry_token: Some(token),
                    expires_at: Some(claims.exp),
                })
            }
        }
    }

    /// `POST /api/queue/check/{eventId}`.
    pub async fn check(&self, event: &EventId, caller: &Caller) -> Result<QueueAnswer, ApiError> {
        let meta = self.meta(event).await?;
        let score = match meta.order {
            LineOrder::Arrival => LineScore::Arrival,
            LineOrder::Tier1 => LineScore::Tier1Position(caller.tier1_position.ok_or_else(|| {
                ApiError::forbidden(
                    "tier1_token_required",
                    "pass the waiting room first (no valid tier-1 token)",
                )
            })?),
        };
        let jti = random_id()?;
        let place = self.store.check(event, &caller.user, score, &jti, &self.settings).await?;
        if let Place::Active { fresh: true, .. } = place {
            tracing::info!(event = "tier2.admitted_at_once", event_id = %event, jti = %jti);
        }
        self.answer(event, &caller.user, &place)
    }

    /// `GET /api/queue/status/{eventId}` (also a heartbeat).
    pub async fn status(&self, event: &EventId, user: &str) -> Result<QueueAnswer, ApiError> {
        self.meta(event).await?;
        match self.store.status(event, user, true).await? {
            Some(place) => self.answer(event, user, &place),
            None => Err(not_in_queue()),
        }
    }

    /// `POST /api/queue/heartbeat/{eventId}`.
    pub async fn heartbeat(&self, event: &EventId, user: &str) -> Result<(), ApiError> {
        self.meta(event).await?;
        match self.store.status(event, user, true).await? {
            Some(_) => Ok(()),
            None => Err(not_in_queue()),
        }
    }

    /// `POST /api/queue/leave/{eventId}`: frees what the user held (idempotent).
    pub async fn leave(&self, event: &EventId, user: &str) -> Result<(), ApiError> {
        self.meta(event).await?;
        let left = self.store.leave(event, user).await?;
        tracing::info!(event = "tier2.left", event_id = %event, was_waiting = left.was_waiting, was_active = left.was_active);
        Ok(())
    }

    /// Admin: removes the event and all its tier-2 state (everyone waiting or active).
    pub async fn unregister(&self, event: &EventId) -> Result<bool, ApiError> {
        let was = self.store.unregister(event).await?;
        self.meta_cache.remove(event);
        tracing::info!(event = "tier2.unregistered", event_id = %event, was_registered = was);
        Ok(was)
    }

    /// Tier-2 figures of an event.
    pub async fn admin_status(&self, event: &EventId) -> Result<Tier2Status, ApiError> {
        let s: Snapshot = self.store.snapshot(event).await?;
        Ok(Tier2Status {
            event_id: event.to_string(),
            registered: s.meta.is_some(),
            threshold: s.meta.map(|m| m.threshold),
            line_order: s.meta.map(|m| m.order),
            waiting: s.waiting,
            active: s.active,
            admitted_last_60s: s.admitted_last_60s,
            admitted_per_second: s.admitted_last_60s as f64 / 60.0,
        })
    }
}

fn not_in_queue() -> ApiError {
    ApiError::not_found("not_in_queue", "you are neither waiting nor admitted; check in first")
}

#[async_trait]
impl vwr_tier1::http::StatusExtra for Tier2Service {
    fn key(&self) -> &'static str {
        "tier2"
    }

    async fn figures(&self, event: &EventId) -> Result<Option<serde_json::Value>, ApiError> {
        let st = self.admin_status(event).await?;
        if !st.registered {
            return Ok(None);
        }
        serde_json::to_value(st).map(Some).map_err(|e| ApiError::internal(e.to_string()))
    }
}
