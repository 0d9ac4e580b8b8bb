//! Standby events (docs/lifecycle.md#standby): known but ungated until their alarm fires,
//! then opened by the advancer in arrival order, audited — with alarms set by hand (`vwr dev`'s)
//! on the in-memory model, and with CloudWatch (moto server) on DynamoDB (moto).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use aws_sdk_cloudwatch::types::StateValue;
use common::ev;
use http::StatusCode;
use serde_json::Value;
use vwr_core::ApiError;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier1::edge_sync::MemoryEdgeConfig;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{ConfigPatch, EventState};
use vwr_tier1::service::{JoinProof, StandbyAlarmState};
use vwr_tier1::store::{AlarmStates, ManualAlarms, PositionStore};
use vwr_tier1::{Tier1Clients, Tier1Service};
use vwr_tier1_store::alarms::{ALARM_CACHE, CloudWatchAlarmStates};

const T0: u64 = 1_800_000_000;

/// Where the alarm's state is set: by hand, or in CloudWatch.
enum Alarms {
    Manual(Arc<ManualAlarms>),
    CloudWatch(aws_sdk_cloudwatch::Client),
}

impl Alarms {
    async fn set(&self, name: &str, alarm: bool) {
        match self {
            Self::Manual(m) => m.set(name, alarm),
            Self::CloudWatch(cw) => {
                let state = if alarm { StateValue::Alarm } else { StateValue::Ok };
                cw.set_alarm_state()
                    .alarm_name(name)
                    .state_value(state)
                    .state_reason("test")
                    .send()
                    .await
                    .unwrap();
            }
        }
    }
}

fn code(e: vwr_tier1::service::Tier1Error) -> (StatusCode, String) {
    let e = ApiError::from(e);
    (e.status, e.code.as_str().to_owned())
}

/// Each side: its name, store, where alarms are set, what reads them (on the test's clock),
/// and the alarm's name.
type Side = (&'static str, Arc<dyn PositionStore>, Alarms, Arc<dyn AlarmStates>, String);

async fn sides(tag: &str, clock: &Arc<ManualClock>) -> Vec<Side> {
    let manual = Arc::new(ManualAlarms::default());
    let cw = common::cloudwatch().await;
    let name = format!("cf-requests-{tag}-{}", vwr_core::time::now_millis());
    common::metric_alarm(&cw, &name).await;
    vec![
        (
            "memory",
            Arc::new(MemoryStore::new()),
            Alarms::Manual(Arc::clone(&manual)),
            manual,
            "cf-requests".into(),
        ),
        (
            "dynamodb+cloudwatch",
            Arc::new(common::dynamo_store(tag).await),
            Alarms::CloudWatch(cw.clone()),
            {
                let states: Arc<dyn AlarmStates> =
                    Arc::new(CloudWatchAlarmStates::new(cw, Arc::clone(clock) as Arc<dyn Clock>));
                states
            },
            name,
        ),
    ]
}

fn service(
    store: Arc<dyn PositionStore>,
    alarms: Arc<dyn AlarmStates>,
    clock: Arc<ManualClock>,
) -> (Tier1Service, Arc<MemoryEdgeConfig>) {
    let edge = Arc::new(MemoryEdgeConfig::new(r#"{"rules":[],"failMode":"closed"}"#));
    let clients =
        Tier1Clients { edge: Some(edge.clone()), alarms: Some(alarms), ..Tier1Clients::new(store, clock) };
    (common::service_with(clients, |_| {}), edge)
}

fn edge_events(edge: &MemoryEdgeConfig) -> Value {
    serde_json::from_str::<Value>(&edge.value()).unwrap()["events"].clone()
}

#[tokio::test]
async fn a_standby_event_opens_when_its_alarm_fires() {
    let clock = Arc::new(ManualClock::new(T0));
    for (name, store, alarms, states, alarm) in sides("standby", &clock).await {
        let (svc, edge) = service(store, states, clock.clone());
        let e1 = ev("e1");
        let patch = ConfigPatch { batch_size: Some(2), interval_seconds: Some(1), ..Default::default() };
        alarms.set(&alarm, false).await;
        let st = svc.standby(&e1, alarm.clone(), patch, "ops").await.unwrap();
        assert_eq!(st.state, EventState::Standby, "{name}");
        assert_eq!(st.standby_alarm.as_deref(), Some(alarm.as_str()), "{name}");
        assert_eq!(st.standby_alarm_state, Some(StandbyAlarmState::Ok), "{name}");
        // Known, not gated: nobody lines up, the edge lets everyone through.
        assert_eq!(
            code(svc.assign(&e1, &JoinProof::default()).await.unwrap_err()),
            (StatusCode::CONFLICT, "event_not_active".into())
        );
        assert!(edge_events(&edge).as_array().is_none_or(|a| a.is_empty()), "{name}: {}", edge.value());
        assert_eq!(svc.public_status(&e1).await.unwrap().state, EventState::Standby, "{name}");

        // The alarm is OK: the advancer leaves it.
        clock.advance(1);
        svc.advance_due().await.unwrap();
        assert_eq!(svc.status(&e1).await.unwrap().state, EventState::Standby, "{name}");

        // It fires: the next advancer pass opens the event, gated from then on.
        alarms.set(&alarm, true).await;
        clock.advance(ALARM_CACHE.as_secs()); // a reading is used that long
        assert_eq!(
            svc.status(&e1).await.unwrap().standby_alarm_state,
            Some(StandbyAlarmState::Alarm),
            "{name}"
        );
        svc.advance_due().await.unwrap();
        assert_eq!(svc.status(&e1).await.unwrap().state, EventState::Open, "{name}");
        assert_eq!(edge_events(&edge), serde_json::json!(["e1"]), "{name}");
        // In arrival order: no pre-queue, no draw.
        for want in 1..=3u64 {
            assert_eq!(
                svc.assign(&e1, &JoinProof::default()).await.unwrap().position(),
                Some(want),
                "{name}"
            );
        }
        let audit = svc.audit(&e1).await.unwrap();
        let trail: Vec<(&str, &str)> = audit.iter().map(|a| (a.action.as_str(), a.actor.as_str())).collect();
        assert_eq!(trail, [("standby", "ops"), ("standby_open", "advancer")], "{name}");
        assert_eq!(audit[0].after["standbyAlarm"], alarm.as_str(), "{name}");

        // Refused, changing nothing: a standby of an open event, no alarm name, an ended one.
        assert_eq!(
            code(svc.standby(&e1, alarm.clone(), ConfigPatch::default(), "ops").await.unwrap_err()).0,
            StatusCode::CONFLICT
        );
        let e2 = ev("e2");
        assert_eq!(
            code(svc.standby(&e2, String::new(), ConfigPatch::default(), "ops").await.unwrap_err()).0,
            StatusCode::BAD_REQUEST
        );
        assert_eq!(code(svc.end_standby(&e2, "ops").await.unwrap_err()).0, StatusCode::NOT_FOUND);

        // Ended by hand: inactive; its alarm firing later opens nothing.
        svc.standby(&e2, alarm.clone(), ConfigPatch::default(), "ops").await.unwrap();
        assert_eq!(svc.end_standby(&e2, "ops").await.unwrap().state, EventState::Inactive, "{name}");
        assert_eq!(code(svc.end_standby(&e2, "ops").await.unwrap_err()).0, StatusCode::CONFLICT);
        clock.advance(ALARM_CACHE.as_secs());
        svc.advance_due().await.unwrap();
        assert_eq!(svc.status(&e2).await.unwrap().state, EventState::Inactive, "{name}");
    }
}

/// An alarm that cannot be read — a typo, one outside `standby_alarm_names`, in `vwr dev` one
/// never set — is refused when the standby is set: 400 `standby_alarm_unreadable`, nothing
/// changed (before, it was taken with 200 and the event could never open). One that becomes
/// unreadable later (deleted) leaves the standby alone, and status says `unreadable`.
#[tokio::test]
async fn an_unreadable_alarm_is_refused_and_one_lost_later_is_shown() {
    let clock = Arc::new(ManualClock::new(T0));
    for (name, store, _alarms, states, alarm) in sides("unreadable", &clock).await {
        let (svc, edge) = service(store, states, clock.clone());
        let e1 = ev("e1");
        let typo = format!("{alarm}-typo");
        let err = svc.standby(&e1, typo.clone(), ConfigPatch::default(), "ops").await.unwrap_err();
        assert_eq!(code(err), (StatusCode::BAD_REQUEST, "standby_alarm_unreadable".into()), "{name}");
        assert_eq!(
            code(svc.status(&e1).await.unwrap_err()).0,
            StatusCode::NOT_FOUND,
            "{name}: nothing written"
        );
        assert!(edge_events(&edge).as_array().is_none_or(|a| a.is_empty()), "{name}");
    }

    // Readable when set, deleted afterwards: the standby stays, ungated, and says why.
    let cw = common::cloudwatch().await;
    let alarm = format!("cf-requests-lost-{}", vwr_core::time::now_millis());
    common::metric_alarm(&cw, &alarm).await;
    let states: Arc<dyn AlarmStates> =
        Arc::new(CloudWatchAlarmStates::new(cw.clone(), clock.clone() as Arc<dyn Clock>));
    let (svc, _) = service(Arc::new(MemoryStore::new()), states, clock.clone());
    let e1 = ev("e1");
    let st = svc.standby(&e1, alarm.clone(), ConfigPatch::default(), "ops").await.unwrap();
    assert_eq!(st.standby_alarm_state, Some(StandbyAlarmState::Ok));
    cw.delete_alarms().alarm_names(&alarm).send().await.unwrap();
    clock.advance(ALARM_CACHE.as_secs());
    svc.advance_due().await.unwrap();
    let st = svc.status(&e1).await.unwrap();
    assert_eq!(
        (st.state, st.standby_alarm_state),
        (EventState::Standby, Some(StandbyAlarmState::Unreadable))
    );
}
