//! When each visitor arrives: the curves of `--arrival` over `--arrival-seconds`, and in the
//! `prequeue` scenario the two waves around the open, the first visitors in the pre-queue
//! window and the rest on the curve from `openAt` (docs/performance.md).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How visitors arrive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Curve {
    /// Everyone within the first second (the sale opens).
    #[default]
    Burst,
    /// Evenly over `--arrival-seconds`.
    Uniform,
    /// Few at first, most towards the end of `--arrival-seconds`.
    Late,
}

/// When visitor `i` of `n` arrives after the start, on `curve` over `window` seconds (`Burst`:
/// within the first second); `salt` in [0, 1) spreads visitors within their slot.
pub fn arrival_of(curve: Curve, i: u64, n: u64, window: f64, salt: f64) -> Duration {
    let f = (i as f64 + salt) / n.max(1) as f64;
    let secs = match curve {
        Curve::Burst => f,
        Curve::Uniform => f * window,
        Curve::Late => f.sqrt() * window,
    };
    Duration::from_secs_f64(secs)
}

/// The `prequeue` scenario's arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waves {
    /// Seconds from the start to `openAt`.
    pub open_offset: f64,
    /// Pre-queue arrivals spread over these seconds since the start: from when the status
    /// document said `prequeue` to a second before `openAt`.
    pub window: (f64, f64),
    /// Visitors arriving in the pre-queue window (the first ones), and after `openAt`.
    pub before_open: u64,
    pub after_open: u64,
}

impl Waves {
    /// When visitor `i` arrives, after the start: the first `before_open` evenly over the
    /// pre-queue window, the rest on `curve` over `window_seconds` from `openAt`.
    pub fn arrival(&self, curve: Curve, i: u64, window_seconds: f64, salt: f64) -> Duration {
        if i < self.before_open {
            let (from, to) = self.window;
            Duration::from_secs_f64(from) + arrival_of(Curve::Uniform, i, self.before_open, to - from, salt)
        } else {
            Duration::from_secs_f64(self.open_offset)
                + arrival_of(curve, i - self.before_open, self.after_open, window_seconds, salt)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves() {
        assert!(arrival_of(Curve::Burst, 999, 1000, 30.0, 0.9) <= Duration::from_secs(1));
        assert!(arrival_of(Curve::Late, 500, 1000, 30.0, 0.0) > Duration::from_secs(15));
        assert!(arrival_of(Curve::Uniform, 500, 1000, 30.0, 0.0) == Duration::from_secs(15));
    }

    #[test]
    fn pre_queue_arrivals_fall_in_the_window_and_the_rest_after_the_open() {
        let waves = Waves { open_offset: 19.5, window: (1.5, 18.5), before_open: 70, after_open: 30 };
        for i in 0..100 {
            let a = waves.arrival(Curve::Uniform, i, 10.0, 0.5).as_secs_f64();
            if i < 70 {
                assert!((1.5..18.5).contains(&a), "{i}: {a}");
            } else {
                assert!((19.5..29.5).contains(&a), "{i}: {a}");
            }
        }
    }
}
