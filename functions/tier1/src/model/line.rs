//! The line's arithmetic: per-shard counters, the positions they hand out (shard k of n gives
//! k, k+n, k+2n, …) and the line behind a sealed pre-queue. Pure functions, used by the
//! service, the advancer and the stores.

/// Per-shard counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardCounts {
    /// Regular joins handed out by shard k (index k-1).
    pub issued: Vec<u64>,
    /// Tickets redeemed (first admissions) whose position belongs to shard k.
    pub redeemed: Vec<u64>,
    /// Pre-queue joins taken by shard k.
    pub pre: Vec<u64>,
    /// Admissions the site ended early (`release`) whose position belongs to shard k.
    pub released: Vec<u64>,
}

impl ShardCounts {
    pub fn shards(&self) -> u64 {
        self.issued.len() as u64
    }

    /// Total positions handed out.
    pub fn total_issued(&self) -> u64 {
        self.issued.iter().sum()
    }

    pub fn total_redeemed(&self) -> u64 {
        self.redeemed.iter().sum()
    }

    pub fn total_pre(&self) -> u64 {
        self.pre.iter().sum()
    }

    pub fn total_released(&self) -> u64 {
        self.released.iter().sum()
    }

    /// The highest position handed out (0 if none).
    pub fn highest(&self) -> u64 {
        let n = self.shards();
        self.issued
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| position_of(i as u64 + 1, *c, n))
            .max()
            .unwrap_or(0)
    }

    /// Positions handed out and not yet served by `serving`.
    pub fn waiting(&self, serving: u64) -> u64 {
        let n = self.shards();
        self.issued
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let k = i as u64 + 1;
                let served = if serving < k { 0 } else { ((serving - k) / n + 1).min(*c) };
                c - served
            })
            .sum()
    }
}

/// The figures of an event's line once its pre-queue of `p` is sealed (`p` = 0 without one):
/// pre-queue positions are 1..=p, the regular join j is at `p + j`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub counts: &'a ShardCounts,
    pub p: u64,
}

impl Line<'_> {
    /// Positions handed out, the pre-queue included.
    pub fn issued(&self) -> u64 {
        self.p + self.counts.total_issued()
    }

    /// Highest position handed out (0 if none): the advancer's ceiling.
    pub fn highest(&self) -> u64 {
        match self.counts.highest() {
            0 => self.p,
            h => self.p + h,
        }
    }

    /// Positions handed out and not yet served by `serving`.
    pub fn waiting(&self, serving: u64) -> u64 {
        self.p.saturating_sub(serving) + self.counts.waiting(serving.saturating_sub(self.p))
    }
}

/// Position of the `count`-th ticket of shard `k` (1-based) of `n`: k, k+n, k+2n, …
pub fn position_of(k: u64, count: u64, n: u64) -> u64 {
    (count - 1) * n + k
}

/// Shard (1-based) that hands out `position` among `n`.
pub fn shard_of(position: u64, n: u64) -> u64 {
    (position - 1) % n + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_positions_interleave() {
        assert_eq!((1..=3).map(|c| position_of(2, c, 4)).collect::<Vec<_>>(), vec![2, 6, 10]);
        for p in 1..100 {
            let k = shard_of(p, 4);
            assert!((1..=4).contains(&k));
            assert_eq!((p - k) % 4, 0);
        }
    }

    #[test]
    fn counts_highest_and_waiting() {
        // shards: 1 → 1,4,7 ; 2 → 2 ; 3 → none
        let c = ShardCounts {
            issued: vec![3, 1, 0],
            redeemed: vec![0, 0, 0],
            pre: vec![0, 0, 0],
            released: vec![0, 0, 0],
        };
        assert_eq!(c.total_issued(), 4);
        assert_eq!(c.highest(), 7);
        assert_eq!(c.waiting(0), 4);
        assert_eq!(c.waiting(1), 3);
        assert_eq!(c.waiting(2), 2);
        assert_eq!(c.waiting(4), 1);
        assert_eq!(c.waiting(7), 0);
        assert_eq!(c.waiting(100), 0);
        assert_eq!(
            ShardCounts { issued: vec![0], redeemed: vec![0], pre: vec![0], released: vec![0] }.highest(),
            0
        );
        // With a sealed pre-queue of 5 in front: positions 1..=5, then 6, 8, 9, 11, 12, …
        let line = Line { counts: &c, p: 5 };
        assert_eq!(line.issued(), 9);
        assert_eq!(line.highest(), 12);
        assert_eq!(line.waiting(0), 9);
        assert_eq!(line.waiting(5), 4);
        assert_eq!(line.waiting(6), 3);
        assert_eq!(line.waiting(12), 0);
        let empty =
            ShardCounts { issued: vec![0, 0], redeemed: vec![0, 0], pre: vec![2, 3], released: vec![0, 0] };
        assert_eq!(Line { counts: &empty, p: 5 }.highest(), 5);
        assert_eq!(Line { counts: &empty, p: 0 }.highest(), 0);
    }
}
