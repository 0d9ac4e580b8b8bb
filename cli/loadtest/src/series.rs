//! The run over time, sampled once a second for the report's charts and the `outflow` section:
//! the line in tier 1 (from the admin status, read with the harness's admin key and not counted
//! as visitor load: waiting, served, redeemed, the server's outflow figures), the admissions the
//! visitors saw, tier-2 active users, and the visitors' calls.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::admin::admin_call;
use super::cost::Calls;
use super::ctx::Ctx;
use super::stats::Counters;
use crate::client::Auth;

/// One sample.
#[derive(Debug, Clone, Default)]
pub struct Point {
    /// Seconds since the start.
    pub t: f64,
    /// From `GET /api/admin/vwr/status/{eventId}` (absent when it failed).
    pub waiting: Option<u64>,
    pub serving_counter: Option<u64>,
    /// Tickets redeemed (first admitted `check`s), as tier 1 counts them (`admitted`).
    pub redeemed: Option<u64>,
    /// The admin status's `outflow` figures (docs/outflow.md).
    pub server_outflow: Option<Value>,
    /// Tier-1 admissions the visitors have seen so far.
    pub admitted_tier1: u64,
    /// Tier-2 active users at the last sample of the threshold watcher.
    pub active_tier2: u64,
    /// Cumulative call counts.
    pub calls: Calls,
}

/// The samples, shared with the sampling task.
pub type Samples = Arc<Mutex<Vec<Point>>>;

/// Samples once a second until aborted.
pub fn spawn(
    ctx: Arc<Ctx>,
    auth: Auth,
    active_tier2: Arc<AtomicU64>,
    into: Samples,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let path = format!("/api/admin/vwr/status/{}", ctx.event);
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let t = ctx.start.elapsed().as_secs_f64();
            let st = admin_call(&ctx.client, &ctx.origin, &auth, Method::GET, &path, None).await.ok();
            let p = Point {
                t,
                waiting: st.as_ref().and_then(|v| v["waiting"].as_u64()),
                serving_counter: st.as_ref().and_then(|v| v["servingCounter"].as_u64()),
                redeemed: st.as_ref().and_then(|v| v["admitted"].as_u64()),
                server_outflow: st.as_ref().map(|v| v["outflow"].clone()).filter(Value::is_object),
                admitted_tier1: Counters::get(&ctx.counters.admitted_tier1),
                active_tier2: active_tier2.load(Ordering::Relaxed),
                calls: Calls::of(&ctx),
            };
            into.lock().unwrap_or_else(|p| p.into_inner()).push(p);
        }
    })
}

fn round(x: f64, places: i32) -> f64 {
    let m = 10f64.powi(places);
    (x * m).round() / m
}

/// The window of the per-minute rates of the series (the charts): shorter than a minute, so
/// that a change shows, and centred on each sample, so that it shows when it happened.
pub const RATE_WINDOW_SECONDS: f64 = 30.0;

/// The `series` section: one array per quantity, aligned on `seconds`; rates per second are
/// over the interval before each sample (`null` at the first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    /// Seconds since the start of each sample.
    pub seconds: Vec<f64>,
    /// Tier 1's admin status (`null` where the read failed).
    pub waiting: Vec<Option<u64>>,
    pub serving_counter: Vec<Option<u64>>,
    pub redeemed: Vec<Option<u64>>,
    /// Tier-1 admissions the visitors had seen.
    pub admitted_tier1: Vec<u64>,
    /// Tier-2 active users.
    pub active_tier2: Vec<u64>,
    pub tier1_calls_per_second: Vec<Option<f64>>,
    pub status_fetches_per_second: Vec<Option<f64>>,
    pub origin_status_fetches_per_second: Vec<Option<f64>>,
    /// The window of the per-minute rates below.
    pub rate_window_seconds: f64,
    pub served_per_minute: Vec<Option<f64>>,
    pub redeemed_per_minute: Vec<Option<f64>>,
}

/// Per minute over the [`RATE_WINDOW_SECONDS`] centred on each sample (`None` where fewer than
/// half a window of samples surround it, and where a value is missing).
fn per_minute(points: &[Point], pick: fn(&Point) -> Option<u64>) -> Vec<Option<f64>> {
    let half = RATE_WINDOW_SECONDS / 2.0;
    let (mut lo, mut hi) = (0, 0);
    points
        .iter()
        .map(|p| {
            while points.get(lo).is_some_and(|q| q.t < p.t - half) {
                lo += 1;
            }
            while points.get(hi + 1).is_some_and(|q| q.t <= p.t + half) {
                hi += 1;
            }
            let (a, b) = (points.get(lo)?, points.get(hi)?);
            let dt = b.t - a.t;
            let (then, now) = (pick(a)?, pick(b)?);
            (dt >= half).then(|| round(now.saturating_sub(then) as f64 / dt * 60.0, 1))
        })
        .collect()
}

/// The `series` section of the samples.
pub fn series(points: &[Point]) -> Series {
    let rate = |pick: fn(&Calls) -> u64| -> Vec<Option<f64>> {
        let mut prev: Option<&Point> = None;
        points
            .iter()
            .map(|p| {
                let v = match prev {
                    Some(q) if p.t > q.t => {
                        Some(round(pick(&p.calls).saturating_sub(pick(&q.calls)) as f64 / (p.t - q.t), 2))
                    }
                    _ => None,
                };
                prev = Some(p);
                v
            })
            .collect()
    };
    Series {
        seconds: points.iter().map(|p| round(p.t, 2)).collect(),
        waiting: points.iter().map(|p| p.waiting).collect(),
        serving_counter: points.iter().map(|p| p.serving_counter).collect(),
        redeemed: points.iter().map(|p| p.redeemed).collect(),
        admitted_tier1: points.iter().map(|p| p.admitted_tier1).collect(),
        active_tier2: points.iter().map(|p| p.active_tier2).collect(),
        tier1_calls_per_second: rate(Calls::tier1),
        status_fetches_per_second: rate(Calls::status_fetches),
        origin_status_fetches_per_second: rate(Calls::status_origin),
        rate_window_seconds: RATE_WINDOW_SECONDS,
        served_per_minute: per_minute(points, |p| p.serving_counter),
        redeemed_per_minute: per_minute(points, |p| p.redeemed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_rates() {
        let p = |t: f64, hits: u64, misses: u64| Point {
            t,
            waiting: Some(5),
            calls: Calls { status_hits: hits, status_misses: misses, ..Calls::default() },
            ..Point::default()
        };
        let v = series(&[p(1.0, 0, 0), p(2.0, 90, 1), p(4.0, 290, 3)]);
        assert_eq!(v.seconds, [1.0, 2.0, 4.0]);
        assert_eq!(v.status_fetches_per_second, [None, Some(91.0), Some(101.0)]);
        assert_eq!(v.origin_status_fetches_per_second, [None, Some(1.0), Some(1.0)]);
        assert_eq!(v.waiting, [Some(5), Some(5), Some(5)]);
    }

    #[test]
    fn per_minute_rates_over_a_window_centred_on_each_sample() {
        // 2 positions served per second up to 20 s, 4 after; one redeemed per second, with a
        // sample missing at 30 s.
        let points: Vec<Point> = (0..=60u32)
            .map(|i| Point {
                t: f64::from(i),
                serving_counter: Some(u64::from(i.min(20)) * 2 + u64::from(i.saturating_sub(20)) * 4),
                redeemed: (i != 30).then_some(u64::from(i)),
                ..Point::default()
            })
            .collect();
        let v = series(&points);
        let served = &v.served_per_minute;
        assert_eq!(served[0], Some(120.0), "half a window, after the sample");
        assert_eq!(served[5], Some(120.0));
        assert_eq!(served[20], Some(180.0), "the change shows where it happened");
        assert_eq!(served[40], Some(240.0));
        assert_eq!(served[60], Some(240.0));
        let redeemed = &v.redeemed_per_minute;
        assert_eq!((redeemed[15], redeemed[45]), (None, None), "a window's end is missing");
        assert_eq!((redeemed[30], redeemed[50]), (Some(60.0), Some(60.0)));
    }
}
