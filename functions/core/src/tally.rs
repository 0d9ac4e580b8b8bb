//! Counts kept per event and minute in an instance, written to a store at most once a minute
//! (the report after the sale: docs/operate.md#the-report-after-the-sale). Both tiers count
//! with it, each its own figures ([`Counts`]).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::EventId;

/// An instance adds its counts to the store at most this often.
pub const FLUSH_EVERY_SECS: u64 = 60;
/// How long the stored minutes are kept: 90 days.
pub const KEEP_SECS: u64 = 90 * 86_400;
/// Event-minutes an instance keeps at most between flushes: beyond, new ones are dropped (and
/// counted in [`Tally::dropped`]) rather than growing without bound while a store is down.
pub const MAX_PENDING: usize = 10_000;

/// Figures of one event in one minute that two instances' copies add up to.
pub trait Counts: Default + Clone + PartialEq {
    /// Adds `other`'s figures to these.
    fn merge(&mut self, other: &Self);

    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Stored minutes kept in memory, by event: what the in-memory stores hold where DynamoDB or
/// Redis keep the report. Adding nothing stores nothing, as those do.
#[derive(Debug)]
pub struct Minutes<C> {
    by_event: BTreeMap<EventId, BTreeMap<u64, C>>,
}

impl<C> Default for Minutes<C> {
    fn default() -> Self {
        Self { by_event: BTreeMap::new() }
    }
}

impl<C: Counts> Minutes<C> {
    /// Adds `counts` to `event`'s `minute`.
    pub fn add(&mut self, event: &EventId, minute: u64, counts: &C) {
        if !counts.is_empty() {
            self.by_event.entry(event.clone()).or_default().entry(minute).or_default().merge(counts);
        }
    }

    /// Every stored minute of `event`, by minute.
    pub fn of(&self, event: &EventId) -> Vec<(u64, C)> {
        self.by_event.get(event).map(|m| m.iter().map(|(k, v)| (*k, v.clone())).collect()).unwrap_or_default()
    }
}

/// The unix minute of a time in seconds.
pub fn minute_of(secs: u64) -> u64 {
    secs / 60
}

/// Counts taken out of a [`Tally`] to be written: (event, minute) → counts.
pub type Batch<C> = Vec<((EventId, u64), C)>;

/// An instance's counts not yet in the store, by event and minute.
#[derive(Debug, Default)]
pub struct Tally<C> {
    inner: Mutex<State<C>>,
}

#[derive(Debug, Default)]
struct State<C> {
    pending: BTreeMap<(EventId, u64), C>,
    flushed_at: u64,
    dropped: u64,
}

impl<C: Counts> Tally<C> {
    pub fn new(now: u64) -> Self {
        Self { inner: Mutex::new(State { pending: BTreeMap::new(), flushed_at: now, dropped: 0 }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<C>> {
        // Counting never leaves the map half-changed: recover from a poisoned lock.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts something of `event` at `now` (unix seconds).
    pub fn record(&self, event: &EventId, now: u64, f: impl FnOnce(&mut C)) {
        let mut s = self.lock();
        let key = (event.clone(), minute_of(now));
        if s.pending.len() >= MAX_PENDING && !s.pending.contains_key(&key) {
            s.dropped += 1;
            return;
        }
        f(s.pending.entry(key).or_default());
    }

    /// Counts dropped because [`MAX_PENDING`] event-minutes were already waiting.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Everything pending, when a minute has passed since the last flush (else nothing).
    pub fn take_due(&self, now: u64) -> Batch<C> {
        let mut s = self.lock();
        if s.pending.is_empty() || now < s.flushed_at.saturating_add(FLUSH_EVERY_SECS) {
            return Vec::new();
        }
        s.flushed_at = now;
        std::mem::take(&mut s.pending).into_iter().collect()
    }

    /// Everything pending, now.
    pub fn take_all(&self, now: u64) -> Batch<C> {
        let mut s = self.lock();
        s.flushed_at = now;
        std::mem::take(&mut s.pending).into_iter().collect()
    }

    /// Writes every item of `batch` with `write`; those that fail go back to the tally for the
    /// next flush (one failing item holds back no other). Answers the first failure.
    pub async fn write_batch<E, F, Fut>(&self, batch: Batch<C>, mut write: F) -> Result<(), E>
    where
        F: FnMut(EventId, u64, C) -> Fut,
        Fut: std::future::Future<Output = Result<(), E>>,
    {
        let mut failed = Vec::new();
        let mut first = None;
        for ((event, minute), counts) in batch {
            // Owned copies: the write's future may not borrow what a failure puts back.
            if let Err(e) = write(event.clone(), minute, counts.clone()).await {
                first.get_or_insert(e);
                failed.push(((event, minute), counts));
            }
        }
        match first {
            None => Ok(()),
            Some(e) => {
                self.put_back(failed);
                Err(e)
            }
        }
    }

    /// Counts a failed write did not store: pending again, for the next flush.
    pub fn put_back(&self, batch: Batch<C>) {
        let mut s = self.lock();
        for (key, counts) in batch {
            if s.pending.len() >= MAX_PENDING && !s.pending.contains_key(&key) {
                s.dropped += 1;
                continue;
            }
            s.pending.entry(key).or_default().merge(&counts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Clone, PartialEq)]
    struct N(u64);
    impl Counts for N {
        fn merge(&mut self, other: &Self) {
            self.0 += other.0;
        }
    }

    #[test]
    fn a_tally_flushes_at_most_once_a_minute_and_keeps_what_a_failed_write_returns() {
        let e = EventId::parse("e1").unwrap();
        let t: Tally<N> = Tally::new(1_000);
        t.record(&e, 1_000, |m| m.0 += 1);
        assert!(t.take_due(1_059).is_empty(), "not a minute yet");
        t.record(&e, 1_059, |m| m.0 += 1);
        let batch = t.take_due(1_060);
        assert_eq!(batch.len(), 2, "minutes 16 and 17: {batch:?}");
        t.put_back(batch);
        t.record(&e, 1_061, |m| m.0 += 5);
        assert!(t.take_due(1_100).is_empty(), "flushed at 1,060");
        let all = t.take_all(1_100);
        assert_eq!((all.len(), all.iter().map(|(_, c)| c.0).sum::<u64>()), (2, 7));
        assert!(t.take_all(1_101).is_empty());
        assert!(N::default().is_empty());
    }

    #[tokio::test]
    async fn a_failed_write_puts_back_its_item_alone() {
        let t: Tally<N> = Tally::new(0);
        for id in ["a", "b", "c"] {
            t.record(&EventId::parse(id).unwrap(), 0, |m| m.0 += 1);
        }
        let written = std::sync::Mutex::new(Vec::new());
        let batch = t.take_all(0);
        let r = t
            .write_batch(batch, |e, _, _| {
                let fail = e.as_str() == "b";
                if !fail {
                    written.lock().unwrap().push(e.as_str().to_owned());
                }
                async move { if fail { Err("down") } else { Ok(()) } }
            })
            .await;
        assert_eq!(r, Err("down"));
        assert_eq!(*written.lock().unwrap(), ["a", "c"], "the rest were written");
        let back = t.take_all(1);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0.0.as_str(), "b");
    }

    #[test]
    fn a_tally_keeps_at_most_max_pending_event_minutes() {
        let t: Tally<N> = Tally::new(0);
        for i in 0..MAX_PENDING + 5 {
            let e = EventId::parse(&format!("e{i}")).unwrap();
            t.record(&e, 0, |m| m.0 += 1);
        }
        assert_eq!(t.dropped(), 5);
        // A minute already pending still counts.
        t.record(&EventId::parse("e0").unwrap(), 0, |m| m.0 += 1);
        assert_eq!(t.dropped(), 5);
        assert_eq!(t.take_all(1).len(), MAX_PENDING);
    }
}
