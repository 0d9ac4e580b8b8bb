//! redis_cost's measuring: a phase's cost (`INFO commandstats` around the work), the
//! statistics of its samples, and the line's fill (not measured).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use serde_json::json;
use vwr_core::EventId;

use crate::common::{FRONT_HEARTBEAT_AGE_MS, command_stats, cpu_secs, info, round2, script_stats, user};
use crate::sets::keys;

#[derive(Debug, Clone, Default)]
pub struct Cost {
    pub ops: u64,
    pub script_calls: u64,
    pub script_usec: u64,
    pub cpu_usec: f64,
    pub wall_secs: f64,
    /// Every command of the phase (the scripts' own calls included): name -> (calls, usec).
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
            "commands_per_op": self.commands.iter().map(|(name, (calls, usec))| {
                let ops = self.ops.max(1) as f64;
                (name.clone(), json!({ "calls": round2(*calls as f64 / ops), "usec": round2(*usec as f64 / ops) }))
            }).collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// The samples of one phase on one set.
pub struct Stats {
    pub best: Cost,
    pub median: f64,
    pub median_cpu: f64,
    pub min_cpu: f64,
    pub samples: Vec<serde_json::Value>,
}

impl Stats {
    pub fn json(&self) -> serde_json::Value {
        let mut v = self.best.json();
        v["median_script_usec_per_op"] = json!(round2(self.median));
        v["median_server_cpu_usec_per_op"] = json!(round2(self.median_cpu));
        v["min_server_cpu_usec_per_op"] = json!(round2(self.min_cpu));
        v["samples"] = json!(self.samples);
        v
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
    let commands = command_stats(&info(admin, "commandstats").await);
    let (script_calls, script_usec) = script_stats(&commands);
    let cpu1 = cpu_secs(&info(admin, "cpu").await);
    Cost { ops, script_calls, script_usec, cpu_usec: (cpu1 - cpu0) * 1e6, wall_secs, commands }
}

/// Fills the line of `event` with users `0..n` (arrival stamps in µs, before now, in order;
/// heartbeats spread over the last minute), as `check` and the polls would have left them.
/// (All heartbeats in one millisecond would make the heartbeat set a list ordered by user id,
/// where every step compares ids: a cost no real line has.) The first `front` users, the ones
/// the rounds admit, have heartbeats ten minutes older: the cleanup that follows the rounds
/// can then tell their leftover heartbeats (the store leaves them to the cleanup) from the
/// heartbeats of the users still waiting.
pub async fn fill(conn: &mut MultiplexedConnection, event: &EventId, n: u64, front: u64, id_len: usize) {
    let k = keys(event);
    let now_ms = vwr_core::time::now_millis();
    let first_us = (now_ms - 60_000) * 1000 - n;
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
            w.arg(&k[0]);
            ws.arg(&k[2]);
            for j in i..end {
                let u = user('u', j, id_len);
                w.arg(first_us + j).arg(&u);
                let older = if j < front { FRONT_HEARTBEAT_AGE_MS } else { 0 };
                ws.arg(now_ms - older - (j * 7_919) % 60_000).arg(&u);
            }
            pipe.add_command(w).ignore();
            pipe.add_command(ws).ignore();
            i = end;
        }
        let _: () = pipe.query_async(conn).await.unwrap();
    }
}

/// Gives the event's admission-rate hash one bucket for each of the last `buckets` seconds
/// (what a worker admitting every second leaves: cleanup keeps 121), then waits for the next
/// second, so that nothing derived from the hash in this second is reused.
pub async fn top_up_rate(conn: &mut MultiplexedConnection, event: &EventId, buckets: u64) {
    if buckets == 0 {
        return;
    }
    let now_s = vwr_core::time::now_secs();
    let mut pipe = redis::pipe();
    for sec in now_s + 1 - buckets..=now_s {
        pipe.cmd("HSETNX").arg(&keys(event)[6]).arg(sec).arg(5).ignore();
    }
    let _: () = pipe.query_async(conn).await.unwrap();
    let ms = vwr_core::time::now_millis();
    tokio::time::sleep(Duration::from_millis(1000 - ms % 1000 + 5)).await;
}
