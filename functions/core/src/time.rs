//! Wall-clock helpers. Library code takes `now` as a parameter so tests can move time.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Milliseconds since the Unix epoch.
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A source of time, so tests can move it.
pub trait Clock: Send + Sync + 'static {
    fn now_millis(&self) -> u64;

    fn now_secs(&self) -> u64 {
        self.now_millis() / 1000
    }
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> u64 {
        now_millis()
    }
}

/// A clock that only moves when told (tests). Millisecond resolution.
#[derive(Debug, Default)]
pub struct ManualClock(std::sync::atomic::AtomicU64);

impl ManualClock {
    /// Starts at `secs` seconds since the epoch.
    pub fn new(secs: u64) -> Self {
        Self(std::sync::atomic::AtomicU64::new(secs * 1000))
    }

    pub fn set(&self, secs: u64) {
        self.0.store(secs * 1000, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn advance(&self, secs: u64) {
        self.advance_millis(secs * 1000);
    }

    pub fn advance_millis(&self, ms: u64) {
        self.0.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}
