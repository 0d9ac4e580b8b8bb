use std::path::Path;

use super::*;

fn call(endpoint: &str, at: f64, status: u16, x_cache: Option<&str>, retry_after: bool) -> CallRecord {
    CallRecord {
        endpoint: endpoint.into(),
        at,
        ms: 2.0,
        status,
        x_cache: x_cache.map(Into::into),
        retry_after,
    }
}

/// A visitor who got through: assign, two status fetches (one from the CDN), check, the edge,
/// tier 2, the booking call, a heartbeat, leave.
fn through(id: &str, position: u64, at: f64) -> VisitorRecord {
    VisitorRecord {
        visitor: id.into(),
        arrived_at: at,
        joined_at: Some(at + 0.1),
        position: Some(position),
        tier1_admitted_at: Some(at + 10.0),
        tier2_admitted_at: Some(at + 10.5),
        tier2_idle_seconds: Some(0.2),
        estimate_seconds: Some(9.0),
        estimated_at: Some(at + 0.1),
        passed_edge: true,
        status_polls: 2,
        checks: 1,
        end: "done".into(),
        tier1_jti: Some(format!("t1-{id}")),
        tier2_jti: Some(format!("t2-{id}")),
        calls: vec![
            call(ASSIGN, at, 200, None, false),
            call(STATUS, at + 3.0, 200, Some("Hit from cloudfront"), false),
            call(STATUS, at + 9.0, 200, Some("Miss from cloudfront"), false),
            call(CHECK, at + 10.0, 200, None, false),
            call("edge.event_page", at + 10.1, 200, None, false),
            call(RECHECK, at + 10.2, 200, None, false),
            call("tier2.check", at + 10.3, 200, None, false),
            call("seats", at + 10.6, 200, None, false),
            call("tier2.heartbeat", at + 12.6, 200, None, false),
            call("tier2.leave", at + 12.7, 200, None, false),
        ],
        ended_at: Some(at + 12.8),
        ..VisitorRecord::default()
    }
}

fn records(visitors: Vec<VisitorRecord>) -> Records {
    let run = super::super::records::RunRecord {
        version: 1,
        event: "e1".into(),
        host: "http://127.0.0.1:8080".into(),
        dwell_seconds: 2.0,
        threshold: 100,
        ..Default::default()
    };
    Records { runs: vec![run], visitors }
}

#[test]
fn visitors_who_got_through_make_a_clean_report_with_their_costs() {
    let r = report(&records((0..4).map(|i| through(&format!("v{i}"), i + 1, 100.0 + i as f64)).collect()))
        .unwrap();
    assert!(r.safety.clean(), "{:?}", r.safety);
    assert_eq!((r.flow.joined, r.flow.admitted_tier1, r.flow.passed_edge, r.flow.done), (4, 4, 4, 4));
    assert_eq!(r.flow.active_tier2, 4);
    // Per visitor: assign, check, and the status fetch that reached the origin; the re-check
    // is the safety probe, left out as in a load test.
    assert_eq!(r.costs.tier1_lambda_calls_per_visitor, 3.0);
    assert_eq!(r.costs.calls.status_cache_hits, 4);
    assert_eq!(r.costs.not_counted.tier1_rechecks, 4);
    assert_eq!(r.costs.tier2_lambda_calls_per_visitor, 3.0, "check, heartbeat, leave");
    assert_eq!(r.latency["tier1.assign"].requests, 4);
    assert_eq!(r.time_to_admission.tier1_p50_seconds, Some(10.0));
    assert_eq!(r.fairness.tier1.kendall_tau, Some(1.0));
    assert_eq!(r.config.dwell_seconds, 2.0);
    assert_eq!((r.visitors, r.config.threshold, r.event.as_str()), (4, 100, "e1"));
    assert!(
        (r.duration_seconds - 15.8).abs() < 1e-6,
        "first arrival to the last end: {}",
        r.duration_seconds
    );
}

#[test]
fn each_call_is_counted_as_the_load_test_counts_its_own() {
    let mut v = through("v1", 1, 0.0);
    v.calls.extend([
        call(CHECK, 1.0, 0, None, false),
        call(CHECK, 1.5, 503, None, true),
        call(CHECK, 2.0, 429, None, false),
        call(CHECK, 2.5, 500, None, false),
        call(STATUS, 3.0, 200, None, false),
        call("tier2.line", 3.5, 200, Some("Hit from vwr-dev"), false),
        call("something.else", 4.0, 200, None, false),
    ]);
    let r = report(&records(vec![v])).unwrap();
    assert_eq!(r.degraded.network_errors, 1);
    assert_eq!(r.degraded.responses_503, 1);
    assert_eq!(r.degraded.transient_refusals, 1);
    assert_eq!(r.safety.server_errors, 1, "a 5xx that is no 503 with Retry-After");
    assert_eq!(r.costs.calls.status_without_cdn, 1);
    assert_eq!(r.tier2.line_cache_hit_share, Some(1.0));
    assert_eq!(r.latency["other"].requests, 1, "an unknown endpoint is kept, as other");
    assert!(!r.safety.clean());
}

#[test]
fn an_identity_held_by_two_visitors_and_a_lost_place_are_safety_failures() {
    let (a, mut b) = (through("a", 1, 0.0), through("b", 2, 0.0));
    b.tier1_jti = a.tier1_jti.clone();
    let r = report(&records(vec![a, b])).unwrap();
    assert_eq!(r.safety.double_admitted, 1, "no worker alone could have seen it");

    let mut lost = through("c", 1, 0.0);
    (lost.end, lost.lost_by, lost.tier2_admitted_at) = ("lost".into(), Some("edge_refused".into()), None);
    let mut moved = through("d", 2, 0.0);
    moved.place_lost = Some("tier1PositionChanged".into());
    moved.place_losses.insert("tier1PositionChanged".into(), 2);
    let r = report(&records(vec![lost, moved])).unwrap();
    assert_eq!(r.safety.lost, 1);
    assert_eq!(r.lost_by["edge_refused"], 1);
    assert_eq!(r.safety.places_lost_to_faults, 1, "a visitor once");
    assert_eq!(r.places_lost.by_cause["tier1PositionChanged"], 2, "each time");

    let mut broke = through("e", 1, 0.0);
    (broke.end, broke.lost_by) = ("lost".into(), Some("harness_error".into()));
    let r = report(&records(vec![broke])).unwrap();
    assert_eq!(r.lost_by["harness_error"], 1, "the locustfile's own failure, named");
}

#[test]
fn unfinished_abandoned_and_no_shows_are_no_losses() {
    let mut u = through("u", 1, 0.0);
    (u.end, u.tier1_admitted_at, u.tier2_admitted_at) = ("unfinished".into(), None, None);
    let mut a = through("a", 2, 0.0);
    a.end = "abandoned".into();
    let mut n = through("n", 3, 0.0);
    n.end = "noShow".into();
    let r = report(&records(vec![u, a, n])).unwrap();
    assert!(r.safety.clean(), "{:?}", r.safety);
    assert_eq!((r.flow.unfinished, r.flow.abandoned, r.flow.no_shows), (1, 1, 1));
}

#[test]
fn analyze_reads_a_directory_and_writes_the_page() {
    let dir = std::env::temp_dir().join(format!("vwr-analyze-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run_line = r#"{"kind":"run","version":1,"worker":"w","host":"http://h","event":"e1","dwellSeconds":1,"abandonRate":0,"noShowRate":0,"threshold":5}"#;
    let v = r#"{"kind":"visitor","visitor":"v","arrivedAt":1,"joinedAt":1.1,"position":1,"tier1AdmittedAt":2,"tier2AdmittedAt":2.5,"end":"done","calls":[{"endpoint":"tier1.assign","at":1,"ms":3,"status":200}],"endedAt":4}"#;
    std::fs::write(dir.join("w.jsonl"), format!("{run_line}\n{v}\n")).unwrap();
    let html = dir.join("report.html");
    let args = AnalyzeArgs { dir: dir.clone(), json: true, html: Some(html.clone()) };
    let r = run(&args).unwrap();
    assert_eq!(r.flow.done, 1);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    assert!(Records::read_dir(Path::new("/nonexistent-vwr-records")).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
