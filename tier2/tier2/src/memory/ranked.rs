//! An ordered set with rank queries (like a Redis sorted set) for the in-memory store:
//! sorted chunks, so insert/remove cost O(chunk) and rank O(chunks + log chunk); and [`ZSet`], the
//! sorted set of members with their scores that the store's keys are made of.

use std::collections::HashMap;

const MAX_CHUNK: usize = 1024;

/// Members ordered by `(score, member)`, as Redis orders a sorted set.
#[derive(Debug, Default, Clone)]
pub struct RankedSet {
    chunks: Vec<Vec<(u64, String)>>,
    len: usize,
}

impl RankedSet {
    pub fn len(&self) -> usize {
        self.len
    }

    fn chunk_for(&self, key: &(u64, String)) -> usize {
        // First chunk whose last element is >= key (or the last chunk).
        let i = self.chunks.partition_point(|c| c.last().is_some_and(|l| l < key));
        i.min(self.chunks.len().saturating_sub(1))
    }

    /// Inserts; the caller guarantees the member is not present.
    pub fn insert(&mut self, score: u64, member: String) {
        let key = (score, member);
        if self.chunks.is_empty() {
            self.chunks.push(vec![key]);
            self.len = 1;
            return;
        }
        let ci = self.chunk_for(&key);
        let chunk = &mut self.chunks[ci];
        let at = chunk.partition_point(|e| e < &key);
        chunk.insert(at, key);
        self.len += 1;
        if chunk.len() > MAX_CHUNK {
            let tail = chunk.split_off(MAX_CHUNK / 2);
            self.chunks.insert(ci + 1, tail);
        }
    }

    /// Removes the entry; returns whether it was there.
    pub fn remove(&mut self, score: u64, member: &str) -> bool {
        if self.chunks.is_empty() {
            return false;
        }
        let key = (score, member.to_owned());
        let ci = self.chunk_for(&key);
        let chunk = &mut self.chunks[ci];
        match chunk.binary_search(&key) {
            Ok(at) => {
                chunk.remove(at);
                if chunk.is_empty() {
                    self.chunks.remove(ci);
                }
                self.len -= 1;
                true
            }
            Err(_) => false,
        }
    }

    /// 0-based rank of the entry, if present.
    pub fn rank(&self, score: u64, member: &str) -> Option<usize> {
        if self.chunks.is_empty() {
            return None;
        }
        let key = (score, member.to_owned());
        let ci = self.chunk_for(&key);
        let before: usize = self.chunks[..ci].iter().map(Vec::len).sum();
        self.chunks[ci].binary_search(&key).ok().map(|i| before + i)
    }

    /// Removes and returns up to `n` lowest entries.
    pub fn pop_min(&mut self, n: usize) -> Vec<(u64, String)> {
        let mut out = Vec::with_capacity(n.min(self.len));
        while out.len() < n && !self.chunks.is_empty() {
            let take = (n - out.len()).min(self.chunks[0].len());
            out.extend(self.chunks[0].drain(..take));
            if self.chunks[0].is_empty() {
                self.chunks.remove(0);
            }
        }
        self.len -= out.len();
        out
    }

    /// Number of entries with score ≤ `max`.
    pub fn count_le(&self, max: u64) -> usize {
        let full = self.chunks.partition_point(|c| c.last().is_some_and(|l| l.0 <= max));
        let before: usize = self.chunks[..full].iter().map(Vec::len).sum();
        before + self.chunks.get(full).map_or(0, |c| c.partition_point(|e| e.0 <= max))
    }

    /// Entries with score ≤ `max`, lowest first, at most `limit`.
    pub fn up_to(&self, max: u64, limit: usize) -> Vec<(u64, String)> {
        self.iter().take_while(|(s, _)| *s <= max).take(limit).cloned().collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(u64, String)> {
        self.chunks.iter().flatten()
    }

    /// The entry at 0-based rank `i`, if any.
    pub fn nth(&self, mut i: usize) -> Option<&(u64, String)> {
        for c in &self.chunks {
            if i < c.len() {
                return c.get(i);
            }
            i -= c.len();
        }
        None
    }
}

/// A sorted set: members with scores, ordered by (score, member).
#[derive(Default)]
pub(crate) struct ZSet {
    pub(crate) order: RankedSet,
    pub(crate) scores: HashMap<String, u64>,
}

impl ZSet {
    pub(crate) fn score(&self, m: &str) -> Option<u64> {
        self.scores.get(m).copied()
    }

    pub(crate) fn add(&mut self, score: u64, m: &str) {
        if let Some(old) = self.scores.insert(m.to_owned(), score) {
            self.order.remove(old, m);
        }
        self.order.insert(score, m.to_owned());
    }

    pub(crate) fn add_nx(&mut self, score: u64, m: &str) {
        if !self.scores.contains_key(m) {
            self.add(score, m);
        }
    }

    pub(crate) fn rem(&mut self, m: &str) -> bool {
        match self.scores.remove(m) {
            Some(s) => self.order.remove(s, m),
            None => false,
        }
    }

    pub(crate) fn rank(&self, m: &str) -> Option<usize> {
        self.order.rank(self.score(m)?, m)
    }

    pub(crate) fn len(&self) -> u64 {
        self.order.len() as u64
    }

    /// Members with score < `max` (exclusive) when `exclusive`, else ≤ `max`; at most `limit`.
    pub(crate) fn below(&self, max: u64, exclusive: bool, limit: usize) -> Vec<String> {
        let bound = if exclusive { max.saturating_sub(1) } else { max };
        if exclusive && max == 0 {
            return Vec::new();
        }
        self.order.up_to(bound, limit).into_iter().map(|(_, m)| m).collect()
    }

    pub(crate) fn count_above(&self, min: u64) -> u64 {
        (self.order.len() - self.order.count_le(min)) as u64
    }

    pub(crate) fn max_score(&self) -> Option<u64> {
        self.order.iter().last().map(|(s, _)| *s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_sorted_vec(ops in proptest::collection::vec((0u8..4, 0u64..50, 0u8..30), 1..3000)) {
            let mut set = RankedSet::default();
            let mut model: Vec<(u64, String)> = Vec::new();
            for (op, score, m) in ops {
                let member = format!("u{m}");
                let present = model.iter().position(|(_, mm)| *mm == member);
                match op {
                    0 if present.is_none() => {
                        set.insert(score, member.clone());
                        model.push((score, member));
                        model.sort();
                    }
                    1 if present.is_some() => {
                        let (s, mm) = model.remove(present.unwrap_or_default());
                        prop_assert!(set.remove(s, &mm));
                    }
                    2 => {
                        let got = set.pop_min(2);
                        let want: Vec<_> = model.drain(..2.min(model.len())).collect();
                        prop_assert_eq!(got, want);
                    }
                    _ => {}
                }
                prop_assert_eq!(set.len(), model.len());
                for (i, (s, mm)) in model.iter().enumerate() {
                    prop_assert_eq!(set.rank(*s, mm), Some(i));
                }
            }
        }
    }

    #[test]
    fn large_sets_split_into_chunks() {
        let mut set = RankedSet::default();
        for i in (0..10_000u64).rev() {
            set.insert(i, format!("m{i}"));
        }
        assert_eq!(set.rank(5_000, "m5000"), Some(5_000));
        assert_eq!(set.pop_min(3).iter().map(|e| e.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(set.up_to(5, 10).len(), 3);
        assert_eq!(set.count_le(5), 3);
        assert_eq!(set.count_le(2_000), 1_998);
        assert_eq!(set.count_le(u64::MAX), 9_997);
        assert!(set.remove(9_999, "m9999"));
        assert!(!set.remove(9_999, "m9999"));
        assert_eq!(set.len(), 9_996);
    }
}
