//! Keeps the edge verifier's list of active events in step with tier 1. The CloudFront
//! Function reads its configuration from the `config` entry of a KeyValueStore (see
//! `edge/README.md`); activating or deactivating an event rewrites that entry's `events` list
//! (read-modify-write guarded by the store's ETag), and every advancer run reconciles it, so
//! a missed update heals within a minute (docs/adr/0011-edge-event-list.md). The revoked passes
//! (pass id → expiry, docs/passes.md) live in an entry of their own, `revoked`, which the edge
//! reads only with a token to check: the union of what it holds and the events' revoked passes,
//! each dropped once expired, so passes never crowd the event list out of `config`'s 1 KB (a
//! `revoked` map left in `config` by an older version is moved there). The list is
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
/// Name of the revoked passes' entry.
pub const REVOKED_KEY: &str = "revoked";

/// A failure to update the edge configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EdgeSyncError {
    #[error("edge configuration store unavailable: {0}")]
    Unavailable(String),
    #[error("the edge configuration entry is missing or not JSON: {0}")]
    BadConfig(String),
    #[error("{events} active events do not fit the 1 KB edge configuration entry")]
    TooLarge { events: usize },
    #[error(
        "{revoked} live revoked passes do not fit the 1 KB edge entry of revocations: wait until some expire (passes live at most 12 hours)"
    )]
    TooManyRevoked { revoked: usize },
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
    /// The revoked passes' entry (`None` while it does not exist) and the version to write
    /// against.
    async fn get_revoked(&self) -> Result<(Option<String>, String), EdgeSyncError>;
    /// Writes the revoked passes' entry if the version tag still matches; `Ok(false)` on a
    /// conflict.
    async fn put_revoked(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError>;
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
/// `version`: `Some(changed)`, or `None` when the entry changed since (read it again). Other
/// fields (rules, cookie prefix, fail mode…) are kept as they are; a `revoked` map an older
/// version left there goes when `drop_revoked` (it is in the `revoked` entry by then).
pub async fn write_events(
    store: &dyn EdgeConfigStore,
    raw: &str,
    version: &str,
    active: &[EventId],
    drop_revoked: bool,
) -> Result<Option<bool>, EdgeSyncError> {
    let mut ids: Vec<&str> = active.iter().map(EventId::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut cfg: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| EdgeSyncError::BadConfig(e.to_string()))?;
    let obj = cfg.as_object_mut().ok_or_else(|| EdgeSyncError::BadConfig("not a JSON object".into()))?;
    let want = serde_json::json!(ids);
    let legacy = drop_revoked && obj.contains_key("revoked");
    if obj.get("events") == Some(&want) && !legacy {
        return Ok(Some(false));
    }
    obj.insert("events".into(), want);
    if drop_revoked {
        obj.remove("revoked");
    }
    let value = serde_json::to_string(&cfg).map_err(|e| EdgeSyncError::BadConfig(e.to_string()))?;
    if value.len() > MAX_CONFIG_BYTES {
        return Err(EdgeSyncError::TooLarge { events: ids.len() });
    }
    if store.put(&value, version).await? {
        tracing::info!(event = "tier1.edge_config_published", events = ids.len());
        return Ok(Some(true));
    }
    Ok(None)
}

/// The unexpired entries of a `revoked` map as JSON (pass id → expiry), if `v` is one.
fn live_map(v: Option<&serde_json::Value>, now: u64) -> BTreeMap<String, u64> {
    v.and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter().filter_map(|(k, e)| e.as_u64().filter(|e| *e > now).map(|e| (k.clone(), e))).collect()
        })
        .unwrap_or_default()
}

/// Writes the `revoked` entry: the union of what it holds, `given` and `legacy` (a map an
/// older version kept in `config`), each dropped once expired at `now` — a revocation is never
/// lifted before. Returns whether it changed.
pub async fn publish_revoked(
    store: &dyn EdgeConfigStore,
    given: &BTreeMap<String, u64>,
    legacy: &BTreeMap<String, u64>,
    now: u64,
) -> Result<bool, EdgeSyncError> {
    for _ in 0..PUBLISH_ATTEMPTS {
        let (raw, version) = store.get_revoked().await?;
        let held: Option<serde_json::Value> = match raw.as_deref() {
            Some(r) => {
                Some(serde_json::from_str(r).map_err(|e| EdgeSyncError::BadConfig(format!("revoked: {e}")))?)
            }
            None => None,
        };
        let mut all = live_map(held.as_ref(), now);
        for (k, v) in given.iter().chain(legacy) {
            if *v > now {
                all.entry(k.clone()).or_insert(*v);
            }
        }
        let want = serde_json::json!(all);
        if held.as_ref() == Some(&want) || (held.is_none() && all.is_empty()) {
            return Ok(false);
        }
        let value = serde_json::to_string(&want).map_err(|e| EdgeSyncError::BadConfig(e.to_string()))?;
        if value.len() > MAX_CONFIG_BYTES {
            return Err(EdgeSyncError::TooManyRevoked { revoked: all.len() });
        }
        if store.put_revoked(&value, &version).await? {
            tracing::info!(event = "tier1.edge_revoked_published", revoked = all.len());
            return Ok(true);
        }
    }
    Err(EdgeSyncError::Conflict)
}

/// The `revoked` map an older version kept in the configuration value `raw`.
pub fn legacy_revoked(raw: &str, now: u64) -> BTreeMap<String, u64> {
    let cfg: Option<serde_json::Value> = serde_json::from_str(raw).ok();
    live_map(cfg.as_ref().and_then(|c| c.get("revoked")), now)
}

/// Writes `active` into the configuration's `events` list (sorted, unique), whatever the list
/// held. Returns whether anything changed. Other fields are kept as they are.
pub async fn publish(store: &dyn EdgeConfigStore, active: &[EventId]) -> Result<bool, EdgeSyncError> {
    for _ in 0..PUBLISH_ATTEMPTS {
        let (raw, version) = store.get().await?;
        if let Some(changed) = write_events(store, &raw, &version, active, false).await? {
            return Ok(changed);
        }
    }
    Err(EdgeSyncError::Conflict)
}

/// In-memory configuration and revocation entries (local runs and tests), with one version
/// for both, as a KeyValueStore has one ETag.
#[derive(Debug, Default)]
pub struct MemoryEdgeConfig {
    inner: std::sync::Mutex<MemoryEntries>,
}

#[derive(Debug, Default)]
struct MemoryEntries {
    config: String,
    revoked: Option<String>,
    version: u64,
}

impl MemoryEdgeConfig {
    pub fn new(initial: &str) -> Self {
        Self {
            inner: std::sync::Mutex::new(MemoryEntries {
                config: initial.to_owned(),
                revoked: None,
                version: 1,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryEntries> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The `config` entry.
    pub fn value(&self) -> String {
        self.lock().config.clone()
    }

    /// The `revoked` entry, if written.
    pub fn revoked(&self) -> Option<String> {
        self.lock().revoked.clone()
    }
}

#[async_trait]
impl EdgeConfigStore for MemoryEdgeConfig {
    async fn get(&self) -> Result<(String, String), EdgeSyncError> {
        let g = self.lock();
        Ok((g.config.clone(), g.version.to_string()))
    }

    async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        let mut g = self.lock();
        if g.version.to_string() != version {
            return Ok(false);
        }
        g.config = value.to_owned();
        g.version += 1;
        Ok(true)
    }

    async fn get_revoked(&self) -> Result<(Option<String>, String), EdgeSyncError> {
        let g = self.lock();
        Ok((g.revoked.clone(), g.version.to_string()))
    }

    async fn put_revoked(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        let mut g = self.lock();
        if g.version.to_string() != version {
            return Ok(false);
        }
        g.revoked = Some(value.to_owned());
        g.version += 1;
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
        assert!(publish(&store, &[ev("b"), ev("a"), ev("a")]).await.unwrap());
        let v: serde_json::Value = serde_json::from_str(&store.value()).unwrap();
        assert_eq!(v["events"], serde_json::json!(["a", "b"]));
        assert_eq!(v["failMode"], "closed");
        assert!(!publish(&store, &[ev("a"), ev("b")]).await.unwrap(), "no change, no write");
        assert!(publish(&store, &[]).await.unwrap());
        let many: Vec<EventId> = (0..100).map(|i| ev(&format!("event-number-{i:04}"))).collect();
        assert!(matches!(publish(&store, &many).await, Err(EdgeSyncError::TooLarge { events: 100 })));
        let bad = MemoryEdgeConfig::new("not json");
        assert!(matches!(publish(&bad, &[]).await, Err(EdgeSyncError::BadConfig(_))));
        assert_eq!(events_of(&store.value()).unwrap(), Vec::<String>::new());
        assert_eq!(events_of(r#"{"events":["a","b"]}"#).unwrap(), ["a", "b"]);
        assert_eq!(events_of("{}").unwrap(), Vec::<String>::new());
        assert!(matches!(events_of("[]"), Err(EdgeSyncError::BadConfig(_))));
    }

    /// The revoked entry: the union of what it holds, what is given and what an older version
    /// left in `config`, each gone once expired, never lifted before; bounded by its own 1 KB,
    /// never the event list's.
    #[tokio::test]
    async fn revocations_are_kept_until_they_expire_in_their_own_entry() {
        let store = MemoryEdgeConfig::new(r#"{"rules":[],"events":["e1"],"revoked":{"old":100,"kept":300}}"#);
        let revoked = |s: &MemoryEdgeConfig| -> serde_json::Value {
            s.revoked().map_or(serde_json::Value::Null, |r| serde_json::from_str(&r).unwrap())
        };
        let legacy = legacy_revoked(&store.value(), 150);
        assert_eq!(legacy, BTreeMap::from([("kept".to_owned(), 300)]));
        let given = BTreeMap::from([("new".to_owned(), 200), ("stale".to_owned(), 150)]);
        assert_eq!(publish_revoked(&store, &given, &legacy, 150).await, Ok(true));
        assert_eq!(revoked(&store), serde_json::json!({"kept": 300, "new": 200}));
        // The map left in `config` goes once it is in its own entry.
        let (raw, v) = store.get().await.unwrap();
        assert_eq!(write_events(&store, &raw, &v, &[ev("e1")], true).await, Ok(Some(true)));
        assert!(!store.value().contains("revoked"), "{}", store.value());
        // Not given again: still kept until it expires.
        let none = BTreeMap::new();
        assert_eq!(publish_revoked(&store, &none, &none, 199).await, Ok(false), "no change, no write");
        assert_eq!(publish_revoked(&store, &none, &none, 200).await, Ok(true));
        assert_eq!(revoked(&store), serde_json::json!({"kept": 300}));
        assert_eq!(publish_revoked(&store, &none, &none, 300).await, Ok(true));
        assert_eq!(revoked(&store), serde_json::json!({}));
        // 60 live revocations do not fit their entry: refused, and the event list still takes
        // 30 events (before, both shared one entry and ~27 revocations failed every write).
        let many: BTreeMap<String, u64> = (0..60).map(|i| (format!("p{i:011}"), 10_000)).collect();
        assert_eq!(
            publish_revoked(&store, &many, &none, 0).await,
            Err(EdgeSyncError::TooManyRevoked { revoked: 60 })
        );
        let events: Vec<EventId> = (0..30).map(|i| ev(&format!("sale-{i:04}"))).collect();
        assert!(publish(&store, &events).await.unwrap());
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
        async fn get_revoked(&self) -> Result<(Option<String>, String), EdgeSyncError> {
            self.inner.get_revoked().await
        }
        async fn put_revoked(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
            self.inner.put_revoked(value, version).await
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
        assert!(publish(&racy, &[ev("e1")]).await.unwrap());
        assert!(racy.inner.value().contains("e1"));
        let hopeless =
            Racy { inner: MemoryEdgeConfig::new("{}"), conflicts: std::sync::atomic::AtomicU32::new(99) };
        assert_eq!(publish(&hopeless, &[ev("e1")]).await, Err(EdgeSyncError::Conflict));
    }
}
