//! Poll hints and wait estimates (docs/api.md#poll-hints-and-estimates).

/// Seconds the client should wait before polling again, from its place in line.
///
/// position ≤ 0 → 3 s, ≤ 1,000 → 1 s, ≤ 5,000 → 5 s, ≤ 10,000 → 10 s, ≤ 100,000 → 30 s, else 60 s.
pub fn next_poll_seconds(position: i64) -> u64 {
    match position {
        p if p <= 0 => 3,
        p if p <= 1_000 => 1,
        p if p <= 5_000 => 5,
        p if p <= 10_000 => 10,
        p if p <= 100_000 => 30,
        _ => 60,
    }
}

/// Seconds until the next poll, from the expected wait (docs/api.md#poll-hints-and-estimates):
/// about a quarter of it, between 1 s and 30 s. Clients add their own jitter (±20 %). A
/// visitor far back polls rarely and one near the front often, however long the line.
pub fn poll_seconds_for_wait(wait_seconds: u64) -> u64 {
    (wait_seconds / 4).clamp(1, 30)
}

/// Estimated seconds until admission: `position ÷ admissions per second` over the last 60 s;
/// without data (no rate, or a rate of zero), `max(position / 50, 5)`.
pub fn estimated_wait_seconds(position: u64, admissions_per_second: Option<f64>) -> u64 {
    match admissions_per_second {
        Some(rate) if rate.is_finite() && rate > 0.0 => {
            let secs = (position as f64 / rate).ceil();
            if secs >= u64::MAX as f64 { u64::MAX } else { secs as u64 }
        }
        _ => (position / 50).max(5),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_hint_bands() {
        let cases = [
            (-5, 3),
            (0, 3),
            (1, 1),
            (1_000, 1),
            (1_001, 5),
            (5_000, 5),
            (5_001, 10),
            (10_000, 10),
            (10_001, 30),
            (100_000, 30),
            (100_001, 60),
        ];
        for (pos, want) in cases {
            assert_eq!(next_poll_seconds(pos), want, "position {pos}");
        }
    }

    #[test]
    fn poll_hint_follows_the_wait() {
        for (wait, want) in [(0, 1), (3, 1), (8, 2), (40, 10), (119, 29), (120, 30), (86_400, 30)] {
            assert_eq!(poll_seconds_for_wait(wait), want, "wait {wait}");
        }
    }

    #[test]
    fn wait_estimate() {
        assert_eq!(estimated_wait_seconds(100, None), 5);
        assert_eq!(estimated_wait_seconds(1_000, None), 20);
        assert_eq!(estimated_wait_seconds(1_000, Some(0.0)), 20);
        assert_eq!(estimated_wait_seconds(1_000, Some(50.0)), 20);
        assert_eq!(estimated_wait_seconds(101, Some(50.0)), 3);
        assert_eq!(estimated_wait_seconds(0, Some(50.0)), 0);
    }
}
