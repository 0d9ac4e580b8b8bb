//! The position store: every tier-1 state change is one of these primitive, individually
//! atomic operations. The DynamoDB store is the real one; the in-memory store is the local
//! default and the model the property tests compare it with.

use async_trait::async_trait;
use vwr_core::EventId;

use crate::model::{ConfigPatch, EventRecord, Redemption, Sample, ShardCounts, StoreError};

/// What a compare-and-set of the serving counter should also write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServingUpdate {
    /// Counter value the caller read; the write fails if it changed.
    pub expected: u64,
    /// New value (never below `expected`).
    pub new: u64,
    /// Advancer step, as the unix second at which the step starts (`now - now % interval`):
    /// the write also requires `lastStepAt < step` and an active event, and records it.
    /// A time, not a step number, so a change of `intervalSeconds` keeps steps comparable
    /// (docs/adr/0004-advancer-steps.md). `None` for manual advances.
    pub step: Option<u64>,
    /// The new sample list.
    pub samples: Vec<Sample>,
    pub now: u64,
}

/// Storage of tier-1 state.
#[async_trait]
pub trait PositionStore: Send + Sync + 'static {
    /// The event item (strongly consistent).
    async fn get_event(&self, event: &EventId) -> Result<Option<EventRecord>, StoreError>;

    /// Creates the event or updates its configuration, and marks it active. Never touches
    /// counters. `shards` can only be chosen at creation: a different value later is
    /// [`StoreError::ShardsImmutable`].
    async fn activate(
        &self,
        event: &EventId,
        patch: ConfigPatch,
        now: u64,
    ) -> Result<EventRecord, StoreError>;

    /// Marks the event inactive. [`StoreError::NotFound`] if it does not exist.
    async fn deactivate(&self, event: &EventId, now: u64) -> Result<EventRecord, StoreError>;

    /// Takes the next count of shard `shard` (1-based) and returns it (1, 2, 3, …).
    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError>;

    /// Counters of all `shards` shards (strongly consistent).
    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError>;

    /// Compare-and-set of `servingCounter`; `Ok(false)` when the condition failed.
    async fn update_serving(&self, event: &EventId, update: ServingUpdate) -> Result<bool, StoreError>;

    /// Records the first admission of `position` with `jti` (conditional write) and counts it
    /// on the position's shard; a later call returns the first record with `fresh: false`.
    /// `expires_at` is when the record may be deleted (DynamoDB TTL).
    async fn redeem(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
        expires_at: u64,
    ) -> Result<Redemption, StoreError>;

    /// All active events (read through an index, paginated; may lag a write by a moment).
    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError>;
}
