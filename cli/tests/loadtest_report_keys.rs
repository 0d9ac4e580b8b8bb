//! The `--json` report keeps its keys: every key path of the file `vwr loadtest --json` writes,
//! with the JSON type of its values, is listed in `fixtures/loadtest-report-keys.txt`. Scripts
//! and dashboards read these names (scripts/perf.sh, docs/performance.md): a renamed, dropped or
//! added key, or an integer turned float, fails here.
//!
//! Two small runs against the real `vwr dev` binary produce every key a run can write: a steady
//! run with everything optional switched on (bots of every kind behind a proof of work, a
//! `check403`, a `redis` and a `dynamodb` fault, the AWS proxy's call counts, `target-arrivals`
//! with no-shows and abandons, `--html`), and a `prequeue` run (`open`,
//! `safety.prequeueViolations`).
//!
//! A report built here with every optional field and section present, every map with an entry
//! (and, apart, the draw that could not be judged) has exactly the fixture's keys and types:
//! those no small run writes (a steady part's rates, lost visitors, …) are checked there.
//!
//! The fixture's format: one `path type` per line; `a.b` is key `b` inside `a`, `a[]` the
//! elements of array `a`, `*` any key of a map whose keys are data (endpoint names, causes,
//! codes, AWS operations). A `null` value fits any type (an optional figure not known in a
//! run); a map may be empty; `open.positions.reason` only appears when the status document
//! never revealed P.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use axum::body::Bytes;
use http_body_util::Full;
use serde_json::Value;
use vwr_loadtest::client::HttpClient;
use vwr_loadtest::report::{
    Bots, CallCounts, Config, Costs, Curve, Defences, Degraded, Drawn, ErrorHistogram, ErrorSummary,
    Estimate, Fairness, FaultRecord, FirstChecks, Flow, Histogram, KindReport, Mode, NotCounted, Open,
    OpenRates, Order, Outage, Outflow, Percentiles, PlacesLost, Polling, Positions, Safety, Scenario, Series,
    Steady, Throughput, Tier2, Tier2Waiting, TimeToAdmission, WholeRun,
};
use vwr_loadtest::{Report, faults};

const KEY: &str = "loadtest-keys-admin-key-0123456789abcdef";
const FIXTURE: &str = include_str!("fixtures/loadtest-report-keys.txt");

/// Objects whose keys are data: their entries all have the path `…*`.
const MAPS: [&str; 6] =
    ["latency", "placesLost.byCause", "placesLost.verdicts", "lostBy", "bots.kinds.*.refused", "awsCalls"];
/// The server's own document, passed through as it answered: not the report's keys.
const OPAQUE: [&str; 1] = ["outflow.server"];
/// Paths no run of this test can write (they need a broken draw).
const RARE: [&str; 1] = ["open.positions.reason"];

/// Whether `path` matches `pattern`, a `*` matching any one segment.
fn matches(pattern: &str, path: &str) -> bool {
    let (p, q): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), path.split('.').collect());
    p.len() == q.len() && p.iter().zip(&q).all(|(a, b)| *a == "*" || a == b)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path of `v` under `path` with the types of its values.
fn shape(v: &Value, path: &str, out: &mut BTreeMap<String, BTreeSet<&'static str>>) {
    if !path.is_empty() {
        out.entry(path.to_owned()).or_default().insert(kind(v));
        if OPAQUE.contains(&path) {
            return;
        }
    }
    match v {
        Value::Object(m) => {
            let map = MAPS.iter().any(|p| matches(p, path));
            for (k, x) in m {
                let k = if map { "*" } else { k.as_str() };
                let sub = if path.is_empty() { k.to_owned() } else { format!("{path}.{k}") };
                shape(x, &sub, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                shape(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

/// A key of the fixture.
struct Key {
    ty: String,
    /// Left out when the run has none.
    optional: bool,
}

/// The fixture: path → key.
fn fixture() -> BTreeMap<String, Key> {
    FIXTURE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut words = l.split(' ');
            let (Some(path), Some(ty)) = (words.next(), words.next()) else { panic!("fixture line {l:?}") };
            let optional = match words.next() {
                None => false,
                Some("optional") => true,
                Some(other) => panic!("fixture line {l:?}: {other:?}"),
            };
            (path.to_owned(), Key { ty: ty.to_owned(), optional })
        })
        .collect()
}

/// The shape as fixture lines (non-null types; `null` when only nulls were seen).
fn listing(seen: &BTreeMap<String, BTreeSet<&'static str>>) -> String {
    seen.iter()
        .map(|(path, kinds)| {
            let non_null: Vec<&str> = kinds.iter().copied().filter(|k| *k != "null").collect();
            let ty = if non_null.is_empty() { "null".to_owned() } else { non_null.join("|") };
            format!("{path} {ty}\n")
        })
        .collect()
}

/// The path of the object holding `path` (`""`: the report itself).
fn parent(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(p, _)| p)
}

/// What of one report's shape disagrees with the fixture: keys it does not list, values of
/// another type, optional keys written as null, and keys missing from an object that has them
/// (array elements and map entries aside: those may be none).
fn disagreements(seen: &BTreeMap<String, BTreeSet<&'static str>>) -> Vec<String> {
    let want = fixture();
    let mut out = Vec::new();
    for (path, kinds) in seen {
        let Some(key) = want.get(path) else {
            out.push(format!("not in the fixture: {path} ({kinds:?})"));
            continue;
        };
        for k in kinds.iter().filter(|k| **k != "null") {
            if *k != key.ty {
                out.push(format!("{path}: {k}, the fixture says {}", key.ty));
            }
        }
        if key.optional && kinds.contains("null") {
            out.push(format!("{path}: null, the fixture says it is left out instead"));
        }
    }
    for (path, key) in &want {
        let holder = parent(path);
        let held = holder.is_empty() || seen.get(holder).is_some_and(|k| k.contains("object"));
        let entry = path.ends_with("[]") || path.ends_with(".*");
        if held && !entry && !key.optional && !seen.contains_key(path) {
            out.push(format!("missing: {path}"));
        }
    }
    out
}

/// Fixture keys that none of `seen` wrote (map entries and [`RARE`] aside).
fn never_written(seen: &BTreeMap<String, BTreeSet<&'static str>>) -> Vec<String> {
    fixture()
        .into_keys()
        .filter(|path| {
            let optional = path.split('.').any(|s| s == "*") || RARE.iter().any(|r| path.starts_with(r));
            !optional && !seen.contains_key(path)
        })
        .collect()
}

fn shape_of<T: serde::Serialize>(report: &T) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut seen = BTreeMap::new();
    shape(&serde_json::to_value(report).unwrap(), "", &mut seen);
    seen
}

async fn run(args: &[&str], json: &std::path::Path) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    vwr_loadtest::run(common::load_options(&all)).await.unwrap();
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

/// A steady run with every optional section and field on.
async fn everything(server: &common::Server) -> Value {
    // The AWS fault proxy (nothing behind it: `vwr dev` here keeps its tables in memory), one
    // call through it before the run so that `awsCalls` has an entry.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    faults::start_proxy(
        listen,
        "http://127.0.0.1:9",
        Arc::new(faults::ProxyFaults::default()),
        Arc::new(faults::ProxyStats::default()),
    )
    .await
    .unwrap();
    let proxy = format!("http://{listen}");
    let call = http::Request::post(format!("{proxy}/"))
        .header("x-amz-target", "DynamoDB_20120810.GetItem")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let _ = HttpClient::new(std::time::Duration::from_secs(5)).unwrap().raw(call).await;
    let json = server.dir.join("everything.json");
    let html = server.dir.join("everything.html");
    let report = run(
        &[
            "--base-url",
            &server.base,
            "--admin-key",
            KEY,
            "--visitors",
            "80",
            "--arrival",
            "uniform",
            "--arrival-seconds",
            "2",
            "--mode",
            "target-arrivals",
            "--target-per-minute",
            "600",
            "--max-batch-size",
            "50",
            "--no-show-rate",
            "0.2",
            "--abandon-rate",
            "0.1",
            "--threshold",
            "100",
            "--dwell-seconds",
            "0.3",
            "--max-seconds",
            "90",
            "--bots",
            "4",
            "--bot-places",
            "2",
            "--pow-difficulty",
            "4",
            "--fault",
            "check403@2+2",
            "--fault",
            "redis@1+3",
            "--redis-stop-cmd",
            "true",
            "--redis-start-cmd",
            "true",
            "--fault",
            "dynamodb@1+1",
            "--aws-proxy",
            &proxy,
            "--html",
            html.to_str().unwrap(),
        ],
        &json,
    )
    .await;
    assert!(std::fs::read_to_string(&html).unwrap().starts_with("<!DOCTYPE html>"));
    report
}

async fn prequeue(server: &common::Server) -> Value {
    let json = server.dir.join("prequeue.json");
    run(
        &[
            "--base-url",
            &server.base,
            "--admin-key",
            KEY,
            "--scenario",
            "prequeue",
            "--visitors",
            "40",
            "--prequeue-seconds",
            "4",
            "--arrival",
            "uniform",
            "--arrival-seconds",
            "1",
            "--batch-size",
            "40",
            "--threshold",
            "100",
            "--dwell-seconds",
            "0.2",
            "--max-seconds",
            "90",
        ],
        &json,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_report_keeps_its_keys_and_their_types() {
    let (a, b) = tokio::join!(
        common::start_dev("loadtest-keys-a", KEY, &[]),
        common::start_dev("loadtest-keys-b", KEY, &[])
    );
    let (steady, pre) = tokio::join!(everything(&a), prequeue(&b));
    let mut union = BTreeMap::new();
    for (name, report) in [("steady", &steady), ("prequeue", &pre)] {
        let seen = shape_of(report);
        let wrong = disagreements(&seen);
        assert!(wrong.is_empty(), "the {name} run's report: {wrong:#?}\nits keys:\n{}", listing(&seen));
        for (path, kinds) in seen {
            union.entry(path).or_insert_with(BTreeSet::new).extend(kinds);
        }
    }
    let unseen = never_written(&union);
    assert!(unseen.is_empty(), "never written: {unseen:#?}\nthe keys of both runs:\n{}", listing(&union));
    // The runs wrote what they were asked to: the keys above were really exercised.
    assert_eq!(steady["faults"].as_array().map(Vec::len), Some(3), "{}", steady["faults"]);
    assert_eq!(steady["bots"]["kinds"].as_object().map(serde_json::Map::len), Some(4));
    assert_eq!(pre["scenario"], "prequeue");
}

#[test]
fn the_shape_of_a_report() {
    let v = serde_json::json!({
        "a": 1, "b": {"c": 1.5, "d": null}, "latency": {"tier1.assign": {"p50Ms": 1.0}},
        "e": [1, null], "outflow": {"server": {"x": 1}},
    });
    let mut seen = BTreeMap::new();
    shape(&v, "", &mut seen);
    assert_eq!(
        listing(&seen),
        "a int\nb object\nb.c float\nb.d null\ne array\ne[] int\nlatency object\nlatency.* object\nlatency.*.p50Ms float\noutflow object\noutflow.server object\n"
    );
    assert!(matches("bots.kinds.*.refused", "bots.kinds.no-pow.refused"));
    assert!(!matches("bots.kinds.*.refused", "bots.kinds.refused"));
}

fn map(key: &str, n: u64) -> BTreeMap<String, u64> {
    BTreeMap::from([(key.to_owned(), n)])
}

/// A report with every optional field and section present and every map with an entry. Every
/// struct is written out whole: a field added to the report fails to compile here until it is
/// added (and to the fixture).
fn full_report() -> Report {
    let order =
        Order { kendall_tau: Some(0.9), largest_inversion_positions: 2, largest_inversion_seconds: 0.5 };
    let summary = ErrorSummary {
        samples: 3,
        p50_error_pct: Some(10.5),
        p90_error_pct: Some(20.5),
        mean_signed_error_pct: Some(-1.5),
    };
    let kind = |places: bool, admissions: bool, cookies: bool| KindReport {
        bots: 1,
        attempts: 4,
        refused: map("challenge_required", 2),
        places_obtained: places.then_some(1),
        extra_places: places.then_some(0),
        admissions_obtained: admissions.then_some(0),
        edge_passes: cookies.then_some(3),
        entry_tokens: cookies.then_some(3),
        extra_slots: cookies.then_some(0),
    };
    Report {
        event: "lt1".into(),
        base_url: "http://127.0.0.1:8080".into(),
        visitors: 10,
        scenario: Scenario::Prequeue,
        arrival: Curve::Uniform,
        config: Config {
            batch_size: 5,
            interval_seconds: 1,
            shards: 2,
            threshold: 10,
            dwell_seconds: 0.5,
            abandon_rate: 0.1,
            mode: Mode::TargetArrivals,
            target_per_minute: Some(600),
            max_batch_size: Some(50),
            no_show_rate: 0.2,
            arrival_seconds: 2.0,
        },
        duration_seconds: 12.5,
        flow: Flow {
            joined: 10,
            admitted_tier1: 9,
            passed_edge: 9,
            active_tier2: 9,
            done: 8,
            abandoned: 1,
            no_shows: 1,
            unfinished: 0,
        },
        throughput: Throughput { joins_per_second: 5.0, checks_per_second: 2.0, requests_per_second: 30.0 },
        latency: BTreeMap::from([(
            "tier1.assign".to_owned(),
            Percentiles { requests: 10, p50_ms: 1.5, p95_ms: 2.5, p99_ms: 3.5, max_ms: 4.5 },
        )]),
        time_to_admission: TimeToAdmission {
            tier1_p50_seconds: Some(1.5),
            tier1_p99_seconds: Some(3.5),
            entry_p50_seconds: Some(1.6),
            entry_p99_seconds: Some(3.6),
            tier1_histogram: Histogram { bin_seconds: 0.5, counts: vec![1, 2] },
        },
        fairness: Fairness { tier1: order.clone(), tier2: order },
        max_active_seen: 9,
        degraded: Degraded {
            responses_503: 1,
            network_errors: 1,
            unexpected_4xx: 1,
            edge_refused: 1,
            seats_refused: 1,
            rejoined_tier2: 1,
            transient_refusals: 1,
        },
        places_lost: PlacesLost {
            visitors: 1,
            by_cause: map("ticketReplaced", 1),
            verdicts: map("session_ended", 1),
        },
        lost_by: map("closed", 1),
        faults: vec![FaultRecord {
            kind: "redis".into(),
            started_at: 1.5,
            ended_at: 4.5,
            injected: true,
            recovered: true,
            responses: Some(3),
            effect: Some("dropped".into()),
            observed: Some(Outage { probes: 2, refused: 2, slow: 0, answered: 0, p50_ms: 3, max_ms: 4 }),
        }],
        costs: Costs {
            polling: Polling::Page,
            tier1_lambda_calls_per_visitor: 2.1,
            tier2_lambda_calls_per_visitor: 3.1,
            status_fetches_per_visitor: 4.1,
            origin_status_fetches_per_second: 0.9,
            checks_per_visitor: 1.1,
            status_cache_hit_share: Some(0.95),
            calls: CallCounts {
                assign: 10,
                check: 11,
                status_fetches: 40,
                status_cache_hits: 38,
                status_origin_fetches: 2,
                status_without_cdn: 0,
                tier1: 23,
                tier2: 31,
            },
            not_counted: NotCounted { tier1_rechecks: 9, why: "a second tab".into() },
        },
        tier2: Tier2 {
            waiting: Tier2Waiting::Line,
            idle_slot_seconds_p50: Some(0.5),
            idle_slot_seconds_p90: Some(1.5),
            idle_slot_seconds_max: Some(2.5),
            idle_slots_measured: 8,
            line_reads_per_visitor: 12.5,
            line_origin_fetches: 4,
            line_cache_hit_share: Some(0.9),
        },
        safety: Safety {
            lost: 0,
            double_admitted: 0,
            over_threshold_moments: 0,
            server_errors: 0,
            places_lost_to_faults: 0,
            prequeue_violations: Some(0),
        },
        bots: Some(Bots {
            count: 4,
            defences: Defences { request_secret: true, pow_difficulty: 4, enqueue_token_required: false },
            kinds: BTreeMap::from([
                ("multi-place".to_owned(), kind(true, false, false)),
                ("no-pow".to_owned(), kind(true, false, false)),
                ("shared-cookie".to_owned(), kind(false, false, true)),
                ("stolen-ticket".to_owned(), kind(false, true, false)),
            ]),
        }),
        estimate: Estimate {
            all: summary.clone(),
            excluded_short_waits: 1,
            min_real_wait_seconds: 5.0,
            real_wait_p50_seconds: Some(8.5),
            estimate_p50_seconds: Some(9.5),
            after_first_minute: summary,
            histogram: ErrorHistogram { bin_pct: 5.0, counts: vec![1, 2] },
            note: "n".into(),
        },
        outflow: Outflow {
            target_per_minute: Some(600),
            redeemed_per_minute: Some(590.5),
            served_per_minute: Some(800.5),
            no_show_share: Some(0.25),
            deviation_pct: Some(-1.5),
            worst_minute_deviation_pct: Some(-4.5),
            steady: Steady {
                from_seconds: Some(61.5),
                to_seconds: Some(150.5),
                seconds: 89.0,
                first_served_seconds: Some(1.5),
            },
            whole_run: Some(WholeRun { served: 10, redeemed: 8, no_show_share: Some(0.2) }),
            server: Some(serde_json::json!({"mode": "targetArrivals", "redeemedPerMinute": 590.0})),
            note: "n".into(),
        },
        series: Series {
            seconds: vec![1.0],
            waiting: vec![Some(3)],
            serving_counter: vec![Some(2)],
            redeemed: vec![Some(1)],
            admitted_tier1: vec![1],
            active_tier2: vec![1],
            tier1_calls_per_second: vec![Some(2.5)],
            status_fetches_per_second: vec![Some(3.5)],
            origin_status_fetches_per_second: vec![Some(0.5)],
            rate_window_seconds: 30.0,
            served_per_minute: vec![Some(60.5)],
            redeemed_per_minute: vec![Some(50.5)],
        },
        open: Some(Open {
            prequeue_at: 1_800_000_001,
            open_at: 1_800_000_020,
            open_at_seconds: 19.5,
            open_seen_after_seconds: Some(0.2),
            before_open_visitors: 7,
            after_open_visitors: 3,
            prequeue_joins: 7,
            prequeue_size_before_open: Some(7),
            prequeue_size: Some(7),
            sealed_counts: Some(vec![4, 3]),
            seed_commitment: Some("c".into()),
            seed: Some("s".into()),
            commitment_ok: true,
            positions: Positions::Drawn(Drawn {
                ok: true,
                drawn: 7,
                missing: 0,
                duplicates: 0,
                unobserved: 0,
                late_sealed_joins: 0,
                post_open_joins: 3,
                post_open_at_or_below_p: 0,
                spearman_arrival_vs_position: Some(0.1),
            }),
            rates: OpenRates {
                window_seconds: 10,
                peak_per_second: 5,
                peak_checks_per_second: 4,
                mean_per_second: 2.5,
                mean_checks_per_second: 1.5,
                peak_to_mean: Some(2.0),
                per_second: vec![5, 1],
                checks_per_second: vec![4, 1],
            },
            first_check_after_open: FirstChecks {
                p50_seconds: Some(2.5),
                p99_seconds: Some(4.5),
                max_seconds: Some(4.9),
            },
            status_reads: 6,
            violations: 0,
        }),
        aws_calls: Some(map("DynamoDB_20120810.GetItem", 3)),
        aws_throttled_writes: Some(0),
    }
}

#[test]
fn a_full_report_has_exactly_the_fixtures_keys_and_types() {
    let full = full_report();
    // The draw that could not be judged: the other shape of `open.positions`.
    let mut unjudged = full.clone();
    if let Some(o) = unjudged.open.as_mut() {
        o.positions =
            Positions::Unjudged { ok: false, reason: "the status document never revealed P".into() };
    }
    let mut seen = BTreeMap::new();
    for r in [&full, &unjudged] {
        for (path, kinds) in shape_of(r) {
            seen.entry(path).or_insert_with(BTreeSet::new).extend(kinds);
        }
    }
    let want = fixture();
    let got: BTreeMap<String, String> = seen
        .iter()
        .map(|(path, kinds)| (path.clone(), kinds.iter().copied().collect::<Vec<_>>().join("|")))
        .collect();
    let missing: Vec<&String> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let wrong: Vec<String> = got
        .iter()
        .filter(|(path, ty)| want.get(*path).map(|k| &k.ty) != Some(*ty))
        .map(|(path, ty)| format!("{path} {ty} (the fixture: {:?})", want.get(path).map(|k| &k.ty)))
        .collect();
    assert!(missing.is_empty() && wrong.is_empty(), "missing: {missing:#?}\nnot as the fixture: {wrong:#?}");
    // Each, and a report with nothing optional in it, has every key its objects hold, and
    // leaves the optional ones out rather than writing null.
    for (name, r) in [("full", &full), ("unjudged", &unjudged), ("empty", &Report::default())] {
        let wrong = disagreements(&shape_of(r));
        assert!(wrong.is_empty(), "the {name} report: {wrong:#?}");
    }
    // And it reads back.
    let text = serde_json::to_string(&full).unwrap();
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&full).unwrap());
    let back: Report = serde_json::from_str(&serde_json::to_string(&unjudged).unwrap()).unwrap();
    assert_eq!(back.open.map(|o| o.positions), unjudged.open.map(|o| o.positions));
}
