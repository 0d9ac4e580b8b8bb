//! The `outflow` section of the report: how many people the line let out, against
//! `--target-per-minute` in `target-arrivals` mode (docs/outflow.md).
//!
//! "Redeemed" is what tier 1 counts: tickets whose first admitted `check` collected the token
//! (the admin status's `admitted`, sampled once a second). "Served" is `servingCounter`. The
//! figures are over the **steady part** of the run: from a minute after the first served
//! position (the controller's feedback needs a whole minute since the open,
//! docs/outflow.md#targetarrivals) until the line is empty (everyone who joined is served; from
//! then on arrivals, not the advancer, set the flow) or the last sample.

use serde_json::{Value, json};

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

/// The `outflow` section from the samples, the visitors' outcomes and the target (if any).
pub fn report(points: &[Point], outcomes: &[Outcome], target: Option<u64>) -> Value {
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
        (Some(a), Some(b)) => json!({
            "served": b.served.saturating_sub(a.served),
            "redeemed": b.redeemed.saturating_sub(a.redeemed),
            "noShowShare": no_show_share(outcomes, a.served, b.served),
        }),
        _ => Value::Null,
    };
    let server = end
        .and_then(|b| points.iter().filter(|p| at(p).is_some()).nth(b))
        .and_then(|p| p.server_outflow.clone());
    json!({
        "targetPerMinute": target,
        "redeemedPerMinute": redeemed,
        "servedPerMinute": served,
        "noShowShare": share,
        "deviationPct": match (redeemed, target) {
            (Some(r), Some(t)) if t > 0 => Some(round((r / t as f64 - 1.0) * 100.0, 1)),
            _ => None,
        },
        "worstMinuteDeviationPct": worst,
        "steady": {
            "fromSeconds": first.map(|s| round(s.t, 1)),
            "toSeconds": last.map(|s| round(s.t, 1)),
            "seconds": round(seconds, 1),
            "firstServedSeconds": first_served.map(|t| round(t, 1)),
        },
        "wholeRun": whole,
        "server": server,
        "note": format!(
            "steady part: from {WARM_UP_SECONDS} s after the first served position until the line is empty (rates null under {MIN_STEADY_SECONDS} s); redeemed = first admitted checks as tier 1 counts them; noShowShare = served positions of the steady part whose visitor never collected a token; server = the admin status's outflow figures at the end of the steady part"
        ),
    })
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
        assert_eq!(r["steady"]["firstServedSeconds"], 11.0);
        assert_eq!(r["steady"]["fromSeconds"], 71.0);
        assert_eq!(r["steady"]["toSeconds"], 150.0);
        assert_eq!(r["redeemedPerMinute"], 1_200.0);
        assert_eq!(r["servedPerMinute"], 1_800.0);
        assert_eq!(r["deviationPct"], 0.0);
        assert_eq!(r["worstMinuteDeviationPct"], 0.0);
        let share = r["noShowShare"].as_f64().unwrap();
        assert!((share - 1.0 / 3.0).abs() < 0.001, "{share}");
        assert_eq!(r["wholeRun"]["served"], 4_200);
    }

    #[test]
    fn a_short_run_has_no_steady_rates_and_fixed_mode_no_target() {
        let (points, outcomes) = run();
        let r = report(&points[..80], &outcomes, None);
        assert_eq!(r["redeemedPerMinute"], Value::Null, "9 s of steady part");
        assert_eq!(r["targetPerMinute"], Value::Null);
        assert_eq!(r["deviationPct"], Value::Null);
        assert!(r["wholeRun"]["noShowShare"].as_f64().is_some());
        assert_eq!(report(&[], &[], Some(5))["steady"]["seconds"], 0.0);
    }
}
