//! Tier 2's part of the report after the sale (docs/operate.md#the-report-after-the-sale): the
//! minutes add up when instances add to one at once, on the in-memory model, Redis and a Redis
//! Cluster (the key kept 90 days); random additions read back the same from Redis as from the
//! model; and a sale's admissions (at once and by the worker), checks that found the event
//! full and the line the worker saw come back from `report`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use vwr_core::metrics::MetricsSink;
use vwr_core::time::Clock;
use vwr_tier2::identity::{Caller, Source};
use vwr_tier2::model::{LineOrder, RegisterMode, Tier2Settings};
use vwr_tier2::report::Tier2Minute;
use vwr_tier2::store::AdmissionStore;
use vwr_tier2::worker::Worker;

async fn stores() -> Vec<(&'static str, Arc<dyn AdmissionStore>)> {
    vec![
        ("memory", Arc::new(common::memory(common::manual_clock()))),
        ("redis", Arc::new(common::redis().await)),
        ("cluster", Arc::new(common::cluster().await)),
    ]
}

#[tokio::test]
async fn instances_adding_to_one_minute_at_once_lose_nothing() {
    for (name, store) in stores().await {
        let e = common::unique_event("rep-race");
        let mut tasks = Vec::new();
        for i in 0..24u64 {
            let store = Arc::clone(&store);
            let e = e.clone();
            tasks.push(tokio::spawn(async move {
                let c = Tier2Minute {
                    admitted: i,
                    over_threshold: 1,
                    waiting_sum: 10,
                    samples: 1,
                    ..Default::default()
                };
                store.add_report_minute(&e, 29_000_000, &c).await.unwrap();
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        store.add_report_minute(&e, 29_000_001, &Tier2Minute::default()).await.unwrap();
        let got = store.report_minutes(&e).await.unwrap();
        assert_eq!(got.len(), 1, "{name}: an empty addition writes nothing");
        let c = &got[0].1;
        assert_eq!(
            (c.admitted, c.over_threshold, c.waiting_sum, c.samples),
            ((0..24).sum(), 24, 240, 24),
            "{name}"
        );
        if name == "redis" {
            let client = redis::Client::open(common::redis_url().as_str()).unwrap();
            let mut conn = client.get_multiplexed_async_connection().await.unwrap();
            for key in
                [format!("vwr:{{{e}}}:report:{}", 29_000_000 / 1_440), format!("vwr:{{{e}}}:report:days")]
            {
                let ttl: i64 = redis::cmd("TTL").arg(&key).query_async(&mut conn).await.unwrap();
                assert!(ttl > 89 * 86_400, "{key} kept 90 days: TTL {ttl}");
            }
        }
    }
}

fn minute() -> impl Strategy<Value = (u64, Tier2Minute)> {
    (0u64..3, 0u64..20, 0u64..5, 0u64..3, 0u64..3, 0u64..100, 0u64..10, 0u64..4).prop_map(
        |(m, admitted, over_threshold, evicted, expired, waiting_sum, active_sum, samples)| {
            (m, Tier2Minute { admitted, over_threshold, evicted, expired, waiting_sum, active_sum, samples })
        },
    )
}

/// The in-memory store is the model: random additions read back the same from Redis.
#[test]
fn redis_reads_back_what_the_model_does() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let real = rt.block_on(common::redis());
    let cases = std::env::var("VWR_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(40);
    let mut runner = TestRunner::new(Config { cases, max_shrink_iters: 100, ..Config::default() });
    let result = runner.run(&prop::collection::vec(minute(), 1..10), |ops| {
        rt.block_on(async {
            let model = common::memory(common::manual_clock());
            let e = common::unique_event("rep-model");
            for (m, c) in &ops {
                model.add_report_minute(&e, *m, c).await.unwrap();
                real.add_report_minute(&e, *m, c).await.unwrap();
            }
            let want = model.report_minutes(&e).await.unwrap();
            let got = real.report_minutes(&e).await.unwrap();
            prop_assert_eq!(got, want);
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn caller(user: &str, pos: u64) -> Caller {
    Caller { user: user.into(), tier1_position: Some(pos), source: Source::Tier1Token, proof: None }
}

#[tokio::test]
async fn a_sale_on_tier_two_comes_back_from_report() {
    let clock = common::manual_clock();
    let store = Arc::new(common::memory(Arc::clone(&clock) as Arc<dyn Clock>));
    let settings = Tier2Settings { entry_token_ttl_ms: 0, ..Tier2Settings::default() };
    let svc = Arc::new(common::service(store.clone(), settings));
    let e = common::unique_event("rep-sale");
    store.register(&e, 2, LineOrder::Tier1, RegisterMode::Admin).await.unwrap();
    // Two take the slots at once; three find the event full and wait.
    for (i, u) in ["u1", "u2", "u3", "u4", "u5"].iter().enumerate() {
        svc.check(&e, &caller(u, i as u64 + 1)).await.unwrap();
    }
    let worker = Worker::new(
        Arc::clone(&svc),
        Arc::new(vwr_tier2::notices::MemoryNotices::default()),
        MetricsSink::Off,
    )
    .with_clock(Arc::clone(&clock) as Arc<dyn Clock>);
    worker.tick().await;
    svc.leave(&e, "u1").await.unwrap();
    worker.tick().await;
    let r = svc.report(&e).await.unwrap();
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["threshold"], 2, "{json}");
    assert_eq!(json["totals"]["admitted"], 3, "two at once, one by the worker: {json}");
    assert!(json["totals"]["overThreshold"].as_u64().unwrap() >= 3, "{json}");
    let m = &json["minutes"][0];
    assert_eq!(m["waiting"], 2.5, "3 then 2 waiting at the worker's two steps: {json}");
    assert_eq!(m["active"], 2.0, "{json}");
    // An event tier 2 never held: 404.
    let none = svc.report(&common::unique_event("rep-none")).await.unwrap_err();
    assert_eq!(none, vwr_tier2::service::Tier2Error::EventNotFound);
}
