//! The `outflow` section of the report: how many people the line let out, against
//! `--target-per-minute` in `target-arrivals` mode (docs/outflow.md).
//!
//! "Redeemed" is what tier 1 counts: tickets whose first admitted `check` collected the token
//! (the admin status's `admitted`, sampled once a second). "Served" is `servingCounter`. The
//! figures are over the **steady part** of the run: from a minute after the first served
//! position (the controller's feedback needs a whole minute since the open,
//! docs/outflow.md#targetarrivals) until the line is empty (everyone who joined is served; from
//! then on arrivals, not the advancer, set the flow) or the last sample.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::series::Point;
use super::visitor::Outcome;

/// Seconds after the first served position before the steady part starts.
pub const WARM_UP_SECONDS: f64 = 60.0;
/// A steady part shorter than this gives no rates (`null`).
pub const MIN_STEADY_SECONDS: f64 = 20.0;
/// The window of the worst minute inside the steady part.
const MINUTE: f64 = 60.0;

fn round(x: f64, places: i32) -> f64 {
    let m = 10f64.powi(places);
    (x * m).round() / m
}

/// A sample with the figures the outflow needs.
#[derive(Debug, Clone, Copy)]
struct At {
    t: f64,
    served: u64,
    redeemed: u64,
    waiting: Option<u64>,
}

fn at(p: &Point) -> Option<At> {
    Some(At { t: p.t, served: p.serving_counter?, redeemed: p.redeemed?, waiting: p.waiting })
}

/// Per minute between two samples.
fn per_minute(a: &At, b: &At, pick: fn(&At) -> u64) -> f64 {
    pick(b).saturating_sub(pick(a)) as f64 / (b.t - a.t).max(1e-3) * 60.0
}

/// Share of the positions in `(from, to]` whose visitor never collected a token (a no-show, or
/// one who gave up before its turn): from what each visitor saw, not from the server's counters.
fn no_show_share(outcomes: &[Outcome], from: u64, to: u64) -> Option<f64> {
    if to <= from {
        return None;
    }
    let redeemed = outcomes
        .iter()
        .filter(|o| o.tier1_admitted_s.is_some() && o.position.is_some_and(|p| p > from && p <= to))
        .count() as u64;
    Some(round(1.0 - redeemed.min(to - from) as f64 / (to - from) as f64, 4))
}

/// The `outflow` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outflow {
    /// `--target-per-minute` in `target-arrivals` mode.
    pub target_per_minute: Option<u64>,
    /// Over the steady part (`null` when it is shorter than [`MIN_STEADY_SECONDS`]).
    pub redeemed_per_minute: Option<f64>,
    pub served_per_minute: Option<f64>,
    pub no_show_share: Option<f64>,
    /// Redeemed per minute against the target, in percent.
    pub deviation_pct: Option<f64>,
    /// The worst whole minute of the steady part against the target, in percent.
    pub worst_minute_deviation_pct: Option<f64>,
    pub steady: Steady,
    /// From the first sample to the last (`null` without samples).
    pub whole_run: Option<WholeRun>,
    /// The admin status's `outflow` figures at the end of the steady part, as the server
    /// answered them (docs/outflow.md).
    pub server: Option<Value>,
    pub note: String,
}

/// The steady part of the run, in seconds since the start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Steady {
    pub from_seconds: Option<f64>,
    pub to_seconds: Option<f64>,
    pub seconds: f64,
    pub first_served_seconds: Option<f64>,
}

/// The outflow of the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WholeRun {
    pub served: u64,
    pub redeemed: u64,
    pub no_show_share: Option<f64>,
}

/// The `outflow` section from the samples, the visitors' outcomes and the target (if any).
pub fn report(points: &[Point], outcomes: &[Outcome], target: Option<u64>) -> Outflow {
    let samples: Vec<At> = points.iter().filter_map(at).collect();
    let first_served = samples.iter().find(|s| s.served > 0).map(|s| s.t);
    let from = first_served.map(|t| t + WARM_UP_SECONDS);
    let start = from.and_then(|f| samples.iter().position(|s| s.t >= f));
    // The line is empty once nobody issued is left to serve.
    let end = start.map(|a| {
        samples.iter().skip(a).position(|s| s.waiting == Some(0)).map_or(samples.len() - 1, |k| a + k)
    });
    let steady = match (start, end) {
        (Some(a), Some(b)) => samples.get(a..=b).unwrap_or_default(),
        _ => &[],
    };
    let (first, last) = (steady.first(), steady.last());
    let seconds = match (first, last) {
        (Some(a), Some(b)) => b.t - a.t,
        _ => 0.0,
    };
    let long_enough = seconds >= MIN_STEADY_SECONDS;
    let rate = |pick: fn(&At) -> u64| match (first, last) {
        (Some(a), Some(b)) if long_enough => Some(round(per_minute(a, b, pick), 1)),
        _ => None,
    };
    let redeemed = rate(|s| s.redeemed);
    let served = rate(|s| s.served);
    let share = match (first, last) {
        (Some(a), Some(b)) if long_enough => no_show_share(outcomes, a.served, b.served),
        _ => None,
    };
    // The worst whole minute inside the steady part, against the target.
    let worst = target.filter(|t| *t > 0).and_then(|t| {
        let mut worst: Option<f64> = None;
        for (i, a) in steady.iter().enumerate() {
            let Some(b) = steady.iter().skip(i).find(|b| b.t - a.t >= MINUTE - 0.5) else {
                break;
            };
            let dev = (per_minute(a, b, |s| s.redeemed) / t as f64 - 1.0) * 100.0;
            if worst.is_none_or(|w| dev.abs() > w.abs()) {
                worst = Some(dev);
            }
        }
        worst.map(|w| round(w, 1))
    });
    let whole = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => Some(WholeRun {
            served: b.served.saturating_sub(a.served),
            redeemed: b.redeemed.saturating_sub(a.redeemed),
            no_show_share: no_show_share(outcomes, a.served, b.served),
        }),
        _ => None,
    };
    let server = end
        .and_then(|b| points.iter().filter(|p| at(p).is_some()).nth(b))
        .and_then(|p| p.server_outflow.clone());
    Outflow {
        target_per_minute: target,
        redeemed_per_minute: redeemed,
        served_per_minute: served,
        no_show_share: share,
        deviation_pct: match (redeemed, target) {
            (Some(r), Some(t)) if t > 0 => Some(round((r / t as f64 - 1.0) * 100.0, 1)),
            _ => None,
        },
        worst_minute_deviation_pct: worst,
        steady: Steady {
            from_seconds: first.map(|s| round(s.t, 1)),
            to_seconds: last.map(|s| round(s.t, 1)),
            seconds: round(seconds, 1),
            first_served_seconds: first_served.map(|t| round(t, 1)),
        },
        whole_run: whole,
        server,
        note: format!(
            "steady part: from {WARM_UP_SECONDS} s after the first served position until the line is empty (rates null under {MIN_STEADY_SECONDS} s); redeemed = first admitted checks as tier 1 counts them; noShowShare = served positions of the steady part whose visitor never collected a token; server = the admin status's outflow figures at the end of the steady part"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t: f64, served: u64, redeemed: u64, waiting: u64) -> Point {
        Point {
            t,
            serving_counter: Some(served),
            redeemed: Some(redeemed),
            waiting: Some(waiting),
            ..Point::default()
        }
    }

    /// Served 30/s and redeemed 20/s from 10 s on, the line empty at 150 s.
    fn run() -> (Vec<Point>, Vec<Outcome>) {
        let mut points = Vec::new();
        for i in 0..=170u64 {
            let t = i as f64;
            let k = i.saturating_sub(10).min(140);
            points.push(point(t, k * 30, k * 20, if i < 150 { 1_000 } else { 0 }));
        }
        // Positions 1..=4200: two of every three collect their token.
        let outcomes = (1..=4_200u64)
            .map(|p| Outcome {
                position: Some(p),
                tier1_admitted_s: (p % 3 != 0).then_some(1.0),
                ..Outcome::default()
            })
            .collect();
        (points, outcomes)
    }

    #[test]
    fn the_steady_part_runs_from_a_minute_after_the_first_step_until_the_line_is_empty() {
        let (points, outcomes) = run();
        let r = report(&points, &outcomes, Some(1_200));
        assert_eq!(r.steady.first_served_seconds, Some(11.0));
        assert_eq!(r.steady.from_seconds, Some(71.0));
        assert_eq!(r.steady.to_seconds, Some(150.0));
        assert_eq!(r.redeemed_per_minute, Some(1_200.0));
        assert_eq!(r.served_per_minute, Some(1_800.0));
        assert_eq!(r.deviation_pct, Some(0.0));
        assert_eq!(r.worst_minute_deviation_pct, Some(0.0));
        let share = r.no_show_share.unwrap();
        assert!((share - 1.0 / 3.0).abs() < 0.001, "{share}");
        assert_eq!(r.whole_run.unwrap().served, 4_200);
    }

    #[test]
    fn a_short_run_has_no_steady_rates_and_fixed_mode_no_target() {
        let (points, outcomes) = run();
        let r = report(&points[..80], &outcomes, None);
        assert_eq!(r.redeemed_per_minute, None, "9 s of steady part");
        assert_eq!(r.target_per_minute, None);
        assert_eq!(r.deviation_pct, None);
        assert!(r.whole_run.unwrap().no_show_share.is_some());
        assert_eq!(report(&[], &[], Some(5)).steady.seconds, 0.0);
    }
}
