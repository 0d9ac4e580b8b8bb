//! Model-based property test: random interleavings of check / status / heartbeat / leave /
//! worker step / cleanup / threshold change / clock moves / data losses on the in-memory store
//! (the model) and on Redis must give the same answers — silences, ghosts, restored places and
//! places given back by holds after a loss included. The Redis scripts read Redis `TIME`; the test
//! moves their clock with the store's time offset, set before every operation so both sides
//! see the same whole second. Timeouts end in .5 s so the few milliseconds between the two
//! clocks never decide anything.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use vwr_core::EventId;
use vwr_core::hold::Held;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::model::{
    AdmitReport, HoldProof, LineOrder, LineScore, Place, StoreError, Tier2Settings, Touch,
};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::RedisStore;

#[derive(Debug, Clone)]
enum Op {
    Check {
        user: u8,
        borrow: bool,
    },
    Status {
        user: u8,
        touch: bool,
    },
    Leave {
        user: u8,
    },
    Admit,
    Cleanup,
    Threshold {
        t: u64,
    },
    Sleep {
        secs: u64,
    },
    /// Take up to 3 notices; acknowledge them all (`ack`) or none (a crashed worker: they
    /// come back when their lease ends).
    Notices {
        ack: bool,
    },
    Retire,
    /// The line document's view.
    Line,
    /// The store loses the event's data (a Redis restarted without it); the registration comes
    /// back from the durable copy (`Rehydrate`).
    Lose,
    /// `check` with the hold the user's last answer would have signed into their identity
    /// (docs/invariants.md#27).
    CheckHolding {
        user: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..8, proptest::bool::weighted(0.1)).prop_map(|(user, borrow)| Op::Check { user, borrow }),
        3 => (0u8..8, any::<bool>()).prop_map(|(user, touch)| Op::Status { user, touch }),
        2 => (0u8..8).prop_map(|user| Op::Leave { user }),
        3 => Just(Op::Admit),
        1 => Just(Op::Cleanup),
        1 => (1u64..5).prop_map(|t| Op::Threshold { t }),
        3 => prop_oneof![Just(1u64), Just(5), Just(20), Just(31), Just(59), Just(61), Just(100), Just(200), Just(601)]
            .prop_map(|secs| Op::Sleep { secs }),
        1 => any::<bool>().prop_map(|ack| Op::Notices { ack }),
        1 => Just(Op::Retire),
        2 => Just(Op::Line),
        1 => Just(Op::Lose),
        3 => (0u8..8).prop_map(|user| Op::CheckHolding { user }),
    ]
}

/// `track`: with a waiting timeout (waiting users heard from), else without (the default).
fn settings(track: bool) -> Tier2Settings {
    Tier2Settings {
        active_ttl_ms: 600_500,
        active_heartbeat_timeout_ms: 30_500,
        waiting_timeout_ms: if track { 150_500 } else { 0 },
        collect_ms: 5_500,
        batch_max: 2,
        cleanup_limit: 1000,
        notice_cap: 5,
        default_threshold: 2,
        entry_token_ttl_ms: 20_500,
        notice_lease_ms: 30_500,
        retire_idle_ms: 100_500,
        // Sleeps of 20 s and more between cleanups are silences; with 3 people in, 10.5 s
        // without a call is one too (docs/invariants.md#23).
        silence_after_ms: 10_500,
        silence_crowd: 3,
        ghost_ttl_ms: 200_500,
    }
}

/// A comparable rendering of a place (admission times → their difference only).
fn norm_place(p: &Place) -> String {
    match p {
        Place::Queued { position, figures, restored, score } => {
            format!("queued {position} {figures:?} restored={restored} score={}", score_text(*score))
        }
        Place::Active { admission, fresh, restored, figures } => format!(
            "active {} ttl={} token={} fresh={fresh} restored={restored} {figures:?}",
            admission.jti,
            admission.expires_at_ms - admission.admitted_at_ms,
            // Token ends are `now + 20.5 s` on each side's clock, a few ms apart: whole seconds.
            admission.token_expires_at_ms.saturating_sub(admission.admitted_at_ms) / 1000,
        ),
    }
}

/// A line score as both stores give it: tier-1 positions (and 0) exactly; arrival stamps (µs
/// of each side's clock, a few apart) only as present.
fn score_text(score: Option<u64>) -> String {
    match score {
        Some(s) if s < 1_000_000_000 => s.to_string(),
        Some(_) => "stamp".into(),
        None => "-".into(),
    }
}

fn norm<T>(r: Result<T, StoreError>, f: impl Fn(&T) -> String) -> String {
    match r {
        Ok(v) => f(&v),
        Err(e) => format!("error {e}"),
    }
}

/// The hold tier 2 signs for a place (`None`: a queued place answered without its score).
fn hold_of(place: &Place, issued_at: u64) -> Option<HoldProof> {
    let held = match place {
        Place::Queued { score: Some(score), .. } => Held::Waiting { score: *score },
        Place::Queued { score: None, .. } => return None,
        Place::Active { admission, .. } => Held::Admitted(admission.clone()),
    };
    Some(HoldProof { held, issued_at })
}

/// A user's tier-1 position; `borrow` uses another user's.
fn score_of(order: LineOrder, u: u8, borrow: bool) -> LineScore {
    match order {
        LineOrder::Arrival => LineScore::Arrival,
        LineOrder::Tier1 => LineScore::Tier1Position(100 - u64::from(u) * 7 + u64::from(borrow)),
    }
}

/// Applies `op` to `store`: the comparable answer, and the place it answered, if any. `hold`:
/// the proof a `CheckHolding` brings.
async fn apply(
    store: &dyn AdmissionStore,
    event: &EventId,
    order: LineOrder,
    op: &Op,
    i: usize,
    s: &Tier2Settings,
    hold: Option<&HoldProof>,
) -> (String, Option<Place>) {
    let s = *s;
    let user = |u: u8| format!("user{u}");
    let placed = |r: Result<Place, StoreError>| (norm(r.clone(), norm_place), r.ok());
    let text = match op {
        Op::Check { user: u, borrow } => {
            return placed(
                store.check(event, &user(*u), score_of(order, *u, *borrow), &format!("j{i}"), &s).await,
            );
        }
        Op::CheckHolding { user: u } => {
            let score = score_of(order, *u, false);
            return placed(store.check_in(event, &user(*u), score, &format!("j{i}"), &s, true, hold).await);
        }
        Op::Lose => String::new(),
        Op::Status { user: u, touch } => {
            // A touching status hands out a fresh entry token; a plain one (heartbeat) none.
            let ttl = if *touch { s.entry_token_ttl_ms } else { 0 };
            let r = store.status(event, &user(*u), if *touch { Touch::Any } else { Touch::No }, ttl).await;
            let place = r.as_ref().ok().cloned().flatten();
            return (norm(r, |p| p.as_ref().map_or("none".to_owned(), norm_place)), place);
        }
        Op::Leave { user: u } => norm(store.leave(event, &user(*u)).await, |l| format!("{l:?}")),
        // The time since the last check is measured on each side's own clock, a few ms apart:
        // compared in whole seconds (the model's clock only moves by whole seconds).
        Op::Admit => norm(store.admit(event, &format!("w{i}"), &s).await, |r| {
            format!("{:?}", AdmitReport { idle_ms: (r.idle_ms + 500) / 1000, ..r.clone() })
        }),
        Op::Cleanup => norm(store.cleanup(event, &s).await, |c| format!("{c:?}")),
        Op::Threshold { t } => {
            norm(store.register(event, *t, order, vwr_tier2::model::RegisterMode::Admin).await, |m| {
                format!("{m:?}")
            })
        }
        Op::Sleep { .. } => String::new(),
        Op::Notices { ack } => match store.take_notices(event, 3, s.notice_lease_ms).await {
            Ok(taken) => {
                if *ack && let Err(e) = store.ack_notices(event, &taken, &[]).await {
                    return (format!("error {e}"), None);
                }
                taken
                    .iter()
                    .map(|n| format!("{}:{}:{}", n.user_id, n.jti, n.attempts))
                    .collect::<Vec<_>>()
                    .join(",")
            }
            Err(e) => format!("error {e}"),
        },
        Op::Retire => norm(store.retire(event, s.retire_idle_ms).await, |r| format!("{r:?}")),
        Op::Line => norm(store.line(event).await, |v| {
            let marks: Vec<String> =
                v.marks.iter().map(|(p, s)| format!("{p}@{}", score_text(Some(*s)))).collect();
            format!("{:?} front={} marks={}", v.figures, score_text(v.front), marks.join(","))
        }),
    };
    (text, None)
}

async fn run_case(
    redis: &RedisStore,
    order: LineOrder,
    track: bool,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let event = common::unique_event("model");
    let result = run_ops(redis, &event, order, &settings(track), ops).await;
    redis.set_time_offset_ms(0);
    redis.purge(&event).await.map_err(|e| TestCaseError::fail(e.to_string()))?;
    result
}

async fn run_ops(
    redis: &RedisStore,
    event: &EventId,
    order: LineOrder,
    s: &Tier2Settings,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let event = event.clone();
    let clock = Arc::new(ManualClock::new(vwr_core::time::now_secs()));
    let model = MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>);
    redis.set_time_offset_ms(clock.now_millis() as i64 - vwr_core::time::now_millis() as i64);
    for store in [&model as &dyn AdmissionStore, redis] {
        store
            .register(&event, 2, order, vwr_tier2::model::RegisterMode::Admin)
            .await
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    // The hold each user's identity would carry: signed at their last answer with a place.
    let mut holds: std::collections::HashMap<u8, HoldProof> = std::collections::HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        if let Op::Sleep { secs } = op {
            clock.advance(*secs);
            continue;
        }
        // Align the scripts' clock with the model's for this operation, never moving it back
        // (arrival stamps must stay monotonic, as Redis TIME is).
        let offset = clock.now_millis() as i64 - vwr_core::time::now_millis() as i64;
        redis.set_time_offset_ms(offset.max(redis.time_offset_ms()));
        if let Op::Lose = op {
            model.purge(&event);
            redis.purge(&event).await.map_err(|e| TestCaseError::fail(e.to_string()))?;
            for store in [&model as &dyn AdmissionStore, redis] {
                store
                    .register(&event, 2, order, vwr_tier2::model::RegisterMode::Rehydrate)
                    .await
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            continue;
        }
        // A place in an arrival line is a stamp of each side's own clock (a few µs apart): a
        // hold of one is given to both only in a tier-1 line, where scores are positions.
        let user_of = |op: &Op| match op {
            Op::Check { user, .. } | Op::CheckHolding { user } | Op::Status { user, .. } => Some(*user),
            _ => None,
        };
        let hold = match op {
            Op::CheckHolding { user } => holds
                .get(user)
                .filter(|h| order == LineOrder::Tier1 || matches!(h.held, Held::Admitted(_)))
                .cloned(),
            _ => None,
        };
        let (want, place) = apply(&model, &event, order, op, i, s, hold.as_ref()).await;
        let (got, _) = apply(redis, &event, order, op, i, s, hold.as_ref()).await;
        prop_assert_eq!(&got, &want, "op {} {:?} diverged (hold {:?})", i, op, hold);
        if let (Some(u), Some(p)) = (user_of(op), place)
            && let Some(h) = hold_of(&p, clock.now_secs())
        {
            holds.insert(u, h);
        }
        let (a, b) = (model.snapshot(&event).await.unwrap(), redis.snapshot(&event).await.unwrap());
        prop_assert_eq!(a, b, "snapshot after op {} {:?}", i, op);
        prop_assert_eq!(a.in_both, 0);
        let indexed = |s: Vec<EventId>| s.contains(&event);
        prop_assert_eq!(
            indexed(model.events().await.unwrap()),
            indexed(redis.events().await.unwrap()),
            "index after op {} {:?}",
            i,
            op
        );
    }
    Ok(())
}

#[test]
fn memory_and_redis_stores_agree() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let redis = rt.block_on(common::redis());
    let cases = std::env::var("VWR_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256);
    let mut runner = TestRunner::new(Config { cases, max_shrink_iters: 500, ..Config::default() });
    let strategy = (
        prop_oneof![Just(LineOrder::Arrival), Just(LineOrder::Tier1)],
        any::<bool>(),
        proptest::collection::vec(op(), 1..60),
    );
    let result =
        runner.run(&strategy, |(order, track, ops)| rt.block_on(run_case(&redis, order, track, &ops)));
    if let Err(e) = result {
        panic!("{e}");
    }
}
