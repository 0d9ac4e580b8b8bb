//! The last phases of a run: tally how the visitors' runs ended and build the [`Report`] from
//! the counters, the outcomes, the samples, the faults and the AWS proxy's calls.

use std::collections::BTreeMap;

use super::bots;
use super::cost;
use super::crowd::Crowd;
use super::ctx::{CHECK, Ctx, RECHECK};
use super::faults::FaultRecord;
use super::open::{self, OpenPlan};
use super::options::{LoadOptions, Mode};
use super::outflow;
use super::report::{
    Config, Degraded, Fairness, Flow, Histogram, Order, PlacesLost, Report, Safety, Throughput, Tier2,
    Tier2Waiting, TimeToAdmission,
};
use super::sample::Sampled;
use super::series;
use super::stats::{Counters, histogram, kendall_tau, largest_inversion, quantile};
use super::visitor::{End, Outcome};

/// How the visitors' runs ended, as the report counts them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs the system ended without getting the visitor through (`safety.lost`).
    pub lost: u64,
    /// Runs still going when the run ended (`flow.unfinished`): `aborted` visitors still
    /// running at the hard stop included.
    pub unfinished: u64,
    /// Why the lost runs ended.
    pub lost_by: BTreeMap<&'static str, u64>,
}

impl Tally {
    pub fn of(outcomes: &[Outcome], aborted: u64) -> Self {
        let mut t = Tally { unfinished: aborted, ..Tally::default() };
        for o in outcomes {
            match o.end {
                End::Unfinished => t.unfinished += 1,
                End::Lost(why) => {
                    t.lost += 1;
                    *t.lost_by.entry(why).or_default() += 1;
                }
                _ => {}
            }
        }
        t
    }
}

/// What a run left behind for its report.
pub(crate) struct Ran {
    pub event: String,
    pub crowd: Crowd,
    pub sampled: Sampled,
    pub faults: Vec<FaultRecord>,
    /// `prequeue`: the sale's plan.
    pub plan: Option<OpenPlan>,
    /// `--aws-proxy`: the AWS calls through it during the run, and the throttled writes.
    pub aws: Option<(BTreeMap<String, u64>, u64)>,
}

fn pct(sorted: &[f64], q: f64) -> Option<f64> {
    quantile(sorted, q).map(|x| (x * 1000.0).round() / 1000.0)
}

fn to_owned_keys(m: BTreeMap<&'static str, u64>) -> BTreeMap<String, u64> {
    m.into_iter().map(|(k, n)| (k.to_owned(), n)).collect()
}

/// The report of a run.
pub(crate) fn report(opts: &LoadOptions, ctx: &Ctx, ran: Ran) -> Report {
    let Ran { event, crowd, sampled, faults, plan, aws } = ran;
    let Crowd { outcomes, aborted, bots, elapsed } = crowd;
    let Sampled { over_threshold: over_samples, max_active, points, open: watched } = sampled;
    let open = plan.map(|p| (p, watched.unwrap_or_default()));
    let c = &ctx.counters;
    let joined: Vec<&Outcome> = outcomes.iter().filter(|o| o.position.is_some()).collect();
    // Joins per second while joins were happening: first to last successful assign.
    let joins: Vec<f64> = joined.iter().map(|o| o.joined_s).collect();
    let join_window =
        joins.iter().copied().fold(f64::MIN, f64::max) - joins.iter().copied().fold(f64::MAX, f64::min);
    let Tally { lost, unfinished, lost_by } = Tally::of(&outcomes, aborted);
    let mut t1: Vec<f64> =
        joined.iter().filter_map(|o| o.tier1_admitted_s.map(|a| a - o.arrived_s)).collect();
    let mut t2: Vec<f64> =
        joined.iter().filter_map(|o| o.tier2_admitted_s.map(|a| a - o.arrived_s)).collect();
    t1.sort_by(f64::total_cmp);
    t2.sort_by(f64::total_cmp);
    let (bin, counts) = histogram(&t1, 24);
    let order = |pick: fn(&Outcome) -> Option<f64>| {
        let pairs: Vec<(f64, f64)> =
            joined.iter().filter_map(|o| pick(o).map(|a| (o.position.unwrap_or(0) as f64, a))).collect();
        let inv: Vec<(f64, f64, u64)> = joined
            .iter()
            .filter_map(|o| pick(o).map(|a| (a, o.arrived_s, o.position.unwrap_or(0))))
            .collect();
        let (pos, secs) = largest_inversion(inv);
        Order {
            kendall_tau: kendall_tau(&pairs).map(|t| (t * 10_000.0).round() / 10_000.0),
            largest_inversion_positions: pos,
            largest_inversion_seconds: (secs * 1000.0).round() / 1000.0,
        }
    };
    let checks = ctx.latencies.count(CHECK) + ctx.latencies.count(RECHECK);
    let open = open.map(|(plan, watched)| {
        let o = open::report(&plan, &watched, ctx, &outcomes, elapsed);
        (plan.waves.open_offset, o)
    });
    let safety = Safety {
        lost,
        double_admitted: Counters::get(&c.double_admitted),
        over_threshold_moments: over_samples + Counters::get(&c.over_threshold_responses),
        server_errors: Counters::get(&c.server_errors),
        places_lost_to_faults: Counters::get(&c.places_lost),
        prequeue_violations: open.as_ref().map(|(_, o)| o.violations),
    };
    let bots = (opts.bots > 0).then(|| {
        let defences = bots::Defences {
            request_secret: true,
            pow_difficulty: opts.pow_difficulty.unwrap_or(0),
            enqueue_token_required: opts.enqueue_key.is_some(),
        };
        bots::report(&bots, &ctx.leaks, defences)
    });
    let target = opts.target_per_minute.filter(|_| opts.mode == Mode::TargetArrivals);
    Report {
        event,
        base_url: opts.base_url().to_owned(),
        visitors: opts.visitors,
        scenario: opts.scenario,
        arrival: opts.arrival,
        config: Config {
            batch_size: opts.batch_size,
            interval_seconds: opts.interval_seconds,
            shards: opts.shards,
            threshold: opts.threshold,
            dwell_seconds: opts.dwell_seconds,
            abandon_rate: opts.abandon_rate,
            mode: opts.mode,
            target_per_minute: opts.target_per_minute,
            max_batch_size: opts.max_batch_size,
            no_show_rate: opts.no_show_rate,
            arrival_seconds: opts.arrival_seconds,
        },
        duration_seconds: (elapsed * 100.0).round() / 100.0,
        flow: Flow {
            joined: Counters::get(&c.joined),
            admitted_tier1: Counters::get(&c.admitted_tier1),
            passed_edge: Counters::get(&c.passed_edge),
            active_tier2: Counters::get(&c.active_tier2),
            done: Counters::get(&c.done),
            abandoned: Counters::get(&c.abandoned),
            no_shows: Counters::get(&c.no_shows),
            unfinished,
        },
        throughput: Throughput {
            joins_per_second: if join_window > 0.0 {
                (joined.len() as f64 / join_window).round()
            } else {
                joined.len() as f64
            },
            checks_per_second: (checks as f64 / elapsed).round(),
            requests_per_second: (ctx.latencies.total() as f64 / elapsed).round(),
        },
        latency: ctx.latencies.summary().into_iter().map(|(k, p)| (k.to_owned(), p)).collect(),
        time_to_admission: TimeToAdmission {
            tier1_p50_seconds: pct(&t1, 0.5),
            tier1_p99_seconds: pct(&t1, 0.99),
            entry_p50_seconds: pct(&t2, 0.5),
            entry_p99_seconds: pct(&t2, 0.99),
            tier1_histogram: Histogram { bin_seconds: bin, counts },
        },
        fairness: Fairness { tier1: order(|o| o.tier1_admitted_s), tier2: order(|o| o.tier2_admitted_s) },
        max_active_seen: max_active,
        degraded: Degraded {
            responses_503: Counters::get(&c.degraded),
            network_errors: Counters::get(&c.network_errors),
            unexpected_4xx: Counters::get(&c.unexpected_4xx),
            edge_refused: Counters::get(&c.edge_refused),
            seats_refused: Counters::get(&c.seats_refused),
            rejoined_tier2: Counters::get(&c.rejoined_tier2),
            transient_refusals: Counters::get(&c.transient_refusals),
        },
        places_lost: PlacesLost {
            visitors: Counters::get(&c.places_lost),
            by_cause: to_owned_keys(Counters::counts(&c.place_losses)),
            verdicts: to_owned_keys(Counters::counts(&c.verdicts)),
        },
        lost_by: to_owned_keys(lost_by),
        faults,
        costs: cost::costs(ctx, opts.visitors, elapsed),
        tier2: tier2_section(ctx, &outcomes, opts.visitors),
        safety,
        bots,
        estimate: cost::estimate(&outcomes, open.as_ref().map_or(0.0, |(offset, _)| *offset)),
        outflow: outflow::report(&points, &outcomes, target),
        series: series::series(&points),
        open: open.map(|(_, o)| o),
        aws_calls: aws.as_ref().map(|(calls, _)| calls.clone()),
        aws_throttled_writes: aws.map(|(_, throttled)| throttled),
    }
}

/// The `tier2` section.
fn tier2_section(ctx: &Ctx, outcomes: &[Outcome], visitors: u64) -> Tier2 {
    let c = &ctx.counters;
    let mut idle: Vec<f64> = outcomes.iter().filter_map(|o| o.tier2_idle_s).collect();
    idle.sort_by(f64::total_cmp);
    let (hits, misses, uncached) =
        (Counters::get(&c.line_hits), Counters::get(&c.line_misses), Counters::get(&c.line_uncached));
    let reads = hits + misses + uncached;
    Tier2 {
        waiting: if ctx.legacy_tier2 { Tier2Waiting::Legacy } else { Tier2Waiting::Line },
        idle_slot_seconds_p50: pct(&idle, 0.5),
        idle_slot_seconds_p90: pct(&idle, 0.9),
        idle_slot_seconds_max: idle.last().map(|x| (x * 1000.0).round() / 1000.0),
        idle_slots_measured: idle.len() as u64,
        line_reads_per_visitor: ((reads as f64 / visitors.max(1) as f64) * 1000.0).round() / 1000.0,
        line_origin_fetches: misses + uncached,
        line_cache_hit_share: (reads > 0)
            .then(|| ((hits as f64 / reads as f64) * 10_000.0).round() / 10_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_runs_the_system_ended_are_lost() {
        let o = |end: End| Outcome { end, position: Some(1), ..Outcome::default() };
        let outcomes = [
            o(End::Done),
            o(End::Abandoned),
            o(End::NoShow),
            o(End::Refused),
            // Still in a line when the run ended: unfinished.
            o(End::Unfinished),
            o(End::Unfinished),
            o(End::Lost("edge_refused")),
            o(End::Lost("closed")),
            o(End::Lost("closed")),
        ];
        let t = Tally::of(&outcomes, 3);
        assert_eq!((t.lost, t.unfinished), (3, 5), "2 in line at the end, 3 still running at the hard stop");
        assert_eq!(t.lost_by.into_iter().collect::<Vec<_>>(), [("closed", 2), ("edge_refused", 1)]);
        assert_eq!(Tally::of(&[], 0), Tally::default());
    }
}
