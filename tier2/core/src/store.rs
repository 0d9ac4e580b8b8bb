//! The admission store: every state change is one atomic operation (one Lua script on Redis,
//! one critical section in memory).

use async_trait::async_trait;
use vwr_core::EventId;

use crate::model::{
    AdmitReport, Cleaned, EventMeta, Left, LineOrder, LineScore, PendingNotice, Place, Snapshot, StoreError,
    Tier2Settings,
};

/// Storage of tier-2 state.
#[async_trait]
pub trait AdmissionStore: Send + Sync + 'static {
    /// Registers the event (or changes its threshold). The line order is kept from the first
    /// registration. Returns the registration in force.
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<EventMeta, StoreError>;

    /// The registration, if any.
    async fn meta(&self, event: &EventId) -> Result<Option<EventMeta>, StoreError>;

    /// Registered events (no keyspace scan).
    async fn events(&self) -> Result<Vec<EventId>, StoreError>;

    /// The atomic join decision: already waiting/active → touch and answer; else admit now if
    /// nobody waits and there is room; else join the line with `score`. `jti` is used if this
    /// call admits.
    async fn check(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError>;

    /// Where the user is (`None` = neither waiting nor active); touches the heartbeat if asked.
    async fn status(&self, event: &EventId, user: &str, touch: bool) -> Result<Option<Place>, StoreError>;

    /// Frees exactly what the user held.
    async fn leave(&self, event: &EventId, user: &str) -> Result<Left, StoreError>;

    /// Worker step: cleanup, then admit from the front of the line while there is room.
    async fn admit(
        &self,
        event: &EventId,
        jti_prefix: &str,
        s: &Tier2Settings,
    ) -> Result<AdmitReport, StoreError>;

    /// Cleanup only.
    async fn cleanup(&self, event: &EventId, s: &Tier2Settings) -> Result<Cleaned, StoreError>;

    /// Takes up to `max` pending notices (atomically: two workers never take the same one).
    async fn take_notices(&self, event: &EventId, max: usize) -> Result<Vec<PendingNotice>, StoreError>;

    /// Puts notices back for a later attempt.
    async fn requeue_notices(&self, event: &EventId, notices: &[PendingNotice]) -> Result<(), StoreError>;

    /// Removes the event and all its tier-2 state (admin). Returns whether it was registered.
    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError>;

    /// A consistent view of the event.
    async fn snapshot(&self, event: &EventId) -> Result<Snapshot, StoreError>;
}
