//! The worker and the registration around the admission store: notices never delay
//! admissions (and a failing SQS opens a circuit), no notice is lost when a worker dies,
//! trimmed notices are counted, idle events leave the index and come back, an unregistered
//! event stays gone, and a Redis data loss never raises a threshold. Real Redis (and moto for
//! the DynamoDB copy of registrations); the in-memory store where time must be virtual.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;
use vwr_core::EventId;
use vwr_core::metrics::MetricsSink;
use vwr_core::tiers::{ActiveEvents, LookupError};
use vwr_core::time::Clock;
use vwr_tier2::Tier2Clients;
use vwr_tier2::identity::{Caller, Source};
use vwr_tier2::model::{LineOrder, LineScore, PendingNotice, RegisterMode, Tier2Settings};
use vwr_tier2::notices::NoticeSink;
use vwr_tier2::registry::Registry;
use vwr_tier2::store::AdmissionStore;
use vwr_tier2::worker::{NoticePolicy, Worker};
use vwr_tier2_store::registry::DynamoRegistry;

/// Store-level checks hand out no entry token.
fn settings() -> Tier2Settings {
    Tier2Settings { entry_token_ttl_ms: 0, ..Tier2Settings::default() }
}

/// A sink that blocks every send until released, and says when a send started.
#[derive(Default)]
struct Blocking {
    entered: Notify,
    release: Notify,
}

#[async_trait]
impl NoticeSink for Blocking {
    async fn send(&self, _: &EventId, _: &[PendingNotice]) -> Vec<usize> {
        self.entered.notify_one();
        self.release.notified().await;
        Vec::new()
    }
    fn name(&self) -> &'static str {
        "blocking"
    }
}

/// A sink whose every send fails, counting the attempts.
#[derive(Default)]
struct Failing(AtomicU64);

#[async_trait]
impl NoticeSink for Failing {
    async fn send(&self, _: &EventId, batch: &[PendingNotice]) -> Vec<usize> {
        self.0.fetch_add(1, Ordering::SeqCst);
        (0..batch.len()).collect()
    }
    fn name(&self) -> &'static str {
        "failing"
    }
}

/// A sink that never answers.
struct Hanging;

#[async_trait]
impl NoticeSink for Hanging {
    async fn send(&self, _: &EventId, _: &[PendingNotice]) -> Vec<usize> {
        std::future::pending::<()>().await;
        Vec::new()
    }
    fn name(&self) -> &'static str {
        "hanging"
    }
}

/// Tier 1 gates every event.
struct Gated;

#[async_trait]
impl ActiveEvents for Gated {
    async fn is_active(&self, _: &EventId) -> Result<bool, LookupError> {
        Ok(true)
    }
}

fn caller(user: &str, pos: u64) -> Caller {
    Caller { user: user.into(), tier1_position: Some(pos), source: Source::Tier1Token, proof: None }
}

/// Review finding 9: the worker sent an event's notices inline with admitting (up to 10 × 2 s
/// per event), so a slow SQS held back the admissions of every later event. Now every event
/// is admitted before the first notice is sent.
#[tokio::test]
async fn notices_never_delay_admissions() {
    let store = Arc::new(common::redis_db(6).await);
    let svc = Arc::new(common::service(store.clone(), settings()));
    let events = [common::unique_event("slowsqs-a"), common::unique_event("slowsqs-b")];
    for e in &events {
        store.register(e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
        store.check(e, "first", LineScore::Arrival, "j1", &settings()).await.unwrap();
        store.check(e, "second", LineScore::Arrival, "j2", &settings()).await.unwrap();
        store.leave(e, "first").await.unwrap();
    }
    let sink = Arc::new(Blocking::default());
    let worker = Arc::new(Worker::new(Arc::clone(&svc), sink.clone(), MetricsSink::Off));
    let tick = tokio::spawn({
        let worker = Arc::clone(&worker);
        async move { worker.tick().await }
    });
    sink.entered.notified().await;
    for e in &events {
        let s = store.snapshot(e).await.unwrap();
        assert_eq!((s.active, s.waiting), (1, 0), "{e} was not admitted before notices were sent");
    }
    for _ in 0..8 {
        sink.release.notify_one();
    }
    let report = tick.await.unwrap();
    assert_eq!(report.admitted, 2);
    for e in &events {
        store.purge(e).await.unwrap();
    }
}

/// Review finding 9: after a failed send, sends stop for a cool-down (the circuit is open);
/// admissions go on.
#[tokio::test]
async fn a_failing_sink_opens_the_circuit() {
    let clock = common::manual_clock();
    let store = Arc::new(common::memory(Arc::clone(&clock) as Arc<dyn Clock>));
    let svc = Arc::new(common::service(store.clone(), settings()));
    let e = common::unique_event("breaker");
    store.register(&e, 10, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    let sink = Arc::new(Failing::default());
    let worker = Worker::new(Arc::clone(&svc), sink.clone(), MetricsSink::Off)
        .with_clock(Arc::clone(&clock) as Arc<dyn Clock>)
        .with_notice_policy(NoticePolicy {
            budget: Duration::from_secs(5),
            cooldown: Duration::from_secs(30),
        });
    store.check(&e, "u1", LineScore::Arrival, "j1", &settings()).await.unwrap();
    assert_eq!(worker.tick().await.notices_failed, 1);
    assert_eq!(sink.0.load(Ordering::SeqCst), 1);
    store.check(&e, "u2", LineScore::Arrival, "j2", &settings()).await.unwrap();
    let r = worker.tick().await;
    assert_eq!((r.notices_skipped, sink.0.load(Ordering::SeqCst)), (1, 1), "the circuit is open");
    assert_eq!(store.snapshot(&e).await.unwrap().active, 2, "admissions go on");
    clock.advance(31);
    worker.tick().await;
    assert_eq!(sink.0.load(Ordering::SeqCst), 2, "half-open: one attempt after the cool-down");
}

/// Review finding 9: a sink that never answers costs a tick at most the notice budget; the
/// notice stays pending for a later tick.
#[tokio::test(start_paused = true)]
async fn the_notice_budget_bounds_a_hanging_sink() {
    let clock = common::manual_clock();
    let store = Arc::new(common::memory(Arc::clone(&clock) as Arc<dyn Clock>));
    let svc = Arc::new(common::service(store.clone(), settings()));
    let e = common::unique_event("hang");
    store.register(&e, 10, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    store.check(&e, "u1", LineScore::Arrival, "j1", &settings()).await.unwrap();
    let worker = Worker::new(Arc::clone(&svc), Arc::new(Hanging), MetricsSink::Off)
        .with_clock(Arc::clone(&clock) as Arc<dyn Clock>)
        .with_notice_policy(NoticePolicy {
            budget: Duration::from_secs(5),
            cooldown: Duration::from_secs(30),
        });
    let start = tokio::time::Instant::now();
    let r = worker.tick().await;
    assert!(start.elapsed() >= Duration::from_secs(5) && start.elapsed() < Duration::from_secs(6));
    assert_eq!(r.notices_failed, 1);
    assert_eq!(store.snapshot(&e).await.unwrap().pending_notices, 1, "kept for a later try");
}

/// Review finding 15: notices were popped before the send, so a worker dying mid-send lost
/// them. Now they are leased: a notice not acknowledged comes back when its lease ends.
#[tokio::test]
async fn a_crashed_worker_loses_no_notice() {
    let store = common::redis().await;
    let e = common::unique_event("lease");
    store.register(&e, 5, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    store.check(&e, "u1", LineScore::Arrival, "j1", &settings()).await.unwrap();
    let taken = store.take_notices(&e, 10, 30_000).await.unwrap();
    assert_eq!(taken.len(), 1);
    // The worker dies here: no acknowledgement. Another worker sees nothing while leased…
    assert!(store.take_notices(&e, 10, 30_000).await.unwrap().is_empty());
    assert_eq!(store.snapshot(&e).await.unwrap().pending_notices, 1);
    // …and the notice once the lease ran out.
    let local = store.clone();
    local.set_time_offset_ms(30_001);
    let again = local.take_notices(&e, 10, 30_000).await.unwrap();
    local.set_time_offset_ms(0);
    assert_eq!(again.iter().map(|n| n.jti.as_str()).collect::<Vec<_>>(), ["j1"]);
    store.ack_notices(&e, &again, &[]).await.unwrap();
    assert_eq!(store.snapshot(&e).await.unwrap().pending_notices, 0);
    store.purge(&e).await.unwrap();
}

/// Review finding 15: notices beyond the cap were trimmed silently; they are counted.
#[tokio::test]
async fn trimmed_notices_are_counted() {
    let store = Arc::new(common::redis_db(7).await);
    let s = Tier2Settings { notice_cap: 2, ..settings() };
    let svc = Arc::new(common::service(store.clone(), s));
    let e = common::unique_event("trim");
    store.register(&e, 5, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    for u in ["a", "b", "c"] {
        store.check(&e, u, LineScore::Arrival, u, &s).await.unwrap();
    }
    let worker = Worker::new(svc, Arc::new(vwr_tier2::notices::MemoryNotices::default()), MetricsSink::Off);
    let r = worker.tick().await;
    assert_eq!((r.notices_dropped, r.notices_sent), (1, 2), "{r:?}");
    store.purge(&e).await.unwrap();
}

/// Review finding 13: the index only grew, so the worker scripted every past event every
/// tick. An idle event leaves it, and the next check brings it back.
#[tokio::test]
async fn idle_events_leave_the_index_and_come_back() {
    let store = Arc::new(common::redis_db(8).await);
    let s = Tier2Settings { retire_idle_ms: 60_000, ..settings() };
    let svc = Arc::new(common::service(store.clone(), s));
    let worker = Worker::new(
        Arc::clone(&svc),
        Arc::new(vwr_tier2::notices::MemoryNotices::default()),
        MetricsSink::Off,
    );
    let e = common::unique_event("idle");
    store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    assert_eq!(worker.tick().await.retired, 0, "recently registered: kept");
    assert!(store.events().await.unwrap().contains(&e));
    store.set_time_offset_ms(61_000);
    assert_eq!(worker.tick().await.retired, 1);
    assert!(!store.events().await.unwrap().contains(&e), "retired");
    // A visitor arrives: back in the index, and the worker serves it again.
    store.check(&e, "a", LineScore::Arrival, "ja", &s).await.unwrap();
    store.check(&e, "b", LineScore::Arrival, "jb", &s).await.unwrap();
    assert!(store.events().await.unwrap().contains(&e), "re-indexed by the check");
    store.leave(&e, "a").await.unwrap();
    assert_eq!(worker.tick().await.admitted, 1);
    store.set_time_offset_ms(0);
    store.purge(&e).await.unwrap();
}

/// Review finding 14: unregister was not atomic, and an event active in tier 1 came straight
/// back through implicit registration. It stays gone until an admin registers it.
#[tokio::test]
async fn unregister_is_final_until_an_admin_registers() {
    let store = Arc::new(common::redis().await);
    let svc = common::service_with(
        Tier2Clients { tier1: Arc::new(Gated), ..Tier2Clients::new(store.clone()) },
        settings(),
    );
    let e = common::unique_event("unreg");
    assert_eq!(svc.check(&e, &caller("u1", 1)).await.unwrap().status, "active", "implicit registration");
    assert!(svc.unregister(&e).await.unwrap());
    let err = svc.check(&e, &caller("u2", 2)).await.unwrap_err();
    assert_eq!(err, vwr_tier2::service::Tier2Error::EventNotFound, "resurrected: {err:?}");
    assert!(store.snapshot(&e).await.unwrap().meta.is_none());
    svc.set_threshold(&e, 3, None).await.unwrap();
    assert_eq!(svc.check(&e, &caller("u2", 2)).await.unwrap().status, "active");
    store.purge(&e).await.unwrap();
}

async fn moto_registry() -> DynamoRegistry {
    moto_table().await.2
}

async fn moto_table() -> (aws_sdk_dynamodb::Client, String, DynamoRegistry) {
    let endpoint =
        std::env::var("VWR_TEST_AWS_ENDPOINT").expect("VWR_TEST_AWS_ENDPOINT (tests/run.sh starts moto)");
    let creds = aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "vwr-tests");
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .endpoint_url(endpoint)
        .build();
    let client = aws_sdk_dynamodb::Client::from_conf(conf);
    let table = format!("vwr-t2reg-{}-{}", std::process::id(), vwr_core::time::now_millis());
    vwr_tier1_store::dynamo::DynamoStore::new(client.clone(), table.clone()).ensure_table().await.unwrap();
    let registry = DynamoRegistry::new(client.clone(), table.clone());
    (client, table, registry)
}

/// Review finding F12: the registration shared the tier-1 event's partition (`EVT#{eventId}`),
/// so the IAM grant that let the tier-2 API write it let it write the tier-1 event item too.
/// It has a partition of its own now (the grant names `EVT#*#T2`); one written before under the
/// old key is still read, and carried over (line order and all) by the next write.
#[tokio::test]
async fn registrations_have_a_partition_of_their_own() {
    use aws_sdk_dynamodb::types::AttributeValue as A;
    let (client, table, registry) = moto_table().await;
    let item = |pk: String| {
        let (client, table) = (client.clone(), table.clone());
        async move {
            client
                .get_item()
                .table_name(table)
                .key("pk", A::S(pk))
                .key("sk", A::S("T2".into()))
                .send()
                .await
                .unwrap()
                .item()
                .cloned()
        }
    };
    let e = common::unique_event("reg");
    registry.set(&e, 5, LineOrder::Tier1).await.unwrap();
    assert!(item(format!("EVT#{e}#T2")).await.is_some(), "not in its own partition");
    assert!(item(format!("EVT#{e}")).await.is_none(), "written into the tier-1 event's partition");
    // Written before the move: read, then moved by the next write with its line order.
    let old = common::unique_event("reg-old");
    client
        .put_item()
        .table_name(&table)
        .item("pk", A::S(format!("EVT#{old}")))
        .item("sk", A::S("T2".into()))
        .item("threshold", A::N("7".into()))
        .item("lineOrder", A::S("tier1".into()))
        .item("removed", A::Bool(false))
        .send()
        .await
        .unwrap();
    let got = registry.get(&old).await.unwrap().unwrap();
    assert_eq!((got.threshold, got.order, got.removed), (7, LineOrder::Tier1, false));
    let set = registry.set(&old, 9, LineOrder::Arrival).await.unwrap();
    assert_eq!((set.threshold, set.order), (9, LineOrder::Tier1), "the line order was lost in the move");
    assert!(item(format!("EVT#{old}#T2")).await.is_some());
    assert_eq!(registry.get(&old).await.unwrap().map(|r| r.threshold), Some(9));
}

/// Review finding 8: after Redis lost its data, an event active in tier 1 was re-created at
/// the default threshold (1000). Threshold 2, FLUSHDB, four checks: still at most 2 active,
/// because the registration is restored from its durable copy (DynamoDB on moto).
#[tokio::test]
async fn redis_data_loss_keeps_the_threshold() {
    let store = Arc::new(common::redis_db(9).await);
    let registry: Arc<dyn Registry> = Arc::new(moto_registry().await);
    let clients = Tier2Clients {
        tier1: Arc::new(Gated),
        registry: Arc::clone(&registry),
        ..Tier2Clients::new(store.clone())
    };
    let svc = common::service_with(clients, settings());
    let e = common::unique_event("flush");
    svc.set_threshold(&e, 2, None).await.unwrap();
    for i in 1..=2 {
        svc.check(&e, &caller(&format!("before{i}"), i)).await.unwrap();
    }
    let client = redis::Client::open(format!("{}/9", common::redis_url().trim_end_matches('/'))).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHDB").query_async(&mut conn).await.unwrap();
    let mut statuses = Vec::new();
    for i in 3..=6 {
        statuses.push(svc.check(&e, &caller(&format!("after{i}"), i)).await.unwrap().status);
    }
    assert_eq!(statuses, ["active", "active", "queued", "queued"]);
    let snap = store.snapshot(&e).await.unwrap();
    assert_eq!((snap.active, snap.meta.map(|m| m.threshold)), (2, Some(2)));
    // An admin change racing an implicit registration keeps the admin's threshold.
    svc.set_threshold(&e, 4, None).await.unwrap();
    assert_eq!(registry.get(&e).await.unwrap().map(|r| r.threshold), Some(4));
    store.purge(&e).await.unwrap();
}
