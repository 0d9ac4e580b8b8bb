//! The `prequeue` scenario: schedules a sale with a pre-queue, watches its open from the
//! public status document, and reports the open (docs/lifecycle.md#pre-queue-and-the-randomized-open):
//! the request rate in the seconds after `openAt` against the mean of the run (the waiting
//! page's random 0–5 s before its first `check` keeps that peak bounded), P, whether the drawn
//! positions of the pre-queue are exactly 1..=P with every later join behind them, the rank
//! correlation of arrival order and drawn position (about 0 for a fair draw), and the revealed
//! seed against the commitment shown before the open.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use vwr_tier1::draw::Seed;

use super::admin::admin_call;
use super::arrival::Waves;
use super::ctx::{self, Ctx};
use super::options::{LoadOptions, tier1_config};
use super::stats::{quantile, spearman};
use super::visitor::Outcome;
use crate::client::{Auth, HttpClient};
use crate::error::LoadtestError;

/// The 1-s buckets after `openAt` in which the peak request rate is looked for.
pub const OPEN_WINDOW_SECONDS: usize = 10;
/// The tier-1 endpoints a waiting page calls (and the harness's re-check of admitted tickets).
const TIER1: [&str; 4] = [ctx::ASSIGN, ctx::CHECK, ctx::STATUS, ctx::RECHECK];
/// Every `check` request.
const CHECKS: [&str; 2] = [ctx::CHECK, ctx::RECHECK];

/// Unix time in seconds, with the fraction.
pub fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The scheduled sale and who arrives when.
#[derive(Debug, Clone)]
pub struct OpenPlan {
    pub prequeue_at: u64,
    pub open_at: u64,
    /// Who arrives when: in the pre-queue window, and after `openAt`.
    pub waves: Waves,
    /// `seedCommitment` of the schedule answer, and of the status document before the open.
    pub commitment_scheduled: Option<String>,
    pub commitment: Option<String>,
    pub start: Instant,
}

async fn public_status(client: &HttpClient, base: &str, event: &str) -> Result<Value, LoadtestError> {
    let r =
        client.send(Method::GET, &format!("{base}/vwr-api/vwr/status/{event}"), None, &Auth::None).await?;
    if r.status.is_success() { Ok(r.json()) } else { Err(LoadtestError::StatusDocument(r.status)) }
}

/// Schedules the sale (pre-queue at the next second, open at `--prequeue-seconds`), registers
/// it for tier 2 in tier-1 order, and waits for the advancer to start the pre-queue.
pub async fn schedule(
    client: &HttpClient,
    base: &str,
    auth: &Auth,
    event: &str,
    opts: &LoadOptions,
    start: Instant,
    unix_start: f64,
) -> Result<OpenPlan, LoadtestError> {
    let now = unix_start.floor() as u64;
    let (prequeue_at, open_at) = (now + 1, now + opts.prequeue_seconds);
    let st = admin_call(
        client,
        base,
        auth,
        Method::PUT,
        &format!("/api/admin/vwr/schedule/{event}"),
        Some({
            let mut body = tier1_config(opts);
            body["prequeueAt"] = json!(prequeue_at);
            body["openAt"] = json!(open_at);
            body
        }),
    )
    .await?;
    // The event does not gate yet, so tier 2 would pick arrival order by itself: say tier 1.
    admin_call(
        client,
        base,
        auth,
        Method::PUT,
        &format!("/api/queue/admin/threshold/{event}"),
        Some(json!({"threshold": opts.threshold, "lineOrder": "tier1"})),
    )
    .await?;
    let open_offset = open_at as f64 - unix_start;
    let last_call = start + Duration::from_secs_f64((open_offset - 1.0).max(0.0));
    let (seen, commitment) = loop {
        if let Ok(d) = public_status(client, base, event).await
            && d["state"] == "prequeue"
        {
            break (start.elapsed().as_secs_f64(), d["seedCommitment"].as_str().map(str::to_owned));
        }
        if Instant::now() > last_call {
            return Err(LoadtestError::NoPrequeue(event.to_owned()));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let from = seen + 0.2;
    let before_open = ((opts.visitors as f64 * opts.before_open_share).round() as u64).min(opts.visitors);
    Ok(OpenPlan {
        prequeue_at,
        open_at,
        waves: Waves {
            open_offset,
            window: (from, (open_offset - 1.0).max(from)),
            before_open,
            after_open: opts.visitors - before_open,
        },
        commitment_scheduled: st["seedCommitment"].as_str().map(str::to_owned),
        commitment,
        start,
    })
}

/// What the public status document showed around the open.
#[derive(Debug, Clone, Default)]
pub struct OpenWatch {
    /// `prequeueSize` in the last document before the open.
    pub size_before_open: Option<u64>,
    /// Seconds since the start when the document first showed the revealed seed.
    pub opened_s: Option<f64>,
    pub seed: Option<String>,
    pub sealed_counts: Option<Vec<u64>>,
    /// P.
    pub prequeue_size: Option<u64>,
}

/// Reads the status document (each second before the open, four times a second after) until
/// it reveals the seed, for at most a minute after `openAt`. Not counted as visitor load.
pub async fn watch(client: HttpClient, base: String, event: String, plan: OpenPlan) -> OpenWatch {
    let mut w = OpenWatch::default();
    let open = plan.start + Duration::from_secs_f64(plan.waves.open_offset.max(0.0));
    let give_up = open + Duration::from_secs(60);
    loop {
        if let Ok(d) = public_status(&client, &base, &event).await {
            match (d["state"].as_str(), d["seed"].as_str()) {
                (Some("scheduled" | "prequeue"), _) => {
                    w.size_before_open = d["prequeueSize"].as_u64().or(w.size_before_open);
                }
                (Some(_), Some(seed)) => {
                    w.opened_s = Some(plan.start.elapsed().as_secs_f64());
                    w.seed = Some(seed.to_owned());
                    w.sealed_counts = serde_json::from_value(d["sealedCounts"].clone()).ok();
                    w.prequeue_size = d["prequeueSize"].as_u64();
                    return w;
                }
                _ => {}
            }
        }
        let now = Instant::now();
        if now > give_up {
            return w;
        }
        let pause = if now + Duration::from_secs(1) < open { 1000 } else { 250 };
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

fn round(x: f64, places: i32) -> f64 {
    let m = 10f64.powi(places);
    (x * m).round() / m
}

/// The `open` section of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Open {
    /// Unix seconds of the schedule.
    pub prequeue_at: u64,
    pub open_at: u64,
    /// `openAt` in seconds since the start.
    pub open_at_seconds: f64,
    /// When the status document first showed the open, after `openAt`.
    pub open_seen_after_seconds: Option<f64>,
    pub before_open_visitors: u64,
    pub after_open_visitors: u64,
    /// Visitors whose `assign` answered `prequeue`.
    pub prequeue_joins: u64,
    pub prequeue_size_before_open: Option<u64>,
    /// P.
    pub prequeue_size: Option<u64>,
    pub sealed_counts: Option<Vec<u64>>,
    pub seed_commitment: Option<String>,
    pub seed: Option<String>,
    /// The commitment before the open was the schedule's, and the revealed seed hashes to it.
    pub commitment_ok: bool,
    pub positions: Positions,
    pub rates: OpenRates,
    /// Seconds from `openAt` to the pre-queue visitors' first `check`.
    pub first_check_after_open: FirstChecks,
    /// Status document reads of the pre-queue visitors.
    pub status_reads: u64,
    /// Draw violations: they join the safety counters.
    pub violations: u64,
}

/// The drawn positions, or why they could not be judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Positions {
    Drawn(Drawn),
    /// The status document never revealed P.
    Unjudged {
        ok: bool,
        reason: String,
    },
}

impl Positions {
    /// Positions 1..=P exactly, once each, everyone after the open behind them.
    pub fn ok(&self) -> bool {
        match self {
            Self::Drawn(d) => d.ok,
            Self::Unjudged { ok, .. } => *ok,
        }
    }

    pub fn drawn(&self) -> Option<&Drawn> {
        match self {
            Self::Drawn(d) => Some(d),
            Self::Unjudged { .. } => None,
        }
    }
}

/// The draw as the visitors saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Drawn {
    pub ok: bool,
    /// Pre-queue visitors who saw a position in 1..=P.
    pub drawn: u64,
    pub missing: u64,
    pub duplicates: u64,
    /// Pre-queue visitors who never learned their position.
    pub unobserved: u64,
    /// Pre-queue answers after the seal (positions beyond P).
    pub late_sealed_joins: u64,
    pub post_open_joins: u64,
    pub post_open_at_or_below_p: u64,
    /// Rank correlation of pre-queue arrival and drawn position (about 0 for a fair draw).
    pub spearman_arrival_vs_position: Option<f64>,
}

/// The request rates right after `openAt` against the mean of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenRates {
    pub window_seconds: u64,
    pub peak_per_second: u64,
    pub peak_checks_per_second: u64,
    pub mean_per_second: f64,
    pub mean_checks_per_second: f64,
    pub peak_to_mean: Option<f64>,
    /// 1-s buckets from `openAt`.
    pub per_second: Vec<u64>,
    pub checks_per_second: Vec<u64>,
}

/// Quantiles of the pre-queue visitors' first `check` after `openAt`, in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstChecks {
    pub p50_seconds: Option<f64>,
    pub p99_seconds: Option<f64>,
    pub max_seconds: Option<f64>,
}

/// The `open` section of the report; its `violations` join the safety counters.
pub fn report(plan: &OpenPlan, w: &OpenWatch, ctx: &Ctx, outcomes: &[Outcome], elapsed: f64) -> Open {
    let mut violations = 0u64;

    // Commit and reveal: the commitment shown before the open is the schedule's, and the
    // revealed seed hashes to it.
    let commitments_agree = match (&plan.commitment_scheduled, &plan.commitment) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    };
    let seed_matches = match (&w.seed, &plan.commitment) {
        (Some(seed), Some(c)) => Seed::from_hex(seed).is_ok_and(|s| s.matches_commitment(c)),
        _ => false,
    };
    let commitment_ok = commitments_agree && seed_matches;
    if !commitment_ok {
        violations += 1;
    }

    // The draw: the pre-queue tickets hold exactly 1..=P, everyone else stands behind P.
    let pre: Vec<&Outcome> = outcomes.iter().filter(|o| o.prequeue).collect();
    let post: Vec<&Outcome> = outcomes.iter().filter(|o| !o.prequeue && o.position.is_some()).collect();
    let unobserved = pre.iter().filter(|o| o.position.is_none()).count() as u64;
    let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
    for p in outcomes.iter().filter_map(|o| o.position) {
        *seen.entry(p).or_default() += 1;
    }
    let duplicates: u64 = seen.values().map(|n| n - 1).sum();
    let zero = seen.get(&0).copied().unwrap_or(0);
    violations += duplicates + zero;
    let positions = match w.prequeue_size {
        None => {
            violations += 1;
            Positions::Unjudged { ok: false, reason: "the status document never revealed P".to_owned() }
        }
        Some(p) => {
            let drawn: Vec<&Outcome> =
                pre.iter().copied().filter(|o| o.position.is_some_and(|x| (1..=p).contains(&x))).collect();
            let distinct = seen.range(1..=p).count() as u64;
            // Every position up to P missing from what the visitors saw; when some pre-queue
            // visitor never learned its position it is counted as lost instead (or as
            // unfinished, when the run ended first).
            let missing = p - distinct.min(p);
            if unobserved == 0 {
                violations += missing;
            }
            let post_at_or_below = post.iter().filter(|o| o.position.is_some_and(|x| x <= p)).count() as u64;
            violations += post_at_or_below;
            let pairs: Vec<(f64, f64)> =
                drawn.iter().filter_map(|o| o.position.map(|x| (o.joined_s, x as f64))).collect();
            Positions::Drawn(Drawn {
                ok: missing == 0 && duplicates == 0 && zero == 0 && post_at_or_below == 0 && unobserved == 0,
                drawn: drawn.len() as u64,
                missing,
                duplicates,
                unobserved,
                late_sealed_joins: pre.iter().filter(|o| o.position.is_some_and(|x| x > p)).count() as u64,
                post_open_joins: post.len() as u64,
                post_open_at_or_below_p: post_at_or_below,
                spearman_arrival_vs_position: spearman(&pairs).map(|r| round(r, 4)),
            })
        }
    };

    // The load at the open against the mean of the run.
    let tl = &ctx.timeline;
    let per_second = tl.buckets(&TIER1, plan.waves.open_offset, OPEN_WINDOW_SECONDS);
    let checks_per_second = tl.buckets(&CHECKS, plan.waves.open_offset, OPEN_WINDOW_SECONDS);
    let peak = per_second.iter().copied().max().unwrap_or(0);
    let peak_checks = checks_per_second.iter().copied().max().unwrap_or(0);
    let elapsed = elapsed.max(1e-3);
    let mean = tl.count(&TIER1) as f64 / elapsed;
    let mean_checks = tl.count(&CHECKS) as f64 / elapsed;
    let mut first: Vec<f64> =
        pre.iter().filter_map(|o| o.first_check_s.map(|t| t - plan.waves.open_offset)).collect();
    first.sort_by(f64::total_cmp);
    let q = |x: f64| quantile(&first, x).map(|v| round(v, 2));

    Open {
        prequeue_at: plan.prequeue_at,
        open_at: plan.open_at,
        open_at_seconds: round(plan.waves.open_offset, 2),
        open_seen_after_seconds: w.opened_s.map(|t| round(t - plan.waves.open_offset, 2)),
        before_open_visitors: plan.waves.before_open,
        after_open_visitors: plan.waves.after_open,
        prequeue_joins: pre.len() as u64,
        prequeue_size_before_open: w.size_before_open,
        prequeue_size: w.prequeue_size,
        sealed_counts: w.sealed_counts.clone(),
        seed_commitment: plan.commitment.clone(),
        seed: w.seed.clone(),
        commitment_ok,
        positions,
        rates: OpenRates {
            window_seconds: OPEN_WINDOW_SECONDS as u64,
            peak_per_second: peak,
            peak_checks_per_second: peak_checks,
            mean_per_second: round(mean, 1),
            mean_checks_per_second: round(mean_checks, 1),
            peak_to_mean: (mean > 0.0).then(|| round(peak as f64 / mean, 2)),
            per_second,
            checks_per_second,
        },
        first_check_after_open: FirstChecks {
            p50_seconds: q(0.5),
            p99_seconds: q(0.99),
            max_seconds: q(1.0),
        },
        status_reads: pre.iter().map(|o| o.status_polls).sum::<u64>(),
        violations,
    }
}
