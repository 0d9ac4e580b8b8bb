//! Tier-1 data: event configuration, counters, rate samples, redemptions and store errors.
//! No I/O; the stores read and write these types.
//!
//! - `config.rs`: the per-event settings, their defaults and limits, the `activate` patch;
//! - `event.rs`: the event item (state, schedule, message, hold, audit entries);
//! - `rates.rs`: the serving-counter samples and the rates read from them;
//! - `line.rs`: shard counters and positions;
//! - `pass.rs`: the records of passes (docs/passes.md);
//! - `page.rs`: the page in the site's colours and words, and its checks (docs/brand.md);
//! - here: a redemption (an admission) and the store's errors.

mod config;
mod event;
mod line;
mod page;
mod pass;
mod rates;
pub mod text;

pub use config::{
    ConfigPatch, DEFAULT_BATCH_SIZE, DEFAULT_INTERVAL_SECONDS, DEFAULT_MAX_BATCH_SIZE,
    DEFAULT_MAX_SESSION_SECONDS, DEFAULT_REENTRY_GRACE_SECONDS, DEFAULT_SHARDS, DEFAULT_TOKEN_TTL_SECONDS,
    EventConfig, MAX_ADVANCE_BY, MAX_BATCH_SIZE, MAX_INTERVAL_SECONDS, MAX_MAX_SESSION_SECONDS,
    MAX_REENTRY_GRACE_SECONDS, MAX_SHARDS, MAX_TARGET_ARRIVALS_PER_MINUTE, MAX_TOKEN_TTL_SECONDS,
    MIN_MAX_SESSION_SECONDS, MIN_TOKEN_TTL_SECONDS, OutflowMode,
};
pub use event::{
    AuditEntry, CloseReason, EventRecord, EventState, Hold, HoldBy, MAX_HOLD_REASON_CHARS, MAX_MESSAGE_CHARS,
    MAX_SCHEDULE_AHEAD_SECS, Message, Schedule,
};
pub use line::{Line, ShardCounts, position_of, shard_of};
pub use page::{
    MAX_PAGE_MESSAGE_CHARS, MAX_PAGE_TITLE_CHARS, MAX_PAGE_URL_CHARS, MIN_ACCENT_CONTRAST, MIN_TEXT_CONTRAST,
    PAGE_LANGUAGES, PageColors, PageError, PageLinks, PageSettings, contrast,
};
pub use pass::{
    MAX_LIVE_PASSES, MAX_PASS_LABEL_CHARS, MAX_PASS_TTL_SECS, MIN_PASS_TTL_SECS, PASS_ID_LEN, Pass,
    PassError, add_pass, revoke_pass, revoked_live, validate_pass,
};
pub use rates::{RATE_WINDOW_SECS, SAMPLE_HISTORY_SECS, Sample, joins_per_second, push_sample};

/// Result of redeeming a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redemption {
    pub jti: String,
    /// The first admission: the start of the session.
    pub redeemed_at: u64,
    /// The current token of the admission: issued at, expires at. `None` on records written
    /// before sessions existed: then the only token is `redeemed_at + tokenTtlSeconds`.
    pub token: Option<(u64, u64)>,
    /// When the site ended the session early (`release`).
    pub released_at: Option<u64>,
    /// True for the first redemption of this ticket (or a renewal just written).
    pub fresh: bool,
}

impl Redemption {
    /// The current token's issue and expiry times.
    pub fn token_window(&self, token_ttl_seconds: u64) -> (u64, u64) {
        self.token.unwrap_or((self.redeemed_at, self.redeemed_at + token_ttl_seconds))
    }
}

/// A store failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The backing service is unreachable, throttling or failing: retry later (503).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("event not found")]
    NotFound,
    /// Stored data cannot be read (a bug or manual tampering).
    #[error("corrupt store data: {0}")]
    Corrupt(String),
}
