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
use vwr_cli::client::HttpClient;
use vwr_cli::loadtest::{self, faults};

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

/// The fixture: path → type.
fn fixture() -> BTreeMap<String, String> {
    FIXTURE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (path, ty) = l.split_once(' ').unwrap_or_else(|| panic!("fixture line {l:?}"));
            (path.to_owned(), ty.trim().to_owned())
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

/// What of `seen` disagrees with the fixture: keys it does not list, values of another type,
/// and (`complete`) keys it lists that were never seen.
fn disagreements(seen: &BTreeMap<String, BTreeSet<&'static str>>, complete: bool) -> Vec<String> {
    let want = fixture();
    let mut out = Vec::new();
    for (path, kinds) in seen {
        let Some(ty) = want.get(path) else {
            out.push(format!("not in the fixture: {path} ({kinds:?})"));
            continue;
        };
        for k in kinds.iter().filter(|k| **k != "null") {
            if k != ty {
                out.push(format!("{path}: {k}, the fixture says {ty}"));
            }
        }
    }
    if complete {
        for path in want.keys() {
            let optional = path.split('.').any(|s| s == "*") || RARE.iter().any(|r| path.starts_with(r));
            if !optional && !seen.contains_key(path) {
                out.push(format!("never written: {path}"));
            }
        }
    }
    out
}

async fn run(args: &[&str], json: &std::path::Path) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    loadtest::run(common::load_options(&all)).await.unwrap();
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
        let mut seen = BTreeMap::new();
        shape(report, "", &mut seen);
        let wrong = disagreements(&seen, false);
        assert!(wrong.is_empty(), "the {name} run's report: {wrong:#?}\nits keys:\n{}", listing(&seen));
        for (path, kinds) in seen {
            union.entry(path).or_insert_with(BTreeSet::new).extend(kinds);
        }
    }
    let wrong = disagreements(&union, true);
    assert!(wrong.is_empty(), "{wrong:#?}\nthe keys of both runs:\n{}", listing(&union));
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
