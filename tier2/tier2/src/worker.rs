//! The admission worker. Each tick: (1) for every event in the index, one atomic step
//! (cleanup, then admit from the front of the line while slots are free), several events in
//! flight at once; (2) idle events leave the index; (3) only then, admission notices, within
//! a time budget and behind a circuit breaker. SQS trouble therefore never delays an
//! admission (docs/adr/0010-admission-notices.md). Runs on a timer in `vwr dev` and as a
//! scheduled Lambda. Several workers at once are safe: each step is one script, and notices
//! are leased, not popped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use vwr_core::EventId;
use vwr_core::metrics::{MetricsSink, Unit};
use vwr_core::time::{Clock, SystemClock};

use crate::model::{AdmitReport, PendingNotice, StoreError};
use crate::notices::{NoticeSink, SQS_BATCH};
use crate::service::Tier2Service;
use crate::store::Retire;

/// Notices handled per event per tick at most (the rest wait for the next tick).
const MAX_NOTICES_PER_TICK: usize = 3_000;
/// Notices taken from the store at once.
const TAKE_BATCH: usize = 100;
/// Attempts before a notice is dropped (and counted).
pub const MAX_NOTICE_ATTEMPTS: u32 = 5;
/// Events whose admission step is in flight at once (pipelined on one Redis connection).
const ADMIT_CONCURRENCY: usize = 16;

/// How the worker sends notices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoticePolicy {
    /// Most time one tick spends sending notices, after all admissions are done.
    pub budget: Duration,
    /// After a failed send, no sending at all for this long (the circuit is open); then one
    /// attempt decides whether it closes again.
    pub cooldown: Duration,
}

impl Default for NoticePolicy {
    fn default() -> Self {
        Self { budget: Duration::from_secs(5), cooldown: Duration::from_secs(30) }
    }
}

/// What one tick did, summed over events.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TickReport {
    pub events: u64,
    pub admitted: u64,
    pub expired: u64,
    pub evicted: u64,
    pub stale: u64,
    /// Admissions given back to users a timeout had evicted (docs/invariants.md#23).
    pub restored: u64,
    pub retired: u64,
    pub notices_sent: u64,
    pub notices_failed: u64,
    pub notices_dropped: u64,
    /// Ticks whose notices were skipped because the circuit was open.
    pub notices_skipped: u64,
    pub errors: u64,
}

/// How one event's notices went.
enum Sent {
    Done,
    /// A send failed: stop sending for this tick and open the circuit.
    Failed,
    /// The tick's budget ran out.
    OutOfTime,
}

/// The worker.
pub struct Worker {
    svc: Arc<Tier2Service>,
    notices: Arc<dyn NoticeSink>,
    metrics: MetricsSink,
    failures: AtomicU64,
    clock: Arc<dyn Clock>,
    policy: NoticePolicy,
    /// Until when (clock milliseconds) notices are not sent.
    open_until_ms: Mutex<u64>,
}

impl Worker {
    pub fn new(svc: Arc<Tier2Service>, notices: Arc<dyn NoticeSink>, metrics: MetricsSink) -> Self {
        Self {
            svc,
            notices,
            metrics,
            failures: AtomicU64::new(0),
            clock: Arc::new(SystemClock),
            policy: NoticePolicy::default(),
            open_until_ms: Mutex::new(0),
        }
    }

    /// The clock of the circuit breaker (tests move it).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn with_notice_policy(mut self, policy: NoticePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Notice sends that failed since start (each failed attempt counts).
    pub fn notice_failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    fn jti_prefix(&self) -> String {
        use base64::Engine;
        vwr_core::keys::random_bytes(12)
            .map(|b| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
            .unwrap_or_else(|_| format!("w{}", self.clock.now_millis()))
    }

    fn open_until(&self) -> std::sync::MutexGuard<'_, u64> {
        self.open_until_ms.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One pass over the events in the index.
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
        report.events = events.len() as u64;
        let settings = *self.svc.settings();
        let steps: Vec<(EventId, Result<AdmitReport, StoreError>)> = stream::iter(events.iter().cloned())
            .map(|event| async move {
                let r = self.svc.store().admit(&event, &self.jti_prefix(), &settings).await;
                (event, r)
            })
            .buffer_unordered(ADMIT_CONCURRENCY)
            .collect()
            .await;
        let mut idle = Vec::new();
        for (event, r) in steps {
            match r {
                Ok(r) => {
                    self.record(&event, &r, &mut report);
                    if r.waiting == 0 && r.active == 0 && r.idle_ms >= settings.retire_idle_ms {
                        idle.push(event);
                    }
                }
                Err(StoreError::UnknownEvent) => {}
                Err(e) => {
                    report.errors += 1;
                    tracing::warn!(event = "tier2.admit_failed", event_id = %event, error = %e);
                }
            }
        }
        for event in idle {
            match self.svc.store().retire(&event, settings.retire_idle_ms).await {
                Ok(Retire::Retired) => {
                    report.retired += 1;
                    tracing::info!(event = "tier2.event_retired", event_id = %event);
                }
                Ok(Retire::Busy) => {}
                Err(e) => tracing::warn!(event = "tier2.retire_failed", event_id = %event, error = %e),
            }
        }
        self.send_all_notices(&events, &mut report).await;
        self.svc.flush_report_due().await;
        report
    }

    fn record(&self, event: &EventId, r: &AdmitReport, report: &mut TickReport) {
        // An event with nobody in it and nothing done adds nothing (an idle event stays indexed
        // for an hour: no minutes of zeros for it).
        let step = crate::report::Tier2Minute::of_step(r);
        if step.waiting_sum
            + step.active_sum
            + step.over_threshold
            + step.evicted
            + step.expired
            + step.admitted
            > 0
        {
            self.svc.count(event, |m| vwr_core::tally::Counts::merge(m, &step));
        }
        report.admitted += r.admitted.len() as u64;
        report.expired += r.expired;
        report.evicted += r.evicted;
        report.stale += r.stale;
        report.restored += r.restored;
        report.notices_dropped += r.notices_dropped;
        if !r.admitted.is_empty() || r.expired + r.evicted + r.stale + r.restored > 0 {
            tracing::info!(
                event = "tier2.worker_step",
                event_id = %event,
                admitted = r.admitted.len(),
                expired = r.expired,
                evicted = r.evicted,
                stale = r.stale,
                restored = r.restored,
                waiting = r.waiting,
                active = r.active,
            );
        }
        if r.notices_dropped > 0 {
            tracing::error!(event = "tier2.notices_trimmed", event_id = %event, dropped = r.notices_dropped,
                "the pending-notice list was full; the oldest notices were dropped");
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
                ("NoticesDropped", r.notices_dropped as f64, Unit::Count),
            ],
            self.clock.now_millis(),
        );
    }

    async fn send_all_notices(&self, events: &[EventId], report: &mut TickReport) {
        let now = self.clock.now_millis();
        if *self.open_until() > now {
            report.notices_skipped += 1;
            return;
        }
        let deadline = tokio::time::Instant::now() + self.policy.budget;
        for event in events {
            match self.send_notices(event, deadline, report).await {
                Sent::Done => {}
                Sent::OutOfTime => break,
                Sent::Failed => {
                    let cooldown = u64::try_from(self.policy.cooldown.as_millis()).unwrap_or(u64::MAX);
                    *self.open_until() = self.clock.now_millis().saturating_add(cooldown);
                    tracing::warn!(
                        event = "tier2.notices_circuit_open",
                        event_id = %event,
                        cooldown_ms = cooldown,
                        "a notice send failed; no sends until the cool-down ends (admissions go on)"
                    );
                    break;
                }
            }
        }
    }

    async fn send_notices(
        &self,
        event: &EventId,
        deadline: tokio::time::Instant,
        report: &mut TickReport,
    ) -> Sent {
        let lease = self.svc.settings().notice_lease_ms;
        let mut handled = 0;
        let mut failed_tick = 0u64;
        let mut outcome = Sent::Done;
        while handled < MAX_NOTICES_PER_TICK && matches!(outcome, Sent::Done) {
            let batch = match self.svc.store().take_notices(event, TAKE_BATCH, lease).await {
                Ok(b) if b.is_empty() => break,
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(event = "tier2.notice_take_failed", event_id = %event, error = %e);
                    break;
                }
            };
            handled += batch.len();
            let mut done: Vec<PendingNotice> = Vec::with_capacity(batch.len());
            let mut retry: Vec<PendingNotice> = Vec::new();
            for chunk in batch.chunks(SQS_BATCH) {
                if !matches!(outcome, Sent::Done) {
                    // Not tried this tick: back to the list as they were.
                    done.extend(chunk.iter().cloned());
                    retry.extend(chunk.iter().cloned());
                    continue;
                }
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let failed: Vec<usize> = if left.is_zero() {
                    outcome = Sent::OutOfTime;
                    done.extend(chunk.iter().cloned());
                    retry.extend(chunk.iter().cloned());
                    continue;
                } else {
                    match tokio::time::timeout(left, self.notices.send(event, chunk)).await {
                        Ok(f) => f,
                        Err(_) => (0..chunk.len()).collect(),
                    }
                };
                report.notices_sent += (chunk.len() - failed.len()) as u64;
                for (i, n) in chunk.iter().enumerate() {
                    done.push(n.clone());
                    if !failed.contains(&i) {
                        continue;
                    }
                    failed_tick += 1;
                    let again = PendingNotice { attempts: n.attempts + 1, ..n.clone() };
                    if again.attempts >= MAX_NOTICE_ATTEMPTS {
                        report.notices_dropped += 1;
                        tracing::error!(event = "tier2.notice_dropped", event_id = %event, user = %n.user_id, jti = %n.jti, attempts = again.attempts);
                    } else {
                        retry.push(again);
                    }
                }
                if !failed.is_empty() {
                    outcome = Sent::Failed;
                }
            }
            if let Err(e) = self.svc.store().ack_notices(event, &done, &retry).await {
                // Unacknowledged notices come back when their lease ends: nothing is lost.
                tracing::warn!(event = "tier2.notice_ack_failed", event_id = %event, error = %e);
                break;
            }
        }
        if failed_tick > 0 {
            self.failures.fetch_add(failed_tick, Ordering::Relaxed);
            report.notices_failed += failed_tick;
            self.metrics.emit(
                &[("EventId", event.as_str())],
                &[("NoticeFailures", failed_tick as f64, Unit::Count)],
                self.clock.now_millis(),
            );
        }
        outcome
    }

    /// Ticks on whole `every` boundaries for at most `budget` (one Lambda invocation), or
    /// forever (`None`, the local server).
    pub async fn run(&self, every: Duration, budget: Option<Duration>) -> TickReport {
        let total = Mutex::new(TickReport::default());
        vwr_core::ticks::run(every, budget, || async {
            let r = self.tick().await;
            let mut t = total.lock().unwrap_or_else(|p| p.into_inner());
            t.events = r.events;
            t.admitted += r.admitted;
            t.retired += r.retired;
            t.notices_sent += r.notices_sent;
            t.notices_failed += r.notices_failed;
            t.notices_dropped += r.notices_dropped;
            t.errors += r.errors;
        })
        .await;
        total.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// One scheduled invocation (the worker Lambda): ticks on whole `every` boundaries for
    /// `budget`, logs the totals (`tier2.worker_run`) and answers them.
    pub async fn scheduled(&self, every: Duration, budget: Duration) -> serde_json::Value {
        let r = self.run(every, Some(budget)).await;
        // This run's counts in the report before the instance may be frozen; logged inside
        // when it fails.
        let _ = self.svc.flush_report().await;
        tracing::info!(
            event = "tier2.worker_run",
            events = r.events,
            admitted = r.admitted,
            notices_sent = r.notices_sent,
            notices_failed = r.notices_failed,
            errors = r.errors
        );
        serde_json::json!({
            "admitted": r.admitted, "noticesSent": r.notices_sent, "noticesFailed": r.notices_failed, "errors": r.errors
        })
    }

    /// Ticks forever (local server).
    pub async fn run_forever(self: Arc<Self>, every: Duration) {
        self.run(every, None).await;
    }
}
