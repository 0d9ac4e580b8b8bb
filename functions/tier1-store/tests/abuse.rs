//! One place per account under concurrency, against the real DynamoDB API (moto server) and
//! the in-memory model (docs/invariants.md#14): racing joins of one account get one ticket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::ev;
use vwr_core::keys::EcKeyring;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier1::Tier1Clients;
use vwr_tier1::enqueue::EnqueueVerifier;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::ConfigPatch;
use vwr_tier1::service::JoinProof;
use vwr_tier1::store::PositionStore;

const T0: u64 = 1_800_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_joins_of_one_account_get_one_ticket() {
    let stores: Vec<(&str, Arc<dyn PositionStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new())),
        ("dynamodb", Arc::new(common::dynamo_store("acct").await)),
    ];
    let site = EcKeyring::generate("site1").unwrap();
    let jwks = serde_json::to_string(&site.jwks()).unwrap();
    for (name, store) in stores {
        let clock = Arc::new(ManualClock::new(T0));
        let verifier = EnqueueVerifier::from_jwks(&jwks).unwrap();
        let clients = Tier1Clients::new(Arc::clone(&store), Arc::clone(&clock) as Arc<dyn Clock>);
        let svc = Arc::new(common::service_with(clients, |c| c.enqueue = Some(verifier)));
        let event = ev("acct");
        let patch = ConfigPatch {
            enqueue_token_required: Some(true),
            batch_size: Some(0),
            shards: Some(2),
            ..Default::default()
        };
        svc.activate(&event, patch, "test").await.unwrap();
        let mut tasks = Vec::new();
        for i in 0..24 {
            let account = if i < 16 { "mallory".to_owned() } else { format!("user{i}") };
            let token = vwr_tier1::enqueue::sign(&site, &account, &event, T0 + 300).unwrap();
            let (svc, event) = (Arc::clone(&svc), event.clone());
            tasks.push(tokio::spawn(async move {
                let proof = JoinProof { enqueue_token: Some(token), ..Default::default() };
                (account, svc.assign(&event, &proof).await.unwrap().request_id().to_owned())
            }));
        }
        let mut mallory = HashSet::new();
        let mut others = HashSet::new();
        for t in tasks {
            let (account, rid) = t.await.unwrap();
            if account == "mallory" {
                mallory.insert(rid);
            } else {
                others.insert(rid);
            }
        }
        assert_eq!(mallory.len(), 1, "{name}: one account got {} tickets", mallory.len());
        assert_eq!(others.len(), 8, "{name}");
        assert!(others.is_disjoint(&mallory));
    }
}
