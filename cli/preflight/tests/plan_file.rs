//! `--plan FILE` reads what `vwr plan --json` writes (docs/rehearsal.md#plan): the contract
//! between the two commands, checked on a real plan.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use vwr_plan::{Calibration, Inputs, Prices};
use vwr_preflight::PlanNeeds;

#[test]
fn a_vwr_plan_json_file_gives_the_needs_preflight_checks() {
    let inputs = Inputs {
        audience: 500_000.0,
        peak_arrivals_per_second: 5_000.0,
        outflow_per_minute: 3_000.0,
        threshold: Some(30_000.0),
        dwell_seconds: 600.0,
        wait_minutes: None,
        region: "us-east-1".into(),
    };
    let plan =
        vwr_plan::plan(&inputs, &Calibration::embedded().unwrap(), &Prices::embedded().unwrap()).unwrap();
    let text = serde_json::to_string_pretty(&plan).unwrap();
    let needs = PlanNeeds::from_json("plan.json", &text).unwrap();
    assert_eq!(needs.lambda_concurrency, plan.lambda_concurrency);
    assert_eq!(needs.lambda_concurrency_total, plan.lambda_concurrency_total);
    assert_eq!(needs.dynamodb_peak_writes_per_second, plan.dynamodb_peak_writes_per_second);
    for key in vwr_preflight::PLANNED_FUNCTIONS {
        assert!(needs.lambda_concurrency.contains_key(key), "the plan sizes {key}");
    }
    let stages = ["tier1", "tier2", "gate"].map(|k| plan.peak_requests_per_second[k]);
    assert_eq!(needs.api_account_rps(), stages.iter().sum::<u64>());
}
