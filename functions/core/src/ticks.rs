//! The one tick loop of the scheduled work (the tier-1 advancer, the tier-2 worker): tick on
//! whole multiples of the period, for a budget (one Lambda invocation, started every minute
//! by EventBridge Scheduler) or forever (`vwr dev`).

use std::future::Future;
use std::time::Duration;

use crate::time::now_millis;

/// Time until the next whole multiple of `every` on the wall clock, so several instances
/// tick together and steps line up with their boundaries.
pub fn until_next_boundary(every: Duration) -> Duration {
    let every_ms = u64::try_from(every.as_millis()).unwrap_or(1000).max(1);
    Duration::from_millis(every_ms - now_millis() % every_ms)
}

/// Runs `tick` at once and then on every boundary of `every`, while the next tick would still
/// start within `budget` (`None`: forever). Returns the number of ticks.
pub async fn run<F, Fut>(every: Duration, budget: Option<Duration>, mut tick: F) -> u64
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let start = tokio::time::Instant::now();
    // Aligned once on the wall clock, then counted on the runtime's clock (which tests pause).
    let mut next = start + until_next_boundary(every);
    let mut ticks = 0;
    loop {
        tick().await;
        ticks += 1;
        // A tick longer than the period skips the boundaries it overran, never bursts.
        let now = tokio::time::Instant::now();
        while next <= now {
            next += every;
        }
        if budget.is_some_and(|b| next.duration_since(start) >= b) {
            return ticks;
        }
        tokio::time::sleep_until(next).await;
        next += every;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn ticks_within_the_budget() {
        let mut n = 0;
        let ticks = run(Duration::from_secs(10), Some(Duration::from_secs(57)), || {
            n += 1;
            async {}
        })
        .await;
        assert_eq!(ticks, n);
        // One tick at once, then one per boundary while the next starts within 57 s: the first
        // boundary falls 0–10 s after the start, so 6 or 7.
        assert!((6..=7).contains(&ticks), "{ticks}");
    }
}
