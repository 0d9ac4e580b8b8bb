//! A small per-instance cache whose entries expire after a fixed time (the event item in
//! tier 1, the registration in tier 2). It is flushed when it grows past a bound, so a flood
//! of made-up keys cannot grow it without limit.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Entries kept before the cache is flushed.
pub const MAX_ENTRIES: usize = 10_000;

/// Values younger than `ttl`; a zero `ttl` turns the cache off.
#[derive(Debug)]
pub struct TtlCache<K, V> {
    ttl: Duration,
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration) -> Self {
        Self { ttl, entries: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, (Instant, V)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value, if cached less than `ttl` ago.
    pub fn get(&self, key: &K) -> Option<V> {
        if self.ttl.is_zero() {
            return None;
        }
        self.lock().get(key).filter(|(at, _)| at.elapsed() < self.ttl).map(|(_, v)| v.clone())
    }

    pub fn insert(&self, key: K, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, (Instant::now(), value));
    }

    pub fn remove(&self, key: &K) {
        self.lock().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_flushes_and_can_be_off() {
        let c = TtlCache::new(Duration::from_millis(50));
        c.insert(1, "a");
        assert_eq!(c.get(&1), Some("a"));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(c.get(&1), None);
        for i in 0..=MAX_ENTRIES {
            c.insert(i, "x");
        }
        assert!(c.lock().len() <= MAX_ENTRIES);
        c.remove(&MAX_ENTRIES);
        assert_eq!(c.get(&MAX_ENTRIES), None);
        let off = TtlCache::new(Duration::ZERO);
        off.insert(1, "a");
        assert_eq!(off.get(&1), None);
    }
}
