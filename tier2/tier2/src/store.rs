//! The admission store: every state change is one atomic operation (one Lua script on Redis,
//! one critical section in memory).

use async_trait::async_trait;
use vwr_core::EventId;

use crate::model::{
    AdmitReport, Cleaned, EventMeta, HoldProof, Left, LineOrder, LineScore, LineView, PendingNotice, Place,
    RegisterMode, Snapshot, StoreError, Tier2Settings, Touch,
};
use crate::report::Tier2Minute;

/// What retiring an idle event found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retire {
    /// Out of the worker's index until the next check puts it back.
    Retired,
    /// Somebody is in it, a notice is pending or it was checked recently: kept.
    Busy,
}

/// Storage of tier-2 state.
#[async_trait]
pub trait AdmissionStore: Send + Sync + 'static {
    /// Registers the event (or changes its threshold, [`RegisterMode::Admin`] only). The line
    /// order is kept from the first registration. Returns the registration in force, or
    /// `None` when an implicit registration met an unregistration tombstone.
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
        mode: RegisterMode,
    ) -> Result<Option<EventMeta>, StoreError>;

    /// The registration, if any.
    async fn meta(&self, event: &EventId) -> Result<Option<EventMeta>, StoreError>;

    /// Events in the worker's index (registered and not retired; no keyspace scan).
    async fn events(&self) -> Result<Vec<EventId>, StoreError>;

    /// The atomic join decision: already waiting/active → touch and answer; else a user a
    /// timeout removed gets that place (or admission) back (docs/invariants.md#23); else, if
    /// the store lost its data since the caller's `proof` was signed (meta `lost`), the place
    /// or admission the proof holds comes back likewise (docs/invariants.md#27); else, if
    /// `may_join`, admit now if nobody waits and there is room, or join the line with `score`
    /// (a user admitted before joins at the back); else [`StoreError::NoPlace`], and no place is
    /// made. `jti` is used if this call admits. An active answer hands out an entry token
    /// ending at `admission.token_expires_at_ms`.
    #[expect(
        clippy::too_many_arguments,
        reason = "one atomic script's inputs; check/recheck are the usual front"
    )]
    async fn check_in(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
        may_join: bool,
        proof: Option<&HoldProof>,
    ) -> Result<Place, StoreError>;

    /// [`Self::check_in`] of a caller who may join, without a hold.
    async fn check(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError> {
        self.check_in(event, user, score, jti, s, true, None).await
    }

    /// [`Self::check_in`] for a caller who may not join (known only by an expired tier-1 token):
    /// only a place they have, or a place a timeout took from them (a ghost), counts; else
    /// [`StoreError::NoPlace`], and no place is made.
    async fn recheck(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError> {
        self.check_in(event, user, score, jti, s, false, None).await
    }

    /// Where the user is (`None` = neither waiting nor active); touches the heartbeat `touch`
    /// says. `token_ttl_ms` > 0: an active answer hands out an entry token of that life.
    async fn status(
        &self,
        event: &EventId,
        user: &str,
        touch: Touch,
        token_ttl_ms: u64,
    ) -> Result<Option<Place>, StoreError>;

    /// Where the event's line stands (the line document): its figures, the front's score and
    /// a few marks. Notes the call as heard (a status would), since waiting users read it
    /// instead of calling (docs/invariants.md#23).
    async fn line(&self, event: &EventId) -> Result<LineView, StoreError>;

    /// Frees exactly what the user held (an active slot once their last token expired).
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

    /// Takes up to `max` notices to send, each leased for `lease_ms` (a notice whose lease
    /// ran out is taken again): two workers never hold the same lease, and nothing leaves the
    /// store before [`AdmissionStore::ack_notices`].
    async fn take_notices(
        &self,
        event: &EventId,
        max: usize,
        lease_ms: u64,
    ) -> Result<Vec<PendingNotice>, StoreError>;

    /// Forgets the taken notices `done` (sent, or given up) and puts `retry` (new copies, one
    /// more attempt) back for a later send.
    async fn ack_notices(
        &self,
        event: &EventId,
        done: &[PendingNotice],
        retry: &[PendingNotice],
    ) -> Result<(), StoreError>;

    /// Removes the event and all its tier-2 state in one step, leaving a tombstone that only
    /// an admin registration lifts. Returns whether it was registered.
    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError>;

    /// Takes an idle event out of the worker's index (see [`Retire`]).
    async fn retire(&self, event: &EventId, idle_ms: u64) -> Result<Retire, StoreError>;

    /// A consistent view of the event.
    async fn snapshot(&self, event: &EventId) -> Result<Snapshot, StoreError>;

    /// Adds one instance's report counts of `event` in unix minute `minute` to those stored
    /// (atomically: instances never overwrite each other), kept 90 days
    /// (docs/operate.md#the-report-after-the-sale).
    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &Tier2Minute,
    ) -> Result<(), StoreError>;

    /// Every stored report minute of `event`, by minute.
    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, Tier2Minute)>, StoreError>;
}
