//! What the visitors cost and how good their wait estimates were: the `costs` and `estimate`
//! sections of the report.
//!
//! Costs count Lambda invocations as they would be in AWS: every `assign` and `check` is a
//! tier-1 call; a status document fetch is one only when it reached the origin (the CDN's
//! `X-Cache` said `Miss`, or there was no CDN in front), since CloudFront answers the rest
//! (docs/lifecycle.md#the-public-status-document); every `/api/queue/*` request is a tier-2
//! call (no CDN there). The harness's re-check of admitted tickets is a safety probe, not
//! page behaviour, and is reported apart.

use serde_json::{Value, json};

use super::ctx::{ASSIGN, CHECK, Ctx, RECHECK};
use super::stats::{Counters, quantile};
use super::visitor::Outcome;

/// The tier-2 endpoints a visitor calls (all under `/api/queue/`).
const TIER2: [&str; 4] = ["tier2.check", "tier2.status", "tier2.heartbeat", "tier2.leave"];
/// Waits shorter than this are left out of the estimate error: a percentage of a tiny wait
/// says nothing about the estimate.
pub const MIN_REAL_WAIT_SECONDS: f64 = 5.0;
/// Visitors who joined at least this long after the sale opened: the estimate then rests on a
/// minute of measured rate rather than the configured one.
pub const FIRST_MINUTE_SECONDS: f64 = 60.0;
/// Width of the estimate error histogram's bins, in percent; the last bin holds ≥ 100 %.
pub const ERROR_BIN_PCT: f64 = 5.0;
const ERROR_BINS: usize = 21;

fn round(x: f64, places: i32) -> f64 {
    let m = 10f64.powi(places);
    (x * m).round() / m
}

/// Cumulative call counts, as the per-second series samples them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calls {
    pub assign: u64,
    pub check: u64,
    pub status_hits: u64,
    /// Fetches the CDN sent to the origin.
    pub status_misses: u64,
    /// Fetches answered without `X-Cache` (no CDN): origin calls too.
    pub status_uncached: u64,
    pub tier2: u64,
    pub rechecks: u64,
}

impl Calls {
    pub fn of(ctx: &Ctx) -> Self {
        let (l, c) = (&ctx.latencies, &ctx.counters);
        Self {
            assign: l.count(ASSIGN),
            check: l.count(CHECK),
            status_hits: Counters::get(&c.status_hits),
            status_misses: Counters::get(&c.status_misses),
            status_uncached: Counters::get(&c.status_uncached),
            tier2: TIER2.iter().map(|e| l.count(e)).sum(),
            rechecks: l.count(RECHECK),
        }
    }

    pub fn status_fetches(&self) -> u64 {
        self.status_hits + self.status_misses + self.status_uncached
    }

    pub fn status_origin(&self) -> u64 {
        self.status_misses + self.status_uncached
    }

    /// Tier-1 Lambda invocations: `assign`, `check`, and status fetches that reached the origin.
    pub fn tier1(&self) -> u64 {
        self.assign + self.check + self.status_origin()
    }
}

/// The `costs` section. Per visitor = over all `visitors` of the run.
pub fn costs(ctx: &Ctx, visitors: u64, elapsed: f64) -> Value {
    let c = Calls::of(ctx);
    let n = visitors.max(1) as f64;
    let fetches = c.status_fetches();
    json!({
        "polling": if ctx.legacy_polling { "legacy" } else { "page" },
        "tier1LambdaCallsPerVisitor": round(c.tier1() as f64 / n, 3),
        "tier2LambdaCallsPerVisitor": round(c.tier2 as f64 / n, 3),
        "statusFetchesPerVisitor": round(fetches as f64 / n, 3),
        "originStatusFetchesPerSecond": round(c.status_origin() as f64 / elapsed.max(1e-3), 2),
        "checksPerVisitor": round(c.check as f64 / n, 3),
        "statusCacheHitShare": (fetches > 0).then(|| round(c.status_hits as f64 / fetches as f64, 4)),
        "calls": {
            "assign": c.assign,
            "check": c.check,
            "statusFetches": fetches,
            "statusCacheHits": c.status_hits,
            "statusOriginFetches": c.status_origin(),
            "statusWithoutCdn": c.status_uncached,
            "tier1": c.tier1(),
            "tier2": c.tier2,
        },
        "notCounted": {
            "tier1Rechecks": c.rechecks,
            "why": "the harness checks each admitted ticket once more (a second tab) to catch a second identity; a waiting page does not",
        },
    })
}

/// Estimate error figures of a set of (error %, signed error %) pairs.
fn summary(errors: &[(f64, f64)]) -> Value {
    let mut abs: Vec<f64> = errors.iter().map(|e| e.0).collect();
    abs.sort_by(f64::total_cmp);
    let mean_signed = if errors.is_empty() {
        None
    } else {
        Some(round(errors.iter().map(|e| e.1).sum::<f64>() / errors.len() as f64, 1))
    };
    json!({
        "samples": errors.len(),
        "p50ErrorPct": quantile(&abs, 0.5).map(|x| round(x, 1)),
        "p90ErrorPct": quantile(&abs, 0.9).map(|x| round(x, 1)),
        "meanSignedErrorPct": mean_signed,
    })
}

/// The `estimate` section: `estimatedWaitSeconds` at the join (for a pre-queue visitor, at its
/// first `check` after the open) against the real wait from then to the tier-1 admission the
/// visitor saw. `sale_open_s`: seconds from the start to the sale's open.
pub fn estimate(outcomes: &[Outcome], sale_open_s: f64) -> Value {
    let mut all = Vec::new();
    let mut later = Vec::new();
    let mut short = 0u64;
    let (mut waits, mut estimates) = (Vec::new(), Vec::new());
    for o in outcomes {
        let (Some(est), Some(from), Some(to)) = (o.estimate_s, o.estimated_at_s, o.tier1_admitted_s) else {
            continue;
        };
        let real = to - from;
        if real < MIN_REAL_WAIT_SECONDS {
            short += 1;
            continue;
        }
        waits.push(real);
        estimates.push(est);
        let e = ((est - real).abs() / real * 100.0, (est - real) / real * 100.0);
        all.push(e);
        if from - sale_open_s >= FIRST_MINUTE_SECONDS {
            later.push(e);
        }
    }
    waits.sort_by(f64::total_cmp);
    estimates.sort_by(f64::total_cmp);
    let mut counts = vec![0u64; ERROR_BINS];
    for (abs, _) in &all {
        let i = ((abs / ERROR_BIN_PCT).floor() as usize).min(ERROR_BINS - 1);
        if let Some(c) = counts.get_mut(i) {
            *c += 1;
        }
    }
    let mut v = summary(&all);
    v["excludedShortWaits"] = json!(short);
    v["minRealWaitSeconds"] = json!(MIN_REAL_WAIT_SECONDS);
    v["realWaitP50Seconds"] = json!(quantile(&waits, 0.5).map(|x| round(x, 1)));
    v["estimateP50Seconds"] = json!(quantile(&estimates, 0.5));
    v["afterFirstMinute"] = summary(&later);
    v["histogram"] = json!({"binPct": ERROR_BIN_PCT, "counts": counts});
    v["note"] = json!(format!(
        "estimatedWaitSeconds at the join against the real wait (join to the tier-1 admission the visitor saw); waits under {MIN_REAL_WAIT_SECONDS} s are left out (a percentage of a tiny wait means nothing); afterFirstMinute: joined {FIRST_MINUTE_SECONDS} s or more after the sale opened; signed error > 0: the estimate was too long"
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visitor(joined: f64, est: f64, admitted: f64) -> Outcome {
        Outcome {
            joined_s: joined,
            estimate_s: Some(est),
            estimated_at_s: Some(joined),
            tier1_admitted_s: Some(admitted),
            ..Outcome::default()
        }
    }

    #[test]
    fn estimate_error_leaves_out_tiny_waits_and_splits_the_first_minute() {
        let outcomes = vec![
            visitor(1.0, 10.0, 11.0),   // exact
            visitor(2.0, 30.0, 22.0),   // 20 s real, 30 s estimated: +50 %
            visitor(3.0, 1.0, 4.0),     // 1 s wait: left out
            visitor(70.0, 18.0, 90.0),  // after the first minute: −10 %
            visitor(80.0, 100.0, 90.0), // 10 s real: +900 %
            Outcome::default(),         // never admitted
        ];
        let e = estimate(&outcomes, 0.0);
        assert_eq!(e["samples"], 4);
        assert_eq!(e["excludedShortWaits"], 1);
        assert_eq!(e["afterFirstMinute"]["samples"], 2);
        assert_eq!(e["afterFirstMinute"]["p50ErrorPct"], 900.0);
        assert_eq!(e["p50ErrorPct"], 50.0);
        let counts: Vec<u64> = serde_json::from_value(e["histogram"]["counts"].clone()).unwrap_or_default();
        assert_eq!((counts[0], counts[2], counts[10], counts[20]), (1, 1, 1, 1));
        // The first minute is counted from the sale's open, not from the start.
        assert_eq!(estimate(&outcomes, 20.0)["afterFirstMinute"]["samples"], 1);
    }

    #[test]
    fn origin_calls_are_misses_and_fetches_without_a_cdn() {
        let c = Calls {
            assign: 10,
            check: 11,
            status_hits: 100,
            status_misses: 3,
            status_uncached: 2,
            tier2: 40,
            rechecks: 10,
        };
        assert_eq!((c.status_fetches(), c.status_origin(), c.tier1()), (105, 5, 26));
    }
}
