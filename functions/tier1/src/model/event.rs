//! The event item and what it holds: its state, the close reason, the operator's message, the
//! schedule, the health hold and the audit entries. Written by the lifecycle (through the
//! service) and the advancer; read by every operation.

use serde::{Deserialize, Serialize};
use vwr_core::EventId;

use super::rates::{RATE_WINDOW_SECS, rate};
use super::{EventConfig, OutflowMode, PageSettings, Pass, Sample};

/// Where an event is in its life (docs/lifecycle.md#states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventState {
    Scheduled,
    Prequeue,
    Open,
    Paused,
    Closed,
    Inactive,
    /// Known but not gated until its alarm fires (docs/lifecycle.md#standby); then open.
    Standby,
}

impl EventState {
    pub const ALL: [EventState; 7] = [
        Self::Scheduled,
        Self::Prequeue,
        Self::Open,
        Self::Paused,
        Self::Closed,
        Self::Inactive,
        Self::Standby,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Prequeue => "prequeue",
            Self::Open => "open",
            Self::Paused => "paused",
            Self::Closed => "closed",
            Self::Inactive => "inactive",
            Self::Standby => "standby",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether the edge sends visitors of the event to the waiting room.
    pub fn gates(self) -> bool {
        matches!(self, Self::Prequeue | Self::Open | Self::Paused | Self::Closed)
    }
}

impl std::fmt::Display for EventState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a sale was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    SoldOut,
    Ended,
}

impl CloseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SoldOut => "sold_out",
            Self::Ended => "ended",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sold_out" => Some(Self::SoldOut),
            "ended" => Some(Self::Ended),
            _ => None,
        }
    }
}

/// Longest message text per language, in characters.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// The operator's message to the visitors, per language of the page (plain text); the page
/// shows the visitor's language, else English, else any (docs/api.md#post-vwrassigneventid).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub en: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ko: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ja: Option<String>,
    #[serde(default, rename = "zh-Hans", skip_serializing_if = "Option::is_none")]
    pub zh_hans: Option<String>,
    #[serde(default, rename = "zh-Hant", skip_serializing_if = "Option::is_none")]
    pub zh_hant: Option<String>,
}

impl Message {
    /// Checks lengths and characters; empty texts count as absent. `None` = nothing left
    /// (the message is cleared).
    pub fn normalize(self) -> Result<Option<Message>, String> {
        let clean = |lang: &str, t: Option<String>| -> Result<Option<String>, String> {
            let Some(t) = t else { return Ok(None) };
            let t = t.trim().to_owned();
            if t.is_empty() {
                return Ok(None);
            }
            if t.chars().count() > MAX_MESSAGE_CHARS {
                return Err(format!("message.{lang} must be at most {MAX_MESSAGE_CHARS} characters"));
            }
            if !super::text::is_plain(&t, true) {
                return Err(format!("message.{lang} must be plain text without control characters"));
            }
            Ok(Some(t))
        };
        let m = Message {
            en: clean("en", self.en)?,
            ko: clean("ko", self.ko)?,
            ja: clean("ja", self.ja)?,
            zh_hans: clean("zh-Hans", self.zh_hans)?,
            zh_hant: clean("zh-Hant", self.zh_hant)?,
        };
        Ok((m != Message::default()).then_some(m))
    }
}

/// Furthest ahead a schedule may be set.
pub const MAX_SCHEDULE_AHEAD_SECS: u64 = 366 * 86_400;

/// When the pre-queue starts, the sale opens and (optionally) ends; unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub prequeue_at: u64,
    pub open_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_at: Option<u64>,
}

/// Who holds the advancer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HoldBy {
    /// An operator or a health check through `PUT /api/admin/vwr/health/{eventId}`.
    Health,
    /// A configured CloudWatch alarm in ALARM (seen by the advancer; never stored).
    Alarm,
}

/// The advancer is held: nobody new is let in until the hold ends (docs/outflow.md#health-gate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hold {
    pub by: HoldBy,
    pub reason: String,
    pub since: u64,
}

/// Longest hold reason, in characters.
pub const MAX_HOLD_REASON_CHARS: usize = 200;

/// An entry of the audit trail (docs/lifecycle.md#admin-routes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Position in the event's trail (1, 2, 3, …): the order in which the changes were
    /// written. Two writes never get the same number: the second one fails and is retried.
    pub seq: u64,
    pub at: u64,
    pub actor: String,
    pub action: String,
    pub before: serde_json::Value,
    pub after: serde_json::Value,
}

/// The event item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    pub event: EventId,
    pub state: EventState,
    pub config: EventConfig,
    pub serving_counter: u64,
    /// Start (unix seconds) of the last advancer step applied: `now - now % intervalSeconds`
    /// of the run that applied it; 0 = none yet.
    pub last_step_at: u64,
    pub samples: Vec<Sample>,
    pub created_at: u64,
    pub updated_at: u64,
    /// Revision of the lifecycle fields (state, config, schedule, seed, message…): every
    /// lifecycle write requires the revision it read and stores the next one.
    pub rev: u64,
    pub schedule: Option<Schedule>,
    /// The draw's seed (hex); drawn at scheduling, revealed after the open.
    pub seed: Option<String>,
    /// Pre-queue joins per shard at the seal; `None` until the pre-queue is sealed.
    pub sealed_counts: Option<Vec<u64>>,
    pub opened_at: Option<u64>,
    pub close_reason: Option<CloseReason>,
    pub message: Option<Message>,
    /// Pre-queue joins so far, as last counted by the advancer (during the pre-queue).
    pub prequeue_size: u64,
    /// Positions handed out (the pre-queue included) as the advancer last counted them between
    /// steps (`issuedCount`): the status document's `issued` follows joins while the line
    /// stands still (no step samples then).
    pub issued_count: u64,
    /// Entries in the audit trail (the `seq` of the newest).
    pub audit_seq: u64,
    /// The health gate: set while the advancer is held.
    pub hold: Option<Hold>,
    /// When the line last started moving again (the end of a pause or hold).
    pub resumed_at: Option<u64>,
    /// The event's passes, expired ones dropped at each pass write (docs/passes.md).
    pub passes: Vec<Pass>,
    /// The CloudWatch alarm whose firing opens a `standby` event (docs/lifecycle.md#standby).
    pub standby_alarm: Option<String>,
    /// The page in the site's colours and words (docs/brand.md); none: the default page.
    pub page: Option<PageSettings>,
}

impl EventRecord {
    /// A new, empty event item in `state`.
    pub fn new(event: EventId, state: EventState, config: EventConfig, now: u64) -> Self {
        Self {
            event,
            state,
            config,
            serving_counter: 0,
            last_step_at: 0,
            samples: Vec::new(),
            created_at: now,
            updated_at: now,
            rev: 0,
            schedule: None,
            seed: None,
            sealed_counts: None,
            opened_at: None,
            close_reason: None,
            message: None,
            prequeue_size: 0,
            issued_count: 0,
            audit_seq: 0,
            hold: None,
            resumed_at: None,
            passes: Vec::new(),
            standby_alarm: None,
            page: None,
        }
    }

    /// Not `inactive`: the event is known to the advancer and listed as active.
    pub fn active(&self) -> bool {
        self.state != EventState::Inactive
    }

    /// Size P of the sealed pre-queue (0 if there is none).
    pub fn prequeue_total(&self) -> u64 {
        self.sealed_counts.as_ref().map(|c| c.iter().sum()).unwrap_or(0)
    }

    /// A pre-queue exists (a seed was drawn) but has not been sealed yet.
    pub fn needs_seal(&self) -> bool {
        self.seed.is_some() && self.sealed_counts.is_none()
    }

    /// The lifecycle fields as the audit trail shows them.
    pub fn audit_view(&self) -> serde_json::Value {
        serde_json::json!({
            "state": self.state,
            "config": self.config,
            "prequeueAt": self.schedule.map(|s| s.prequeue_at),
            "openAt": self.schedule.map(|s| s.open_at),
            "closeAt": self.schedule.and_then(|s| s.close_at),
            "message": self.message,
            "closeReason": self.close_reason,
            "hold": self.hold,
            "passes": self.passes,
            "standbyAlarm": self.standby_alarm,
            "page": self.page,
        })
    }

    /// Since when the line has moved without interruption (the outflow feedback's horizon).
    pub fn steady_since(&self) -> u64 {
        self.opened_at.unwrap_or(self.created_at).max(self.resumed_at.unwrap_or(0))
    }

    /// Positions admitted per second over the last [`RATE_WINDOW_SECS`], if known.
    ///
    /// `servingCounter` only changes through advances, and every advance records a sample, so
    /// the newest sample at or before `now - 60` is exactly the counter 60 s ago.
    pub fn served_per_second(&self, now: u64) -> Option<f64> {
        rate(&self.samples, now, self.serving_counter, |s| s.serving)
    }

    /// The rate wait estimates use (docs/api.md#poll-hints-and-estimates): positions served
    /// per second over the last minute once a whole minute of data exists and it is above
    /// zero; before that (a new sale, or a pause), the configured rate: `batchSize ÷
    /// intervalSeconds`, or in `targetArrivals` mode `targetArrivalsPerMinute ÷ 60` (served
    /// positions run at least that fast: every arrival was served); `None` for a manual-only
    /// event without data.
    pub fn estimate_rate(&self, now: u64) -> Option<f64> {
        let cutoff = now.checked_sub(RATE_WINDOW_SECS);
        let full_window = cutoff.is_some_and(|c| self.samples.iter().any(|s| s.at <= c));
        match self.served_per_second(now) {
            Some(r) if full_window && r > 0.0 => Some(r),
            _ => self.configured_rate(),
        }
    }

    /// Positions per second the configuration aims at (see [`Self::estimate_rate`]).
    fn configured_rate(&self) -> Option<f64> {
        let c = &self.config;
        match c.mode {
            OutflowMode::TargetArrivals if c.target_arrivals_per_minute > 0 => {
                Some(c.target_arrivals_per_minute as f64 / 60.0)
            }
            OutflowMode::TargetArrivals => None,
            OutflowMode::Fixed if c.batch_size > 0 => {
                Some(c.batch_size as f64 / c.interval_seconds.max(1) as f64)
            }
            OutflowMode::Fixed => None,
        }
    }
}
