//! The report after the sale (docs/operate.md#the-report-after-the-sale) on the in-memory model
//! and on DynamoDB (moto): a sale's joins, places served, redemptions with their waits,
//! releases and refusals come back minute by minute; instances adding to the same minute at
//! once lose nothing; the writes do not grow with the traffic (counted at 10× the visitors);
//! and random sequences of additions read back the same from both stores.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::ev;
use common::spy::Spy;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use vwr_core::EventId;
use vwr_core::time::ManualClock;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::report::{KEEP_SECS, MinuteCounts};
use vwr_tier1::service::{CheckOutcome, JoinProof};
use vwr_tier1::store::PositionStore;

/// A minute's start (1,800,000,000 is a multiple of 60).
const T0: u64 = 1_800_000_000;

async fn stores(tag: &str) -> Vec<(&'static str, Arc<dyn PositionStore>)> {
    vec![("memory", Arc::new(MemoryStore::new())), ("dynamodb", Arc::new(common::dynamo_store(tag).await))]
}

/// `n` visitors join at T0; the line moves `served` places at T0 + 30; each served visitor
/// checks at T0 + 45 (a wait of 45 s) and again (no second redemption). Answers the tickets.
async fn sale(
    svc: &vwr_tier1::Tier1Service,
    clock: &ManualClock,
    e: &EventId,
    n: u64,
    served: u64,
) -> Vec<String> {
    let mut tickets = Vec::new();
    for _ in 0..n {
        tickets.push(svc.assign(e, &JoinProof::default()).await.unwrap().request_id().to_owned());
    }
    clock.set(T0 + 30);
    svc.advance(e, served, "test").await.unwrap();
    clock.set(T0 + 45);
    for t in tickets.iter().take(usize::try_from(served).unwrap()) {
        for _ in 0..2 {
            let out = svc.check(e, t, svc.request_secret(t).as_deref()).await.unwrap();
            assert!(matches!(out, CheckOutcome::Admitted(_)));
        }
    }
    tickets
}

#[tokio::test]
async fn a_sale_comes_back_minute_by_minute_on_both_stores() {
    for (name, store) in stores("report").await {
        let clock = Arc::new(ManualClock::new(T0));
        let svc = common::service(Arc::clone(&store), Arc::clone(&clock));
        let e = ev("e1");
        svc.activate(&e, serde_json::from_value(serde_json::json!({"batchSize": 0})).unwrap(), "ops")
            .await
            .unwrap();
        let tickets = sale(&svc, &clock, &e, 10, 6).await;
        // Two refusals: a check without its secret, a join of an unknown event is not counted
        // (no event to count it for).
        clock.set(T0 + 50);
        assert!(svc.check(&e, &tickets[9], None).await.is_err());
        svc.count_refusal(&e, "proof_required").await;
        // A minute later: the waits of two more redemptions after 110 s.
        clock.set(T0 + 110);
        svc.advance(&e, 2, "test").await.unwrap();
        for t in &tickets[6..8] {
            svc.check(&e, t, svc.request_secret(t).as_deref()).await.unwrap();
        }
        let r = svc.report(&e).await.unwrap();
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["eventId"], "e1", "{name}");
        assert_eq!(json["totals"]["joins"], 10, "{name}: {json}");
        assert_eq!(json["totals"]["served"], 8, "{name}");
        assert_eq!(json["totals"]["redeemed"], 8, "{name}: each place once, whatever the checks");
        assert_eq!(json["totals"]["abandoned"], 0, "{name}");
        assert_eq!(json["totals"]["refusals"]["proof_required"], 1, "{name}");
        let minutes = json["minutes"].as_array().unwrap();
        assert_eq!(minutes.len(), 2, "{name}: {json}");
        assert_eq!(minutes[0]["at"], T0, "{name}");
        assert_eq!(
            (minutes[0]["joins"].as_u64(), minutes[0]["redeemed"].as_u64()),
            (Some(10), Some(6)),
            "{name}"
        );
        // Read off the histogram: within its 5 % buckets (docs/operate.md).
        let near =
            |v: &serde_json::Value, want: f64| v.as_f64().is_some_and(|v| (v - want).abs() <= want * 0.025);
        assert!(near(&minutes[0]["waitSeconds"]["p50"], 45.0), "{name}: {json}");
        assert_eq!(minutes[1]["redeemed"], 2, "{name}");
        assert!(near(&minutes[1]["waitSeconds"]["p99"], 110.0), "{name}: {json}");
        assert!(near(&json["waitSeconds"]["p50"], 45.0), "{name}: {json}");
        // Kept 90 days: what the store was told.
        let stored = store.report_minutes(&e).await.unwrap();
        assert_eq!(stored.iter().map(|(m, _)| *m).collect::<Vec<_>>(), vec![T0 / 60, T0 / 60 + 1], "{name}");
        // Nothing for an unknown event: 404, not an empty report; and its refusals are not
        // counted (no stored minutes for made-up event ids).
        svc.count_refusal(&ev("nope"), "event_not_found").await;
        svc.count_refusal(&ev("nope"), "invalid_request_id").await;
        svc.flush_report().await.unwrap();
        assert!(store.report_minutes(&ev("nope")).await.unwrap().is_empty(), "{name}");
        assert!(matches!(svc.report(&ev("nope")).await, Err(vwr_tier1::service::Tier1Error::EventNotFound)));
    }
}

#[tokio::test]
async fn instances_adding_to_one_minute_at_once_lose_nothing() {
    for (name, store) in stores("report-race").await {
        let e = ev("race");
        let mut tasks = Vec::new();
        for i in 0..24u64 {
            let store = Arc::clone(&store);
            let e = e.clone();
            tasks.push(tokio::spawn(async move {
                let mut c = MinuteCounts { joins: 1 + i, ..Default::default() };
                c.redeemed_after(i);
                c.refusals.insert("busy".into(), 1);
                store.add_report_minute(&e, 7, &c, 7 * 60 + KEEP_SECS).await.unwrap();
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let got = store.report_minutes(&e).await.unwrap();
        assert_eq!(got.len(), 1, "{name}");
        let c = &got[0].1;
        assert_eq!(c.joins, (1..=24).sum::<u64>(), "{name}");
        assert_eq!(c.redeemed, 24, "{name}");
        assert_eq!(c.waits.values().sum::<u64>(), 24, "{name}");
        assert_eq!(c.refusals["busy"], 24, "{name}");
    }
}

/// The report's writes of one instance over three minutes of a sale of `n` visitors (joins,
/// checks every 10 s while they wait, redemptions), flushed by the traffic itself.
async fn writes_for(store: Arc<dyn PositionStore>, tag: &str, n: u64) -> (usize, u64) {
    let counting = Arc::new(Spy::counting(store));
    let clock = Arc::new(ManualClock::new(T0));
    let svc = common::service(Arc::clone(&counting) as Arc<dyn PositionStore>, Arc::clone(&clock));
    let e = ev(tag);
    svc.activate(&e, serde_json::from_value(serde_json::json!({"batchSize": 0})).unwrap(), "ops")
        .await
        .unwrap();
    let mut tickets = Vec::new();
    for _ in 0..n {
        tickets.push(svc.assign(&e, &JoinProof::default()).await.unwrap().request_id().to_owned());
    }
    for step in 1..=18u64 {
        clock.set(T0 + step * 10);
        if step % 6 == 0 {
            svc.advance(&e, n / 3, "test").await.unwrap();
        }
        for t in &tickets {
            let _ = svc.check(&e, t, svc.request_secret(t).as_deref()).await.unwrap();
        }
    }
    let writes = counting.report_writes.load(Ordering::SeqCst);
    let joins = svc.report(&e).await.unwrap().totals.joins;
    (writes, joins)
}

#[tokio::test]
async fn the_writes_do_not_grow_with_the_traffic() {
    for (name, store) in stores("report-writes").await {
        let (small, joins) = writes_for(Arc::clone(&store), "small", 30).await;
        assert_eq!(joins, 30, "{name}");
        let (big, joins) = writes_for(store, "big", 300).await;
        assert_eq!(joins, 300, "{name}");
        // Three minutes: one flush a minute by the traffic, plus one per manual advance
        // (3; an operator's rare call writes at once).
        assert!(small <= 6, "{name}: {small} writes for 30 visitors");
        assert_eq!(big, small, "{name}: 10× the visitors, {big} writes against {small}");
    }
}

fn counts() -> impl Strategy<Value = (u64, MinuteCounts)> {
    (
        0u64..4,
        0u64..50,
        0u64..50,
        prop::collection::vec(0u64..4_000, 0..6),
        prop::collection::btree_map(
            prop::sample::select(vec!["busy", "proof_required", "event_closed"]),
            1u64..5,
            0..3,
        ),
    )
        .prop_map(|(minute, joins, served, waits, refusals)| {
            let mut c = MinuteCounts { joins, served, ..Default::default() };
            for w in waits {
                c.redeemed_after(w);
            }
            c.refusals = refusals.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            (minute, c)
        })
}

/// The in-memory store is the model: random additions read back the same from DynamoDB.
#[test]
fn dynamodb_reads_back_what_the_model_does() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let real = rt.block_on(common::dynamo_store("report-model"));
    let cases = std::env::var("VWR_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(40);
    let case = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config { cases, max_shrink_iters: 100, ..Config::default() });
    let result = runner.run(&prop::collection::vec(counts(), 1..12), |ops| {
        rt.block_on(async {
            let model = MemoryStore::new();
            let e = ev(&format!("m{}", case.fetch_add(1, Ordering::SeqCst)));
            for (minute, c) in &ops {
                model.add_report_minute(&e, *minute, c, 0).await.unwrap();
                real.add_report_minute(&e, *minute, c, minute * 60 + KEEP_SECS).await.unwrap();
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
