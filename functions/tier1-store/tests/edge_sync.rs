//! Invariant 22 (docs/invariants.md): the edge's event list never drops an event that gates
//! because the active-event index lags, on the in-memory model and on DynamoDB (moto), with an
//! index that lags on purpose (moto's and the model's never do).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::ev;
use common::spy::Spy;
use vwr_core::time::ManualClock;
use vwr_tier1::edge_sync::{EdgeConfigStore, EdgeSyncError};
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::ConfigPatch;
use vwr_tier1::store::PositionStore;
use vwr_tier1::{Tier1Clients, Tier1Service};

const T0: u64 = 1_800_000_000;

async fn stores(name: &str) -> Vec<(&'static str, Arc<dyn PositionStore>)> {
    vec![("memory", Arc::new(MemoryStore::new())), ("dynamodb", Arc::new(common::dynamo_store(name).await))]
}

/// An edge configuration entry that keeps every value written, in write order.
#[derive(Default)]
struct RecordingEdge {
    inner: Mutex<(String, u64, Vec<String>)>,
    revoked: Mutex<Option<String>>,
}

impl RecordingEdge {
    fn new() -> Self {
        Self {
            inner: Mutex::new((r#"{"rules":[],"failMode":"closed"}"#.to_owned(), 1, Vec::new())),
            revoked: Mutex::new(None),
        }
    }

    fn events(value: &str) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(value).unwrap();
        v["events"]
            .as_array()
            .map_or_else(Vec::new, |a| a.iter().map(|e| e.as_str().unwrap().to_owned()).collect())
    }

    fn current(&self) -> Vec<String> {
        Self::events(&self.inner.lock().unwrap().0)
    }

    fn log(&self) -> Vec<Vec<String>> {
        self.inner.lock().unwrap().2.iter().map(|v| Self::events(v)).collect()
    }
}

#[async_trait]
impl EdgeConfigStore for RecordingEdge {
    async fn get(&self) -> Result<(String, String), EdgeSyncError> {
        let g = self.inner.lock().unwrap();
        Ok((g.0.clone(), g.1.to_string()))
    }
    async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        let mut g = self.inner.lock().unwrap();
        if g.1.to_string() != version {
            return Ok(false);
        }
        g.0 = value.to_owned();
        g.1 += 1;
        g.2.push(value.to_owned());
        Ok(true)
    }
    async fn get_revoked(&self) -> Result<(Option<String>, String), EdgeSyncError> {
        let g = self.inner.lock().unwrap();
        Ok((self.revoked.lock().unwrap().clone(), g.1.to_string()))
    }
    async fn put_revoked(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        let mut g = self.inner.lock().unwrap();
        if g.1.to_string() != version {
            return Ok(false);
        }
        *self.revoked.lock().unwrap() = Some(value.to_owned());
        g.1 += 1;
        Ok(true)
    }
}

fn instance(store: &Arc<Spy>, edge: &Arc<RecordingEdge>) -> Tier1Service {
    let store: Arc<dyn PositionStore> = store.clone();
    let edge: Arc<dyn EdgeConfigStore> = edge.clone();
    let clients =
        Tier1Clients { edge: Some(edge), ..Tier1Clients::new(store, Arc::new(ManualClock::new(T0))) };
    common::service_with(clients, |_| {})
}

/// One instance activates an event the index does not show yet; another reconciles from the
/// index: the event stays listed. And a deactivation the index has not seen is not undone.
#[tokio::test]
async fn a_lagging_index_never_drops_a_gated_event() {
    for (name, inner) in stores("lag").await {
        let lag = Arc::new(Spy::lagging(inner, 0));
        let edge = Arc::new(RecordingEdge::new());
        let (a, b) = (instance(&lag, &edge), instance(&lag, &edge));
        a.activate(&ev("known"), ConfigPatch::default(), "ops").await.unwrap();
        lag.catch_up().await;
        a.activate(&ev("fresh"), ConfigPatch::default(), "ops").await.unwrap();
        assert_eq!(edge.current(), ["fresh", "known"], "{name}");
        b.reconcile_edge().await.unwrap();
        assert_eq!(edge.current(), ["fresh", "known"], "{name}: the index has not seen `fresh` yet");

        a.deactivate(&ev("known"), "ops").await.unwrap();
        assert_eq!(edge.current(), ["fresh"], "{name}");
        b.reconcile_edge().await.unwrap();
        assert_eq!(edge.current(), ["fresh"], "{name}: the index still shows `known` active");

        lag.catch_up().await;
        b.reconcile_edge().await.unwrap();
        assert_eq!(edge.current(), ["fresh"], "{name}");
    }
}

/// Instances that change events (each syncing the edge) race instances that reconcile, over
/// an index that lags: once an event's activation has returned, every later value of the
/// edge list holds it; at the end the list is exactly the gated events.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transition_syncs_racing_reconciles_keep_every_gated_event() {
    for (name, inner) in stores("lagrace").await {
        let lag = Arc::new(Spy::lagging(inner, 3));
        let edge = Arc::new(RecordingEdge::new());
        let done = Arc::new(AtomicUsize::new(0));
        let mut changers = Vec::new();
        for i in 0..3 {
            let svc = instance(&lag, &edge);
            let (edge, done) = (Arc::clone(&edge), Arc::clone(&done));
            changers.push(tokio::spawn(async move {
                let (stable, churn) = (ev(&format!("s{i}")), ev(&format!("t{i}")));
                let mut from = 0;
                for j in 0..8 {
                    // A sync can lose every retry to the others (503, idempotent): retry.
                    while svc.activate(&churn, ConfigPatch::default(), "ops").await.is_err() {}
                    if j == 2 {
                        while svc.activate(&stable, ConfigPatch::default(), "ops").await.is_err() {}
                        from = edge.log().len();
                    }
                    tokio::task::yield_now().await;
                    while svc.deactivate(&churn, "ops").await.is_err() {}
                    tokio::task::yield_now().await;
                }
                done.fetch_add(1, Ordering::SeqCst);
                (stable.to_string(), from)
            }));
        }
        let mut reconcilers = Vec::new();
        for _ in 0..2 {
            let svc = instance(&lag, &edge);
            let done = Arc::clone(&done);
            reconcilers.push(tokio::spawn(async move {
                while done.load(Ordering::SeqCst) < 3 {
                    let _ = svc.reconcile_edge().await;
                    tokio::task::yield_now().await;
                }
            }));
        }
        let mut stable = Vec::new();
        for c in changers {
            stable.push(c.await.unwrap());
        }
        for r in reconcilers {
            r.await.unwrap();
        }
        let log = edge.log();
        for (id, from) in &stable {
            assert!(*from > 0, "{name}: {id} was published");
            for (k, value) in log.iter().enumerate().skip(from - 1) {
                assert!(value.contains(id), "{name}: write {k} of {} dropped {id}: {value:?}", log.len());
            }
        }
        lag.catch_up().await;
        instance(&lag, &edge).reconcile_edge().await.unwrap();
        let want: BTreeSet<String> = stable.into_iter().map(|(id, _)| id).collect();
        assert_eq!(edge.current().into_iter().collect::<BTreeSet<_>>(), want, "{name}");
    }
}
