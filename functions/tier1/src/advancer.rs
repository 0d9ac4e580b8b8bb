//! The advancer loop: opens the pre-queue, seals it and opens the sale on time, closes at
//! `closeAt` (docs/lifecycle.md#states), and steps the serving counter of open events. In
//! AWS, EventBridge Scheduler invokes it every minute and it ticks until just before the
//! invocation's deadline (6 steps of a 10 s event per invocation, and the open within a
//! second of `openAt`); in `vwr dev` it ticks forever. Overlapping runs are safe: each step is a conditional write.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use vwr_core::metrics::{MetricsSink, Unit};
use vwr_core::time::now_millis;

use crate::service::{StepOutcome, Tier1Service};

/// Totals of one run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub ticks: u64,
    pub advanced: u64,
    pub served: u64,
    pub errors: u64,
    /// Event-steps that found the stored step in the future ([`StepOutcome::Stuck`]).
    pub stuck: u64,
    /// State changes made (pre-queue, open, close at `closeAt`).
    pub transitions: u64,
    /// Event-steps skipped because the advancer was held (health gate or alarm).
    pub held: u64,
}

impl RunSummary {
    fn add(&mut self, t: &Self) {
        self.ticks += t.ticks;
        self.advanced += t.advanced;
        self.served += t.served;
        self.errors += t.errors;
        self.stuck += t.stuck;
        self.transitions += t.transitions;
        self.held += t.held;
    }
}

/// Metrics of one step of an automatically advancing event. `Served` is emitted even when 0
/// and `QueueLength` at every step, so the "line stalled" alarm (waiting > 0 and nothing
/// served for 5 minutes, terraform/modules/observability) sees a stalled line.
fn emit_step(
    metrics: MetricsSink,
    event: &vwr_core::EventId,
    served: u64,
    serving: Option<u64>,
    waiting: u64,
) {
    let mut values =
        vec![("Served", served as f64, Unit::Count), ("QueueLength", waiting as f64, Unit::Count)];
    if let Some(s) = serving {
        values.push(("ServingCounter", s as f64, Unit::Count));
    }
    metrics.emit(&[("EventId", event.as_str())], &values, now_millis());
}

/// One pass over the active events; logs and emits metrics per event.
pub async fn tick(svc: &Tier1Service, metrics: MetricsSink, summary: &mut RunSummary) {
    summary.ticks += 1;
    let outcomes = match svc.advance_due().await {
        Ok(o) => o,
        Err(e) => {
            summary.errors += 1;
            tracing::warn!(event = "tier1.advancer_list_failed", error = %e);
            return;
        }
    };
    for o in outcomes {
        match o {
            StepOutcome::Advanced { event, step, from, to, waiting } => {
                summary.advanced += 1;
                summary.served += to - from;
                tracing::info!(event = "tier1.advanced", event_id = %event, step, from, to, waiting);
                emit_step(metrics, &event, to - from, Some(to), waiting);
            }
            StepOutcome::Idle { event, step, waiting, automatic } => {
                tracing::debug!(event = "tier1.advance_idle", event_id = %event, step, waiting);
                if automatic {
                    emit_step(metrics, &event, 0, None, waiting);
                }
            }
            StepOutcome::Stuck { event, step, last_step_at } => {
                summary.stuck += 1;
                tracing::warn!(
                    event = "tier1.advancer_stuck",
                    event_id = %event,
                    step,
                    last_step_at,
                    "the event's last step lies in the future; it cannot advance until then"
                );
                metrics.emit(
                    &[("EventId", event.as_str())],
                    &[("AdvancerStuck", 1.0, Unit::Count)],
                    now_millis(),
                );
            }
            StepOutcome::Held { event, by, reason } => {
                summary.held += 1;
                tracing::info!(event = "tier1.advancer_held", event_id = %event, by = ?by, reason = %reason);
                metrics.emit(
                    &[("EventId", event.as_str())],
                    &[("AdvancerHeld", 1.0, Unit::Count)],
                    now_millis(),
                );
            }
            StepOutcome::Transition { event, from, to } => {
                summary.transitions += 1;
                tracing::info!(event = "tier1.advancer_transition", event_id = %event, from = from.as_str(), to = to.as_str());
            }
            StepOutcome::AlreadyDone { .. } | StepOutcome::NotDue { .. } => {}
        }
    }
}

/// Ticks on whole `tick` boundaries for at most `budget` (one Lambda invocation), or forever
/// (`None`, the local server).
pub async fn run(
    svc: &Tier1Service,
    tick_every: Duration,
    budget: Option<Duration>,
    metrics: MetricsSink,
) -> RunSummary {
    let total = Mutex::new(RunSummary::default());
    vwr_core::ticks::run(tick_every, budget, || async {
        let mut one = RunSummary::default();
        tick(svc, metrics, &mut one).await;
        total.lock().unwrap_or_else(|p| p.into_inner()).add(&one);
    })
    .await;
    total.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// One scheduled invocation (the advancer Lambda): heals a missed edge-configuration update
/// (a no-op without the edge list), ticks on whole `tick_every` boundaries for `budget`,
/// logs the totals (`tier1.advancer_run`) and answers them.
pub async fn scheduled(
    svc: &Tier1Service,
    tick_every: Duration,
    budget: Duration,
    metrics: MetricsSink,
) -> serde_json::Value {
    if let Err(e) = svc.reconcile_edge().await {
        tracing::warn!(event = "tier1.edge_reconcile_failed", error = %e);
    }
    let s = run(svc, tick_every, Some(budget), metrics).await;
    // The places served this run, in the report before the instance may be frozen
    // (docs/operate.md#the-report-after-the-sale); logged inside when it fails.
    let _ = svc.flush_report().await;
    tracing::info!(
        event = "tier1.advancer_run",
        ticks = s.ticks,
        advanced = s.advanced,
        served = s.served,
        errors = s.errors,
        stuck = s.stuck
    );
    serde_json::json!({
        "ticks": s.ticks, "advanced": s.advanced, "served": s.served, "errors": s.errors, "stuck": s.stuck
    })
}

/// Ticks forever (local server).
pub async fn run_forever(svc: Arc<Tier1Service>, tick_every: Duration, metrics: MetricsSink) {
    run(&svc, tick_every, None, metrics).await;
}
