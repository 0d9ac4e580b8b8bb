//! seeds_cost's measuring: a sample's cost (`INFO commandstats` around the work), the
//! statistics of a phase's samples, and the line's fill (not measured).

use std::collections::BTreeMap;

use redis::aio::MultiplexedConnection;
use serde_json::json;
use vwr_tier2_store::redis::keys::event_keys;

pub use crate::common::Cost;
use crate::common::{fill_line, round2, top_up_rates};
use crate::sides::Set;

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

/// [`common::measure`](crate::common::measure) without the bench's own calls.
pub async fn measure<F, Fut>(admin: &mut MultiplexedConnection, work: F) -> Cost
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    crate::common::measure(admin, true, work).await
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
    let first = if set.is_vwr() { (now_ms - 60_000) * 1000 - n } else { now_ms - 60_000 - n };
    let seen = set.keeps_waiting_heartbeats().then_some(seen.as_str());
    fill_line(conn, &line, seen, first, n, front, id_len, now_ms).await;
}

/// Gives vwr's events' admission-rate hashes one bucket for each of the last `buckets` seconds
/// (what a worker admitting every second leaves: its sweep keeps 121), then waits for the next
/// second, so that nothing derived from the hash in this second is reused.
pub async fn top_up_rate(conn: &mut MultiplexedConnection, sets: &[Set], buckets: u64) {
    let rates: Vec<String> =
        sets.iter().filter(|s| s.is_vwr()).map(|s| event_keys(&s.event)[6].clone()).collect();
    top_up_rates(conn, &rates, buckets).await;
}
