//! The report after the sale checked against the load test (docs/operate.md#the-report-after-the-sale):
//! `vwr loadtest` against the real `vwr dev` binary, then `vwr report` of the same event — the
//! counts equal the load test's (joined, admitted at tier 1) and the wait percentiles are
//! within 10 % of the load test's time to tier-1 admission, and tier 2 admitted each visitor
//! once; on the in-memory store and on DynamoDB (moto). The HTML report of the memory run is left in `target/report/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use vwr_cli::report::{ReportArgs, run};
use vwr_loadtest::client::AdminTarget;

const KEY: &str = "report-vs-loadtest-admin-key-0123456789";

/// `visitors` over 2 s, 10 let through a second: a line of `visitors / 10` seconds, so the
/// waits are long enough for whole seconds to measure within a few per cent.
async fn compare(server: &common::Server, event: &str, visitors: u64, html: Option<std::path::PathBuf>) {
    let n = visitors.to_string();
    let opts = common::load_options(&[
        "--base-url",
        &server.base,
        "--admin-key",
        KEY,
        "--event",
        event,
        "--visitors",
        &n,
        "--arrival",
        "uniform",
        "--arrival-seconds",
        "2",
        "--batch-size",
        "10",
        "--threshold",
        "1000",
        "--dwell-seconds",
        "0.2",
        "--max-seconds",
        "180",
    ]);
    let lt = vwr_loadtest::run(opts).await.unwrap();
    assert!(lt.safety.clean(), "safety: {:?}", lt.safety);
    assert_eq!(lt.flow.admitted_tier1, visitors, "everyone got through: {:?}", lt.flow);
    let target = AdminTarget::bearer(&server.base, KEY);
    let json =
        run(ReportArgs { event_id: event.into(), target, json: true, html: html.clone() }).await.unwrap();
    let json = json.lines().skip_while(|l| !l.starts_with('{')).collect::<Vec<_>>().join("\n");
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let totals = &r["totals"];
    assert_eq!(totals["joins"], lt.flow.joined, "joins: {r}");
    assert_eq!(totals["redeemed"], lt.flow.admitted_tier1, "redemptions: {r}");
    assert!(totals["served"].as_u64().unwrap() >= visitors, "{r}");
    assert_eq!(totals["abandoned"], 0, "{r}");
    let t = &lt.time_to_admission;
    for (name, theirs) in [("p50", t.tier1_p50_seconds.unwrap()), ("p99", t.tier1_p99_seconds.unwrap())] {
        let ours = r["waitSeconds"][name].as_f64().unwrap();
        let off = (ours - theirs).abs() / theirs;
        eprintln!(
            "{event}: wait {name}: report {ours:.2} s, load test {theirs:.2} s ({:.1} % apart)",
            off * 100.0
        );
        assert!(off <= 0.10, "{name}: report {ours} s against the load test's {theirs} s");
    }
    // Tier 2 (the same vwr dev): each visitor admitted to the booking line once.
    assert_eq!(r["tier2"]["totals"]["admitted"], visitors, "tier 2: {}", r["tier2"]);
    let per_minute: u64 = r["minutes"].as_array().unwrap().iter().map(|m| m["joins"].as_u64().unwrap()).sum();
    assert_eq!(per_minute, visitors, "the minutes add up to the totals");
    if let Some(path) = html {
        let page = std::fs::read_to_string(path).unwrap();
        // Five charts of tier 1 drawn (no refusal in this run: that one says so), and tier 2's.
        assert!(page.matches("<svg").count() >= 6, "tier 1's charts and tier 2's");
        assert!(page.contains("tier 2: admissions per minute and the line"));
    }
}

#[tokio::test]
async fn the_report_agrees_with_the_load_test_on_memory() {
    let server = common::start_dev("report-mem", KEY, &[]).await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/report");
    compare(&server, "rep-mem", 500, Some(dir.join("report-memory.html"))).await;
}

#[tokio::test]
async fn the_report_agrees_with_the_load_test_on_dynamodb() {
    let endpoint =
        std::env::var("VWR_TEST_AWS_ENDPOINT").expect("VWR_TEST_AWS_ENDPOINT (tests/run.sh sets it)");
    let table = format!("vwr-report-{}-{}", std::process::id(), vwr_core::time::now_millis());
    let env = [
        ("VWR_ADMIN_KEY", KEY),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ];
    let server = common::start("report-ddb", &["--store", "dynamodb", "--table", &table], &env).await;
    compare(&server, "rep-ddb", 250, None).await;
}
