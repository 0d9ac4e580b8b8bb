//! Tier-2 wait estimates from tier 2's own data (docs/api.md#poll-hints-and-estimates): the
//! store records the event's first admission once (Redis meta `first`, a field of the model)
//! and reports the whole seconds since; the service estimates from the configured rate
//! (threshold ÷ admission TTL) until that is a minute, then from the measured 60 s rate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use vwr_core::time::Clock;
use vwr_tier2::Tier2Clients;
use vwr_tier2::identity::{Caller, Source};
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::model::{LineOrder, Tier2Settings};
use vwr_tier2::store::AdmissionStore;

fn caller(user: &str) -> Caller {
    Caller { user: user.into(), tier1_position: None, source: Source::DevHeader, proof: None }
}

/// Threshold 2, then 3, admissions of 100 s: the configured rate is 0.02/s, then 0.03/s.
/// a and b are admitted at t0, c by the worker at t0 + 30 s; d waits first in line. At
/// t0 + 59 s d's wait still comes from the configured rate (⌈1 ÷ 0.03⌉ = 34 s, where the
/// last 60 s would say 3 admissions, 20 s); at t0 + 60 s, from the measured one (only c's
/// admission is in the window: 60 s) — which also shows that c's admission did not move the
/// first admission's time. Redis and the model answer alike.
#[tokio::test]
async fn estimates_use_the_configured_rate_until_the_first_admission_is_a_minute_old() {
    let redis = Arc::new(common::redis().await);
    let clock = common::manual_clock();
    let memory = Arc::new(MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>));
    let s = Tier2Settings {
        active_ttl_ms: 100_000,
        active_heartbeat_timeout_ms: 3_600_000,
        waiting_timeout_ms: 3_600_000,
        ..Tier2Settings::default()
    };
    let e = common::unique_event("estimates");
    let t0 = clock.now_secs();
    let mut answers = Vec::new();
    for store in
        [Arc::clone(&memory) as Arc<dyn AdmissionStore>, Arc::clone(&redis) as Arc<dyn AdmissionStore>]
    {
        let clients = Tier2Clients {
            clock: Arc::clone(&clock) as Arc<dyn Clock>,
            ..Tier2Clients::new(Arc::clone(&store))
        };
        let svc = common::service_with(clients, s);
        let at = |secs: u64| {
            clock.set(t0 + secs);
            redis.set_time_offset_ms(clock.now_millis() as i64 - vwr_core::time::now_millis() as i64);
        };
        let mut seen = Vec::new();
        at(0);
        svc.set_threshold(&e, 2, Some(LineOrder::Arrival)).await.unwrap();
        for u in ["a", "b"] {
            svc.check(&e, &caller(u)).await.unwrap();
        }
        let c = svc.check(&e, &caller("c")).await.unwrap();
        seen.push(("c at t0", c.position, c.estimated_wait_seconds));
        let d = svc.check(&e, &caller("d")).await.unwrap();
        seen.push(("d at t0", d.position, d.estimated_wait_seconds));
        at(30);
        svc.set_threshold(&e, 3, None).await.unwrap();
        let step = store.admit(&e, "w", &s).await.unwrap();
        assert_eq!(step.admitted.len(), 1);
        for secs in [59, 60] {
            at(secs);
            let d = svc.status(&e, "d").await.unwrap();
            seen.push((
                if secs == 59 { "d at t0 + 59" } else { "d at t0 + 60" },
                d.position,
                d.estimated_wait_seconds,
            ));
        }
        answers.push(seen);
    }
    redis.set_time_offset_ms(0);
    redis.purge(&e).await.unwrap();
    assert_eq!(
        answers[0],
        [("c at t0", 1, 50), ("d at t0", 2, 100), ("d at t0 + 59", 1, 34), ("d at t0 + 60", 1, 60)],
        "the model"
    );
    assert_eq!(answers[1], answers[0], "Redis against the model");
}
