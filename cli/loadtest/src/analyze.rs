//! `vwr loadtest analyze DIR`: the report of `vwr loadtest` from the per-visitor records of a
//! distributed rehearsal (`rehearsal/locustfile.py`, docs/rehearsal.md#rehearse-with-locust).
//!
//! The records are replayed into what a load test's visitors leave behind — the counters, the
//! latencies and the timeline of the shared context, one [`Outcome`] per visitor — and the
//! report is built by the same code as a load test's (`tally::report`), so its keys and figures
//! mean the same. Counted from each call as `vwr loadtest` counts its own: a network error, a
//! 503 or 429 with `Retry-After` (degraded), a 429 without (a refusal that is no verdict), any
//! other 5xx (a server error), a status or line document answered by the CDN or not (`X-Cache`).
//! Judged by the visitors and carried in their `counts`: unexpected 4xx, refusals, the edge's
//! and the booking API's refusals, double identities, answers over the threshold. Checked here
//! across all visitors, which no single worker can: one tier-1 or tier-2 identity (`jti`) held
//! by two visitors counts in `safety.doubleAdmitted`.
//!
//! Not in the records, so empty in the report: the per-second series and the outflow (the
//! harness samples the admin status for them), the open of a scheduled sale, bots, faults. The
//! event's tier-1 settings (`config.batchSize`, `intervalSeconds`, `shards`) are the server's
//! and read 0.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use clap::Parser;

use super::crowd::Crowd;
use super::ctx::{ASSIGN, CHECK, Ctx, LINE, Leaks, Proofs, RECHECK, STATUS};
use super::options::LoadOptions;
use super::page::TICKET_VERDICTS;
use super::records::{CallRecord, Records, VisitorRecord};
use super::report::Report;
use super::sample::Sampled;
use super::stats::{Counters, Latencies, Timeline};
use super::tally::{self, Ran};
use super::visitor::{End, Outcome, cause};
use crate::client::HttpClient;
use crate::error::LoadtestError;

/// The endpoints a visitor calls, as the load test names them (the keys of `latency`).
const ENDPOINTS: [&str; 11] = [
    ASSIGN,
    CHECK,
    STATUS,
    RECHECK,
    LINE,
    "edge.event_page",
    "tier2.check",
    "tier2.status",
    "tier2.heartbeat",
    "tier2.leave",
    "seats",
];
/// Why a visitor's run was lost (`lostBy`), as the load test names it.
/// `harness_error`: the locustfile itself failed (its log says how).
const LOST_BY: [&str; 11] = [
    "refused",
    "rejoin_refused",
    "event_not_found",
    "closed",
    "inactive",
    "invalid_event_id",
    "enqueue_token_required",
    "edge_refused",
    "tier2_identity",
    "position_taken",
    "harness_error",
];
const CAUSES: [&str; 6] = [
    cause::TICKET_REPLACED,
    cause::TIER1_POSITION_CHANGED,
    cause::TIER1_UNADMITTED,
    cause::TIER2_NOT_RESTORED,
    cause::TIER2_DEMOTED,
    cause::TIER2_POSITION_TAKEN,
];
/// A name outside the lists above: kept, under this name.
const OTHER: &str = "other";

/// Options of `vwr loadtest analyze`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    /// The directory of the workers' `*.jsonl` records (gathered from every worker).
    pub dir: PathBuf,
    /// Print the report as JSON (the keys of `vwr loadtest --json`) instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Also write the report as one self-contained HTML page here.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

fn known(name: &str, list: &[&'static str]) -> &'static str {
    list.iter().find(|k| **k == name).copied().unwrap_or(OTHER)
}

/// The load test's options that the rehearsal ran with (from the workers' `run` lines).
fn options(records: &Records, visitors: u64, arrival_seconds: f64) -> Result<LoadOptions, LoadtestError> {
    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        opts: LoadOptions,
    }
    let run = records.runs.first().cloned().unwrap_or_default();
    let event = if run.event.is_empty() { "rehearsal".to_owned() } else { run.event.clone() };
    let args = [
        ("--visitors", visitors.to_string()),
        ("--event", event),
        ("--base-url", run.host.clone()),
        ("--arrival", "uniform".to_owned()),
        ("--arrival-seconds", format!("{arrival_seconds:.3}")),
        ("--threshold", run.threshold.to_string()),
        ("--dwell-seconds", run.dwell_seconds.to_string()),
        ("--abandon-rate", run.abandon_rate.to_string()),
        ("--no-show-rate", run.no_show_rate.to_string()),
        // The event's tier-1 settings are the server's: not known here.
        ("--batch-size", "0".to_owned()),
        ("--interval-seconds", "0".to_owned()),
        ("--shards", "0".to_owned()),
    ];
    let argv =
        std::iter::once("analyze".to_owned()).chain(args.into_iter().flat_map(|(k, v)| [k.to_owned(), v]));
    Wrap::try_parse_from(argv).map(|w| w.opts).map_err(LoadtestError::Settings)
}

/// Counts one call as the load test's `Ctx::send` counts its own.
fn replay_call(ctx: &Ctx, call: &CallRecord, t0: f64) {
    let (c, endpoint) = (&ctx.counters, known(&call.endpoint, &ENDPOINTS));
    ctx.timeline.record(endpoint, Duration::from_secs_f64((call.at - t0).max(0.0)));
    if call.status == 0 {
        Counters::inc(&c.network_errors);
        return;
    }
    ctx.latencies.record(endpoint, (call.ms.max(0.0) * 1000.0) as u64);
    if endpoint == STATUS || endpoint == LINE {
        let hit = call.x_cache.as_deref().map(|v| v.starts_with("Hit"));
        let (hits, misses, uncached) = if endpoint == STATUS {
            (&c.status_hits, &c.status_misses, &c.status_uncached)
        } else {
            (&c.line_hits, &c.line_misses, &c.line_uncached)
        };
        Counters::inc(match hit {
            Some(true) => hits,
            Some(false) => misses,
            None => uncached,
        });
    }
    match call.status {
        503 | 429 if call.retry_after => Counters::inc(&c.degraded),
        429 => Counters::inc(&c.transient_refusals),
        s if s >= 500 => Counters::inc(&c.server_errors),
        _ => {}
    }
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
}

/// One visitor's record into the context's counters and its [`Outcome`].
fn replay_visitor(ctx: &Ctx, v: &VisitorRecord, t0: f64) -> Outcome {
    let c = &ctx.counters;
    for call in &v.calls {
        replay_call(ctx, call, t0);
    }
    let n = |k: &str| v.counts.get(k).copied().unwrap_or(0);
    add(&c.unexpected_4xx, n("unexpected4xx"));
    add(&c.transient_refusals, n("transientRefusals"));
    add(&c.edge_refused, n("edgeRefused"));
    add(&c.seats_refused, n("seatsRefused"));
    add(&c.rejoined_tier2, n("rejoinedTier2"));
    add(&c.double_admitted, n("doubleAdmitted"));
    add(&c.over_threshold_responses, n("overThreshold"));
    for (why, times) in &v.place_losses {
        for _ in 0..*times {
            c.place_loss(known(why, &CAUSES));
        }
    }
    if v.place_lost.is_some() || !v.place_losses.is_empty() {
        Counters::inc(&c.places_lost);
    }
    for (code, times) in &v.verdicts {
        for _ in 0..*times {
            c.verdict(known(code, &TICKET_VERDICTS));
        }
    }
    let end = match v.end.as_str() {
        "done" => End::Done,
        "abandoned" => End::Abandoned,
        "noShow" => End::NoShow,
        "refused" => End::Refused,
        "lost" => End::Lost(known(v.lost_by.as_deref().unwrap_or("refused"), &LOST_BY)),
        _ => End::Unfinished,
    };
    let flags: [(bool, &AtomicU64); 7] = [
        (v.joined_at.is_some(), &c.joined),
        (v.tier1_admitted_at.is_some(), &c.admitted_tier1),
        (v.passed_edge, &c.passed_edge),
        (v.tier2_admitted_at.is_some(), &c.active_tier2),
        (end == End::Done, &c.done),
        (end == End::Abandoned, &c.abandoned),
        (end == End::NoShow, &c.no_shows),
    ];
    for (yes, counter) in flags {
        if yes {
            Counters::inc(counter);
        }
    }
    let at = |t: Option<f64>| t.map(|t| t - t0);
    Outcome {
        arrived_s: v.arrived_at - t0,
        joined_s: v.joined_at.map_or(v.arrived_at, |t| t) - t0,
        position: v.position,
        tier1_admitted_s: at(v.tier1_admitted_at),
        tier2_admitted_s: at(v.tier2_admitted_at),
        tier2_idle_s: v.tier2_idle_seconds,
        line_reads: v.line_reads,
        done: end == End::Done,
        abandoned: end == End::Abandoned,
        prequeue: v.prequeue,
        first_check_s: at(v.first_check_at),
        status_polls: v.status_polls,
        checks: v.checks,
        estimate_s: v.estimate_seconds,
        estimated_at_s: at(v.estimated_at),
        no_show: end == End::NoShow,
        end,
        place_lost: v.place_lost.as_deref().map(|w| known(w, &CAUSES)),
    }
}

/// Identities (`jti`) held by more than one visitor: each holder past the first counts.
fn shared_identities(visitors: &[VisitorRecord]) -> u64 {
    let mut seen: HashMap<(&str, &str), u64> = HashMap::new();
    for v in visitors {
        for (tier, jti) in [("1", &v.tier1_jti), ("2", &v.tier2_jti)] {
            if let Some(j) = jti.as_deref().filter(|j| !j.is_empty()) {
                *seen.entry((tier, j)).or_default() += 1;
            }
        }
    }
    seen.values().map(|n| n.saturating_sub(1)).sum()
}

/// The report of the records in `records`.
pub fn report(records: &Records) -> Result<Report, LoadtestError> {
    let visitors = &records.visitors;
    let t0 = visitors.iter().map(|v| v.arrived_at).fold(f64::INFINITY, f64::min);
    let last_arrival = visitors.iter().map(|v| v.arrived_at).fold(f64::NEG_INFINITY, f64::max);
    let end = visitors
        .iter()
        .map(|v| v.ended_at.unwrap_or(v.arrived_at).max(v.calls.last().map_or(0.0, |c| c.at + c.ms / 1000.0)))
        .fold(t0, f64::max);
    let opts = options(records, visitors.len() as u64, (last_arrival - t0).max(0.0))?;
    let client = HttpClient::new(Duration::from_secs(1))?;
    let event = opts.event.clone().unwrap_or_default();
    let now = Instant::now();
    let ctx = Ctx {
        client,
        base: opts.base_url().to_owned(),
        origin: opts.base_url().to_owned(),
        event: event.clone(),
        counters: Counters::default(),
        latencies: Latencies::default(),
        timeline: Timeline::default(),
        start: now,
        unix_start: t0,
        deadline: now,
        dwell: Duration::from_secs_f64(opts.dwell_seconds.max(0.0)),
        abandon_rate: opts.abandon_rate,
        threshold: AtomicU64::new(opts.threshold),
        in_flight: tokio::sync::Semaphore::new(1),
        legacy_polling: false,
        legacy_tier2: false,
        no_show_rate: opts.no_show_rate,
        proofs: Proofs::new(None, &event)?,
        leaks: Leaks::default(),
    };
    let outcomes: Vec<Outcome> = visitors.iter().map(|v| replay_visitor(&ctx, v, t0)).collect();
    add(&ctx.counters.double_admitted, shared_identities(visitors));
    let max_active = visitors.iter().map(|v| v.max_active_seen).max().unwrap_or(0);
    let elapsed = (end - t0).max(1e-3);
    let ran = Ran {
        event,
        crowd: Crowd { outcomes, aborted: 0, bots: Vec::new(), elapsed },
        sampled: Sampled { over_threshold: 0, max_active, points: Vec::new(), open: None },
        faults: Vec::new(),
        plan: None,
        aws: None,
    };
    Ok(tally::report(&opts, &ctx, ran))
}

/// `vwr loadtest analyze`: reads the records, prints the report (tables, or `--json`), writes
/// `--html`; answers the report (whether safety held: `Safety::clean`).
pub fn run(args: &AnalyzeArgs) -> Result<Report, LoadtestError> {
    let records = Records::read_dir_with(&args.dir, |file, visitors| {
        eprintln!("read {}: {visitors} visitors so far", file.display());
    })?;
    let report = report(&records)?;
    if args.json {
        let json = serde_json::to_string_pretty(&report)?;
        super::print_text(&format!("{json}\n"));
    } else {
        super::print_text(&super::text::render(&report));
    }
    if let Some(path) = &args.html {
        std::fs::write(path, super::html::render(&report)).map_err(LoadtestError::write(path))?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests;
