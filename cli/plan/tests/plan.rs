//! `vwr plan`'s arithmetic: the worked example of docs/rehearsal.md to the cent, the shards at
//! their edges, the quota warnings, what the Terraform deploys (WAF, engine, architecture) and
//! the fixed monthly floor, the input checks, and (proptest) figures that never fall when the
//! audience or the peak grows.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use vwr_plan::{
    Architecture, Calibration, Deployment, Inputs, NEW_ON_DEMAND_TABLE_WRITES, Plan, PlanError, Prices,
    RedisEngine, plan, plan_deployed, render_table,
};

fn calibration() -> Calibration {
    Calibration::embedded().unwrap()
}

fn prices() -> Prices {
    Prices::embedded().unwrap()
}

fn sale(audience: f64, peak: f64, outflow_per_minute: f64) -> Inputs {
    Inputs::new(audience, peak, outflow_per_minute)
}

fn planned(inputs: &Inputs) -> Plan {
    plan(inputs, &calibration(), &prices()).unwrap()
}

fn deployed(inputs: &Inputs, deployment: &Deployment) -> Plan {
    plan_deployed(inputs, deployment, &calibration(), &prices()).unwrap()
}

/// docs/rehearsal.md#worked-example.
fn worked_example() -> Inputs {
    Inputs { threshold: Some(30_000.0), dwell_seconds: 600.0, ..sale(500_000.0, 5_000.0, 3_000.0) }
}

fn quotas(p: &Plan) -> Vec<&str> {
    p.warnings.iter().map(|w| w.quota.as_str()).collect()
}

#[test]
fn the_worked_example_of_the_rehearsal_doc() {
    let p = planned(&worked_example());
    assert_eq!(p.shards, 11);
    assert_eq!(p.dynamodb_peak_writes_per_second, 5_100);
    assert_eq!(p.dynamodb_peak_writes_per_shard, 460);
    let peaks: Vec<(&str, u64)> = p.peak_requests_per_second.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(peaks, [("cloudfront", 54_961), ("gate", 50), ("tier1", 5_051), ("tier2", 3_144)]);
    let conc: Vec<(&str, u64)> = p.lambda_concurrency.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        conc,
        [
            ("tier1-advancer", 1),
            ("tier1-api", 51),
            ("tier2-api", 26),
            ("tier2-authorizer", 1),
            ("tier2-worker", 1)
        ]
    );
    assert_eq!(p.lambda_concurrency_total, 80);
    assert_eq!(p.redis_ops_per_second, 3_194);
    assert_eq!(p.cloudfront_requests, 138_070_250);
    assert_eq!(p.sqs_messages, 500_000);
    assert_eq!(p.tier2_threshold, 30_000);
    assert_eq!((p.totals.wait_minutes, p.totals.sale_minutes), (166.67, 176.67));
    assert_eq!((p.totals.status_fetches_per_visitor, p.totals.tier2_calls_per_visitor), (176.85, 62.87));
    assert_eq!(p.totals.api_requests["tier1"], 1_010_388);
    assert_eq!(p.totals.api_requests["tier2"], 31_435_000);
    assert_eq!((p.totals.dynamodb_writes, p.totals.dynamodb_reads), (1_501_060, 157_316));
    let cost: Vec<(&str, f64)> = p.cost.by_service.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        cost,
        [
            ("apiGateway", 34.20),
            ("cloudfront", 144.21),
            ("cloudwatch", 11.53),
            ("dynamodb", 0.96),
            ("elasticache", 0.73),
            ("lambda", 7.68),
            ("sqs", 0.03),
            ("waf", 82.84),
        ]
    );
    assert_eq!(p.cost.total_usd, 282.18);
    assert_eq!(p.cost.per1000_visitors_usd, 0.5644);
    let floor: Vec<(&str, f64)> = p.cost.monthly_floor.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        floor,
        [
            ("cloudwatch", 7.00),
            ("elasticache", 6.11),
            ("eventbridgeScheduler", 0.09),
            ("lambda", 10.97),
            ("secretsManager", 2.00),
            ("vpcEndpoints", 29.20),
            ("waf", 10.00),
        ]
    );
    assert_eq!(p.cost.monthly_floor_usd, 65.37);
    assert_eq!(
        quotas(&p),
        ["Amazon DynamoDB: warm throughput of a new on-demand table (writes per second it takes at once)"]
    );
    assert_eq!((p.warnings[0].needed, p.warnings[0].default), (5_100, 4_000));
}

#[test]
fn the_waf_terraform_turns_on_is_priced_per_request_and_in_the_floor() {
    let p = planned(&worked_example());
    assert!(p.deployment.waf, "waf_enabled defaults to true");
    // Every CloudFront request goes through the web ACL: 138,070,250 × $0.60 per million.
    assert_eq!(p.cost.by_service["waf"], 82.84);
    // $5 the web ACL + 5 rules × $1 (2 managed groups, 3 rate rules).
    assert_eq!(p.cost.monthly_floor["waf"], 10.00);
    let off = deployed(&worked_example(), &Deployment { waf: false, ..Deployment::default() });
    assert!(!off.cost.by_service.contains_key("waf") && !off.cost.monthly_floor.contains_key("waf"));
    assert_eq!(((p.cost.total_usd - off.cost.total_usd) * 100.0).round() / 100.0, 82.84);
}

#[test]
fn valkey_is_priced_by_default_and_redis_oss_when_asked() {
    let p = planned(&worked_example());
    assert_eq!(p.deployment.redis_engine, RedisEngine::Valkey);
    // 319,350,000 ECPUs × $0.0034 × 0.67 per million; 8 MB stored, under Valkey's 100 MB minimum.
    assert_eq!(p.cost.by_service["elasticache"], 0.73);
    // 0.1 GB × $0.125 × 0.67 × 730 h.
    assert_eq!(p.cost.monthly_floor["elasticache"], 6.11);
    let redis = deployed(
        &worked_example(),
        &Deployment { redis_engine: RedisEngine::Redis, ..Deployment::default() },
    );
    assert_eq!(redis.cost.by_service["elasticache"], 1.09, "319,350,000 × $0.0034 per million");
    assert_eq!(redis.cost.monthly_floor["elasticache"], 91.25, "1 GB × $0.125 × 730 h");
    assert_eq!(redis.cost.monthly_floor_usd, 150.51);
    assert!(render_table(&p).contains("elasticache (Valkey)"));
    assert!(render_table(&redis).contains("elasticache (Redis OSS)"));
}

#[test]
fn x86_64_is_priced_by_default_and_arm64_only_when_asked() {
    let cal = calibration();
    assert_eq!(cal.architecture, "arm64", "the calibration's own architecture is not what is priced");
    let p = planned(&worked_example());
    assert_eq!(p.deployment.architecture, Architecture::X86);
    let arm = deployed(
        &worked_example(),
        &Deployment { architecture: Architecture::Arm64, ..Deployment::default() },
    );
    assert_eq!((p.cost.by_service["lambda"], arm.cost.by_service["lambda"]), (7.68, 7.47));
    assert_eq!((p.cost.monthly_floor["lambda"], arm.cost.monthly_floor["lambda"]), (10.97, 8.78));
    assert!(render_table(&p).contains("deployed: Lambda x86_64, ElastiCache Serverless Valkey, WAF on"));
    assert_eq!(serde_json::to_value(&arm).unwrap()["deployment"]["architecture"], "arm64");
}

#[test]
fn the_floor_follows_the_zones_and_the_endpoints_and_refuses_four_zones() {
    let three = deployed(&worked_example(), &Deployment { availability_zones: 3, ..Deployment::default() });
    // 2 interface endpoints × 3 zones × $0.01 × 730 h.
    assert_eq!(three.cost.monthly_floor["vpcEndpoints"], 43.80);
    let none = deployed(&worked_example(), &Deployment { vpc_endpoints: false, ..Deployment::default() });
    assert!(!none.cost.monthly_floor.contains_key("vpcEndpoints"));
    assert_eq!(none.cost.monthly_floor_usd, 36.17, "65.37 less the endpoints' 29.20");
    assert_eq!(none.cost.total_usd, 282.18, "the floor is beside the sale, not in it");
    let e = plan_deployed(
        &worked_example(),
        &Deployment { availability_zones: 4, ..Deployment::default() },
        &calibration(),
        &prices(),
    )
    .unwrap_err();
    assert_eq!(e, PlanError::AvailabilityZones(4));
    assert!("sparc".parse::<Architecture>().unwrap_err().to_string().contains("x86_64, arm64"));
    assert!("memcached".parse::<RedisEngine>().unwrap_err().to_string().contains("valkey, redis"));
}

#[test]
fn the_cost_per_thousand_visitors_is_the_sale_over_the_audience() {
    let p = planned(&worked_example());
    assert_eq!(p.cost.per1000_visitors_usd, ((p.cost.total_usd / 500.0) * 10_000.0).round() / 10_000.0);
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["cost"]["per1000VisitorsUsd"], 0.5644);
    assert_eq!(json["cost"]["monthlyFloorUsd"], 65.37);
    assert_eq!(json["cost"]["byService"]["waf"], 82.84);
}

#[test]
fn a_peak_beyond_a_new_on_demand_tables_warm_throughput_is_a_warning() {
    // DynamoDB peak writes: R assigns + 2 × 10 admissions a second.
    let warm = |r: f64| {
        let p = planned(&sale(1_000_000.0, r, 600.0));
        p.warnings.into_iter().find(|w| w.quota.contains("warm throughput"))
    };
    assert_eq!(NEW_ON_DEMAND_TABLE_WRITES, 4_000);
    assert!(warm(3_980.0).is_none(), "4,000 writes/s: what a new table takes at once");
    let w = warm(3_981.0).unwrap();
    assert_eq!((w.needed, w.default), (4_001, 4_000));
    assert!(w.how_to_raise.contains("--warm-throughput WriteUnitsPerSecond="), "{}", w.how_to_raise);
}

#[test]
fn the_worked_example_table_is_the_one_in_the_doc() {
    let table = render_table(&planned(&worked_example()));
    let doc = include_str!("../../../docs/rehearsal.md");
    assert!(doc.contains(&table), "docs/rehearsal.md must hold this table verbatim:\n{table}");
}

#[test]
fn a_500k_sale_has_shards_for_its_peak_with_headroom_and_costs_more_with_more_visitors() {
    let p = planned(&worked_example());
    assert!(p.shards as f64 >= 5_000.0 / 1_000.0 * 2.0, "half of each item's ~1,000 writes/s at the peak");
    let bigger = planned(&Inputs { audience: 1_000_000.0, ..worked_example() });
    assert!(bigger.cost.total_usd > p.cost.total_usd);
}

#[test]
fn shards_at_the_edges_of_half_an_items_write_rate() {
    // Counter writes at the peak: arrivals + admissions per second (600/min = 10/s).
    let shards = |peak: f64| planned(&sale(1_000_000.0, peak, 600.0)).shards;
    assert_eq!(shards(1.0), 1, "at least one");
    assert_eq!(shards(490.0), 1, "500 writes/s: exactly half of one item");
    assert_eq!(shards(491.0), 2, "just above");
    assert_eq!(shards(4_990.0), 10);
    assert_eq!(shards(4_991.0), 11);
    assert_eq!(shards(31_990.0), 64, "the most an event may have");
    let p = planned(&sale(1_000_000.0, 31_990.0, 600.0));
    assert!(!quotas(&p).iter().any(|q| q.starts_with("vwr counter shards")), "64 suffice");
}

#[test]
fn more_shards_than_an_event_may_have_are_a_warning_and_so_is_an_overwritten_item() {
    let p = planned(&sale(1_000_000.0, 31_991.0, 600.0));
    assert_eq!(p.shards, 64);
    let w = p.warnings.iter().find(|w| w.quota.starts_with("vwr counter shards")).unwrap();
    assert_eq!((w.needed, w.default), (65, 64));
    assert!(!quotas(&p).iter().any(|q| q.contains("per partition")), "500 writes/s per item still");

    let p = planned(&sale(1_000_000.0, 70_000.0, 600.0));
    assert_eq!(p.dynamodb_peak_writes_per_shard, 1_094);
    let w = p.warnings.iter().find(|w| w.quota.contains("per partition")).unwrap();
    assert_eq!((w.needed, w.default), (1_094, 1_000));
}

#[test]
fn twenty_thousand_arrivals_a_second_exceed_api_gateways_default_throttle() {
    let p = planned(&Inputs { peak_arrivals_per_second: 20_000.0, ..worked_example() });
    let w = p.warnings.iter().find(|w| w.quota.starts_with("Amazon API Gateway: Throttle rate")).unwrap();
    assert_eq!(w.service_quota_code.as_deref(), Some("L-8A5B8E43"));
    assert_eq!((w.needed, w.default), (23_245, 10_000));
    assert!(w.how_to_raise.contains("Service Quotas"));
    assert!(quotas(&p).iter().any(|q| q.starts_with("vwr tier-1 API stage throttle")));
    assert_eq!(p.shards, 41);
}

#[test]
fn two_thousand_arrivals_a_second_exceed_nothing() {
    let p = planned(&Inputs { peak_arrivals_per_second: 2_000.0, ..worked_example() });
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn lambda_concurrency_beyond_the_accounts_thousand_is_a_warning() {
    // 100,000 arrivals/s × 10 ms = 1,000 tier-1 executions, plus the other functions.
    let p = planned(&sale(1_000_000.0, 100_000.0, 600.0));
    let w = p.warnings.iter().find(|w| w.quota.starts_with("AWS Lambda")).unwrap();
    assert_eq!(w.service_quota_code.as_deref(), Some("L-B99A9384"));
    assert_eq!(w.default, 1_000);
    assert_eq!(w.needed, p.lambda_concurrency_total);
}

#[test]
fn a_threshold_below_outflow_times_dwell_is_a_warning_and_none_derives_it() {
    let small = planned(&Inputs { threshold: Some(2_000.0), ..worked_example() });
    let w = small.warnings.iter().find(|w| w.quota.starts_with("vwr tier-2 threshold")).unwrap();
    assert_eq!((w.needed, w.default), (30_000, 2_000));
    let derived = planned(&Inputs { threshold: None, ..worked_example() });
    assert_eq!(derived.tier2_threshold, 30_000);
    assert!(
        !quotas(&derived).iter().any(|q| q.starts_with("vwr tier-2 threshold")),
        "{:?}",
        derived.warnings
    );
}

#[test]
fn wait_minutes_default_to_audience_over_outflow_and_can_be_given() {
    assert_eq!(planned(&sale(600_000.0, 5_000.0, 3_000.0)).totals.wait_minutes, 200.0);
    let given = planned(&Inputs { wait_minutes: Some(60.0), ..sale(600_000.0, 5_000.0, 3_000.0) });
    assert_eq!((given.totals.wait_minutes, given.totals.sale_minutes), (60.0, 70.0));
}

#[test]
fn every_region_in_the_table_is_priced_and_costs_differ() {
    let us = planned(&worked_example()).cost.total_usd;
    for region in ["eu-west-1", "ap-northeast-1", "ap-northeast-2"] {
        let p = planned(&Inputs { region: region.to_owned(), ..worked_example() });
        assert!(p.cost.total_usd > us, "{region}: {} ≤ {us}", p.cost.total_usd);
        assert_eq!(p.cost.region, region);
    }
}

#[test]
fn the_json_has_the_keys_of_the_spec() {
    let json = serde_json::to_value(planned(&worked_example())).unwrap();
    assert!(json["shards"].is_u64());
    assert!(json["lambdaConcurrency"].is_object());
    assert!(json["peakRequestsPerSecond"]["tier1"].is_u64());
    assert!(json["peakRequestsPerSecond"]["tier2"].is_u64());
    assert!(json["cost"]["totalUsd"].is_f64());
    assert!(json["cost"]["byService"].is_object());
    assert!(json["warnings"].is_array());
    for key in ["dynamodbPeakWritesPerSecond", "cloudfrontRequests", "redisOpsPerSecond", "sqsMessages"] {
        assert!(json[key].is_u64(), "{key}");
    }
    let warned =
        serde_json::to_value(planned(&Inputs { peak_arrivals_per_second: 20_000.0, ..worked_example() }))
            .unwrap();
    let mut keys: Vec<&String> = warned["warnings"][0].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["default", "howToRaise", "needed", "quota", "serviceQuotaCode"]);
}

#[test]
fn inputs_are_refused_with_a_message_that_names_the_flag() {
    let p = prices();
    let err = |i: Inputs| i.validate(&p).unwrap_err();
    assert_eq!(err(sale(0.0, 1.0, 1.0)), PlanError::NotPositive { flag: "audience", value: 0.0 });
    assert_eq!(
        err(sale(10.0, -1.0, 1.0)).to_string(),
        "--peak-arrivals-per-second must be a number above 0, got -1"
    );
    assert!(matches!(
        err(sale(10.0, 1.0, f64::NAN)),
        PlanError::NotPositive { flag: "outflow-per-minute", .. }
    ));
    assert!(matches!(
        err(Inputs { dwell_seconds: 0.0, ..sale(10.0, 1.0, 1.0) }),
        PlanError::NotPositive { flag: "dwell-seconds", .. }
    ));
    assert!(matches!(
        err(Inputs { threshold: Some(-5.0), ..sale(10.0, 1.0, 1.0) }),
        PlanError::NotPositive { flag: "threshold", .. }
    ));
    assert!(matches!(
        err(Inputs { wait_minutes: Some(0.0), ..sale(10.0, 1.0, 1.0) }),
        PlanError::NotPositive { flag: "wait-minutes", .. }
    ));
    assert_eq!(
        err(sale(100.0, 101.0, 1.0)).to_string(),
        "--peak-arrivals-per-second (101) is more than --audience (100): at most the whole audience arrives in one second"
    );
    let unknown = err(Inputs { region: "eu-north-9".to_owned(), ..sale(10.0, 1.0, 1.0) });
    assert_eq!(
        unknown.to_string(),
        "no prices for region \"eu-north-9\"; known regions: ap-northeast-1, ap-northeast-2, eu-west-1, us-east-1"
    );
    assert!(plan(&sale(0.0, 1.0, 1.0), &calibration(), &p).is_err(), "plan validates too");
}

/// Every figure that must not fall when the sale grows (the cost per service included).
fn figures(p: &Plan) -> Vec<(String, f64)> {
    let mut out = vec![
        ("shards".to_owned(), p.shards as f64),
        ("lambdaConcurrencyTotal".to_owned(), p.lambda_concurrency_total as f64),
        ("dynamodbPeakWritesPerSecond".to_owned(), p.dynamodb_peak_writes_per_second as f64),
        ("cloudfrontRequests".to_owned(), p.cloudfront_requests as f64),
        ("redisOpsPerSecond".to_owned(), p.redis_ops_per_second as f64),
        ("sqsMessages".to_owned(), p.sqs_messages as f64),
        ("dynamodbWrites".to_owned(), p.totals.dynamodb_writes as f64),
        ("dynamodbReads".to_owned(), p.totals.dynamodb_reads as f64),
        ("totalUsd".to_owned(), p.cost.total_usd),
    ];
    out.extend(p.lambda_concurrency.iter().map(|(k, v)| (format!("lambdaConcurrency.{k}"), *v as f64)));
    out.extend(p.peak_requests_per_second.iter().map(|(k, v)| (format!("peak.{k}"), *v as f64)));
    out.extend(p.totals.lambda_invocations.iter().map(|(k, v)| (format!("invocations.{k}"), *v as f64)));
    out.extend(p.cost.by_service.iter().map(|(k, v)| (format!("cost.{k}"), *v)));
    out
}

fn never_fall(small: &Plan, big: &Plan) -> Result<(), TestCaseError> {
    for ((name, a), (_, b)) in figures(small).into_iter().zip(figures(big)) {
        prop_assert!(b >= a, "{name} fell from {a} to {b}");
    }
    Ok(())
}

fn any_sale() -> impl Strategy<Value = Inputs> {
    (
        1_000u32..5_000_000,
        0.0f64..1.0,
        60u32..200_000,
        prop::option::of(1u32..200_000),
        1u32..3_600,
        prop::option::of(1u32..1_000),
        prop::sample::select(vec!["us-east-1", "eu-west-1", "ap-northeast-1", "ap-northeast-2"]),
    )
        .prop_map(|(audience, peak_share, outflow, threshold, dwell, wait, region)| Inputs {
            audience: f64::from(audience),
            peak_arrivals_per_second: (f64::from(audience) * peak_share * 0.1).max(1.0).round(),
            outflow_per_minute: f64::from(outflow),
            threshold: threshold.map(f64::from),
            dwell_seconds: f64::from(dwell),
            wait_minutes: wait.map(f64::from),
            region: region.to_owned(),
        })
}

proptest! {
    #[test]
    fn nothing_falls_when_the_audience_grows(sale in any_sale(), more in 0u32..5_000_000) {
        let big = Inputs { audience: sale.audience + f64::from(more), ..sale.clone() };
        never_fall(&planned(&sale), &planned(&big))?;
    }

    #[test]
    fn nothing_falls_when_the_peak_grows(sale in any_sale(), share in 0.0f64..1.0) {
        let room = sale.audience - sale.peak_arrivals_per_second;
        let big = Inputs { peak_arrivals_per_second: (sale.peak_arrivals_per_second + room * share).floor(), ..sale.clone() };
        never_fall(&planned(&sale), &planned(&big))?;
    }
}
