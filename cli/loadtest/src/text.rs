//! The report as the terminal shows it: a few lines and Markdown tables.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::outflow;
use super::report::{Open, Report};

/// A figure as its JSON reads (`–` for none): the terminal shows what `--json` writes.
fn f<T: Serialize + ?Sized>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(Value::Null) | Err(_) => "–".to_owned(),
        Ok(other) => other.to_string(),
    }
}

/// The report as text.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let o = &mut out;
    let arrival = match &r.open {
        Some(open) => {
            format!("pre-queue: {} before the open, then {}", open.before_open_visitors, f(&r.arrival))
        }
        None => f(&r.arrival),
    };
    let _ = writeln!(
        o,
        "\nvwr loadtest — {} visitors ({arrival}), event {}, {} s",
        r.visitors,
        r.event,
        f(&r.duration_seconds)
    );
    let _ = writeln!(
        o,
        "\n| flow | joined | admitted (tier 1) | passed edge | active (tier 2) | done | abandoned | no-shows | unfinished |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|---|");
    let fl = &r.flow;
    let _ = writeln!(
        o,
        "| visitors | {} | {} | {} | {} | {} | {} | {} | {} |",
        fl.joined,
        fl.admitted_tier1,
        fl.passed_edge,
        fl.active_tier2,
        fl.done,
        fl.abandoned,
        fl.no_shows,
        fl.unfinished
    );
    let t = &r.throughput;
    let _ = writeln!(
        o,
        "\nsustained: {} joins/s, {} checks/s, {} requests/s",
        f(&t.joins_per_second),
        f(&t.checks_per_second),
        f(&t.requests_per_second)
    );
    let _ = writeln!(o, "\n| endpoint | requests | p50 ms | p95 ms | p99 ms | max ms |");
    let _ = writeln!(o, "|---|---|---|---|---|---|");
    for (k, p) in &r.latency {
        let _ = writeln!(
            o,
            "| {k} | {} | {} | {} | {} | {} |",
            p.requests,
            f(&p.p50_ms),
            f(&p.p95_ms),
            f(&p.p99_ms),
            f(&p.max_ms)
        );
    }
    let a = &r.time_to_admission;
    let _ = writeln!(
        o,
        "\ntime from arrival to tier-1 admission: p50 {} s, p99 {} s; to entry token: p50 {} s, p99 {} s",
        f(&a.tier1_p50_seconds),
        f(&a.tier1_p99_seconds),
        f(&a.entry_p50_seconds),
        f(&a.entry_p99_seconds)
    );
    for (tier, x) in [("tier1", &r.fairness.tier1), ("tier2", &r.fairness.tier2)] {
        let _ = writeln!(
            o,
            "fairness ({tier}): Kendall tau {}, largest inversion {} positions / {} s",
            f(&x.kendall_tau),
            x.largest_inversion_positions,
            f(&x.largest_inversion_seconds)
        );
    }
    let c = &r.costs;
    let _ = writeln!(
        o,
        "\ncosts ({} polling): {} tier-1 Lambda calls per visitor ({} checks), {} tier-2; {} status fetches per visitor ({} of them from the CDN), {} origin status fetches/s; not counted: {} re-checks of admitted tickets",
        f(&c.polling),
        f(&c.tier1_lambda_calls_per_visitor),
        f(&c.checks_per_visitor),
        f(&c.tier2_lambda_calls_per_visitor),
        f(&c.status_fetches_per_visitor),
        f(&c.status_cache_hit_share),
        f(&c.origin_status_fetches_per_second),
        c.not_counted.tier1_rechecks
    );
    let t = &r.tier2;
    let _ = writeln!(
        o,
        "tier 2 ({} waiting): admitted slots idle p50 {} s, p90 {} s, max {} s over {} admissions; {} line document reads per visitor ({} from the CDN), {} reached the origin",
        f(&t.waiting),
        f(&t.idle_slot_seconds_p50),
        f(&t.idle_slot_seconds_p90),
        f(&t.idle_slot_seconds_max),
        t.idle_slots_measured,
        f(&t.line_reads_per_visitor),
        f(&t.line_cache_hit_share),
        t.line_origin_fetches
    );
    let e = &r.estimate;
    let _ = writeln!(
        o,
        "wait estimate at the join vs the real wait: p50 {} %, p90 {} % over {} visitors (mean signed {} %); joined after the first minute: p50 {} %, p90 {} % over {}; {} waits under {} s left out",
        f(&e.all.p50_error_pct),
        f(&e.all.p90_error_pct),
        e.all.samples,
        f(&e.all.mean_signed_error_pct),
        f(&e.after_first_minute.p50_error_pct),
        f(&e.after_first_minute.p90_error_pct),
        e.after_first_minute.samples,
        e.excluded_short_waits,
        f(&e.min_real_wait_seconds)
    );
    let of = &r.outflow;
    if of.redeemed_per_minute.is_none() {
        let w = of.whole_run.as_ref();
        let _ = writeln!(
            o,
            "outflow: no steady part of {} s or more (it starts {} s after the first served position and ends when the line is empty); whole run: served {}, redeemed {}, no-show share {}",
            outflow::MIN_STEADY_SECONDS,
            outflow::WARM_UP_SECONDS,
            f(&w.map(|w| w.served)),
            f(&w.map(|w| w.redeemed)),
            f(&w.map(|w| w.no_show_share))
        );
    } else {
        let _ = writeln!(
            o,
            "outflow over the steady part ({}–{} s): redeemed {} /min (target {}, {} %; worst minute {} %), served {} /min, no-show share {}",
            f(&of.steady.from_seconds),
            f(&of.steady.to_seconds),
            f(&of.redeemed_per_minute),
            f(&of.target_per_minute),
            f(&of.deviation_pct),
            f(&of.worst_minute_deviation_pct),
            f(&of.served_per_minute),
            f(&of.no_show_share)
        );
    }
    if let Some(bots) = &r.bots {
        let _ = writeln!(
            o,
            "\n| bot kind | bots | requests | places obtained | extra places | admissions obtained | edge passes | entry tokens | extra tier-2 slots | refused |"
        );
        let _ = writeln!(o, "|---|---|---|---|---|---|---|---|---|---|");
        for (name, k) in &bots.kinds {
            let _ = writeln!(
                o,
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                k.bots,
                k.attempts,
                f(&k.places_obtained),
                f(&k.extra_places),
                f(&k.admissions_obtained),
                f(&k.edge_passes),
                f(&k.entry_tokens),
                f(&k.extra_slots),
                serde_json::to_string(&k.refused).unwrap_or_default()
            );
        }
    }
    let d = &r.degraded;
    let _ = writeln!(
        o,
        "degradation: {} × 503 with Retry-After, {} network errors, {} unexpected 4xx, {} refusals that were no verdict (place kept), {} tier-2 re-check-ins; max active seen {}",
        d.responses_503,
        d.network_errors,
        d.unexpected_4xx,
        d.transient_refusals,
        d.rejoined_tier2,
        r.max_active_seen
    );
    for x in &r.faults {
        let mut more = String::new();
        if let Some(n) = x.responses {
            more = format!(", {n} × 403 answered in place of vwr");
        }
        if let Some(e) = &x.effect {
            let ob = x.observed.as_ref();
            more = format!(
                ", {e}: {} probes — {} refused fast, {} slow, {} answered (p50 {} ms, max {} ms)",
                f(&ob.map(|o| o.probes)),
                f(&ob.map(|o| o.refused)),
                f(&ob.map(|o| o.slow)),
                f(&ob.map(|o| o.answered)),
                f(&ob.map(|o| o.p50_ms)),
                f(&ob.map(|o| o.max_ms))
            );
        }
        let _ = writeln!(
            o,
            "fault {}: {}–{} s (injected {}, recovered {}{more})",
            x.kind,
            f(&x.started_at),
            f(&x.ended_at),
            x.injected,
            x.recovered
        );
    }
    if let Some(calls) = &r.aws_calls {
        let list: Vec<String> =
            calls.iter().map(|(k, v)| format!("{} {}", k.rsplit('.').next().unwrap_or(k), v)).collect();
        let _ = writeln!(
            o,
            "AWS calls through the proxy: {} (throttled writes: {})",
            list.join(", "),
            f(&r.aws_throttled_writes)
        );
    }
    if let Some(open) = &r.open {
        open_section(o, open);
    }
    let s = &r.safety;
    let (head, rule, extra) = match s.prequeue_violations {
        Some(v) => (" prequeueViolations |", "---|", format!(" {v} |")),
        None => ("", "", String::new()),
    };
    let _ = writeln!(
        o,
        "\n| safety | lost | placesLostToFaults | doubleAdmitted | overThresholdMoments | serverErrors |{head}"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|{rule}");
    let _ = writeln!(
        o,
        "| counters | {} | {} | {} | {} | {} |{extra}",
        s.lost, s.places_lost_to_faults, s.double_admitted, s.over_threshold_moments, s.server_errors
    );
    let by = |m: &std::collections::BTreeMap<String, u64>| {
        (!m.is_empty()).then(|| m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "))
    };
    if let Some(causes) = by(&r.places_lost.by_cause) {
        let verdicts = by(&r.places_lost.verdicts).unwrap_or_else(|| "none".into());
        let _ = writeln!(o, "places moved backwards: {causes} (tier-1 verdicts: {verdicts})");
    }
    if let Some(why) = by(&r.lost_by) {
        let _ = writeln!(o, "lost: {why}");
    }
    out
}

/// The `open` section of a `prequeue` run.
fn open_section(out: &mut String, o: &Open) {
    let ok = |b: bool| if b { "ok" } else { "FAILED" };
    let d = o.positions.drawn();
    let r = &o.rates;
    let _ = writeln!(
        out,
        "\nopen: openAt at {} s (seen open {} s later); {} visitors arrived before it, {} after",
        f(&o.open_at_seconds),
        f(&o.open_seen_after_seconds),
        o.before_open_visitors,
        o.after_open_visitors
    );
    let _ = writeln!(
        out,
        "pre-queue: P = {} (sealed counts {}), {} pre-queue answers; positions 1..=P: {} ({} drawn, {} missing, {} duplicates, {} never seen, {} joined after the seal)",
        f(&o.prequeue_size),
        f(&o.sealed_counts),
        o.prequeue_joins,
        ok(o.positions.ok()),
        f(&d.map(|d| d.drawn)),
        f(&d.map(|d| d.missing)),
        f(&d.map(|d| d.duplicates)),
        f(&d.map(|d| d.unobserved)),
        f(&d.map(|d| d.late_sealed_joins))
    );
    let _ = writeln!(
        out,
        "post-open joins: {}, at or below P: {}; Spearman rank correlation of pre-queue arrival and drawn position: {} (≈ 0 when fair)",
        f(&d.map(|d| d.post_open_joins)),
        f(&d.map(|d| d.post_open_at_or_below_p)),
        f(&d.and_then(|d| d.spearman_arrival_vs_position))
    );
    let _ = writeln!(
        out,
        "draw: seed commitment {} before the open; revealed seed {}: {}",
        f(&o.seed_commitment),
        f(&o.seed),
        ok(o.commitment_ok)
    );
    let _ = writeln!(
        out,
        "load in the {} s after openAt (1-s buckets): peak {} requests/s to assign+check+status ({} checks/s) vs mean {} ({} checks/s) over the run, × {}",
        r.window_seconds,
        r.peak_per_second,
        r.peak_checks_per_second,
        f(&r.mean_per_second),
        f(&r.mean_checks_per_second),
        f(&r.peak_to_mean)
    );
    let _ = writeln!(out, "  per second: {}; checks: {}", f(&r.per_second), f(&r.checks_per_second));
    let c = &o.first_check_after_open;
    let _ = writeln!(
        out,
        "first check after openAt: p50 {} s, p99 {} s, max {} s; status document reads before the open: {}",
        f(&c.p50_seconds),
        f(&c.p99_seconds),
        f(&c.max_seconds),
        o.status_reads
    );
}
