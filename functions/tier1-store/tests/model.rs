//! Model-based property test: random sequences of assign / check / advance / advancer run /
//! activate / deactivate / schedule / pause / resume / close / message / status / audit /
//! clock moves run on the in-memory store (the model) and on the DynamoDB store (moto
//! server); every answer must agree, pre-queue draws included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use vwr_core::EventId;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier1::Tier1Service;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{CloseReason, ConfigPatch, Message, OutflowMode};
use vwr_tier1::service::{CheckOutcome, ScheduleRequest, Tier1Settings};
use vwr_tier1::store::PositionStore;
use vwr_tier1_store::dynamo::DynamoStore;

const T0: u64 = 1_800_000_000;

#[derive(Debug, Clone)]
enum Op {
    Activate {
        ev: usize,
        batch: Option<u64>,
        interval: Option<u64>,
        shards: Option<u32>,
        ttl: Option<u64>,
        target: Option<u64>,
    },
    Health {
        ev: usize,
        ok: bool,
    },
    Release {
        ev: usize,
        ticket: usize,
    },
    Deactivate {
        ev: usize,
    },
    Assign {
        ev: usize,
    },
    Check {
        ev: usize,
        ticket: usize,
    },
    Advance {
        ev: usize,
        by: u64,
    },
    Step {
        ev: usize,
    },
    Sleep {
        secs: u64,
    },
    Status {
        ev: usize,
    },
    Schedule {
        ev: usize,
        pre_in: u64,
        open_after: u64,
        close_after: Option<u64>,
        shards: Option<u32>,
    },
    Pause {
        ev: usize,
        msg: bool,
    },
    Resume {
        ev: usize,
    },
    Close {
        ev: usize,
        sold_out: bool,
    },
    SetMessage {
        ev: usize,
        msg: Option<u8>,
    },
    Public {
        ev: usize,
    },
    Audit {
        ev: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let ev = 0usize..3;
    prop_oneof![
        2 => (ev.clone(), proptest::option::of(0u64..6), proptest::option::of(1u64..4), proptest::option::of(1u32..4), proptest::option::of(prop_oneof![Just(60u64), Just(120)]))
            .prop_flat_map(|(ev, batch, interval, shards, ttl)| (Just((ev, batch, interval, shards, ttl)), proptest::option::of(1u64..600)))
            .prop_map(|((ev, batch, interval, shards, ttl), target)| Op::Activate { ev, batch, interval, shards, ttl, target }),
        1 => (ev.clone(), any::<bool>()).prop_map(|(ev, ok)| Op::Health { ev, ok }),
        1 => (ev.clone(), 0usize..64).prop_map(|(ev, ticket)| Op::Release { ev, ticket }),
        1 => ev.clone().prop_map(|ev| Op::Deactivate { ev }),
        6 => ev.clone().prop_map(|ev| Op::Assign { ev }),
        5 => (ev.clone(), 0usize..64).prop_map(|(ev, ticket)| Op::Check { ev, ticket }),
        2 => (ev.clone(), 1u64..8).prop_map(|(ev, by)| Op::Advance { ev, by }),
        3 => ev.clone().prop_map(|ev| Op::Step { ev }),
        2 => (1u64..90).prop_map(|secs| Op::Sleep { secs }),
        2 => ev.clone().prop_map(|ev| Op::Status { ev }),
        2 => (ev.clone(), 0u64..20, 1u64..40, proptest::option::of(1u64..100), proptest::option::of(1u32..4))
            .prop_map(|(ev, pre_in, open_after, close_after, shards)| Op::Schedule { ev, pre_in, open_after, close_after, shards }),
        1 => (ev.clone(), any::<bool>()).prop_map(|(ev, msg)| Op::Pause { ev, msg }),
        1 => ev.clone().prop_map(|ev| Op::Resume { ev }),
        1 => (ev.clone(), any::<bool>()).prop_map(|(ev, sold_out)| Op::Close { ev, sold_out }),
        1 => (ev.clone(), proptest::option::of(0u8..3)).prop_map(|(ev, msg)| Op::SetMessage { ev, msg }),
        1 => ev.clone().prop_map(|ev| Op::Public { ev }),
        1 => ev.prop_map(|ev| Op::Audit { ev }),
    ]
}

struct Side {
    svc: Tier1Service,
    /// ticket → jti of its first admission on this side.
    jtis: HashMap<String, String>,
    /// ticket → the last token this side handed out for it.
    tokens: HashMap<String, String>,
}

fn side(
    store: Arc<dyn PositionStore>,
    clock: Arc<ManualClock>,
    tokens: &vwr_core::token::Tier1Tokens,
) -> Side {
    let settings = Tier1Settings {
        cache_ttl: std::time::Duration::ZERO,
        shard_start: Some(0),
        fixed_seed: Some("5eed".repeat(16)),
        ..Default::default()
    };
    Side {
        svc: Tier1Service::new(store, tokens.clone(), settings, clock as Arc<dyn Clock>),
        jtis: HashMap::new(),
        tokens: HashMap::new(),
    }
}

/// The comparable result of one operation on one side.
async fn apply(
    side: &mut Side,
    op: &Op,
    events: &[EventId],
    tickets: &[(usize, String)],
) -> Result<String, TestCaseError> {
    let svc = &side.svc;
    let out = match op {
        Op::Activate { ev, batch, interval, shards, ttl, target } => {
            let p = ConfigPatch {
                batch_size: *batch,
                interval_seconds: *interval,
                shards: *shards,
                token_ttl_seconds: *ttl,
                mode: target.map(|_| OutflowMode::TargetArrivals),
                target_arrivals_per_minute: *target,
                reentry_grace_seconds: Some(30),
                max_session_seconds: Some(300),
                ..Default::default()
            };
            format!("{:?}", svc.activate(&events[*ev], p, "test").await.map_err(|e| e.to_string()))
        }
        Op::Deactivate { ev } => {
            format!("{:?}", svc.deactivate(&events[*ev], "test").await.map_err(|e| e.to_string()))
        }
        Op::Assign { ev } => format!(
            "{:?}",
            svc.assign(&events[*ev], &vwr_tier1::service::JoinProof::default())
                .await
                .map_err(|e| e.to_string())
        ),
        Op::Check { ev, ticket } => {
            if tickets.is_empty() {
                return Ok("no tickets".into());
            }
            let (_, t) = &tickets[ticket % tickets.len()];
            match svc.check(&events[*ev], t, svc.request_secret(t).as_deref()).await {
                Ok(CheckOutcome::Waiting(w)) => format!("waiting {w:?}"),
                Ok(CheckOutcome::Prequeue(p)) => format!("prequeue {p:?}"),
                Ok(CheckOutcome::Closed(c)) => format!("closed {c:?}"),
                Ok(CheckOutcome::Admitted(a)) => {
                    let mut claims = svc.tokens().verify(&a.token, &events[*ev], svc.now()).unwrap();
                    side.tokens.insert(t.clone(), a.token.clone());
                    let first = side.jtis.entry(t.clone()).or_insert_with(|| claims.jti.clone());
                    prop_assert_eq!(&claims.jti, first, "a ticket got a second identity");
                    // The place proof is a MAC over the jti: checked, then left out like it.
                    prop_assert!(svc.tokens().link().place_proved(&claims), "an admission without its place proof");
                    claims.jti = String::new();
                    claims.t2 = None;
                    format!("admitted {claims:?} {}", a.expires_at)
                }
                Err(e) => format!("error {e}"),
            }
        }
        Op::Advance { ev, by } => {
            format!("{:?}", svc.advance(&events[*ev], *by, "test").await.map_err(|e| e.to_string()))
        }
        Op::Step { ev } => format!("{:?}", svc.advance_event(&events[*ev]).await.map_err(|e| e.to_string())),
        Op::Sleep { .. } => String::new(),
        Op::Status { ev } => format!("{:?}", svc.status(&events[*ev]).await.map_err(|e| e.to_string())),
        Op::Schedule { ev, pre_in, open_after, close_after, shards } => {
            let now = svc.now();
            let req = ScheduleRequest {
                prequeue_at: now + pre_in,
                open_at: now + pre_in + open_after,
                close_at: close_after.map(|c| now + pre_in + open_after + c),
                config: ConfigPatch {
                    shards: *shards,
                    batch_size: Some(2),
                    interval_seconds: Some(1),
                    ..Default::default()
                },
            };
            format!("{:?}", svc.schedule(&events[*ev], req, "test").await.map_err(|e| e.to_string()))
        }
        Op::Pause { ev, msg } => {
            let m = msg.then(|| Message { en: Some("hold on".into()), ko: None });
            format!("{:?}", svc.pause(&events[*ev], m, "test").await.map_err(|e| e.to_string()))
        }
        Op::Resume { ev } => {
            format!("{:?}", svc.resume(&events[*ev], "test").await.map_err(|e| e.to_string()))
        }
        Op::Close { ev, sold_out } => {
            let r = if *sold_out { CloseReason::SoldOut } else { CloseReason::Ended };
            format!("{:?}", svc.close(&events[*ev], r, None, "test").await.map_err(|e| e.to_string()))
        }
        Op::SetMessage { ev, msg } => {
            let m = msg
                .map(|i| Message {
                    en: Some(format!("note {i}")), ko: (i == 1).then(|| "안내".to_owned())
                });
            format!("{:?}", svc.set_message(&events[*ev], m, "test").await.map_err(|e| e.to_string()))
        }
        Op::Health { ev, ok } => {
            let reason = (!ok).then(|| "origin 5xx".to_owned());
            format!(
                "{:?}",
                svc.set_health(&events[*ev], *ok, reason, "test").await.map_err(|e| e.to_string())
            )
        }
        Op::Release { ev, ticket } => {
            if tickets.is_empty() {
                return Ok("no tickets".into());
            }
            let (_, t) = &tickets[ticket % tickets.len()];
            match side.tokens.get(t) {
                Some(token) => {
                    format!("{:?}", svc.release(&events[*ev], token).await.map_err(|e| e.to_string()))
                }
                None => "no token".into(),
            }
        }
        Op::Public { ev } => {
            format!("{:?}", svc.public_status(&events[*ev]).await.map_err(|e| e.to_string()))
        }
        Op::Audit { ev } => format!("{:?}", svc.audit(&events[*ev]).await.map_err(|e| e.to_string())),
    };
    Ok(out)
}

static CASE: AtomicU64 = AtomicU64::new(0);

async fn run_case(dynamo: &DynamoStore, ops: &[Op]) -> Result<(), TestCaseError> {
    let case = CASE.fetch_add(1, Ordering::SeqCst);
    let events: Vec<EventId> = (0..3).map(|i| common::ev(&format!("c{case}-e{i}"))).collect();
    let clock = Arc::new(ManualClock::new(T0));
    let tokens = common::tokens();
    let mut model = side(Arc::new(MemoryStore::new()), Arc::clone(&clock), &tokens);
    let mut real = side(Arc::new(dynamo.clone()), Arc::clone(&clock), &tokens);
    let mut tickets: Vec<(usize, String)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if let Op::Sleep { secs } = op {
            clock.advance(*secs);
            continue;
        }
        let want = apply(&mut model, op, &events, &tickets).await?;
        let got = apply(&mut real, op, &events, &tickets).await?;
        prop_assert_eq!(&got, &want, "step {} {:?} diverged", i, op);
        if let Op::Assign { ev } = op
            && let Ok(a) = model.svc.assign(&events[*ev], &vwr_tier1::service::JoinProof::default()).await
        {
            // Keep one more ticket on both sides in step (assign again on the real side too).
            let b = real
                .svc
                .assign(&events[*ev], &vwr_tier1::service::JoinProof::default())
                .await
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(a.request_id(), b.request_id());
            tickets.push((*ev, a.request_id().to_owned()));
        }
    }
    // Final state agrees for every event.
    for ev in &events {
        let a = format!("{:?}", model.svc.status(ev).await.map_err(|e| e.to_string()));
        let b = format!("{:?}", real.svc.status(ev).await.map_err(|e| e.to_string()));
        prop_assert_eq!(b, a);
    }
    Ok(())
}

#[test]
fn memory_and_dynamodb_stores_agree() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dynamo = rt.block_on(common::dynamo_store("model"));
    let cases = std::env::var("VWR_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(40);
    let mut runner = TestRunner::new(Config { cases, max_shrink_iters: 200, ..Config::default() });
    let result =
        runner.run(&proptest::collection::vec(op(), 1..40), |ops| rt.block_on(run_case(&dynamo, &ops)));
    if let Err(e) = result {
        panic!("{e}");
    }
}
