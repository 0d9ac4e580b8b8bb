//! `vwr loadtest --html FILE`: the report as one self-contained page — inline CSS and SVG
//! charts drawn here from the report's JSON, no script, nothing fetched when it is viewed.
//!
//! Charts: the line over time (waiting, served, admitted in tier 1, active in tier 2), the
//! visitors' calls per second (tier-1 Lambda calls, status fetches, origin fetches), served vs
//! redeemed vs the target per minute (the steady part marked), latency percentiles per
//! endpoint, time to admission, and the wait estimate's error; then the tables (costs,
//! outflow, estimate, safety, fairness, flow).

use std::fmt::Write as _;

use serde_json::Value;

// Each chart is drawn for half the page's width (two per row, one on a narrow screen).
const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 64.0;
const PALETTE: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b"];

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#222;background:#fff}\
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
p{line-height:1.45}.meta{color:#555}table{border-collapse:collapse;margin:.5em 0;font-size:.92em}\
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5;font-weight:600}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#b00020;font-weight:700}.ok{color:#1b7a1b;font-weight:700}\
.key{margin-right:14px;white-space:nowrap}.sw{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}\
figure{margin:0}figcaption{font-size:.85em;color:#444;margin-top:2px}svg{width:100%;height:auto;background:#fcfcfc;border:1px solid #eee}\
svg text{font-size:11px;fill:#444}.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:14px 18px}\
h3{font-size:1em;margin:.2em 0}.row{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}.row p{flex:1 1 380px;margin:.5em 0}.grid{stroke:#e4e4e4}.axis{stroke:#999}.cards{display:flex;flex-wrap:wrap;gap:10px}\
.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:190px}.card b{display:block;font-size:1.4em}";

/// Escapes text for HTML and SVG.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number for people: integers as they are, others to at most 3 decimals.
fn fmt_f(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

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

fn floats(v: &Value) -> Vec<Option<f64>> {
    v.as_array().map(|a| a.iter().map(Value::as_f64).collect()).unwrap_or_default()
}

/// A round step for about `ticks` intervals over `range`.
fn nice_step(range: f64, ticks: f64) -> f64 {
    let raw = range / ticks;
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// 0..=hi rounded up to a step, and the step.
fn axis(max: f64) -> (f64, f64) {
    if max.is_nan() || max <= 0.0 {
        return (1.0, 1.0);
    }
    let step = nice_step(max, 5.0);
    let hi = ((max / step).ceil() * step).max(step);
    (hi, step)
}

fn svg_open(label: &str) -> String {
    format!(
        "<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{}\" preserveAspectRatio=\"xMidYMid meet\">",
        esc(label)
    )
}

/// Horizontal grid lines and y tick labels over `0..=hi`.
fn y_grid(out: &mut String, hi: f64, step: f64, y_label: &str) {
    let plot_h = HEIGHT - TOP - BOTTOM;
    let mut v = 0.0;
    while v <= hi + step / 2.0 {
        let y = TOP + plot_h * (1.0 - v / hi);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_f(v)
        );
        v += step;
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{:.1}\"/><text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        HEIGHT - BOTTOM,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        esc(y_label)
    );
}

fn legend(series: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, color) in series {
        let _ = write!(
            out,
            "<span class=\"key\"><span class=\"sw\" style=\"background:{color}\"></span>{}</span>",
            esc(name)
        );
    }
    out
}

/// One named series of a line chart.
pub struct Line<'a> {
    pub name: &'a str,
    pub ys: Vec<Option<f64>>,
}

/// A line chart of series over `xs` (seconds); gaps where a value is missing; `marks` are
/// labelled vertical lines at given seconds.
fn line_chart(
    title: &str,
    xs: &[Option<f64>],
    lines: &[Line<'_>],
    marks: &[(f64, &str)],
    y_label: &str,
    caption: &str,
) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_max = xs.iter().flatten().copied().fold(0.0, f64::max);
    let y_max = lines.iter().flat_map(|l| l.ys.iter().flatten().copied()).fold(0.0, f64::max);
    let (xhi, xstep) = axis(x_max);
    let (yhi, ystep) = axis(y_max);
    let mut out = format!("<figure><h3>{}</h3>{}", esc(title), svg_open(title));
    y_grid(&mut out, yhi, ystep, y_label);
    let mut v = 0.0;
    while v <= xhi + xstep / 2.0 {
        let x = LEFT + plot_w * v / xhi;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            HEIGHT - BOTTOM,
            HEIGHT - BOTTOM + 16.0,
            fmt_f(v)
        );
        v += xstep;
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">seconds since the start</text>",
        HEIGHT - BOTTOM,
        WIDTH - RIGHT,
        HEIGHT - BOTTOM,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0
    );
    for (x, label) in marks.iter().filter(|m| m.0 >= 0.0 && m.0 <= xhi) {
        let x = LEFT + plot_w * x / xhi;
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            HEIGHT - BOTTOM,
            x + 3.0,
            TOP + 11.0,
            esc(label)
        );
    }
    let mut keys = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        keys.push((l.name, color));
        let mut run: Vec<String> = Vec::new();
        let flush = |run: &mut Vec<String>, out: &mut String| {
            if run.len() > 1 {
                let _ = write!(
                    out,
                    "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
                    run.join(" ")
                );
            }
            run.clear();
        };
        for (x, y) in xs.iter().zip(&l.ys) {
            match (x, y) {
                (Some(x), Some(y)) => {
                    run.push(format!("{:.1},{:.1}", LEFT + plot_w * x / xhi, TOP + plot_h * (1.0 - y / yhi)));
                }
                _ => flush(&mut run, &mut out),
            }
        }
        flush(&mut run, &mut out);
    }
    let _ = write!(out, "</svg><figcaption>{} {}</figcaption></figure>", legend(&keys), esc(caption));
    out
}

/// Grouped bars: one group of bars per category, one bar per series.
fn bar_chart(
    title: &str,
    categories: &[String],
    series: &[(&str, Vec<f64>)],
    y_label: &str,
    caption: &str,
) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y_max = series.iter().flat_map(|s| s.1.iter().copied()).fold(0.0, f64::max);
    let (yhi, ystep) = axis(y_max);
    let mut out = format!("<figure><h3>{}</h3>{}", esc(title), svg_open(title));
    y_grid(&mut out, yhi, ystep, y_label);
    let n = categories.len().max(1) as f64;
    let slot = plot_w / n;
    let bar = (slot * 0.8) / series.len().max(1) as f64;
    for (c, name) in categories.iter().enumerate() {
        let x0 = LEFT + slot * c as f64 + slot * 0.1;
        for (k, (_, vals)) in series.iter().enumerate() {
            let v = vals.get(c).copied().unwrap_or(0.0).max(0.0);
            let h = plot_h * v / yhi;
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"><title>{} {}: {}</title></rect>",
                x0 + bar * k as f64,
                TOP + plot_h - h,
                (bar - 1.0).max(1.0),
                PALETTE[k % PALETTE.len()],
                esc(name),
                esc(series[k].0),
                fmt_f(v)
            );
        }
        let (x, y) = (LEFT + slot * (c as f64 + 0.5), HEIGHT - BOTTOM + 14.0);
        let _ = write!(
            out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"end\" transform=\"rotate(-30 {x:.1} {y:.1})\">{}</text>",
            esc(name)
        );
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        HEIGHT - BOTTOM,
        WIDTH - RIGHT,
        HEIGHT - BOTTOM
    );
    let keys: Vec<(&str, &str)> =
        series.iter().enumerate().map(|(k, s)| (s.0, PALETTE[k % PALETTE.len()])).collect();
    let _ = write!(out, "</svg><figcaption>{} {}</figcaption></figure>", legend(&keys), esc(caption));
    out
}

/// A histogram of `counts` in bins of `width` from 0 (the last bin open-ended when `open_end`).
fn histogram(title: &str, width: f64, counts: &[u64], unit: &str, open_end: bool, caption: &str) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y_max = counts.iter().copied().max().unwrap_or(0) as f64;
    let (yhi, ystep) = axis(y_max);
    let mut out = format!("<figure><h3>{}</h3>{}", esc(title), svg_open(title));
    y_grid(&mut out, yhi, ystep, "visitors");
    let n = counts.len().max(1);
    let slot = plot_w / n as f64;
    let every = n.div_ceil(12).max(1);
    for (i, c) in counts.iter().enumerate() {
        let h = plot_h * *c as f64 / yhi;
        let (lo, hi) = (width * i as f64, width * (i + 1) as f64);
        let range = if open_end && i + 1 == n {
            format!("≥ {} {unit}", fmt_f(lo))
        } else {
            format!("{}–{} {unit}", fmt_f(lo), fmt_f(hi))
        };
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"><title>{}: {c}</title></rect>",
            LEFT + slot * i as f64 + 0.5,
            TOP + plot_h - h,
            (slot - 1.0).max(1.0),
            PALETTE[0],
            esc(&range)
        );
        if i % every == 0 {
            let label = if open_end && i + 1 == n { format!("≥{}", fmt_f(lo)) } else { fmt_f(lo) };
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                LEFT + slot * i as f64,
                HEIGHT - BOTTOM + 16.0,
                esc(&label)
            );
        }
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></svg><figcaption>{}</figcaption></figure>",
        HEIGHT - BOTTOM,
        WIDTH - RIGHT,
        HEIGHT - BOTTOM,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0,
        esc(unit),
        esc(caption)
    );
    out
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

fn flat_table(v: &Value) -> String {
    let mut rows = Vec::new();
    flatten(v, "", &mut rows);
    let rows: Vec<(&str, String)> = rows.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    kv_table(&rows)
}

fn card(label: &str, value: &Value, note: &str) -> String {
    format!("<div class=\"card\">{}<b>{}</b>{}</div>", esc(label), show(value), esc(note))
}

fn header(r: &Value) -> String {
    let arrival = match r["open"]["beforeOpenVisitors"].as_u64() {
        Some(n) => format!("pre-queue: {n} before the open, then {}", show(&r["arrival"])),
        None => show(&r["arrival"]),
    };
    let c = &r["config"];
    let outflow = match c["targetPerMinute"].as_u64() {
        Some(t) if c["mode"] == "targetArrivals" => format!("target {t} redeemed per minute"),
        _ => format!("batch {} every {} s", show(&c["batchSize"]), show(&c["intervalSeconds"])),
    };
    // The address without its scheme: the page holds no URL at all.
    let base = r["baseUrl"].as_str().unwrap_or_default();
    let base = base.split_once("://").map_or(base, |(_, rest)| rest);
    format!(
        "<header><h1>vwr loadtest — {} visitors</h1><p class=\"meta\">event <b>{}</b> · scenario {} · arrival {arrival} · polling <b>{}</b> · {} s · {outflow}, {} shard(s), no-shows {}, tier-2 threshold {}, dwell {} s · against {}</p></header>",
        show(&r["visitors"]),
        show(&r["event"]),
        show(&r["scenario"]),
        show(&r["costs"]["polling"]),
        show(&r["durationSeconds"]),
        show(&c["shards"]),
        show(&c["noShowRate"]),
        show(&c["threshold"]),
        show(&c["dwellSeconds"]),
        esc(base),
    )
}

fn costs_section(r: &Value) -> String {
    let c = &r["costs"];
    let k = &c["calls"];
    format!(
        "<section id=\"costs\"><h2>Costs</h2><div class=\"cards\">{}{}{}{}</div><div class=\"row\">{}\
<p>A tier-1 Lambda call is an <code>assign</code>, a <code>check</code>, or a status document fetch that reached the origin (the CDN said <code>Miss</code>, or there was no CDN in front). A fetch answered from the CDN's 1-s cache costs no Lambda call, so the status document costs about one origin call per second per event, whatever the number of visitors. Tier-2 calls are all <code>/api/queue/*</code> requests (no CDN there). Per visitor = over all visitors of the run. The harness's re-check of each admitted ticket (a second tab, to catch a second identity) is not a waiting page's call and is not counted.</p></div></section>",
        card("tier-1 Lambda calls per visitor", &c["tier1LambdaCallsPerVisitor"], ""),
        card("tier-2 Lambda calls per visitor", &c["tier2LambdaCallsPerVisitor"], ""),
        card("status fetches per visitor", &c["statusFetchesPerVisitor"], ""),
        card("origin status fetches per second", &c["originStatusFetchesPerSecond"], ""),
        kv_table(&[
            ("assign", show(&k["assign"])),
            ("check", show(&k["check"])),
            ("status fetches", show(&k["statusFetches"])),
            ("… answered by the CDN", show(&k["statusCacheHits"])),
            ("… sent to the origin", show(&k["statusOriginFetches"])),
            ("… without a CDN", show(&k["statusWithoutCdn"])),
            ("tier-1 Lambda calls", show(&k["tier1"])),
            ("tier-2 Lambda calls", show(&k["tier2"])),
            ("checks per visitor", show(&c["checksPerVisitor"])),
            ("not counted: re-checks of admitted tickets", show(&c["notCounted"]["tier1Rechecks"])),
        ]),
    )
}

fn over_time_charts(r: &Value) -> Vec<String> {
    let s = &r["series"];
    let xs = floats(&s["seconds"]);
    if xs.is_empty() {
        return vec!["<figure><h3>over time</h3><p>No samples.</p></figure>".to_owned()];
    }
    let line = line_chart(
        "the line over time",
        &xs,
        &[
            Line { name: "waiting (tier 1)", ys: floats(&s["waiting"]) },
            Line { name: "served (servingCounter)", ys: floats(&s["servingCounter"]) },
            Line { name: "admitted (tier 1, seen)", ys: floats(&s["admittedTier1"]) },
            Line { name: "active (tier 2)", ys: floats(&s["activeTier2"]) },
        ],
        &[],
        "visitors / positions",
        "— sampled once a second (tier 1 from its admin status, tier 2 from its admin status)",
    );
    let calls = line_chart(
        "the visitors' calls per second",
        &xs,
        &[
            Line { name: "status fetches", ys: floats(&s["statusFetchesPerSecond"]) },
            Line { name: "tier-1 Lambda calls", ys: floats(&s["tier1CallsPerSecond"]) },
            Line { name: "origin status fetches", ys: floats(&s["originStatusFetchesPerSecond"]) },
        ],
        &[],
        "requests per second",
        "— harness probes and admin reads not included",
    );
    vec![line, calls]
}

fn outflow_chart(r: &Value) -> Option<String> {
    let s = &r["series"];
    let xs = floats(&s["seconds"]);
    let redeemed = floats(&s["redeemedPerMinute"]);
    if xs.is_empty() || redeemed.iter().all(Option::is_none) {
        return None;
    }
    let o = &r["outflow"];
    let mut lines = vec![
        Line { name: "served per minute", ys: floats(&s["servedPerMinute"]) },
        Line { name: "redeemed per minute", ys: redeemed },
    ];
    if let Some(t) = o["targetPerMinute"].as_f64() {
        lines.push(Line { name: "target", ys: vec![Some(t); xs.len()] });
    }
    let mut marks = Vec::new();
    if let (Some(a), Some(b)) = (o["steady"]["fromSeconds"].as_f64(), o["steady"]["toSeconds"].as_f64())
        && b > a
    {
        marks.extend([(a, "steady from"), (b, "to")]);
    }
    let window = s["rateWindowSeconds"].as_f64().unwrap_or(30.0);
    Some(line_chart(
        "served vs redeemed vs target",
        &xs,
        &lines,
        &marks,
        "per minute",
        &format!(
            "— over the {} s around each sample; redeemed = first admitted checks as tier 1 counts them; dashed: the steady part",
            fmt_f(window)
        ),
    ))
}

fn outflow_section(r: &Value) -> String {
    let o = &r["outflow"];
    if !o.is_object() {
        return String::new();
    }
    let st = &o["steady"];
    let w = &o["wholeRun"];
    let sv = &o["server"];
    format!(
        "<section id=\"outflow\"><h2>Outflow</h2><div class=\"cards\">{}{}{}{}</div><div class=\"row\">{}<p>{}</p></div></section>",
        card("redeemed per minute (steady part)", &o["redeemedPerMinute"], ""),
        card("target per minute", &o["targetPerMinute"], ""),
        card("deviation from the target %", &o["deviationPct"], ""),
        card("no-show share (steady part)", &o["noShowShare"], ""),
        kv_table(&[
            ("mode", show(&r["config"]["mode"])),
            ("no-show rate asked", show(&r["config"]["noShowRate"])),
            ("steady part from s", show(&st["fromSeconds"])),
            ("… to s", show(&st["toSeconds"])),
            ("… seconds", show(&st["seconds"])),
            ("served per minute", show(&o["servedPerMinute"])),
            ("worst minute: deviation %", show(&o["worstMinuteDeviationPct"])),
            ("whole run: served", show(&w["served"])),
            ("whole run: redeemed", show(&w["redeemed"])),
            ("whole run: no-show share", show(&w["noShowShare"])),
            ("server: redeemed per minute", show(&sv["redeemedPerMinute"])),
            ("server: served per minute", show(&sv["servedPerMinute"])),
            ("server: no-show share", show(&sv["noShowShare"])),
        ]),
        show(&o["note"])
    )
}

fn latency_chart(r: &Value) -> Option<String> {
    let m = r["latency"].as_object()?;
    let cats: Vec<String> = m.keys().cloned().collect();
    let pick = |k: &str| m.values().map(|p| p[k].as_f64().unwrap_or(0.0)).collect::<Vec<_>>();
    Some(bar_chart(
        "latency percentiles per endpoint",
        &cats,
        &[("p50", pick("p50Ms")), ("p95", pick("p95Ms")), ("p99", pick("p99Ms"))],
        "milliseconds",
        "— as the harness saw it (waiting for one of its own connections is not counted)",
    ))
}

fn latency_section(r: &Value) -> String {
    let Some(m) = r["latency"].as_object() else {
        return "<section id=\"latency\"><h2>Latency</h2><p>No requests.</p></section>".to_owned();
    };
    let mut table = String::from(
        "<table><thead><tr><th>endpoint</th><th>requests</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>",
    );
    for (k, p) in m {
        let _ = write!(
            table,
            "<tr><th>{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(k),
            show(&p["requests"]),
            show(&p["p50Ms"]),
            show(&p["p95Ms"]),
            show(&p["p99Ms"]),
            show(&p["maxMs"])
        );
    }
    table.push_str("</tbody></table>");
    format!("<section id=\"latency\"><h2>Latency</h2>{table}</section>")
}

fn counts_of(v: &Value) -> Vec<u64> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

fn admission_chart(r: &Value) -> String {
    let h = &r["timeToAdmission"]["tier1Histogram"];
    let counts = counts_of(&h["counts"]);
    if counts.is_empty() {
        return "<figure><h3>time to admission</h3><p>Nobody was admitted.</p></figure>".to_owned();
    }
    histogram(
        "time from arrival to tier-1 admission",
        h["binSeconds"].as_f64().unwrap_or(1.0),
        &counts,
        "s",
        false,
        "visitors by seconds from arrival to the tier-1 admission they saw",
    )
}

fn admission_section(r: &Value) -> String {
    let a = &r["timeToAdmission"];
    format!(
        "<section id=\"admission\"><h2>Time to admission</h2>{}</section>",
        kv_table(&[
            ("tier 1 p50 s", show(&a["tier1P50Seconds"])),
            ("tier 1 p99 s", show(&a["tier1P99Seconds"])),
            ("entry token p50 s", show(&a["entryP50Seconds"])),
            ("entry token p99 s", show(&a["entryP99Seconds"])),
        ])
    )
}

fn estimate_chart(r: &Value) -> String {
    let h = &r["estimate"]["histogram"];
    let counts = counts_of(&h["counts"]);
    if counts.iter().sum::<u64>() == 0 {
        return "<figure><h3>wait estimate error</h3><p>No wait long enough to judge an estimate.</p></figure>"
            .to_owned();
    }
    histogram(
        "wait estimate error",
        h["binPct"].as_f64().unwrap_or(5.0),
        &counts,
        "%",
        true,
        "|estimate at the join − real wait| ÷ real wait, per visitor (waits under 5 s left out)",
    )
}

fn estimate_section(r: &Value) -> String {
    let e = &r["estimate"];
    let f = &e["afterFirstMinute"];
    format!(
        "<section id=\"estimate\"><h2>Wait estimate</h2><div class=\"row\">{}<p>{}</p></div></section>",
        kv_table(&[
            ("visitors judged", show(&e["samples"])),
            ("p50 error %", show(&e["p50ErrorPct"])),
            ("p90 error %", show(&e["p90ErrorPct"])),
            ("mean signed error % (> 0: too long)", show(&e["meanSignedErrorPct"])),
            ("joined after the first minute: visitors", show(&f["samples"])),
            ("… p50 error %", show(&f["p50ErrorPct"])),
            ("… p90 error %", show(&f["p90ErrorPct"])),
            ("real wait p50 s", show(&e["realWaitP50Seconds"])),
            ("estimate p50 s", show(&e["estimateP50Seconds"])),
            ("left out: waits under 5 s", show(&e["excludedShortWaits"])),
        ]),
        show(&e["note"])
    )
}

fn safety_section(r: &Value) -> String {
    let mut rows = String::new();
    if let Some(m) = r["safety"].as_object() {
        for (k, v) in m {
            let class = if v.as_u64() == Some(0) { "ok" } else { "bad" };
            let _ = write!(rows, "<tr><th>{}</th><td class=\"n {class}\">{}</td></tr>", esc(k), show(v));
        }
    }
    format!(
        "<section id=\"safety\"><h2>Safety</h2><p>Every counter must be 0.</p><table><tbody>{rows}</tbody></table><h2>Places moved backwards</h2>{}<h2>Lost, by why</h2>{}<h2>Degradation seen</h2>{}</section>",
        flat_table(&r["placesLost"]),
        flat_table(&r["lostBy"]),
        flat_table(&r["degraded"])
    )
}

fn fairness_section(r: &Value) -> String {
    let mut rows = String::new();
    for tier in ["tier1", "tier2"] {
        let x = &r["fairness"][tier];
        let _ = write!(
            rows,
            "<tr><th>{tier}</th><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            show(&x["kendallTau"]),
            show(&x["largestInversionPositions"]),
            show(&x["largestInversionSeconds"])
        );
    }
    format!(
        "<section id=\"fairness\"><h2>Fairness</h2><table><thead><tr><th>tier</th><th>Kendall tau</th><th>largest inversion (positions)</th><th>largest inversion (s of arrival)</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )
}

fn flow_section(r: &Value) -> String {
    format!(
        "<section id=\"flow\"><h2>Flow and throughput</h2>{}{}</section>",
        flat_table(&r["flow"]),
        flat_table(&r["throughput"])
    )
}

/// The page for a report built by `vwr loadtest`.
pub fn render(r: &Value) -> String {
    let mut body = header(r);
    body.push_str(&costs_section(r));
    let mut charts = over_time_charts(r);
    charts.extend(outflow_chart(r));
    charts.extend(latency_chart(r));
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
    if r["open"].is_object() {
        let _ = write!(body, "<section id=\"open\"><h2>The open</h2>{}</section>", flat_table(&r["open"]));
    }
    if r["awsCalls"].is_object() {
        let _ =
            write!(body, "<section id=\"aws\"><h2>AWS calls</h2>{}</section>", flat_table(&r["awsCalls"]));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>vwr loadtest — {}</title><style>{STYLE}</style></head><body>{body}</body></html>\n",
        show(&r["event"])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VOID: [&str; 2] = ["meta", "br"];

    /// Checks that every element is closed in order; answers the element names seen.
    fn balanced(html: &str) -> Result<Vec<String>, String> {
        let mut stack: Vec<String> = Vec::new();
        let mut seen = Vec::new();
        let mut rest = html;
        while let Some(i) = rest.find('<') {
            rest = &rest[i + 1..];
            let end = rest.find('>').ok_or("unclosed <")?;
            let tag = &rest[..end];
            rest = &rest[end + 1..];
            if tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or_else(|| format!("</{name}> without an opening tag"))?;
                if open != name {
                    return Err(format!("<{open}> closed by </{name}>"));
                }
                continue;
            }
            let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            if name.is_empty() {
                return Err(format!("bad tag <{tag}>"));
            }
            seen.push(name.clone());
            if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
                stack.push(name);
            }
        }
        if stack.is_empty() { Ok(seen) } else { Err(format!("never closed: {stack:?}")) }
    }

    fn small_report() -> Value {
        json!({
            "event": "lt<1>", "baseUrl": "http://127.0.0.1:8080", "visitors": 3, "scenario": "steady",
            "arrival": "uniform", "durationSeconds": 12.5,
            "config": {"batchSize": 2, "intervalSeconds": 1, "shards": 1, "threshold": 10, "dwellSeconds": 1.0,
                       "mode": "targetArrivals", "targetPerMinute": 60, "noShowRate": 0.3},
            "flow": {"joined": 3, "admittedTier1": 3, "done": 3},
            "throughput": {"joinsPerSecond": 3.0},
            "latency": {"tier1.assign": {"requests": 3, "p50Ms": 1.5, "p95Ms": 2.0, "p99Ms": 2.5, "maxMs": 3.0},
                        "tier1.status": {"requests": 9, "p50Ms": 0.5, "p95Ms": 0.7, "p99Ms": 0.9, "maxMs": 1.0}},
            "timeToAdmission": {"tier1P50Seconds": 2.0, "tier1Histogram": {"binSeconds": 1.0, "counts": [0, 2, 1]}},
            "fairness": {"tier1": {"kendallTau": 1.0}, "tier2": {"kendallTau": 1.0}},
            "degraded": {"responses503": 0},
            "safety": {"lost": 0, "doubleAdmitted": 0, "overThresholdMoments": 1, "serverErrors": 0},
            "costs": {"polling": "page", "tier1LambdaCallsPerVisitor": 2.1, "tier2LambdaCallsPerVisitor": 4.0,
                      "statusFetchesPerVisitor": 3.0, "originStatusFetchesPerSecond": 0.8,
                      "calls": {"assign": 3}, "notCounted": {"tier1Rechecks": 3}},
            "estimate": {"samples": 2, "p50ErrorPct": 10.0, "p90ErrorPct": 20.0,
                         "afterFirstMinute": {"samples": 0, "p50ErrorPct": null},
                         "histogram": {"binPct": 5.0, "counts": [1, 0, 1, 0]}, "note": "a < b"},
            "series": {"seconds": [1.0, 2.0, 3.0], "waiting": [2, null, 0], "servingCounter": [1, 2, 3],
                       "admittedTier1": [0, 2, 3], "activeTier2": [0, 1, 0],
                       "tier1CallsPerSecond": [null, 2.0, 1.0], "statusFetchesPerSecond": [null, 3.0, 2.0],
                       "originStatusFetchesPerSecond": [null, 1.0, 1.0], "rateWindowSeconds": 30.0,
                       "servedPerMinute": [null, 90.0, 80.0], "redeemedPerMinute": [null, 60.0, 62.0]},
            "outflow": {"targetPerMinute": 60, "redeemedPerMinute": 61.0, "servedPerMinute": 85.0,
                        "noShowShare": 0.3, "deviationPct": 1.7,
                        "steady": {"fromSeconds": 2.0, "toSeconds": 3.0, "seconds": 1.0},
                        "wholeRun": {"served": 3}, "server": null, "note": "n"},
        })
    }

    #[test]
    fn the_page_is_well_formed_and_self_contained() {
        let html = render(&small_report());
        let tags = balanced(&html).unwrap_or_else(|e| panic!("{e}"));
        assert!(tags.iter().filter(|t| *t == "svg").count() >= 6, "six charts: {tags:?}");
        assert!(html.contains("served vs redeemed vs target") && html.contains("steady from"));
        for id in
            ["costs", "charts", "outflow", "latency", "admission", "estimate", "safety", "fairness", "flow"]
        {
            assert!(html.contains(&format!("<section id=\"{id}\">")), "section {id}");
        }
        // Nothing to fetch: no script, no external reference; a URL appears only as text.
        for bad in ["<script", "src=", "href=", "url(", "@import", "<link"] {
            assert!(!html.contains(bad), "{bad}");
        }
        assert!(!html.contains("http://") && !html.contains("https://"), "no URL, not even as text");
        assert!(html.contains("against 127.0.0.1:8080"));
        // Text is escaped; numbers are shown plainly; a failed safety counter stands out.
        assert!(html.contains("lt&lt;1&gt;") && html.contains("a &lt; b"));
        assert!(html.contains("<b>2.1</b>"));
        assert!(html.contains("<td class=\"n bad\">1</td>"));
        // A gap in a series splits its line.
        assert!(html.contains("<polyline"));
    }

    #[test]
    fn an_empty_report_still_renders() {
        let html = render(&json!({}));
        balanced(&html).unwrap_or_else(|e| panic!("{e}"));
        assert!(html.contains("No samples."));
    }

    #[test]
    fn axes_are_round() {
        assert_eq!(axis(0.0), (1.0, 1.0));
        assert_eq!(axis(9.0), (10.0, 2.0));
        assert_eq!(axis(4_321.0), (5_000.0, 1_000.0));
        assert_eq!(fmt_f(2.0), "2");
        assert_eq!(fmt_f(0.1 + 0.2), "0.3");
    }
}
