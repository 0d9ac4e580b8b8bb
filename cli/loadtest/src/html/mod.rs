//! `vwr loadtest --html FILE`: the report as one self-contained page — inline CSS and SVG
//! charts drawn here from the [`Report`], no script, nothing fetched when it is viewed.
//!
//! Charts (`charts`): the line over time (waiting, served, admitted in tier 1, active in tier
//! 2), the visitors' calls per second (tier-1 Lambda calls, status fetches, origin fetches),
//! served vs redeemed vs the target per minute (the steady part marked), latency percentiles
//! per endpoint, time to admission, and the wait estimate's error; then the tables (costs,
//! outflow, estimate, safety, fairness, flow). Sections shown whole (flow, degradation, the
//! open, …) list every field as the JSON names it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::charts::{Line, STYLE, bar_chart, esc, fmt_f, histogram, line_chart};
use super::options::Mode;
use super::report::Report;

pub mod charts;
#[cfg(test)]
mod tests;

/// A JSON value for people (escaped).
fn show(v: &Value) -> String {
    match v {
        Value::Null => "–".to_owned(),
        Value::String(s) => esc(s),
        Value::Number(n) => n.as_f64().map_or_else(|| esc(&n.to_string()), fmt_f),
        Value::Array(a) => a.iter().map(show).collect::<Vec<_>>().join(", "),
        other => esc(&other.to_string()),
    }
}

/// A figure for people, as its JSON reads (escaped).
fn sh<T: Serialize + ?Sized>(v: &T) -> String {
    show(&serde_json::to_value(v).unwrap_or(Value::Null))
}

/// A column of a series for a chart.
fn floats<T: Copy + Into<Option<u64>>>(v: &[T]) -> Vec<Option<f64>> {
    v.iter().map(|x| (*x).into().map(|n| n as f64)).collect()
}

/// A two-column table of (label, value) rows; values are already escaped.
fn kv_table(rows: &[(&str, String)]) -> String {
    let mut out = String::from("<table><tbody>");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{}</th><td class=\"n\">{v}</td></tr>", esc(k));
    }
    out.push_str("</tbody></table>");
    out
}

/// Every leaf of `v` as (dotted path, shown value).
fn flatten(v: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(x, &key, out);
            }
        }
        other => out.push((prefix.to_owned(), show(other))),
    }
}

/// A section shown whole: every field by its JSON name.
fn flat_table<T: Serialize + ?Sized>(v: &T) -> String {
    let mut rows = Vec::new();
    flatten(&serde_json::to_value(v).unwrap_or(Value::Null), "", &mut rows);
    let rows: Vec<(&str, String)> = rows.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    kv_table(&rows)
}

/// `value` already shown.
fn card(label: &str, value: &str, note: &str) -> String {
    format!("<div class=\"card\">{}<b>{value}</b>{}</div>", esc(label), esc(note))
}

fn header(r: &Report) -> String {
    let arrival = match &r.open {
        Some(o) => format!("pre-queue: {} before the open, then {}", o.before_open_visitors, sh(&r.arrival)),
        None => sh(&r.arrival),
    };
    let c = &r.config;
    let outflow = match c.target_per_minute {
        Some(t) if c.mode == Mode::TargetArrivals => format!("target {t} redeemed per minute"),
        _ => format!("batch {} every {} s", sh(&c.batch_size), sh(&c.interval_seconds)),
    };
    // The address without its scheme: the page holds no URL at all.
    let base = r.base_url.split_once("://").map_or(r.base_url.as_str(), |(_, rest)| rest);
    format!(
        "<header><h1>vwr loadtest — {} visitors</h1><p class=\"meta\">event <b>{}</b> · scenario {} · arrival {arrival} · polling <b>{}</b> · {} s · {outflow}, {} shard(s), no-shows {}, tier-2 threshold {}, dwell {} s · against {}</p></header>",
        sh(&r.visitors),
        esc(&r.event),
        sh(&r.scenario),
        sh(&r.costs.polling),
        sh(&r.duration_seconds),
        sh(&c.shards),
        sh(&c.no_show_rate),
        sh(&c.threshold),
        sh(&c.dwell_seconds),
        esc(base),
    )
}

fn costs_section(r: &Report) -> String {
    let c = &r.costs;
    let k = &c.calls;
    format!(
        "<section id=\"costs\"><h2>Costs</h2><div class=\"cards\">{}{}{}{}</div><div class=\"row\">{}\
<p>A tier-1 Lambda call is an <code>assign</code>, a <code>check</code>, or a status document fetch that reached the origin (the CDN said <code>Miss</code>, or there was no CDN in front). A fetch answered from the CDN's 1-s cache costs no Lambda call, so the status document costs about one origin call per second per event, whatever the number of visitors. Tier-2 calls are all <code>/api/queue/*</code> requests (no CDN there). Per visitor = over all visitors of the run. The harness's re-check of each admitted ticket (a second tab, to catch a second identity) is not a waiting page's call and is not counted.</p></div></section>",
        card("tier-1 Lambda calls per visitor", &sh(&c.tier1_lambda_calls_per_visitor), ""),
        card("tier-2 Lambda calls per visitor", &sh(&c.tier2_lambda_calls_per_visitor), ""),
        card("status fetches per visitor", &sh(&c.status_fetches_per_visitor), ""),
        card("origin status fetches per second", &sh(&c.origin_status_fetches_per_second), ""),
        kv_table(&[
            ("assign", sh(&k.assign)),
            ("check", sh(&k.check)),
            ("status fetches", sh(&k.status_fetches)),
            ("… answered by the CDN", sh(&k.status_cache_hits)),
            ("… sent to the origin", sh(&k.status_origin_fetches)),
            ("… without a CDN", sh(&k.status_without_cdn)),
            ("tier-1 Lambda calls", sh(&k.tier1)),
            ("tier-2 Lambda calls", sh(&k.tier2)),
            ("checks per visitor", sh(&c.checks_per_visitor)),
            ("not counted: re-checks of admitted tickets", sh(&c.not_counted.tier1_rechecks)),
        ]),
    )
}

fn over_time_charts(r: &Report) -> Vec<String> {
    let s = &r.series;
    let xs: Vec<Option<f64>> = s.seconds.iter().copied().map(Some).collect();
    if xs.is_empty() {
        return vec!["<figure><h3>over time</h3><p>No samples.</p></figure>".to_owned()];
    }
    let line = line_chart(
        "the line over time",
        "seconds since the start",
        &xs,
        &[
            Line { name: "waiting (tier 1)", ys: floats(&s.waiting) },
            Line { name: "served (servingCounter)", ys: floats(&s.serving_counter) },
            Line { name: "admitted (tier 1, seen)", ys: floats(&s.admitted_tier1) },
            Line { name: "active (tier 2)", ys: floats(&s.active_tier2) },
        ],
        &[],
        "visitors / positions",
        "— sampled once a second (tier 1 from its admin status, tier 2 from its admin status)",
    );
    let calls = line_chart(
        "the visitors' calls per second",
        "seconds since the start",
        &xs,
        &[
            Line { name: "status fetches", ys: s.status_fetches_per_second.clone() },
            Line { name: "tier-1 Lambda calls", ys: s.tier1_calls_per_second.clone() },
            Line { name: "origin status fetches", ys: s.origin_status_fetches_per_second.clone() },
        ],
        &[],
        "requests per second",
        "— harness probes and admin reads not included",
    );
    vec![line, calls]
}

fn outflow_chart(r: &Report) -> Option<String> {
    let s = &r.series;
    let xs: Vec<Option<f64>> = s.seconds.iter().copied().map(Some).collect();
    let redeemed = s.redeemed_per_minute.clone();
    if xs.is_empty() || redeemed.iter().all(Option::is_none) {
        return None;
    }
    let o = &r.outflow;
    let mut lines = vec![
        Line { name: "served per minute", ys: s.served_per_minute.clone() },
        Line { name: "redeemed per minute", ys: redeemed },
    ];
    if let Some(t) = o.target_per_minute {
        lines.push(Line { name: "target", ys: vec![Some(t as f64); xs.len()] });
    }
    let mut marks = Vec::new();
    if let (Some(a), Some(b)) = (o.steady.from_seconds, o.steady.to_seconds)
        && b > a
    {
        marks.extend([(a, "steady from"), (b, "to")]);
    }
    Some(line_chart(
        "served vs redeemed vs target",
        "seconds since the start",
        &xs,
        &lines,
        &marks,
        "per minute",
        &format!(
            "— over the {} s around each sample; redeemed = first admitted checks as tier 1 counts them; dashed: the steady part",
            fmt_f(s.rate_window_seconds)
        ),
    ))
}

/// The admin status's outflow figures the page shows (the server's own document).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerFigures {
    redeemed_per_minute: Option<f64>,
    served_per_minute: Option<f64>,
    no_show_share: Option<f64>,
}

fn outflow_section(r: &Report) -> String {
    let o = &r.outflow;
    let st = &o.steady;
    let w = o.whole_run.as_ref();
    let sv: ServerFigures =
        o.server.as_ref().and_then(|v| ServerFigures::deserialize(v).ok()).unwrap_or_default();
    format!(
        "<section id=\"outflow\"><h2>Outflow</h2><div class=\"cards\">{}{}{}{}</div><div class=\"row\">{}<p>{}</p></div></section>",
        card("redeemed per minute (steady part)", &sh(&o.redeemed_per_minute), ""),
        card("target per minute", &sh(&o.target_per_minute), ""),
        card("deviation from the target %", &sh(&o.deviation_pct), ""),
        card("no-show share (steady part)", &sh(&o.no_show_share), ""),
        kv_table(&[
            ("mode", sh(&r.config.mode)),
            ("no-show rate asked", sh(&r.config.no_show_rate)),
            ("steady part from s", sh(&st.from_seconds)),
            ("… to s", sh(&st.to_seconds)),
            ("… seconds", sh(&st.seconds)),
            ("served per minute", sh(&o.served_per_minute)),
            ("worst minute: deviation %", sh(&o.worst_minute_deviation_pct)),
            ("whole run: served", sh(&w.map(|w| w.served))),
            ("whole run: redeemed", sh(&w.map(|w| w.redeemed))),
            ("whole run: no-show share", sh(&w.and_then(|w| w.no_show_share))),
            ("server: redeemed per minute", sh(&sv.redeemed_per_minute)),
            ("server: served per minute", sh(&sv.served_per_minute)),
            ("server: no-show share", sh(&sv.no_show_share)),
        ]),
        esc(&o.note)
    )
}

fn latency_chart(r: &Report) -> String {
    let m = &r.latency;
    let cats: Vec<String> = m.keys().cloned().collect();
    let pick = |ms: fn(&super::report::Percentiles) -> f64| m.values().map(ms).collect::<Vec<_>>();
    bar_chart(
        "latency percentiles per endpoint",
        &cats,
        &[("p50", pick(|p| p.p50_ms)), ("p95", pick(|p| p.p95_ms)), ("p99", pick(|p| p.p99_ms))],
        "milliseconds",
        "— as the harness saw it (waiting for one of its own connections is not counted)",
    )
}

fn latency_section(r: &Report) -> String {
    let mut table = String::from(
        "<table><thead><tr><th>endpoint</th><th>requests</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>",
    );
    for (k, p) in &r.latency {
        let _ = write!(
            table,
            "<tr><th>{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(k),
            sh(&p.requests),
            sh(&p.p50_ms),
            sh(&p.p95_ms),
            sh(&p.p99_ms),
            sh(&p.max_ms)
        );
    }
    table.push_str("</tbody></table>");
    format!("<section id=\"latency\"><h2>Latency</h2>{table}</section>")
}

fn admission_chart(r: &Report) -> String {
    let h = &r.time_to_admission.tier1_histogram;
    if h.counts.is_empty() {
        return "<figure><h3>time to admission</h3><p>Nobody was admitted.</p></figure>".to_owned();
    }
    histogram(
        "time from arrival to tier-1 admission",
        h.bin_seconds,
        &h.counts,
        "s",
        false,
        "visitors by seconds from arrival to the tier-1 admission they saw",
    )
}

fn admission_section(r: &Report) -> String {
    let a = &r.time_to_admission;
    format!(
        "<section id=\"admission\"><h2>Time to admission</h2>{}</section>",
        kv_table(&[
            ("tier 1 p50 s", sh(&a.tier1_p50_seconds)),
            ("tier 1 p99 s", sh(&a.tier1_p99_seconds)),
            ("entry token p50 s", sh(&a.entry_p50_seconds)),
            ("entry token p99 s", sh(&a.entry_p99_seconds)),
        ])
    )
}

fn estimate_chart(r: &Report) -> String {
    let h = &r.estimate.histogram;
    if h.counts.iter().sum::<u64>() == 0 {
        return "<figure><h3>wait estimate error</h3><p>No wait long enough to judge an estimate.</p></figure>"
            .to_owned();
    }
    histogram(
        "wait estimate error",
        h.bin_pct,
        &h.counts,
        "%",
        true,
        "|estimate at the join − real wait| ÷ real wait, per visitor (waits under 5 s left out)",
    )
}

fn estimate_section(r: &Report) -> String {
    let e = &r.estimate;
    let f = &e.after_first_minute;
    format!(
        "<section id=\"estimate\"><h2>Wait estimate</h2><div class=\"row\">{}<p>{}</p></div></section>",
        kv_table(&[
            ("visitors judged", sh(&e.all.samples)),
            ("p50 error %", sh(&e.all.p50_error_pct)),
            ("p90 error %", sh(&e.all.p90_error_pct)),
            ("mean signed error % (> 0: too long)", sh(&e.all.mean_signed_error_pct)),
            ("joined after the first minute: visitors", sh(&f.samples)),
            ("… p50 error %", sh(&f.p50_error_pct)),
            ("… p90 error %", sh(&f.p90_error_pct)),
            ("real wait p50 s", sh(&e.real_wait_p50_seconds)),
            ("estimate p50 s", sh(&e.estimate_p50_seconds)),
            ("left out: waits under 5 s", sh(&e.excluded_short_waits)),
        ]),
        esc(&e.note)
    )
}

fn safety_section(r: &Report) -> String {
    let mut rows = String::new();
    // Every counter, by its JSON name.
    if let Ok(Value::Object(m)) = serde_json::to_value(&r.safety) {
        for (k, v) in &m {
            let class = if v.as_u64() == Some(0) { "ok" } else { "bad" };
            let _ = write!(rows, "<tr><th>{}</th><td class=\"n {class}\">{}</td></tr>", esc(k), show(v));
        }
    }
    format!(
        "<section id=\"safety\"><h2>Safety</h2><p>Every counter must be 0.</p><table><tbody>{rows}</tbody></table><h2>Places moved backwards</h2>{}<h2>Lost, by why</h2>{}<h2>Degradation seen</h2>{}</section>",
        flat_table(&r.places_lost),
        flat_table(&r.lost_by),
        flat_table(&r.degraded)
    )
}

fn fairness_section(r: &Report) -> String {
    let mut rows = String::new();
    for (tier, x) in [("tier1", &r.fairness.tier1), ("tier2", &r.fairness.tier2)] {
        let _ = write!(
            rows,
            "<tr><th>{tier}</th><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            sh(&x.kendall_tau),
            sh(&x.largest_inversion_positions),
            sh(&x.largest_inversion_seconds)
        );
    }
    format!(
        "<section id=\"fairness\"><h2>Fairness</h2><table><thead><tr><th>tier</th><th>Kendall tau</th><th>largest inversion (positions)</th><th>largest inversion (s of arrival)</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )
}

fn flow_section(r: &Report) -> String {
    format!(
        "<section id=\"flow\"><h2>Flow and throughput</h2>{}{}</section>",
        flat_table(&r.flow),
        flat_table(&r.throughput)
    )
}

/// The page for a report built by `vwr loadtest`.
pub fn render(r: &Report) -> String {
    let mut body = header(r);
    body.push_str(&costs_section(r));
    let mut charts = over_time_charts(r);
    charts.extend(outflow_chart(r));
    charts.push(latency_chart(r));
    charts.push(admission_chart(r));
    charts.push(estimate_chart(r));
    let _ = write!(
        body,
        "<section id=\"charts\"><h2>Charts</h2><div class=\"charts\">{}</div></section>",
        charts.concat()
    );
    body.push_str(&outflow_section(r));
    body.push_str(&estimate_section(r));
    body.push_str(&safety_section(r));
    body.push_str(&fairness_section(r));
    body.push_str(&admission_section(r));
    body.push_str(&latency_section(r));
    body.push_str(&flow_section(r));
    if let Some(open) = &r.open {
        let _ = write!(body, "<section id=\"open\"><h2>The open</h2>{}</section>", flat_table(open));
    }
    if let Some(calls) = &r.aws_calls {
        let _ = write!(body, "<section id=\"aws\"><h2>AWS calls</h2>{}</section>", flat_table(calls));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>vwr loadtest — {}</title><style>{STYLE}</style></head><body>{body}</body></html>\n",
        esc(&r.event)
    )
}
