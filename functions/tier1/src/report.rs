//! The report after the sale (docs/operate.md#the-report-after-the-sale): per event and
//! minute, joins, places served, redemptions with a histogram of their waits, releases and
//! refusals by kind. Each instance counts in memory ([`Tally`]) and adds its counts to the
//! store at most once a minute (one write per event and minute it saw), so the writes do not
//! grow with the traffic; [`SaleReport::build`] turns the stored minutes into the answer of
//! `GET /api/admin/vwr/report/{eventId}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vwr_core::EventId;
use vwr_core::tally::Counts;

/// Waits below this many seconds have a bucket per second; above, buckets grow by [`RATIO`].
pub const EXACT_SECS: u64 = 20;
/// Width of a bucket above [`EXACT_SECS`]: each 5 % wider than the last, so a percentile read
/// off the histogram is within 2.5 % of the true one.
pub const RATIO: f64 = 1.05;
/// The largest bucket index: waits beyond ~20 s × 1.05^400 (days) all land here.
const MAX_BUCKET: u32 = 420;

/// The counts of one event in one minute (or, merged, in many).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MinuteCounts {
    /// Places handed out (`assign`, pre-queue places included).
    pub joins: u64,
    /// Places called: how far the serving counter moved.
    pub served: u64,
    /// First redemptions of a called place (`check` answering the first tier-1 token).
    pub redeemed: u64,
    /// Sessions the site ended (`release`).
    pub released: u64,
    /// The waits of the redemptions: bucket ([`wait_bucket`]) → count.
    pub waits: BTreeMap<u32, u64>,
    /// Refused calls of `assign` and `check`, by the API's error code.
    pub refusals: BTreeMap<String, u64>,
}

impl MinuteCounts {
    /// Records a redemption after `wait_secs`.
    pub fn redeemed_after(&mut self, wait_secs: u64) {
        self.redeemed += 1;
        *self.waits.entry(wait_bucket(wait_secs)).or_default() += 1;
    }
}

/// The histogram bucket of a wait: one per second below [`EXACT_SECS`], then 5 % wide.
pub fn wait_bucket(secs: u64) -> u32 {
    if secs < EXACT_SECS {
        return u32::try_from(secs).unwrap_or(0);
    }
    let steps = ((secs as f64 / EXACT_SECS as f64).ln() / RATIO.ln()).floor();
    let b = EXACT_SECS as f64 + steps;
    if b >= f64::from(MAX_BUCKET) { MAX_BUCKET } else { b.max(0.0) as u32 }
}

/// The waits bucket `b` holds: `[from, to)` seconds.
pub fn bucket_bounds(b: u32) -> (f64, f64) {
    let b64 = u64::from(b);
    if b64 < EXACT_SECS {
        return (b as f64, b as f64 + 1.0);
    }
    let from = EXACT_SECS as f64 * RATIO.powi((b64 - EXACT_SECS) as i32);
    (from, from * RATIO)
}

/// The `p`-quantile (0 < p ≤ 1) of a histogram, in seconds, by nearest rank: an exact bucket
/// answers its second, a wider one the point of the rank within it. `None` when empty.
pub fn percentile(waits: &BTreeMap<u32, u64>, p: f64) -> Option<f64> {
    let n: u64 = waits.values().sum();
    if n == 0 {
        return None;
    }
    let rank = ((p * n as f64).ceil() as u64).clamp(1, n);
    let mut below = 0u64;
    for (b, count) in waits {
        if below + count >= rank {
            let (from, to) = bucket_bounds(*b);
            if u64::from(*b) < EXACT_SECS {
                return Some(from);
            }
            let within = (rank - below) as f64 - 0.5;
            return Some(from + (to - from) * within / *count as f64);
        }
        below += count;
    }
    None
}

pub use vwr_core::tally::{Batch as TallyBatch, FLUSH_EVERY_SECS, KEEP_SECS, minute_of};

/// An instance's tier-1 counts not yet in the store.
pub type Tally = vwr_core::tally::Tally<MinuteCounts>;
/// Counts taken out of a [`Tally`] to be written.
pub type Batch = TallyBatch<MinuteCounts>;

impl Counts for MinuteCounts {
    fn merge(&mut self, other: &Self) {
        self.joins += other.joins;
        self.served += other.served;
        self.redeemed += other.redeemed;
        self.released += other.released;
        for (b, n) in &other.waits {
            *self.waits.entry(*b).or_default() += n;
        }
        for (k, n) in &other.refusals {
            *self.refusals.entry(k.clone()).or_default() += n;
        }
    }
}

/// Percentiles of the waits, in seconds (one decimal).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct WaitPercentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl WaitPercentiles {
    pub fn of(waits: &BTreeMap<u32, u64>) -> Option<Self> {
        let p = |q| percentile(waits, q).map(|s| (s * 10.0).round() / 10.0);
        Some(Self { p50: p(0.5)?, p90: p(0.9)?, p99: p(0.99)? })
    }
}

/// The sale's totals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub joins: u64,
    pub served: u64,
    pub redeemed: u64,
    /// Places called whose visitor never came through: min(served, joins) − redeemed. While
    /// the sale runs it includes those on their way.
    pub abandoned: u64,
    pub released: u64,
    pub refusals: BTreeMap<String, u64>,
}

/// One bucket of the wait distribution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WaitBucket {
    pub from_seconds: f64,
    pub to_seconds: f64,
    pub count: u64,
}

/// One minute of the sale.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MinuteRow {
    /// The minute's start, unix seconds.
    pub at: u64,
    pub joins: u64,
    pub served: u64,
    pub redeemed: u64,
    pub released: u64,
    pub refusals: BTreeMap<String, u64>,
    /// Of the redemptions in this minute; absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<WaitPercentiles>,
}

/// `GET /api/admin/vwr/report/{eventId}` (docs/operate.md#the-report-after-the-sale).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SaleReport {
    pub event_id: String,
    /// The event's state when the report was made.
    pub state: String,
    pub generated_at: u64,
    /// Places the advancer aims to call per minute (`batchSize` per `intervalSeconds`);
    /// absent when the line moves by target arrivals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_per_minute: Option<f64>,
    pub totals: Totals,
    /// From the join (or the open, for a pre-queue ticket) to the redemption; absent before
    /// the first redemption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<WaitPercentiles>,
    pub wait_histogram: Vec<WaitBucket>,
    /// Every minute from the first counted to the last, empty ones included: at most the last
    /// [`MAX_MINUTES`] (the totals count them all).
    pub minutes: Vec<MinuteRow>,
}

/// Minutes of one report at most (a week): older ones are left out of `minutes`, not totals.
pub const MAX_MINUTES: usize = 7 * 24 * 60;

impl SaleReport {
    /// The report of `event` from its stored `minutes` (any order; one minute may repeat).
    pub fn build(
        event: &EventId,
        state: &str,
        target_per_minute: Option<f64>,
        minutes: &[(u64, MinuteCounts)],
        now: u64,
    ) -> Self {
        let mut by_minute: BTreeMap<u64, MinuteCounts> = BTreeMap::new();
        let mut all = MinuteCounts::default();
        for (m, c) in minutes {
            by_minute.entry(*m).or_default().merge(c);
            all.merge(c);
        }
        let mut rows = Vec::new();
        if let (Some(first), Some(last)) = (by_minute.keys().next(), by_minute.keys().next_back()) {
            let first = (*first).max(last.saturating_sub(MAX_MINUTES as u64 - 1));
            for m in first..=*last {
                let c = by_minute.get(&m).cloned().unwrap_or_default();
                rows.push(MinuteRow {
                    at: m * 60,
                    joins: c.joins,
                    served: c.served,
                    redeemed: c.redeemed,
                    released: c.released,
                    wait_seconds: WaitPercentiles::of(&c.waits),
                    refusals: c.refusals,
                });
            }
        }
        let wait_histogram = all
            .waits
            .iter()
            .map(|(b, n)| {
                let (from, to) = bucket_bounds(*b);
                WaitBucket {
                    from_seconds: (from * 10.0).round() / 10.0,
                    to_seconds: (to * 10.0).round() / 10.0,
                    count: *n,
                }
            })
            .collect();
        Self {
            event_id: event.as_str().to_owned(),
            state: state.to_owned(),
            generated_at: now,
            target_per_minute,
            totals: Totals {
                joins: all.joins,
                served: all.served,
                redeemed: all.redeemed,
                abandoned: all.served.min(all.joins).saturating_sub(all.redeemed),
                released: all.released,
                refusals: all.refusals.clone(),
            },
            wait_seconds: WaitPercentiles::of(&all.waits),
            wait_histogram,
            minutes: rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(waits: &[u64]) -> BTreeMap<u32, u64> {
        let mut m = MinuteCounts::default();
        for w in waits {
            m.redeemed_after(*w);
        }
        m.waits
    }

    #[test]
    fn buckets_are_exact_below_twenty_seconds_then_five_percent_wide() {
        for s in 0..EXACT_SECS {
            assert_eq!(wait_bucket(s), s as u32);
            assert_eq!(bucket_bounds(s as u32), (s as f64, s as f64 + 1.0));
        }
        for s in [20u64, 21, 37, 60, 599, 3_600, 86_400] {
            let (from, to) = bucket_bounds(wait_bucket(s));
            assert!(from <= s as f64 + 1e-9 && (s as f64) < to + 1e-9, "{s} in [{from}, {to})");
            assert!((to / from - RATIO).abs() < 1e-9);
        }
        assert_eq!(wait_bucket(u64::MAX), MAX_BUCKET);
    }

    #[test]
    fn percentiles_are_within_a_bucket_of_the_truth() {
        let waits: Vec<u64> = (1..=1000).map(|i| i * 3).collect();
        let h = hist(&waits);
        for (p, truth) in [(0.5, 1500.0), (0.9, 2700.0), (0.99, 2970.0)] {
            let got = percentile(&h, p).unwrap();
            assert!((got - truth).abs() / truth < 0.025, "p{p}: {got} vs {truth}");
        }
        assert_eq!(percentile(&hist(&[3, 3, 5, 9]), 0.5), Some(3.0));
        assert_eq!(percentile(&hist(&[3, 3, 5, 9]), 0.99), Some(9.0));
        assert_eq!(percentile(&BTreeMap::new(), 0.5), None);
    }

    #[test]
    fn the_report_fills_empty_minutes_and_counts_abandonment() {
        let e = EventId::parse("e1").unwrap();
        let mut a = MinuteCounts { joins: 10, served: 6, ..Default::default() };
        a.redeemed_after(30);
        a.refusals.insert("proof_required".into(), 2);
        let mut b = MinuteCounts { served: 4, released: 1, ..Default::default() };
        b.redeemed_after(90);
        b.redeemed_after(95);
        let r = SaleReport::build(&e, "closed", Some(60.0), &[(100, a.clone()), (103, b), (100, a)], 7_000);
        assert_eq!(r.minutes.len(), 4);
        assert_eq!(r.minutes[1].joins, 0);
        assert_eq!(r.minutes[0].at, 6_000);
        assert_eq!(r.minutes[0].joins, 20, "the same minute from two instances adds up");
        assert_eq!(r.totals.joins, 20);
        assert_eq!(r.totals.served, 16);
        assert_eq!(r.totals.redeemed, 4);
        assert_eq!(r.totals.abandoned, 12);
        assert_eq!(r.totals.refusals["proof_required"], 4);
        let w = r.wait_seconds.unwrap();
        assert!(w.p50 >= 29.0 && w.p50 <= 31.0, "{w:?}");
        let json = serde_json::to_value(&r).unwrap();
        for k in ["eventId", "totals", "waitSeconds", "minutes", "waitHistogram", "targetPerMinute"] {
            assert!(json.get(k).is_some(), "{k} in {json}");
        }
        assert!(json["minutes"][1].get("waitSeconds").is_none());
    }
}
