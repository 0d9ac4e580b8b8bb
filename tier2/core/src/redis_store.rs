//! Redis admission store. Every state change is one Lua script (see `lua/`); all keys of an
//! event share the hash tag `{eventId}`, so every script runs on one Redis Cluster slot.
//! Single nodes use a multiplexed, auto-reconnecting `ConnectionManager`; clusters use the
//! async cluster client. Requests time out quickly so a Redis outage becomes a 503, and the
//! connection comes back by itself when Redis does.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{FromRedisValue, RedisError, ScriptInvocation, Value};
use vwr_core::EventId;

use crate::model::{
    Admission, AdmitReport, Admitted, Cleaned, EventMeta, Figures, Left, LineOrder, LineScore, PendingNotice,
    Place, Snapshot, StoreError, Tier2Settings,
};
use crate::scripts;
use crate::store::AdmissionStore;

/// The set of registered events (one key outside any event slot; never touched by scripts).
pub const EVENTS_KEY: &str = "vwr:events";

#[derive(Clone)]
enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// How to reach Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// `redis://[user:pass@]host:port[/db]` or `rediss://…` for TLS; several for a cluster.
    pub urls: Vec<String>,
    pub cluster: bool,
    pub connect_timeout: Duration,
    pub response_timeout: Duration,
}

impl RedisConfig {
    pub fn single(url: &str) -> Self {
        Self {
            urls: vec![url.to_owned()],
            cluster: false,
            connect_timeout: Duration::from_secs(1),
            response_timeout: Duration::from_secs(1),
        }
    }
}

/// Admission store on Redis.
#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    time_offset_ms: Arc<AtomicI64>,
}

fn redis_error(op: &'static str, e: RedisError) -> StoreError {
    let script_bug = e.code().is_some_and(|c| c.starts_with("ERR")) && e.to_string().contains("script");
    tracing::warn!(event = "tier2.redis_error", op, error = %e);
    if script_bug {
        StoreError::Protocol(format!("{op}: {e}"))
    } else {
        StoreError::Unavailable(format!("{op}: {e}"))
    }
}

fn keys(e: &EventId) -> [String; 9] {
    ["w", "a", "ws", "as", "meta", "jti", "rate", "n", "own"].map(|k| format!("vwr:{{{e}}}:{k}"))
}

fn proto(msg: impl Into<String>) -> StoreError {
    StoreError::Protocol(msg.into())
}

fn as_u64(v: &Value) -> Result<u64, StoreError> {
    match v {
        Value::Int(i) => u64::try_from(*i).map_err(|_| proto(format!("negative {i}"))),
        Value::BulkString(b) => {
            std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).ok_or_else(|| proto("not a number"))
        }
        Value::Nil => Ok(0),
        other => Err(proto(format!("expected a number, got {other:?}"))),
    }
}

fn as_string(v: &Value) -> Result<String, StoreError> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).map_err(|_| proto("not UTF-8")),
        Value::SimpleString(s) => Ok(s.clone()),
        other => Err(proto(format!("expected a string, got {other:?}"))),
    }
}

fn as_array(v: Value) -> Result<Vec<Value>, StoreError> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(proto(format!("expected an array, got {other:?}"))),
    }
}

/// Parses `"jti|admittedAtMs|expiresAtMs"`.
pub(crate) fn parse_admission(rec: &str) -> Result<Admission, StoreError> {
    let mut it = rec.split('|');
    match (it.next(), it.next().and_then(|a| a.parse().ok()), it.next().and_then(|e| e.parse().ok())) {
        (Some(jti), Some(admitted_at_ms), Some(expires_at_ms)) if !jti.is_empty() => {
            Ok(Admission { jti: jti.to_owned(), admitted_at_ms, expires_at_ms })
        }
        _ => Err(proto(format!("bad admission record {rec:?}"))),
    }
}

/// Parses a `describe()` reply (after its tag).
fn parse_place(tag: &str, a: &[Value]) -> Result<Place, StoreError> {
    let fig = |i: usize| -> Result<Figures, StoreError> {
        Ok(Figures {
            queue_size: as_u64(&a[i])?,
            active: as_u64(&a[i + 1])?,
            threshold: as_u64(&a[i + 2])?,
            admitted_last_60s: as_u64(&a[i + 3])?,
        })
    };
    if a.len() < 6 {
        return Err(proto(format!("short reply {a:?}")));
    }
    match tag {
        "queued" => Ok(Place::Queued { position: as_u64(&a[1])?, figures: fig(2)? }),
        "active" | "admitted" => Ok(Place::Active {
            admission: parse_admission(&as_string(&a[1])?)?,
            fresh: tag == "admitted",
            figures: fig(2)?,
        }),
        other => Err(proto(format!("unexpected tag {other}"))),
    }
}

impl RedisStore {
    /// Connects (the first connection must succeed; later outages reconnect by themselves).
    pub async fn connect(cfg: &RedisConfig) -> Result<Self, StoreError> {
        let conn = if cfg.cluster {
            let client = redis::cluster::ClusterClient::builder(cfg.urls.clone())
                .connection_timeout(cfg.connect_timeout)
                .response_timeout(cfg.response_timeout)
                .retries(2)
                .build()
                .map_err(|e| StoreError::Unavailable(format!("cluster config: {e}")))?;
            Conn::Cluster(client.get_async_connection().await.map_err(|e| redis_error("connect", e))?)
        } else {
            let url = cfg.urls.first().ok_or_else(|| StoreError::Unavailable("no Redis URL".into()))?;
            let client =
                redis::Client::open(url.as_str()).map_err(|e| StoreError::Unavailable(format!("{e}")))?;
            let mgr_cfg = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(cfg.connect_timeout))
                .set_response_timeout(Some(cfg.response_timeout))
                .set_number_of_retries(2)
                .set_max_delay(Duration::from_millis(500));
            Conn::Single(
                ConnectionManager::new_with_config(client, mgr_cfg)
                    .await
                    .map_err(|e| redis_error("connect", e))?,
            )
        };
        Ok(Self { conn, time_offset_ms: Arc::new(AtomicI64::new(0)) })
    }

    /// Moves the scripts' clock (tests only; production keeps 0).
    pub fn set_time_offset_ms(&self, ms: i64) {
        self.time_offset_ms.store(ms, Ordering::SeqCst);
    }

    pub fn time_offset_ms(&self) -> i64 {
        self.time_offset_ms.load(Ordering::SeqCst)
    }

    async fn invoke<T: FromRedisValue>(
        &self,
        inv: &ScriptInvocation<'_>,
        op: &'static str,
    ) -> Result<T, StoreError> {
        let res = match &self.conn {
            Conn::Single(c) => inv.invoke_async(&mut c.clone()).await,
            Conn::Cluster(c) => inv.invoke_async(&mut c.clone()).await,
        };
        res.map_err(|e| redis_error(op, e))
    }

    async fn command<T: FromRedisValue>(&self, cmd: &redis::Cmd, op: &'static str) -> Result<T, StoreError> {
        let res = match &self.conn {
            Conn::Single(c) => cmd.query_async(&mut c.clone()).await,
            Conn::Cluster(c) => cmd.query_async(&mut c.clone()).await,
        };
        res.map_err(|e| redis_error(op, e))
    }

    fn prepare<'a>(&self, script: &'a redis::Script, event: &EventId) -> ScriptInvocation<'a> {
        let mut inv = script.prepare_invoke();
        for k in keys(event) {
            inv.key(k);
        }
        inv.arg(self.time_offset_ms());
        inv
    }

    /// Deletes every key of an event (tests and benchmarks).
    pub async fn purge(&self, event: &EventId) -> Result<(), StoreError> {
        self.unregister(event).await.map(|_| ())
    }

    /// `MEMORY USAGE` of each key of an event, in bytes (benchmarks).
    pub async fn memory_usage(&self, event: &EventId) -> Result<u64, StoreError> {
        let mut total = 0;
        for k in keys(event) {
            let v: Option<u64> = self
                .command(redis::cmd("MEMORY").arg("USAGE").arg(k).arg("SAMPLES").arg(0), "memory")
                .await?;
            total += v.unwrap_or(0);
        }
        Ok(total)
    }
}

#[async_trait]
impl AdmissionStore for RedisStore {
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
    ) -> Result<EventMeta, StoreError> {
        // Index first: a registered event is always discoverable by the worker.
        self.command::<()>(redis::cmd("SADD").arg(EVENTS_KEY).arg(event.as_str()), "register").await?;
        let mut inv = self.prepare(&scripts::REGISTER, event);
        inv.arg(threshold).arg(order.as_str());
        let v = as_array(self.invoke(&inv, "register").await?)?;
        let order = v.get(1).map(as_string).transpose()?.and_then(|o| LineOrder::parse(&o));
        match (v.first().map(as_u64).transpose()?, order) {
            (Some(threshold), Some(order)) => Ok(EventMeta { threshold, order }),
            _ => Err(proto("bad register reply")),
        }
    }

    async fn meta(&self, event: &EventId) -> Result<Option<EventMeta>, StoreError> {
        let [.., meta, _, _, _, _] = keys(event);
        let (th, order): (Option<u64>, Option<String>) =
            self.command(redis::cmd("HMGET").arg(meta).arg("threshold").arg("order"), "meta").await?;
        Ok(match (th, order.as_deref().and_then(LineOrder::parse)) {
            (Some(threshold), Some(order)) => Some(EventMeta { threshold, order }),
            _ => None,
        })
    }

    async fn events(&self) -> Result<Vec<EventId>, StoreError> {
        let ids: Vec<String> = self.command(redis::cmd("SMEMBERS").arg(EVENTS_KEY), "events").await?;
        let mut out: Vec<EventId> = ids.iter().filter_map(|s| EventId::parse(s).ok()).collect();
        out.sort();
        Ok(out)
    }

    async fn check(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
    ) -> Result<Place, StoreError> {
        let pos = match score {
            LineScore::Tier1Position(p) => p,
            LineScore::Arrival => 0,
        };
        let mut inv = self.prepare(&scripts::CHECK, event);
        inv.arg(user).arg(score.order().as_str()).arg(pos).arg(s.active_ttl_ms).arg(jti).arg(s.notice_cap);
        let v = as_array(self.invoke(&inv, "check").await?)?;
        let tag = v.first().map(as_string).transpose()?.unwrap_or_default();
        match tag.as_str() {
            "unknown" => Err(StoreError::UnknownEvent),
            "order_mismatch" => {
                Err(StoreError::OrderMismatch(v.get(1).map(as_string).transpose()?.unwrap_or_default()))
            }
            "position_taken" => Err(StoreError::PositionTaken),
            _ => parse_place(&tag, &v),
        }
    }

    async fn status(&self, event: &EventId, user: &str, touch: bool) -> Result<Option<Place>, StoreError> {
        let mut inv = self.prepare(&scripts::STATUS, event);
        inv.arg(user).arg(if touch { "1" } else { "0" });
        let v = as_array(self.invoke(&inv, "status").await?)?;
        let tag = v.first().map(as_string).transpose()?.unwrap_or_default();
        match tag.as_str() {
            "unknown" => Err(StoreError::UnknownEvent),
            "none" => Ok(None),
            _ => parse_place(&tag, &v).map(Some),
        }
    }

    async fn leave(&self, event: &EventId, user: &str) -> Result<Left, StoreError> {
        let mut inv = self.prepare(&scripts::LEAVE, event);
        inv.arg(user);
        let v = as_array(self.invoke(&inv, "leave").await?)?;
        match v.first().map(as_string).transpose()?.as_deref() {
            Some("unknown") => Err(StoreError::UnknownEvent),
            Some("left") if v.len() == 3 => {
                Ok(Left { was_waiting: as_u64(&v[1])? == 1, was_active: as_u64(&v[2])? == 1 })
            }
            _ => Err(proto("bad leave reply")),
        }
    }

    async fn admit(
        &self,
        event: &EventId,
        jti_prefix: &str,
        s: &Tier2Settings,
    ) -> Result<AdmitReport, StoreError> {
        let mut inv = self.prepare(&scripts::ADMIT, event);
        inv.arg(s.batch_max)
            .arg(s.active_ttl_ms)
            .arg(s.active_heartbeat_timeout_ms)
            .arg(s.waiting_timeout_ms)
            .arg(jti_prefix)
            .arg(s.notice_cap)
            .arg(s.cleanup_limit);
        let v = as_array(self.invoke(&inv, "admit").await?)?;
        match v.first().map(as_string).transpose()?.as_deref() {
            Some("unknown") => Err(StoreError::UnknownEvent),
            Some("done") if v.len() >= 7 && v.len() % 2 == 1 => {
                let mut admitted = Vec::new();
                for pair in v[7..].chunks(2) {
                    admitted.push(Admitted { user: as_string(&pair[0])?, jti: as_string(&pair[1])? });
                }
                Ok(AdmitReport {
                    expired: as_u64(&v[1])?,
                    evicted: as_u64(&v[2])?,
                    stale: as_u64(&v[3])?,
                    over_threshold: as_u64(&v[4])?,
                    waiting: as_u64(&v[5])?,
                    active: as_u64(&v[6])?,
                    admitted,
                })
            }
            _ => Err(proto("bad admit reply")),
        }
    }

    async fn cleanup(&self, event: &EventId, s: &Tier2Settings) -> Result<Cleaned, StoreError> {
        let mut inv = self.prepare(&scripts::CLEANUP, event);
        inv.arg(s.active_heartbeat_timeout_ms).arg(s.waiting_timeout_ms).arg(s.cleanup_limit);
        let v = as_array(self.invoke(&inv, "cleanup").await?)?;
        match v.first().map(as_string).transpose()?.as_deref() {
            Some("unknown") => Err(StoreError::UnknownEvent),
            Some("cleaned") if v.len() == 4 => {
                Ok(Cleaned { expired: as_u64(&v[1])?, evicted: as_u64(&v[2])?, stale: as_u64(&v[3])? })
            }
            _ => Err(proto("bad cleanup reply")),
        }
    }

    async fn take_notices(&self, event: &EventId, max: usize) -> Result<Vec<PendingNotice>, StoreError> {
        let [.., notices, _] = keys(event);
        let raw: Option<Vec<String>> =
            self.command(redis::cmd("LPOP").arg(notices).arg(max.max(1)), "take_notices").await?;
        let mut out = Vec::new();
        for r in raw.unwrap_or_default() {
            match serde_json::from_str::<PendingNotice>(&r) {
                Ok(n) => out.push(n),
                Err(e) => tracing::error!(event = "tier2.bad_notice", error = %e, raw = %r),
            }
        }
        Ok(out)
    }

    async fn requeue_notices(&self, event: &EventId, notices: &[PendingNotice]) -> Result<(), StoreError> {
        if notices.is_empty() {
            return Ok(());
        }
        let [.., notices_key, _] = keys(event);
        let mut cmd = redis::cmd("RPUSH");
        cmd.arg(notices_key);
        for n in notices {
            cmd.arg(serde_json::to_string(n).map_err(|e| proto(e.to_string()))?);
        }
        self.command::<()>(&cmd, "requeue_notices").await
    }

    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError> {
        // Out of the index first, so no worker picks the event up again; UNLINK frees large
        // sets in the background instead of blocking Redis.
        let was: u64 =
            self.command(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "unregister").await?;
        for k in keys(event) {
            self.command::<()>(redis::cmd("UNLINK").arg(k), "unregister").await?;
        }
        Ok(was == 1)
    }

    async fn snapshot(&self, event: &EventId) -> Result<Snapshot, StoreError> {
        let inv = self.prepare(&scripts::SNAPSHOT, event);
        let v = as_array(self.invoke(&inv, "snapshot").await?)?;
        if v.len() != 7 {
            return Err(proto("bad snapshot reply"));
        }
        let meta = match (&v[0], &v[1]) {
            (Value::Nil, _) | (_, Value::Nil) => None,
            (th, order) => Some(EventMeta {
                threshold: as_u64(th)?,
                order: LineOrder::parse(&as_string(order)?).ok_or_else(|| proto("bad order"))?,
            }),
        };
        Ok(Snapshot {
            meta,
            waiting: as_u64(&v[2])?,
            active: as_u64(&v[3])?,
            active_members: as_u64(&v[4])?,
            in_both: as_u64(&v[5])?,
            admitted_last_60s: as_u64(&v[6])?,
        })
    }
}
