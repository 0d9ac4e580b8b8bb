//! The distributed rehearsal checked against the load test (docs/rehearsal.md#rehearse-with-locust):
//! a small Locust run of `rehearsal/locustfile.py` — a master and two worker processes —
//! against the real `vwr dev`, its records analyzed by `vwr loadtest analyze`, and a
//! `vwr loadtest` of the same shape on the same server: both safe, everyone through, and the
//! Lambda calls per visitor of each tier within 15 % of the load test's (about two at tier 1).
//!
//! Locust comes from `VWR_TEST_LOCUST` (tests/run.sh installs it in tests/.venv and sets it);
//! without it the test says so and passes, and with it set to a path that does not exist it
//! fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use vwr_loadtest::{Report, analyze, records::Records};

const KEY: &str = "rehearsal-vs-loadtest-admin-key-0123456789";
const VISITORS: u64 = 300;
const ARRIVAL_SECONDS: u64 = 10;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

fn admin(base: &str, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_vwr"))
        .args(["admin", "--url", base, "--key", KEY])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "vwr admin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Within 15 % of the load test's figure.
fn close(name: &str, ours: f64, theirs: f64) {
    let off = (ours - theirs).abs() / theirs.max(1e-9);
    eprintln!("{name}: rehearsal {ours:.3}, load test {theirs:.3} ({:.1} % apart)", off * 100.0);
    assert!(off <= 0.15, "{name}: the rehearsal's {ours} against the load test's {theirs}");
}

fn through(r: &Report, who: &str) {
    assert!(r.safety.clean(), "{who}: safety {:?}", r.safety);
    assert_eq!(r.flow.done, VISITORS, "{who}: everyone through: {:?}", r.flow);
    assert_eq!(r.flow.unfinished, 0, "{who}: {:?}", r.flow);
}

#[tokio::test]
async fn a_locust_rehearsal_reports_as_the_load_test_of_the_same_shape() {
    let Some(locust) = std::env::var_os("VWR_TEST_LOCUST").map(PathBuf::from) else {
        eprintln!("VWR_TEST_LOCUST is not set: skipped (tests/run.sh sets it)");
        return;
    };
    assert!(locust.exists(), "VWR_TEST_LOCUST={} does not exist", locust.display());
    let server = common::start_dev("rehearsal", KEY, &[]).await;
    let base = server.base.clone();
    let batch = ["--batch-size", "20", "--interval-seconds", "1"];

    // The rehearsal: an active event, 300 visitors over 10 s from two Locust workers.
    let event = format!("rh{}", vwr_core::time::now_millis());
    admin(&base, &[&["activate", &event][..], &batch].concat());
    admin(&base, &["threshold", &event, "--threshold", "150"]);
    let records = root().join("target/rehearsal/records");
    let _ = std::fs::remove_dir_all(&records);
    let spawn_rate = (VISITORS / ARRIVAL_SECONDS).to_string();
    let (users, locustfile) = (VISITORS.to_string(), root().join("rehearsal/locustfile.py"));
    let run = {
        let (locust, base, event, records) = (locust.clone(), base.clone(), event.clone(), records.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(locust)
                .arg("-f")
                .arg(locustfile)
                .args(["--headless", "--only-summary", "--processes", "2", "--host", &base])
                .args(["--users", &users, "--spawn-rate", &spawn_rate, "--run-time", "240s"])
                .env("VWR_EVENT", &event)
                .env("VWR_RECORDS_DIR", &records)
                .env("VWR_DWELL_SECONDS", "1")
                .env("VWR_THRESHOLD", "150")
                .output()
                .unwrap()
        })
    };
    let out = run.await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "locust failed: {stderr}");
    let files = std::fs::read_dir(&records).unwrap().count();
    assert!(files >= 2, "one records file per worker process: {files}");
    let rehearsal = analyze::report(&Records::read_dir(&records).unwrap()).unwrap();
    assert_eq!(rehearsal.visitors, VISITORS, "one record per visitor");
    through(&rehearsal, "rehearsal");

    // The load test of the same shape, on the same server.
    let (n, secs) = (VISITORS.to_string(), ARRIVAL_SECONDS.to_string());
    let opts = common::load_options(
        &[
            &["--base-url", &base, "--admin-key", KEY, "--visitors", &n, "--arrival", "uniform"][..],
            &[
                "--arrival-seconds",
                &secs,
                "--threshold",
                "150",
                "--dwell-seconds",
                "1",
                "--max-seconds",
                "240",
            ],
            &batch,
        ]
        .concat(),
    );
    let lt = vwr_loadtest::run(opts).await.unwrap();
    through(&lt, "load test");

    let (ours, theirs) = (&rehearsal.costs, &lt.costs);
    close(
        "tier-1 Lambda calls per visitor",
        ours.tier1_lambda_calls_per_visitor,
        theirs.tier1_lambda_calls_per_visitor,
    );
    close(
        "tier-2 Lambda calls per visitor",
        ours.tier2_lambda_calls_per_visitor,
        theirs.tier2_lambda_calls_per_visitor,
    );
    close("checks per visitor", ours.checks_per_visitor, theirs.checks_per_visitor);
    let t1 = ours.tier1_lambda_calls_per_visitor;
    assert!((1.9..=2.5).contains(&t1), "about two tier-1 calls per visitor: {t1}");
    eprintln!(
        "status fetches per visitor: rehearsal {}, load test {}; tier-1 wait p50: rehearsal {:?} s, load test {:?} s",
        ours.status_fetches_per_visitor,
        theirs.status_fetches_per_visitor,
        rehearsal.time_to_admission.tier1_p50_seconds,
        lt.time_to_admission.tier1_p50_seconds
    );
    assert_eq!(
        rehearsal.latency.keys().collect::<Vec<_>>(),
        lt.latency.keys().collect::<Vec<_>>(),
        "the same endpoints"
    );
}
