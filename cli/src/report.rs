//! `vwr report {eventId} [--json] [--html FILE]`: the report after the sale
//! (docs/operate.md#the-report-after-the-sale) from the admin API — a short table in a
//! terminal, the JSON as it is, or one self-contained HTML file of charts (inline SVG, drawn
//! by the load test report's chart code).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vwr_tier1::report::SaleReport;
use vwr_tier2::report::Tier2Report;

use vwr_loadtest::client::{AdminTarget, ClientError, HttpClient, NoAdminKey};
use vwr_loadtest::html::charts::{Line, STYLE, bar_chart, esc, fmt_f, line_chart};

/// Arguments of `vwr report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The sale's event.
    pub event_id: String,
    /// The stack (the global flags, resolved by `vwr`; docs/cli.md#addressing-a-stack); tier
    /// 2's part comes from `--tier2-url` when given, else `--url` (as `vwr dev` serves both).
    #[arg(skip)]
    pub target: AdminTarget,
    /// Print the report's JSON (as `GET /api/admin/vwr/report/{eventId}` answers it).
    #[arg(long)]
    pub json: bool,
    /// Write the report with its charts to this HTML file (one file, no network).
    #[arg(long)]
    pub html: Option<PathBuf>,
}

/// Why `vwr report` has no report to show; the message is what `vwr` prints.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("event id {id:?}: {source}")]
    EventId { id: String, source: vwr_core::ids::EventIdError },
    #[error(transparent)]
    NoAdminKey(#[from] NoAdminKey),
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Tier 1's report route answered an error.
    #[error("{url}: {status} {body}")]
    Refused { url: String, status: http::StatusCode, body: String },
    /// Tier 2's report route answered an error other than 404 (its status code alone).
    #[error("{url}: {status} {body}")]
    Tier2Refused { url: String, status: u16, body: String },
    #[error("{url}: not a report: {source}")]
    NotAReport { url: String, source: serde_json::Error },
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Both tiers' reports of one event: tier 1's fields, and `tier2` when tier 2 holds the event.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    #[serde(flatten)]
    pub tier1: SaleReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier2: Option<Tier2Report>,
}

/// Fetches the report and shows it as asked; answers what to print.
pub async fn run(args: ReportArgs) -> Result<String, ReportError> {
    vwr_core::EventId::parse(&args.event_id)
        .map_err(|source| ReportError::EventId { id: args.event_id.clone(), source })?;
    let auth = args.target.auth().await?;
    let client = HttpClient::new(Duration::from_secs(30))?;
    let url = format!("{}/api/admin/vwr/report/{}", args.target.url.trim_end_matches('/'), args.event_id);
    let reply = client.send(http::Method::GET, &url, None, &auth).await?;
    let body = |reply: &vwr_loadtest::client::Reply| String::from_utf8_lossy(&reply.body).into_owned();
    if !reply.status.is_success() {
        return Err(ReportError::Refused { body: body(&reply), url, status: reply.status });
    }
    let not_a_report = |url: &str| {
        let url = url.to_owned();
        move |source| ReportError::NotAReport { url, source }
    };
    let tier1: SaleReport = serde_json::from_slice(&reply.body).map_err(not_a_report(&url))?;
    let base2 = args.target.tier2_base();
    let url2 = format!("{base2}/api/queue/admin/report/{}", args.event_id);
    let reply = client.send(http::Method::GET, &url2, None, &auth).await?;
    // 404: tier 2 does not hold this event (or is not deployed); anything else is an error.
    let tier2 = match reply.status.as_u16() {
        200 => Some(serde_json::from_slice(&reply.body).map_err(not_a_report(&url2))?),
        404 => None,
        status => return Err(ReportError::Tier2Refused { body: body(&reply), url: url2, status }),
    };
    let report = Report { tier1, tier2 };
    let mut out = String::new();
    if let Some(path) = &args.html {
        let write = |path: &std::path::Path| {
            let path = path.to_owned();
            move |source| ReportError::Write { path, source }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(write(dir))?;
        }
        std::fs::write(path, html(&report)).map_err(write(path))?;
        let _ = writeln!(out, "report written to {}", path.display());
    }
    if args.json {
        out.push_str(&serde_json::to_string_pretty(&report)?);
    } else if args.html.is_none() {
        out.push_str(&summary(&report));
    }
    Ok(out.trim_end().to_owned())
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |s| format!("{} s", fmt_f(s)))
}

/// The terminal's short table.
pub fn summary(report: &Report) -> String {
    let r = &report.tier1;
    let t = &r.totals;
    let w = r.wait_seconds;
    let pct = |n: u64, of: u64| {
        if of == 0 { "–".to_owned() } else { format!("{:.1} %", 100.0 * n as f64 / of as f64) }
    };
    let mut rows = vec![
        ("event", format!("{} ({})", r.event_id, r.state)),
        ("minutes", format!("{} counted", r.minutes.len())),
        ("joined", t.joins.to_string()),
        ("places called", t.served.to_string()),
        (
            "came through",
            format!("{} ({} of those called)", t.redeemed, pct(t.redeemed, t.served.min(t.joins))),
        ),
        ("never came", format!("{} ({})", t.abandoned, pct(t.abandoned, t.served.min(t.joins)))),
        ("released by the site", t.released.to_string()),
        (
            "wait p50 / p90 / p99",
            format!("{} / {} / {}", opt(w.map(|w| w.p50)), opt(w.map(|w| w.p90)), opt(w.map(|w| w.p99))),
        ),
    ];
    if let Some(target) = r.target_per_minute {
        let busiest = r.minutes.iter().map(|m| m.served).max().unwrap_or(0);
        rows.push(("outflow", format!("target {} a minute, busiest minute {busiest}", fmt_f(target))));
    }
    let refusals = if t.refusals.is_empty() {
        "none".to_owned()
    } else {
        t.refusals.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
    };
    rows.push(("refusals", refusals));
    if let Some(t2) = &report.tier2 {
        let slots = t2.threshold.map_or_else(String::new, |t| format!(" ({t} slots)"));
        rows.push((
            "tier 2",
            format!(
                "{} admitted{slots}, {} checks found it full",
                t2.totals.admitted, t2.totals.over_threshold
            ),
        ));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter().map(|(k, v)| format!("{k:<width$}  {v}\n")).collect()
}

/// The HTML report: cards, six charts (seven with tier 2), the minutes as a table.
pub fn html(report: &Report) -> String {
    let r = &report.tier1;
    let t = &r.totals;
    let xs: Vec<Option<f64>> = r.minutes.iter().enumerate().map(|(i, _)| Some(i as f64)).collect();
    let per = |f: fn(&vwr_tier1::report::MinuteRow) -> u64| -> Vec<Option<f64>> {
        r.minutes.iter().map(|m| Some(f(m) as f64)).collect()
    };
    let start = r.minutes.first().map_or(0, |m| m.at);
    let x_label = format!("minutes since {}", clock(start));
    let mut charts = Vec::new();
    charts.push(line_chart(
        "arrivals, admissions and redemptions per minute",
        &x_label,
        &xs,
        &[
            Line { name: "joined", ys: per(|m| m.joins) },
            Line { name: "called (served)", ys: per(|m| m.served) },
            Line { name: "came through (redeemed)", ys: per(|m| m.redeemed) },
        ],
        &[],
        "visitors per minute",
        "— every tier-1 instance's counts, added up per minute",
    ));
    let mut outflow = vec![Line { name: "called (served)", ys: per(|m| m.served) }];
    if let Some(target) = r.target_per_minute {
        outflow.push(Line { name: "target", ys: vec![Some(target); xs.len()] });
    }
    charts.push(line_chart(
        "outflow against target",
        &x_label,
        &xs,
        &outflow,
        &[],
        "places per minute",
        "— the target: batchSize per intervalSeconds, or targetArrivalsPerMinute",
    ));
    let labels: Vec<String> = r
        .wait_histogram
        .iter()
        .map(|b| format!("{}–{} s", fmt_f(b.from_seconds), fmt_f(b.to_seconds)))
        .collect();
    let counts: Vec<f64> = r.wait_histogram.iter().map(|b| b.count as f64).collect();
    charts.push(bar_chart(
        "the wait distribution",
        &labels,
        &[("redemptions", counts)],
        "visitors",
        "— from the join (or the open, for a pre-queue ticket) to the redemption; buckets 1 s wide below 20 s, then 5 % wider each",
    ));
    let pcts = |f: fn(&vwr_tier1::report::WaitPercentiles) -> f64| -> Vec<Option<f64>> {
        r.minutes.iter().map(|m| m.wait_seconds.as_ref().map(f)).collect()
    };
    charts.push(line_chart(
        "waits by the minute of redemption",
        &x_label,
        &xs,
        &[
            Line { name: "p50", ys: pcts(|w| w.p50) },
            Line { name: "p90", ys: pcts(|w| w.p90) },
            Line { name: "p99", ys: pcts(|w| w.p99) },
        ],
        &[],
        "seconds",
        "— gaps: minutes without a redemption",
    ));
    let (mut called, mut joined, mut came) = (0u64, 0u64, 0u64);
    let (mut cum_called, mut cum_came, mut gap) = (Vec::new(), Vec::new(), Vec::new());
    for m in &r.minutes {
        called += m.served;
        joined += m.joins;
        came += m.redeemed;
        cum_called.push(Some(called as f64));
        cum_came.push(Some(came as f64));
        // As `totals.abandoned`: places called that someone held, not yet come.
        gap.push(Some(called.min(joined).saturating_sub(came) as f64));
    }
    charts.push(line_chart(
        "abandonment: called against came through",
        &x_label,
        &xs,
        &[
            Line { name: "called, so far", ys: cum_called },
            Line { name: "came through, so far", ys: cum_came },
            Line { name: "not (yet) come", ys: gap },
        ],
        &[],
        "places",
        &format!("— at the end {} never came ({} joined, {} called)", t.abandoned, t.joins, t.served),
    ));
    let kinds: Vec<String> = t.refusals.keys().cloned().collect();
    let refused: Vec<f64> = t.refusals.values().map(|n| *n as f64).collect();
    charts.push(if kinds.is_empty() {
        "<figure><h3>refusals by kind</h3><p>No call of assign or check was refused.</p></figure>".to_owned()
    } else {
        bar_chart(
            "refusals by kind",
            &kinds,
            &[("refused calls", refused)],
            "calls",
            "— assign and check, by the API's error code",
        )
    });
    if let Some(t2) = &report.tier2 {
        charts.push(tier2_chart(t2, start));
    }
    let w = r.wait_seconds;
    let card = |label: &str, value: String, note: &str| {
        format!(
            "<div class=\"card\">{}<b>{}</b><span class=\"meta\">{}</span></div>",
            esc(label),
            esc(&value),
            esc(note)
        )
    };
    let cards = [
        card("joined", t.joins.to_string(), "places handed out"),
        card("came through", t.redeemed.to_string(), &format!("of {} called", t.served)),
        card("never came", t.abandoned.to_string(), "called, not redeemed"),
        card("wait p50", opt(w.map(|w| w.p50)), "join to redemption"),
        card("wait p90", opt(w.map(|w| w.p90)), ""),
        card("wait p99", opt(w.map(|w| w.p99)), ""),
        card("released", t.released.to_string(), "sessions the site ended"),
        card("refused calls", t.refusals.values().sum::<u64>().to_string(), "assign and check"),
    ]
    .concat();
    let mut table = String::from(
        "<table><tr><th>minute</th><th>joined</th><th>called</th><th>came through</th><th>released</th><th>wait p50 / p90 / p99</th><th>refusals</th></tr>",
    );
    for m in &r.minutes {
        let waits = m.wait_seconds.map_or_else(
            || "–".to_owned(),
            |w| format!("{} / {} / {}", fmt_f(w.p50), fmt_f(w.p90), fmt_f(w.p99)),
        );
        let refusals: Vec<String> = m.refusals.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = write!(
            table,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            clock(m.at),
            m.joins,
            m.served,
            m.redeemed,
            m.released,
            esc(&waits),
            esc(&refusals.join(", "))
        );
    }
    table.push_str("</table>");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>vwr report — {id}</title><style>{STYLE}</style></head><body>\
         <h1>The sale of {id}</h1><p class=\"meta\">{state}; {n} minute{plural} from {from} (UTC); made {made} (UTC). How to read it: docs/operate.md#the-report-after-the-sale.</p>\
         <div class=\"cards\">{cards}</div><section id=\"charts\"><h2>Charts</h2><div class=\"charts\">{charts}</div></section>\
         <section id=\"minutes\"><h2>Minute by minute</h2>{table}</section></body></html>\n",
        id = esc(&r.event_id),
        state = esc(&r.state),
        n = r.minutes.len(),
        plural = if r.minutes.len() == 1 { "" } else { "s" },
        from = clock(start),
        made = clock(r.generated_at),
        charts = charts.concat(),
    )
}

/// Tier 2 over the sale's minutes (`start`: tier 1's first minute, so the charts line up).
fn tier2_chart(t2: &Tier2Report, start: u64) -> String {
    let from = match (t2.minutes.first(), start) {
        (Some(m), 0) => m.at,
        (Some(m), s) => m.at.min(s),
        (None, s) => s,
    };
    let xs: Vec<Option<f64>> =
        t2.minutes.iter().map(|m| Some((m.at.saturating_sub(from)) as f64 / 60.0)).collect();
    let per =
        |f: fn(&vwr_tier2::report::Tier2Row) -> Option<f64>| t2.minutes.iter().map(f).collect::<Vec<_>>();
    line_chart(
        "tier 2: admissions per minute and the line",
        &format!("minutes since {}", clock(from)),
        &xs,
        &[
            Line { name: "admitted", ys: per(|m| Some(m.admitted as f64)) },
            Line { name: "found it full", ys: per(|m| Some(m.over_threshold as f64)) },
            Line { name: "waiting (mean)", ys: per(|m| m.waiting) },
            Line { name: "slots taken (mean)", ys: per(|m| m.active) },
        ],
        &[],
        "visitors",
        &format!(
            "— the booking line; {} admitted in all{}",
            t2.totals.admitted,
            t2.threshold.map_or_else(String::new, |t| format!(", {t} slots"))
        ),
    )
}

/// Unix seconds as `YYYY-MM-DD HH:MM` (UTC).
fn clock(secs: u64) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_secs(secs);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.get(..16).map_or(s.clone(), |d| d.replace('T', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vwr_core::EventId;
    use vwr_tier1::report::MinuteCounts;

    fn sample() -> Report {
        let e = EventId::parse("e1").unwrap();
        let mut a = MinuteCounts { joins: 40, served: 10, ..Default::default() };
        for w in [3, 14, 25, 70] {
            a.redeemed_after(w);
        }
        a.refusals.insert("proof_required".into(), 3);
        let b = MinuteCounts { served: 12, released: 2, ..Default::default() };
        let tier1 =
            SaleReport::build(&e, "closed", Some(12.0), &[(29_000_000, a), (29_000_002, b)], 1_740_000_200);
        let t2 = vwr_tier2::report::Tier2Minute {
            admitted: 9,
            over_threshold: 2,
            waiting_sum: 8,
            samples: 2,
            ..Default::default()
        };
        let tier2 = Some(Tier2Report::build(&e, Some(4), &[(29_000_001, t2)], 1_740_000_200));
        Report { tier1, tier2 }
    }

    #[test]
    fn the_html_has_its_charts_and_needs_no_network() {
        let page = html(&sample());
        assert_eq!(page.matches("<svg").count(), 7, "six charts and tier 2's");
        for title in [
            "arrivals, admissions and redemptions per minute",
            "outflow against target",
            "the wait distribution",
            "abandonment",
            "refusals by kind",
            "tier 2: admissions per minute and the line",
        ] {
            assert!(page.contains(title), "{title}");
        }
        assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("<script"));
        assert!(page.contains("2025-02-19 21:20"), "minute times in UTC");
    }

    #[test]
    fn the_summary_says_the_sale_in_a_few_lines() {
        let s = summary(&sample());
        assert!(s.contains("joined") && s.contains("40"), "{s}");
        assert!(s.contains("never came") && s.contains("18"), "{s}");
        assert!(s.contains("proof_required 3"), "{s}");
        assert!(s.contains("target 12 a minute"), "{s}");
        assert!(s.contains("9 admitted (4 slots), 2 checks found it full"), "{s}");
        assert!(s.lines().count() <= 12);
        let json = serde_json::to_value(sample()).unwrap();
        assert_eq!(
            (json["totals"]["joins"].as_u64(), json["tier2"]["totals"]["admitted"].as_u64()),
            (Some(40), Some(9))
        );
    }

    #[test]
    fn an_empty_report_still_renders() {
        let e = EventId::parse("e1").unwrap();
        let r = Report { tier1: SaleReport::build(&e, "open", None, &[], 1_740_000_000), tier2: None };
        assert!(!serde_json::to_string(&r).unwrap().contains("tier2"));
        assert!(html(&r).contains("No call of assign or check was refused"));
        assert!(summary(&r).contains("–"));
    }
}
