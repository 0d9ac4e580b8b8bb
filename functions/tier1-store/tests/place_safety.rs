//! Place safety (issue 19; docs/invariants.md#16 to #19, and the early release by the
//! admission's own token, docs/outflow.md#early-release) against the real DynamoDB API (moto
//! server) and the in-memory model: a place ends only on an explicit verdict about that place.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::body::Body;
use common::ev;
use http::{Request, StatusCode};
use tower::ServiceExt;
use vwr_core::hold::{HoldVerifier, IDENTITY_AUDIENCE, IdentityClaims};
use vwr_core::keys::EcKeyring;
use vwr_core::time::{Clock, ManualClock};
use vwr_core::token::{Tier1Claims, Tier1Link, Tier1Tokens};
use vwr_core::{EventId, HmacKeyring};
use vwr_tier1::enqueue::EnqueueVerifier;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::ConfigPatch;
use vwr_tier1::service::{AssignResponse, CheckOutcome, JoinProof, ScheduleRequest, StepOutcome, Tier1Error};
use vwr_tier1::store::PositionStore;
use vwr_tier1::ticket::TicketError;
use vwr_tier1::{Tier1Clients, Tier1Service};
use vwr_tier1_store::dynamo::DynamoStore;

const T0: u64 = 1_800_000_000;
/// The ticket life of these tests: an hour.
const TTL: u64 = 3_600;

/// Each store, and the DynamoDB store itself where the test reads raw items.
async fn stores(name: &str) -> Vec<(&'static str, Arc<dyn PositionStore>, Option<DynamoStore>)> {
    let dynamo = common::dynamo_store(name).await;
    vec![("memory", Arc::new(MemoryStore::new()), None), ("dynamodb", Arc::new(dynamo.clone()), Some(dynamo))]
}

/// A service instance over `store` (instances of one deployment share the keys), with the
/// site's enqueue keys `site` if any.
fn instance(
    store: &Arc<dyn PositionStore>,
    clock: &Arc<ManualClock>,
    tokens: &Tier1Tokens,
    site: Option<&EnqueueVerifier>,
) -> Tier1Service {
    let mut cfg = common::config(tokens);
    cfg.settings.ticket_ttl_secs = TTL;
    cfg.enqueue = site.cloned();
    let clients = Tier1Clients::new(Arc::clone(store), Arc::clone(clock) as Arc<dyn Clock>);
    vwr_tier1::assemble(&cfg, tokens.clone(), clients)
}

fn site() -> (EcKeyring, EnqueueVerifier) {
    let site = EcKeyring::generate("site1").unwrap();
    let verifier = EnqueueVerifier::from_jwks(&serde_json::to_string(&site.jwks()).unwrap()).unwrap();
    (site, verifier)
}

fn account_proof(site: &EcKeyring, account: &str, event: &EventId) -> JoinProof {
    let token = vwr_tier1::enqueue::sign(site, account, event, T0 + 30 * 86_400).unwrap();
    JoinProof { enqueue_token: Some(token), ..Default::default() }
}

async fn check(svc: &Tier1Service, e: &EventId, rid: &str) -> Result<CheckOutcome, Tier1Error> {
    svc.check(e, rid, svc.request_secret(rid).as_deref()).await
}

/// `expiresAt` of every raw item of `event` whose key has `kind` (`R` redemptions, `A`
/// accounts).
async fn raw_expiries(store: &DynamoStore, event: &EventId, kind: &str) -> Vec<u64> {
    let out = store
        .client()
        .scan()
        .table_name(store.table())
        .filter_expression("begins_with(pk, :p)")
        .expression_attribute_values(":p", AttributeValue::S(format!("EVT#{event}#{kind}#")))
        .send()
        .await
        .unwrap();
    out.items()
        .iter()
        .map(|i| match i.get("expiresAt") {
            Some(AttributeValue::N(n)) => n.parse().unwrap(),
            other => panic!("expiresAt {other:?}"),
        })
        .collect()
}

/// Invariant 16 (issue 19, F3): a pre-queue twice as long as the ticket life. The earliest
/// joiners (and an account that joined then) are admitted after the open, their records live
/// as long as their tickets, and a ticket's life ends `ticketTtl` after the open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prequeue_longer_than_the_ticket_life_keeps_its_tickets() {
    let (site, verifier) = site();
    for (name, store, dynamo) in stores("pq-life").await {
        let clock = Arc::new(ManualClock::new(T0));
        let svc = instance(&store, &clock, &common::tokens(), Some(&verifier));
        let e = ev("early");
        let open_at = T0 + 2 * TTL;
        let req = ScheduleRequest {
            prequeue_at: T0,
            open_at,
            close_at: None,
            config: ConfigPatch {
                batch_size: Some(0),
                shards: Some(2),
                enqueue_token_required: Some(true),
                ..Default::default()
            },
        };
        svc.schedule(&e, req, "test").await.unwrap();
        let mut tickets = Vec::new();
        for i in 0..5 {
            let a = svc.assign(&e, &account_proof(&site, &format!("early{i}"), &e)).await.unwrap();
            assert!(matches!(a, AssignResponse::Prequeue(_)), "{name}: {a:?}");
            tickets.push(a.request_id().to_owned());
        }
        if let Some(d) = &dynamo {
            for exp in raw_expiries(d, &e, "A").await {
                assert!(exp >= open_at + TTL, "{name}: an account item may go at {exp}, before its ticket");
            }
        }
        // Half an hour before the open the tickets are older than their life, and still good.
        clock.set(open_at - 1_800);
        for rid in &tickets {
            assert!(matches!(check(&svc, &e, rid).await, Ok(CheckOutcome::Prequeue(_))), "{name}");
        }
        clock.set(open_at);
        assert!(matches!(svc.advance_event(&e).await.unwrap(), StepOutcome::Transition { .. }), "{name}");
        svc.advance(&e, 3, "test").await.unwrap();
        // The account that joined at the start still holds its ticket: the same one again.
        clock.set(open_at + 60);
        let again = svc.assign(&e, &account_proof(&site, "early0", &e)).await.unwrap();
        assert_eq!(again.request_id(), tickets[0], "{name}: the account's ticket was replaced");
        let mut admitted = 0;
        let mut waiting = Vec::new();
        for rid in &tickets {
            match check(&svc, &e, rid).await {
                Ok(CheckOutcome::Admitted(_)) => admitted += 1,
                Ok(CheckOutcome::Waiting(_)) => waiting.push(rid.clone()),
                other => panic!("{name}: a pre-queue ticket after the open: {other:?}"),
            }
        }
        assert_eq!((admitted, waiting.len()), (3, 2), "{name}");
        if let Some(d) = &dynamo {
            let exps = raw_expiries(d, &e, "R").await;
            assert_eq!(exps.len(), 3, "{name}");
            for exp in exps {
                assert!(exp >= open_at + TTL, "{name}: a redemption may go at {exp}, before its ticket");
            }
        }
        // The ticket life counts from the open: still good just before open + TTL, over after.
        clock.set(open_at + TTL - 1);
        assert!(matches!(check(&svc, &e, &waiting[0]).await, Ok(CheckOutcome::Waiting(_))), "{name}");
        clock.set(open_at + TTL);
        assert_eq!(
            check(&svc, &e, &waiting[0]).await.unwrap_err(),
            Tier1Error::Ticket(TicketError::Expired),
            "{name}"
        );
    }
}

/// Invariant 17 (issue 19, F4): an account whose ticket expired is not locked out. Racing
/// joins of the account (on several instances) all get one fresh ticket at the back; the old
/// ticket stays expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_account_whose_ticket_expired_gets_one_fresh_ticket() {
    let (site, verifier) = site();
    for (name, store, dynamo) in stores("acct-exp").await {
        let clock = Arc::new(ManualClock::new(T0));
        let tokens = common::tokens();
        let services: Vec<Arc<Tier1Service>> =
            (0..4).map(|_| Arc::new(instance(&store, &clock, &tokens, Some(&verifier)))).collect();
        let e = ev("acct-exp");
        let patch =
            ConfigPatch { enqueue_token_required: Some(true), batch_size: Some(0), ..Default::default() };
        services[0].activate(&e, patch, "test").await.unwrap();
        let first = services[0].assign(&e, &account_proof(&site, "alice", &e)).await.unwrap();
        assert_eq!(first.position(), Some(1));
        services[0].assign(&e, &account_proof(&site, "bob", &e)).await.unwrap();
        clock.set(T0 + TTL + 5);
        assert_eq!(
            check(&services[0], &e, first.request_id()).await.unwrap_err(),
            Tier1Error::Ticket(TicketError::Expired)
        );
        let mut tasks = Vec::new();
        for i in 0..16 {
            let svc = Arc::clone(&services[i % services.len()]);
            let (e, proof) = (e.clone(), account_proof(&site, "alice", &e));
            tasks.push(tokio::spawn(async move { svc.assign(&e, &proof).await }));
        }
        let mut got = HashSet::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(a) => {
                    got.insert(a.request_id().to_owned());
                }
                Err(err) => panic!("{name}: an expired account ticket answered {err:?}"),
            }
        }
        assert_eq!(got.len(), 1, "{name}: racing joins of one account got {} tickets", got.len());
        let fresh = got.into_iter().next().unwrap();
        assert_ne!(fresh, first.request_id(), "{name}");
        match check(&services[1], &e, &fresh).await {
            Ok(CheckOutcome::Waiting(w)) => {
                assert!(w.position > 2, "{name}: a fresh ticket joins at the back")
            }
            other => panic!("{name}: {other:?}"),
        }
        // The account keeps the fresh ticket.
        let again = services[2].assign(&e, &account_proof(&site, "alice", &e)).await.unwrap();
        assert_eq!(again.request_id(), fresh, "{name}");
        if let Some(d) = &dynamo {
            let exps = raw_expiries(d, &e, "A").await;
            assert!(
                exps.iter().any(|x| *x >= T0 + TTL + 5 + TTL),
                "{name}: the account item keeps the old TTL"
            );
        }
    }
}

/// Invariant 18 (issue 19, F7): a proof-of-work solution is accepted once across all the
/// instances on one table: two instances, then 16 racing joins with one nonce on four.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_proof_of_work_is_accepted_once_across_instances() {
    for (name, store, _) in stores("pow-once").await {
        let clock = Arc::new(ManualClock::new(T0));
        let tokens = common::tokens();
        let services: Vec<Arc<Tier1Service>> =
            (0..4).map(|_| Arc::new(instance(&store, &clock, &tokens, None))).collect();
        let e = ev("pow-once");
        let patch = ConfigPatch { pow_difficulty: Some(8), batch_size: Some(0), ..Default::default() };
        services[0].activate(&e, patch, "test").await.unwrap();
        let challenge = match services[0].assign(&e, &JoinProof::default()).await {
            Err(Tier1Error::ChallengeRequired { challenge, .. }) => challenge,
            other => panic!("{name}: {other:?}"),
        };
        let proof = |prefix: &str| JoinProof {
            pow: Some((challenge.clone(), vwr_tier1::pow::solve_from(&challenge, 8, prefix))),
            ..Default::default()
        };
        let one = proof("aa");
        assert!(services[0].assign(&e, &one).await.is_ok(), "{name}");
        assert!(
            matches!(services[1].assign(&e, &one).await, Err(Tier1Error::ChallengeRequired { .. })),
            "{name}: a second instance accepted the same solution"
        );
        let two = proof("bb");
        let mut tasks = Vec::new();
        for i in 0..16 {
            let (svc, e, p) = (Arc::clone(&services[i % services.len()]), e.clone(), two.clone());
            tasks.push(tokio::spawn(async move { svc.assign(&e, &p).await }));
        }
        let mut accepted = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => accepted += 1,
                Err(Tier1Error::ChallengeRequired { .. }) => {}
                Err(err) => panic!("{name}: {err:?}"),
            }
        }
        assert_eq!(accepted, 1, "{name}: one solution was accepted {accepted} times");
        assert_eq!(services[0].status(&e).await.unwrap().issued, 2, "{name}");
    }
}

/// Admits `n` tickets of `e` (batch 0, a manual advance) and returns `(ticket, token)` pairs.
async fn admitted(svc: &Tier1Service, e: &EventId, patch: ConfigPatch, n: u64) -> Vec<(String, String)> {
    svc.activate(e, patch, "test").await.unwrap();
    let mut rids = Vec::new();
    for _ in 0..n {
        rids.push(svc.assign(e, &JoinProof::default()).await.unwrap().request_id().to_owned());
    }
    svc.advance(e, n, "test").await.unwrap();
    let mut out = Vec::new();
    for rid in rids {
        match check(svc, e, &rid).await.unwrap() {
            CheckOutcome::Admitted(a) => out.push((rid, a.token)),
            other => panic!("{other:?}"),
        }
    }
    out
}

/// Issue 19, F11: a token minted with only the edge key, for the right position but not the
/// admission's `jti`, ends nobody's session; the admission's own token does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_admissions_own_token_releases_it() {
    for (name, store, _) in stores("release-jti").await {
        let clock = Arc::new(ManualClock::new(T0));
        let tokens = common::tokens();
        let svc = instance(&store, &clock, &tokens, None);
        let e = ev("rel-jti");
        let pairs = admitted(&svc, &e, ConfigPatch { batch_size: Some(0), ..Default::default() }, 2).await;
        let (rid, token) = &pairs[0];
        let claims = tokens.verify(token, &e, T0).unwrap();
        let other = tokens.verify(&pairs[1].1, &e, T0).unwrap();
        // The edge key alone (a place ring of its own making): right position, made-up jti, or
        // the jti of another admission.
        let edge_only = Tier1Link::new(
            tokens.edge_ring().clone(),
            HmacKeyring::generate("t1").unwrap().place_ring(),
            "vwr",
            "vwr-edge",
        );
        for jti in ["AAAAAAAAAAAAAAAAAAAAAA".to_owned(), other.jti.clone()] {
            let forged = edge_only.resign(&Tier1Claims { jti, ..claims.clone() }).unwrap();
            assert_eq!(svc.release(&e, &forged).await.unwrap_err(), Tier1Error::ForeignToken, "{name}");
        }
        assert_eq!(svc.status(&e).await.unwrap().outflow.released, 0, "{name}: a forged token released");
        assert!(matches!(check(&svc, &e, rid).await.unwrap(), CheckOutcome::Admitted(_)), "{name}");
        // The real token, also as tier 2 renews it (same claims, a later exp).
        let renewed = tokens.link().resign(&Tier1Claims { exp: T0 + 5_000, ..claims.clone() }).unwrap();
        svc.release(&e, &renewed).await.unwrap();
        svc.release(&e, token).await.unwrap();
        assert_eq!(svc.status(&e).await.unwrap().outflow.released, 1, "{name}");
        assert_eq!(check(&svc, &e, rid).await.unwrap_err(), Tier1Error::SessionEnded, "{name}");
        assert!(matches!(check(&svc, &e, &pairs[1].0).await.unwrap(), CheckOutcome::Admitted(_)), "{name}");
    }
}

struct Reply {
    status: StatusCode,
    cookie: Option<String>,
    body: serde_json::Value,
}

async fn http_check(
    router: &axum::Router,
    svc: &Tier1Service,
    e: &EventId,
    rid: &str,
    extra: &[(&str, &str)],
) -> Reply {
    let secret = svc.request_secret(rid).unwrap();
    let mut req = Request::get(format!("/vwr/check/{e}/{rid}")).header("x-vwr-request-secret", secret);
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let res = router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
    let status = res.status();
    let cookie = res.headers().get("set-cookie").map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
    Reply { status, cookie, body: serde_json::from_slice(&bytes).unwrap_or_default() }
}

/// Invariant 19 (issue 19, F2, tier-1 side): a session past `maxSessionSeconds` whose visitor
/// tier 2 still holds — it presents the tier-1 token tier 2 renewed — is admitted with that
/// token; without it, or with a token of another ticket or `jti`, or an expired one, 410; a
/// released session stays over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_tier2_holds_is_admitted_with_its_renewed_token() {
    for (name, store, _) in stores("t2-held").await {
        let clock = Arc::new(ManualClock::new(T0));
        let tokens = common::tokens();
        let svc = Arc::new(instance(&store, &clock, &tokens, None));
        let router = vwr_tier1::http::public_router(Arc::clone(&svc));
        let e = ev("held");
        let patch = ConfigPatch {
            batch_size: Some(0),
            token_ttl_seconds: Some(60),
            reentry_grace_seconds: Some(0),
            max_session_seconds: Some(120),
            ..Default::default()
        };
        let pairs = admitted(&svc, &e, patch, 2).await;
        let (rid, token) = &pairs[0];
        let claims = tokens.verify(token, &e, T0).unwrap();
        let b_claims = tokens.verify(&pairs[1].1, &e, T0).unwrap();
        // Half an hour later, far past the session's end.
        let now = T0 + 1_800;
        clock.set(now);
        let r = http_check(&router, &svc, &e, rid, &[]).await;
        assert_eq!(
            (r.status, r.body["error"].as_str()),
            (StatusCode::GONE, Some("admission_expired")),
            "{name}"
        );
        // Tier 2 renewed the cookie: same claims and place proof, a later exp.
        let renewed = tokens
            .link()
            .resign(&Tier1Claims { iat: now - 10, nbf: now - 10, exp: now + 300, ..claims.clone() })
            .unwrap();
        let cookie = format!("other=1; vwr_t1_held={renewed}");
        for extra in [vec![("cookie", cookie.as_str())], vec![("x-vwr-token", renewed.as_str())]] {
            let r = http_check(&router, &svc, &e, rid, &extra).await;
            assert_eq!(r.status, StatusCode::OK, "{name}: {:?}", r.body);
            assert_eq!(
                (r.body["admitted"].as_bool(), r.body["token"].as_str()),
                (Some(true), Some(renewed.as_str()))
            );
            assert_eq!(r.body["expiresAt"], now + 300, "{name}: no token beyond the presented one");
            let set = r.cookie.unwrap();
            // The cookie outlives the token (a day): the edge judges the token, and a lapsed
            // one is still sent for tier 2 to renew (docs/tokens.md#tier-2-holds).
            assert!(
                set.starts_with(&format!("vwr_t1_held={renewed};")) && set.contains("Max-Age=86400"),
                "{set}"
            );
        }
        // Not this visitor's, not this admission's, or expired: 410 as before.
        let of_b = tokens.link().resign(&Tier1Claims { exp: now + 300, ..b_claims.clone() }).unwrap();
        let other_jti = tokens
            .sign(&Tier1Claims { jti: b_claims.jti.clone(), exp: now + 300, ..claims.clone() })
            .unwrap();
        let other_sub =
            tokens.sign(&Tier1Claims { sub: pairs[1].0.clone(), exp: now + 300, ..claims.clone() }).unwrap();
        let lapsed = tokens.link().resign(&Tier1Claims { exp: now - 1, ..claims.clone() }).unwrap();
        let no_proof =
            tokens.link().resign(&Tier1Claims { t2: None, exp: now + 300, ..claims.clone() }).unwrap();
        for bad in [&of_b, &other_jti, &other_sub, &lapsed, &no_proof, &"garbage".to_owned()] {
            let r = http_check(&router, &svc, &e, rid, &[("x-vwr-token", bad)]).await;
            assert_eq!(
                (r.status, r.body["error"].as_str()),
                (StatusCode::GONE, Some("admission_expired")),
                "{name}"
            );
        }
        // The renewed token still releases (same jti), and a released session is over.
        svc.release(&e, &renewed).await.unwrap();
        let r = http_check(&router, &svc, &e, rid, &[("x-vwr-token", &renewed)]).await;
        assert_eq!((r.status, r.body["error"].as_str()), (StatusCode::GONE, Some("session_ended")), "{name}");
    }
}

/// An identity as tier 2 signs it for ticket `rid` (no hold yet: add `ls` or `adm`).
fn identity(event: &str, rid: &str, pos: u64, iat: u64, exp: u64) -> IdentityClaims {
    IdentityClaims {
        iss: "vwr".into(),
        aud: IDENTITY_AUDIENCE.into(),
        sub: vwr_core::identity::tier1_user_id(rid),
        eid: event.into(),
        pos: Some(pos),
        tier: 2,
        iat,
        exp,
        ls: None,
        adm: None,
    }
}

/// The identity cookie's value tier 2 would set (`vwr_core::hold`).
fn hold(ring: &EcKeyring, claims: IdentityClaims) -> String {
    vwr_core::hold::sign(ring, &claims).unwrap()
}

/// Invariant 27 (issue 32, tier-1 side): a visitor waiting in tier 2 makes no call while it
/// waits, so nothing renews their tier-1 token; past `maxSessionSeconds` their ticket is still
/// admitted by the hold tier 2 signed into their identity cookie — a place in line (however
/// long ago), or an admission not yet ended — with a new token of the same admission. Another
/// visitor's hold, another position's or event's, one signed with other keys, an expired
/// identity, an ended admission or no hold at all change nothing (410); a released session
/// stays over; without tier 2's keys nothing is honoured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visitor_tier2_holds_keeps_the_session_by_the_hold_in_its_identity() {
    for (name, store, _) in stores("t2-hold").await {
        let clock = Arc::new(ManualClock::new(T0));
        let tokens = common::tokens();
        let tier2 = EcKeyring::generate("t2k").unwrap();
        let jwks = serde_json::to_string(&tier2.jwks()).unwrap();
        let mut cfg = common::config(&tokens);
        cfg.settings.ticket_ttl_secs = TTL;
        cfg.tier2_holds = Some(HoldVerifier::from_jwks(&jwks, "vwr").unwrap());
        let clients = Tier1Clients::new(Arc::clone(&store), Arc::clone(&clock) as Arc<dyn Clock>);
        let svc = Arc::new(vwr_tier1::assemble(&cfg, tokens.clone(), clients));
        let router = vwr_tier1::http::public_router(Arc::clone(&svc));
        let e = ev("hold");
        let patch = ConfigPatch {
            batch_size: Some(0),
            token_ttl_seconds: Some(60),
            reentry_grace_seconds: Some(0),
            max_session_seconds: Some(120),
            ..Default::default()
        };
        let pairs = admitted(&svc, &e, patch, 2).await;
        let (rid, token) = &pairs[0];
        let claims = tokens.verify(token, &e, T0).unwrap();
        let pos = claims.pos;
        // Joined tier 2 a minute after the admission; half an hour later, nothing since.
        let now = T0 + 1_800;
        clock.set(now);
        let gone = |r: &Reply| (r.status, r.body["error"].as_str().map(str::to_owned));
        let expired = (StatusCode::GONE, Some("admission_expired".to_owned()));
        assert_eq!(gone(&http_check(&router, &svc, &e, rid, &[]).await), expired, "{name}");

        let in_line = hold(
            &tier2,
            IdentityClaims { ls: Some(pos), ..identity("hold", rid, pos, T0 + 60, now + 86_400) },
        );
        let admission = |end_s: u64| Some(format!("j1|{}|{}|0", T0 * 1000, end_s * 1000));
        let checking_out = hold(
            &tier2,
            IdentityClaims { adm: admission(now + 100), ..identity("hold", rid, pos, now - 5, now + 86_400) },
        );
        let mut renewed_token = String::new();
        for good in [&in_line, &checking_out] {
            let cookie = format!("vwr_t1_hold={token}; vwr_t2_hold={good}");
            let r = http_check(&router, &svc, &e, rid, &[("cookie", cookie.as_str())]).await;
            assert_eq!(r.status, StatusCode::OK, "{name}: {:?}", r.body);
            assert_eq!(r.body["admitted"], true, "{name}");
            let renewed = r.body["token"].as_str().unwrap();
            let c = tokens.link().verify(renewed, &e, now).expect("a token with its place proof");
            assert_eq!(
                (c.sub.as_str(), c.pos, c.jti.as_str()),
                (rid.as_str(), pos, claims.jti.as_str()),
                "{name}"
            );
            assert_eq!(
                (c.exp, r.body["expiresAt"].as_u64()),
                (now + 60, Some(now + 60)),
                "{name}: the event's token life"
            );
            assert!(r.cookie.unwrap().starts_with(&format!("vwr_t1_hold={renewed};")), "{name}");
            renewed_token = renewed.to_owned();
        }

        let other = EcKeyring::generate("t2k").unwrap();
        let bad = [
            (
                "another visitor's",
                hold(
                    &tier2,
                    IdentityClaims { ls: Some(pos), ..identity("hold", &pairs[1].0, pos, T0, now + 900) },
                ),
            ),
            (
                "another position's",
                hold(
                    &tier2,
                    IdentityClaims { ls: Some(pos), ..identity("hold", rid, pos + 1, T0, now + 900) },
                ),
            ),
            (
                "another event's",
                hold(&tier2, IdentityClaims { ls: Some(pos), ..identity("other", rid, pos, T0, now + 900) }),
            ),
            (
                "other keys'",
                hold(&other, IdentityClaims { ls: Some(pos), ..identity("hold", rid, pos, T0, now + 900) }),
            ),
            (
                "an expired identity",
                hold(&tier2, IdentityClaims { ls: Some(pos), ..identity("hold", rid, pos, T0, now - 1) }),
            ),
            (
                "an ended admission",
                hold(
                    &tier2,
                    IdentityClaims { adm: admission(now), ..identity("hold", rid, pos, T0, now + 900) },
                ),
            ),
            ("no place", hold(&tier2, identity("hold", rid, pos, T0, now + 900))),
            ("junk", "a.b.c".to_owned()),
        ];
        for (what, h) in &bad {
            let cookie = format!("vwr_t2_hold={h}");
            let r = http_check(&router, &svc, &e, rid, &[("cookie", cookie.as_str())]).await;
            assert_eq!(gone(&r), expired, "{name}: {what}");
        }

        // Without tier 2's keys (`VWR_TIER2_JWKS` unset), a hold is nothing.
        let plain = instance(&store, &clock, &tokens, None);
        let plain_router = vwr_tier1::http::public_router(Arc::new(plain));
        let cookie = format!("vwr_t2_hold={in_line}");
        let r = http_check(&plain_router, &svc, &e, rid, &[("cookie", cookie.as_str())]).await;
        assert_eq!(gone(&r), expired, "{name}: no keys");

        // The site's release ends the session, whatever tier 2 held.
        svc.release(&e, &renewed_token).await.unwrap();
        let cookie = format!("vwr_t2_hold={in_line}");
        let r = http_check(&router, &svc, &e, rid, &[("cookie", cookie.as_str())]).await;
        assert_eq!(gone(&r), (StatusCode::GONE, Some("session_ended".to_owned())), "{name}");
    }
}
