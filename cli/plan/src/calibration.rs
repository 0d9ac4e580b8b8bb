//! What a visitor costs, as `vwr loadtest` measured it: `calibration.json`, kept with the runs
//! that produced it (docs/rehearsal.md#where-the-figures-come-from).
//!
//! The measured sections (`visitors`, `config`, `costs`, `timeToAdmission`, `tier2`) carry the
//! keys of the `vwr loadtest --json` report, so [`Calibration::from_loadtest_report`] can
//! regenerate them from one run. `derived` (read from the code, each with its source in the
//! file's notes) and `functions` (Lambda memory and durations) are not measured by the load
//! test and are kept from the file in the repository.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::PlanError;

const EMBEDDED: &str = include_str!("../calibration.json");
/// The load test's visitors heartbeat every `min(dwell, 5 s)` (`cli/loadtest/src/visitor`).
const LOADTEST_HEARTBEAT_SECONDS: f64 = 5.0;
/// The load test's name for a heartbeat in `latency`.
const HEARTBEAT: &str = "tier2.heartbeat";

/// Per-visitor calls and what each call costs the services behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    pub source: Source,
    /// `arm64` or `x86_64`: which Lambda GB-second price applies.
    pub architecture: String,
    /// Visitors of the run (`visitors`).
    pub visitors: u64,
    /// The run's options that the plan rescales from (`config`).
    pub config: RunConfig,
    /// `costs` of the report.
    pub costs: MeasuredCosts,
    /// `timeToAdmission` of the report.
    pub time_to_admission: Tier1Wait,
    /// `tier2` of the report.
    pub tier2: Tier2Measured,
    /// Requests per visitor by endpoint (`latency.{endpoint}.requests` ÷ `visitors`:
    /// `tier1.assign`, `tier2.check`, `tier2.status`, `tier2.heartbeat`, `tier2.leave`, …);
    /// `null` when the runs behind the file did not keep them.
    #[serde(default)]
    pub requests_per_visitor: Option<BTreeMap<String, f64>>,
    /// Figures read from the code, not measured.
    pub derived: Derived,
    /// Lambda memory and average duration, by function name.
    pub functions: BTreeMap<String, FunctionProfile>,
}

/// Where the figures come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub runs: Vec<Run>,
    /// The command that regenerates the file.
    pub regenerate: String,
    pub notes: Vec<String>,
}

/// One `vwr loadtest` run behind the measured figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub command: String,
    /// Which figures the run gave.
    pub measured: String,
    pub date: String,
    pub machine: String,
}

/// The run's options the plan rescales from (`config` of the report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunConfig {
    pub dwell_seconds: f64,
}

/// The `costs` section of the report, plus `assignsPerVisitor` (`costs.calls.assign` ÷
/// `visitors`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeasuredCosts {
    pub assigns_per_visitor: f64,
    pub tier1_lambda_calls_per_visitor: f64,
    pub tier2_lambda_calls_per_visitor: f64,
    pub status_fetches_per_visitor: f64,
    pub origin_status_fetches_per_second: f64,
    pub checks_per_visitor: f64,
    pub status_cache_hit_share: Option<f64>,
}

/// How long the run's visitors waited in tier 1 (`timeToAdmission`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier1Wait {
    pub tier1_p50_seconds: f64,
}

/// The `tier2` section of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier2Measured {
    pub line_reads_per_visitor: f64,
    pub line_cache_hit_share: Option<f64>,
}

/// Figures read from the code and the docs; `calibration.json`'s notes say where each comes
/// from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Derived {
    /// Writes to a shard item per `assign`.
    pub counter_writes_per_assign: f64,
    /// Writes to a shard item per admission (the `check` at the turn).
    pub counter_writes_per_admission: f64,
    pub dynamodb_writes_per_assign: f64,
    pub dynamodb_writes_per_admission: f64,
    pub dynamodb_reads_per_check: f64,
    pub advancer_interval_seconds: f64,
    /// Seconds between an admitted page's `status` calls (entry-token renewals).
    pub heartbeat_seconds: f64,
    /// The longest interval between reads of the status document.
    pub status_poll_max_seconds: f64,
    pub redis_ops_per_tier2_call: f64,
    pub redis_ops_per_admission: f64,
    /// ElastiCache Serverless ECPUs per Redis operation.
    pub ecpu_per_redis_op: f64,
    pub redis_bytes_per_user: f64,
    pub sqs_messages_per_admission: f64,
    pub sqs_messages_per_request: f64,
    /// Calls to protected APIs through the gate per admitted visitor.
    pub protected_calls_per_visitor: f64,
    /// Requests through the edge's CloudFront Function per admitted visitor.
    pub edge_requests_per_visitor: f64,
    pub kvs_reads_per_edge_request: f64,
    /// Requests for the waiting page and its assets per visitor.
    pub page_requests_per_visitor: f64,
    pub page_bytes_per_visitor: f64,
    /// Bytes of one status or line document.
    pub status_document_bytes: f64,
    /// Log bytes ingested per API request (access log and function log).
    pub log_bytes_per_request: f64,
}

/// One Lambda function's memory and average billed duration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionProfile {
    pub duration_ms: f64,
    pub memory_mb: f64,
}

/// The functions every calibration must describe.
pub(crate) const FUNCTIONS: [&str; 5] =
    ["tier1-api", "tier1-advancer", "tier2-api", "tier2-worker", "tier2-authorizer"];

impl Calibration {
    /// The calibration kept in the repository (`cli/plan/calibration.json`).
    pub fn embedded() -> Result<Self, PlanError> {
        Self::from_json(EMBEDDED)
    }

    /// A calibration in the shape of `calibration.json`, checked: every figure finite and
    /// ≥ 0, every function described.
    pub fn from_json(text: &str) -> Result<Self, PlanError> {
        let c: Self = serde_json::from_str(text).map_err(|e| PlanError::Calibration(e.to_string()))?;
        c.check()?;
        Ok(c)
    }

    fn check(&self) -> Result<(), PlanError> {
        let value = serde_json::to_value(self).map_err(|e| PlanError::Calibration(e.to_string()))?;
        for section in
            ["config", "costs", "timeToAdmission", "tier2", "requestsPerVisitor", "derived", "functions"]
        {
            check_numbers(section, &value[section])?;
        }
        if self.visitors == 0 {
            return Err(PlanError::Calibration("visitors is 0".to_owned()));
        }
        for f in FUNCTIONS {
            if !self.functions.contains_key(f) {
                return Err(PlanError::Calibration(format!("functions.{f} is missing")));
            }
        }
        for (name, divisor) in [
            ("derived.advancerIntervalSeconds", self.derived.advancer_interval_seconds),
            ("derived.heartbeatSeconds", self.derived.heartbeat_seconds),
            ("derived.statusPollMaxSeconds", self.derived.status_poll_max_seconds),
            ("derived.sqsMessagesPerRequest", self.derived.sqs_messages_per_request),
        ] {
            if divisor <= 0.0 {
                return Err(PlanError::Calibration(format!("{name} must be above 0")));
            }
        }
        match self.architecture.as_str() {
            "arm64" | "x86_64" => Ok(()),
            other => Err(PlanError::Calibration(format!("architecture {other:?}: arm64 or x86_64"))),
        }
    }

    /// The calibration of one `vwr loadtest --json` report: its `visitors`, `config`,
    /// `costs`, `timeToAdmission` and `tier2` figures, with `derived`, `functions` and
    /// `architecture` kept from the embedded file. The run's command line is rebuilt from the
    /// report's options; its `date` and `machine` are left empty for the caller to fill
    /// (docs/rehearsal.md#regenerating-the-calibration).
    pub fn from_loadtest_report(report: &Value) -> Result<Self, PlanError> {
        let base = Self::embedded()?;
        let visitors = report["visitors"]
            .as_u64()
            .filter(|v| *v > 0)
            .ok_or(PlanError::ReportField { key: "visitors" })?;
        let num = |key: &'static str, v: &Value| v.as_f64().ok_or(PlanError::ReportField { key });
        let costs = &report["costs"];
        let assigns = num("costs.calls.assign", &costs["calls"]["assign"])?;
        let c = Self {
            source: Source {
                runs: vec![Run {
                    command: command_line(report, visitors),
                    measured: "visitors, config.dwellSeconds, costs.*, timeToAdmission.tier1P50Seconds, tier2.lineReadsPerVisitor, tier2.lineCacheHitShare".to_owned(),
                    date: String::new(),
                    machine: String::new(),
                }],
                regenerate: base.source.regenerate.clone(),
                notes: base.source.notes.clone(),
            },
            architecture: base.architecture.clone(),
            visitors,
            config: RunConfig { dwell_seconds: num("config.dwellSeconds", &report["config"]["dwellSeconds"])? },
            costs: MeasuredCosts {
                assigns_per_visitor: round3(assigns / visitors as f64),
                tier1_lambda_calls_per_visitor: num(
                    "costs.tier1LambdaCallsPerVisitor",
                    &costs["tier1LambdaCallsPerVisitor"],
                )?,
                tier2_lambda_calls_per_visitor: num(
                    "costs.tier2LambdaCallsPerVisitor",
                    &costs["tier2LambdaCallsPerVisitor"],
                )?,
                status_fetches_per_visitor: num("costs.statusFetchesPerVisitor", &costs["statusFetchesPerVisitor"])?,
                origin_status_fetches_per_second: num(
                    "costs.originStatusFetchesPerSecond",
                    &costs["originStatusFetchesPerSecond"],
                )?,
                checks_per_visitor: num("costs.checksPerVisitor", &costs["checksPerVisitor"])?,
                status_cache_hit_share: costs["statusCacheHitShare"].as_f64(),
            },
            time_to_admission: Tier1Wait {
                tier1_p50_seconds: report["timeToAdmission"]["tier1P50Seconds"].as_f64().unwrap_or(0.0),
            },
            tier2: Tier2Measured {
                line_reads_per_visitor: num("tier2.lineReadsPerVisitor", &report["tier2"]["lineReadsPerVisitor"])?,
                line_cache_hit_share: report["tier2"]["lineCacheHitShare"].as_f64(),
            },
            requests_per_visitor: report["latency"].as_object().map(|endpoints| {
                endpoints
                    .iter()
                    .filter_map(|(name, p)| {
                        p["requests"].as_f64().map(|n| (name.clone(), round3(n / visitors as f64)))
                    })
                    .collect()
            }),
            derived: base.derived.clone(),
            functions: base.functions.clone(),
        };
        c.check()?;
        Ok(c)
    }

    /// Heartbeats (`status` while admitted) per visitor in the measured run: counted
    /// (`requestsPerVisitor["tier2.heartbeat"]`) when the file has them, else as the load test
    /// sends them, one every `min(dwell, 5 s)` until the dwell ends.
    pub fn measured_heartbeats_per_visitor(&self) -> f64 {
        if let Some(n) = self.requests_per_visitor.as_ref().and_then(|r| r.get(HEARTBEAT)) {
            return *n;
        }
        let dwell = self.config.dwell_seconds;
        if dwell <= 0.0 { 0.0 } else { (dwell / dwell.min(LOADTEST_HEARTBEAT_SECONDS)).ceil() }
    }

    /// Tier-2 calls per visitor besides heartbeats: check-in, line document reads that reached
    /// the origin, leave.
    pub fn tier2_calls_besides_heartbeats(&self) -> f64 {
        (self.costs.tier2_lambda_calls_per_visitor - self.measured_heartbeats_per_visitor()).max(0.0)
    }

    /// The profile of a function (one of the five every calibration has).
    pub(crate) fn function(&self, name: &str) -> FunctionProfile {
        self.functions.get(name).copied().unwrap_or(FunctionProfile { duration_ms: 0.0, memory_mb: 0.0 })
    }
}

/// The `vwr loadtest` command line of a report's options.
fn command_line(report: &Value, visitors: u64) -> String {
    let config = &report["config"];
    let mut cmd = format!("vwr loadtest --visitors {visitors}");
    if let Some(a) = report["arrival"].as_str() {
        cmd.push_str(&format!(" --arrival {a}"));
    }
    for (flag, key) in [
        ("--arrival-seconds", "arrivalSeconds"),
        ("--batch-size", "batchSize"),
        ("--interval-seconds", "intervalSeconds"),
        ("--shards", "shards"),
        ("--threshold", "threshold"),
        ("--dwell-seconds", "dwellSeconds"),
    ] {
        if let Some(n) = config[key].as_f64() {
            cmd.push_str(&format!(" {flag} {n}"));
        }
    }
    if report["scenario"].as_str() == Some("prequeue") {
        cmd.push_str(" --scenario prequeue");
    }
    if report["costs"]["polling"].as_str() == Some("legacy") {
        cmd.push_str(" --legacy-polling");
    }
    if report["tier2"]["waiting"].as_str() == Some("legacy") {
        cmd.push_str(" --legacy-tier2");
    }
    cmd
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn check_numbers(path: &str, value: &Value) -> Result<(), PlanError> {
    match value {
        Value::Object(map) => map.iter().try_for_each(|(k, v)| check_numbers(&format!("{path}.{k}"), v)),
        Value::Null => Ok(()),
        Value::Number(n) if n.as_f64().is_some_and(|x| x >= 0.0) => Ok(()),
        other => Err(PlanError::Calibration(format!("{path} is {other}, not a figure ≥ 0"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A report as `vwr loadtest --json` writes it (the keys of `cli/loadtest/src/report.rs`
    /// and `cost.rs`), trimmed to the sections a calibration reads and a few it does not.
    fn report() -> Value {
        json!({
            "event": "lt-1",
            "baseUrl": "http://127.0.0.1:8080",
            "visitors": 4000,
            "scenario": "steady",
            "arrival": "uniform",
            "config": {
                "batchSize": 50, "intervalSeconds": 1, "shards": 4, "threshold": 2000,
                "dwellSeconds": 12.0, "abandonRate": 0.0, "mode": "fixed", "targetPerMinute": null,
                "maxBatchSize": null, "noShowRate": 0.0, "arrivalSeconds": 5.0
            },
            "durationSeconds": 140.2,
            "latency": {
                "tier1.assign": {"requests": 4020, "p50Ms": 4.8, "p95Ms": 10.8, "p99Ms": 18.6, "maxMs": 30.0},
                "tier2.check": {"requests": 4000, "p50Ms": 0.5, "p95Ms": 2.2, "p99Ms": 18.0, "maxMs": 20.0},
                "tier2.heartbeat": {"requests": 10000, "p50Ms": 0.6, "p95Ms": 1.6, "p99Ms": 4.6, "maxMs": 9.0}
            },
            "timeToAdmission": {
                "tier1P50Seconds": 40.0, "tier1P99Seconds": 80.0, "entryP50Seconds": 41.0,
                "entryP99Seconds": 82.0, "tier1Histogram": {"binSeconds": 5.0, "counts": [1, 2]}
            },
            "costs": {
                "polling": "page",
                "tier1LambdaCallsPerVisitor": 2.03,
                "tier2LambdaCallsPerVisitor": 5.5,
                "statusFetchesPerVisitor": 10.5,
                "originStatusFetchesPerSecond": 0.97,
                "checksPerVisitor": 1.0,
                "statusCacheHitShare": 0.998,
                "calls": {
                    "assign": 4020, "check": 4000, "statusFetches": 42000, "statusCacheHits": 41916,
                    "statusOriginFetches": 84, "statusWithoutCdn": 0, "tier1": 8104, "tier2": 22000
                },
                "notCounted": {"tier1Rechecks": 4000, "why": "…"}
            },
            "tier2": {
                "waiting": "line", "idleSlotSecondsP50": 0.8, "idleSlotSecondsP90": 1.3,
                "idleSlotSecondsMax": 2.0, "idleSlotsMeasured": 4000, "lineReadsPerVisitor": 20.0,
                "lineOriginFetches": 60, "lineCacheHitShare": 0.99925
            }
        })
    }

    #[test]
    fn the_embedded_calibration_parses_with_its_runs_and_every_function() {
        let c = Calibration::embedded().unwrap();
        assert_eq!(c.source.runs.len(), 2);
        assert!(c.source.runs.iter().all(|r| r.command.starts_with("vwr loadtest ") && !r.date.is_empty()));
        assert_eq!(c.costs.tier1_lambda_calls_per_visitor, 2.02, "docs/performance.md, page polling");
        assert_eq!(c.costs.tier2_lambda_calls_per_visitor, 3.87, "docs/performance.md, line document");
        for f in FUNCTIONS {
            assert!(c.functions[f].duration_ms > 0.0, "{f}");
        }
        // Default dwell 2 s: one heartbeat, so 2.87 tier-2 calls besides heartbeats.
        assert_eq!(c.measured_heartbeats_per_visitor(), 1.0);
        assert!((c.tier2_calls_besides_heartbeats() - 2.87).abs() < 1e-9);
    }

    #[test]
    fn the_embedded_keys_are_the_reports_keys() {
        let file: Value = serde_json::from_str(EMBEDDED).unwrap();
        let report = report();
        for (section, keys) in
            [("costs", &file["costs"]), ("tier2", &file["tier2"]), ("config", &file["config"])]
        {
            for key in keys.as_object().unwrap().keys() {
                if key != "assignsPerVisitor" {
                    assert!(report[section].get(key).is_some(), "{section}.{key} is not a report key");
                }
            }
        }
        assert!(report["timeToAdmission"].get("tier1P50Seconds").is_some());
    }

    #[test]
    fn a_loadtest_report_regenerates_the_measured_figures() {
        let c = Calibration::from_loadtest_report(&report()).unwrap();
        assert_eq!(c.visitors, 4000);
        assert_eq!(c.costs.assigns_per_visitor, 1.005, "costs.calls.assign / visitors");
        assert_eq!(c.costs.tier1_lambda_calls_per_visitor, 2.03);
        assert_eq!(c.costs.tier2_lambda_calls_per_visitor, 5.5);
        assert_eq!(c.costs.status_fetches_per_visitor, 10.5);
        assert_eq!(c.costs.origin_status_fetches_per_second, 0.97);
        assert_eq!(c.costs.status_cache_hit_share, Some(0.998));
        assert_eq!(c.time_to_admission.tier1_p50_seconds, 40.0);
        assert_eq!(c.tier2.line_reads_per_visitor, 20.0);
        assert_eq!(c.config.dwell_seconds, 12.0);
        // Counted: 10,000 heartbeats of 4,000 visitors (not the 3 that 12 s at one every 5 s
        // would give).
        let by_endpoint = c.requests_per_visitor.clone().unwrap();
        assert_eq!(by_endpoint["tier1.assign"], 1.005);
        assert_eq!(c.measured_heartbeats_per_visitor(), 2.5);
        let mut uncounted = c.clone();
        uncounted.requests_per_visitor = None;
        assert_eq!(uncounted.measured_heartbeats_per_visitor(), 3.0, "12 s at one every 5 s");
        assert_eq!(
            c.source.runs[0].command,
            "vwr loadtest --visitors 4000 --arrival uniform --arrival-seconds 5 --batch-size 50 --interval-seconds 1 --shards 4 --threshold 2000 --dwell-seconds 12"
        );
        let base = Calibration::embedded().unwrap();
        assert_eq!((c.derived, c.functions), (base.derived, base.functions), "kept from the file");
        // What it writes parses back.
        let text =
            serde_json::to_string_pretty(&Calibration::from_loadtest_report(&report()).unwrap()).unwrap();
        assert!(Calibration::from_json(&text).is_ok());
    }

    #[test]
    fn a_legacy_run_says_so_in_its_command_line() {
        let mut r = report();
        r["costs"]["polling"] = json!("legacy");
        r["tier2"]["waiting"] = json!("legacy");
        let c = Calibration::from_loadtest_report(&r).unwrap();
        assert!(c.source.runs[0].command.ends_with(" --legacy-polling --legacy-tier2"));
    }

    #[test]
    fn a_report_without_a_figure_is_refused_by_its_key() {
        let mut r = report();
        r["costs"].as_object_mut().unwrap().remove("tier2LambdaCallsPerVisitor");
        assert_eq!(
            Calibration::from_loadtest_report(&r).unwrap_err().to_string(),
            "load-test report: costs.tier2LambdaCallsPerVisitor is missing or not a number"
        );
        let mut r = report();
        r["visitors"] = json!(0);
        assert_eq!(Calibration::from_loadtest_report(&r), Err(PlanError::ReportField { key: "visitors" }));
    }

    #[test]
    fn a_negative_figure_or_a_missing_function_is_refused() {
        let negative = EMBEDDED.replacen("\"checksPerVisitor\": 1.0", "\"checksPerVisitor\": -1.0", 1);
        assert_ne!(negative, EMBEDDED);
        assert!(
            Calibration::from_json(&negative).unwrap_err().to_string().contains("costs.checksPerVisitor")
        );
        let mut c: Value = serde_json::from_str(EMBEDDED).unwrap();
        c["functions"].as_object_mut().unwrap().remove("tier2-worker");
        assert_eq!(
            Calibration::from_json(&c.to_string()).unwrap_err().to_string(),
            "calibration: functions.tier2-worker is missing"
        );
    }
}
