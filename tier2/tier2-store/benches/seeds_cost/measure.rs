//! seeds_cost's measuring: a sample's cost (`INFO commandstats` around the work), the
//! statistics of a phase's samples, and the line's fill (not measured).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use serde_json::json;
use vwr_tier2_store::redis::keys::event_keys;

use crate::common::{FRONT_HEARTBEAT_AGE_MS, command_stats, cpu_secs, info, round2, script_stats, user};
use crate::sides::Set;

#[derive(Debug, Clone, Default)]
pub struct Cost {
    pub ops: u64,
    pub script_calls: u64,
    pub script_usec: u64,
    pub cpu_usec: f64,
    pub wall_secs: f64,
    /// Every command of the sample (the scripts' own calls included): name -> (calls, usec).
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

/// The samples of one phase on one side.
pub struct Stats {
    pub best: f64,
    pub median: f64,
    pub min_cpu: f64,
    pub median_cpu: f64,
    /// Over all samples: command -> (calls, usec) per operation.
    pub commands: BTreeMap<String, (f64, f64)>,
    pub samples: Vec<serde_json::Value>,
}

impl Stats {
    pub fn of(v: &[Cost]) -> Self {
        let median = |f: &dyn Fn(&Cost) -> f64| {
            let mut xs: Vec<f64> = v.iter().map(f).collect();
            xs.sort_by(f64::total_cmp);
            xs[xs.len() / 2]
        };
        let ops: u64 = v.iter().map(|c| c.ops).sum();
        let mut commands: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        for c in v {
            for (name, (calls, usec)) in &c.commands {
                let e = commands.entry(name.clone()).or_default();
                e.0 += *calls as f64 / ops.max(1) as f64;
                e.1 += *usec as f64 / ops.max(1) as f64;
            }
        }
        Self {
            best: v.iter().map(Cost::per_op).fold(f64::INFINITY, f64::min),
            median: median(&Cost::per_op),
            min_cpu: v.iter().map(Cost::cpu_per_op).fold(f64::INFINITY, f64::min),
            median_cpu: median(&Cost::cpu_per_op),
            commands,
            samples: v.iter().map(Cost::json).collect(),
        }
    }

    pub fn json(&self) -> serde_json::Value {
        json!({
            "script_usec_per_op": round2(self.best),
            "median_script_usec_per_op": round2(self.median),
            "min_server_cpu_usec_per_op": round2(self.min_cpu),
            "median_server_cpu_usec_per_op": round2(self.median_cpu),
            "commands_per_op": self.commands.iter().map(|(name, (calls, usec))| {
                (name.clone(), json!({ "calls": round2(*calls), "usec": round2(*usec) }))
            }).collect::<serde_json::Map<_, _>>(),
            "samples": self.samples,
        })
    }
}

/// Runs `work` (which returns how many operations it did) between `CONFIG RESETSTAT` and
/// `INFO commandstats`.
pub async fn measure<F, Fut>(admin: &mut MultiplexedConnection, work: F) -> Cost
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
    // The bench's own calls between RESETSTAT and here are not the sides' work.
    commands.retain(|name, _| !name.starts_with("config") && !name.starts_with("info"));
    let (script_calls, script_usec) = script_stats(&commands);
    Cost { ops, script_calls, script_usec, cpu_usec: (cpu1 - cpu0) * 1e6, wall_secs, commands }
}

/// Fills the line of `set` with users `0..n`: arrival stamps before now, in order and distinct
/// (µs for vwr, ms for the seeds), and, where the store keeps them (the seeds; vwr with a
/// waiting timeout), heartbeats in ms spread over the last minute (all heartbeats
/// in one millisecond would make the heartbeat set a list ordered by user id, where every step
/// compares ids: a cost no real line has). The first `front` users, the ones the rounds admit,
/// have heartbeats ten minutes older: the cleanup after the rounds can then tell vwr's leftover
/// heartbeats of admitted users from those of the users still waiting. `now_ms` is the same for
/// every side, so that both get the same heartbeats.
pub async fn fill(
    conn: &mut MultiplexedConnection,
    set: &Set,
    n: u64,
    front: u64,
    id_len: usize,
    now_ms: u64,
) {
    let (line, seen) = set.line_keys();
    let heartbeats = set.keeps_waiting_heartbeats();
    let first = if set.is_vwr() { (now_ms - 60_000) * 1000 - n } else { now_ms - 60_000 - n };
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
            w.arg(&line);
            ws.arg(&seen);
            for j in i..end {
                let u = user('u', j, id_len);
                w.arg(first + j).arg(&u);
                let older = if j < front { FRONT_HEARTBEAT_AGE_MS } else { 0 };
                ws.arg(now_ms - older - (j * 7_919) % 60_000).arg(&u);
            }
            pipe.add_command(w).ignore();
            if heartbeats {
                pipe.add_command(ws).ignore();
            }
            i = end;
        }
        let _: () = pipe.query_async(conn).await.unwrap();
    }
}

/// Gives vwr's events' admission-rate hashes one bucket for each of the last `buckets` seconds
/// (what a worker admitting every second leaves: its sweep keeps 121), then waits for the next
/// second, so that nothing derived from the hash in this second is reused.
pub async fn top_up_rate(conn: &mut MultiplexedConnection, sets: &[Set], buckets: u64) {
    if buckets == 0 {
        return;
    }
    let now_s = vwr_core::time::now_secs();
    let mut pipe = redis::pipe();
    for set in sets.iter().filter(|s| s.is_vwr()) {
        let rate = &event_keys(&set.event)[6];
        for sec in now_s + 1 - buckets..=now_s {
            pipe.cmd("HSETNX").arg(rate).arg(sec).arg(5).ignore();
        }
    }
    let _: () = pipe.query_async(conn).await.unwrap();
    let ms = vwr_core::time::now_millis();
    tokio::time::sleep(Duration::from_millis(1000 - ms % 1000 + 5)).await;
}
