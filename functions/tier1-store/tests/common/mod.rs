//! Shared set-up of the tier-1 integration tests: a DynamoDB store on the emulator started by
//! `tests/run.sh` (moto server), one fresh table per test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod spy;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use vwr_core::config::Env;
use vwr_core::time::ManualClock;
use vwr_core::token::Tier1Tokens;
use vwr_core::{EventId, HmacKeyring};
use vwr_tier1::Tier1Clients;
use vwr_tier1::Tier1Service;
use vwr_tier1::config::Tier1Config;
use vwr_tier1::store::PositionStore;
use vwr_tier1_store::dynamo::DynamoStore;

/// The emulator endpoint: `VWR_TEST_AWS_ENDPOINT` (set by tests/run.sh) or `AWS_ENDPOINT_URL`.
pub fn endpoint() -> String {
    std::env::var("VWR_TEST_AWS_ENDPOINT").or_else(|_| std::env::var("AWS_ENDPOINT_URL")).unwrap_or_else(|_| {
        panic!(
            "these tests need a DynamoDB emulator: run tests/run.sh, or start `moto_server -p 5000` and set \
             VWR_TEST_AWS_ENDPOINT=http://127.0.0.1:5000"
        )
    })
}

pub fn ev(s: &str) -> EventId {
    EventId::parse(s).unwrap()
}

static TABLE_SEQ: AtomicU64 = AtomicU64::new(0);

/// A fresh table name, unique within and across test runs.
pub fn unique_table(prefix: &str) -> String {
    let n = TABLE_SEQ.fetch_add(1, Ordering::SeqCst);
    format!("{prefix}-{}-{}-{n}", std::process::id(), vwr_core::time::now_millis())
}

pub async fn sdk_client() -> aws_sdk_dynamodb::Client {
    let creds = aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "vwr-tests");
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .endpoint_url(endpoint())
        .build();
    aws_sdk_dynamodb::Client::from_conf(conf)
}

/// A CloudWatch client on the emulator (the health gate's and the standby's alarms).
pub async fn cloudwatch() -> aws_sdk_cloudwatch::Client {
    let creds = aws_sdk_cloudwatch::config::Credentials::new("test", "test", None, None, "vwr-tests");
    let conf = aws_sdk_cloudwatch::Config::builder()
        .behavior_version(aws_sdk_cloudwatch::config::BehaviorVersion::latest())
        .region(aws_sdk_cloudwatch::config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .endpoint_url(endpoint())
        .build();
    aws_sdk_cloudwatch::Client::from_conf(conf)
}

/// A metric alarm `name` on the emulator, in state OK until set otherwise.
pub async fn metric_alarm(cw: &aws_sdk_cloudwatch::Client, name: &str) {
    use aws_sdk_cloudwatch::types::{ComparisonOperator, Statistic};
    cw.put_metric_alarm()
        .alarm_name(name)
        .namespace("vwr-test")
        .metric_name("Origin5xx")
        .statistic(Statistic::Sum)
        .period(60)
        .evaluation_periods(1)
        .threshold(10.0)
        .comparison_operator(ComparisonOperator::GreaterThanThreshold)
        .send()
        .await
        .unwrap();
}

/// A DynamoDB store on a new table.
pub async fn dynamo_store(prefix: &str) -> DynamoStore {
    let store = DynamoStore::new(sdk_client().await, unique_table(prefix));
    store.ensure_table().await.expect("create table on the emulator");
    store
}

pub fn tokens() -> Tier1Tokens {
    Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge")
}

/// The configuration the Lambdas read from the environment, with the keys of `tokens` and no
/// cache (tests see writes at once).
pub fn config(tokens: &Tier1Tokens) -> Tier1Config {
    let keys = tokens.ring().to_text();
    Tier1Config::from_env(&Env::from_pairs([("VWR_TIER1_KEYS", keys.as_str()), ("VWR_CACHE_TTL_MS", "0")]))
        .unwrap()
}

/// A service over `store` with a manual clock and no cache, assembled as the Lambdas' is.
pub fn service(store: Arc<dyn PositionStore>, clock: Arc<ManualClock>) -> Tier1Service {
    service_with(Tier1Clients::new(store, clock), |_| {})
}

/// A service on `clients` (fakes of the edge list, the health signal) from [`config`] as
/// `edit` changes it.
pub fn service_with(clients: Tier1Clients, edit: impl FnOnce(&mut Tier1Config)) -> Tier1Service {
    let tokens = tokens();
    let mut cfg = config(&tokens);
    edit(&mut cfg);
    vwr_tier1::assemble(&cfg, tokens, clients)
}
