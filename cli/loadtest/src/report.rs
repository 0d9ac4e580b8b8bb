//! The report of a load test: one typed value that `--json` writes, the terminal tables
//! (`text`) and the HTML page (`html`) show, and the safety check reads.
//!
//! Its JSON keys are a contract (scripts and dashboards read them): every key path and type is
//! listed in `cli/tests/fixtures/loadtest-report-keys.txt` and compared there. Figures unknown
//! in a run are written as `null`; the sections of optional features (`bots`, `open`,
//! `awsCalls`, `awsThrottledWrites`, `safety.prequeueViolations`, a fault's `responses`,
//! `effect` and `observed`) are left out when the run had none.
//!
//! The sections computed elsewhere keep their types beside their computation: [`Costs`] and
//! [`Estimate`] in `cost`, [`Outflow`] in `outflow`, [`Series`] in `series`, [`Open`] in `open`,
//! [`Bots`] in `bots`, [`FaultRecord`] in `faults`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::arrival::Curve;
pub use super::bots::{Bots, Defences, KindReport};
pub use super::cost::{CallCounts, Costs, ErrorHistogram, ErrorSummary, Estimate, NotCounted, Polling};
pub use super::faults::{FaultRecord, Outage};
pub use super::open::{Drawn, FirstChecks, Open, OpenRates, Positions};
pub use super::options::{Mode, Scenario};
pub use super::outflow::{Outflow, Steady, WholeRun};
pub use super::series::Series;
pub use super::stats::Percentiles;

/// What `vwr loadtest` found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub event: String,
    pub base_url: String,
    pub visitors: u64,
    pub scenario: Scenario,
    pub arrival: Curve,
    pub config: Config,
    /// From the start until the last visitor finished (or the hard stop).
    pub duration_seconds: f64,
    pub flow: Flow,
    pub throughput: Throughput,
    /// By endpoint name (`tier1.assign`, `bot.check`, …).
    pub latency: BTreeMap<String, Percentiles>,
    pub time_to_admission: TimeToAdmission,
    pub fairness: Fairness,
    /// The most tier-2 active users the sampler saw.
    pub max_active_seen: u64,
    pub degraded: Degraded,
    pub places_lost: PlacesLost,
    /// Why the lost visitors' runs ended (`closed`, `edge_refused`, …).
    pub lost_by: BTreeMap<String, u64>,
    pub faults: Vec<FaultRecord>,
    pub costs: Costs,
    pub tier2: Tier2,
    pub safety: Safety,
    /// With `--bots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bots: Option<Bots>,
    pub estimate: Estimate,
    pub outflow: Outflow,
    pub series: Series,
    /// With `--scenario prequeue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<Open>,
    /// With `--aws-proxy`: the AWS calls through the proxy during the run, by operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_calls: Option<BTreeMap<String, u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_throttled_writes: Option<u64>,
}

/// How visitors waited in tier 2 (ADR 0026).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier2Waiting {
    /// The line document (CDN-cached), `check` when its front passes the visitor.
    #[default]
    Line,
    /// `status` at the server's place-based hints (`--legacy-tier2`).
    Legacy,
}

/// The `tier2` section: how long admitted slots sat idle, and what waiting cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier2 {
    pub waiting: Tier2Waiting,
    /// Seconds from an admission (the server's `admittedAt`) to the first answer that told
    /// its visitor: a slot counted against the threshold while nobody used it.
    pub idle_slot_seconds_p50: Option<f64>,
    pub idle_slot_seconds_p90: Option<f64>,
    pub idle_slot_seconds_max: Option<f64>,
    /// Admissions measured (one per admitted visitor).
    pub idle_slots_measured: u64,
    pub line_reads_per_visitor: f64,
    /// Line document reads that reached the origin (tier-2 Lambda calls, in the costs).
    pub line_origin_fetches: u64,
    /// Share of the line document reads the CDN answered (`null` without reads).
    pub line_cache_hit_share: Option<f64>,
}

/// The options the run went with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    pub batch_size: u64,
    pub interval_seconds: u64,
    pub shards: u32,
    pub threshold: u64,
    pub dwell_seconds: f64,
    pub abandon_rate: f64,
    pub mode: Mode,
    pub target_per_minute: Option<u64>,
    pub max_batch_size: Option<u64>,
    pub no_show_rate: f64,
    pub arrival_seconds: f64,
}

/// How far the visitors got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flow {
    pub joined: u64,
    pub admitted_tier1: u64,
    pub passed_edge: u64,
    pub active_tier2: u64,
    pub done: u64,
    pub abandoned: u64,
    pub no_shows: u64,
    /// Still on their way when the run ended (not lost).
    pub unfinished: u64,
}

/// Sustained rates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Throughput {
    /// While joins were happening: first to last successful `assign`.
    pub joins_per_second: f64,
    pub checks_per_second: f64,
    pub requests_per_second: f64,
}

/// Seconds from arrival to the tier-1 admission and to the entry token.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeToAdmission {
    pub tier1_p50_seconds: Option<f64>,
    pub tier1_p99_seconds: Option<f64>,
    pub entry_p50_seconds: Option<f64>,
    pub entry_p99_seconds: Option<f64>,
    pub tier1_histogram: Histogram,
}

/// Visitors by seconds, in bins of `binSeconds` from 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Histogram {
    pub bin_seconds: f64,
    pub counts: Vec<u64>,
}

/// Admission order against position, per tier.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fairness {
    pub tier1: Order,
    pub tier2: Order,
}

/// How well one tier's admissions kept the order of the positions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// 1 = admitted in position order (`null` under 2 admissions).
    pub kendall_tau: Option<f64>,
    pub largest_inversion_positions: u64,
    /// In seconds of arrival.
    pub largest_inversion_seconds: f64,
}

/// Degradation the visitors saw (none of it a safety counter).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Degraded {
    /// 503s with Retry-After.
    pub responses_503: u64,
    pub network_errors: u64,
    pub unexpected_4xx: u64,
    pub edge_refused: u64,
    pub seats_refused: u64,
    pub rejoined_tier2: u64,
    /// Refusals that were no verdict on the place (the visitor kept it).
    pub transient_refusals: u64,
}

/// Places seen moving backwards.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacesLost {
    /// Visitors, each counted once (`safety.placesLostToFaults`).
    pub visitors: u64,
    /// Each time a place moved backwards, by how (`visitor::cause`).
    pub by_cause: BTreeMap<String, u64>,
    /// The tier-1 verdicts on the visitors' tickets, by code.
    pub verdicts: BTreeMap<String, u64>,
}

/// The safety counters (all must be zero).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Safety {
    /// Joined, did not abandon, and the system ended its run without getting it through
    /// (admitted, served and left). Visitors still on their way when the run ended are
    /// `flow.unfinished`, not lost.
    pub lost: u64,
    /// A second identity (jti) seen for one admission.
    pub double_admitted: u64,
    /// Samples or answers with more active users than the threshold.
    pub over_threshold_moments: u64,
    /// 5xx answers other than a 503 with Retry-After.
    pub server_errors: u64,
    /// Visitors whose place moved backwards (`placesLost.byCause` says how): a ticket replaced
    /// after a verdict the visitor did not cause, a position changed, an admitted ticket
    /// answered as waiting, a tier-2 place not given back after tier 2 stopped holding a
    /// visitor who never left, an active visitor demoted, a tier-1 position taken in tier 2.
    #[serde(default)]
    pub places_lost_to_faults: u64,
    /// `prequeue` only: draw violations — pre-queue positions not exactly 1..=P, a position
    /// seen twice, a post-open position ≤ P, the revealed seed not matching its commitment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prequeue_violations: Option<u64>,
}

impl Safety {
    pub fn clean(&self) -> bool {
        self.lost == 0
            && self.places_lost_to_faults == 0
            && self.double_admitted == 0
            && self.over_threshold_moments == 0
            && self.server_errors == 0
            && self.prequeue_violations.unwrap_or(0) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_lost_makes_the_run_unsafe() {
        let safe = Safety {
            lost: 0,
            double_admitted: 0,
            over_threshold_moments: 0,
            server_errors: 0,
            places_lost_to_faults: 0,
            prequeue_violations: None,
        };
        assert!(safe.clean());
        assert!(!Safety { places_lost_to_faults: 1, ..safe.clone() }.clean());
        let json = serde_json::to_value(&safe).unwrap();
        assert_eq!(json["placesLostToFaults"], 0);
        let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["doubleAdmitted", "lost", "overThresholdMoments", "placesLostToFaults", "serverErrors"],
            "the report's key names"
        );
    }
}
