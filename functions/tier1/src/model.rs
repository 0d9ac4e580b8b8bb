//! Tier-1 data: event configuration, counters, rate samples, redemptions and store errors.

use serde::{Deserialize, Serialize};
use vwr_core::EventId;

/// Defaults of the per-event settings (docs/settings.md#per-event-settings-tier-1).
pub const DEFAULT_BATCH_SIZE: u64 = 500;
pub const DEFAULT_INTERVAL_SECONDS: u64 = 10;
pub const DEFAULT_SHARDS: u32 = 1;
pub const DEFAULT_TOKEN_TTL_SECONDS: u64 = 600;
pub const DEFAULT_MAX_BATCH_SIZE: u64 = 5_000;
pub const DEFAULT_REENTRY_GRACE_SECONDS: u64 = 300;
pub const DEFAULT_MAX_SESSION_SECONDS: u64 = 1_800;

/// Limits on configuration values.
pub const MAX_BATCH_SIZE: u64 = 1_000_000;
pub const MAX_INTERVAL_SECONDS: u64 = 3_600;
pub const MAX_SHARDS: u32 = 64;
pub const MIN_TOKEN_TTL_SECONDS: u64 = 30;
pub const MAX_TOKEN_TTL_SECONDS: u64 = 86_400;
pub const MAX_TARGET_ARRIVALS_PER_MINUTE: u64 = 10_000_000;
pub const MAX_REENTRY_GRACE_SECONDS: u64 = 3_600;
pub const MIN_MAX_SESSION_SECONDS: u64 = 60;
pub const MAX_MAX_SESSION_SECONDS: u64 = 7 * 86_400;
/// Largest manual advance in one call.
pub const MAX_ADVANCE_BY: u64 = 10_000_000;
/// Window of the admission-rate figures.
pub const RATE_WINDOW_SECS: u64 = 60;

/// How the advancer sizes its steps (docs/outflow.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OutflowMode {
    /// `batchSize` positions every `intervalSeconds`.
    #[default]
    Fixed,
    /// Enough positions that redeemed admissions per minute converge on
    /// `targetArrivalsPerMinute`, despite no-shows; at most `maxBatchSize` per step.
    TargetArrivals,
}

impl OutflowMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::TargetArrivals => "targetArrivals",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fixed" => Some(Self::Fixed),
            "targetArrivals" => Some(Self::TargetArrivals),
            _ => None,
        }
    }
}

/// Configuration of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventConfig {
    /// Positions admitted per interval by the advancer (`fixed` mode); 0 = manual only.
    pub batch_size: u64,
    pub interval_seconds: u64,
    /// Counter items the positions are spread over; fixed at first activation.
    pub shards: u32,
    pub token_ttl_seconds: u64,
    pub mode: OutflowMode,
    /// `targetArrivals` mode: redeemed admissions per minute to aim at.
    pub target_arrivals_per_minute: u64,
    /// `targetArrivals` mode: the most positions one step may serve.
    pub max_batch_size: u64,
    /// An admitted visitor whose token expired less than this ago is admitted again at once.
    pub reentry_grace_seconds: u64,
    /// No token of an admission runs past its first admission + this.
    pub max_session_seconds: u64,
    /// Leading zero bits of the proof of work `assign` asks for; 0 = none (docs/abuse.md).
    pub pow_difficulty: u32,
    /// `assign` needs the site's enqueue token: one place per account (docs/abuse.md).
    pub enqueue_token_required: bool,
}

impl Default for EventConfig {
    fn default() -> Self {
        Self {
            batch_size: DEFAULT_BATCH_SIZE,
            interval_seconds: DEFAULT_INTERVAL_SECONDS,
            shards: DEFAULT_SHARDS,
            token_ttl_seconds: DEFAULT_TOKEN_TTL_SECONDS,
            mode: OutflowMode::Fixed,
            target_arrivals_per_minute: 0,
            max_batch_size: DEFAULT_MAX_BATCH_SIZE,
            reentry_grace_seconds: DEFAULT_REENTRY_GRACE_SECONDS,
            max_session_seconds: DEFAULT_MAX_SESSION_SECONDS,
            pow_difficulty: 0,
            enqueue_token_required: false,
        }
    }
}

/// The body of `activate`: every field optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigPatch {
    pub batch_size: Option<u64>,
    pub interval_seconds: Option<u64>,
    pub shards: Option<u32>,
    pub token_ttl_seconds: Option<u64>,
    pub mode: Option<OutflowMode>,
    pub target_arrivals_per_minute: Option<u64>,
    pub max_batch_size: Option<u64>,
    pub reentry_grace_seconds: Option<u64>,
    pub max_session_seconds: Option<u64>,
    pub pow_difficulty: Option<u32>,
    pub enqueue_token_required: Option<bool>,
}

impl ConfigPatch {
    /// Checks the given values against the limits; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(b) = self.batch_size
            && b > MAX_BATCH_SIZE
        {
            return Err(format!("batchSize must be between 0 and {MAX_BATCH_SIZE}"));
        }
        if let Some(i) = self.interval_seconds
            && !(1..=MAX_INTERVAL_SECONDS).contains(&i)
        {
            return Err(format!("intervalSeconds must be between 1 and {MAX_INTERVAL_SECONDS}"));
        }
        if let Some(s) = self.shards
            && !(1..=MAX_SHARDS).contains(&s)
        {
            return Err(format!("shards must be between 1 and {MAX_SHARDS}"));
        }
        if let Some(t) = self.token_ttl_seconds
            && !(MIN_TOKEN_TTL_SECONDS..=MAX_TOKEN_TTL_SECONDS).contains(&t)
        {
            return Err(format!(
                "tokenTtlSeconds must be between {MIN_TOKEN_TTL_SECONDS} and {MAX_TOKEN_TTL_SECONDS}"
            ));
        }
        if let Some(t) = self.target_arrivals_per_minute
            && !(1..=MAX_TARGET_ARRIVALS_PER_MINUTE).contains(&t)
        {
            return Err(format!(
                "targetArrivalsPerMinute must be between 1 and {MAX_TARGET_ARRIVALS_PER_MINUTE}"
            ));
        }
        if let Some(m) = self.max_batch_size
            && !(1..=MAX_BATCH_SIZE).contains(&m)
        {
            return Err(format!("maxBatchSize must be between 1 and {MAX_BATCH_SIZE}"));
        }
        if let Some(g) = self.reentry_grace_seconds
            && g > MAX_REENTRY_GRACE_SECONDS
        {
            return Err(format!("reentryGraceSeconds must be between 0 and {MAX_REENTRY_GRACE_SECONDS}"));
        }
        if let Some(s) = self.max_session_seconds
            && !(MIN_MAX_SESSION_SECONDS..=MAX_MAX_SESSION_SECONDS).contains(&s)
        {
            return Err(format!(
                "maxSessionSeconds must be between {MIN_MAX_SESSION_SECONDS} and {MAX_MAX_SESSION_SECONDS}"
            ));
        }
        if let Some(d) = self.pow_difficulty
            && d > crate::pow::MAX_DIFFICULTY
        {
            return Err(format!("powDifficulty must be between 0 and {}", crate::pow::MAX_DIFFICULTY));
        }
        Ok(())
    }

    /// Checks the configuration the patch leads to as a whole.
    pub fn validate_result(config: &EventConfig) -> Result<(), String> {
        if config.mode == OutflowMode::TargetArrivals && config.target_arrivals_per_minute == 0 {
            return Err("mode targetArrivals needs targetArrivalsPerMinute".into());
        }
        Ok(())
    }

    /// The configuration after applying this patch to `base`. `shards` is not changed here:
    /// the store enforces that it is fixed after creation.
    pub fn apply(&self, base: EventConfig) -> EventConfig {
        EventConfig {
            batch_size: self.batch_size.unwrap_or(base.batch_size),
            interval_seconds: self.interval_seconds.unwrap_or(base.interval_seconds),
            shards: base.shards,
            token_ttl_seconds: self.token_ttl_seconds.unwrap_or(base.token_ttl_seconds),
            mode: self.mode.unwrap_or(base.mode),
            target_arrivals_per_minute: self
                .target_arrivals_per_minute
                .unwrap_or(base.target_arrivals_per_minute),
            max_batch_size: self.max_batch_size.unwrap_or(base.max_batch_size),
            reentry_grace_seconds: self.reentry_grace_seconds.unwrap_or(base.reentry_grace_seconds),
            max_session_seconds: self.max_session_seconds.unwrap_or(base.max_session_seconds),
            pow_difficulty: self.pow_difficulty.unwrap_or(base.pow_difficulty),
            enqueue_token_required: self.enqueue_token_required.unwrap_or(base.enqueue_token_required),
        }
    }
}

/// A point of the serving-counter history, written with every advance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the epoch.
    pub at: u64,
    /// `servingCounter` after the advance.
    pub serving: u64,
    /// Positions issued when the advance was computed.
    pub issued: u64,
    /// Tickets redeemed (first admissions) when the advance was computed.
    #[serde(default)]
    pub redeemed: u64,
    /// Admissions the site ended early (`release`) when the advance was computed.
    #[serde(default)]
    pub released: u64,
}

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
}

impl EventState {
    pub const ALL: [EventState; 6] =
        [Self::Scheduled, Self::Prequeue, Self::Open, Self::Paused, Self::Closed, Self::Inactive];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Prequeue => "prequeue",
            Self::Open => "open",
            Self::Paused => "paused",
            Self::Closed => "closed",
            Self::Inactive => "inactive",
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

/// The operator's message to the visitors, per language (plain text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub en: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ko: Option<String>,
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
            if t.chars().any(|c| c.is_control() && c != '\n') {
                return Err(format!("message.{lang} must be plain text without control characters"));
            }
            Ok(Some(t))
        };
        let m = Message { en: clean("en", self.en)?, ko: clean("ko", self.ko)? };
        Ok(if m.en.is_none() && m.ko.is_none() { None } else { Some(m) })
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

fn rate(samples: &[Sample], now: u64, current: u64, pick: impl Fn(&Sample) -> u64) -> Option<f64> {
    let cutoff = now.checked_sub(RATE_WINDOW_SECS)?;
    let (base, dt) = match samples.iter().rev().find(|s| s.at <= cutoff) {
        Some(s) => (pick(s), RATE_WINDOW_SECS),
        None => {
            let first = samples.first()?;
            let dt = now.saturating_sub(first.at);
            if dt < 10 {
                return None;
            }
            (pick(first), dt)
        }
    };
    Some(current.saturating_sub(base) as f64 / dt as f64)
}

/// Joins per second over the last minute, from the samples (approximate: `issued` is only
/// sampled at advances).
pub fn joins_per_second(samples: &[Sample], now: u64, issued_now: u64) -> Option<f64> {
    rate(samples, now, issued_now, |s| s.issued)
}

/// How far back samples are kept: the outflow controller looks at the last few minutes
/// (docs/outflow.md).
pub const SAMPLE_HISTORY_SECS: u64 = 180;
/// Samples older than the rate window are thinned to one per this many seconds.
const THIN_EVERY_SECS: u64 = 10;

/// Appends `new` and keeps: every sample of the last [`RATE_WINDOW_SECS`], the newest one
/// before that (so the 60-s rate stays exact: the counter only changes at samples), and older
/// ones back to [`SAMPLE_HISTORY_SECS`] thinned to one per [`THIN_EVERY_SECS`].
pub fn push_sample(samples: &[Sample], new: Sample) -> Vec<Sample> {
    let history = new.at.saturating_sub(SAMPLE_HISTORY_SECS);
    let window = new.at.saturating_sub(RATE_WINDOW_SECS);
    let older: Vec<&Sample> = samples.iter().filter(|s| s.at < new.at).collect();
    let start = older.iter().rposition(|s| s.at <= history).unwrap_or(0);
    let window_base = older.iter().rposition(|s| s.at < window);
    let mut out: Vec<Sample> = Vec::with_capacity(older.len() + 1);
    for (i, s) in older.iter().enumerate().skip(start) {
        let thinnable = window_base.is_some_and(|b| i < b);
        if thinnable && out.last().is_some_and(|l| s.at < l.at + THIN_EVERY_SECS) {
            continue;
        }
        out.push(**s);
    }
    out.push(new);
    out
}

/// Per-shard counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardCounts {
    /// Regular joins handed out by shard k (index k-1).
    pub issued: Vec<u64>,
    /// Tickets redeemed (first admissions) whose position belongs to shard k.
    pub redeemed: Vec<u64>,
    /// Pre-queue joins taken by shard k.
    pub pre: Vec<u64>,
    /// Admissions the site ended early (`release`) whose position belongs to shard k.
    pub released: Vec<u64>,
}

impl ShardCounts {
    pub fn shards(&self) -> u64 {
        self.issued.len() as u64
    }

    /// Total positions handed out.
    pub fn total_issued(&self) -> u64 {
        self.issued.iter().sum()
    }

    pub fn total_redeemed(&self) -> u64 {
        self.redeemed.iter().sum()
    }

    pub fn total_pre(&self) -> u64 {
        self.pre.iter().sum()
    }

    pub fn total_released(&self) -> u64 {
        self.released.iter().sum()
    }

    /// The highest position handed out (0 if none).
    pub fn highest(&self) -> u64 {
        let n = self.shards();
        self.issued
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| position_of(i as u64 + 1, *c, n))
            .max()
            .unwrap_or(0)
    }

    /// Positions handed out and not yet served by `serving`.
    pub fn waiting(&self, serving: u64) -> u64 {
        let n = self.shards();
        self.issued
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let k = i as u64 + 1;
                let served = if serving < k { 0 } else { ((serving - k) / n + 1).min(*c) };
                c - served
            })
            .sum()
    }
}

/// The figures of an event's line once its pre-queue of `p` is sealed (`p` = 0 without one):
/// pre-queue positions are 1..=p, the regular join j is at `p + j`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub counts: &'a ShardCounts,
    pub p: u64,
}

impl Line<'_> {
    /// Positions handed out, the pre-queue included.
    pub fn issued(&self) -> u64 {
        self.p + self.counts.total_issued()
    }

    /// Highest position handed out (0 if none): the advancer's ceiling.
    pub fn highest(&self) -> u64 {
        match self.counts.highest() {
            0 => self.p,
            h => self.p + h,
        }
    }

    /// Positions handed out and not yet served by `serving`.
    pub fn waiting(&self, serving: u64) -> u64 {
        self.p.saturating_sub(serving) + self.counts.waiting(serving.saturating_sub(self.p))
    }
}

/// Position of the `count`-th ticket of shard `k` (1-based) of `n`: k, k+n, k+2n, …
pub fn position_of(k: u64, count: u64, n: u64) -> u64 {
    (count - 1) * n + k
}

/// Shard (1-based) that hands out `position` among `n`.
pub fn shard_of(position: u64, n: u64) -> u64 {
    (position - 1) % n + 1
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_positions_interleave() {
        assert_eq!((1..=3).map(|c| position_of(2, c, 4)).collect::<Vec<_>>(), vec![2, 6, 10]);
        for p in 1..100 {
            let k = shard_of(p, 4);
            assert!((1..=4).contains(&k));
            assert_eq!((p - k) % 4, 0);
        }
    }

    #[test]
    fn counts_highest_and_waiting() {
        // shards: 1 → 1,4,7 ; 2 → 2 ; 3 → none
        let c = ShardCounts {
            issued: vec![3, 1, 0],
            redeemed: vec![0, 0, 0],
            pre: vec![0, 0, 0],
            released: vec![0, 0, 0],
        };
        assert_eq!(c.total_issued(), 4);
        assert_eq!(c.highest(), 7);
        assert_eq!(c.waiting(0), 4);
        assert_eq!(c.waiting(1), 3);
        assert_eq!(c.waiting(2), 2);
        assert_eq!(c.waiting(4), 1);
        assert_eq!(c.waiting(7), 0);
        assert_eq!(c.waiting(100), 0);
        assert_eq!(
            ShardCounts { issued: vec![0], redeemed: vec![0], pre: vec![0], released: vec![0] }.highest(),
            0
        );
        // With a sealed pre-queue of 5 in front: positions 1..=5, then 6, 8, 9, 11, 12, …
        let line = Line { counts: &c, p: 5 };
        assert_eq!(line.issued(), 9);
        assert_eq!(line.highest(), 12);
        assert_eq!(line.waiting(0), 9);
        assert_eq!(line.waiting(5), 4);
        assert_eq!(line.waiting(6), 3);
        assert_eq!(line.waiting(12), 0);
        let empty =
            ShardCounts { issued: vec![0, 0], redeemed: vec![0, 0], pre: vec![2, 3], released: vec![0, 0] };
        assert_eq!(Line { counts: &empty, p: 5 }.highest(), 5);
        assert_eq!(Line { counts: &empty, p: 0 }.highest(), 0);
    }

    #[test]
    fn thinning_keeps_the_minute_rate_exact() {
        // A sample every second, the counter moving by an irregular amount each time.
        let mut s = Vec::new();
        let mut all = Vec::new();
        for t in 0..=400u64 {
            let sample = Sample { at: t, serving: t * t % 97 + t * 3, ..Default::default() };
            all.push(sample);
            s = push_sample(&s, sample);
        }
        assert!(s.len() < 90, "thinned: {}", s.len());
        assert!(s.first().is_some_and(|f| f.at <= 400 - SAMPLE_HISTORY_SECS));
        let last = all.last().copied().unwrap();
        for now in 400..470 {
            let rec = |samples: &[Sample]| EventRecord {
                serving_counter: last.serving,
                samples: samples.to_vec(),
                ..EventRecord::new(EventId::parse("e").unwrap(), EventState::Open, EventConfig::default(), 0)
            };
            assert_eq!(rec(&s).served_per_second(now), rec(&all).served_per_second(now), "at {now}");
        }
    }

    #[test]
    fn samples_keep_one_window_and_rate_is_exact() {
        let mut s = Vec::new();
        for t in (0..=200).step_by(10) {
            s = push_sample(&s, Sample { at: t, serving: t * 5, issued: t * 10, ..Default::default() });
        }
        assert_eq!(s.first().map(|x| x.at), Some(20), "three minutes of history");
        assert_eq!(s.len(), 19);
        let rec = EventRecord {
            serving_counter: 1000,
            last_step_at: 200,
            samples: s.clone(),
            updated_at: 200,
            ..EventRecord::new(EventId::parse("e").unwrap(), EventState::Open, EventConfig::default(), 0)
        };
        // At 205 the counter 60 s earlier (145) was the 140 sample: 700.
        assert_eq!(rec.served_per_second(205), Some((1000.0 - 700.0) / 60.0));
        assert_eq!(joins_per_second(&s, 205, 2000), Some((2000.0 - 1400.0) / 60.0));
        // A whole minute of data: the measured rate.
        assert_eq!(rec.estimate_rate(205), rec.served_per_second(205));
        let young = EventRecord { samples: vec![Sample { at: 100, ..Default::default() }], ..rec };
        // Less than a minute of data: the configured rate (500 per 10 s).
        assert_eq!(young.estimate_rate(120), Some(50.0));
        let manual = EventRecord { config: EventConfig { batch_size: 0, ..young.config }, ..young.clone() };
        assert_eq!(manual.estimate_rate(120), None);
        // targetArrivals: the target per minute, whatever batchSize says.
        let target = EventRecord {
            config: EventConfig {
                mode: OutflowMode::TargetArrivals,
                target_arrivals_per_minute: 1200,
                ..young.config
            },
            ..young.clone()
        };
        assert_eq!(target.estimate_rate(120), Some(20.0));
        assert_eq!(young.served_per_second(105), None);
        assert_eq!(young.served_per_second(120), Some(1000.0 / 20.0));
    }

    #[test]
    fn patch_validation_names_the_field() {
        assert!(
            ConfigPatch { shards: Some(0), ..Default::default() }.validate().unwrap_err().contains("shards")
        );
        assert!(ConfigPatch { interval_seconds: Some(0), ..Default::default() }.validate().is_err());
        assert!(ConfigPatch { token_ttl_seconds: Some(5), ..Default::default() }.validate().is_err());
        assert!(ConfigPatch { batch_size: Some(0), ..Default::default() }.validate().is_ok());
    }
}
