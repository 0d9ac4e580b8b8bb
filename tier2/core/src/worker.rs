//! The admission worker: for every registered event, one atomic step (cleanup, then admit
//! from the front of the line while active < threshold), then sends pending admission notices.
//! Runs on a timer in `vwr dev` and as a scheduled Lambda. Several workers at once are safe:
//! each step is one script, and notices are taken atomically.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use vwr_core::EventId;
use vwr_core::metrics::{MetricsSink, Unit};
use vwr_core::time::now_millis;

use crate::model::{AdmitReport, PendingNotice};
use crate::notices::{NoticeSink, SQS_BATCH};
use crate::service::Tier2Service;

/// Notices sent per event per tick at most (the rest wait for the next tick).
const MAX_NOTICES_PER_TICK: usize = 3_000;
/// Attempts before a notice is dropped (and counted).
pub const MAX_NOTICE_ATTEMPTS: u32 = 5;

/// What one tick did, summed over events.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TickReport {
    pub events: u64,
    pub admitted: u64,
    pub expired: u64,
    pub evicted: u64,
    pub stale: u64,
    pub notices_sent: u64,
    pub notices_failed: u64,
    pub notices_dropped: u64,
    pub errors: u64,
}

/// The worker.
pub struct Worker {
    svc: Arc<Tier2Service>,
    notices: Arc<dyn NoticeSink>,
    metrics: MetricsSink,
    failures: AtomicU64,
}

impl Worker {
    pub fn new(svc: Arc<Tier2Service>, notices: Arc<dyn NoticeSink>, metrics: MetricsSink) -> Self {
        Self { svc, notices, metrics, failures: AtomicU64::new(0) }
    }

    /// Notice sends that failed since start (each failed attempt counts).
    pub fn notice_failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    fn jti_prefix() -> String {
        use base64::Engine;
        vwr_core::keys::random_bytes(12)
            .map(|b| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
            .unwrap_or_else(|_| format!("w{}", now_millis()))
    }

    /// One pass over all registered events.
    pub async fn tick(&self) -> TickReport {
        let mut report = TickReport::default();
        let events = match self.svc.store().events().await {
            Ok(e) => e,
            Err(e) => {
                report.errors += 1;
                tracing::warn!(event = "tier2.worker_list_failed", error = %e);
                return report;
            }
        };
        for event in events {
            report.events += 1;
            match self.svc.store().admit(&event, &Self::jti_prefix(), self.svc.settings()).await {
                Ok(r) => self.record(&event, &r, &mut report),
                Err(crate::model::StoreError::UnknownEvent) => {}
                Err(e) => {
                    report.errors += 1;
                    tracing::warn!(event = "tier2.admit_failed", event_id = %event, error = %e);
                    continue;
                }
            }
            self.send_notices(&event, &mut report).await;
        }
        report
    }

    fn record(&self, event: &EventId, r: &AdmitReport, report: &mut TickReport) {
        report.admitted += r.admitted.len() as u64;
        report.expired += r.expired;
        report.evicted += r.evicted;
        report.stale += r.stale;
        if !r.admitted.is_empty() || r.expired + r.evicted + r.stale > 0 {
            tracing::info!(
                event = "tier2.worker_step",
                event_id = %event,
                admitted = r.admitted.len(),
                expired = r.expired,
                evicted = r.evicted,
                stale = r.stale,
                waiting = r.waiting,
                active = r.active,
            );
        }
        self.metrics.emit(
            &[("EventId", event.as_str())],
            &[
                ("Admitted", r.admitted.len() as f64, Unit::Count),
                ("QueueLength", r.waiting as f64, Unit::Count),
                ("ActiveUsers", r.active as f64, Unit::Count),
                ("Evicted", (r.evicted + r.expired) as f64, Unit::Count),
                ("StaleRemoved", r.stale as f64, Unit::Count),
                ("OverThresholdAttempts", r.over_threshold as f64, Unit::Count),
            ],
            now_millis(),
        );
    }

    async fn send_notices(&self, event: &EventId, report: &mut TickReport) {
        let mut handled = 0;
        let mut failed_tick = 0u64;
        while handled < MAX_NOTICES_PER_TICK {
            let batch = match self.svc.store().take_notices(event, 100).await {
                Ok(b) if b.is_empty() => break,
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(event = "tier2.notice_take_failed", event_id = %event, error = %e);
                    break;
                }
            };
            handled += batch.len();
            let mut retry: Vec<PendingNotice> = Vec::new();
            for chunk in batch.chunks(SQS_BATCH) {
                let failed = self.notices.send(event, chunk).await;
                report.notices_sent += (chunk.len() - failed.len()) as u64;
                for i in failed {
                    let Some(n) = chunk.get(i) else { continue };
                    failed_tick += 1;
                    let n = PendingNotice { attempts: n.attempts + 1, ..n.clone() };
                    if n.attempts >= MAX_NOTICE_ATTEMPTS {
                        report.notices_dropped += 1;
                        tracing::error!(event = "tier2.notice_dropped", event_id = %event, user = %n.user_id, jti = %n.jti, attempts = n.attempts);
                    } else {
                        retry.push(n);
                    }
                }
            }
            if !retry.is_empty() {
                if let Err(e) = self.svc.store().requeue_notices(event, &retry).await {
                    report.notices_dropped += retry.len() as u64;
                    tracing::error!(event = "tier2.notice_requeue_failed", event_id = %event, count = retry.len(), error = %e);
                }
                // The sink is failing: stop for this tick instead of spinning on the same notices.
                break;
            }
        }
        if failed_tick > 0 {
            self.failures.fetch_add(failed_tick, Ordering::Relaxed);
            report.notices_failed += failed_tick;
            self.metrics.emit(
                &[("EventId", event.as_str())],
                &[("NoticeFailures", failed_tick as f64, Unit::Count)],
                now_millis(),
            );
        }
    }

    /// Ticks every `every` until `budget` is used up (one Lambda invocation).
    pub async fn run_for(&self, every: Duration, budget: Duration) -> TickReport {
        let start = tokio::time::Instant::now();
        let mut total = TickReport::default();
        loop {
            let r = self.tick().await;
            total.events = r.events;
            total.admitted += r.admitted;
            total.notices_sent += r.notices_sent;
            total.notices_failed += r.notices_failed;
            total.errors += r.errors;
            if start.elapsed() + every >= budget {
                return total;
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Ticks forever (local server).
    pub async fn run_forever(self: Arc<Self>, every: Duration) {
        loop {
            self.tick().await;
            tokio::time::sleep(every).await;
        }
    }
}
