//! Model-based property test: random sequences of assign (plain, with an account's enqueue
//! token, with a proof of work, replays included) / check (also with a token tier 2 renewed) /
//! release (also with a forged token) / advance / advancer run / activate / deactivate /
//! schedule / pause / resume / close / message / status / audit / clock moves run on the
//! in-memory store (the model) and on the DynamoDB store (moto server); every answer must
//! agree, pre-queue draws included. Tickets live 300 s, so pre-queues outlast them and
//! accounts' tickets expire.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use vwr_core::keys::EcKeyring;
use vwr_core::time::{Clock, ManualClock};
use vwr_core::token::{Tier1Claims, Tier1Link};
use vwr_core::{EventId, HmacKeyring};
use vwr_tier1::enqueue::EnqueueVerifier;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{CloseReason, ConfigPatch, Message, OutflowMode};
use vwr_tier1::service::{CheckOutcome, JoinProof, Presented, ScheduleRequest, Tier1Settings};
use vwr_tier1::store::PositionStore;
use vwr_tier1::{Tier1Clients, Tier1Service};
use vwr_tier1_store::dynamo::DynamoStore;

const T0: u64 = 1_800_000_000;
/// Ticket life of both sides: shorter than some pre-queues and sequences.
const TICKET_TTL: u64 = 300;
/// Proof-of-work difficulty of the events that ask for one (cheap to solve).
const POW_BITS: u32 = 4;

#[derive(Debug, Clone)]
enum Op {
    Activate {
        ev: usize,
        batch: Option<u64>,
        interval: Option<u64>,
        shards: Option<u32>,
        ttl: Option<u64>,
        target: Option<u64>,
        pow: bool,
        accounts: bool,
    },
    /// A join with the proofs chosen: an account's enqueue token, a proof of work (the same
    /// `nonce` again is a replay).
    Join {
        ev: usize,
        account: Option<u8>,
        nonce: Option<u8>,
        /// On the side's second instance (a replay there is refused by the store alone).
        elsewhere: bool,
    },
    /// A check presenting the ticket's last token as tier 2 renews it (a later `exp`).
    CheckHeld {
        ev: usize,
        ticket: usize,
    },
    /// A release with the ticket's last token under another `jti`, signed with the edge key.
    ReleaseForged {
        ev: usize,
        ticket: usize,
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
        3 => (ev.clone(), proptest::option::of(0u64..6), proptest::option::of(1u64..4), proptest::option::of(1u32..4), proptest::option::of(prop_oneof![Just(60u64), Just(120)]), proptest::option::of(1u64..600), proptest::bool::weighted(0.5), proptest::bool::weighted(0.5))
            .prop_map(|(ev, batch, interval, shards, ttl, target, pow, accounts)| Op::Activate { ev, batch, interval, shards, ttl, target, pow, accounts }),
        6 => (ev.clone(), proptest::option::weighted(0.8, 0u8..2), proptest::option::weighted(0.8, 0u8..2), any::<bool>()).prop_map(|(ev, account, nonce, elsewhere)| Op::Join { ev, account, nonce, elsewhere }),
        2 => (ev.clone(), 0usize..64).prop_map(|(ev, ticket)| Op::CheckHeld { ev, ticket }),
        1 => (ev.clone(), 0usize..64).prop_map(|(ev, ticket)| Op::ReleaseForged { ev, ticket }),
        1 => (ev.clone(), any::<bool>()).prop_map(|(ev, ok)| Op::Health { ev, ok }),
        1 => (ev.clone(), 0usize..64).prop_map(|(ev, ticket)| Op::Release { ev, ticket }),
        1 => ev.clone().prop_map(|ev| Op::Deactivate { ev }),
        6 => ev.clone().prop_map(|ev| Op::Assign { ev }),
        5 => (ev.clone(), 0usize..64).prop_map(|(ev, ticket)| Op::Check { ev, ticket }),
        2 => (ev.clone(), 1u64..8).prop_map(|(ev, by)| Op::Advance { ev, by }),
        3 => ev.clone().prop_map(|ev| Op::Step { ev }),
        2 => prop_oneof![4 => 1u64..90, 1 => TICKET_TTL - 50..TICKET_TTL + 50].prop_map(|secs| Op::Sleep { secs }),
        2 => ev.clone().prop_map(|ev| Op::Status { ev }),
        2 => (ev.clone(), 0u64..20, 1u64..400, proptest::option::of(1u64..100), proptest::option::of(1u32..4))
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
    /// A second instance on the same store (its own caches and proof-of-work memory).
    other: Tier1Service,
    /// The site's enqueue-token keys (shared by both sides).
    site: EcKeyring,
    /// The ticket the last `Join` answered.
    joined: Option<String>,
    /// ticket → jti of its first admission on this side.
    jtis: HashMap<String, String>,
    /// ticket → the last token this side handed out for it.
    tokens: HashMap<String, String>,
}

fn side(
    store: Arc<dyn PositionStore>,
    clock: Arc<ManualClock>,
    tokens: &vwr_core::token::Tier1Tokens,
    site: &EcKeyring,
) -> Side {
    let settings = Tier1Settings {
        cache_ttl: std::time::Duration::ZERO,
        shard_start: Some(0),
        fixed_seed: Some("5eed".repeat(16)),
        ticket_ttl_secs: TICKET_TTL,
        ..Default::default()
    };
    let verifier = EnqueueVerifier::from_jwks(&serde_json::to_string(&site.jwks()).unwrap()).unwrap();
    let instance = || {
        let mut cfg = common::config(tokens);
        cfg.settings = settings.clone();
        cfg.enqueue = Some(verifier.clone());
        let clients = Tier1Clients::new(Arc::clone(&store), Arc::clone(&clock) as Arc<dyn Clock>);
        vwr_tier1::assemble(&cfg, tokens.clone(), clients)
    };
    Side {
        svc: instance(),
        other: instance(),
        site: site.clone(),
        joined: None,
        jtis: HashMap::new(),
        tokens: HashMap::new(),
    }
}

/// An admitted answer, comparable across the sides: the `jti` (random per side) and the place
/// proof over it left out, after checking the `jti` is the ticket's one identity.
fn admitted_view(
    side: &mut Side,
    ticket: &str,
    event: &EventId,
    token: &str,
    expires_at: u64,
) -> Result<String, TestCaseError> {
    let svc = &side.svc;
    // Through the link: the place proof (a MAC over the jti) is checked, then left out like it.
    let mut claims = svc.tokens().link().verify(token, event, svc.now()).unwrap();
    side.tokens.insert(ticket.to_owned(), token.to_owned());
    let first = side.jtis.entry(ticket.to_owned()).or_insert_with(|| claims.jti.clone());
    prop_assert_eq!(&claims.jti, first, "a ticket got a second identity");
    claims.jti = String::new();
    claims.t2 = None;
    Ok(format!("admitted {claims:?} {expires_at}"))
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
        Op::Activate { ev, batch, interval, shards, ttl, target, pow, accounts } => {
            let p = ConfigPatch {
                batch_size: *batch,
                interval_seconds: *interval,
                shards: *shards,
                token_ttl_seconds: *ttl,
                mode: target.map(|_| OutflowMode::TargetArrivals),
                target_arrivals_per_minute: *target,
                reentry_grace_seconds: Some(30),
                max_session_seconds: Some(300),
                pow_difficulty: Some(if *pow { POW_BITS } else { 0 }),
                enqueue_token_required: Some(*accounts),
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
        Op::Join { ev, account, nonce, elsewhere } => {
            let svc = if *elsewhere { &side.other } else { &side.svc };
            let e = &events[*ev];
            let now = svc.now();
            let pow = nonce.map(|n| {
                let challenge = vwr_tier1::pow::PowIssuer::new(svc.tokens().ring()).challenge(e, now);
                let nonce = vwr_tier1::pow::solve_from(&challenge, POW_BITS, &format!("n{n}x"));
                (challenge, nonce)
            });
            let enqueue_token = account
                .map(|a| vwr_tier1::enqueue::sign(&side.site, &format!("acct{a}"), e, now + 86_400).unwrap());
            let proof = JoinProof { pow, enqueue_token };
            let res = svc.assign(e, &proof).await.map_err(|e| e.to_string());
            side.joined = res.as_ref().ok().map(|a| a.request_id().to_owned());
            format!("{res:?}")
        }
        Op::CheckHeld { ev, ticket } => {
            if tickets.is_empty() {
                return Ok("no tickets".into());
            }
            let (_, t) = &tickets[ticket % tickets.len()];
            let Some(token) = side.tokens.get(t) else {
                return Ok("no token".into());
            };
            let e = &events[*ev];
            let now = svc.now();
            let renewed = match svc.tokens().link().verify_lapsed(token, e, now) {
                Ok(c) => svc.tokens().link().resign(&Tier1Claims { exp: now + 600, ..c }).unwrap(),
                Err(err) => return Ok(format!("token of another event: {err}")),
            };
            let presented = Presented { tokens: &[renewed.as_str()], holds: &[] };
            match svc.check_with_tokens(e, t, svc.request_secret(t).as_deref(), &presented).await {
                Ok(CheckOutcome::Admitted(a)) => admitted_view(side, t, e, &a.token, a.expires_at)?,
                Ok(other) => format!("{other:?}"),
                Err(e) => format!("error {e}"),
            }
        }
        Op::ReleaseForged { ev, ticket } => {
            if tickets.is_empty() {
                return Ok("no tickets".into());
            }
            let (_, t) = &tickets[ticket % tickets.len()];
            let Some(token) = side.tokens.get(t) else {
                return Ok("no token".into());
            };
            let e = &events[*ev];
            let now = svc.now();
            let Ok(c) = svc.tokens().link().verify_lapsed(token, e, now) else {
                return Ok("token of another event".into());
            };
            let edge_only = Tier1Link::new(
                svc.tokens().edge_ring().clone(),
                HmacKeyring::generate("t1").unwrap().place_ring(),
                "vwr",
                "vwr-edge",
            );
            let forged =
                edge_only.resign(&Tier1Claims { jti: "forged-jti".into(), exp: now + 600, ..c }).unwrap();
            format!("{:?}", svc.release(e, &forged).await.map_err(|e| e.to_string()))
        }
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
                    let t = t.clone();
                    admitted_view(side, &t, &events[*ev], &a.token, a.expires_at)?
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
            let m = msg.then(|| Message { en: Some("hold on".into()), ko: None, ..Default::default() });
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
            let m = msg.map(|i| Message {
                en: Some(format!("note {i}")),
                ko: (i == 1).then(|| "안내".to_owned()),
                ja: (i == 2).then(|| "ご案内".to_owned()),
                ..Default::default()
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
    let site = EcKeyring::generate("site1").unwrap();
    let mut model = side(Arc::new(MemoryStore::new()), Arc::clone(&clock), &tokens, &site);
    let mut real = side(Arc::new(dynamo.clone()), Arc::clone(&clock), &tokens, &site);
    let mut tickets: Vec<(usize, String)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if let Op::Sleep { secs } = op {
            clock.advance(*secs);
            continue;
        }
        let want = apply(&mut model, op, &events, &tickets).await?;
        let got = apply(&mut real, op, &events, &tickets).await?;
        prop_assert_eq!(&got, &want, "step {} {:?} diverged", i, op);
        real.joined = None;
        if let (Op::Join { ev, .. }, Some(rid)) = (op, model.joined.take())
            && !tickets.iter().any(|(_, t)| *t == rid)
        {
            tickets.push((*ev, rid));
        }
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

/// One call of a store method that a join, a release or a proof of work makes.
#[derive(Debug, Clone)]
enum StoreOp {
    Claim { account: u8, ticket: u8 },
    Replace { account: u8, old: u8, new: u8 },
    Account { account: u8 },
    UseProof { key: u8, ttl: u64 },
    Redeem { position: u64, jti: u8 },
    Release { position: u64, jti: u8 },
    Redemption { position: u64 },
    Counts,
    Sleep { secs: u64 },
}

fn store_op() -> impl Strategy<Value = StoreOp> {
    prop_oneof![
        2 => (0u8..3, 0u8..4).prop_map(|(account, ticket)| StoreOp::Claim { account, ticket }),
        3 => (0u8..3, 0u8..4, 0u8..4).prop_map(|(account, old, new)| StoreOp::Replace { account, old, new }),
        1 => (0u8..3).prop_map(|account| StoreOp::Account { account }),
        3 => (0u8..3, 1u64..120).prop_map(|(key, ttl)| StoreOp::UseProof { key, ttl }),
        2 => (1u64..5, 0u8..3).prop_map(|(position, jti)| StoreOp::Redeem { position, jti }),
        3 => (1u64..5, 0u8..3).prop_map(|(position, jti)| StoreOp::Release { position, jti }),
        1 => (1u64..5).prop_map(|position| StoreOp::Redemption { position }),
        1 => Just(StoreOp::Counts),
        2 => (1u64..90).prop_map(|secs| StoreOp::Sleep { secs }),
    ]
}

async fn store_apply(store: &dyn PositionStore, e: &EventId, op: &StoreOp, now: u64) -> String {
    let acct = |a: &u8| format!("acct{a}");
    let ticket = |t: &u8| format!("ticket{t}");
    let jti = |j: &u8| format!("jti{j}");
    match op {
        StoreOp::Claim { account, ticket: t } => {
            format!("{:?}", store.claim_account(e, &acct(account), &ticket(t), now + 600).await)
        }
        StoreOp::Replace { account, old, new } => format!(
            "{:?}",
            store.replace_account_ticket(e, &acct(account), &ticket(old), &ticket(new), now + 600).await
        ),
        StoreOp::Account { account } => format!("{:?}", store.account_ticket(e, &acct(account)).await),
        StoreOp::UseProof { key, ttl } => {
            format!("{:?}", store.use_proof_once(e, &format!("proof{key}"), now + ttl, now).await)
        }
        StoreOp::Redeem { position, jti: j } => {
            format!("{:?}", store.redeem(e, *position, 2, &jti(j), now, now + 600).await)
        }
        StoreOp::Release { position, jti: j } => {
            format!("{:?}", store.release(e, *position, 2, &jti(j), now).await)
        }
        StoreOp::Redemption { position } => format!("{:?}", store.redemption(e, *position).await),
        StoreOp::Counts => format!("{:?}", store.shard_counts(e, 2).await),
        StoreOp::Sleep { .. } => String::new(),
    }
}

/// The store methods behind one place per account (a conditional replacement of an expired
/// ticket), single-use proofs and releases by the admission's own `jti`, called directly in
/// random order on the model and on DynamoDB: every answer agrees (docs/invariants.md#17,
/// #18, and the release rule of docs/outflow.md#early-release).
#[test]
fn store_methods_agree_on_memory_and_dynamodb() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dynamo = rt.block_on(common::dynamo_store("model-store"));
    let cases = std::env::var("VWR_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(40);
    let mut runner = TestRunner::new(Config { cases, max_shrink_iters: 200, ..Config::default() });
    let result = runner.run(&proptest::collection::vec(store_op(), 1..40), |ops| {
        rt.block_on(async {
            let case = CASE.fetch_add(1, Ordering::SeqCst);
            let e = common::ev(&format!("s{case}"));
            let model = MemoryStore::new();
            let mut now = T0;
            for (i, op) in ops.iter().enumerate() {
                if let StoreOp::Sleep { secs } = op {
                    now += secs;
                    continue;
                }
                let want = store_apply(&model, &e, op, now).await;
                let got = store_apply(&dynamo, &e, op, now).await;
                prop_assert_eq!(&got, &want, "step {} {:?} diverged", i, op);
            }
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
