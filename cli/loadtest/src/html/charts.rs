//! The pages' charts and style: inline SVG drawn from numbers (line charts over the run's
//! seconds, grouped bars, histograms), the escaping and number formatting, and the style sheet
//! shared by the load test's page (`--html`) and `vwr report`'s (docs/performance.md).

use std::fmt::Write as _;

// Each chart is drawn for half the page's width (two per row, one on a narrow screen).
const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 64.0;
const PALETTE: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b"];

/// The style sheet of both pages.
pub const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#222;background:#fff}\
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
pub fn esc(s: &str) -> String {
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
pub fn fmt_f(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// 0..=hi rounded up to a step, and the step.
pub fn axis(max: f64) -> (f64, f64) {
    if max.is_nan() || max <= 0.0 {
        return (1.0, 1.0);
    }
    let step = crate::stats::nice_step(max, 5.0);
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

/// A line chart of series over `xs` (named `x_label`); gaps where a value is missing; `marks` are
/// labelled vertical lines at given seconds.
pub fn line_chart(
    title: &str,
    x_label: &str,
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
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        HEIGHT - BOTTOM,
        WIDTH - RIGHT,
        HEIGHT - BOTTOM,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0,
        esc(x_label)
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
            } else if let Some((x, y)) = run.first().and_then(|p| p.split_once(',')) {
                // A point alone (a one-minute sale): a dot, not nothing.
                let _ = write!(out, "<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>");
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
pub fn bar_chart(
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
        // At most ~16 labels: every k-th category when there are more.
        if c % categories.len().div_ceil(16).max(1) != 0 {
            continue;
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
pub fn histogram(
    title: &str,
    width: f64,
    counts: &[u64],
    unit: &str,
    open_end: bool,
    caption: &str,
) -> String {
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
