//! Outflow control and sessions (docs/outflow.md), in memory with a manual clock: the
//! `targetArrivals` controller on a simulated line with random no-shows, the health gate,
//! re-entry within the grace period, and the site's early release.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use common::{T0, ev};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use vwr_core::time::ManualClock;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{ConfigPatch, OutflowMode};
use vwr_tier1::service::{CheckOutcome, StepOutcome};

/// A small deterministic generator for the simulation (the property test draws its seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Runs a sale for `minutes` in 1-s ticks; served visitors show up with probability
/// `1 − no_show`, after 0..=`max_delay` seconds. Returns the redemption times and the step sizes.
async fn simulate(
    target: u64,
    interval: u64,
    max_batch: u64,
    no_show: f64,
    max_delay: u64,
    seed: u64,
    minutes: u64,
) -> (Vec<u64>, Vec<u64>) {
    let clock = Arc::new(ManualClock::new(T0));
    let svc = common::service(Arc::new(MemoryStore::new()), Arc::clone(&clock));
    let e = ev("sim");
    let patch = ConfigPatch {
        mode: Some(OutflowMode::TargetArrivals),
        target_arrivals_per_minute: Some(target),
        max_batch_size: Some(max_batch),
        interval_seconds: Some(interval),
        token_ttl_seconds: Some(3600),
        ..Default::default()
    };
    svc.activate(&e, patch, "test").await.unwrap();
    // Everyone is in line before the open (a long line: the controller is never starved).
    let people = target * (minutes + 2) * 3;
    let mut tickets = HashMap::new();
    for _ in 0..people {
        let a = svc.assign(&e, &vwr_tier1::service::JoinProof::default()).await.unwrap();
        tickets.insert(a.position().unwrap(), a.request_id().to_owned());
    }
    let mut rng = Rng(seed | 1);
    let mut due: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let (mut redeemed_at, mut steps) = (Vec::new(), Vec::new());
    let mut serving = 0;
    for t in 0..minutes * 60 {
        clock.set(T0 + t);
        svc.advance_event(&e).await.unwrap();
        let now_serving = svc.status(&e).await.unwrap().serving_counter;
        if now_serving > serving {
            steps.push(now_serving - serving);
            for p in serving + 1..=now_serving {
                if rng.unit() >= no_show {
                    due.entry(t + rng.next() % (max_delay + 1)).or_default().push(p);
                }
            }
            serving = now_serving;
        }
        for p in due.remove(&t).unwrap_or_default() {
            match svc.check(&e, &tickets[&p], svc.request_secret(&tickets[&p]).as_deref()).await.unwrap() {
                CheckOutcome::Admitted(_) => redeemed_at.push(t),
                other => panic!("position {p} served but not admitted: {other:?}"),
            }
        }
    }
    (redeemed_at, steps)
}

/// Redeemed admissions per minute converge on the target within ±10 % after two minutes,
/// whatever the share of no-shows, and no step is ever larger than `maxBatchSize`.
#[test]
fn target_arrivals_converge_despite_no_shows() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut runner = TestRunner::new(Config { cases: 8, max_shrink_iters: 0, ..Config::default() });
    let strategy = (
        0.05f64..0.5,
        1u64..=20,
        prop_oneof![Just(1u64), Just(2), Just(5), Just(10)],
        prop_oneof![Just(600u64), Just(1200), Just(3000)],
        any::<u64>(),
    );
    let result = runner.run(&strategy, |(no_show, max_delay, interval, target, seed)| {
        let max_batch = target * interval / 60 * 3;
        let (redeemed, steps) =
            rt.block_on(simulate(target, interval, max_batch, no_show, max_delay, seed, 6));
        prop_assert!(steps.iter().all(|s| *s <= max_batch), "a step above maxBatchSize: {:?}", steps);
        for start in (120..=300).step_by(30) {
            let n = redeemed.iter().filter(|t| (start..start + 60).contains(*t)).count() as f64;
            let err = (n - target as f64).abs() / target as f64;
            prop_assert!(
                err <= 0.10,
                "minute from {}s: {} redeemed against {} (no-show {:.2}, delay ≤ {}s, interval {}s)",
                start,
                n,
                target,
                no_show,
                max_delay,
                interval
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[tokio::test]
async fn the_health_gate_holds_the_advancer_without_a_burst_after() {
    let clock = Arc::new(ManualClock::new(T0));
    let svc = common::service(Arc::new(MemoryStore::new()), Arc::clone(&clock));
    let e = ev("gate");
    let patch = ConfigPatch { batch_size: Some(10), interval_seconds: Some(1), ..Default::default() };
    svc.activate(&e, patch, "test").await.unwrap();
    for _ in 0..200 {
        svc.assign(&e, &vwr_tier1::service::JoinProof::default()).await.unwrap();
    }
    clock.set(T0 + 1);
    assert!(matches!(svc.advance_event(&e).await.unwrap(), StepOutcome::Advanced { to: 10, .. }));
    let st = svc.set_health(&e, false, Some("origin 5xx".into()), "ops").await.unwrap();
    assert_eq!(st.held_by, Some(vwr_tier1::model::HoldBy::Health));
    assert_eq!(st.hold_reason.as_deref(), Some("origin 5xx"));
    for t in 2..30 {
        clock.set(T0 + t);
        assert!(matches!(svc.advance_event(&e).await.unwrap(), StepOutcome::Held { .. }));
    }
    assert_eq!(svc.status(&e).await.unwrap().serving_counter, 10, "nobody let in while held");
    svc.set_health(&e, true, None, "ops").await.unwrap();
    clock.set(T0 + 30);
    assert!(
        matches!(svc.advance_event(&e).await.unwrap(), StepOutcome::Advanced { from: 10, to: 20, .. }),
        "one step at the configured rate, not the 28 missed ones"
    );
    let audit = svc.audit(&e).await.unwrap();
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(actions, ["activate", "health", "health"]);
}

/// A buyer whose token expired 2 s ago is admitted again at once with the same position —
/// never sent to the back; past the grace period or the session's length, 410.
#[tokio::test]
async fn an_expired_token_within_the_grace_period_is_renewed_in_place() {
    let clock = Arc::new(ManualClock::new(T0));
    let svc = common::service(Arc::new(MemoryStore::new()), Arc::clone(&clock));
    let e = ev("sess");
    let patch = ConfigPatch {
        batch_size: Some(0),
        token_ttl_seconds: Some(600),
        reentry_grace_seconds: Some(300),
        max_session_seconds: Some(1800),
        ..Default::default()
    };
    svc.activate(&e, patch, "test").await.unwrap();
    let rid =
        svc.assign(&e, &vwr_tier1::service::JoinProof::default()).await.unwrap().request_id().to_owned();
    svc.advance(&e, 1, "test").await.unwrap();
    let first = match svc.check(&e, &rid, svc.request_secret(&rid).as_deref()).await.unwrap() {
        CheckOutcome::Admitted(a) => a,
        other => panic!("{other:?}"),
    };
    assert_eq!(first.expires_at, T0 + 600);
    let claims = svc.tokens().verify(&first.token, &e, T0).unwrap();

    // The token expired 2 s ago: a new one at once, same position and identity.
    clock.set(T0 + 602);
    let again = match svc.check(&e, &rid, svc.request_secret(&rid).as_deref()).await.unwrap() {
        CheckOutcome::Admitted(a) => a,
        other => panic!("{other:?}"),
    };
    let renewed = svc.tokens().verify(&again.token, &e, T0 + 602).unwrap();
    assert_eq!((renewed.pos, &renewed.jti), (claims.pos, &claims.jti));
    assert_eq!((renewed.iat, again.expires_at), (T0 + 602, T0 + 1202));
    // Checking again while it is valid answers the same token.
    clock.set(T0 + 700);
    match svc.check(&e, &rid, svc.request_secret(&rid).as_deref()).await.unwrap() {
        CheckOutcome::Admitted(a) => assert_eq!(a.expires_at, T0 + 1202),
        other => panic!("{other:?}"),
    }
    // The session ends 1800 s after the first admission: the next token is cut there.
    clock.set(T0 + 1300);
    match svc.check(&e, &rid, svc.request_secret(&rid).as_deref()).await.unwrap() {
        CheckOutcome::Admitted(a) => assert_eq!(a.expires_at, T0 + 1800),
        other => panic!("{other:?}"),
    }
    clock.set(T0 + 1801);
    let err =
        vwr_core::ApiError::from(svc.check(&e, &rid, svc.request_secret(&rid).as_deref()).await.unwrap_err());
    assert_eq!((err.status.as_u16(), err.code.as_str()), (410, "admission_expired"));

    // Past the grace period: 410 as well.
    let rid2 =
        svc.assign(&e, &vwr_tier1::service::JoinProof::default()).await.unwrap().request_id().to_owned();
    svc.advance(&e, 1, "test").await.unwrap();
    assert!(matches!(
        svc.check(&e, &rid2, svc.request_secret(&rid2).as_deref()).await.unwrap(),
        CheckOutcome::Admitted(_)
    ));
    clock.set(T0 + 1801 + 600 + 301);
    let err = vwr_core::ApiError::from(
        svc.check(&e, &rid2, svc.request_secret(&rid2).as_deref()).await.unwrap_err(),
    );
    assert_eq!(err.code.as_str(), "admission_expired");
}

#[tokio::test]
async fn the_sites_release_ends_the_session_and_hands_the_place_on() {
    let app = common::app();
    let e = ev("rel");
    let patch = ConfigPatch {
        mode: Some(OutflowMode::TargetArrivals),
        target_arrivals_per_minute: Some(60),
        interval_seconds: Some(1),
        ..Default::default()
    };
    app.svc.activate(&e, patch, "test").await.unwrap();
    let mut rids = Vec::new();
    for _ in 0..10 {
        rids.push(
            app.svc
                .assign(&e, &vwr_tier1::service::JoinProof::default())
                .await
                .unwrap()
                .request_id()
                .to_owned(),
        );
    }
    app.clock.set(T0 + 1);
    assert!(matches!(app.svc.advance_event(&e).await.unwrap(), StepOutcome::Advanced { to: 1, .. }));
    let token = match app.svc.check(&e, &rids[0], app.svc.request_secret(&rids[0]).as_deref()).await.unwrap()
    {
        CheckOutcome::Admitted(a) => a.token,
        other => panic!("{other:?}"),
    };
    // Without a token, or with a forged one: refused, nothing changes.
    let r = common::call(&app, "POST", "/vwr/release/rel", None, false).await;
    assert_eq!((r.status.as_u16(), r.body["error"].as_str()), (401, Some("invalid_token")));
    let released = common::call_with(&app, "POST", "/vwr/release/rel", &[("x-vwr-token", &token)]).await;
    assert_eq!(released.status.as_u16(), 204);
    let cleared = released.headers.get("set-cookie").unwrap().to_str().unwrap();
    assert!(cleared.starts_with("vwr_t1_rel=;") && cleared.contains("Max-Age=0"), "{cleared}");
    assert_eq!(app.svc.status(&e).await.unwrap().outflow.released, 1);
    // Idempotent.
    let again = common::call_with(&app, "POST", "/vwr/release/rel", &[("x-vwr-token", &token)]).await;
    assert_eq!(again.status.as_u16(), 204);
    assert_eq!(app.svc.status(&e).await.unwrap().outflow.released, 1);
    // The session is over: no token again.
    let err = vwr_core::ApiError::from(
        app.svc.check(&e, &rids[0], app.svc.request_secret(&rids[0]).as_deref()).await.unwrap_err(),
    );
    assert_eq!((err.status.as_u16(), err.code.as_str()), (410, "session_ended"));
    // The next step hands the released place on: 1 for the target plus 1 released.
    app.clock.set(T0 + 2);
    assert!(matches!(app.svc.advance_event(&e).await.unwrap(), StepOutcome::Advanced { from: 1, to: 3, .. }));
    let st = common::call(&app, "GET", "/api/admin/vwr/status/rel", None, true).await;
    assert_eq!(st.body["outflow"]["mode"], json!("targetArrivals"));
    assert_eq!(st.body["outflow"]["targetPerMinute"], json!(60));
}
