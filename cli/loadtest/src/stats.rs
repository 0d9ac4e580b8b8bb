//! Latency samples, counters and fairness figures of a load test.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Latencies (µs) per endpoint.
#[derive(Default)]
pub struct Latencies {
    by_endpoint: Mutex<BTreeMap<&'static str, Vec<u32>>>,
}

/// p50/p95/p99 of one endpoint, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Percentiles {
    pub requests: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The `q`-quantile of sorted values.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let idx = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(idx.min(sorted.len() - 1)).copied()
}

impl Latencies {
    pub fn record(&self, endpoint: &'static str, micros: u64) {
        let v = u32::try_from(micros).unwrap_or(u32::MAX);
        self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner()).entry(endpoint).or_default().push(v);
    }

    pub fn summary(&self) -> BTreeMap<&'static str, Percentiles> {
        let map = self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .map(|(k, v)| {
                let mut s = v.clone();
                s.sort_unstable();
                let ms = |q: f64| quantile(&s, q).map_or(0.0, |x| f64::from(x) / 1000.0);
                (
                    *k,
                    Percentiles {
                        requests: s.len() as u64,
                        p50_ms: ms(0.5),
                        p95_ms: ms(0.95),
                        p99_ms: ms(0.99),
                        max_ms: ms(1.0),
                    },
                )
            })
            .collect()
    }

    pub fn total(&self) -> u64 {
        self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner()).values().map(|v| v.len() as u64).sum()
    }

    pub fn count(&self, endpoint: &str) -> u64 {
        self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner()).get(endpoint).map_or(0, |v| v.len() as u64)
    }
}

/// When requests were sent, per endpoint, in milliseconds since the start: request rates in
/// 1-s buckets (the load at the open of a scheduled sale).
#[derive(Default)]
pub struct Timeline {
    by_endpoint: Mutex<BTreeMap<&'static str, Vec<u32>>>,
}

impl Timeline {
    pub fn record(&self, endpoint: &'static str, since_start: std::time::Duration) {
        let ms = u32::try_from(since_start.as_millis()).unwrap_or(u32::MAX);
        self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner()).entry(endpoint).or_default().push(ms);
    }

    /// Requests to any of `endpoints` in each of the `n` 1-s buckets `[from + i, from + i + 1)`
    /// (seconds since the start).
    pub fn buckets(&self, endpoints: &[&str], from: f64, n: usize) -> Vec<u64> {
        let mut out = vec![0u64; n];
        let map = self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner());
        for (_, times) in map.iter().filter(|(k, _)| endpoints.contains(k)) {
            for t in times {
                let i = (f64::from(*t) / 1000.0 - from).floor();
                if i >= 0.0
                    && let Some(b) = out.get_mut(i as usize)
                {
                    *b += 1;
                }
            }
        }
        out
    }

    /// Requests to any of `endpoints`.
    pub fn count(&self, endpoints: &[&str]) -> u64 {
        let map = self.by_endpoint.lock().unwrap_or_else(|p| p.into_inner());
        map.iter().filter(|(k, _)| endpoints.contains(k)).map(|(_, v)| v.len() as u64).sum()
    }
}

/// A round step for about `ticks` intervals over `range`.
pub fn nice_step(range: f64, ticks: f64) -> f64 {
    let raw = range / ticks;
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// A histogram of non-negative `sorted` values in about `bins` bins of a round width from 0:
/// (bin width, counts).
pub fn histogram(sorted: &[f64], bins: usize) -> (f64, Vec<u64>) {
    let max = sorted.last().copied().unwrap_or(0.0).max(0.0);
    let width = nice_step(max, bins.max(1) as f64);
    let n = ((max / width).floor() as usize + 1).min(bins.max(1) * 2);
    let mut counts = vec![0u64; n];
    for x in sorted {
        let i = ((x.max(0.0) / width).floor() as usize).min(n - 1);
        if let Some(c) = counts.get_mut(i) {
            *c += 1;
        }
    }
    if sorted.is_empty() {
        counts.clear();
    }
    (width, counts)
}

/// Counters shared by all visitors.
#[derive(Default)]
pub struct Counters {
    pub joined: AtomicU64,
    pub admitted_tier1: AtomicU64,
    pub passed_edge: AtomicU64,
    pub active_tier2: AtomicU64,
    pub done: AtomicU64,
    pub abandoned: AtomicU64,
    pub failed: AtomicU64,
    /// 503 answers with Retry-After (graceful degradation).
    pub degraded: AtomicU64,
    /// 5xx answers that are not a proper 503 + Retry-After.
    pub server_errors: AtomicU64,
    pub network_errors: AtomicU64,
    /// 4xx answers the visitor did not expect.
    pub unexpected_4xx: AtomicU64,
    /// Visitors that saw a second identity (jti) for one admission.
    pub double_admitted: AtomicU64,
    /// Responses reporting more active users than the threshold.
    pub over_threshold_responses: AtomicU64,
    pub edge_refused: AtomicU64,
    pub seats_refused: AtomicU64,
    pub rejoined_tier2: AtomicU64,
    /// Visitors who joined and never came back (`--no-show-rate`).
    pub no_shows: AtomicU64,
    /// Status document fetches answered by the CDN (`X-Cache: Hit …`): no Lambda call.
    pub status_hits: AtomicU64,
    /// Status document fetches the CDN sent to the origin (`Miss`, `RefreshHit`, `Error`).
    pub status_misses: AtomicU64,
    /// Status document fetches without `X-Cache` (no CDN in front): each one an origin call.
    pub status_uncached: AtomicU64,
    /// Line document fetches answered by the CDN: no Lambda call.
    pub line_hits: AtomicU64,
    /// Line document fetches the CDN sent to the origin.
    pub line_misses: AtomicU64,
    /// Line document fetches without `X-Cache` (no CDN in front).
    pub line_uncached: AtomicU64,
    /// Refusals that were no verdict on the place (a WAF's or API Gateway's 403 or 429,
    /// `origin_forbidden`, a non-JSON 4xx): the visitor kept its place and tried again.
    pub transient_refusals: AtomicU64,
    /// Visitors whose place moved backwards (each counted once): `placesLostToFaults`.
    pub places_lost: AtomicU64,
    /// Each time a place moved backwards, by how (one visitor may count more than once).
    pub place_losses: Mutex<BTreeMap<&'static str, u64>>,
    /// The tier-1 verdicts on the visitors' tickets, by code.
    pub verdicts: Mutex<BTreeMap<&'static str, u64>>,
}

impl Counters {
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }

    pub fn inc(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// One place moved backwards, by `why`.
    pub fn place_loss(&self, why: &'static str) {
        *self.place_losses.lock().unwrap_or_else(|p| p.into_inner()).entry(why).or_default() += 1;
    }

    /// One tier-1 verdict on a visitor's ticket.
    pub fn verdict(&self, code: &'static str) {
        *self.verdicts.lock().unwrap_or_else(|p| p.into_inner()).entry(code).or_default() += 1;
    }

    /// A copy of a map of counts.
    pub fn counts(m: &Mutex<BTreeMap<&'static str, u64>>) -> BTreeMap<&'static str, u64> {
        m.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Kendall's tau-b-like coefficient between two orders given as (x, y) pairs without ties in
/// x: 1 = same order, −1 = reversed. O(n log n) via counting inversions of y sorted by x.
pub fn kendall_tau(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let mut v: Vec<(f64, f64)> = pairs.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut ys: Vec<f64> = v.iter().map(|p| p.1).collect();
    let inversions = count_inversions(&mut ys);
    let total = (n as f64) * (n as f64 - 1.0) / 2.0;
    Some(1.0 - 2.0 * inversions as f64 / total)
}

fn count_inversions(a: &mut [f64]) -> u64 {
    let n = a.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut inv = count_inversions(&mut a[..mid]) + count_inversions(&mut a[mid..]);
    let mut merged = Vec::with_capacity(n);
    let (mut i, mut j) = (0, mid);
    while i < mid && j < n {
        if a[i] <= a[j] {
            merged.push(a[i]);
            i += 1;
        } else {
            merged.push(a[j]);
            inv += (mid - i) as u64;
            j += 1;
        }
    }
    merged.extend_from_slice(&a[i..mid]);
    merged.extend_from_slice(&a[j..n]);
    a.copy_from_slice(&merged);
    inv
}

/// Spearman's rank correlation of (x, y) pairs (ties get their average rank): 1 = same order,
/// −1 = reversed, about 0 = unrelated. `None` below 3 pairs or when one side is constant.
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let rx = ranks(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let ry = ranks(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in rx.iter().zip(&ry) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// 1-based ranks, ties averaged.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|a, b| v[*a].total_cmp(&v[*b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for k in &idx[i..=j] {
            out[*k] = rank;
        }
        i = j + 1;
    }
    out
}

/// The largest inversion: over visitors in admission order, how far (in positions and in
/// seconds of arrival) someone admitted earlier had arrived after them.
/// Input: (admitted_at, arrived_at_secs, position).
pub fn largest_inversion(mut v: Vec<(f64, f64, u64)>) -> (u64, f64) {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut max_pos, mut max_arrival) = (0u64, f64::MIN);
    let (mut inv_pos, mut inv_secs) = (0u64, 0f64);
    for (_, arrived, pos) in v {
        inv_pos = inv_pos.max(max_pos.saturating_sub(pos));
        if max_arrival > arrived {
            inv_secs = inv_secs.max(max_arrival - arrived);
        }
        max_pos = max_pos.max(pos);
        max_arrival = max_arrival.max(arrived);
    }
    (inv_pos, inv_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_and_inversions() {
        let same: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, i as f64)).collect();
        assert_eq!(kendall_tau(&same), Some(1.0));
        let rev: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, -(i as f64))).collect();
        assert_eq!(kendall_tau(&rev), Some(-1.0));
        let one_swap = vec![(0.0, 0.0), (1.0, 2.0), (2.0, 1.0), (3.0, 3.0)];
        assert!((kendall_tau(&one_swap).unwrap() - (1.0 - 2.0 / 6.0)).abs() < 1e-9);
        // admitted order: pos 3 (arrived 3 s) before pos 1 (arrived 1 s)
        let (p, s) = largest_inversion(vec![(10.0, 3.0, 3), (11.0, 1.0, 1), (12.0, 4.0, 4)]);
        assert_eq!((p, s), (2, 2.0));
        assert_eq!(quantile(&[1, 2, 3, 4], 0.5), Some(3));
    }

    #[test]
    fn histograms_have_round_bins() {
        let v: Vec<f64> = vec![0.0, 0.5, 1.2, 3.9, 19.0];
        let (w, c) = histogram(&v, 10);
        assert_eq!(w, 2.0);
        assert_eq!(c, vec![3, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(histogram(&[], 10), (1.0, vec![]));
        assert_eq!(histogram(&[0.0, 0.0], 10), (1.0, vec![2]));
    }

    #[test]
    fn spearman_and_timeline() {
        let same: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, (i * i) as f64)).collect();
        assert!((spearman(&same).unwrap() - 1.0).abs() < 1e-12);
        let rev: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, -(i as f64))).collect();
        assert!((spearman(&rev).unwrap() + 1.0).abs() < 1e-12);
        // ranks 1,2,3,4 against 2,1,4,3: 1 − 6·4 / (4·15) = 0.6
        let swaps = [(1.0, 2.0), (2.0, 1.0), (3.0, 4.0), (4.0, 3.0)];
        assert!((spearman(&swaps).unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(spearman(&[(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]), None);
        assert_eq!(ranks(&[10.0, 20.0, 10.0]), vec![1.5, 3.0, 1.5]);

        let t = Timeline::default();
        for ms in [100, 900, 1_000, 1_999, 2_500, 10_000] {
            t.record("tier1.check", std::time::Duration::from_millis(ms));
        }
        t.record("tier1.assign", std::time::Duration::from_millis(1_500));
        t.record("seats", std::time::Duration::from_millis(1_500));
        assert_eq!(t.buckets(&["tier1.check"], 0.0, 3), vec![2, 2, 1]);
        assert_eq!(t.buckets(&["tier1.check", "tier1.assign"], 1.0, 2), vec![3, 1]);
        assert_eq!(t.count(&["tier1.check", "tier1.assign"]), 7);
    }
}
