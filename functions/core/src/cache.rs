//! A small per-instance cache whose entries expire after a fixed time (the event item in
//! tier 1, the registration in tier 2). It is flushed when it grows past a bound, so a flood
//! of made-up keys cannot grow it without limit.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::time::{Clock, SystemClock};

/// Entries kept before the cache is flushed.
pub const MAX_ENTRIES: usize = 10_000;

/// Values younger than `ttl`; a zero `ttl` turns the cache off. Ages are read from a
/// [`Clock`], so tests move time instead of sleeping.
pub struct TtlCache<K, V> {
    ttl_ms: u64,
    clock: Arc<dyn Clock>,
    /// key → (inserted at, in clock milliseconds; value)
    entries: Mutex<HashMap<K, (u64, V)>>,
}

impl<K, V> std::fmt::Debug for TtlCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache").field("ttl_ms", &self.ttl_ms).finish_non_exhaustive()
    }
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    /// A cache on the system clock.
    pub fn new(ttl: Duration) -> Self {
        Self::with_clock(ttl, Arc::new(SystemClock))
    }

    pub fn with_clock(ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        Self { ttl_ms, clock, entries: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, (u64, V)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value, if cached less than `ttl` ago.
    pub fn get(&self, key: &K) -> Option<V> {
        if self.ttl_ms == 0 {
            return None;
        }
        let now = self.clock.now_millis();
        self.lock().get(key).filter(|(at, _)| now.saturating_sub(*at) < self.ttl_ms).map(|(_, v)| v.clone())
    }

    pub fn insert(&self, key: K, value: V) {
        if self.ttl_ms == 0 {
            return;
        }
        let now = self.clock.now_millis();
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, (now, value));
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
        let clock = Arc::new(crate::time::ManualClock::new(1_000));
        let c = TtlCache::with_clock(Duration::from_millis(50), Arc::clone(&clock) as Arc<dyn Clock>);
        c.insert(1, "a");
        clock.advance_millis(49);
        assert_eq!(c.get(&1), Some("a"));
        clock.advance_millis(1);
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
