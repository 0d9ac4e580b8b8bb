//! The position store: every tier-1 state change is one of these primitive, individually
//! atomic operations. The DynamoDB store is the real one; the in-memory store is the local
//! default and the model the property tests compare it with.

use async_trait::async_trait;
use vwr_core::EventId;

use crate::model::{AuditEntry, EventRecord, Redemption, Sample, ShardCounts, StoreError};
use crate::report::MinuteCounts;

/// What a compare-and-set of the serving counter should also write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServingUpdate {
    /// Counter value the caller read; the write fails if it changed.
    pub expected: u64,
    /// New value (never below `expected`).
    pub new: u64,
    /// Advancer step, as the unix second at which the step starts (`now - now % interval`):
    /// the write also requires `lastStepAt < step` and an `open` event, and records it.
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

    /// Writes the lifecycle fields of `rec` (state, configuration, schedule, seed, sealed
    /// counts, message, close reason, `rev`, `updatedAt`; a new item also gets zero
    /// counters) if the stored revision is `expected` (`None` = the item must not exist; a
    /// stored item without a revision counts as revision 0), and appends `audit` to the
    /// event's audit trail in the same atomic write. `Ok(false)` when the revision did not
    /// match, or the trail already has an entry with `audit.seq`: nothing was written.
    async fn write_event(
        &self,
        expected: Option<u64>,
        rec: &EventRecord,
        audit: &AuditEntry,
    ) -> Result<bool, StoreError>;

    /// Takes the next regular join of shard `shard` (1-based) and returns it (1, 2, 3, …).
    async fn next_in_shard(&self, event: &EventId, shard: u32) -> Result<u64, StoreError>;

    /// Takes the next pre-queue join of shard `shard` unless that shard is sealed: `Some(c)`
    /// (1, 2, 3, …) or `None` when sealed. Atomic with [`PositionStore::seal`] on the same
    /// shard (docs/invariants.md#12).
    async fn join_prequeue(&self, event: &EventId, shard: u32) -> Result<Option<u64>, StoreError>;

    /// Seals the pre-queue of every shard 1..=`shards` and returns their pre-queue counts.
    /// Idempotent: once a shard is sealed its count never changes.
    async fn seal(&self, event: &EventId, shards: u32) -> Result<Vec<u64>, StoreError>;

    /// Records the pre-queue size the advancer counted (no revision change).
    async fn set_prequeue_size(&self, event: &EventId, size: u64, now: u64) -> Result<(), StoreError>;

    /// Records the positions handed out as the advancer counted them between steps
    /// (`issuedCount`, no revision change): the status document's `issued` while the line
    /// stands still.
    async fn set_issued_count(&self, event: &EventId, issued: u64, now: u64) -> Result<(), StoreError>;

    /// Counters of all `shards` shards (strongly consistent).
    async fn shard_counts(&self, event: &EventId, shards: u32) -> Result<ShardCounts, StoreError>;

    /// Compare-and-set of `servingCounter`; `Ok(false)` when the condition failed. With
    /// `audit` (manual advances) the entry is appended in the same atomic write and
    /// `auditSeq` becomes its `seq` (`Ok(false)` if that `seq` is taken).
    async fn update_serving(
        &self,
        event: &EventId,
        update: ServingUpdate,
        audit: Option<&AuditEntry>,
    ) -> Result<bool, StoreError>;

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

    /// The first admission of `position`, if any (no write).
    async fn redemption(&self, event: &EventId, position: u64) -> Result<Option<Redemption>, StoreError>;

    /// Gives the admission of `position` a new token `(iat, exp)` if its current token still
    /// expires at `current_exp` (a conditional write: of two racing renewals one wins, the
    /// other reads the winner's). Returns the record as it now stands, `fresh` if this call
    /// wrote; `Ok(None)` if the position was never admitted.
    async fn renew(
        &self,
        event: &EventId,
        position: u64,
        current_exp: u64,
        iat: u64,
        exp: u64,
    ) -> Result<Option<Redemption>, StoreError>;

    /// Ends the admission of `position` early (the site's "done"), once, and only for the
    /// admission's own token: if the redemption's `jti` is `jti` (a conditional write), the
    /// first call records `now` and counts it on the position's shard. Otherwise nothing is
    /// written and the record is returned as it stands (`fresh: false`; the caller compares
    /// the `jti`). `Ok(None)` if never admitted.
    async fn release(
        &self,
        event: &EventId,
        position: u64,
        shards: u32,
        jti: &str,
        now: u64,
    ) -> Result<Option<Redemption>, StoreError>;

    /// The ticket an account already holds for the event (one place per account), if any.
    async fn account_ticket(&self, event: &EventId, account: &str) -> Result<Option<String>, StoreError>;

    /// Records `request_id` as the account's ticket unless it already has one (a conditional
    /// write); returns the ticket it already had, if any. `expires_at`: when the record may go.
    async fn claim_account(
        &self,
        event: &EventId,
        account: &str,
        request_id: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError>;

    /// Makes `new` the account's ticket if it still holds `old`, or no ticket any more (a
    /// conditional write: of racing replacements one wins); returns the ticket it holds
    /// instead, if any. For an account whose ticket expired (docs/invariants.md#17).
    async fn replace_account_ticket(
        &self,
        event: &EventId,
        account: &str,
        old: &str,
        new: &str,
        expires_at: u64,
    ) -> Result<Option<String>, StoreError>;

    /// Records the single-use proof `key` (a digest, at most 64 characters) as used until
    /// `expires_at`, unless it already is (a conditional write across every instance):
    /// `true` for the first use, `false` for a replay. A record whose `expires_at` has
    /// passed at `now` counts as absent (DynamoDB deletes expired items late).
    /// docs/invariants.md#18.
    async fn use_proof_once(
        &self,
        event: &EventId,
        key: &str,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, StoreError>;

    /// All events that are not `inactive` (read through an index, paginated; may lag a
    /// write by a moment).
    async fn list_active(&self) -> Result<Vec<EventRecord>, StoreError>;

    /// The event's audit trail, oldest first.
    async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, StoreError>;

    /// Adds one instance's `counts` of `event` in unix minute `minute` to those stored (an
    /// atomic add: instances never overwrite each other), kept until `expires_at`
    /// (docs/operate.md#the-report-after-the-sale).
    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &MinuteCounts,
        expires_at: u64,
    ) -> Result<(), StoreError>;

    /// Every stored minute of `event`, by minute.
    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, MinuteCounts)>, StoreError>;
}

/// The state of named alarms, for standby events (docs/lifecycle.md#standby): in AWS,
/// CloudWatch; in `vwr dev`, alarms set by hand (`PUT /api/admin/vwr/alarm/{name}`).
#[async_trait]
pub trait AlarmStates: Send + Sync + 'static {
    /// Whether the alarm `name` is in ALARM now. An error means it could not be read (or does
    /// not exist); the standby then stays as it is (and the advancer logs it).
    async fn in_alarm(&self, name: &str) -> Result<bool, String>;
}

/// Alarms set by hand: `vwr dev` and the tests. An alarm never set cannot be read, as a
/// CloudWatch alarm that does not exist (a typo) or that tier 1 may not read.
#[derive(Debug, Default)]
pub struct ManualAlarms {
    states: std::sync::Mutex<std::collections::HashMap<String, bool>>,
}

impl ManualAlarms {
    /// Sets `name` in ALARM (`true`) or OK.
    pub fn set(&self, name: &str, alarm: bool) {
        self.states.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_owned(), alarm);
    }
}

#[async_trait]
impl AlarmStates for ManualAlarms {
    async fn in_alarm(&self, name: &str) -> Result<bool, String> {
        self.states.lock().unwrap_or_else(|p| p.into_inner()).get(name).copied().ok_or_else(|| {
            format!("no alarm named {name:?} was ever set (vwr admin alarm {name} ok, or alarm)")
        })
    }
}

/// Alarms that hold the advancer (docs/outflow.md#health-gate): in AWS, CloudWatch alarms.
#[async_trait]
pub trait HealthSignal: Send + Sync + 'static {
    /// The name of an alarm now in ALARM that holds `event`'s advancer, if any. An error means
    /// the alarms could not be read; the advancer then goes on (and logs it).
    async fn alarm(&self, event: &EventId) -> Result<Option<String>, String>;
}
