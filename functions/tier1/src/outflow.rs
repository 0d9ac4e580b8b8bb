//! Step sizes in `targetArrivals` mode (docs/outflow.md, docs/adr/0017-target-arrivals.md): how
//! many positions a step serves so that *redeemed* admissions per minute converge on the
//! target although some served positions never show up. A pure function of the event's
//! configuration, its recent samples and the current counters — no per-visitor data.

use crate::model::{EventConfig, Sample};

/// Visitors are expected to check in within this long after their position is served (the
/// page polls at most every 30 s); the show rate pairs served positions with the redemptions
/// that follow them this much later.
pub const SHOW_LAG_SECS: u64 = 20;
/// Window of the show-rate estimate.
pub const SHOW_WINDOW_SECS: u64 = 60;
/// Served positions needed in the window before the estimate is trusted.
pub const MIN_SERVED_FOR_ESTIMATE: u64 = 20;
/// The show rate is never taken below this: at most 5 positions per expected arrival.
pub const MIN_SHOW_RATE: f64 = 0.2;
/// Share of the last minute's shortfall (or excess) made up per minute.
pub const FEEDBACK_GAIN: f64 = 0.5;
/// The feedback never moves a step by more than this share of the base step.
pub const MAX_FEEDBACK_SHARE: f64 = 0.5;
/// Window of the measured arrival rate used by the feedback.
pub const FEEDBACK_WINDOW_SECS: u64 = 60;

/// What a step is computed from.
#[derive(Debug, Clone, Copy)]
pub struct StepInputs<'a> {
    pub config: &'a EventConfig,
    pub samples: &'a [Sample],
    pub now: u64,
    pub serving: u64,
    /// Tickets redeemed so far (first admissions).
    pub redeemed: u64,
    /// Admissions the site ended early so far.
    pub released: u64,
    /// Since when the line has moved without interruption (the open, the end of a hold):
    /// the feedback only looks at a minute that lies entirely after it.
    pub steady_since: u64,
}

/// A step's size and how it was found (logged by the advancer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepPlan {
    pub batch: u64,
    /// Expected share of served positions that show up.
    pub show_rate: f64,
    /// Arrivals this step aims at before the feedback.
    pub base: f64,
    /// Arrivals added (or taken off) to make up the last minute's error.
    pub feedback: f64,
    /// Measured redeemed admissions over the last minute, when known.
    pub arrivals_per_minute: Option<f64>,
    /// Admissions ended early since the last step, whose places are handed on.
    pub released: u64,
}

/// `(served, redeemed)` as of time `t`: positions served before `t` (a sample holds the
/// counter *after* the batch served at its time, which belongs to a window starting at `t`:
/// so the newest sample strictly before `t`) and tickets redeemed by `t` (counted when the
/// sample was taken: the newest sample at or before `t`); the current values for `t` ≥ now.
fn at(inputs: &StepInputs<'_>, t: u64) -> Option<(u64, u64)> {
    if t >= inputs.now {
        return Some((inputs.serving, inputs.redeemed));
    }
    let served = inputs.samples.iter().rev().find(|s| s.at < t).map_or(0, |s| s.serving);
    let redeemed = inputs.samples.iter().rev().find(|s| s.at <= t)?.redeemed;
    Some((served, redeemed))
}

/// The share of served positions that show up: redemptions over the last
/// [`SHOW_WINDOW_SECS`] against the positions served over the same window, averaged with the
/// window [`SHOW_LAG_SECS`] earlier (visitors check in a moment after their position is
/// served, so the redemptions of a window belong partly to the window before: the average
/// halves the error while the flow ramps up, and is exact while it is steady). With too little
/// data, the same over everything so far; with none, 1. Bounded below by [`MIN_SHOW_RATE`].
pub fn show_rate(inputs: &StepInputs<'_>) -> f64 {
    let now = inputs.now;
    let windowed = (|| {
        let (s_now, _) = at(inputs, now)?;
        let (s_lag, _) = at(inputs, now.checked_sub(SHOW_LAG_SECS)?)?;
        let (s_w, r_w) = at(inputs, now.checked_sub(SHOW_WINDOW_SECS)?)?;
        let (s_wl, _) = at(inputs, now.checked_sub(SHOW_WINDOW_SECS + SHOW_LAG_SECS)?)?;
        let served = (s_now.saturating_sub(s_w) + s_lag.saturating_sub(s_wl)) / 2;
        (served >= MIN_SERVED_FOR_ESTIMATE)
            .then(|| inputs.redeemed.saturating_sub(r_w) as f64 / served as f64)
    })();
    let rate = windowed.or_else(|| {
        let (s_lag, _) = at(inputs, now.saturating_sub(SHOW_LAG_SECS)).unwrap_or((0, 0));
        let served = (inputs.serving + s_lag) / 2;
        (served >= MIN_SERVED_FOR_ESTIMATE).then(|| inputs.redeemed as f64 / served as f64)
    });
    rate.unwrap_or(1.0).clamp(MIN_SHOW_RATE, 1.0)
}

/// The size of the step due at `inputs.now` (at most `maxBatchSize`; the caller also caps it
/// at the highest position handed out).
pub fn plan(inputs: &StepInputs<'_>) -> StepPlan {
    let c = inputs.config;
    let per_second = c.target_arrivals_per_minute as f64 / 60.0;
    let base = per_second * c.interval_seconds.max(1) as f64;
    let show_rate = show_rate(inputs);
    let now = inputs.now;
    let arrivals_per_minute = now
        .checked_sub(FEEDBACK_WINDOW_SECS)
        .filter(|start| *start >= inputs.steady_since)
        .and_then(|start| at(inputs, start))
        .map(|(_, r0)| inputs.redeemed.saturating_sub(r0) as f64 * 60.0 / FEEDBACK_WINDOW_SECS as f64);
    let feedback = match arrivals_per_minute {
        Some(measured) => {
            let shortfall_per_step = (c.target_arrivals_per_minute as f64 - measured) / 60.0
                * c.interval_seconds.max(1) as f64
                * FEEDBACK_GAIN;
            shortfall_per_step.clamp(-MAX_FEEDBACK_SHARE * base, MAX_FEEDBACK_SHARE * base)
        }
        None => 0.0,
    };
    let released = inputs.released.saturating_sub(inputs.samples.last().map_or(0, |s| s.released));
    let wanted = ((base + feedback).max(0.0) / show_rate).round() as u64 + released;
    StepPlan { batch: wanted.min(c.max_batch_size), show_rate, base, feedback, arrivals_per_minute, released }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OutflowMode;

    fn config(target: u64, interval: u64, max: u64) -> EventConfig {
        EventConfig {
            mode: OutflowMode::TargetArrivals,
            target_arrivals_per_minute: target,
            interval_seconds: interval,
            max_batch_size: max,
            ..EventConfig::default()
        }
    }

    fn sample(at: u64, serving: u64, redeemed: u64) -> Sample {
        Sample { at, serving, redeemed, ..Default::default() }
    }

    #[test]
    fn without_data_a_step_is_the_target_share_of_a_minute() {
        let c = config(1200, 5, 10_000);
        let p = plan(&StepInputs {
            config: &c,
            samples: &[],
            now: 1000,
            serving: 0,
            redeemed: 0,
            released: 0,
            steady_since: 1000,
        });
        assert_eq!((p.batch, p.show_rate, p.feedback), (100, 1.0, 0.0));
    }

    #[test]
    fn no_shows_are_compensated_from_the_lagged_window() {
        // 100 served every 5 s for three minutes; 70 % of them redeemed 10 s later.
        let c = config(1200, 5, 10_000);
        let mut samples = Vec::new();
        for t in (0..=180u64).step_by(5) {
            let served = t / 5 * 100;
            let redeemed = (t.saturating_sub(10) / 5 * 100) * 7 / 10;
            samples.push(sample(1000 + t, served, redeemed));
        }
        let last = *samples.last().unwrap();
        let inputs = StepInputs {
            config: &c,
            samples: &samples,
            now: 1185,
            serving: last.serving,
            redeemed: (175 / 5 * 100) * 7 / 10, // counted now, as the advancer does
            released: 0,
            steady_since: 1000,
        };
        let rate = show_rate(&inputs);
        assert!((rate - 0.7).abs() < 0.03, "show rate {rate}");
        let p = plan(&inputs);
        // 100 arrivals wanted per step at a 0.7 show rate ≈ 143, plus the feedback for the
        // last minute's 840/min against 1200/min (bounded to +50 %).
        assert!(p.batch > 143 && p.batch <= 215, "{p:?}");
    }

    #[test]
    fn steps_are_bounded() {
        let c = config(60_000, 10, 700);
        let samples = [sample(0, 10_000, 10), sample(100, 20_000, 20)];
        let p = plan(&StepInputs {
            config: &c,
            samples: &samples,
            now: 200,
            serving: 20_000,
            redeemed: 20,
            released: 5,
            steady_since: 0,
        });
        assert_eq!(p.show_rate, MIN_SHOW_RATE, "an almost empty show rate is bounded");
        assert_eq!(p.batch, 700, "never above maxBatchSize");
    }

    #[test]
    fn no_feedback_across_a_hold_and_releases_are_handed_on() {
        let c = config(600, 10, 10_000);
        let samples = [sample(0, 0, 0), sample(100, 1000, 0)];
        let p = plan(&StepInputs {
            config: &c,
            samples: &samples,
            now: 130,
            serving: 1000,
            redeemed: 0,
            released: 3,
            steady_since: 100, // held until 100: the last minute is not all steady
        });
        assert_eq!(p.feedback, 0.0, "no burst to make up for a hold");
        assert_eq!(p.arrivals_per_minute, None);
        assert_eq!(p.released, 3);
    }
}
