//! The options of `vwr loadtest`, their checks, and what follows from them alone: the event's
//! tier-1 configuration (when each visitor arrives is `arrival`).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::arrival::Curve;
use super::bots;
use super::faults::{Fault, FaultKind};
use crate::error::OptionsError;

/// What the load test drives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    /// The event is activated (open) at the start; visitors arrive over `--arrival`.
    #[default]
    Steady,
    /// A scheduled sale: the pre-queue opens a second after the start and the sale at
    /// `--prequeue-seconds`; `--before-open-share` of the visitors join the pre-queue, the rest
    /// arrive after the open over `--arrival`.
    Prequeue,
}

/// How tier 1 lets the line out (docs/outflow.md#modes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// `--batch-size` positions every `--interval-seconds`.
    #[default]
    Fixed,
    /// Enough positions per step that redeemed admissions follow `--target-per-minute`,
    /// whatever the share of no-shows.
    TargetArrivals,
}

/// A scripted operator action `SECONDS:advance=N` or `SECONDS:threshold=N`.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub at: Duration,
    pub what: ActionKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    Advance(u64),
    Threshold(u64),
}

impl std::str::FromStr for Action {
    type Err = OptionsError;

    fn from_str(s: &str) -> Result<Self, OptionsError> {
        let err = || OptionsError::Action(s.to_owned());
        let (at, rest) = s.split_once(':').ok_or_else(err)?;
        let (name, n) = rest.split_once('=').ok_or_else(err)?;
        let at = at.trim_end_matches('s').parse::<f64>().map_err(|_| err())?;
        let n = n.parse::<u64>().map_err(|_| err())?;
        let what = match name {
            "advance" => ActionKind::Advance(n),
            "threshold" => ActionKind::Threshold(n),
            _ => return Err(err()),
        };
        Ok(Action { at: Duration::from_secs_f64(at.max(0.0)), what })
    }
}

/// Options of `vwr loadtest`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadOptions {
    /// Base URL of the vwr under test (default: the global --url, else the address `vwr dev`
    /// recorded, else http://127.0.0.1:8080; docs/cli.md#addressing-a-stack).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Virtual visitors.
    #[arg(long, default_value_t = 10_000)]
    pub visitors: u64,
    /// Arrival curve.
    #[arg(long, value_enum, default_value = "burst")]
    pub arrival: Curve,
    /// Length of the arrival window for `uniform` and `late`.
    #[arg(long, default_value_t = 30.0)]
    pub arrival_seconds: f64,
    /// Event id (default: a fresh `lt…` id).
    #[arg(long)]
    pub event: Option<String>,
    /// Tier 1: positions admitted per step.
    #[arg(long, default_value_t = 2_000)]
    pub batch_size: u64,
    /// Tier 1: seconds per step.
    #[arg(long, default_value_t = 1)]
    pub interval_seconds: u64,
    /// Tier 1: counter shards.
    #[arg(long, default_value_t = 1)]
    pub shards: u32,
    /// Tier 1: the event's token life (`tokenTtlSeconds`; the server's default when absent).
    #[arg(long)]
    pub token_ttl_seconds: Option<u64>,
    /// Tier 1: `reentryGraceSeconds` (the server's default when absent).
    #[arg(long)]
    pub reentry_grace_seconds: Option<u64>,
    /// Tier 1: `maxSessionSeconds` (the server's default when absent). Shorter than the tier-2
    /// wait, the run checks that tier 2's hold keeps every place (docs/invariants.md#27).
    #[arg(long)]
    pub max_session_seconds: Option<u64>,
    /// Tier 2: concurrency threshold.
    #[arg(long, default_value_t = 1_000)]
    pub threshold: u64,
    /// Seconds an admitted visitor stays before leaving.
    #[arg(long, default_value_t = 2.0)]
    pub dwell_seconds: f64,
    /// Share of visitors who give up without leaving (0–1).
    #[arg(long, default_value_t = 0.0)]
    pub abandon_rate: f64,
    /// Admin bearer key (default: `VWR_ADMIN_KEY`, else the local dev state file).
    #[arg(long, env = "VWR_ADMIN_KEY", hide_env_values = true)]
    pub admin_key: Option<String>,
    /// Operator actions, e.g. `30:advance=1000,60:threshold=500` (seconds from the start).
    #[arg(long, value_delimiter = ',')]
    pub script: Vec<Action>,
    /// Faults `KIND@START+DURATION` (seconds): `redis@20+3`, `dynamodb@10+5`, `sqs@5+30`,
    /// `check403@40+60` (the tier-1 `check` answered with a WAF's or API Gateway's 403 by a proxy
    /// the visitors then go through).
    #[arg(long = "fault")]
    pub faults: Vec<Fault>,
    /// Shell command that stops Redis (for `redis@…` faults).
    #[arg(long)]
    pub redis_stop_cmd: Option<String>,
    /// Shell command that starts Redis again.
    #[arg(long)]
    pub redis_start_cmd: Option<String>,
    /// URL of a running `vwr aws-proxy` (the fault-injecting proxy vwr's `AWS_ENDPOINT_URL`
    /// points at): needed for `dynamodb`/`sqs` faults; its AWS call counts join the report.
    #[arg(long)]
    pub aws_proxy: Option<String>,
    /// Requests in flight at once from this harness (its own capacity; waiting for a slot is
    /// not counted as latency).
    #[arg(long, default_value_t = 256)]
    pub connections: usize,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 900)]
    pub max_seconds: u64,
    /// Also write the report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Scenario: `steady` (open at once) or `prequeue` (a scheduled sale with a pre-queue and a
    /// randomized open).
    #[arg(long, value_enum, default_value = "steady")]
    pub scenario: Scenario,
    /// `prequeue`: seconds from the start to the open (`openAt`); the pre-queue opens at 1 s.
    #[arg(long, default_value_t = 20)]
    pub prequeue_seconds: u64,
    /// `prequeue`: share of the visitors who arrive during the pre-queue (0–1).
    #[arg(long, default_value_t = 0.7)]
    pub before_open_share: f64,
    /// Visitors poll `check` at the server's hints (the waiting page before the status
    /// document) instead of reading the status document and calling `check` at their turn.
    #[arg(long)]
    pub legacy_polling: bool,
    /// Tier 2 as before the line document: visitors poll `status` at the server's place-based
    /// hints instead of reading the line document (ADR 0026's side-by-side run).
    #[arg(long)]
    pub legacy_tier2: bool,
    /// Also write the report as one self-contained HTML page with charts here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Tier 1's outflow mode: `fixed` (`--batch-size` every `--interval-seconds`) or
    /// `target-arrivals` (redeemed admissions per minute follow `--target-per-minute`).
    #[arg(long, value_enum, default_value = "fixed")]
    pub mode: Mode,
    /// `target-arrivals`: redeemed admissions per minute to aim at.
    #[arg(long)]
    pub target_per_minute: Option<u64>,
    /// `target-arrivals`: the most positions one step serves (the server's default when absent).
    #[arg(long)]
    pub max_batch_size: Option<u64>,
    /// Share of visitors who never come back for their turn (0–1): they close the tab right
    /// after joining, so they never `check` after their position is served.
    #[arg(long, default_value_t = 0.0)]
    pub no_show_rate: f64,
    /// Abusive actors beside the visitors (docs/abuse.md): their kinds by `--bot-kind`, in turn.
    #[arg(long, default_value_t = 0)]
    pub bots: u64,
    /// What the bots do: `multi-place`, `stolen-ticket`, `shared-cookie`, `no-pow` (comma-separated;
    /// all four when absent).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub bot_kind: Vec<bots::BotKind>,
    /// `multi-place` and `no-pow`: joins per bot.
    #[arg(long, default_value_t = 20)]
    pub bot_places: u64,
    /// Proof of work on `assign` (the event's `powDifficulty`; visitors and `multi-place` bots
    /// solve it).
    #[arg(long)]
    pub pow_difficulty: Option<u32>,
    /// The site's private enqueue key (`SITE_ENQUEUE_KEY` of `vwr keys generate`; the server needs
    /// the matching `VWR_ENQUEUE_JWKS`): the event requires enqueue tokens and every visitor and
    /// bot joins with its own account's token, signed here as the site would.
    #[arg(long, env = "SITE_ENQUEUE_KEY", hide_env_values = true)]
    pub enqueue_key: Option<String>,
}

/// The tier-1 configuration of the event (the body of `activate`, and the fields `schedule`
/// takes besides its times).
pub(crate) fn tier1_config(opts: &LoadOptions) -> Value {
    let mut c = json!({"batchSize": opts.batch_size, "intervalSeconds": opts.interval_seconds, "shards": opts.shards});
    if opts.mode == Mode::TargetArrivals {
        c["mode"] = json!("targetArrivals");
        c["targetArrivalsPerMinute"] = json!(opts.target_per_minute);
        if let Some(m) = opts.max_batch_size {
            c["maxBatchSize"] = json!(m);
        }
    }
    if let Some(d) = opts.pow_difficulty {
        c["powDifficulty"] = json!(d);
    }
    for (key, value) in [
        ("tokenTtlSeconds", opts.token_ttl_seconds),
        ("reentryGraceSeconds", opts.reentry_grace_seconds),
        ("maxSessionSeconds", opts.max_session_seconds),
    ] {
        if let Some(v) = value {
            c[key] = json!(v);
        }
    }
    if opts.enqueue_key.is_some() {
        c["enqueueTokenRequired"] = json!(true);
    }
    c
}

impl LoadOptions {
    /// The vwr under test: `--base-url`, else the local default (`vwr` fills it from the global
    /// address first).
    pub fn base_url(&self) -> &str {
        self.base_url.as_deref().unwrap_or(crate::client::DEFAULT_URL)
    }

    /// Refuses options the run cannot go with (before anything is sent).
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.visitors == 0 {
            return Err(OptionsError::NoVisitors);
        }
        if !(0.0..=1.0).contains(&self.abandon_rate) {
            return Err(OptionsError::NotAShare("--abandon-rate"));
        }
        if !(0.0..=1.0).contains(&self.no_show_rate) {
            return Err(OptionsError::NotAShare("--no-show-rate"));
        }
        if self.mode == Mode::TargetArrivals && self.target_per_minute.is_none_or(|t| t == 0) {
            return Err(OptionsError::NoTarget);
        }
        if self.scenario == Scenario::Prequeue {
            if self.prequeue_seconds < 4 {
                return Err(OptionsError::ShortPrequeue);
            }
            if !(0.0..=1.0).contains(&self.before_open_share) {
                return Err(OptionsError::NotAShare("--before-open-share"));
            }
            if self.no_show_rate > 0.0 {
                // A no-show in the pre-queue would never learn its drawn position, and the draw
                // could no longer be checked to be exactly 1..=P.
                return Err(OptionsError::NoShowsInPrequeue);
            }
        }
        if self.faults.iter().any(|f| f.kind == FaultKind::Redis)
            && (self.redis_stop_cmd.is_none() || self.redis_start_cmd.is_none())
        {
            return Err(OptionsError::RedisCommands);
        }
        if self.faults.iter().any(|f| matches!(f.kind, FaultKind::Dynamodb | FaultKind::Sqs))
            && self.aws_proxy.is_none()
        {
            return Err(OptionsError::NoAwsProxy);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_actions() {
        let a: Action = "30:advance=1000".parse().unwrap();
        assert_eq!(a.what, ActionKind::Advance(1000));
        assert_eq!(a.at, Duration::from_secs(30));
        assert!("x:advance=1".parse::<Action>().is_err());
        assert!("1:open=1".parse::<Action>().is_err());
    }
}
