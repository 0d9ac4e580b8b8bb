//! Redis admission store: the real `vwr_tier2::store::AdmissionStore`. Every state change is
//! one Lua script (see `lua/`), run as a function of the store's Redis function library
//! (`FCALL`; the library is loaded when Redis does not have it), or as a script (`EVALSHA`)
//! where Redis refuses functions (`scripts.rs`); all keys of an event share the hash tag
//! `{eventId}`, so every script runs on one Redis Cluster slot (docs/invariants.md#8).
//! Single nodes use a multiplexed, auto-reconnecting `ConnectionManager`; clusters use the
//! async cluster client. Requests time out quickly so a Redis outage becomes a 503, and the
//! connection comes back by itself when Redis does. The keys: [`keys`].

pub mod keys;
mod reply;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{FromRedisValue, RedisError, ScriptInvocation, Value};
use vwr_core::EventId;
use vwr_core::config::{ConfigError, Env};
use vwr_core::hold::Held;
use vwr_tier2::model::{
    AdmitReport, Admitted, Cleaned, EventMeta, HoldProof, Left, LineOrder, LineScore, LineView,
    PendingNotice, Place, RegisterMode, Snapshot, StoreError, Tier2Settings, Touch,
};
use vwr_tier2::report::Tier2Minute;
use vwr_tier2::store::{AdmissionStore, Retire};

use crate::scripts::{self, Op};
use keys::{EVENTS_KEY, event_keys};
use reply::{as_array, as_score, as_string, as_u64, figures, parse_place, proto};

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
    /// Redis refused the function library (no permission, or no functions): run scripts.
    scripts_only: Arc<AtomicBool>,
    library: Arc<LibraryLoads>,
}

/// Loads of the function library by this store (and its clones): one at a time.
#[derive(Default)]
struct LibraryLoads {
    lock: tokio::sync::Mutex<()>,
    loads: AtomicU64,
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
        Ok(Self {
            conn,
            time_offset_ms: Arc::new(AtomicI64::new(0)),
            scripts_only: Arc::new(AtomicBool::new(false)),
            library: Arc::default(),
        })
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

    async fn raw(&self, cmd: &redis::Cmd) -> Result<Value, RedisError> {
        match &self.conn {
            Conn::Single(c) => cmd.query_async(&mut c.clone()).await,
            Conn::Cluster(c) => cmd.query_async(&mut c.clone()).await,
        }
    }

    /// Runs `op` on the keys of `event` with `args` (after the clock offset): the library's
    /// function, loading the library first when Redis does not have it (a new version, a
    /// restarted or flushed Redis, a new cluster node); the script where Redis refuses
    /// functions.
    async fn run(
        &self,
        op: Op,
        event: &EventId,
        args: &[String],
        name: &'static str,
    ) -> Result<Value, StoreError> {
        let keys = event_keys(event);
        let offset = self.time_offset_ms().to_string();
        if !self.scripts_only.load(Ordering::Relaxed) {
            let mut fcall = redis::cmd("FCALL");
            fcall.arg(scripts::function(op)).arg(keys.len()).arg(&keys[..]).arg(&offset).arg(args);
            let loads = self.library.loads.load(Ordering::Acquire);
            match self.raw(&fcall).await {
                Ok(v) => return Ok(v),
                Err(e) if not_found(&e) => match self.load_library(loads).await {
                    Ok(()) => return self.raw(&fcall).await.map_err(|e| redis_error(name, e)),
                    Err(e) if refused(&e) => self.fall_back(&e),
                    Err(e) => return Err(redis_error(name, e)),
                },
                Err(e) if refused(&e) => self.fall_back(&e),
                Err(e) => return Err(redis_error(name, e)),
            }
        }
        let mut inv = scripts::script(op).prepare_invoke();
        for k in &keys {
            inv.key(k);
        }
        inv.arg(&offset);
        for a in args {
            inv.arg(a);
        }
        self.invoke(&inv, name).await
    }

    /// Loads the library, once for all the calls that found it missing at the same time:
    /// `seen` is the count of loads when the caller's call failed; if a load finished since,
    /// the caller just calls again. Without `REPLACE`: a library of this name holds this very
    /// code (the name is its hash), so "already exists" (another instance was faster; in a
    /// cluster, the primaries that had it) is success, and costs Redis no compilation.
    async fn load_library(&self, seen: u64) -> Result<(), RedisError> {
        let _one = self.library.lock.lock().await;
        if self.library.loads.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        let lib = &*scripts::LIBRARY;
        // A cluster client sends it to every primary.
        match self.raw(redis::cmd("FUNCTION").arg("LOAD").arg(&lib.source)).await {
            Ok(_) => tracing::info!(event = "tier2.redis_functions_loaded", library = %lib.name),
            Err(e) if e.to_string().contains("already exists") => {}
            Err(e) => return Err(e),
        }
        self.library.loads.fetch_add(1, Ordering::Release);
        Ok(())
    }

    fn fall_back(&self, e: &RedisError) {
        if !self.scripts_only.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                event = "tier2.redis_functions_refused",
                error = %e,
                "Redis refuses functions: the store runs its Lua as scripts (EVALSHA), at a higher cost per call"
            );
        }
    }

    /// Whether the store runs scripts because Redis refused its function library (tests).
    pub fn runs_scripts(&self) -> bool {
        self.scripts_only.load(Ordering::Relaxed)
    }

    /// Runs the Lua as scripts from now on, as where Redis refuses functions (benchmarks: what
    /// that costs).
    pub fn run_as_scripts(&self) {
        self.scripts_only.store(true, Ordering::Relaxed);
    }

    /// The name of the function library this build loads (`FUNCTION LIST`, tests).
    pub fn function_library() -> &'static str {
        &scripts::LIBRARY.name
    }

    /// Deletes every key of an event, tombstone included (tests and benchmarks).
    pub async fn purge(&self, event: &EventId) -> Result<(), StoreError> {
        self.command::<()>(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "purge").await?;
        for k in event_keys(event) {
            self.command::<()>(redis::cmd("UNLINK").arg(k), "purge").await?;
        }
        Ok(())
    }

    /// `MEMORY USAGE` of each key of an event, in bytes (benchmarks).
    pub async fn memory_usage(&self, event: &EventId) -> Result<u64, StoreError> {
        let mut total = 0;
        for k in event_keys(event) {
            let v: Option<u64> = self
                .command(redis::cmd("MEMORY").arg("USAGE").arg(k).arg("SAMPLES").arg(0), "memory")
                .await?;
            total += v.unwrap_or(0);
        }
        Ok(total)
    }
}

/// `FCALL` of a function Redis does not have (a new version, a restarted or flushed Redis, a
/// new cluster node).
fn not_found(e: &RedisError) -> bool {
    e.to_string().contains("Function not found")
}

/// Redis refuses functions for good: no permission for `FCALL` or `FUNCTION LOAD`, or a
/// server without them. Not any `NOPERM`: one for the keys is no reason to give up functions
/// (the scripts would be refused as well).
fn refused(e: &RedisError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    (e.code() == Some("NOPERM") && (text.contains("fcall") || text.contains("function")))
        || text.contains("unknown command")
        || text.contains("unknown subcommand")
}

/// The `reindex` flag of a check reply (8th element): the event had been retired from the
/// worker's index and must be put back.
fn reindex_flag(v: &[Value]) -> bool {
    v.get(7).map(as_u64).transpose().ok().flatten() == Some(1)
}

/// Minutes in a day: tier 2's report keeps one hash per event and day.
const MINUTES_A_DAY: u64 = 1_440;

/// Adds the (field, count) pairs of `ARGV[1..n-2]` to the day's hash `KEYS[1]`, notes the day
/// `ARGV[n-1]` in the set `KEYS[2]`, and keeps both `ARGV[n]` seconds: tier 2's report minutes
/// (docs/data.md#redis).
const REPORT_ADD: &str = "for i = 1, #ARGV - 2, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end \
redis.call('EXPIRE', KEYS[1], ARGV[#ARGV]) redis.call('SADD', KEYS[2], ARGV[#ARGV - 1]) \
redis.call('EXPIRE', KEYS[2], ARGV[#ARGV]) return 1";

#[async_trait]
impl AdmissionStore for RedisStore {
    async fn register(
        &self,
        event: &EventId,
        threshold: u64,
        order: LineOrder,
        mode: RegisterMode,
    ) -> Result<Option<EventMeta>, StoreError> {
        let mode_arg = match mode {
            RegisterMode::Admin => "admin",
            RegisterMode::Implicit => "implicit",
            RegisterMode::Rehydrate => "rehydrate",
        };
        let args = [threshold.to_string(), order.as_str().into(), mode_arg.into()];
        let v = as_array(self.run(Op::Register, event, &args, "register").await?)?;
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
        let [.., meta, _, _, _, _, _, _, _, _] = event_keys(event);
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

    /// check.lua; `may_join` false: only a place or ghost the caller has counts.
    async fn check_in(
        &self,
        event: &EventId,
        user: &str,
        score: LineScore,
        jti: &str,
        s: &Tier2Settings,
        may_join: bool,
        proof: Option<&HoldProof>,
    ) -> Result<Place, StoreError> {
        let pos = match score {
            LineScore::Tier1Position(p) => p,
            LineScore::Arrival => 0,
        };
        let args = [
            user.to_owned(),
            score.order().as_str().into(),
            pos.to_string(),
            s.active_ttl_ms.to_string(),
            jti.to_owned(),
            s.notice_cap.to_string(),
            s.entry_token_ttl_ms.to_string(),
            if may_join { "1" } else { "0" }.into(),
            if s.waiting_timeout_ms > 0 { "1" } else { "0" }.into(),
            // The caller's hold: given back if the store lost its data since (meta `lost`).
            match proof.map(|p| &p.held) {
                Some(Held::Waiting { .. }) => "w",
                Some(Held::Admitted(_)) => "a",
                None => "",
            }
            .into(),
            match proof.map(|p| &p.held) {
                Some(Held::Waiting { score }) => score.to_string(),
                Some(Held::Admitted(a)) => a.encode(),
                None => String::new(),
            },
            proof.map_or(0, HoldProof::issued_by_ms).to_string(),
        ];
        let v = as_array(self.run(Op::Check, event, &args, "check").await?)?;
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
                if tag == "none" {
                    return Err(StoreError::NoPlace);
                }
                parse_place(&tag, &v)
            }
        }
    }

    async fn status(
        &self,
        event: &EventId,
        user: &str,
        touch: Touch,
        token_ttl_ms: u64,
    ) -> Result<Option<Place>, StoreError> {
        let touch = match touch {
            Touch::No => "0",
            Touch::Active => "a",
            Touch::Any => "1",
        };
        let args = [user.to_owned(), touch.into(), token_ttl_ms.to_string()];
        let v = as_array(self.run(Op::Status, event, &args, "status").await?)?;
        let tag = v.first().map(as_string).transpose()?.unwrap_or_default();
        match tag.as_str() {
            "unknown" => Err(StoreError::UnknownEvent),
            "none" => Ok(None),
            _ => parse_place(&tag, &v).map(Some),
        }
    }

    async fn line(&self, event: &EventId) -> Result<LineView, StoreError> {
        let v = as_array(self.run(Op::Line, event, &[], "line").await?)?;
        match v.first().map(as_string).transpose()?.as_deref() {
            Some("unknown") => Err(StoreError::UnknownEvent),
            Some("line") if v.len() >= 7 && v.len() % 2 == 1 => {
                let figures = figures(&v[1..6])?;
                let front = Some(as_score(&v[6])?).filter(|f| *f > 0);
                let marks = v[7..]
                    .chunks(2)
                    .map(|p| Ok((as_u64(&p[0])?, as_score(&p[1])?)))
                    .collect::<Result<Vec<_>, StoreError>>()?;
                Ok(LineView { figures, front, marks })
            }
            _ => Err(proto("bad line reply")),
        }
    }

    async fn leave(&self, event: &EventId, user: &str) -> Result<Left, StoreError> {
        let v = as_array(self.run(Op::Leave, event, &[user.to_owned()], "leave").await?)?;
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
        let args = [
            s.batch_max.to_string(),
            s.active_ttl_ms.to_string(),
            s.active_heartbeat_timeout_ms.to_string(),
            s.waiting_timeout_ms.to_string(),
            jti_prefix.to_owned(),
            s.notice_cap.to_string(),
            s.cleanup_limit.to_string(),
            s.silence_after_ms.to_string(),
            s.silence_crowd.to_string(),
            s.ghost_ttl_ms.to_string(),
            s.collect_ms.to_string(),
        ];
        let v = as_array(self.run(Op::Admit, event, &args, "admit").await?)?;
        match v.first().map(as_string).transpose()?.as_deref() {
            Some("unknown") => Err(StoreError::UnknownEvent),
            Some("done") if v.len() >= 10 => {
                // The script names the users only: the k-th one's jti is `{prefix}.{k}`.
                let mut admitted = Vec::with_capacity(v.len() - 10);
                for (k, user) in v[10..].iter().enumerate() {
                    admitted
                        .push(Admitted { user: as_string(user)?, jti: format!("{jti_prefix}.{}", k + 1) });
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
                    restored: as_u64(&v[9])?,
                    admitted,
                })
            }
            _ => Err(proto("bad admit reply")),
        }
    }

    async fn cleanup(&self, event: &EventId, s: &Tier2Settings) -> Result<Cleaned, StoreError> {
        let args = [
            s.active_heartbeat_timeout_ms.to_string(),
            s.waiting_timeout_ms.to_string(),
            s.cleanup_limit.to_string(),
            s.silence_after_ms.to_string(),
            s.silence_crowd.to_string(),
            s.ghost_ttl_ms.to_string(),
            s.collect_ms.to_string(),
            s.active_ttl_ms.to_string(),
        ];
        let v = as_array(self.run(Op::Cleanup, event, &args, "cleanup").await?)?;
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
        let args = [max.max(1).to_string(), lease_ms.to_string()];
        let raw = as_array(self.run(Op::Take, event, &args, "take_notices").await?)?;
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
        let mut args = Vec::with_capacity(1 + done.len() + retry.len());
        args.push(done.len().to_string());
        args.extend(done.iter().map(|n| n.raw.clone()));
        args.extend(retry.iter().map(PendingNotice::encode));
        self.run(Op::Ack, event, &args, "ack_notices").await?;
        Ok(())
    }

    async fn unregister(&self, event: &EventId) -> Result<bool, StoreError> {
        // Out of the index first, so no worker picks the event up again; then one script
        // removes everything and leaves the tombstone.
        self.command::<()>(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "unregister").await?;
        let v = as_array(self.run(Op::Unregister, event, &[], "unregister").await?)?;
        Ok(v.first().map(as_u64).transpose()? == Some(1))
    }

    async fn retire(&self, event: &EventId, idle_ms: u64) -> Result<Retire, StoreError> {
        // Out of the index before the script looks: a check racing in between either lands
        // before the script (the event is busy and goes back in) or after it (the check sees
        // `retired` and puts it back itself). Never an event with people in it off the index.
        self.command::<()>(redis::cmd("SREM").arg(EVENTS_KEY).arg(event.as_str()), "retire").await?;
        let tag = match self.run(Op::Retire, event, &[idle_ms.to_string()], "retire").await.and_then(as_array)
        {
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

    async fn add_report_minute(
        &self,
        event: &EventId,
        minute: u64,
        counts: &Tier2Minute,
    ) -> Result<(), StoreError> {
        // One script so that a minute's fields land together (a retried partial pipeline
        // would count some twice); both keys are in the event's slot.
        let day = minute / MINUTES_A_DAY;
        let script = redis::Script::new(REPORT_ADD);
        let mut inv = script.key(keys::report_key(event, day));
        inv.key(keys::report_days_key(event));
        let mut any = false;
        for (field, v) in counts.fields().into_iter().filter(|(_, v)| *v > 0) {
            inv.arg(format!("{minute}:{field}")).arg(v);
            any = true;
        }
        if !any {
            return Ok(());
        }
        inv.arg(day).arg(vwr_core::tally::KEEP_SECS);
        let res: Result<(), RedisError> = match &self.conn {
            Conn::Single(c) => inv.invoke_async(&mut c.clone()).await,
            Conn::Cluster(c) => inv.invoke_async(&mut c.clone()).await,
        };
        res.map_err(|e| redis_error("report_add", e))
    }

    async fn report_minutes(&self, event: &EventId) -> Result<Vec<(u64, Tier2Minute)>, StoreError> {
        let days: Vec<u64> =
            self.command(redis::cmd("SMEMBERS").arg(keys::report_days_key(event)), "report_days").await?;
        let mut by: std::collections::BTreeMap<u64, Tier2Minute> = Default::default();
        for day in days {
            let all: Vec<(String, u64)> = self
                .command(redis::cmd("HGETALL").arg(keys::report_key(event, day)), "report_minutes")
                .await?;
            for (k, v) in all {
                let Some((m, field)) = k.split_once(':') else { continue };
                let Ok(m) = m.parse::<u64>() else { continue };
                // An unknown field (a later release's) is left out, not an error.
                let _ = by.entry(m).or_default().set(field, v);
            }
        }
        Ok(by.into_iter().collect())
    }

    async fn snapshot(&self, event: &EventId) -> Result<Snapshot, StoreError> {
        let v = as_array(self.run(Op::Snapshot, event, &[], "snapshot").await?)?;
        if v.len() != 10 {
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
            ghosts: as_u64(&v[9])?,
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
}
