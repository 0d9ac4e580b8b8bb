//! The configuration of an event: its outflow mode, the per-event settings with their defaults
//! and limits (docs/settings.md#per-event-settings-tier-1), and the patch `activate` and
//! `schedule` apply. Read by the lifecycle, the service and both stores.

use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    use super::*;

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
