//! Passes (docs/passes.md) on the in-memory model and on DynamoDB (moto): minted as tier-1
//! tokens without a place proof, listed, revoked into the edge configuration's `revoked` map,
//! pruned there once expired, bounded per event even when many admins race, and every create
//! and revoke in the audit trail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::ev;
use http::StatusCode;
use serde_json::Value;
use vwr_core::ApiError;
use vwr_core::time::ManualClock;
use vwr_core::token::TokenError;
use vwr_tier1::edge_sync::MemoryEdgeConfig;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::{ConfigPatch, MAX_LIVE_PASSES, MAX_PASS_TTL_SECS};
use vwr_tier1::store::PositionStore;
use vwr_tier1::{Tier1Clients, Tier1Service};

const T0: u64 = 1_800_000_000;

async fn stores(name: &str) -> Vec<(&'static str, Arc<dyn PositionStore>)> {
    vec![("memory", Arc::new(MemoryStore::new())), ("dynamodb", Arc::new(common::dynamo_store(name).await))]
}

fn service(store: Arc<dyn PositionStore>, clock: Arc<ManualClock>) -> (Tier1Service, Arc<MemoryEdgeConfig>) {
    let edge = Arc::new(MemoryEdgeConfig::new(r#"{"rules":[],"failMode":"closed"}"#));
    let clients = Tier1Clients { edge: Some(edge.clone()), ..Tier1Clients::new(store, clock) };
    (common::service_with(clients, |_| {}), edge)
}

/// The edge's revoked passes (their own entry; `null` when none), and never in `config`.
fn revoked(edge: &MemoryEdgeConfig) -> Value {
    assert!(
        !edge.value().contains("revoked"),
        "the event list's entry holds no revocation: {}",
        edge.value()
    );
    edge.revoked()
        .map(|r| serde_json::from_str::<Value>(&r).unwrap())
        .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
        .unwrap_or(Value::Null)
}

fn code(e: vwr_tier1::service::Tier1Error) -> (StatusCode, String) {
    let e = ApiError::from(e);
    (e.status, e.code.as_str().to_owned())
}

#[tokio::test]
async fn a_pass_is_a_tier1_token_without_a_place_and_its_revocation_reaches_the_edge() {
    for (name, store) in stores("passes").await {
        let clock = Arc::new(ManualClock::new(T0));
        let (svc, edge) = service(store, clock.clone());
        let e1 = ev("e1");
        svc.activate(&e1, Default::default(), "ops").await.unwrap();

        let a = svc.create_pass(&e1, "monitor", 7200, "ops").await.unwrap();
        let b = svc.create_pass(&e1, "staff smoke test", 600, "ops").await.unwrap();
        assert_eq!(a.id, format!("e1.{}", a.pass_id), "{name}");
        assert_eq!(a.expires_at, T0 + 7200, "{name}");
        assert_ne!(a.pass_id, b.pass_id, "{name}");
        let claims = svc.tokens().verify(&a.pass, &e1, T0).unwrap();
        assert_eq!((claims.pos, claims.tier, claims.jti.as_str()), (0, 1, a.pass_id.as_str()), "{name}");
        assert_eq!(claims.sub, format!("pass:{}", a.pass_id), "{name}");
        assert_eq!(
            svc.tokens().verify(&a.pass, &ev("e2"), T0).unwrap_err(),
            TokenError::WrongEvent,
            "{name}"
        );
        // Tier 2 needs a place proof: a pass never takes a place in its line.
        assert_eq!(
            svc.tokens().link().verify(&a.pass, &e1, T0).unwrap_err(),
            TokenError::NoPlaceProof,
            "{name}"
        );

        let list = svc.passes(&e1).await.unwrap();
        assert_eq!(
            list.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(),
            ["monitor", "staff smoke test"]
        );
        assert!(revoked(&edge).is_null(), "{name}: nothing revoked yet");

        clock.advance(5);
        let v = svc.revoke_pass(&e1, &a.pass_id, "security").await.unwrap();
        assert_eq!(v.revoked_at, Some(T0 + 5), "{name}");
        assert_eq!(revoked(&edge), serde_json::json!({ a.pass_id.clone(): T0 + 7200 }), "{name}");
        // Again: nothing changes (the first revocation's time stays).
        assert_eq!(svc.revoke_pass(&e1, &a.pass_id, "security").await.unwrap().revoked_at, Some(T0 + 5));

        let audit = svc.audit(&e1).await.unwrap();
        let actions: Vec<&str> = audit.iter().map(|x| x.action.as_str()).collect();
        assert_eq!(
            actions,
            ["activate", "pass_create", "pass_create", "pass_revoke", "pass_revoke"],
            "{name}"
        );
        let after = &audit[3].after["passes"];
        assert_eq!(after[0]["label"], "monitor", "{name}");
        assert_eq!(after[0]["revokedAt"], T0 + 5, "{name}");
        assert!(
            !audit.iter().any(|x| x.after.to_string().contains(&a.pass)),
            "{name}: the pass itself is never kept"
        );

        // Errors, each changing nothing.
        let before = svc.audit(&e1).await.unwrap().len();
        let bad = [
            svc.create_pass(&e1, "x", MAX_PASS_TTL_SECS + 1, "ops").await.unwrap_err(),
            svc.create_pass(&e1, "", 600, "ops").await.unwrap_err(),
        ];
        for e in bad {
            assert_eq!(code(e), (StatusCode::BAD_REQUEST, "invalid_body".into()), "{name}");
        }
        assert_eq!(
            code(svc.revoke_pass(&e1, "AAAAAAAAAAAA", "ops").await.unwrap_err()).0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(code(svc.revoke_pass(&e1, "../x", "ops").await.unwrap_err()).0, StatusCode::NOT_FOUND);
        assert_eq!(
            code(svc.create_pass(&ev("nope"), "x", 600, "ops").await.unwrap_err()).0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(svc.audit(&e1).await.unwrap().len(), before, "{name}: refused, not written");

        // Expired: gone from the list, from the edge at the next reconcile, not revocable.
        clock.advance(7200);
        assert!(svc.passes(&e1).await.unwrap().is_empty(), "{name}");
        svc.reconcile_edge().await.unwrap();
        assert!(revoked(&edge).is_null(), "{name}: pruned once expired: {}", edge.value());
        assert_eq!(
            code(svc.revoke_pass(&e1, &b.pass_id, "ops").await.unwrap_err()),
            (StatusCode::GONE, "pass_expired".into())
        );
    }
}

/// Many admins minting at once: the event item's revision decides, so never more than
/// `MAX_LIVE_PASSES` unexpired passes, and every one answered is listed.
#[tokio::test]
async fn racing_creates_never_pass_the_bound() {
    for (name, store) in stores("passes-race").await {
        let (svc, _) = service(store, Arc::new(ManualClock::new(T0)));
        let svc = Arc::new(svc);
        let e1 = ev("e1");
        svc.activate(&e1, Default::default(), "ops").await.unwrap();
        let mut tasks = Vec::new();
        for i in 0..MAX_LIVE_PASSES + 6 {
            let svc = Arc::clone(&svc);
            let e1 = e1.clone();
            tasks.push(tokio::spawn(async move { svc.create_pass(&e1, &format!("p{i}"), 600, "ops").await }));
        }
        let mut made = Vec::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(p) => made.push(p.pass_id),
                Err(e) => {
                    let (status, code) = code(e);
                    assert!(
                        code == "too_many_passes" || status == StatusCode::SERVICE_UNAVAILABLE,
                        "{name}: {code}"
                    );
                }
            }
        }
        let listed: Vec<String> = svc.passes(&e1).await.unwrap().into_iter().map(|p| p.pass_id).collect();
        assert!(listed.len() <= MAX_LIVE_PASSES, "{name}: {} listed", listed.len());
        made.sort();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(made, sorted, "{name}: exactly the answered ones are kept");
    }
}

/// Passes never crowd the event list out of the edge (issue 33, R2): revocations have their
/// own 1 KB entry. Before, about 27 live revocations made every edge write fail, so new
/// activations were not gated at the edge. Now the revocation that does not fit is refused
/// (503 `edge_sync_failed`, recorded, retried by the advancer) and activations go on.
#[tokio::test]
async fn revocations_never_stop_the_event_list() {
    let clock = Arc::new(ManualClock::new(T0));
    let (svc, edge) = service(Arc::new(MemoryStore::new()), clock.clone());
    let mut refused = None;
    'events: for e in ["r1", "r2", "r3"] {
        svc.activate(&ev(e), ConfigPatch::default(), "ops").await.unwrap();
        for i in 0..20 {
            let p = svc.create_pass(&ev(e), &format!("leaked {i}"), 7200, "ops").await.unwrap();
            if let Err(err) = svc.revoke_pass(&ev(e), &p.pass_id, "security").await {
                refused = Some((revoked(&edge).as_object().unwrap().len(), code(err)));
                break 'events;
            }
        }
    }
    let (fitted, err) = refused.expect("some revocation did not fit its 1 KB entry");
    assert!(fitted >= 35, "{fitted} revocations fit their own entry");
    assert_eq!(err, (StatusCode::SERVICE_UNAVAILABLE, "edge_sync_failed".into()));
    // The event list still moves: a new sale is gated at the edge.
    svc.activate(&ev("later"), ConfigPatch::default(), "ops").await.unwrap();
    let events = serde_json::from_str::<Value>(&edge.value()).unwrap()["events"].clone();
    assert!(events.as_array().unwrap().iter().any(|e| e == "later"), "{events}");
}
