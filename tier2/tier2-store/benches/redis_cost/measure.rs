//! redis_cost's measuring: a phase's cost (`INFO commandstats` around the work), the
//! statistics of its samples, and the line's fill (not measured).

use redis::aio::MultiplexedConnection;
use serde_json::json;
use vwr_core::EventId;

pub use crate::common::Cost;
use crate::common::{fill_line, round2, top_up_rates};
use crate::sets::keys;

/// A cost as redis_cost reports it: every command per operation too.
pub fn cost_json(c: &Cost) -> serde_json::Value {
    let mut v = c.json();
    let ops = c.ops.max(1) as f64;
    v["commands_per_op"] = c
        .commands
        .iter()
        .map(|(name, (calls, usec))| {
            (
                name.clone(),
                json!({ "calls": round2(*calls as f64 / ops), "usec": round2(*usec as f64 / ops) }),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    v
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
        let mut v = cost_json(&self.best);
        v["median_script_usec_per_op"] = json!(round2(self.median));
        v["median_server_cpu_usec_per_op"] = json!(round2(self.median_cpu));
        v["min_server_cpu_usec_per_op"] = json!(round2(self.min_cpu));
        v["samples"] = json!(self.samples);
        v
    }
}

/// [`common::measure`](crate::common::measure), the bench's own calls counted (as this
/// bench's figures always were).
pub async fn measure<F, Fut>(admin: &mut MultiplexedConnection, work: F) -> Cost
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    crate::common::measure(admin, false, work).await
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
    fill_line(conn, &k[0], Some(&k[2]), (now_ms - 60_000) * 1000 - n, n, front, id_len, now_ms).await;
}

/// Gives the event's admission-rate hash one bucket for each of the last `buckets` seconds
/// (what a worker admitting every second leaves: cleanup keeps 121), then waits for the next
/// second, so that nothing derived from the hash in this second is reused.
pub async fn top_up_rate(conn: &mut MultiplexedConnection, event: &EventId, buckets: u64) {
    top_up_rates(conn, &[keys(event)[6].clone()], buckets).await;
}
