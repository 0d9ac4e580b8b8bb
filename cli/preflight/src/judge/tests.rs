//! The rows of docs/rehearsal.md#preflight, one rule at a time.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::observe::RateRule;

fn names() -> Names {
    Names::new("vwr")
}

fn quota(v: f64) -> Seen<Quota> {
    Seen::Found(Quota { value: v, source: "test".into(), aws_default: false })
}

/// A stack that takes the plan below with room to spare.
fn healthy() -> Observations {
    let n = names();
    Observations {
        lambda_quota: quota(1_000.0),
        lambda_account: Seen::Found(LambdaAccount { concurrent_executions: 1_000, unreserved: Some(900) }),
        functions: crate::names::FUNCTIONS
            .iter()
            .map(|k| FunctionSeen { key: (*k).into(), name: n.function(k), reserved: Seen::Found(None) })
            .collect(),
        api_quota: Seen::NotChecked("Service Quotas: not served".into()),
        api_account: quota(10_000.0),
        stages: n
            .stages()
            .into_iter()
            .map(|s| StageSeen {
                key: s.key.into(),
                api: s.api,
                stage: s.stage,
                optional: s.optional,
                rate: Seen::Found(Some(5_000.0)),
            })
            .collect(),
        table: Seen::Found(TableSeen {
            on_demand: true,
            provisioned_writes: None,
            max_on_demand_writes: None,
            warm_writes: Some(12_000),
        }),
        ttl: Seen::Found(TtlSeen { status: "ENABLED".into(), attribute: Some("expiresAt".into()) }),
        dynamodb_quota: quota(40_000.0),
        kvs: Seen::Found(KvsSeen {
            config: Seen::Found(r#"{"events":["e1"],"failMode":"closed","rules":[]}"#.into()),
            keys: Seen::Found("k1:AAAA,k2:BBBB".into()),
        }),
        alarms: Seen::Found(
            n.expected_alarms().into_iter().map(|name| AlarmSeen { name, state: "OK".into() }).collect(),
        ),
        web_acl: Seen::Found(WebAclSeen {
            rate_rules: vec![RateRule {
                name: "rate-assign".into(),
                limit: 60,
                window_seconds: 60,
                counts_only: false,
            }],
        }),
    }
}

fn plan() -> PlanNeeds {
    PlanNeeds {
        lambda_concurrency: PLANNED_FUNCTIONS.iter().map(|k| ((*k).to_owned(), 10)).collect(),
        lambda_concurrency_total: 50,
        peak_requests_per_second: [("tier1", 4_000), ("tier2", 1_000), ("gate", 50), ("cloudfront", 50_000)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        dynamodb_peak_writes_per_second: 5_000,
    }
}

fn status(r: &Report, check: &str) -> Status {
    r.row(check).unwrap_or_else(|| unreachable!("no row {check}: {r:#?}")).status
}

#[test]
fn a_healthy_stack_passes_with_and_without_a_plan() {
    for p in [None, Some(plan())] {
        let r = judge(&healthy(), &names(), p.as_ref());
        let bad: Vec<_> = r.checks.iter().filter(|c| c.status != Status::Ok).collect();
        assert!(bad.is_empty(), "{bad:#?}");
        assert_eq!(r.exit_code(false), 0);
    }
    let r = judge(&healthy(), &names(), None);
    assert!(r.checks.iter().all(|c| c.needed.is_none()), "no plan, nothing needed");
    let r = judge(&healthy(), &names(), Some(&plan()));
    let tier1 = r.row("API Gateway tier1 stage throttle rate").unwrap();
    assert_eq!((tier1.seen.as_str(), tier1.needed_text().as_str()), ("5,000", "4,000"));
    assert_eq!(tier1.seen_value, Some(5_000.0));
    assert_eq!(r.row("API Gateway account throttle rate (L-8A5B8E43)").unwrap().needed, Some(5_050));
}

#[test]
fn a_stage_below_the_plans_peak_fails_and_one_near_it_warns() {
    let mut p = plan();
    p.peak_requests_per_second.insert("tier1".into(), 5_001);
    p.peak_requests_per_second.insert("tier2".into(), 4_500);
    let r = judge(&healthy(), &names(), Some(&p));
    assert_eq!(status(&r, "API Gateway tier1 stage throttle rate"), Status::Fail);
    assert_eq!(status(&r, "API Gateway tier2 stage throttle rate"), Status::Warn);
    assert_eq!(r.exit_code(false), 1);
    // A throttle of 0 refuses everything, with or without a plan.
    let mut seen = healthy();
    seen.stages[0].rate = Seen::Found(Some(0.0));
    assert_eq!(status(&judge(&seen, &names(), None), "API Gateway tier1 stage throttle rate"), Status::Fail);
}

#[test]
fn a_missing_gate_warns_but_a_missing_tier_stage_fails() {
    let mut seen = healthy();
    for s in &mut seen.stages {
        s.rate = Seen::Missing;
    }
    let r = judge(&seen, &names(), None);
    assert_eq!(status(&r, "API Gateway gate stage throttle rate"), Status::Warn);
    assert_eq!(status(&r, "API Gateway tier1 stage throttle rate"), Status::Fail);
}

#[test]
fn unanswered_checks_are_not_checked_never_ok_and_do_not_block() {
    let why = "GetAccountSettings: HTTP 404, no error code";
    let mut seen = healthy();
    seen.lambda_quota = Seen::NotChecked("GetServiceQuota: NoSuchResourceException".into());
    seen.lambda_account = Seen::NotChecked(why.into());
    seen.api_account = Seen::NotChecked("GetAccount: AccessDeniedException".into());
    seen.kvs = Seen::NotChecked("no --kvs-arn".into());
    let r = judge(&seen, &names(), Some(&plan()));
    let lambda = r.row("Lambda concurrent executions (L-B99A9384)").unwrap();
    assert_eq!(lambda.status, Status::NotChecked);
    assert!(lambda.note.contains("NoSuchResourceException") && lambda.note.contains(why), "{}", lambda.note);
    assert_eq!(lambda.needed, Some(50), "the need is shown even when the figure is not");
    assert_eq!(status(&r, "Lambda unreserved concurrency"), Status::NotChecked);
    assert_eq!(status(&r, "API Gateway account throttle rate (L-8A5B8E43)"), Status::NotChecked);
    assert_eq!(status(&r, "Edge KeyValueStore `keys` entry"), Status::NotChecked);
    assert_eq!(r.exit_code(false), 0);
    assert_eq!(r.summary().not_checked, 5);
    assert_eq!(r.summary().ok + r.summary().not_checked, r.checks.len());
}

#[test]
fn the_quota_falls_back_to_the_account_settings() {
    let mut seen = healthy();
    seen.lambda_quota = Seen::NotChecked("not served".into());
    seen.lambda_account = Seen::Found(LambdaAccount { concurrent_executions: 40, unreserved: Some(40) });
    let r = judge(&seen, &names(), Some(&plan()));
    let row = r.row("Lambda concurrent executions (L-B99A9384)").unwrap();
    assert_eq!((row.status, row.seen.as_str()), (Status::Fail, "40"));
    assert!(row.note.contains("GetAccountSettings"), "{}", row.note);
}

#[test]
fn the_accounts_own_limit_wins_over_the_aws_default_which_proves_nothing_above_the_need() {
    let default = |v: f64| Seen::Found(Quota { value: v, source: "default".into(), aws_default: true });
    // A new account held at 10 while AWS's default says 1,000: the account's figure decides.
    let mut seen = healthy();
    seen.lambda_quota = default(1_000.0);
    seen.lambda_account = Seen::Found(LambdaAccount { concurrent_executions: 10, unreserved: Some(10) });
    let r = judge(&seen, &names(), Some(&plan()));
    let row = r.row("Lambda concurrent executions (L-B99A9384)").unwrap();
    assert_eq!((row.status, row.seen.as_str()), (Status::Fail, "10"), "{}", row.note);
    // Only the default readable: above the need it is a warning, below it a failure.
    seen.lambda_account = Seen::NotChecked("denied".into());
    let r = judge(&seen, &names(), Some(&plan()));
    let row = r.row("Lambda concurrent executions (L-B99A9384)").unwrap();
    assert_eq!(row.status, Status::Warn, "{}", row.note);
    assert!(row.note.contains("only AWS's default"), "{}", row.note);
    seen.lambda_quota = default(20.0);
    assert_eq!(
        status(&judge(&seen, &names(), Some(&plan())), "Lambda concurrent executions (L-B99A9384)"),
        Status::Fail
    );
    // An applied (raised) quota is the account's own: it wins over the account settings.
    seen.lambda_quota = quota(3_000.0);
    seen.lambda_account = Seen::Found(LambdaAccount { concurrent_executions: 1_000, unreserved: Some(900) });
    let r = judge(&seen, &names(), Some(&plan()));
    assert_eq!(r.row("Lambda concurrent executions (L-B99A9384)").unwrap().seen, "3,000");
}

#[test]
fn reserved_concurrency_below_the_plan_or_zero_fails_and_the_unreserved_pool_counts_the_rest() {
    let mut seen = healthy();
    seen.functions[0].reserved = Seen::Found(Some(5)); // tier1-api, plan 10
    seen.functions[2].reserved = Seen::Found(Some(0)); // tier1-advancer
    seen.functions[3].reserved = Seen::Missing; // tier2-api
    seen.lambda_account = Seen::Found(LambdaAccount { concurrent_executions: 1_000, unreserved: Some(25) });
    let r = judge(&seen, &names(), Some(&plan()));
    assert_eq!(status(&r, "Lambda tier1-api reserved concurrency"), Status::Fail);
    assert_eq!(status(&r, "Lambda tier1-advancer reserved concurrency"), Status::Fail);
    let missing = r.row("Lambda tier2-api reserved concurrency").unwrap();
    assert_eq!(missing.status, Status::Fail);
    assert!(missing.note.contains("vwr-tier2-api"), "{}", missing.note);
    // tier2-api (not read), tier2-worker and tier2-authorizer draw on the pool: 30 > 25.
    let pool = r.row("Lambda unreserved concurrency").unwrap();
    assert_eq!((pool.status, pool.needed), (Status::Fail, Some(30)));
    assert_eq!(status(&r, "Lambda tier1-admin reserved concurrency"), Status::Ok);
}

#[test]
fn the_table_missing_fails_and_a_provisioned_one_is_judged_by_its_capacity() {
    let mut seen = healthy();
    seen.table = Seen::Missing;
    seen.ttl = Seen::Missing;
    let r = judge(&seen, &names(), None);
    assert_eq!(status(&r, "DynamoDB table capacity mode"), Status::Fail);
    assert_eq!(status(&r, "DynamoDB TTL"), Status::Fail);
    seen.table = Seen::Found(TableSeen {
        on_demand: false,
        provisioned_writes: Some(5_000),
        max_on_demand_writes: None,
        warm_writes: None,
    });
    seen.ttl = Seen::Found(TtlSeen { status: "DISABLED".into(), attribute: None });
    let r = judge(&seen, &names(), None);
    assert_eq!(status(&r, "DynamoDB table capacity mode"), Status::Warn, "provisioned, no plan");
    assert_eq!(status(&r, "DynamoDB TTL"), Status::Warn);
    let r = judge(&seen, &names(), Some(&plan()));
    assert_eq!(status(&r, "DynamoDB table capacity mode"), Status::Warn, "5,000 WCU for 5,000 writes/s");
    seen.table = Seen::Found(TableSeen {
        on_demand: true,
        provisioned_writes: None,
        max_on_demand_writes: Some(4_000),
        warm_writes: None,
    });
    let r = judge(&seen, &names(), Some(&plan()));
    assert_eq!(status(&r, "DynamoDB table capacity mode"), Status::Fail, "on-demand capped below the peak");
    assert_eq!(status(&r, "DynamoDB table-level write throughput limit"), Status::Ok);
}

#[test]
fn an_on_demand_table_must_take_the_peak_at_once() {
    let on_demand = |warm: Option<i64>| {
        Seen::Found(TableSeen {
            on_demand: true,
            provisioned_writes: None,
            max_on_demand_writes: None,
            warm_writes: warm,
        })
    };
    let check = "DynamoDB table capacity mode";
    let mut seen = healthy();
    // Warm for 3,000 writes/s, the plan's peak 5,000: throttled while it scales.
    seen.table = on_demand(Some(3_000));
    let row = judge(&seen, &names(), Some(&plan())).row(check).cloned().unwrap();
    assert_eq!(row.status, Status::Fail);
    assert!(row.note.contains("--warm-throughput WriteUnitsPerSecond=5000"), "{}", row.note);
    // Not told (an emulator): a new table's 4,000 writes/s, under the peak: a warning.
    seen.table = on_demand(None);
    assert_eq!(status(&judge(&seen, &names(), Some(&plan())), check), Status::Warn);
    assert_eq!(status(&judge(&seen, &names(), None), check), Status::Ok, "no plan, no need");
    seen.table = on_demand(Some(40_000));
    assert_eq!(status(&judge(&seen, &names(), Some(&plan())), check), Status::Ok);
}

#[test]
fn the_edge_store_entries_must_be_there_and_readable() {
    let mut seen = healthy();
    seen.kvs = Seen::Found(KvsSeen { config: Seen::Found("not json".into()), keys: Seen::Missing });
    let r = judge(&seen, &names(), None);
    assert_eq!(status(&r, "Edge KeyValueStore `config` entry"), Status::Fail);
    assert_eq!(status(&r, "Edge KeyValueStore `keys` entry"), Status::Fail);
    let r = judge(&healthy(), &names(), None);
    let keys = r.row("Edge KeyValueStore `keys` entry").unwrap();
    assert_eq!(keys.seen, "2 keys");
    assert!(!keys.seen.contains("AAAA") && !keys.note.contains("AAAA"), "key material is never printed");
    assert_eq!(r.row("Edge KeyValueStore `config` entry").unwrap().seen, "1 gated events, failMode closed");
    // What the edge refuses the entry for, and both forms of events.
    let config = |text: &str| {
        let mut seen = healthy();
        seen.kvs =
            Seen::Found(KvsSeen { config: Seen::Found(text.into()), keys: Seen::Found("k1:abc".into()) });
        judge(&seen, &names(), None).row("Edge KeyValueStore `config` entry").cloned().unwrap()
    };
    assert_eq!(config(r#"{"events":["e1"]}"#).status, Status::Fail, "no rules list");
    assert_eq!(config(r#"{"rules":[],"failMode":"shut"}"#).status, Status::Fail);
    assert_eq!(config(r#"{"rules":[],"events":"e1"}"#).status, Status::Fail);
    let row = config(r#"{"rules":[],"events":{"e1":{"active":true},"e2":{"active":false}}}"#);
    assert_eq!((row.status, row.seen.as_str()), (Status::Ok, "1 gated events, failMode default"));
}

#[test]
fn missing_alarms_fail_and_firing_ones_warn() {
    let mut seen = healthy();
    if let Seen::Found(list) = &mut seen.alarms {
        list.retain(|a| a.name != "vwr-tier1-advancer-stuck");
        list[0].state = "ALARM".into();
    }
    let r = judge(&seen, &names(), None);
    let present = r.row("CloudWatch alarms present").unwrap();
    assert_eq!((present.status, present.seen.as_str()), (Status::Fail, "18 of 19"));
    assert!(present.note.contains("vwr-tier1-advancer-stuck"), "{}", present.note);
    let firing = r.row("CloudWatch alarms in ALARM").unwrap();
    assert_eq!((firing.status, firing.note.as_str()), (Status::Warn, "vwr-tier1-api-5xx"));
}

#[test]
fn a_web_acl_missing_fails_and_one_that_only_counts_warns() {
    let mut seen = healthy();
    seen.web_acl = Seen::Missing;
    assert_eq!(status(&judge(&seen, &names(), None), "WAF web ACL rate-based rules"), Status::Fail);
    seen.web_acl = Seen::Found(WebAclSeen {
        rate_rules: vec![RateRule {
            name: "rate-check".into(),
            limit: 300,
            window_seconds: 60,
            counts_only: true,
        }],
    });
    let r = judge(&seen, &names(), None);
    let row = r.row("WAF web ACL rate-based rules").unwrap();
    assert_eq!((row.status, row.seen.as_str()), (Status::Warn, "rate-check 300/60s"));
    seen.web_acl = Seen::Found(WebAclSeen { rate_rules: vec![] });
    assert_eq!(status(&judge(&seen, &names(), None), "WAF web ACL rate-based rules"), Status::Warn);
}
