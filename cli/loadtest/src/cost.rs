//! What the visitors cost and how good their wait estimates were: the `costs` and `estimate`
//! sections of the report.
//!
//! Costs count Lambda invocations as they would be in AWS: every `assign` and `check` is a
//! tier-1 call; a status document fetch is one only when it reached the origin (the CDN's
//! `X-Cache` said `Miss`, or there was no CDN in front), since CloudFront answers the rest
//! (docs/lifecycle.md#the-public-status-document); every `/api/queue/*` request is a tier-2
//! call, except reads of the line document that the CDN answered (docs/api.md#the-line-document). The harness's re-check of admitted tickets is a safety probe, not
//! page behaviour, and is reported apart.

use serde::{Deserialize, Serialize};

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
    /// Tier-2 calls: `/api/queue/*` requests, line document reads that reached the origin
    /// included.
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
            tier2: TIER2.iter().map(|e| l.count(e)).sum::<u64>()
                + Counters::get(&c.line_misses)
                + Counters::get(&c.line_uncached),
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

/// How the visitors waited in line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Polling {
    /// As the waiting page: the status document, `check` at the turn.
    #[default]
    Page,
    /// `check` at the server's hints (`--legacy-polling`).
    Legacy,
}

/// The `costs` section: Lambda calls as AWS would count them. Per visitor = over all visitors
/// of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Costs {
    pub polling: Polling,
    pub tier1_lambda_calls_per_visitor: f64,
    pub tier2_lambda_calls_per_visitor: f64,
    pub status_fetches_per_visitor: f64,
    pub origin_status_fetches_per_second: f64,
    pub checks_per_visitor: f64,
    /// Share of the status fetches the CDN answered (`null` without fetches).
    pub status_cache_hit_share: Option<f64>,
    pub calls: CallCounts,
    pub not_counted: NotCounted,
}

/// The calls of the whole run behind [`Costs`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallCounts {
    pub assign: u64,
    pub check: u64,
    pub status_fetches: u64,
    pub status_cache_hits: u64,
    pub status_origin_fetches: u64,
    pub status_without_cdn: u64,
    pub tier1: u64,
    pub tier2: u64,
}

/// Calls left out of the costs, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotCounted {
    pub tier1_rechecks: u64,
    pub why: String,
}

/// The `costs` section. Per visitor = over all `visitors` of the run.
pub fn costs(ctx: &Ctx, visitors: u64, elapsed: f64) -> Costs {
    let c = Calls::of(ctx);
    let n = visitors.max(1) as f64;
    let fetches = c.status_fetches();
    Costs {
        polling: if ctx.legacy_polling { Polling::Legacy } else { Polling::Page },
        tier1_lambda_calls_per_visitor: round(c.tier1() as f64 / n, 3),
        tier2_lambda_calls_per_visitor: round(c.tier2 as f64 / n, 3),
        status_fetches_per_visitor: round(fetches as f64 / n, 3),
        origin_status_fetches_per_second: round(c.status_origin() as f64 / elapsed.max(1e-3), 2),
        checks_per_visitor: round(c.check as f64 / n, 3),
        status_cache_hit_share: (fetches > 0).then(|| round(c.status_hits as f64 / fetches as f64, 4)),
        calls: CallCounts {
            assign: c.assign,
            check: c.check,
            status_fetches: fetches,
            status_cache_hits: c.status_hits,
            status_origin_fetches: c.status_origin(),
            status_without_cdn: c.status_uncached,
            tier1: c.tier1(),
            tier2: c.tier2,
        },
        not_counted: NotCounted {
            tier1_rechecks: c.rechecks,
            why: "the harness checks each admitted ticket once more (a second tab) to catch a second identity; a waiting page does not".to_owned(),
        },
    }
}

/// Estimate error figures of a set of visitors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorSummary {
    /// Visitors judged.
    pub samples: u64,
    /// |estimate − real wait| ÷ real wait, in percent.
    pub p50_error_pct: Option<f64>,
    pub p90_error_pct: Option<f64>,
    /// The mean of (estimate − real wait) ÷ real wait: > 0, the estimates were too long.
    pub mean_signed_error_pct: Option<f64>,
}

/// The `estimate` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// Over every visitor judged.
    #[serde(flatten)]
    pub all: ErrorSummary,
    /// Waits under `minRealWaitSeconds`, left out.
    pub excluded_short_waits: u64,
    pub min_real_wait_seconds: f64,
    pub real_wait_p50_seconds: Option<f64>,
    pub estimate_p50_seconds: Option<f64>,
    /// Visitors who joined a minute or more after the sale opened.
    pub after_first_minute: ErrorSummary,
    pub histogram: ErrorHistogram,
    pub note: String,
}

/// Visitors by estimate error, in bins of `binPct` from 0 (the last bin holds the rest).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorHistogram {
    pub bin_pct: f64,
    pub counts: Vec<u64>,
}

/// Estimate error figures of a set of (error %, signed error %) pairs.
fn summary(errors: &[(f64, f64)]) -> ErrorSummary {
    let mut abs: Vec<f64> = errors.iter().map(|e| e.0).collect();
    abs.sort_by(f64::total_cmp);
    let mean_signed = if errors.is_empty() {
        None
    } else {
        Some(round(errors.iter().map(|e| e.1).sum::<f64>() / errors.len() as f64, 1))
    };
    ErrorSummary {
        samples: errors.len() as u64,
        p50_error_pct: quantile(&abs, 0.5).map(|x| round(x, 1)),
        p90_error_pct: quantile(&abs, 0.9).map(|x| round(x, 1)),
        mean_signed_error_pct: mean_signed,
    }
}

/// The `estimate` section: `estimatedWaitSeconds` at the join (for a pre-queue visitor, at its
/// first `check` after the open) against the real wait from then to the tier-1 admission the
/// visitor saw. `sale_open_s`: seconds from the start to the sale's open.
pub fn estimate(outcomes: &[Outcome], sale_open_s: f64) -> Estimate {
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
    Estimate {
        all: summary(&all),
        excluded_short_waits: short,
        min_real_wait_seconds: MIN_REAL_WAIT_SECONDS,
        real_wait_p50_seconds: quantile(&waits, 0.5).map(|x| round(x, 1)),
        estimate_p50_seconds: quantile(&estimates, 0.5),
        after_first_minute: summary(&later),
        histogram: ErrorHistogram { bin_pct: ERROR_BIN_PCT, counts },
        note: format!(
            "estimatedWaitSeconds at the join against the real wait (join to the tier-1 admission the visitor saw); waits under {MIN_REAL_WAIT_SECONDS} s are left out (a percentage of a tiny wait means nothing); afterFirstMinute: joined {FIRST_MINUTE_SECONDS} s or more after the sale opened; signed error > 0: the estimate was too long"
        ),
    }
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
        assert_eq!(e.all.samples, 4);
        assert_eq!(e.excluded_short_waits, 1);
        assert_eq!(e.after_first_minute.samples, 2);
        assert_eq!(e.after_first_minute.p50_error_pct, Some(900.0));
        assert_eq!(e.all.p50_error_pct, Some(50.0));
        let counts = &e.histogram.counts;
        assert_eq!((counts[0], counts[2], counts[10], counts[20]), (1, 1, 1, 1));
        // The first minute is counted from the sale's open, not from the start.
        assert_eq!(estimate(&outcomes, 20.0).after_first_minute.samples, 1);
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
