//! Tier 2's part of the report after the sale (docs/operate.md#the-report-after-the-sale): per
//! event and minute, the admissions (by the worker, and at once by a `check` that found room),
//! the checks that found the event full, the slots taken back (evicted, expired), and the
//! people waiting and active as the worker saw them at each step. Each instance counts in
//! memory and adds its counts to the admission store at most once a minute
//! ([`vwr_core::tally`]); `GET /api/queue/admin/report/{eventId}` answers them, and
//! `vwr report` shows them beside tier 1's.

use serde::{Deserialize, Serialize};
use vwr_core::EventId;
use vwr_core::tally::Counts;

/// Tier 2's counts of one event in one minute (or, merged, in many).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tier2Minute {
    pub admitted: u64,
    pub over_threshold: u64,
    pub evicted: u64,
    pub expired: u64,
    /// Sums over the worker's steps, and how many steps: the minute's mean line and slots.
    pub waiting_sum: u64,
    pub active_sum: u64,
    pub samples: u64,
}

impl Counts for Tier2Minute {
    fn merge(&mut self, o: &Self) {
        self.admitted += o.admitted;
        self.over_threshold += o.over_threshold;
        self.evicted += o.evicted;
        self.expired += o.expired;
        self.waiting_sum += o.waiting_sum;
        self.active_sum += o.active_sum;
        self.samples += o.samples;
    }
}

impl Tier2Minute {
    /// The fields as stored (`admitted`, …) with their values, in a fixed order.
    pub fn fields(&self) -> [(&'static str, u64); 7] {
        [
            ("admitted", self.admitted),
            ("overThreshold", self.over_threshold),
            ("evicted", self.evicted),
            ("expired", self.expired),
            ("waitingSum", self.waiting_sum),
            ("activeSum", self.active_sum),
            ("samples", self.samples),
        ]
    }

    /// Sets a field by its stored name; false for an unknown one.
    pub fn set(&mut self, field: &str, v: u64) -> bool {
        let slot = match field {
            "admitted" => &mut self.admitted,
            "overThreshold" => &mut self.over_threshold,
            "evicted" => &mut self.evicted,
            "expired" => &mut self.expired,
            "waitingSum" => &mut self.waiting_sum,
            "activeSum" => &mut self.active_sum,
            "samples" => &mut self.samples,
            _ => return false,
        };
        *slot = v;
        true
    }
}

impl Tier2Minute {
    /// What one worker step adds: its admissions, refusals and slots taken back, and one
    /// sample of the line and the slots.
    pub fn of_step(r: &crate::model::AdmitReport) -> Self {
        Self {
            admitted: r.admitted.len() as u64,
            over_threshold: r.over_threshold,
            evicted: r.evicted,
            expired: r.expired,
            waiting_sum: r.waiting,
            active_sum: r.active,
            samples: 1,
        }
    }
}

/// An instance's tier-2 counts not yet in the store.
pub type Tally = vwr_core::tally::Tally<Tier2Minute>;

/// Tier 2's totals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tier2Totals {
    pub admitted: u64,
    pub over_threshold: u64,
    pub evicted: u64,
    pub expired: u64,
}

/// One minute of tier 2.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tier2Row {
    pub at: u64,
    pub admitted: u64,
    pub over_threshold: u64,
    pub evicted: u64,
    pub expired: u64,
    /// Mean people in the line over the worker's steps of the minute (absent: no step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// Mean slots taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<f64>,
}

/// `GET /api/queue/admin/report/{eventId}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tier2Report {
    pub event_id: String,
    pub generated_at: u64,
    /// The event's threshold (concurrent slots) now, if registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    pub totals: Tier2Totals,
    /// Every minute from the first counted to the last, empty ones included.
    pub minutes: Vec<Tier2Row>,
}

/// Minutes of one report at most (a week), as tier 1's.
const MAX_MINUTES: u64 = 7 * 24 * 60;

impl Tier2Report {
    pub fn build(event: &EventId, threshold: Option<u64>, minutes: &[(u64, Tier2Minute)], now: u64) -> Self {
        let mut by: std::collections::BTreeMap<u64, Tier2Minute> = Default::default();
        let mut all = Tier2Minute::default();
        for (m, c) in minutes {
            by.entry(*m).or_default().merge(c);
            all.merge(c);
        }
        let mean = |sum: u64, n: u64| (n > 0).then(|| (sum as f64 / n as f64 * 10.0).round() / 10.0);
        let mut rows = Vec::new();
        if let (Some(first), Some(last)) = (by.keys().next().copied(), by.keys().next_back().copied()) {
            for m in first.max(last.saturating_sub(MAX_MINUTES - 1))..=last {
                let c = by.get(&m).cloned().unwrap_or_default();
                rows.push(Tier2Row {
                    at: m * 60,
                    admitted: c.admitted,
                    over_threshold: c.over_threshold,
                    evicted: c.evicted,
                    expired: c.expired,
                    waiting: mean(c.waiting_sum, c.samples),
                    active: mean(c.active_sum, c.samples),
                });
            }
        }
        Self {
            event_id: event.as_str().to_owned(),
            generated_at: now,
            threshold,
            totals: Tier2Totals {
                admitted: all.admitted,
                over_threshold: all.over_threshold,
                evicted: all.evicted,
                expired: all.expired,
            },
            minutes: rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_add_up_and_means_are_per_step() {
        let e = EventId::parse("e1").unwrap();
        let a = Tier2Minute { admitted: 3, waiting_sum: 30, active_sum: 6, samples: 3, ..Default::default() };
        let b =
            Tier2Minute { admitted: 2, over_threshold: 4, samples: 1, waiting_sum: 2, ..Default::default() };
        let r = Tier2Report::build(&e, Some(5), &[(10, a.clone()), (12, b), (10, a)], 900);
        assert_eq!(r.totals.admitted, 8);
        assert_eq!(r.totals.over_threshold, 4);
        assert_eq!(r.minutes.len(), 3);
        assert_eq!(r.minutes[0].waiting, Some(10.0));
        assert_eq!(r.minutes[1].waiting, None, "no step that minute");
        assert_eq!(r.minutes[2].at, 720);
        let mut m = Tier2Minute::default();
        for (k, v) in (Tier2Minute {
            admitted: 1,
            over_threshold: 2,
            evicted: 3,
            expired: 4,
            waiting_sum: 5,
            active_sum: 6,
            samples: 7,
        })
        .fields()
        {
            assert!(m.set(k, v));
        }
        assert_eq!(m.samples, 7);
        assert!(!m.set("nope", 1));
    }
}
