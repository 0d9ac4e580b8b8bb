//! Admission notices on a real SQS FIFO API (moto server), SQS unreachable (admission still
//! succeeds, the failure is counted), and Redis going down and coming back (503 with
//! Retry-After, then service resumes).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use axum::body::Body;
use http::{Request, StatusCode, header};
use tower::ServiceExt;
use vwr_core::metrics::MetricsSink;
use vwr_tier2::model::{LineOrder, LineScore, Place, Tier2Settings, Touch};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2::worker::{MAX_NOTICE_ATTEMPTS, Worker};
use vwr_tier2_store::redis::{RedisConfig, RedisStore};
use vwr_tier2_store::sqs::SqsNotices;

fn sqs_client(endpoint: &str) -> aws_sdk_sqs::Client {
    let creds = aws_sdk_sqs::config::Credentials::new("test", "test", None, None, "vwr-tests");
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .endpoint_url(endpoint)
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

fn moto() -> String {
    std::env::var("VWR_TEST_AWS_ENDPOINT").expect("VWR_TEST_AWS_ENDPOINT (tests/run.sh starts moto)")
}

#[tokio::test]
async fn notices_land_in_the_fifo_queue_with_group_and_dedup_ids() {
    let sqs = sqs_client(&moto());
    let name = format!("vwr-notices-{}-{}.fifo", std::process::id(), vwr_core::time::now_millis());
    let q = sqs
        .create_queue()
        .queue_name(&name)
        .attributes(QueueAttributeName::FifoQueue, "true")
        .send()
        .await
        .unwrap();
    let url = q.queue_url().unwrap().to_owned();
    let store = Arc::new(common::redis_db(3).await);
    // Store-level checks hand out no entry token: ann's leave frees her slot at once.
    let settings = Tier2Settings { entry_token_ttl_ms: 0, ..Tier2Settings::default() };
    let svc = Arc::new(common::service(store.clone(), settings));
    let event = common::unique_event("notice");
    store.register(&event, 2, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    for u in ["ann", "ben", "cat"] {
        store.check(&event, u, LineScore::Arrival, &format!("jti-{u}"), svc.settings()).await.unwrap();
    }
    store.leave(&event, "ann").await.unwrap();
    let worker = Worker::new(
        Arc::clone(&svc),
        Arc::new(SqsNotices::new(sqs.clone(), url.clone(), Duration::from_secs(5))),
        MetricsSink::Off,
    );
    let report = worker.tick().await;
    assert_eq!(report.admitted, 1, "cat is admitted by the worker");
    assert_eq!(report.notices_sent, 3, "{report:?}");
    assert_eq!(worker.notice_failures(), 0);
    let mut bodies = Vec::new();
    for _ in 0..5 {
        let out = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap();
        for m in out.messages() {
            let attrs = m.attributes().unwrap();
            assert_eq!(attrs.get(&MessageSystemAttributeName::MessageGroupId).unwrap(), event.as_str());
            let body: serde_json::Value = serde_json::from_str(m.body().unwrap()).unwrap();
            let user = body["userId"].as_str().unwrap().to_owned();
            assert_eq!(
                attrs.get(&MessageSystemAttributeName::MessageDeduplicationId).unwrap(),
                &format!("{user}:{event}:{}", body["jti"].as_str().unwrap())
            );
            assert_eq!(body["action"], "admitted");
            assert_eq!(body["eventId"], event.as_str());
            assert!(body["jti"].as_str().is_some_and(|j| !j.is_empty()));
            assert!(body["admittedAt"].as_u64().is_some());
            assert!(!m.body().unwrap().contains("eyJ"), "a token leaked into a notice");
            bodies.push(user);
            sqs.delete_message()
                .queue_url(&url)
                .receipt_handle(m.receipt_handle().unwrap())
                .send()
                .await
                .unwrap();
        }
        if bodies.len() == 3 {
            break;
        }
    }
    bodies.sort();
    assert_eq!(bodies, ["ann", "ben", "cat"]);
    store.purge(&event).await.unwrap();
}

#[tokio::test]
async fn sqs_down_never_blocks_admission_and_is_counted() {
    let store = Arc::new(common::redis_db(4).await);
    let svc = Arc::new(common::service(store.clone(), Tier2Settings::default()));
    let event = common::unique_event("sqsdown");
    store.register(&event, 5, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    let dead = SqsNotices::new(
        sqs_client("http://127.0.0.1:9"),
        "http://127.0.0.1:9/000000000000/q.fifo",
        Duration::from_millis(500),
    );
    let clock = common::manual_clock();
    let worker = Worker::new(Arc::clone(&svc), Arc::new(dead), MetricsSink::Off)
        .with_clock(Arc::clone(&clock) as Arc<dyn vwr_core::time::Clock>);
    let place = store.check(&event, "u1", LineScore::Arrival, "j1", svc.settings()).await.unwrap();
    assert!(matches!(place, Place::Active { fresh: true, .. }));
    let r = worker.tick().await;
    assert_eq!(r.notices_failed, 1, "{r:?}");
    assert_eq!(worker.notice_failures(), 1);
    // The admission stands.
    assert!(matches!(store.status(&event, "u1", Touch::No, 0).await.unwrap(), Some(Place::Active { .. })));
    // Retried a few times (once per circuit-breaker cool-down), then dropped and counted.
    for _ in 1..MAX_NOTICE_ATTEMPTS {
        assert_eq!(worker.tick().await.notices_skipped, 1, "the circuit is open: no send");
        clock.advance(31);
        worker.tick().await;
    }
    assert_eq!(worker.notice_failures(), u64::from(MAX_NOTICE_ATTEMPTS));
    assert!(store.take_notices(&event, 10, 30_000).await.unwrap().is_empty());
    store.purge(&event).await.unwrap();
}

struct RedisProcess {
    child: Child,
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_redis(port: u16, dir: &std::path::Path) -> RedisProcess {
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"])
        .args(["--appendfsync", "always", "--dir", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    RedisProcess { child }
}

#[tokio::test]
async fn redis_down_is_503_then_service_resumes() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!("vwr-redis-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut redis = start_redis(port, &dir);
    let store =
        RedisStore::connect(&RedisConfig::single(&format!("redis://127.0.0.1:{port}"))).await.unwrap();
    let svc = Arc::new(common::service(Arc::new(store), Tier2Settings::default()));
    let identity = vwr_tier2::identity::Identity {
        dev_user_header: true,
        ..vwr_tier2::identity::Identity::new(None, None, Arc::new(vwr_core::time::SystemClock))
    };
    let router = vwr_tier2::http::public_router(Arc::clone(&svc), identity);
    svc.set_threshold(&vwr_core::EventId::parse("e1").unwrap(), 1, None).await.unwrap();
    let check = |user: &str| {
        Request::post("/api/queue/check/e1").header("x-user-id", user).body(Body::empty()).unwrap()
    };
    assert_eq!(router.clone().oneshot(check("a")).await.unwrap().status(), StatusCode::OK);

    drop(redis);
    for user in ["b", "c"] {
        let res = router.clone().oneshot(check(user)).await.unwrap();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(res.headers().get(header::RETRY_AFTER).is_some());
    }

    redis = start_redis(port, &dir);
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        let res = router.clone().oneshot(check("b")).await.unwrap();
        if res.status() == StatusCode::OK || Instant::now() > deadline {
            break res.status();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(status, StatusCode::OK, "the service did not resume after Redis came back");
    // State survived (append-only file): a is still active, so b waits.
    let snap = svc.store().snapshot(&vwr_core::EventId::parse("e1").unwrap()).await.unwrap();
    assert_eq!((snap.active, snap.waiting), (1, 1));
    drop(redis);
    let _ = std::fs::remove_dir_all(&dir);
}
