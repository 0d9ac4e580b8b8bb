//! The health gate's alarms against CloudWatch (moto server): an alarm in ALARM holds the
//! events it names, and the hold ends when it goes back to OK (docs/outflow.md#health-gate).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use aws_sdk_cloudwatch::types::StateValue;
use common::ev;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier1::Tier1Clients;
use vwr_tier1::config::HealthAlarms;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{ConfigPatch, HoldBy};
use vwr_tier1::service::StepOutcome;
use vwr_tier1::store::HealthSignal;
use vwr_tier1_store::alarms::{ALARM_CACHE, CloudWatchAlarms};

const T0: u64 = 1_800_000_000;

async fn set(cw: &aws_sdk_cloudwatch::Client, name: &str, state: StateValue) {
    cw.set_alarm_state().alarm_name(name).state_value(state).state_reason("test").send().await.unwrap();
}

#[tokio::test]
async fn an_alarm_in_alarm_holds_the_events_it_names() {
    let cw = common::cloudwatch().await;
    let tag = vwr_core::time::now_millis();
    let (global, e1_only) = (format!("origin-5xx-{tag}"), format!("e1-errors-{tag}"));
    common::metric_alarm(&cw, &global).await;
    common::metric_alarm(&cw, &e1_only).await;
    set(&cw, &global, StateValue::Ok).await;
    set(&cw, &e1_only, StateValue::Ok).await;
    let clock = Arc::new(ManualClock::new(T0));
    let alarms = HealthAlarms::parse(&format!("{global},e1={e1_only}")).unwrap();
    let signal = Arc::new(CloudWatchAlarms::new(cw.clone(), alarms, Arc::clone(&clock) as Arc<dyn Clock>));
    let (e1, e2) = (ev("e1"), ev("e2"));
    assert_eq!(signal.alarm(&e1).await.unwrap(), None);

    set(&cw, &e1_only, StateValue::Alarm).await;
    clock.advance(ALARM_CACHE.as_secs());
    assert_eq!(signal.alarm(&e1).await.unwrap().as_deref(), Some(e1_only.as_str()));
    assert_eq!(signal.alarm(&e2).await.unwrap(), None, "a per-event alarm holds only its event");
    set(&cw, &global, StateValue::Alarm).await;
    clock.advance(ALARM_CACHE.as_secs());
    assert_eq!(signal.alarm(&e2).await.unwrap().as_deref(), Some(global.as_str()));

    // Through the advancer: held while in ALARM, moving again once OK.
    let clients = Tier1Clients {
        health: Some(Arc::clone(&signal) as Arc<dyn HealthSignal>),
        ..Tier1Clients::new(Arc::new(MemoryStore::new()), Arc::clone(&clock) as Arc<dyn Clock>)
    };
    let svc = common::service_with(clients, |_| {});
    let patch = ConfigPatch { batch_size: Some(5), interval_seconds: Some(1), ..Default::default() };
    svc.activate(&e2, patch, "test").await.unwrap();
    for _ in 0..20 {
        svc.assign(&e2, &vwr_tier1::service::JoinProof::default()).await.unwrap();
    }
    clock.advance(1);
    match svc.advance_event(&e2).await.unwrap() {
        StepOutcome::Held { by: HoldBy::Alarm, reason, .. } => assert_eq!(reason, global),
        other => panic!("{other:?}"),
    }
    set(&cw, &global, StateValue::Ok).await;
    clock.advance(ALARM_CACHE.as_secs());
    assert!(matches!(svc.advance_event(&e2).await.unwrap(), StepOutcome::Advanced { from: 0, to: 5, .. }));
}
