//! Invariants 4, 6, 8 and 10 (docs/invariants.md) against a real Redis (single node and a 3-node cluster) and
//! the in-memory model: racing checks, workers, cleanups and leaves never push active users
//! past the threshold, never leave a user in both sets, and admissions follow the line order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use vwr_core::EventId;
use vwr_tier2::model::{LineOrder, LineScore, Place, Tier2Settings, Touch};
use vwr_tier2::store::AdmissionStore;

const THRESHOLD: u64 = 50;

/// Store-level calls here hand out no entry token (`entry_token_ttl_ms: 0`), so a leave frees
/// its slot at once; `slots_outlive_tokens` covers held slots.
fn settings() -> Tier2Settings {
    Tier2Settings { batch_max: 7, entry_token_ttl_ms: 0, ..Tier2Settings::default() }
}

/// 200 users check at once while several workers, cleanups and leaves race; a monitor takes
/// atomic snapshots throughout: never more than `threshold` active, never a user in both sets.
async fn threshold_holds(store: Arc<dyn AdmissionStore>, name: &str) {
    let event = common::unique_event("inv4");
    store
        .register(&event, THRESHOLD, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin)
        .await
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let monitor = {
        let (store, event, stop) = (Arc::clone(&store), event.clone(), Arc::clone(&stop));
        tokio::spawn(async move {
            let (mut samples, mut max_active) = (0u64, 0u64);
            while !stop.load(Ordering::SeqCst) {
                let s = store.snapshot(&event).await.unwrap();
                assert!(s.active <= THRESHOLD, "over threshold: {s:?}");
                assert!(s.active_members <= THRESHOLD, "active set over threshold: {s:?}");
                assert_eq!(s.in_both, 0, "a user is waiting and active at once: {s:?}");
                max_active = max_active.max(s.active);
                samples += 1;
                tokio::task::yield_now().await;
            }
            (samples, max_active)
        })
    };
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (store, event) = (Arc::clone(&store), event.clone());
        tasks.push(tokio::spawn(async move {
            let user = format!("user-{i}");
            let jti = format!("jti-{i}");
            store.check(&event, &user, LineScore::Arrival, &jti, &settings()).await.unwrap()
        }));
    }
    let mut workers = Vec::new();
    for w in 0..4 {
        let (store, event, stop) = (Arc::clone(&store), event.clone(), Arc::clone(&stop));
        workers.push(tokio::spawn(async move {
            let mut admitted = 0;
            while !stop.load(Ordering::SeqCst) {
                if w % 2 == 0 {
                    admitted +=
                        store.admit(&event, &format!("w{w}"), &settings()).await.unwrap().admitted.len();
                } else {
                    store.cleanup(&event, &settings()).await.unwrap();
                }
                tokio::task::yield_now().await;
            }
            admitted
        }));
    }
    let mut immediately = 0;
    for t in tasks {
        if let Place::Active { fresh: true, .. } = t.await.unwrap() {
            immediately += 1;
        }
    }
    // After the burst (nobody left yet): exactly `threshold` in, everybody else in line.
    let s = store.snapshot(&event).await.unwrap();
    assert_eq!(
        (s.active, s.waiting, immediately),
        (THRESHOLD, 200 - THRESHOLD, THRESHOLD as usize),
        "{name}: {s:?}"
    );
    // Some users leave while others still check in, racing the workers.
    let mut churn = Vec::new();
    for i in (0..200).step_by(9) {
        let (store, event) = (Arc::clone(&store), event.clone());
        churn.push(tokio::spawn(async move {
            store.leave(&event, &format!("user-{i}")).await.unwrap();
            store.check(&event, &format!("late-{i}"), LineScore::Arrival, "late", &settings()).await.unwrap();
        }));
    }
    for c in churn {
        c.await.unwrap();
    }
    // Active users leave in turns so the workers keep admitting from the line.
    for round in 0..20 {
        let snap = store.snapshot(&event).await.unwrap();
        if snap.waiting == 0 {
            break;
        }
        for i in (round * 10)..(round * 10 + 10) {
            store.leave(&event, &format!("user-{i}")).await.unwrap();
        }
        // Wait for the workers to fill the freed slots (not a fixed sleep: on a loaded
        // machine they may need far longer than usual).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let s = store.snapshot(&event).await.unwrap();
            if s.active == THRESHOLD || s.waiting == 0 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{name}: the workers never refilled: {s:?}");
            tokio::task::yield_now().await;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let mut by_workers = 0;
    for w in workers {
        by_workers += w.await.unwrap();
    }
    let (samples, max_active) = monitor.await.unwrap();
    assert!(samples > 10, "{name}: the monitor barely ran");
    assert!(by_workers > 0, "{name}: workers admitted nobody");
    assert!(max_active >= THRESHOLD - 5, "{name}: never got near the threshold ({max_active})");
    let s = store.snapshot(&event).await.unwrap();
    assert!(s.active <= THRESHOLD && s.in_both == 0, "{name}: {s:?}");
    assert!(store.unregister(&event).await.unwrap());
}

/// Users join a tier-1-ordered line in random order; the worker admits them in position order.
async fn admission_follows_the_score(store: Arc<dyn AdmissionStore>, name: &str) {
    let event = common::unique_event("order");
    store.register(&event, 3, LineOrder::Tier1, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    // Fill the active slots first so everybody else queues.
    for i in 0..3u64 {
        store
            .check(&event, &format!("first-{i}"), LineScore::Tier1Position(1000 + i), "j", &settings())
            .await
            .unwrap();
    }
    let mut positions: Vec<u64> = (1..=30).map(|p| p * 7 % 31).collect();
    positions.reverse();
    let mut tasks = Vec::new();
    for p in positions.clone() {
        let (store, event) = (Arc::clone(&store), event.clone());
        tasks.push(tokio::spawn(async move {
            store
                .check(&event, &format!("p{p}"), LineScore::Tier1Position(p), "j", &settings())
                .await
                .unwrap()
        }));
    }
    for t in tasks {
        assert!(matches!(t.await.unwrap(), Place::Queued { .. }));
    }
    // A client-like attempt to use another score domain is refused.
    let err = store.check(&event, "cheater", LineScore::Arrival, "j", &settings()).await.unwrap_err();
    assert!(matches!(err, vwr_tier2::model::StoreError::OrderMismatch(_)), "{name}: {err:?}");
    // A tier-1 position already in line cannot be reused by another identity.
    let err = store.check(&event, "twin", LineScore::Tier1Position(5), "j", &settings()).await.unwrap_err();
    assert!(matches!(err, vwr_tier2::model::StoreError::PositionTaken), "{name}: {err:?}");
    let mut order = Vec::new();
    let mut active: Vec<String> = (0..3).map(|i| format!("first-{i}")).collect();
    for _ in 0..20 {
        for u in active.drain(..) {
            store.leave(&event, &u).await.unwrap();
        }
        let r = store.admit(&event, "w", &settings()).await.unwrap();
        for a in &r.admitted {
            order.push(a.user.trim_start_matches('p').parse::<u64>().unwrap());
            active.push(a.user.clone());
        }
        if r.admitted.is_empty() {
            break;
        }
    }
    let mut sorted = positions.clone();
    sorted.sort_unstable();
    assert_eq!(order, sorted, "{name}: admission order must follow the tier-1 position");
    store.unregister(&event).await.unwrap();
}

/// Leaving frees exactly the slot held; expiry and stale cleanup free what they should.
async fn leave_and_cleanup_free_exactly(store: Arc<dyn AdmissionStore>, name: &str) {
    let event = common::unique_event("free");
    store.register(&event, 2, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    for u in ["a", "b", "c", "d"] {
        store.check(&event, u, LineScore::Arrival, &format!("j-{u}"), &settings()).await.unwrap();
    }
    let s = store.snapshot(&event).await.unwrap();
    assert_eq!((s.active, s.waiting), (2, 2), "{name}");
    let left = store.leave(&event, "c").await.unwrap();
    assert!(left.was_waiting && !left.was_active, "{name}");
    let left = store.leave(&event, "a").await.unwrap();
    assert!(!left.was_waiting && left.was_active, "{name}");
    let s = store.snapshot(&event).await.unwrap();
    assert_eq!((s.active, s.waiting), (1, 1), "{name}");
    let r = store.admit(&event, "w", &settings()).await.unwrap();
    assert_eq!(r.admitted.iter().map(|a| a.user.as_str()).collect::<Vec<_>>(), ["d"], "{name}");
    assert!(store.status(&event, "c", Touch::No, 0).await.unwrap().is_none());
    let mut seen: HashMap<String, String> = HashMap::new();
    for u in ["b", "d"] {
        match store.status(&event, u, Touch::Any, 0).await.unwrap() {
            Some(Place::Active { admission, .. }) => {
                seen.insert(u.into(), admission.jti);
            }
            other => panic!("{name}: {u} should be active: {other:?}"),
        }
    }
    // The same admission keeps its jti on every status call.
    for u in ["b", "d"] {
        let Some(Place::Active { admission, .. }) = store.status(&event, u, Touch::Any, 0).await.unwrap()
        else {
            panic!()
        };
        assert_eq!(&admission.jti, &seen[u]);
    }
    assert_eq!(store.snapshot(&event).await.unwrap().in_both, 0);
    assert!(store.unregister(&event).await.unwrap());
    assert!(store.snapshot(&event).await.unwrap().meta.is_none());
    assert!(!store.events().await.unwrap().contains(&event));
}

/// Review finding 7: an entry token outlived its slot (leave, eviction and expiry freed the
/// slot while the token stayed valid, so the protected API saw more than `threshold` users),
/// and leave + check re-entered at the front. Now a released slot stays counted until the
/// last token handed out for it expires, and a user admitted before joins at the back.
/// `advance` moves the store's clock by that many milliseconds.
async fn slots_outlive_tokens(store: Arc<dyn AdmissionStore>, advance: &(dyn Fn(u64) + Sync), name: &str) {
    let s = Tier2Settings { entry_token_ttl_ms: 20_000, ..settings() };
    let event = common::unique_event("held");
    store.register(&event, 2, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    for u in ["a", "b"] {
        let p = store.check(&event, u, LineScore::Arrival, &format!("j-{u}"), &s).await.unwrap();
        let Place::Active { admission, .. } = p else { panic!("{name}: {u} should be active") };
        assert!(admission.token_expires_at_ms > admission.admitted_at_ms, "{name}: no token end recorded");
        assert!(
            admission.token_expires_at_ms <= admission.expires_at_ms,
            "{name}: token outlives the admission"
        );
    }
    assert!(store.leave(&event, "a").await.unwrap().was_active);
    let snap = store.snapshot(&event).await.unwrap();
    assert_eq!((snap.active, snap.held), (2, 1), "{name}: a's token is still valid, so is a's slot");
    assert!(matches!(
        store.check(&event, "c", LineScore::Arrival, "j-c", &s).await.unwrap(),
        Place::Queued { .. }
    ));
    assert!(
        store.admit(&event, "w1", &s).await.unwrap().admitted.is_empty(),
        "{name}: admitted past the threshold"
    );
    advance(20_500);
    let r = store.admit(&event, "w2", &s).await.unwrap();
    assert_eq!(r.admitted.iter().map(|a| a.user.as_str()).collect::<Vec<_>>(), ["c"], "{name}");
    assert_eq!(store.snapshot(&event).await.unwrap().held, 0, "{name}");
    store.unregister(&event).await.unwrap();

    // Tier-1 line: u1 (position 1) is admitted, u5 (position 5) waits; u1 leaves and checks
    // again with the same position: behind u5, not in front.
    let event = common::unique_event("reenter");
    store.register(&event, 1, LineOrder::Tier1, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
    assert!(matches!(
        store.check(&event, "u1", LineScore::Tier1Position(1), "j1", &s).await.unwrap(),
        Place::Active { .. }
    ));
    assert!(matches!(
        store.check(&event, "u5", LineScore::Tier1Position(5), "j5", &s).await.unwrap(),
        Place::Queued { position: 1, .. }
    ));
    store.leave(&event, "u1").await.unwrap();
    let again = store.check(&event, "u1", LineScore::Tier1Position(1), "j1b", &s).await.unwrap();
    assert!(
        matches!(again, Place::Queued { position: 2, .. }),
        "{name}: re-entry got a head start: {again:?}"
    );
    advance(20_500);
    let r = store.admit(&event, "w3", &s).await.unwrap();
    assert_eq!(r.admitted.iter().map(|a| a.user.as_str()).collect::<Vec<_>>(), ["u5"], "{name}");
    store.unregister(&event).await.unwrap();
}

#[tokio::test]
async fn slots_outlive_tokens_on_redis_and_memory() {
    let redis = common::redis().await;
    let offset = std::sync::Mutex::new(0i64);
    let move_redis = |ms: u64| {
        let mut o = offset.lock().unwrap();
        *o += ms as i64;
        redis.set_time_offset_ms(*o);
    };
    slots_outlive_tokens(Arc::new(redis.clone()), &move_redis, "redis").await;
    let clock = common::manual_clock();
    let memory = common::memory(Arc::clone(&clock) as Arc<dyn vwr_core::time::Clock>);
    slots_outlive_tokens(Arc::new(memory), &|ms| clock.advance_millis(ms), "memory").await;
}

async fn all(store: Arc<dyn AdmissionStore>, name: &str) {
    threshold_holds(Arc::clone(&store), name).await;
    admission_follows_the_score(Arc::clone(&store), name).await;
    leave_and_cleanup_free_exactly(store, name).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invariants_on_redis() {
    all(Arc::new(common::redis().await), "redis").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invariants_on_redis_cluster() {
    let store = common::cluster().await;
    all(Arc::new(store.clone()), "cluster").await;
    // Events land on different slots (hence nodes); each script still runs on one slot.
    for i in 0..8 {
        let e = EventId::parse(&format!("spread-{i}-{}", std::process::id())).unwrap();
        store.register(&e, 1, LineOrder::Arrival, vwr_tier2::model::RegisterMode::Admin).await.unwrap();
        store.check(&e, "u", LineScore::Arrival, "j", &settings()).await.unwrap();
        store.admit(&e, "w", &settings()).await.unwrap();
        store.purge(&e).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invariants_on_memory() {
    all(Arc::new(common::memory(Arc::new(vwr_core::time::SystemClock))), "memory").await;
}
