//! `vwr loadtest` visitors wait like the waiting page (the CDN-cached status document, `check`
//! at their turn) against the real `vwr dev` binary (in-memory stores, the emulated CDN), the
//! report's `costs` and `estimate`, the HTML page, and `--legacy-polling` for comparison
//! (docs/lifecycle.md#the-public-status-document); `--mode target-arrivals` with no-shows and
//! the report's `outflow` (docs/outflow.md#targetarrivals).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use clap::Parser;
use vwr_loadtest::report::{Mode, Polling};
use vwr_loadtest::{LoadOptions, Report};

const KEY: &str = "loadtest-costs-admin-key-0123456789abc";

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    opts: LoadOptions,
}

/// 200 visitors over 2 s, 20 let through per second: a line of about 10 s.
async fn run(server: &common::Server, extra: &[&str]) -> Report {
    let mut argv = vec![
        "loadtest",
        "--base-url",
        &server.base,
        "--admin-key",
        KEY,
        "--visitors",
        "200",
        "--arrival",
        "uniform",
        "--arrival-seconds",
        "2",
        "--batch-size",
        "20",
        "--threshold",
        "200",
        "--dwell-seconds",
        "0.3",
        "--max-seconds",
        "90",
    ];
    argv.extend_from_slice(extra);
    let args = Args::try_parse_from(argv).unwrap();
    let report = vwr_loadtest::run(args.opts).await.unwrap();
    assert!(report.safety.clean(), "safety: {:?}", report.safety);
    let flow = &report.flow;
    let (done, no_shows) = (flow.done, flow.no_shows);
    assert_eq!(done + no_shows, 200, "everyone but the no-shows got through: {flow:?}");
    report
}

/// The page holds everything it shows: no script, nothing to fetch, no URL at all.
fn assert_self_contained(text: &str) {
    assert!(text.starts_with("<!DOCTYPE html>"));
    for bad in ["<script", "src=", "href=", "url(", "@import", "<link", "http://", "https://"] {
        assert!(!text.contains(bad), "the page contains {bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_like_visitors_cost_about_two_tier1_calls_and_the_report_has_a_page() {
    let server = common::start_dev("loadtest-costs", KEY, &[]).await;
    let html = server.dir.join("out").join("report.html");
    let page = run(&server, &["--html", html.to_str().unwrap()]).await;

    let c = &page.costs;
    assert_eq!(c.polling, Polling::Page, "{c:?}");
    // assign + one check at the turn (+ the few status fetches that reached the origin).
    let t1 = c.tier1_lambda_calls_per_visitor;
    assert!((2.0..=3.0).contains(&t1), "{c:?}");
    assert_eq!(c.calls.assign, 200, "{c:?}");
    assert!(c.checks_per_visitor <= 1.2, "checks only at the turn: {c:?}");
    assert!(c.tier2_lambda_calls_per_visitor >= 3.0, "check in, heartbeat, leave: {c:?}");
    // The status document is read often, but the emulated CDN answers almost all of it: the
    // origin sees about one fetch per second, whatever the number of visitors.
    let k = &c.calls;
    let (fetches, hits, origin) = (k.status_fetches, k.status_cache_hits, k.status_origin_fetches);
    assert!(fetches >= 200, "{c:?}");
    assert!(hits * 10 >= fetches * 8, "mostly cache hits: {c:?}");
    assert_eq!(k.status_without_cdn, 0, "vwr dev answers with X-Cache: {c:?}");
    let seconds = page.duration_seconds;
    assert!(origin as f64 <= seconds * 1.5 + 2.0, "{origin} origin fetches in {seconds} s: {c:?}");
    assert_eq!(c.not_counted.tier1_rechecks, 200, "{c:?}");

    // The estimate at the join against the real wait: waits of up to 10 s at a known rate.
    let e = &page.estimate;
    assert!(e.all.samples > 50, "{e:?}");
    assert!(e.all.p50_error_pct.unwrap() < 50.0, "{e:?}");
    assert_eq!(e.histogram.counts.len(), 21, "{e:?}");
    // The run over time.
    let s = &page.series;
    assert!(s.seconds.len() >= 5, "{s:?}");
    assert!(s.serving_counter.iter().any(|v| v.is_some_and(|n| n > 0)), "{s:?}");

    let text = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&text);
    assert!(text.contains("<section id=\"costs\">") && text.contains("<svg"), "the page has its charts");
    // A fixed-mode run still reports its outflow, without a target.
    let o = &page.outflow;
    assert!(o.target_per_minute.is_none() && o.whole_run.as_ref().unwrap().served >= 190, "{o:?}");

    // The same line with the old polling: checks at the server's hints, many more tier-1 calls.
    let legacy = run(&server, &["--legacy-polling"]).await;
    let l = &legacy.costs;
    assert_eq!(l.polling, Polling::Legacy, "{l:?}");
    assert_eq!(l.calls.status_fetches, 0, "{l:?}");
    let lt1 = l.tier1_lambda_calls_per_visitor;
    assert!(lt1 > t1 + 1.0, "legacy {lt1} vs page {t1}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_arrivals_with_no_shows_reports_the_outflow_and_charts_it() {
    let server = common::start_dev("loadtest-costs", KEY, &[]).await;
    let html = server.dir.join("target.html");
    let r = run(
        &server,
        &[
            "--mode",
            "target-arrivals",
            "--target-per-minute",
            "600",
            "--no-show-rate",
            "0.3",
            "--html",
            html.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(r.config.mode, Mode::TargetArrivals, "{:?}", r.config);
    let flow = &r.flow;
    let no_shows = flow.no_shows;
    assert!((35..=85).contains(&no_shows), "about 30 % of 200: {flow:?}");
    // A no-show closes the tab after joining: the only checks are the others' (one each, at
    // their turn), and nobody is lost.
    let c = &r.costs;
    assert_eq!(c.calls.assign, 200, "{c:?}");
    let showing = 200 - no_shows;
    assert_eq!(flow.admitted_tier1, showing, "{flow:?}");
    assert!(c.calls.check <= showing + showing / 5, "{c:?}");

    // The outflow: every field there; the run is too short for a steady part (a minute after
    // the first step), so the whole run carries the figures.
    let o = serde_json::to_value(&r.outflow).unwrap();
    assert_eq!(o["targetPerMinute"], 600, "{o}");
    for k in [
        "redeemedPerMinute",
        "servedPerMinute",
        "noShowShare",
        "deviationPct",
        "steady",
        "wholeRun",
        "server",
    ] {
        assert!(o.get(k).is_some(), "outflow.{k}: {o}");
    }
    let w = r.outflow.whole_run.as_ref().unwrap();
    let share = w.no_show_share.unwrap();
    assert!((0.15..=0.45).contains(&share), "{w:?}");
    let (served, redeemed) = (w.served, w.redeemed);
    assert!(
        served >= 190 && redeemed <= showing && redeemed + 20 >= showing,
        "tier 1 counted the redemptions: {w:?}"
    );
    // Tier 1 served more positions than it redeemed, as the no-shows ask.
    assert!(served > redeemed, "{w:?}");
    let s = &r.series;
    assert!(s.redeemed_per_minute.iter().any(Option::is_some), "{s:?}");

    let text = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&text);
    assert!(text.contains("<section id=\"outflow\">") && text.contains("served vs redeemed vs target"));
}
