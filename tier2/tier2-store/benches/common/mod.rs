//! What the Redis benches share: their throwaway `redis-server`, the readings of `INFO` (and
//! which commands are the scripts), the clients that run operations at a given concurrency,
//! the users' ids and the walk over the line that picks them, and the environment knobs. Each
//! bench uses part of it. A bench's own parts are in `benches/<bench>/` (modules, not benches).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use serde_json::json;

pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub const HOUR_MS: u64 = 3_600_000;

/// How much older the heartbeats of the users the rounds admit are (see `fill`).
pub const FRONT_HEARTBEAT_AGE_MS: u64 = 600_000;

pub struct RedisServer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl RedisServer {
    pub fn start(name: &str) -> Self {
        let bin = std::env::var("VWR_BENCH_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("vwr-{name}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(&bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir", dir.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
        if let Ok(n) = std::env::var("VWR_BENCH_RENICE") {
            // On a shared machine: give the server priority over other work (needs the right).
            let _ = Command::new("renice").args(["-n", &n, "-p", &child.id().to_string()]).output();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, dir, port }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub async fn info(admin: &mut MultiplexedConnection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query_async(admin).await.unwrap()
}

pub fn cpu_secs(info: &str) -> f64 {
    info.lines()
        .filter_map(|l| l.strip_prefix("used_cpu_user:").or_else(|| l.strip_prefix("used_cpu_sys:")))
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .sum()
}

/// `INFO commandstats` as name -> (calls, usec).
pub fn command_stats(info: &str) -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    for line in info.lines() {
        let Some((name, fields)) = line.split_once(':') else { continue };
        let Some(name) = name.strip_prefix("cmdstat_") else { continue };
        let (mut calls, mut usec) = (0, 0);
        for f in fields.split(',') {
            match f.split_once('=') {
                Some(("calls", v)) => calls = v.parse::<u64>().unwrap_or(0),
                Some(("usec", v)) => usec = v.parse::<u64>().unwrap_or(0),
                _ => {}
            }
        }
        out.insert(name.to_owned(), (calls, usec));
    }
    out
}

/// Runs `op` on every user of `users`, `conc` at a time.
pub async fn run_all<F, Fut>(users: Vec<String>, conc: usize, op: F) -> u64
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let users = Arc::new(users);
    let next = Arc::new(AtomicUsize::new(0));
    let op = Arc::new(op);
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let (users, next, op) = (Arc::clone(&users), Arc::clone(&next), Arc::clone(&op));
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(u) = users.get(i) else { break };
                op(u.clone()).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    users.len() as u64
}

/// A connection without a response timeout (the fill sends large pipelines).
pub async fn connect(client: &redis::Client) -> MultiplexedConnection {
    let cfg = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    client.get_multiplexed_async_connection_with_config(&cfg).await.unwrap()
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown".into())
}

/// A user id of `len` characters: `prefix`, `i` in hex, a dash, zeros.
pub fn user(prefix: char, i: u64, len: usize) -> String {
    let base = format!("{prefix}{i:x}-");
    let pad = len.saturating_sub(base.len());
    format!("{base}{}", "0".repeat(pad))
}

/// Picks `from..from + count` of a fixed walk over `lo..hi` that visits every user once (a
/// stride coprime with the span): spread over the line, never twice.
pub fn spread(lo: u64, hi: u64, from: u64, count: u64, id_len: usize) -> Vec<String> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let span = (hi - lo).max(1);
    let mut stride = 1_000_003 % span;
    while gcd(stride, span) != 1 {
        stride += 1;
    }
    (from..(from + count).min(span)).map(|k| user('u', lo + (k * stride) % span, id_len)).collect()
}

/// The script commands, whose `usec` includes the commands they run.
pub const SCRIPT_COMMANDS: [&str; 6] = ["evalsha", "eval", "fcall", "evalsha_ro", "eval_ro", "fcall_ro"];

/// (calls, usec) summed over the script commands.
pub fn script_stats(commands: &BTreeMap<String, (u64, u64)>) -> (u64, u64) {
    SCRIPT_COMMANDS.iter().filter_map(|n| commands.get(*n)).fold((0, 0), |(c, u), (c2, u2)| (c + c2, u + u2))
}

/// A measured piece of work: its operations, the scripts' calls and time, the server's CPU, the
/// wall time and every command (the scripts' own calls included): name -> (calls, usec).
#[derive(Debug, Clone, Default)]
pub struct Cost {
    pub ops: u64,
    pub script_calls: u64,
    pub script_usec: u64,
    pub cpu_usec: f64,
    pub wall_secs: f64,
    pub commands: BTreeMap<String, (u64, u64)>,
}

impl Cost {
    pub fn per_op(&self) -> f64 {
        self.script_usec as f64 / self.ops.max(1) as f64
    }
    pub fn cpu_per_op(&self) -> f64 {
        self.cpu_usec / self.ops.max(1) as f64
    }
    pub fn json(&self) -> serde_json::Value {
        json!({
            "ops": self.ops,
            "script_calls": self.script_calls,
            "script_usec": self.script_usec,
            "script_usec_per_op": round2(self.per_op()),
            "server_cpu_usec_per_op": round2(self.cpu_per_op()),
            "wall_secs": round2(self.wall_secs),
        })
    }
}

/// Runs `work` (which returns how many operations it did) between `CONFIG RESETSTAT` and
/// `INFO commandstats`. With `drop_own_calls`, the bench's own `CONFIG`/`INFO` calls are left
/// out of `commands` (they are not the measured side's work).
pub async fn measure<F, Fut>(admin: &mut MultiplexedConnection, drop_own_calls: bool, work: F) -> Cost
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query_async(admin).await.unwrap();
    let cpu0 = cpu_secs(&info(admin, "cpu").await);
    let start = Instant::now();
    let ops = work().await;
    let wall_secs = start.elapsed().as_secs_f64();
    let mut commands = command_stats(&info(admin, "commandstats").await);
    let cpu1 = cpu_secs(&info(admin, "cpu").await);
    if drop_own_calls {
        commands.retain(|name, _| !name.starts_with("config") && !name.starts_with("info"));
    }
    let (script_calls, script_usec) = script_stats(&commands);
    Cost { ops, script_calls, script_usec, cpu_usec: (cpu1 - cpu0) * 1e6, wall_secs, commands }
}

/// Writes users `0..n` into the sorted set `line` with the arrival stamps `first + i` and, with
/// `seen`, their heartbeats in ms spread over the minute before `now_ms` (the first `front`
/// users' ten minutes older), in pipelines of 50 `ZADD`s of 1,000 users.
#[allow(clippy::too_many_arguments)]
pub async fn fill_line(
    conn: &mut MultiplexedConnection,
    line: &str,
    seen: Option<&str>,
    first: u64,
    n: u64,
    front: u64,
    id_len: usize,
    now_ms: u64,
) {
    let chunk = 1000u64;
    let mut i = 0;
    while i < n {
        let mut pipe = redis::pipe();
        for _ in 0..50 {
            if i >= n {
                break;
            }
            let end = (i + chunk).min(n);
            let mut w = redis::cmd("ZADD");
            let mut ws = redis::cmd("ZADD");
            w.arg(line);
            ws.arg(seen.unwrap_or_default());
            for j in i..end {
                let u = user('u', j, id_len);
                w.arg(first + j).arg(&u);
                let older = if j < front { FRONT_HEARTBEAT_AGE_MS } else { 0 };
                ws.arg(now_ms - older - (j * 7_919) % 60_000).arg(&u);
            }
            pipe.add_command(w).ignore();
            if seen.is_some() {
                pipe.add_command(ws).ignore();
            }
            i = end;
        }
        let _: () = pipe.query_async(conn).await.unwrap();
    }
}

/// Gives each admission-rate hash in `rates` one bucket for each of the last `buckets` seconds
/// (what a worker admitting every second leaves), then waits for the next second, so that
/// nothing derived from the hash in this second is reused.
pub async fn top_up_rates(conn: &mut MultiplexedConnection, rates: &[String], buckets: u64) {
    if buckets == 0 {
        return;
    }
    let now_s = vwr_core::time::now_secs();
    let mut pipe = redis::pipe();
    for rate in rates {
        for sec in now_s + 1 - buckets..=now_s {
            pipe.cmd("HSETNX").arg(rate).arg(sec).arg(5).ignore();
        }
    }
    let _: () = pipe.query_async(conn).await.unwrap();
    let ms = vwr_core::time::now_millis();
    tokio::time::sleep(Duration::from_millis(1000 - ms % 1000 + 5)).await;
}
