//! Tier-2 data: line order, replies of the admission store, settings and errors.

use serde::Serialize;

/// Default concurrency threshold (docs/settings.md#per-event-settings-tier-2).
pub const DEFAULT_THRESHOLD: u64 = 1000;
/// Life of a tier-2 identity after the caller's last call: a day, as a tier-1 ticket
/// (docs/tokens.md).
pub const IDENTITY_LIFE_MS: u64 = 86_400_000;
/// Largest threshold accepted.
pub const MAX_THRESHOLD: u64 = 10_000_000;
/// Longest user id accepted.
pub const MAX_USER_ID_LEN: usize = 256;

/// How an event's line is ordered: one score domain per event, fixed at registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineOrder {
    /// By tier-1 position, taken only from a verified tier-1 token.
    Tier1,
    /// By arrival, stamped with the Redis clock.
    Arrival,
}

impl LineOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tier1 => "tier1",
            Self::Arrival => "arrival",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "tier1" => Some(Self::Tier1),
            "arrival" => Some(Self::Arrival),
            _ => None,
        }
    }
}

/// Where a caller joins the line: their tier-1 position, or "now".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineScore {
    Tier1Position(u64),
    Arrival,
}

impl LineScore {
    pub fn order(self) -> LineOrder {
        match self {
            Self::Tier1Position(_) => LineOrder::Tier1,
            Self::Arrival => LineOrder::Arrival,
        }
    }
}

/// An event's tier-2 registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventMeta {
    pub threshold: u64,
    pub order: LineOrder,
}

/// Who registers an event, which decides what a registration may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterMode {
    /// The admin API: sets the threshold, lifts an unregistration tombstone.
    Admin,
    /// An event active in tier 1: fills in only what is missing (never overwrites a racing
    /// admin change) and never brings back an unregistered event.
    Implicit,
    /// A registration re-hydrated from the durable copy because the store had lost it (a Redis
    /// restarted without its data): as [`Self::Implicit`], and a new registration also records
    /// when the loss was found (meta `lost`), before which the holds tier 2 signed into
    /// visitors' identities give their places back (docs/invariants.md#27).
    Rehydrate,
}

/// The place tier 2 signed into a caller's identity cookie (a hold, `vwr_core::hold`), and
/// when: `check` gives it back if the store has lost its data since (docs/invariants.md#27).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldProof {
    pub held: vwr_core::hold::Held,
    /// When the hold was signed (seconds since the epoch).
    pub issued_at: u64,
}

impl HoldProof {
    /// The latest moment (ms) the hold can have been signed: its `iat` is whole seconds.
    pub fn issued_by_ms(&self) -> u64 {
        self.issued_at.saturating_mul(1000).saturating_add(999)
    }
}

/// Figures shared by every reply about one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// People in the line.
    pub queue_size: u64,
    /// Active users whose admission is valid now.
    pub active: u64,
    pub threshold: u64,
    /// Admissions during the last 60 s.
    pub admitted_last_60s: u64,
    /// Whole seconds (the store's clock) from the event's first admission to now; `None`
    /// before it. Wait estimates trust the measured rate only once it covers a whole minute.
    pub since_first_admission_secs: Option<u64>,
}

/// A current admission (the record tier 2 also signs into a visitor's hold).
pub use vwr_core::hold::Admission;

/// Where a user is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In the line at `position` (1 = next). `restored`: this `check` gave back the place a
    /// timeout had taken (docs/invariants.md#23). `score`: the user's line score, which the
    /// line document's `front` is compared with (`check` answers it; `status` need not).
    Queued { position: u64, figures: Figures, restored: bool, score: Option<u64> },
    /// Admitted; `fresh` when this very call admitted them, `restored` when this `check` gave
    /// back the admission a timeout had taken.
    Active { admission: Admission, fresh: bool, restored: bool, figures: Figures },
}

impl Place {
    /// Whether this `check` gave back a place a timeout had taken.
    pub fn restored(&self) -> bool {
        match self {
            Self::Queued { restored, .. } | Self::Active { restored, .. } => *restored,
        }
    }
}

/// Which heartbeat a `status` call touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// None (a look only).
    No,
    /// An active user's only: waiting users are not heard from while they wait (the line
    /// document tells them where the line is; docs/adr/0026-tier2-line-document.md).
    Active,
    /// A waiting or an active user's (`VWR_WAITING_TIMEOUT_SECONDS` > 0).
    Any,
}

/// Where an event's line stands, shared by everyone in it: the line document
/// (`GET /api/queue/line/{eventId}`, docs/api.md#the-line-document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineView {
    pub figures: Figures,
    /// The first score above 0 in line (`None`: nobody waits there; users back for an admission
    /// a timeout took wait at 0, ahead of everyone, and are no front). A visitor whose line
    /// score is below it has left the line: admitted (or removed), so it asks `check`.
    pub front: Option<u64>,
    /// (place, score) of a few users spread over the line, first and last included, in order:
    /// a visitor finds its place between two of them.
    pub marks: Vec<(u64, u64)>,
}

/// Most marks in a line document.
pub const MAX_LINE_MARKS: usize = 16;

/// What `leave` freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Left {
    pub was_waiting: bool,
    pub was_active: bool,
}

/// One admission made by the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub user: String,
    pub jti: String,
}

/// What one worker step did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmitReport {
    pub expired: u64,
    pub evicted: u64,
    pub stale: u64,
    /// Checks that found the event full since the previous step.
    pub over_threshold: u64,
    pub admitted: Vec<Admitted>,
    pub waiting: u64,
    /// Slots taken (held ones included).
    pub active: u64,
    /// Notices dropped because the pending list was full, since the previous step.
    pub notices_dropped: u64,
    /// Time since the last check of the event.
    pub idle_ms: u64,
    /// Admissions given back to users a timeout had evicted, who came back for them (not new
    /// admissions: no notice, not in the rate).
    pub restored: u64,
}

/// What a cleanup pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleaned {
    pub expired: u64,
    pub evicted: u64,
    pub stale: u64,
}

/// A consistent view of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub meta: Option<EventMeta>,
    pub waiting: u64,
    /// Active users whose admission is valid now.
    pub active: u64,
    /// Members of the active set, expired ones not yet cleaned included.
    pub active_members: u64,
    /// Users in the waiting and the active set at once (invariant 6: always 0).
    pub in_both: u64,
    pub admitted_last_60s: u64,
    /// Released slots still counted because their last entry token has not expired.
    pub held: u64,
    /// Admission notices not yet sent (queued or in flight).
    pub pending_notices: u64,
    /// Places and admissions kept for users a timeout removed (docs/invariants.md#23), not yet
    /// forgotten.
    pub ghosts: u64,
}

/// An admission notice waiting to be sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingNotice {
    pub user_id: String,
    pub jti: String,
    /// Milliseconds since the epoch (Redis clock).
    pub admitted_at: u64,
    /// Send attempts so far.
    #[serde(default)]
    pub attempts: u32,
    /// The stored form, as taken (acknowledgements name the notice by it).
    #[serde(skip)]
    pub raw: String,
}

impl PendingNotice {
    /// The stored form of a new notice (`raw` is not part of it).
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a stored notice, keeping its stored form.
    pub fn decode(raw: &str) -> Result<Self, serde_json::Error> {
        let mut n: Self = serde_json::from_str(raw)?;
        n.raw = raw.to_owned();
        Ok(n)
    }
}

/// Timing and sizing of admissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tier2Settings {
    /// How long an admission (and its entry token) lasts.
    pub active_ttl_ms: u64,
    /// An active user without a heartbeat for this long loses the slot.
    pub active_heartbeat_timeout_ms: u64,
    /// A waiting user without a poll for this long leaves the line (more than the longest
    /// poll hint of 60 s); 0 (the default): waiting users are not heard from while they wait —
    /// their pages read the line document — and liveness is judged at the turn
    /// ([`Self::collect_ms`]).
    pub waiting_timeout_ms: u64,
    /// An admission the worker made that no call has collected (a `status` or `check` that
    /// finds it) for this long frees its slot at the next cleanup; its user gets it back if
    /// they return, as after any timeout (docs/invariants.md#23, #26). Below
    /// [`Self::active_heartbeat_timeout_ms`].
    pub collect_ms: u64,
    /// Most admissions per event per worker step.
    pub batch_max: u64,
    /// Most users removed per kind per cleanup pass.
    pub cleanup_limit: u64,
    /// Most notices kept waiting per event (older ones are dropped and counted).
    pub notice_cap: u64,
    /// Threshold of events registered implicitly (active in tier 1).
    pub default_threshold: u64,
    /// Lifetime of one entry token; `status` hands out a fresh one (never past the end of
    /// the admission). Bounds how long a slot stays taken after its user left.
    pub entry_token_ttl_ms: u64,
    /// How long a notice taken by a worker stays leased before another worker may take it.
    pub notice_lease_ms: u64,
    /// An event with nobody in it and no check for this long leaves the worker's index.
    pub retire_idle_ms: u64,
    /// A cleanup that finds it has not run for longer, or that nobody was heard for longer
    /// while [`Self::silence_crowd`] people were in the event, records the span as a silence:
    /// time that does not count against heartbeats (docs/invariants.md#23).
    pub silence_after_ms: u64,
    /// People in an event (waiting or admitted) from whom a total silence means the servers
    /// could not hear them, not that they all went away; 0 turns that inference off.
    pub silence_crowd: u64,
    /// How long a place (or admission) a timeout took is kept for its user's return.
    pub ghost_ttl_ms: u64,
}

impl Default for Tier2Settings {
    fn default() -> Self {
        Self {
            active_ttl_ms: 600_000,
            active_heartbeat_timeout_ms: 60_000,
            waiting_timeout_ms: 0,
            collect_ms: 10_000,
            batch_max: 500,
            cleanup_limit: 1000,
            notice_cap: 100_000,
            default_threshold: DEFAULT_THRESHOLD,
            entry_token_ttl_ms: 30_000,
            notice_lease_ms: 30_000,
            retire_idle_ms: 3_600_000,
            silence_after_ms: 10_000,
            silence_crowd: 10,
            ghost_ttl_ms: 1_800_000,
        }
    }
}

impl Tier2Settings {
    /// How long a renewed tier-1 token lasts after the caller's last call (docs/tokens.md):
    /// as long as an active (or, with a waiting timeout, a waiting) user can stay away without
    /// losing their place, plus a minute.
    pub fn identity_ttl_ms(&self) -> u64 {
        self.waiting_timeout_ms.max(self.active_heartbeat_timeout_ms) + 60_000
    }

    /// How long the tier-2 identity (token and cookie) lives after the caller's last call: a
    /// waiting user makes no call until their turn, however long the line, so it lasts as long
    /// as a place can: [`IDENTITY_LIFE_MS`], or [`Self::identity_ttl_ms`] if longer.
    pub fn identity_life_ms(&self) -> u64 {
        self.identity_ttl_ms().max(IDENTITY_LIFE_MS)
    }

    /// The heartbeat a `status` call touches.
    pub fn touch(&self) -> Touch {
        if self.waiting_timeout_ms > 0 { Touch::Any } else { Touch::Active }
    }
}

/// A store failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Redis is unreachable or failing: retry later (503).
    #[error("admission store unavailable: {0}")]
    Unavailable(String),
    /// The event is not registered for tier 2.
    #[error("event not registered for tier 2")]
    UnknownEvent,
    /// The caller's score is of another domain than the event's line.
    #[error("this event's line is ordered by {0}")]
    OrderMismatch(String),
    /// The tier-1 position is already used by another user.
    #[error("this tier-1 position is already in line for another user")]
    PositionTaken,
    /// A caller who may not join (known only by an expired tier-1 token) has no place here.
    #[error("no place in this line")]
    NoPlace,
    #[error("unexpected reply from the store: {0}")]
    Protocol(String),
}
