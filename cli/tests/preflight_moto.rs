//! `vwr preflight` (the adapter `vwr_cli::preflight::aws` and the `vwr-preflight` rows) against
//! moto (docs/rehearsal.md#preflight): a small stack made here — the
//! tier-1 table with TTL, the six functions with reserved concurrency, the tier APIs' HTTP stages
//! and the gate's REST stage with throttles, the observability alarms, the edge web ACL — is
//! judged against a plan. What moto answers comes out ok / warn / fail as the rules say; what
//! it does not serve (Service Quotas, Lambda's GetAccountSettings, the KeyValueStore) comes out
//! `not checked` with its reason, never ok. Each test makes its own names; nothing global is reset.
//!
//! Skipped (with a message) unless `VWR_TEST_AWS_ENDPOINT` names the emulator.
#![cfg(feature = "preflight")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

use std::sync::atomic::{AtomicU64, Ordering};

use vwr_cli::preflight::preflight;
use vwr_preflight::{FUNCTIONS, Names, PLANNED_FUNCTIONS, PlanNeeds, Report, Status};

fn endpoint() -> Option<String> {
    let ep = std::env::var("VWR_TEST_AWS_ENDPOINT").ok().filter(|e| !e.is_empty());
    if ep.is_none() {
        eprintln!(
            "skipped: set VWR_TEST_AWS_ENDPOINT=http://127.0.0.1:PORT (a moto server) to run the preflight tests"
        );
    }
    ep
}

async fn sdk(endpoint: &str) -> aws_config::SdkConfig {
    let creds = aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "vwr-tests");
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .load()
        .await
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A name prefix of this test alone (Terraform's `name`: a-z 0-9 -).
fn unique_prefix() -> String {
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    format!("pf{}-{}-{}", std::process::id(), millis % 100_000_000, SEQ.fetch_add(1, Ordering::SeqCst))
}

/// What to deploy.
struct Stack {
    table: bool,
    /// Functions not created.
    skip_functions: &'static [&'static str],
    reserved: &'static [(&'static str, i32)],
    tier1_rate: f64,
    tier2_rate: f64,
    /// The gate's REST API and its stage's rate, if any.
    gate_rate: Option<f64>,
    alarms: bool,
    /// An alarm (by suffix) set to ALARM.
    firing: Option<&'static str>,
    waf: bool,
}

async fn deploy(sdk: &aws_config::SdkConfig, names: &Names, stack: &Stack) {
    if stack.table {
        table(sdk, &names.table).await;
    }
    functions(sdk, names, stack).await;
    let http = aws_sdk_apigatewayv2::Client::new(sdk);
    for (api, rate) in [("tier1", stack.tier1_rate), ("tier2", stack.tier2_rate)] {
        let id = http
            .create_api()
            .name(format!("{}-{api}", names.prefix))
            .protocol_type(aws_sdk_apigatewayv2::types::ProtocolType::Http)
            .send()
            .await
            .unwrap()
            .api_id
            .unwrap();
        let settings = aws_sdk_apigatewayv2::types::RouteSettings::builder()
            .throttling_rate_limit(rate)
            .throttling_burst_limit(2_000)
            .build();
        http.create_stage()
            .api_id(id)
            .stage_name("$default")
            .default_route_settings(settings)
            .send()
            .await
            .unwrap();
    }
    if let Some(rate) = stack.gate_rate {
        gate(sdk, &format!("{}-protected", names.prefix), rate).await;
    }
    if stack.alarms {
        alarms(sdk, names, stack.firing).await;
    }
    if stack.waf {
        web_acl(sdk, &names.web_acl).await;
    }
}

async fn table(sdk: &aws_config::SdkConfig, name: &str) {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
        TimeToLiveSpecification,
    };
    let ddb = aws_sdk_dynamodb::Client::new(sdk);
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    let key = |n: &str, t| KeySchemaElement::builder().attribute_name(n).key_type(t).build().unwrap();
    ddb.create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("pk"))
        .attribute_definitions(attr("sk"))
        .key_schema(key("pk", KeyType::Hash))
        .key_schema(key("sk", KeyType::Range))
        .send()
        .await
        .unwrap();
    let ttl = TimeToLiveSpecification::builder().attribute_name("expiresAt").enabled(true).build().unwrap();
    ddb.update_time_to_live().table_name(name).time_to_live_specification(ttl).send().await.unwrap();
}

/// The functions (moto wants an existing role; it never runs the code, so any bytes do).
async fn functions(sdk: &aws_config::SdkConfig, names: &Names, stack: &Stack) {
    let iam = aws_sdk_iam::Client::new(sdk);
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let role = iam
        .create_role()
        .role_name(format!("{}-role", names.prefix))
        .assume_role_policy_document(trust)
        .send()
        .await
        .unwrap()
        .role
        .unwrap()
        .arn;
    let lambda = aws_sdk_lambda::Client::new(sdk);
    for key in FUNCTIONS.iter().filter(|k| !stack.skip_functions.contains(k)) {
        let code = aws_sdk_lambda::types::FunctionCode::builder()
            .zip_file(aws_sdk_lambda::primitives::Blob::new(b"not run".to_vec()))
            .build();
        lambda
            .create_function()
            .function_name(names.function(key))
            .runtime(aws_sdk_lambda::types::Runtime::Providedal2023)
            .role(&role)
            .handler("bootstrap")
            .code(code)
            .send()
            .await
            .unwrap();
    }
    for (key, n) in stack.reserved {
        lambda
            .put_function_concurrency()
            .function_name(names.function(key))
            .reserved_concurrent_executions(*n)
            .send()
            .await
            .unwrap();
    }
}

/// The gate: a REST API, one mock method, a `live` stage throttled on `*/*` (modules/tier2/gate.tf).
async fn gate(sdk: &aws_config::SdkConfig, name: &str, rate: f64) {
    use aws_sdk_apigateway::types::{IntegrationType, Op, PatchOperation};
    let rest = aws_sdk_apigateway::Client::new(sdk);
    let id = rest.create_rest_api().name(name).send().await.unwrap().id.unwrap();
    let root =
        rest.get_resources().rest_api_id(&id).send().await.unwrap().items.unwrap()[0].id.clone().unwrap();
    rest.put_method()
        .rest_api_id(&id)
        .resource_id(&root)
        .http_method("GET")
        .authorization_type("NONE")
        .send()
        .await
        .unwrap();
    rest.put_integration()
        .rest_api_id(&id)
        .resource_id(&root)
        .http_method("GET")
        .r#type(IntegrationType::Mock)
        .send()
        .await
        .unwrap();
    let deployment = rest.create_deployment().rest_api_id(&id).send().await.unwrap().id.unwrap();
    rest.create_stage().rest_api_id(&id).stage_name("live").deployment_id(deployment).send().await.unwrap();
    let patch =
        |path: &str, value: String| PatchOperation::builder().op(Op::Replace).path(path).value(value).build();
    rest.update_stage()
        .rest_api_id(&id)
        .stage_name("live")
        .patch_operations(patch("/*/*/throttling/rateLimit", rate.to_string()))
        .patch_operations(patch("/*/*/throttling/burstLimit", "1000".into()))
        .send()
        .await
        .unwrap();
}

async fn alarms(sdk: &aws_config::SdkConfig, names: &Names, firing: Option<&str>) {
    use aws_sdk_cloudwatch::types::{ComparisonOperator, StateValue, Statistic};
    let cw = aws_sdk_cloudwatch::Client::new(sdk);
    for name in names.expected_alarms() {
        cw.put_metric_alarm()
            .alarm_name(&name)
            .namespace("vwr-test")
            .metric_name("Errors")
            .statistic(Statistic::Sum)
            .period(60)
            .evaluation_periods(1)
            .threshold(0.0)
            .comparison_operator(ComparisonOperator::GreaterThanThreshold)
            .send()
            .await
            .unwrap();
        let state =
            if firing.is_some_and(|f| name.ends_with(f)) { StateValue::Alarm } else { StateValue::Ok };
        cw.set_alarm_state().alarm_name(&name).state_value(state).state_reason("test").send().await.unwrap();
    }
}

/// The edge web ACL with the rate rule modules/edge/waf.tf makes for assign (a bare rate-based
/// statement: enough for what preflight reads).
async fn web_acl(sdk: &aws_config::SdkConfig, name: &str) {
    use aws_sdk_wafv2::types::{
        AllowAction, BlockAction, DefaultAction, RateBasedStatement, RateBasedStatementAggregateKeyType,
        Rule, RuleAction, Scope, Statement, VisibilityConfig,
    };
    let waf = aws_sdk_wafv2::Client::new(sdk);
    let visibility = |m: &str| {
        VisibilityConfig::builder()
            .sampled_requests_enabled(true)
            .cloud_watch_metrics_enabled(true)
            .metric_name(m)
            .build()
            .unwrap()
    };
    let rate = RateBasedStatement::builder()
        .limit(60)
        .aggregate_key_type(RateBasedStatementAggregateKeyType::Ip)
        .evaluation_window_sec(60)
        .build()
        .unwrap();
    let rule = Rule::builder()
        .name("rate-assign")
        .priority(10)
        .statement(Statement::builder().rate_based_statement(rate).build())
        .action(RuleAction::builder().block(BlockAction::builder().build()).build())
        .visibility_config(visibility("rate-assign"))
        .build()
        .unwrap();
    waf.create_web_acl()
        .name(name)
        .scope(Scope::Cloudfront)
        .default_action(DefaultAction::builder().allow(AllowAction::builder().build()).build())
        .visibility_config(visibility(name))
        .rules(rule)
        .send()
        .await
        .unwrap();
}

/// A plan like `vwr plan`'s: the scheduled functions need one execution each.
fn plan() -> PlanNeeds {
    let need = |k: &str| if k == "tier1-advancer" || k == "tier2-worker" { 1 } else { 10 };
    PlanNeeds {
        lambda_concurrency: PLANNED_FUNCTIONS.iter().map(|k| ((*k).to_owned(), need(k))).collect(),
        lambda_concurrency_total: 50,
        peak_requests_per_second: [("tier1", 4_000), ("tier2", 2_000), ("gate", 50), ("cloudfront", 50_000)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        dynamodb_peak_writes_per_second: 3_000,
    }
}

fn row<'a>(r: &'a Report, check: &str) -> &'a vwr_preflight::Row {
    r.row(check).unwrap_or_else(|| panic!("no row {check}:\n{}", vwr_preflight::render_table(r)))
}

fn assert_status(r: &Report, check: &str, want: Status) {
    let got = row(r, check);
    assert_eq!(got.status, want, "{check}: {got:?}\n{}", vwr_preflight::render_table(r));
}

/// The checks moto does not serve, in both tests: not checked, with the endpoint's reason.
fn assert_unanswered_are_not_checked(r: &Report) {
    for check in [
        "Lambda concurrent executions (L-B99A9384)",
        "Lambda unreserved concurrency",
        "DynamoDB table-level write throughput limit",
        "Edge KeyValueStore `config` entry",
        "Edge KeyValueStore `keys` entry",
    ] {
        assert_status(r, check, Status::NotChecked);
        assert!(!row(r, check).note.is_empty(), "{check}: a not-checked row says why");
    }
}

#[tokio::test]
async fn a_stack_that_takes_the_plan_passes_and_what_moto_cannot_answer_is_not_checked() {
    let Some(ep) = endpoint() else { return };
    let sdk = sdk(&ep).await;
    let mut names = Names::new(&unique_prefix());
    // moto serves no KeyValueStore: any ARN gives the call's reason.
    names.kvs_arn =
        Some("arn:aws:cloudfront::123456789012:key-value-store/00000000-0000-0000-0000-000000000000".into());
    let stack = Stack {
        table: true,
        skip_functions: &[],
        reserved: &[("tier1-api", 40), ("tier1-admin", 5), ("tier1-advancer", 2), ("tier2-worker", 2)],
        tier1_rate: 10_000.0,
        tier2_rate: 5_000.0,
        gate_rate: Some(5_000.0),
        alarms: true,
        firing: Some("-tier2-notice-dlq"),
        waf: true,
    };
    deploy(&sdk, &names, &stack).await;
    let r = preflight(&sdk, &names, Some(&plan())).await;
    eprintln!("{}", vwr_preflight::render_table(&r));

    assert_unanswered_are_not_checked(&r);
    let tier1 = row(&r, "Lambda tier1-api reserved concurrency");
    assert_eq!((tier1.status, tier1.seen.as_str(), tier1.needed), (Status::Ok, "40", Some(10)));
    assert_status(&r, "Lambda tier2-api reserved concurrency", Status::Ok);
    assert_eq!(row(&r, "Lambda tier2-api reserved concurrency").seen, "unreserved");
    let advancer = row(&r, "Lambda tier1-advancer reserved concurrency");
    assert_eq!((advancer.status, advancer.seen.as_str(), advancer.needed), (Status::Ok, "2", Some(1)));
    // API Gateway's GetAccount answers for the quota moto's Service Quotas does not serve.
    let account = row(&r, "API Gateway account throttle rate (L-8A5B8E43)");
    assert_eq!(
        (account.status, account.needed, account.seen_value),
        (Status::Ok, Some(6_050), Some(10_000.0))
    );
    assert!(account.note.contains("GetAccount"), "{account:?}");
    for stage in ["tier1", "tier2", "gate"] {
        assert_status(&r, &format!("API Gateway {stage} stage throttle rate"), Status::Ok);
    }
    assert_eq!(row(&r, "API Gateway gate stage throttle rate").seen, "5,000");
    assert_status(&r, "DynamoDB table capacity mode", Status::Ok);
    // The table takes 4,000 writes/s at once (its warm throughput, as moto tells it): a peak
    // above it fails, with the command that pre-warms the table.
    let hot = PlanNeeds { dynamodb_peak_writes_per_second: 5_000, ..plan() };
    let table = preflight(&sdk, &names, Some(&hot)).await;
    let warm = row(&table, "DynamoDB table capacity mode");
    assert_eq!((warm.status, warm.seen.as_str()), (Status::Fail, "on-demand, warm 4,000"), "{warm:?}");
    assert!(warm.note.contains("--warm-throughput WriteUnitsPerSecond=5000"), "{warm:?}");
    assert_eq!(row(&r, "DynamoDB table capacity mode").seen, "on-demand, warm 4,000");
    assert_status(&r, "DynamoDB TTL", Status::Ok);
    assert_status(&r, "CloudWatch alarms present", Status::Ok);
    let firing = row(&r, "CloudWatch alarms in ALARM");
    assert_eq!(firing.status, Status::Warn);
    assert!(firing.note.ends_with("-tier2-notice-dlq"), "{firing:?}");
    let waf = row(&r, "WAF web ACL rate-based rules");
    assert_eq!((waf.status, waf.seen.as_str()), (Status::Ok, "rate-assign 60/60s"));
    // Nothing else: every other row is ok.
    let rest: Vec<_> = r
        .checks
        .iter()
        .filter(|c| {
            c.status != Status::Ok
                && c.status != Status::NotChecked
                && c.check != "CloudWatch alarms in ALARM"
        })
        .collect();
    assert!(rest.is_empty(), "{rest:#?}");
    assert_eq!(r.summary().not_checked, 5);
    assert_eq!(r.exit_code(false), 0, "not checked and warn rows do not block");
}

#[tokio::test]
async fn shortfalls_and_missing_resources_fail() {
    let Some(ep) = endpoint() else { return };
    let sdk = sdk(&ep).await;
    let names = Names::new(&unique_prefix());
    let stack = Stack {
        table: false,
        skip_functions: &["tier2-authorizer"],
        reserved: &[("tier1-api", 5)],
        tier1_rate: 3_500.0,
        tier2_rate: 2_200.0,
        gate_rate: None,
        alarms: false,
        firing: None,
        waf: false,
    };
    deploy(&sdk, &names, &stack).await;
    let r = preflight(&sdk, &names, Some(&plan())).await;
    eprintln!("{}", vwr_preflight::render_table(&r));

    assert_unanswered_are_not_checked(&r);
    assert_status(&r, "DynamoDB table capacity mode", Status::Fail);
    assert!(row(&r, "DynamoDB table capacity mode").note.contains(&names.table));
    assert_status(&r, "DynamoDB TTL", Status::Fail);
    assert_status(&r, "Lambda tier1-api reserved concurrency", Status::Fail);
    let authorizer = row(&r, "Lambda tier2-authorizer reserved concurrency");
    assert_eq!(authorizer.status, Status::Fail);
    assert!(authorizer.note.contains("not found"), "{authorizer:?}");
    assert_status(&r, "API Gateway tier1 stage throttle rate", Status::Fail);
    assert_status(&r, "API Gateway tier2 stage throttle rate", Status::Warn);
    assert_status(&r, "API Gateway gate stage throttle rate", Status::Warn);
    assert_status(&r, "CloudWatch alarms present", Status::Fail);
    assert_eq!(row(&r, "CloudWatch alarms present").seen, "0 of 19");
    assert_status(&r, "WAF web ACL rate-based rules", Status::Fail);
    assert_eq!(r.exit_code(false), 1);
    // Without a plan the existence checks still fail; nothing is "needed".
    let r = preflight(&sdk, &names, None).await;
    assert_status(&r, "DynamoDB table capacity mode", Status::Fail);
    assert_status(&r, "Lambda tier1-api reserved concurrency", Status::Ok);
    assert!(r.checks.iter().all(|c| c.needed.is_none()));
    assert_eq!(r.exit_code(false), 1);
}
