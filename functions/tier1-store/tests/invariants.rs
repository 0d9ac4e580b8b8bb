//! Invariants 1–3 (docs/invariants.md) under concurrency, against the real DynamoDB API (moto server) and
//! the in-memory model. Each test races many tasks; each would fail if the store decided by a
//! read followed by a separate write.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::ev;
use vwr_core::time::ManualClock;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::ConfigPatch;
use vwr_tier1::service::{CheckOutcome, StepOutcome};
use vwr_tier1::store::PositionStore;
use vwr_tier1::{Tier1Clients, Tier1Service};

const T0: u64 = 1_800_000_000;

async fn stores(name: &str) -> Vec<(&'static str, Arc<dyn PositionStore>)> {
    vec![("memory", Arc::new(MemoryStore::new())), ("dynamodb", Arc::new(common::dynamo_store(name).await))]
}

fn patch(batch: u64, interval: u64, shards: u32) -> ConfigPatch {
    ConfigPatch {
        batch_size: Some(batch),
        interval_seconds: Some(interval),
        shards: Some(shards),
        ..ConfigPatch::default()
    }
}

/// Invariant 1: concurrent assigns never share a position; with one shard positions are
/// exactly 1..=n, with N shards each shard's positions are k, k+N, … without gaps.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_assigns_give_unique_positions() {
    for (name, store) in stores("inv1").await {
        for shards in [1u32, 4] {
            let clock = Arc::new(ManualClock::new(T0));
            let event = ev(&format!("unique-{shards}"));
            // Several service instances (like Lambda instances) on one store.
            let services: Vec<Arc<Tier1Service>> =
                (0..4).map(|_| Arc::new(common::service(Arc::clone(&store), Arc::clone(&clock)))).collect();
            services[0].activate(&event, patch(0, 10, shards), "test").await.unwrap();
            let mut tasks = Vec::new();
            for t in 0..32 {
                let svc = Arc::clone(&services[t % services.len()]);
                let event = event.clone();
                tasks.push(tokio::spawn(async move {
                    let mut got = Vec::new();
                    for _ in 0..10 {
                        got.push(
                            svc.assign(&event, &vwr_tier1::service::JoinProof::default())
                                .await
                                .unwrap()
                                .position()
                                .unwrap(),
                        );
                    }
                    got
                }));
            }
            let mut all = Vec::new();
            for t in tasks {
                all.extend(t.await.unwrap());
            }
            let unique: HashSet<u64> = all.iter().copied().collect();
            assert_eq!(unique.len(), all.len(), "{name}/{shards}: duplicate positions handed out");
            let status = services[0].status(&event).await.unwrap();
            assert_eq!(status.issued, 320, "{name}/{shards}");
            for k in 1..=u64::from(shards) {
                let mut mine: Vec<u64> =
                    all.iter().copied().filter(|p| (p - 1) % u64::from(shards) + 1 == k).collect();
                mine.sort_unstable();
                let want: Vec<u64> = (0..mine.len() as u64).map(|i| i * u64::from(shards) + k).collect();
                assert_eq!(mine, want, "{name}/{shards}: shard {k} positions not dense");
            }
            if shards == 1 {
                assert_eq!(status.highest_position, 320);
            }
        }
    }
}

/// Invariant 2: racing advancer invocations (same step, several instances) advance each step
/// exactly once, never past the highest issued position and never backwards, while joins and
/// manual advances run concurrently.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_advancers_never_overshoot_or_double_step() {
    for (name, store) in stores("inv2").await {
        let clock = Arc::new(ManualClock::new(T0));
        let event = ev("race");
        let svc = Arc::new(common::service(Arc::clone(&store), Arc::clone(&clock)));
        svc.activate(&event, patch(7, 10, 1), "test").await.unwrap();
        for _ in 0..40 {
            svc.assign(&event, &vwr_tier1::service::JoinProof::default()).await.unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        // A watcher: the counter never decreases and never passes the highest issued position.
        let watcher = {
            let (svc, event, stop) = (Arc::clone(&svc), event.clone(), Arc::clone(&stop));
            tokio::spawn(async move {
                let mut last = 0;
                let mut seen = 0;
                while !stop.load(Ordering::SeqCst) {
                    let st = svc.status(&event).await.unwrap();
                    assert!(
                        st.serving_counter >= last,
                        "serving counter went back {last} → {}",
                        st.serving_counter
                    );
                    assert!(st.serving_counter <= st.highest_position, "overshoot: {st:?}");
                    last = st.serving_counter;
                    seen += 1;
                    tokio::task::yield_now().await;
                }
                seen
            })
        };
        let mut expected = 0u64;
        let mut issued = 40u64;
        for step in 1..=12u64 {
            clock.set(T0 - T0 % 10 + step * 10);
            // Joins keep arriving during the race in the later steps.
            let joiner = {
                let (svc, event) = (Arc::clone(&svc), event.clone());
                tokio::spawn(async move {
                    if step > 8 {
                        for _ in 0..3 {
                            svc.assign(&event, &vwr_tier1::service::JoinProof::default()).await.unwrap();
                        }
                    }
                })
            };
            // Every racer reads the event before any of them writes (as overlapping
            // invocations do), so only the conditional write can keep the step single.
            let barrier = Arc::new(tokio::sync::Barrier::new(8));
            let mut racers = Vec::new();
            for _ in 0..8 {
                let racer = Arc::new(common::service(Arc::clone(&store), Arc::clone(&clock)));
                let (event, barrier) = (event.clone(), Arc::clone(&barrier));
                racers.push(tokio::spawn(async move {
                    let rec = racer.store().get_event(&event).await.unwrap().unwrap();
                    barrier.wait().await;
                    racer.advance_step(rec, racer.now()).await.unwrap()
                }));
            }
            let mut advanced = 0;
            for r in racers {
                if let StepOutcome::Advanced { .. } = r.await.unwrap() {
                    advanced += 1;
                }
            }
            joiner.await.unwrap();
            let st = svc.status(&event).await.unwrap();
            // The step may have been computed before or after this step's joins landed.
            let low = (expected + 7).min(issued);
            if step > 8 {
                issued += 3;
            }
            let high = (expected + 7).min(issued);
            assert!(advanced <= 1, "{name}: step {step} applied {advanced} times");
            assert!(
                (low..=high).contains(&st.serving_counter),
                "{name}: step {step}: serving {} not in {low}..={high}",
                st.serving_counter
            );
            if advanced == 1 {
                assert_eq!(st.last_step_at, T0 - T0 % 10 + step * 10, "{name}: step not recorded");
            }
            expected = st.serving_counter;
        }
        // One more quiet step serves whoever joined during the last race.
        clock.set(T0 - T0 % 10 + 13 * 10);
        let rec = svc.store().get_event(&event).await.unwrap().unwrap();
        svc.advance_step(rec, svc.now()).await.unwrap();
        let st = svc.status(&event).await.unwrap();
        assert_eq!(
            st.serving_counter,
            issued.min(expected + 7),
            "{name}: everyone issued is served in the end"
        );
        assert_eq!(st.serving_counter, issued, "{name}");
        // A repeated delivery of the last step does nothing; so does a run whose clock lags
        // far behind the stored step (reported as stuck, for the operator's alarm).
        let rec = svc.store().get_event(&event).await.unwrap().unwrap();
        let again = svc.advance_step(rec.clone(), rec.last_step_at + 9).await.unwrap();
        assert!(matches!(again, StepOutcome::AlreadyDone { .. }), "{name}: {again:?}");
        let old = svc.advance_step(rec, T0).await.unwrap();
        assert!(matches!(old, StepOutcome::Stuck { .. }), "{name}: {old:?}");
        // Manual advances racing each other stay capped.
        let mut manual = Vec::new();
        for _ in 0..8 {
            let (svc, event) = (Arc::clone(&svc), event.clone());
            manual.push(tokio::spawn(async move { svc.advance(&event, 1_000, "test").await.unwrap() }));
        }
        for m in manual {
            let st = m.await.unwrap();
            assert!(st.serving_counter <= st.highest_position);
        }
        stop.store(true, Ordering::SeqCst);
        assert!(watcher.await.unwrap() > 0);
        let st = svc.status(&event).await.unwrap();
        assert_eq!(st.serving_counter, st.highest_position, "{name}");
    }
}

/// Invariant 3: re-activating (even concurrently with joins and with itself) never resets the
/// counters.
/// Review finding 1: changing `intervalSeconds` mid-sale must not freeze the advancer. One
/// step per second, then the operator slows to one step per 10 s: the line keeps moving at
/// the new pace (and speeds up again when the interval shrinks). A manual clock drives every
/// run, on the model and on DynamoDB.
#[tokio::test]
async fn interval_change_keeps_the_advancer_moving() {
    for (name, store) in stores("interval").await {
        let t0 = T0 - T0 % 10;
        let clock = Arc::new(ManualClock::new(t0));
        let event = ev("slowdown");
        let svc = common::service(Arc::clone(&store), Arc::clone(&clock));
        svc.activate(&event, patch(1, 1, 1), "test").await.unwrap();
        for _ in 0..100 {
            svc.assign(&event, &vwr_tier1::service::JoinProof::default()).await.unwrap();
        }
        let run = |at: u64| {
            clock.set(at);
            svc.advance_due()
        };
        for s in 0..5 {
            run(t0 + s).await.unwrap();
        }
        assert_eq!(svc.status(&event).await.unwrap().serving_counter, 5, "{name}: 1 s steps");
        svc.activate(&event, ConfigPatch { interval_seconds: Some(10), ..ConfigPatch::default() }, "test")
            .await
            .unwrap();
        for s in 5..=60 {
            run(t0 + s).await.unwrap();
        }
        // New steps start at t0+10, +20, …, +60: six of them.
        assert_eq!(
            svc.status(&event).await.unwrap().serving_counter,
            11,
            "{name}: 10 s steps after the change"
        );
        svc.activate(&event, ConfigPatch { interval_seconds: Some(2), ..ConfigPatch::default() }, "test")
            .await
            .unwrap();
        for s in 61..=70 {
            run(t0 + s).await.unwrap();
        }
        // Steps at t0+62, 64, 66, 68, 70.
        assert_eq!(
            svc.status(&event).await.unwrap().serving_counter,
            16,
            "{name}: 2 s steps after the change"
        );
        let outcomes = run(t0 + 71).await.unwrap();
        assert!(outcomes.iter().all(|o| !matches!(o, StepOutcome::Stuck { .. })), "{name}: {outcomes:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reactivation_keeps_counters() {
    for (name, store) in stores("inv3").await {
        let clock = Arc::new(ManualClock::new(T0));
        let svc = Arc::new(common::service(Arc::clone(&store), Arc::clone(&clock)));
        let event = ev("again");
        svc.activate(&event, patch(0, 10, 2), "test").await.unwrap();
        let mut tickets = Vec::new();
        for _ in 0..10 {
            tickets.push(
                svc.assign(&event, &vwr_tier1::service::JoinProof::default())
                    .await
                    .unwrap()
                    .request_id()
                    .to_owned(),
            );
        }
        svc.advance(&event, 4, "test").await.unwrap();
        let mut redeemed = 0;
        for t in &tickets {
            if let CheckOutcome::Admitted(_) =
                svc.check(&event, t, svc.request_secret(t).as_deref()).await.unwrap()
            {
                redeemed += 1;
            }
        }
        assert_eq!(redeemed, 4, "{name}");
        let mut tasks = Vec::new();
        for i in 0..12u64 {
            let (svc, event) = (Arc::clone(&svc), event.clone());
            tasks.push(tokio::spawn(async move {
                if i % 3 == 0 {
                    svc.assign(&event, &vwr_tier1::service::JoinProof::default()).await.map(|_| ()).unwrap();
                } else {
                    let p = ConfigPatch { batch_size: Some(i), ..ConfigPatch::default() };
                    svc.activate(&event, p, "test").await.map(|_| ()).unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        svc.deactivate(&event, "test").await.unwrap();
        let st = svc.activate(&event, ConfigPatch::default(), "test").await.unwrap();
        assert_eq!((st.issued, st.serving_counter, st.admitted), (14, 4, 4), "{name}: {st:?}");
        assert!(st.active);
        assert_eq!(st.config.shards, 2);
    }
}

/// A ticket is redeemed once: racing checks of one admitted ticket all get the same `jti`,
/// and only one admission is counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_checks_redeem_once() {
    for (name, store) in stores("redeem").await {
        let clock = Arc::new(ManualClock::new(T0));
        let event = ev("once");
        let svc0 = common::service(Arc::clone(&store), Arc::clone(&clock));
        svc0.activate(&event, patch(0, 10, 1), "test").await.unwrap();
        let ticket = svc0
            .assign(&event, &vwr_tier1::service::JoinProof::default())
            .await
            .unwrap()
            .request_id()
            .to_owned();
        svc0.advance(&event, 1, "test").await.unwrap();
        let mut tasks = Vec::new();
        for _ in 0..16 {
            // Separate instances (no shared cache), all with the same keys.
            let tokens = svc0.tokens().clone();
            let clients =
                Tier1Clients::new(Arc::clone(&store), Arc::clone(&clock) as Arc<dyn vwr_core::time::Clock>);
            let svc = vwr_tier1::assemble(&common::config(&tokens), tokens.clone(), clients);
            let (event, ticket) = (event.clone(), ticket.clone());
            tasks.push(tokio::spawn(async move {
                match svc.check(&event, &ticket, svc.request_secret(&ticket).as_deref()).await.unwrap() {
                    CheckOutcome::Admitted(a) => tokens.verify(&a.token, &event, T0).unwrap().jti,
                    other => panic!("not admitted: {other:?}"),
                }
            }));
        }
        let mut jtis = HashSet::new();
        for t in tasks {
            jtis.insert(t.await.unwrap());
        }
        assert_eq!(jtis.len(), 1, "{name}: several identities for one ticket: {jtis:?}");
        assert_eq!(svc0.status(&event).await.unwrap().admitted, 1, "{name}");
    }
}

/// Active-event discovery pages through the index (a page size of 2 forces several pages).
#[tokio::test]
async fn active_listing_is_paginated() {
    let store = common::dynamo_store("list").await.with_page_size(2);
    let clock = Arc::new(ManualClock::new(T0));
    let svc = common::service(Arc::new(store.clone()), clock);
    for i in 0..7 {
        svc.activate(&ev(&format!("ev{i}")), ConfigPatch::default(), "test").await.unwrap();
    }
    svc.deactivate(&ev("ev3"), "test").await.unwrap();
    let mut ids: Vec<String> =
        store.list_active().await.unwrap().into_iter().map(|r| r.event.to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["ev0", "ev1", "ev2", "ev4", "ev5", "ev6"]);
    // Creating the table again is harmless.
    store.ensure_table().await.unwrap();
}

/// DynamoDB unreachable → the API answers 503 with Retry-After, and nothing panics.
#[tokio::test]
async fn store_down_is_503_with_retry_after() {
    use axum::body::Body;
    use http::{Request, StatusCode, header};
    use tower::ServiceExt;
    let creds = aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "vwr-tests");
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(creds)
        .endpoint_url("http://127.0.0.1:9")
        .build();
    let store =
        vwr_tier1_store::dynamo::DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(conf), "absent");
    let svc = Arc::new(common::service(Arc::new(store), Arc::new(ManualClock::new(T0))));
    let router = vwr_tier1::http::public_router(svc);
    for (method, uri) in [
        ("POST", "/vwr/assign/e1"),
        ("GET", "/vwr/check/e1/v1.t1.ZTE6MToxODAwMDAwMDAw.AAAAAAAAAAAAAAAAAAAAAA"),
    ] {
        let res = router
            .clone()
            .oneshot(Request::builder().method(method).uri(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        // The check's ticket is forged, so it may be refused before the store is read.
        if uri.contains("check") {
            assert!(res.status().is_client_error() || res.status() == StatusCode::SERVICE_UNAVAILABLE);
            continue;
        }
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(res.headers().get(header::RETRY_AFTER).is_some());
    }
}
