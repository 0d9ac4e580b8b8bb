//! How the store runs its Lua (src/scripts.rs): as a Redis function library that is loaded
//! again when Redis has lost it; as scripts, with the same answers, where Redis refuses
//! functions; and the cached 60 s admission count and the swept mark of the rate buckets
//! (lua/lib.lua) stay exact when the clock moves back. Each test starts its own Redis, so
//! that flushing functions, changing users or running out of memory touches nobody else;
//! the cluster test deletes this build's library on one node of the shared cluster only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vwr_core::EventId;
use vwr_core::time::{Clock, ManualClock};
use vwr_tier2::memory::MemoryStore;
use vwr_tier2::model::{LineOrder, LineScore, Place, RegisterMode, Tier2Settings, Touch};
use vwr_tier2::store::AdmissionStore;
use vwr_tier2_store::redis::{RedisConfig, RedisStore};

struct Server {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Server {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("vwr-redis-lua-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--dir", dir.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, dir, port }
    }

    fn url(&self, user: Option<&str>) -> String {
        match user {
            Some(u) => format!("redis://{u}:pw@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    async fn admin(&self) -> redis::aio::MultiplexedConnection {
        let client = redis::Client::open(self.url(None)).unwrap();
        client.get_multiplexed_async_connection().await.unwrap()
    }

    async fn store(&self, user: Option<&str>) -> RedisStore {
        RedisStore::connect(&RedisConfig::single(&self.url(user))).await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn libraries(conn: &mut redis::aio::MultiplexedConnection) -> usize {
    let list: Vec<redis::Value> = redis::cmd("FUNCTION").arg("LIST").query_async(conn).await.unwrap();
    list.len()
}

fn settings() -> Tier2Settings {
    Tier2Settings {
        active_ttl_ms: 600_500,
        active_heartbeat_timeout_ms: 30_500,
        waiting_timeout_ms: 150_500,
        entry_token_ttl_ms: 20_500,
        batch_max: 2,
        ..Tier2Settings::default()
    }
}

/// A place without its absolute times (the two stores' clocks are a few ms apart).
fn norm(p: &Place) -> String {
    match p {
        Place::Queued { position, figures, restored, score } => {
            format!("queued {position} {figures:?} restored={restored} score={}", score.is_some())
        }
        Place::Active { admission, fresh, restored, figures } => format!(
            "active {} ttl={} token={} fresh={fresh} restored={restored} {figures:?}",
            admission.jti,
            admission.expires_at_ms - admission.admitted_at_ms,
            admission.token_expires_at_ms.saturating_sub(admission.admitted_at_ms) / 1000,
        ),
    }
}

/// The answers of a fixed walk through every script: joins, polls with and without a token,
/// heartbeats, both kinds of leave, a held slot, admissions, notices, expiry of heartbeats,
/// cleanup, retire and snapshots. `at` sets the store's clock to the model clock's time.
async fn walk(
    store: &dyn AdmissionStore,
    e: &EventId,
    clock: &ManualClock,
    at: &(dyn Fn() + Sync),
) -> Vec<String> {
    let s = settings();
    let mut out = Vec::new();
    let mut log = |step: &str, v: String| out.push(format!("{step}: {v}"));
    at();
    log(
        "register",
        format!("{:?}", store.register(e, 2, LineOrder::Arrival, RegisterMode::Admin).await.unwrap()),
    );
    for u in ["a", "b", "c", "d"] {
        log(u, norm(&store.check(e, u, LineScore::Arrival, &format!("j-{u}"), &s).await.unwrap()));
    }
    log("poll c", norm(&store.status(e, "c", Touch::Any, s.entry_token_ttl_ms).await.unwrap().unwrap()));
    log("poll a", norm(&store.status(e, "a", Touch::Any, s.entry_token_ttl_ms).await.unwrap().unwrap()));
    log("heartbeat b", norm(&store.status(e, "b", Touch::Any, 0).await.unwrap().unwrap()));
    let line = store.line(e).await.unwrap();
    log(
        "line",
        format!(
            "{:?} front={} places={:?}",
            line.figures,
            line.front.is_some(),
            line.marks.iter().map(|m| m.0).collect::<Vec<_>>()
        ),
    );
    log("refresh c", norm(&store.check(e, "c", LineScore::Arrival, "j-c2", &s).await.unwrap()));
    log("leave d", format!("{:?}", store.leave(e, "d").await.unwrap()));
    log("leave a", format!("{:?}", store.leave(e, "a").await.unwrap()));
    log("admit (a's slot is held)", format!("{:?}", store.admit(e, "w1", &s).await.unwrap().admitted));
    log("snapshot", format!("{:?}", store.snapshot(e).await.unwrap()));
    clock.advance(21);
    at();
    log("admit", format!("{:?}", store.admit(e, "w2", &s).await.unwrap().admitted));
    let taken = store.take_notices(e, 3, 30_000).await.unwrap();
    log("notices", taken.iter().map(|n| format!("{}:{}", n.user_id, n.jti)).collect::<Vec<_>>().join(","));
    store.ack_notices(e, &taken, &[]).await.unwrap();
    log("e", norm(&store.check(e, "e", LineScore::Arrival, "j-e", &s).await.unwrap()));
    log("cleanup", format!("{:?}", store.cleanup(e, &s).await.unwrap()));
    clock.advance(31);
    at();
    log("poll e", norm(&store.status(e, "e", Touch::Any, s.entry_token_ttl_ms).await.unwrap().unwrap()));
    let r = store.admit(e, "w3", &s).await.unwrap();
    log("admit after heartbeats stopped", format!("{:?} {:?} {}", r.admitted, r.evicted, r.active));
    log("retire", format!("{:?}", store.retire(e, 1000).await.unwrap()));
    log("snapshot", format!("{:?}", store.snapshot(e).await.unwrap()));
    log("unregister", format!("{:?}", store.unregister(e).await.unwrap()));
    out
}

async fn walk_memory() -> Vec<String> {
    let clock = Arc::new(ManualClock::new(vwr_core::time::now_secs()));
    let memory = MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>);
    walk(&memory, &EventId::parse("walk").unwrap(), &clock, &|| {}).await
}

async fn walk_redis(store: &RedisStore, event: &str) -> Vec<String> {
    let clock = ManualClock::new(vwr_core::time::now_secs());
    // The model's clock starts on a whole second, behind the real one: so do the scripts'.
    store.set_time_offset_ms(clock.now_millis() as i64 - vwr_core::time::now_millis() as i64);
    let at = || {
        let offset = clock.now_millis() as i64 - vwr_core::time::now_millis() as i64;
        store.set_time_offset_ms(offset.max(store.time_offset_ms()));
    };
    walk(store, &EventId::parse(event).unwrap(), &clock, &at).await
}

/// A Redis that lost the library (restarted without persistence, flushed, a new cluster
/// node) gets it again at the next call.
#[tokio::test]
async fn a_lost_library_is_loaded_again() {
    let server = Server::start();
    let mut admin = server.admin().await;
    let store = server.store(None).await;
    let e = EventId::parse("lib").unwrap();
    store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    assert_eq!(libraries(&mut admin).await, 1);
    let _: () = redis::cmd("FUNCTION").arg("FLUSH").query_async(&mut admin).await.unwrap();
    assert_eq!(libraries(&mut admin).await, 0);
    let place = store.check(&e, "a", LineScore::Arrival, "j", &settings()).await.unwrap();
    assert!(matches!(place, Place::Active { fresh: true, .. }), "{place:?}");
    assert_eq!(libraries(&mut admin).await, 1);
    assert!(!store.runs_scripts());
}

/// Calls that find the library missing at the same time load it once (not once each: every
/// load of the whole library costs Redis a compilation).
#[tokio::test]
async fn concurrent_calls_load_a_lost_library_once() {
    let server = Server::start();
    let mut admin = server.admin().await;
    let store = server.store(None).await;
    let e = EventId::parse("once").unwrap();
    store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    let _: () = redis::cmd("FUNCTION").arg("FLUSH").query_async(&mut admin).await.unwrap();
    let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query_async(&mut admin).await.unwrap();
    let calls: Vec<_> = (0..32)
        .map(|i| {
            let (store, e) = (store.clone(), e.clone());
            tokio::spawn(async move { store.status(&e, &format!("u{i}"), Touch::Any, 0).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), None);
    }
    let stats: String = redis::cmd("INFO").arg("commandstats").query_async(&mut admin).await.unwrap();
    let loads = stats.lines().find(|l| l.starts_with("cmdstat_function|load:")).unwrap_or_default();
    assert!(loads.starts_with("cmdstat_function|load:calls=1,"), "{loads}");
    assert_eq!(libraries(&mut admin).await, 1);
}

/// A permission refused for the keys is not a refusal of functions: the store keeps calling
/// functions (it once fell back to scripts for good on any `NOPERM`).
#[tokio::test]
async fn a_refused_key_is_no_reason_to_give_up_functions() {
    let server = Server::start();
    let mut admin = server.admin().await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("onekey")
        .arg("on")
        .arg(">pw")
        .arg("~vwr:{ok}:*")
        .arg("~vwr:events")
        .arg("&*")
        .arg("+@all")
        .query_async(&mut admin)
        .await
        .unwrap();
    let store = server.store(Some("onekey")).await;
    let (ok, other) = (EventId::parse("ok").unwrap(), EventId::parse("other").unwrap());
    store.register(&ok, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    let refused = store.status(&other, "a", Touch::Any, 0).await.unwrap_err();
    assert!(refused.to_string().contains("no permissions"), "{refused}");
    assert!(!store.runs_scripts(), "a refused key made the store give up functions");
    let place = store.check(&ok, "a", LineScore::Arrival, "j", &settings()).await.unwrap();
    assert!(matches!(place, Place::Active { fresh: true, .. }), "{place:?}");
    assert!(!store.runs_scripts());
}

/// Out of memory, Redis refuses a function outright unless it allows it: the operations that
/// free memory (leave, cleanup, unregister) still run, as they did as scripts, and so does the
/// operator's snapshot; the others are refused before they change anything.
#[tokio::test]
async fn operations_that_free_memory_run_out_of_memory() {
    let server = Server::start();
    let mut admin = server.admin().await;
    let store = server.store(None).await;
    let e = EventId::parse("oom").unwrap();
    let s = settings();
    store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    for u in ["a", "b", "c"] {
        store.check(&e, u, LineScore::Arrival, u, &s).await.unwrap();
    }
    let _: () =
        redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("1").query_async(&mut admin).await.unwrap();
    let full = store.check(&e, "d", LineScore::Arrival, "d", &s).await.unwrap_err();
    assert!(full.to_string().contains("OOM"), "{full}");
    assert_eq!(store.snapshot(&e).await.unwrap().waiting, 2, "the refused check changed nothing");
    let left = store.leave(&e, "b").await.unwrap();
    assert!(left.was_waiting);
    store.leave(&e, "a").await.unwrap();
    store.cleanup(&e, &s).await.unwrap();
    assert!(store.unregister(&e).await.unwrap());
    assert!(!store.runs_scripts());
}

/// A cluster node that lost the library (a new or replaced node) gets it at the next call
/// for a key it serves; the other primaries, which have it, answer "already exists".
#[tokio::test]
async fn a_cluster_node_that_lost_the_library_gets_it_again() {
    let store = common::cluster().await;
    let e = common::unique_event("lib");
    store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
    let lib = RedisStore::function_library();
    let mut nodes = Vec::new();
    for url in common::cluster_urls() {
        let client = redis::Client::open(url.as_str()).unwrap();
        nodes.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    // The node that serves the event's slot.
    let key = format!("vwr:{{{e}}}:meta");
    let mut owner = None;
    for (i, node) in nodes.iter_mut().enumerate() {
        let r: redis::RedisResult<redis::Value> = redis::cmd("EXISTS").arg(&key).query_async(node).await;
        if r.is_ok() {
            owner = Some(i);
        }
    }
    let owner = owner.expect("no node serves the event");
    let has = |v: Vec<redis::Value>| !v.is_empty();
    let _: () = redis::cmd("FUNCTION").arg("DELETE").arg(lib).query_async(&mut nodes[owner]).await.unwrap();
    let list = |conn: &mut redis::aio::MultiplexedConnection| {
        let mut conn = conn.clone();
        async move {
            let v: Vec<redis::Value> = redis::cmd("FUNCTION")
                .arg("LIST")
                .arg("LIBRARYNAME")
                .arg(lib)
                .query_async(&mut conn)
                .await
                .unwrap();
            v
        }
    };
    assert!(!has(list(&mut nodes[owner]).await));
    let place = store.check(&e, "a", LineScore::Arrival, "j", &settings()).await.unwrap();
    assert!(matches!(place, Place::Active { fresh: true, .. }), "{place:?}");
    for node in &mut nodes {
        assert!(has(list(node).await), "a primary without the library");
    }
    assert!(!store.runs_scripts());
    store.purge(&e).await.unwrap();
}

/// An admission leaves the user's waiting heartbeat (lua/lib.lua `remove_stale_waitings`):
/// the cleanup takes it once it is stale, without counting it as a waiting user who went
/// away, and none is left behind; a waiting user who stopped polling is counted. The model
/// answers alike.
#[tokio::test]
async fn admitted_users_waiting_heartbeats_go_with_the_cleanup_uncounted() {
    let server = Server::start();
    let mut admin = server.admin().await;
    let redis = server.store(None).await;
    let clock = Arc::new(ManualClock::new(vwr_core::time::now_secs()));
    let memory = MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>);
    let e = EventId::parse("hb").unwrap();
    // b's admission is never collected: an admission uncollected for as long as the heartbeat
    // timeout stays (collect_ms = the timeout), so that only waiting heartbeats are at stake.
    let s = Tier2Settings { active_heartbeat_timeout_ms: 3_600_000, collect_ms: 3_600_000, ..settings() };
    let at = |secs: u64| {
        clock.advance(secs);
        redis.set_time_offset_ms(clock.now_millis() as i64 - vwr_core::time::now_millis() as i64);
    };
    let stores: [&dyn AdmissionStore; 2] = [&memory, &redis];
    let mut seen = Vec::new();
    for store in stores {
        at(0);
        store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
        for u in ["a", "b", "c"] {
            store.check(&e, u, LineScore::Arrival, u, &s).await.unwrap();
        }
        // b is admitted from the line; c waits and stops polling.
        store.register(&e, 2, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
        let step = store.admit(&e, "w", &s).await.unwrap();
        // 155 s with a cleanup every 5 s, as the worker runs it (a cleanup that has not run
        // for longer than 10 s counts the gap as time it could not hear anybody).
        let mut cleaned = vwr_tier2::model::Cleaned::default();
        for _ in 0..31 {
            at(5);
            let c = store.cleanup(&e, &s).await.unwrap();
            cleaned.expired += c.expired;
            cleaned.evicted += c.evicted;
            cleaned.stale += c.stale;
        }
        let snap = store.snapshot(&e).await.unwrap();
        seen.push(format!("{:?} {:?} waiting={}", step.admitted, cleaned, snap.waiting));
        at(1_000);
    }
    let left: usize = redis::cmd("ZCARD").arg("vwr:{hb}:ws").query_async(&mut admin).await.unwrap();
    assert_eq!(left, 0, "a heartbeat left behind");
    assert_eq!(
        seen[0],
        r#"[Admitted { user: "b", jti: "w.1" }] Cleaned { expired: 0, evicted: 0, stale: 1 } waiting=0"#
    );
    assert_eq!(seen[1], seen[0], "Redis against the model");
}

/// Where Redis refuses functions (no permission to load or to call them), the store runs the
/// same Lua as scripts, with the same answers as the model and as the functions.
#[tokio::test]
async fn scripts_answer_as_functions_do_where_functions_are_refused() {
    let server = Server::start();
    let mut admin = server.admin().await;
    for (user, deny) in [("noload", "-function"), ("nofcall", "-fcall")] {
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(user)
            .arg("on")
            .arg(">pw")
            .arg("~*")
            .arg("&*")
            .arg("+@all")
            .arg(deny)
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let want = walk_memory().await;
    for user in ["noload", "nofcall"] {
        let store = server.store(Some(user)).await;
        let got = walk_redis(&store, user).await;
        assert_eq!(got, want, "{user}: scripts");
        assert!(store.runs_scripts(), "{user}");
    }
    assert_eq!(libraries(&mut admin).await, 0, "nobody could load the library");
    let store = server.store(None).await;
    assert_eq!(walk_redis(&store, "functions").await, want, "functions");
    assert!(!store.runs_scripts());
    assert_eq!(libraries(&mut admin).await, 1);
}

/// The 60 s admission count is cached per second and the rate buckets are swept from a mark
/// (lua/lib.lua `rate60`, `sweep_rate`). With the clock set back behind the mark, a new
/// bucket drops the mark and the next sweep still deletes every bucket over two minutes old;
/// the count answers as the model's throughout.
#[tokio::test]
async fn rate_figures_stay_exact_when_the_clock_moves_back() {
    let server = Server::start();
    let mut admin = server.admin().await;
    let redis = server.store(None).await;
    let t0 = vwr_core::time::now_secs();
    let clock = Arc::new(ManualClock::new(t0));
    let memory = MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>);
    let e = EventId::parse("rate").unwrap();
    let s =
        Tier2Settings { active_heartbeat_timeout_ms: 3_600_000, waiting_timeout_ms: 3_600_000, ..settings() };
    let at = |secs: u64| {
        clock.set(secs);
        redis.set_time_offset_ms(clock.now_millis() as i64 - vwr_core::time::now_millis() as i64);
    };
    let stores: [&dyn AdmissionStore; 2] = [&memory, &redis];
    let figures = |p: Place| match p {
        Place::Queued { figures, .. } | Place::Active { figures, .. } => figures.admitted_last_60s,
    };
    let mut seen = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        at(t0);
        store.register(&e, 100, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
        let mut counts = Vec::new();
        for u in ["a", "b"] {
            counts.push(figures(store.check(&e, u, LineScore::Arrival, u, &s).await.unwrap()));
        }
        counts.push(figures(store.status(&e, "a", Touch::Any, 0).await.unwrap().unwrap()));
        at(t0 + 200);
        store.admit(&e, "w1", &s).await.unwrap();
        counts.push(store.snapshot(&e).await.unwrap().admitted_last_60s);
        // Back behind the swept mark: c's admission lands in an old second.
        at(t0 + 10);
        counts.push(figures(store.check(&e, "c", LineScore::Arrival, "c", &s).await.unwrap()));
        counts.push(figures(store.status(&e, "a", Touch::Any, 0).await.unwrap().unwrap()));
        at(t0 + 30);
        counts.push(figures(store.status(&e, "b", Touch::Any, 0).await.unwrap().unwrap()));
        at(t0 + 200);
        store.admit(&e, "w2", &s).await.unwrap();
        counts.push(store.snapshot(&e).await.unwrap().admitted_last_60s);
        if i == 1 {
            let buckets: Vec<String> =
                redis::cmd("HKEYS").arg("vwr:{rate}:rate").query_async(&mut admin).await.unwrap();
            assert!(buckets.is_empty(), "buckets over two minutes old are left: {buckets:?}");
        }
        seen.push(counts);
    }
    assert_eq!(seen[0], [1, 2, 2, 0, 1, 1, 1, 0], "the model's counts");
    assert_eq!(seen[1], seen[0], "Redis against the model");
}

/// The worker's admissions that nobody comes for are judged a step's worth at a time
/// (lua/lib.lua `collect_uncollected`): when the pass's limit cuts the range, the mark stays
/// before the last admission end it read, so that step's admissions are judged whole by the
/// next pass. x (admitted by its check, collected) and two steps of 8 admissions, a pass limit
/// of 10 (10 × a cleanup limit of 1): the first pass reads x, the first step's 8 and one of the
/// second's, frees the 9 nobody came for and keeps its mark at the first step's end; the second
/// pass frees the second step's other 7; nothing is left for a third. The model answers alike.
#[tokio::test]
async fn uncollected_admissions_are_judged_a_step_at_a_time() {
    let server = Server::start();
    let redis = server.store(None).await;
    let clock = Arc::new(ManualClock::new(vwr_core::time::now_secs()));
    let memory = MemoryStore::new(Arc::clone(&clock) as Arc<dyn Clock>);
    let s = Tier2Settings { cleanup_limit: 1, collect_ms: 2_000, batch_max: 500, ..settings() };
    let at = |secs: u64| {
        clock.advance(secs);
        let offset = clock.now_millis() as i64 - vwr_core::time::now_millis() as i64;
        redis.set_time_offset_ms(offset.max(redis.time_offset_ms()));
    };
    let e = EventId::parse("collect").unwrap();
    let stores: [&dyn AdmissionStore; 2] = [&memory, &redis];
    let mut seen = Vec::new();
    for store in stores {
        at(0);
        store.register(&e, 1, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
        store.check(&e, "x", LineScore::Arrival, "jx", &s).await.unwrap();
        for i in 0..16 {
            store.check(&e, &format!("u{i:02}"), LineScore::Arrival, "j", &s).await.unwrap();
        }
        let mut steps = Vec::new();
        for threshold in [9, 17] {
            store.register(&e, threshold, LineOrder::Arrival, RegisterMode::Admin).await.unwrap();
            steps.push(store.admit(&e, &format!("w{threshold}"), &s).await.unwrap().admitted.len());
            at(1);
        }
        at(2);
        let first = store.cleanup(&e, &s).await.unwrap().evicted;
        let second = store.cleanup(&e, &s).await.unwrap().evicted;
        let third = store.cleanup(&e, &s).await.unwrap().evicted;
        let snap = store.snapshot(&e).await.unwrap();
        seen.push(format!(
            "{steps:?} {first} {second} {third} active={} ghosts={}",
            snap.active, snap.ghosts
        ));
        at(1_000);
    }
    assert_eq!(seen[0], "[8, 8] 9 7 0 active=1 ghosts=16", "x, collected by its check, stays");
    assert_eq!(seen[1], seen[0], "Redis against the model");
}
