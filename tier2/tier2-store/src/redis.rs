//! Redis admission store: the real `vwr_tier2::store::AdmissionStore`. Every state change is
//! one Lua script (see `lua/`); all keys of an event share the hash tag `{eventId}`, so every
//! script runs on one Redis Cluster slot (docs/invariants.md#8).
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
use vwr_core::config::{ConfigError, Env};
use vwr_tier2::model::{
    Admission, AdmitReport, Admitted, Cleaned, EventMeta, Figures, Left, LineOrder, LineScore, PendingNotice,
    Place, RegisterMode, Snapshot, StoreError, Tier2Settings,
};
use vwr_tier2::store::{AdmissionStore, Retire};

use crate::scripts;

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
    /// Parses the URL(s) `raw`, read from the variable `name`, with `VWR_REDIS_CLUSTER` and
    /// `VWR_REDIS_TIMEOUT_MS` (docs/settings.md); the error names the variable.
    pub fn from_env(env: &Env, raw: &str, name: &str) -> Result<Self, ConfigError> {
        let invalid = |reason: &str| ConfigError::Invalid {
            name: name.into(),
            value: "…".into(),
            reason: reason.into(),
        };
        let timeout = Duration::from_millis(env.u64_in("VWR_REDIS_TIMEOUT_MS", 1000, 50..=30_000)?);
        let urls: Vec<String> =
            raw.split(',').map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect();
        if urls.is_empty() {
            return Err(invalid("no URL given"));
        }
        if urls.iter().any(|u| !(u.starts_with("redis://") || u.starts_with("rediss://"))) {
            return Err(invalid("use redis://host:port or rediss://host:port"));
        }
        let cluster = env.bool("VWR_REDIS_CLUSTER", false)?;
        if urls.len() > 1 && !cluster {
            return Err(invalid("several URLs need VWR_REDIS_CLUSTER=true"));
        }
        Ok(Self { urls, cluster, connect_timeout: timeout, response_timeout: timeout })
    }

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

/// A Redis URL with any password replaced by `***`, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme + 3 => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            let shown = if userinfo.contains(':') { format!("{user}:***") } else { "***".to_owned() };
            format!("{}{shown}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// The text of a Redis error without anything that could carry a password (the client puts
/// the URL it was given into some connection errors).
fn error_text(e: &RedisError, urls: &[String]) -> String {
    let mut text = e.to_string();
    for u in urls {
        text = text.replace(u.as_str(), &redact_url(u));
    }
    text
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

/// The keys of an event, in the order of `lua/lib.lua`.
fn keys(e: &EventId) -> [String; 11] {
    ["w", "a", "ws", "as", "meta", "jti", "rate", "n", "own", "held", "infl"]
        .map(|k| format!("vwr:{{{e}}}:{k}"))
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

/// Parses `"jti|admittedAtMs|expiresAtMs|tokenExpMs"` (records written before the token end
/// existed have three fields).
pub(crate) fn parse_admission(rec: &str) -> Result<Admission, StoreError> {
    let mut it = rec.split('|');
    let (jti, at, exp) =
        (it.next(), it.next().and_then(|a| a.parse().ok()), it.next().and_then(|e| e.parse().ok()));
    let tok = match it.next() {
        None | Some("") => Some(0),
        Some(t) => t.parse().ok(),
    };
    match (jti, at, exp, tok, it.next()) {
        (Some(jti), Some(admitted_at_ms), Some(expires_at_ms), Some(token_expires_at_ms), None)
            if !jti.is_empty() =>
        {
            Ok(Admission { jti: jti.to_owned(), admitted_at_ms, expires_at_ms, token_expires_at_ms })
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
        let conn =
            if cfg.cluster {
                let client = redis::cluster::ClusterClient::builder(cfg.urls.clone())
                    .connection_timeout(cfg.connect_timeout)
                    .response_timeout(cfg.response_timeout)
                    .retries(2)
                    .build()
                    .map_err(|e| {
                        StoreError::Unavailable(format!("cluster config: {}", error_text(&e, &cfg.urls)))
                    })?;
                Conn::Cluster(client.get_async_connection().await.map_err(|e| {
                    StoreError::Unavailable(format!("connect: {}", error_text(&e, &cfg.urls)))
                })?)
            } else {
                let url = cfg.urls.first().ok_or_else(|| StoreError::Unavailable("no Redis URL".into()))?;
                let client = redis::Client::open(url.as_str())
                    .map_err(|e| StoreError::Unavailable(error_text(&e, &cfg.urls)))?;
                let mgr_cfg = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(cfg.connect_timeout))
                    .set_response_timeout(Some(cfg.response_timeout))
                    .set_number_of_retries(2)
                    .set_max_delay(Duration::from_millis(500));
                Conn::Single(ConnectionManager::new_with_config(client, mgr_cfg).await.map_err(|e| {
                    StoreError::Unavailable(format!("connect: {}", error_text(&e, &cfg.urls)))
                })?)
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

    /// Deletes every key of an event, tombstone included (tests and benchmarks).
    pub async fn purge(&self, event: &EventId) -> Result<(), StoreError> {
        self.command::<()>(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "purge").await?;
        for k in keys(event) {
            self.command::<()>(redis::cmd("UNLINK").arg(k), "purge").await?;
        }
        Ok(())
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

/// The `reindex` flag of a check reply (7th element): the event had been retired from the
/// worker's index and must be put back.
fn reindex_flag(v: &[Value]) -> bool {
    v.get(6).map(as_u64).transpose().ok().flatten() == Some(1)
}

#[async_trait]
impl AdmissionStore for RedisStore {
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
        mode: RegisterMode,
    ) -> Result<Option<EventMeta>, StoreError> {
        let mut inv = self.prepare(&scripts::REGISTER, event);
        let mode_arg = match mode {
            RegisterMode::Admin => "admin",
            RegisterMode::Implicit => "implicit",
        };
        inv.arg(threshold).arg(order.as_str()).arg(mode_arg);
        let v = as_array(self.invoke(&inv, "register").await?)?;
        if matches!(v.first(), Some(Value::BulkString(b)) if b.as_slice() == b"removed") {
            return Ok(None);
        }
        let order = v.get(1).map(as_string).transpose()?.and_then(|o| LineOrder::parse(&o));
        let meta = match (v.first().map(as_u64).transpose()?, order) {
            (Some(threshold), Some(order)) => EventMeta { threshold, order },
            _ => return Err(proto("bad register reply")),
        };
        // Into the worker's index once registered (a registered event is always discoverable
        // by the worker; a crash in between is healed by the next check's reindex flag or
        // registration).
        self.command::<()>(redis::cmd("SADD").arg(EVENTS_KEY).arg(event.as_str()), "register").await?;
        Ok(Some(meta))
    }

    async fn meta(&self, event: &EventId) -> Result<Option<EventMeta>, StoreError> {
        let [.., meta, _, _, _, _, _, _] = keys(event);
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
        inv.arg(user)
            .arg(score.order().as_str())
            .arg(pos)
            .arg(s.active_ttl_ms)
            .arg(jti)
            .arg(s.notice_cap)
            .arg(s.entry_token_ttl_ms);
        let v = as_array(self.invoke(&inv, "check").await?)?;
        let tag = v.first().map(as_string).transpose()?.unwrap_or_default();
        match tag.as_str() {
            "unknown" => Err(StoreError::UnknownEvent),
            "order_mismatch" => {
                Err(StoreError::OrderMismatch(v.get(1).map(as_string).transpose()?.unwrap_or_default()))
            }
            "position_taken" => Err(StoreError::PositionTaken),
            _ => {
                if reindex_flag(&v) {
                    tracing::info!(event = "tier2.event_reindexed", event_id = %event);
                    self.command::<()>(redis::cmd("SADD").arg(EVENTS_KEY).arg(event.as_str()), "reindex")
                        .await?;
                }
                parse_place(&tag, &v)
            }
        }
    }

    async fn status(
        &self,
        event: &EventId,
        user: &str,
        touch: bool,
        token_ttl_ms: u64,
    ) -> Result<Option<Place>, StoreError> {
        let mut inv = self.prepare(&scripts::STATUS, event);
        inv.arg(user).arg(if touch { "1" } else { "0" }).arg(token_ttl_ms);
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
            Some("done") if v.len() >= 9 && v.len() % 2 == 1 => {
                let mut admitted = Vec::new();
                for pair in v[9..].chunks(2) {
                    admitted.push(Admitted { user: as_string(&pair[0])?, jti: as_string(&pair[1])? });
                }
                Ok(AdmitReport {
                    expired: as_u64(&v[1])?,
                    evicted: as_u64(&v[2])?,
                    stale: as_u64(&v[3])?,
                    over_threshold: as_u64(&v[4])?,
                    waiting: as_u64(&v[5])?,
                    active: as_u64(&v[6])?,
                    notices_dropped: as_u64(&v[7])?,
                    idle_ms: as_u64(&v[8])?,
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

    async fn take_notices(
        &self,
        event: &EventId,
        max: usize,
        lease_ms: u64,
    ) -> Result<Vec<PendingNotice>, StoreError> {
        let mut inv = self.prepare(&scripts::TAKE, event);
        inv.arg(max.max(1)).arg(lease_ms);
        let raw = as_array(self.invoke(&inv, "take_notices").await?)?;
        let mut out = Vec::with_capacity(raw.len());
        let mut bad = Vec::new();
        for r in &raw {
            let r = as_string(r)?;
            match PendingNotice::decode(&r) {
                Ok(n) => out.push(n),
                Err(e) => {
                    tracing::error!(event = "tier2.bad_notice", event_id = %event, error = %e, raw = %r);
                    bad.push(PendingNotice { raw: r, ..PendingNotice::default() });
                }
            }
        }
        // An unreadable notice would come back at every lease: forget it (it is logged).
        if !bad.is_empty() {
            self.ack_notices(event, &bad, &[]).await?;
        }
        Ok(out)
    }

    async fn ack_notices(
        &self,
        event: &EventId,
        done: &[PendingNotice],
        retry: &[PendingNotice],
    ) -> Result<(), StoreError> {
        if done.is_empty() && retry.is_empty() {
            return Ok(());
        }
        let mut inv = self.prepare(&scripts::ACK, event);
        inv.arg(done.len());
        for n in done {
            inv.arg(n.raw.as_str());
        }
        for n in retry {
            inv.arg(n.encode());
        }
        let _: Value = self.invoke(&inv, "ack_notices").await?;
        Ok(())
    }

    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError> {
        // Out of the index first, so no worker picks the event up again; then one script
        // removes everything and leaves the tombstone.
        self.command::<()>(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "unregister").await?;
        let inv = self.prepare(&scripts::UNREGISTER, event);
        let v = as_array(self.invoke(&inv, "unregister").await?)?;
        Ok(v.first().map(as_u64).transpose()? == Some(1))
    }

    async fn retire(&self, event: &EventId, idle_ms: u64) -> Result<Retire, StoreError> {
        // Out of the index before the script looks: a check racing in between either lands
        // before the script (the event is busy and goes back in) or after it (the check sees
        // `retired` and puts it back itself). Never an event with people in it off the index.
        self.command::<()>(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "retire").await?;
        let mut inv = self.prepare(&scripts::RETIRE, event);
        inv.arg(idle_ms);
        let tag = match self.invoke::<Value>(&inv, "retire").await.and_then(as_array) {
            Ok(v) => v.first().map(as_string).transpose()?.unwrap_or_default(),
            Err(e) => {
                let _ = self
                    .command::<()>(redis::cmd("SADD").arg(EVENTS_KEY).arg(event.as_str()), "retire")
                    .await;
                return Err(e);
            }
        };
        match tag.as_str() {
            "retired" => Ok(Retire::Retired),
            "busy" => {
                self.command::<()>(redis::cmd("SADD").arg(EVENTS_KEY).arg(event.as_str()), "retire").await?;
                Ok(Retire::Busy)
            }
            // Not registered (unregistered meanwhile): it stays out of the index.
            "unknown" => Ok(Retire::Retired),
            other => Err(proto(format!("bad retire reply {other}"))),
        }
    }

    async fn snapshot(&self, event: &EventId) -> Result<Snapshot, StoreError> {
        let inv = self.prepare(&scripts::SNAPSHOT, event);
        let v = as_array(self.invoke(&inv, "snapshot").await?)?;
        if v.len() != 9 {
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
            held: as_u64(&v[7])?,
            pending_notices: as_u64(&v[8])?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review finding 19: `vwr dev` printed the Redis URL it could not reach, password included.
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact_url("rediss://app:hunter2@h:6379/0"), "rediss://app:***@h:6379/0");
        assert_eq!(redact_url("redis://:hunter2@h:6379"), "redis://:***@h:6379");
        assert_eq!(redact_url("redis://token@h"), "redis://***@h");
        assert_eq!(redact_url("redis://h:6379"), "redis://h:6379");
    }

    #[test]
    fn config_from_env() {
        let env = Env::default();
        assert!(
            RedisConfig::from_env(&env, "http://x", "VWR_REDIS_URL")
                .unwrap_err()
                .to_string()
                .contains("VWR_REDIS_URL")
        );
        let e = RedisConfig::from_env(&env, "redis://a,redis://b", "VWR_REDIS_URL").unwrap_err();
        assert!(e.to_string().contains("VWR_REDIS_CLUSTER"));
        let cluster = Env::from_pairs([("VWR_REDIS_CLUSTER", "true")]);
        assert!(
            RedisConfig::from_env(&cluster, "redis://127.0.0.1:7000,redis://127.0.0.1:7001", "X")
                .unwrap()
                .cluster
        );
    }

    #[test]
    fn admission_records_old_and_new() {
        let a = parse_admission("j1|10|20").unwrap();
        assert_eq!((a.expires_at_ms, a.token_expires_at_ms), (20, 0));
        assert_eq!(parse_admission("j1|10|20|15").unwrap().token_expires_at_ms, 15);
        assert!(parse_admission("j1|10|20|x").is_err());
        assert!(parse_admission("|10|20|15").is_err());
    }
}
