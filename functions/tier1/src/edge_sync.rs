//! Keeps the edge verifier's list of active events in step with tier 1. The CloudFront
//! Function reads its configuration from the `config` entry of a KeyValueStore (see
//! `edge/README.md`); activating or deactivating an event rewrites that entry's `events` list
//! (read-modify-write guarded by the store's ETag), and every advancer run reconciles it, so
//! a missed update heals within a minute (docs/adr/0011-edge-event-list.md). The same write keeps
//! the configuration's `revoked` map (pass id → expiry, docs/passes.md): the union of what it
//! holds and the events' revoked passes, each entry dropped once expired. The list is
//! decided in `service/mod.rs` (`sync_edge`): an event the active-event index does not show yet is never dropped
//! on the index's word alone (docs/invariants.md#22). The KeyValueStore itself is in
//! `vwr-tier1-store`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use vwr_core::EventId;

/// KeyValueStore values are at most 1 KB.
pub const MAX_CONFIG_BYTES: usize = 1024;
/// Name of the configuration entry.
pub const CONFIG_KEY: &str = "config";

/// A failure to update the edge configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EdgeSyncError {
    #[error("edge configuration store unavailable: {0}")]
    Unavailable(String),
    #[error("the edge configuration entry is missing or not JSON: {0}")]
    BadConfig(String),
    #[error(
        "{events} active events and {revoked} revoked passes do not fit the 1 KB edge configuration entry"
    )]
    TooLarge { events: usize, revoked: usize },
    #[error("the edge configuration kept changing under us")]
    Conflict,
}

/// Where the edge configuration lives.
#[async_trait]
pub trait EdgeConfigStore: Send + Sync + 'static {
    /// The configuration JSON and the version tag to write against.
    async fn get(&self) -> Result<(String, String), EdgeSyncError>;
    /// Writes if the version tag still matches; `Ok(false)` on a conflict.
    async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError>;
}

/// Attempts of a read-modify-write of the configuration entry before giving up on conflicts.
pub const PUBLISH_ATTEMPTS: usize = 5;

/// The ids in a configuration value's `events` list (none if it has no list).
pub fn events_of(raw: &str) -> Result<Vec<String>, EdgeSyncError> {
    let cfg: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| EdgeSyncError::BadConfig(e.to_string()))?;
    let obj = cfg.as_object().ok_or_else(|| EdgeSyncError::BadConfig("not a JSON object".into()))?;
    Ok(match obj.get("events").and_then(|v| v.as_array()) {
        Some(list) => list.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        None => Vec::new(),
    })
}

/// Writes `active` (sorted, unique) into the configuration value `raw` that was read at
/// `version`, and `revoked` (pass id → expiry, unix seconds) into its `revoked` map with the
/// entries it holds, dropping those expired at `now` (a revocation is never lifted before
/// then): `Some(changed)`, or `None` when the entry changed since (read it again). Other
/// fields (rules, cookie prefix, fail mode…) are kept as they are.
pub async fn write_events(
    store: &dyn EdgeConfigStore,
    raw: &str,
    version: &str,
    active: &[EventId],
    revoked: &BTreeMap<String, u64>,
    now: u64,
) -> Result<Option<bool>, EdgeSyncError> {
    let mut ids: Vec<&str> = active.iter().map(EventId::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut cfg: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| EdgeSyncError::BadConfig(e.to_string()))?;
    let obj = cfg.as_object_mut().ok_or_else(|| EdgeSyncError::BadConfig("not a JSON object".into()))?;
    let mut all: BTreeMap<String, u64> =
        revoked.iter().filter(|(_, exp)| **exp > now).map(|(k, v)| (k.clone(), *v)).collect();
    if let Some(held) = obj.get("revoked").and_then(|v| v.as_object()) {
        for (id, exp) in held {
            if let Some(exp) = exp.as_u64().filter(|e| *e > now) {
                all.entry(id.clone()).or_insert(exp);
            }
        }
    }
    let want = serde_json::json!(ids);
    let want_revoked = serde_json::json!(all);
    let same_revoked = match obj.get("revoked") {
        Some(v) => *v == want_revoked,
        None => all.is_empty(),
    };
    if obj.get("events") == Some(&want) && same_revoked {
        return Ok(Some(false));
    }
    obj.insert("events".into(), want);
    if all.is_empty() {
        obj.remove("revoked");
    } else {
        obj.insert("revoked".into(), want_revoked);
    }
    let value = serde_json::to_string(&cfg).map_err(|e| EdgeSyncError::BadConfig(e.to_string()))?;
    if value.len() > MAX_CONFIG_BYTES {
        return Err(EdgeSyncError::TooLarge { events: ids.len(), revoked: all.len() });
    }
    if store.put(&value, version).await? {
        tracing::info!(event = "tier1.edge_config_published", events = ids.len(), revoked = all.len());
        return Ok(Some(true));
    }
    Ok(None)
}

/// Writes `active` into the configuration's `events` list (sorted, unique), whatever the list
/// held (the `revoked` map keeps its unexpired entries). Returns whether anything changed.
/// Other fields are kept as they are.
pub async fn publish(
    store: &dyn EdgeConfigStore,
    active: &[EventId],
    now: u64,
) -> Result<bool, EdgeSyncError> {
    for _ in 0..PUBLISH_ATTEMPTS {
        let (raw, version) = store.get().await?;
        if let Some(changed) = write_events(store, &raw, &version, active, &BTreeMap::new(), now).await? {
            return Ok(changed);
        }
    }
    Err(EdgeSyncError::Conflict)
}

/// An in-memory configuration entry (local runs and tests).
#[derive(Debug, Default)]
pub struct MemoryEdgeConfig {
    inner: std::sync::Mutex<(String, u64)>,
}

impl MemoryEdgeConfig {
    pub fn new(initial: &str) -> Self {
        Self { inner: std::sync::Mutex::new((initial.to_owned(), 1)) }
    }

    pub fn value(&self) -> String {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).0.clone()
    }
}

#[async_trait]
impl EdgeConfigStore for MemoryEdgeConfig {
    async fn get(&self) -> Result<(String, String), EdgeSyncError> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        Ok((g.0.clone(), g.1.to_string()))
    }

    async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.1.to_string() != version {
            return Ok(false);
        }
        *g = (value.to_owned(), g.1 + 1);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> EventId {
        EventId::parse(s).unwrap()
    }

    #[tokio::test]
    async fn publishes_sorted_events_and_keeps_other_fields() {
        let store = MemoryEdgeConfig::new(
            r#"{"rules":[{"pathPrefix":"/events/","eventSegment":2}],"failMode":"closed"}"#,
        );
        assert!(publish(&store, &[ev("b"), ev("a"), ev("a")], 0).await.unwrap());
        let v: serde_json::Value = serde_json::from_str(&store.value()).unwrap();
        assert_eq!(v["events"], serde_json::json!(["a", "b"]));
        assert_eq!(v["failMode"], "closed");
        assert!(!publish(&store, &[ev("a"), ev("b")], 0).await.unwrap(), "no change, no write");
        assert!(publish(&store, &[], 0).await.unwrap());
        let many: Vec<EventId> = (0..100).map(|i| ev(&format!("event-number-{i:04}"))).collect();
        assert!(matches!(
            publish(&store, &many, 0).await,
            Err(EdgeSyncError::TooLarge { events: 100, revoked: 0 })
        ));
        let bad = MemoryEdgeConfig::new("not json");
        assert!(matches!(publish(&bad, &[], 0).await, Err(EdgeSyncError::BadConfig(_))));
        assert_eq!(events_of(&store.value()).unwrap(), Vec::<String>::new());
        assert_eq!(events_of(r#"{"events":["a","b"]}"#).unwrap(), ["a", "b"]);
        assert_eq!(events_of("{}").unwrap(), Vec::<String>::new());
        assert!(matches!(events_of("[]"), Err(EdgeSyncError::BadConfig(_))));
    }

    /// The revoked map: the union of what the entry holds and what is given, each entry gone
    /// once expired, never lifted before; absent when empty; bounded by the entry's 1 KB.
    #[tokio::test]
    async fn revocations_are_kept_until_they_expire() {
        let store = MemoryEdgeConfig::new(r#"{"rules":[],"events":["e1"],"revoked":{"old":100,"kept":300}}"#);
        let revoked = |s: &MemoryEdgeConfig| {
            serde_json::from_str::<serde_json::Value>(&s.value()).unwrap()["revoked"].clone()
        };
        let (raw, v) = store.get().await.unwrap();
        let given = BTreeMap::from([("new".to_owned(), 200), ("stale".to_owned(), 150)]);
        assert_eq!(write_events(&store, &raw, &v, &[ev("e1")], &given, 150).await, Ok(Some(true)));
        assert_eq!(revoked(&store), serde_json::json!({"kept": 300, "new": 200}));
        // Not given again: still kept until it expires.
        assert!(!publish(&store, &[ev("e1")], 199).await.unwrap(), "no change, no write");
        assert!(publish(&store, &[ev("e1")], 200).await.unwrap());
        assert_eq!(revoked(&store), serde_json::json!({"kept": 300}));
        assert!(publish(&store, &[ev("e1")], 300).await.unwrap());
        assert!(revoked(&store).is_null(), "{}", store.value());
        let many: BTreeMap<String, u64> = (0..60).map(|i| (format!("p{i:011}"), 10_000)).collect();
        let (raw, v) = store.get().await.unwrap();
        assert_eq!(
            write_events(&store, &raw, &v, &[ev("e1")], &many, 0).await,
            Err(EdgeSyncError::TooLarge { events: 1, revoked: 60 })
        );
    }

    /// A store whose version moves between read and write a few times.
    struct Racy {
        inner: MemoryEdgeConfig,
        conflicts: std::sync::atomic::AtomicU32,
    }

    #[async_trait]
    impl EdgeConfigStore for Racy {
        async fn get(&self) -> Result<(String, String), EdgeSyncError> {
            self.inner.get().await
        }
        async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
            if self.conflicts.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) > 0 {
                let (v, ver) = self.inner.get().await?;
                self.inner.put(&v, &ver).await?;
            }
            self.inner.put(value, version).await
        }
    }

    #[tokio::test]
    async fn retries_on_conflicts() {
        let racy =
            Racy { inner: MemoryEdgeConfig::new("{}"), conflicts: std::sync::atomic::AtomicU32::new(2) };
        assert!(publish(&racy, &[ev("e1")], 0).await.unwrap());
        assert!(racy.inner.value().contains("e1"));
        let hopeless =
            Racy { inner: MemoryEdgeConfig::new("{}"), conflicts: std::sync::atomic::AtomicU32::new(99) };
        assert_eq!(publish(&hopeless, &[ev("e1")], 0).await, Err(EdgeSyncError::Conflict));
    }
}
