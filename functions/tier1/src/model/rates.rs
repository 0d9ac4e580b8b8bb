//! The serving-counter history (one sample per advance) and the rates read from it: the
//! status documents' figures, the wait estimates and the outflow controller's inputs.

use serde::{Deserialize, Serialize};

/// Window of the admission-rate figures.
pub const RATE_WINDOW_SECS: u64 = 60;

/// A point of the serving-counter history, written with every advance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the epoch.
    pub at: u64,
    /// `servingCounter` after the advance.
    pub serving: u64,
    /// Positions issued when the advance was computed.
    pub issued: u64,
    /// Tickets redeemed (first admissions) when the advance was computed.
    #[serde(default)]
    pub redeemed: u64,
    /// Admissions the site ended early (`release`) when the advance was computed.
    #[serde(default)]
    pub released: u64,
}

/// Change per second of `pick` up to `current` over the last [`RATE_WINDOW_SECS`] (or since
/// the first sample, once that is 10 s old); `None` while unknown.
pub(super) fn rate(samples: &[Sample], now: u64, current: u64, pick: impl Fn(&Sample) -> u64) -> Option<f64> {
    let cutoff = now.checked_sub(RATE_WINDOW_SECS)?;
    let (base, dt) = match samples.iter().rev().find(|s| s.at <= cutoff) {
        Some(s) => (pick(s), RATE_WINDOW_SECS),
        None => {
            let first = samples.first()?;
            let dt = now.saturating_sub(first.at);
            if dt < 10 {
                return None;
            }
            (pick(first), dt)
        }
    };
    Some(current.saturating_sub(base) as f64 / dt as f64)
}

/// Joins per second over the last minute, from the samples (approximate: `issued` is only
/// sampled at advances).
pub fn joins_per_second(samples: &[Sample], now: u64, issued_now: u64) -> Option<f64> {
    rate(samples, now, issued_now, |s| s.issued)
}

/// How far back samples are kept: the outflow controller looks at the last few minutes
/// (docs/outflow.md).
pub const SAMPLE_HISTORY_SECS: u64 = 180;
/// Samples older than the rate window are thinned to one per this many seconds.
const THIN_EVERY_SECS: u64 = 10;

/// Appends `new` and keeps: every sample of the last [`RATE_WINDOW_SECS`], the newest one
/// before that (so the 60-s rate stays exact: the counter only changes at samples), and older
/// ones back to [`SAMPLE_HISTORY_SECS`] thinned to one per [`THIN_EVERY_SECS`].
pub fn push_sample(samples: &[Sample], new: Sample) -> Vec<Sample> {
    let history = new.at.saturating_sub(SAMPLE_HISTORY_SECS);
    let window = new.at.saturating_sub(RATE_WINDOW_SECS);
    let older: Vec<&Sample> = samples.iter().filter(|s| s.at < new.at).collect();
    let start = older.iter().rposition(|s| s.at <= history).unwrap_or(0);
    let window_base = older.iter().rposition(|s| s.at < window);
    let mut out: Vec<Sample> = Vec::with_capacity(older.len() + 1);
    for (i, s) in older.iter().enumerate().skip(start) {
        let thinnable = window_base.is_some_and(|b| i < b);
        if thinnable && out.last().is_some_and(|l| s.at < l.at + THIN_EVERY_SECS) {
            continue;
        }
        out.push(**s);
    }
    out.push(new);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventConfig, EventRecord, EventState, OutflowMode};
    use vwr_core::EventId;

    #[test]
    fn thinning_keeps_the_minute_rate_exact() {
        // A sample every second, the counter moving by an irregular amount each time.
        let mut s = Vec::new();
        let mut all = Vec::new();
        for t in 0..=400u64 {
            let sample = Sample { at: t, serving: t * t % 97 + t * 3, ..Default::default() };
            all.push(sample);
            s = push_sample(&s, sample);
        }
        assert!(s.len() < 90, "thinned: {}", s.len());
        assert!(s.first().is_some_and(|f| f.at <= 400 - SAMPLE_HISTORY_SECS));
        let last = all.last().copied().unwrap();
        for now in 400..470 {
            let rec = |samples: &[Sample]| EventRecord {
                serving_counter: last.serving,
                samples: samples.to_vec(),
                ..EventRecord::new(EventId::parse("e").unwrap(), EventState::Open, EventConfig::default(), 0)
            };
            assert_eq!(rec(&s).served_per_second(now), rec(&all).served_per_second(now), "at {now}");
        }
    }

    #[test]
    fn samples_keep_one_window_and_rate_is_exact() {
        let mut s = Vec::new();
        for t in (0..=200).step_by(10) {
            s = push_sample(&s, Sample { at: t, serving: t * 5, issued: t * 10, ..Default::default() });
        }
        assert_eq!(s.first().map(|x| x.at), Some(20), "three minutes of history");
        assert_eq!(s.len(), 19);
        let rec = EventRecord {
            serving_counter: 1000,
            last_step_at: 200,
            samples: s.clone(),
            updated_at: 200,
            ..EventRecord::new(EventId::parse("e").unwrap(), EventState::Open, EventConfig::default(), 0)
        };
        // At 205 the counter 60 s earlier (145) was the 140 sample: 700.
        assert_eq!(rec.served_per_second(205), Some((1000.0 - 700.0) / 60.0));
        assert_eq!(joins_per_second(&s, 205, 2000), Some((2000.0 - 1400.0) / 60.0));
        // A whole minute of data: the measured rate.
        assert_eq!(rec.estimate_rate(205), rec.served_per_second(205));
        let young = EventRecord { samples: vec![Sample { at: 100, ..Default::default() }], ..rec };
        // Less than a minute of data: the configured rate (500 per 10 s).
        assert_eq!(young.estimate_rate(120), Some(50.0));
        let manual = EventRecord { config: EventConfig { batch_size: 0, ..young.config }, ..young.clone() };
        assert_eq!(manual.estimate_rate(120), None);
        // targetArrivals: the target per minute, whatever batchSize says.
        let target = EventRecord {
            config: EventConfig {
                mode: OutflowMode::TargetArrivals,
                target_arrivals_per_minute: 1200,
                ..young.config
            },
            ..young.clone()
        };
        assert_eq!(target.estimate_rate(120), Some(20.0));
        assert_eq!(young.served_per_second(105), None);
        assert_eq!(young.served_per_second(120), Some(1000.0 / 20.0));
    }
}
