//! The operator's operations, called by the admin router (`/api/queue/admin/...`) and the
//! `vwr` command: the threshold (which registers the event), unregistering, and the tier-2
//! figures of the admin status.

use async_trait::async_trait;
use vwr_core::{ApiError, EventId};

use super::{Tier2Error, Tier2Service, Tier2Status};
use crate::model::{EventMeta, LineOrder, MAX_THRESHOLD, RegisterMode, Snapshot};

impl Tier2Service {
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
