//! The page is well formed, self-contained and escaped; its axes are round.

use std::collections::BTreeMap;

use super::charts::axis;
use super::*;
use crate::arrival::Curve;
use crate::options::Scenario;
use crate::report::{
    CallCounts, Config, Costs, ErrorHistogram, ErrorSummary, Estimate, Fairness, Flow, Histogram, NotCounted,
    Order, Outflow, Percentiles, Safety, Series, Steady, Throughput, TimeToAdmission, WholeRun,
};

const VOID: [&str; 2] = ["meta", "br"];

/// Where a page is not well formed.
#[derive(Debug, thiserror::Error)]
enum Unbalanced {
    #[error("unclosed <")]
    Unclosed,
    #[error("</{0}> without an opening tag")]
    NoOpening(String),
    #[error("<{open}> closed by </{name}>")]
    Crossed { open: String, name: String },
    #[error("bad tag <{0}>")]
    BadTag(String),
    #[error("never closed: {0:?}")]
    NeverClosed(Vec<String>),
}

/// Checks that every element is closed in order; answers the element names seen.
fn balanced(html: &str) -> Result<Vec<String>, Unbalanced> {
    let mut stack: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').ok_or(Unbalanced::Unclosed)?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or_else(|| Unbalanced::NoOpening(name.to_owned()))?;
            if open != name {
                return Err(Unbalanced::Crossed { open, name: name.to_owned() });
            }
            continue;
        }
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if name.is_empty() {
            return Err(Unbalanced::BadTag(tag.to_owned()));
        }
        seen.push(name.clone());
        if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            stack.push(name);
        }
    }
    if stack.is_empty() { Ok(seen) } else { Err(Unbalanced::NeverClosed(stack)) }
}

fn small_report() -> Report {
    let percentiles =
        |requests, p50_ms, p95_ms, p99_ms, max_ms| Percentiles { requests, p50_ms, p95_ms, p99_ms, max_ms };
    let order = Order { kendall_tau: Some(1.0), ..Order::default() };
    Report {
        event: "lt<1>".into(),
        base_url: "http://127.0.0.1:8080".into(),
        visitors: 3,
        scenario: Scenario::Steady,
        arrival: Curve::Uniform,
        duration_seconds: 12.5,
        config: Config {
            batch_size: 2,
            interval_seconds: 1,
            shards: 1,
            threshold: 10,
            dwell_seconds: 1.0,
            mode: Mode::TargetArrivals,
            target_per_minute: Some(60),
            no_show_rate: 0.3,
            ..Config::default()
        },
        flow: Flow { joined: 3, admitted_tier1: 3, done: 3, ..Flow::default() },
        throughput: Throughput { joins_per_second: 3.0, ..Throughput::default() },
        latency: BTreeMap::from([
            ("tier1.assign".to_owned(), percentiles(3, 1.5, 2.0, 2.5, 3.0)),
            ("tier1.status".to_owned(), percentiles(9, 0.5, 0.7, 0.9, 1.0)),
        ]),
        time_to_admission: TimeToAdmission {
            tier1_p50_seconds: Some(2.0),
            tier1_histogram: Histogram { bin_seconds: 1.0, counts: vec![0, 2, 1] },
            ..TimeToAdmission::default()
        },
        fairness: Fairness { tier1: order.clone(), tier2: order },
        safety: Safety { over_threshold_moments: 1, ..Safety::default() },
        costs: Costs {
            tier1_lambda_calls_per_visitor: 2.1,
            tier2_lambda_calls_per_visitor: 4.0,
            status_fetches_per_visitor: 3.0,
            origin_status_fetches_per_second: 0.8,
            calls: CallCounts { assign: 3, ..CallCounts::default() },
            not_counted: NotCounted { tier1_rechecks: 3, ..NotCounted::default() },
            ..Costs::default()
        },
        estimate: Estimate {
            all: ErrorSummary {
                samples: 2,
                p50_error_pct: Some(10.0),
                p90_error_pct: Some(20.0),
                ..ErrorSummary::default()
            },
            histogram: ErrorHistogram { bin_pct: 5.0, counts: vec![1, 0, 1, 0] },
            note: "a < b".into(),
            ..Estimate::default()
        },
        series: Series {
            seconds: vec![1.0, 2.0, 3.0],
            waiting: vec![Some(2), None, Some(0)],
            serving_counter: vec![Some(1), Some(2), Some(3)],
            admitted_tier1: vec![0, 2, 3],
            active_tier2: vec![0, 1, 0],
            tier1_calls_per_second: vec![None, Some(2.0), Some(1.0)],
            status_fetches_per_second: vec![None, Some(3.0), Some(2.0)],
            origin_status_fetches_per_second: vec![None, Some(1.0), Some(1.0)],
            rate_window_seconds: 30.0,
            served_per_minute: vec![None, Some(90.0), Some(80.0)],
            redeemed_per_minute: vec![None, Some(60.0), Some(62.0)],
            ..Series::default()
        },
        outflow: Outflow {
            target_per_minute: Some(60),
            redeemed_per_minute: Some(61.0),
            served_per_minute: Some(85.0),
            no_show_share: Some(0.3),
            deviation_pct: Some(1.7),
            steady: Steady {
                from_seconds: Some(2.0),
                to_seconds: Some(3.0),
                seconds: 1.0,
                ..Steady::default()
            },
            whole_run: Some(WholeRun { served: 3, ..WholeRun::default() }),
            note: "n".into(),
            ..Outflow::default()
        },
        ..Report::default()
    }
}

#[test]
fn the_page_is_well_formed_and_self_contained() {
    let html = render(&small_report());
    let tags = balanced(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(tags.iter().filter(|t| *t == "svg").count() >= 6, "six charts: {tags:?}");
    assert!(html.contains("served vs redeemed vs target") && html.contains("steady from"));
    for id in ["costs", "charts", "outflow", "latency", "admission", "estimate", "safety", "fairness", "flow"]
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
    let html = render(&Report::default());
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
