//! Why a tier-1 operation failed: one enum for every caller; `http` maps it to answers once.

use crate::lifecycle::LifecycleError;
use crate::model::{CloseReason, StoreError};
use crate::ticket::TicketError;

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
    /// A standby's alarm that tier 1 cannot read (a typo, an alarm of another account or
    /// region, or one outside `standby_alarm_names`): the advancer could never open the event.
    #[error(
        "alarm {alarm:?} cannot be read ({reason}): name a CloudWatch alarm of this account and region that is in tier 1's standby_alarm_names"
    )]
    StandbyAlarmUnreadable { alarm: String, reason: String },
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
