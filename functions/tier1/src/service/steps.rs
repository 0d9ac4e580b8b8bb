//! The advancer's work, called by `advancer` (the scheduled Lambda and `vwr dev`'s loop): each
//! event's due transition (pre-queue, open, close at `closeAt`), the step of an open line at
//! most once across all callers, the counts shown while a line stands still, and the edge
//! reconciliation.

use vwr_core::EventId;

use super::{CAS_ATTEMPTS, Tier1Error, Tier1Service};
use crate::lifecycle::Action;
use crate::model::{
    CloseReason, EventRecord, EventState, HoldBy, Line, OutflowMode, Sample, Schedule, StoreError,
    push_sample,
};
use crate::outflow;
use crate::store::ServingUpdate;

/// What the advancer did for one event. `step` is the start (unix seconds) of the step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    Advanced {
        event: EventId,
        step: u64,
        from: u64,
        to: u64,
        waiting: u64,
    },
    /// Nothing to serve (everyone issued is already served) or manual-only event
    /// (`automatic: false`).
    Idle {
        event: EventId,
        step: u64,
        waiting: u64,
        automatic: bool,
    },
    /// Another invocation already applied this step.
    AlreadyDone {
        event: EventId,
        step: u64,
    },
    /// The stored step lies in the future: this event cannot advance until the clock gets
    /// there. Never expected (a clock far ahead on another advancer, or a hand-edited item):
    /// logged and metered so an operator sees a stuck line.
    Stuck {
        event: EventId,
        step: u64,
        last_step_at: u64,
    },
    /// The advancer is held (health gate or alarm): nobody new is let in.
    Held {
        event: EventId,
        by: HoldBy,
        reason: String,
    },
    /// The advancer moved the event to another state (pre-queue, open, closed at `closeAt`).
    Transition {
        event: EventId,
        from: EventState,
        to: EventState,
    },
    NotDue {
        event: EventId,
    },
}

/// How far the stored step may lie ahead of this instance's clock before the event counts as
/// stuck (clock skew between advancer instances).
pub const STEP_SKEW_LEEWAY_SECS: u64 = 5;

/// How often the advancer recounts a pre-queue, or the places handed out of a line that did
/// not step, for the status documents.
pub const PREQUEUE_COUNT_EVERY_SECS: u64 = 5;

/// Actor of the advancer's transitions in the audit trail.
pub const ADVANCER_ACTOR: &str = "advancer";

impl Tier1Service {
    /// Reconciles the edge configuration with the gated events (each advancer run).
    pub async fn reconcile_edge(&self) -> Result<(), Tier1Error> {
        self.sync_edge(None, None, false).await
    }

    /// One advancer pass: every event's due transition (pre-queue, open, close at
    /// `closeAt`) and, for open events, the due step.
    pub async fn advance_due(&self) -> Result<Vec<StepOutcome>, StoreError> {
        let events = self.store.list_active().await?;
        let mut out = Vec::with_capacity(events.len());
        for rec in events {
            let now = self.now();
            let event = rec.event.clone();
            match self.due(rec, now).await {
                Ok(o) => out.push(o),
                // One event's trouble does not stop the others.
                Err(e) => tracing::warn!(event = "tier1.advance_failed", event_id = %event, error = %e),
            }
        }
        self.flush_report_due().await;
        Ok(out)
    }

    /// The advancer's work for one event at the current time (what [`Self::advance_due`]
    /// does for each event).
    pub async fn advance_event(&self, event: &EventId) -> Result<StepOutcome, Tier1Error> {
        let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        self.due(rec, self.now()).await
    }

    async fn due(&self, rec: EventRecord, now: u64) -> Result<StepOutcome, Tier1Error> {
        let event = rec.event.clone();
        let from = rec.state;
        // A standby opens when its alarm fires; an alarm that cannot be read (deleted or denied
        // since the standby was set: `PUT` refuses one it cannot read) leaves it as it is,
        // ungated as the operator left it, and is logged as an error that Terraform's
        // `tier1-standby-alarm-unreadable` alarm watches (docs/lifecycle.md#standby).
        let mut fired = false;
        if rec.state == EventState::Standby
            && let (Some(alarms), Some(name)) = (&self.alarms, &rec.standby_alarm)
        {
            match alarms.in_alarm(name).await {
                Ok(f) => fired = f,
                Err(e) => tracing::error!(event = "tier1.standby_alarm_unreadable", event_id = %event,
                    alarm = %name, error = %e),
            }
        }
        let action = match (rec.state, rec.schedule) {
            (EventState::Standby, _) if fired => Some(Action::StandbyOpen),
            (EventState::Scheduled, Some(s)) if now >= s.prequeue_at => Some(Action::StartPrequeue),
            (EventState::Prequeue, Some(s)) if now >= s.open_at => Some(Action::Open { sealed: Vec::new() }),
            (EventState::Open | EventState::Paused, Some(Schedule { close_at: Some(c), .. })) if now >= c => {
                Some(Action::Close { reason: CloseReason::Ended, message: None })
            }
            _ => None,
        };
        if let Some(action) = action {
            let new = self.transition(&event, ADVANCER_ACTOR, action).await?;
            return Ok(StepOutcome::Transition { event, from, to: new.state });
        }
        match rec.state {
            EventState::Open => {
                let out = self.open_step(&rec, now).await?;
                if !matches!(out, StepOutcome::Advanced { .. }) {
                    self.count_issued(&rec, now).await;
                }
                Ok(out)
            }
            EventState::Paused => {
                self.count_issued(&rec, now).await;
                Ok(StepOutcome::NotDue { event })
            }
            EventState::Prequeue => {
                self.count_prequeue(&rec, now).await?;
                Ok(StepOutcome::NotDue { event })
            }
            _ => Ok(StepOutcome::NotDue { event }),
        }
    }

    /// The step of an open event, unless an alarm holds it.
    async fn open_step(&self, rec: &EventRecord, now: u64) -> Result<StepOutcome, Tier1Error> {
        let event = rec.event.clone();
        let step = now - now % rec.config.interval_seconds.max(1);
        // Ask the alarms only when a step is due and nothing else holds it.
        if let Some(health) = &self.health
            && rec.last_step_at < step
            && rec.hold.is_none()
        {
            match health.alarm(&event).await {
                Ok(Some(alarm)) => {
                    return Ok(StepOutcome::Held { event, by: HoldBy::Alarm, reason: alarm });
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(event = "tier1.health_check_failed", event_id = %event, error = %e)
                }
            }
        }
        Ok(self.advance_step(rec.clone(), now).await?)
    }

    /// Refreshes the places handed out shown in the status documents while the line does
    /// not step (held, paused, idle, between steps), every few seconds: one write when the
    /// count changed, never one per visitor. A failure only delays the figure (logged).
    async fn count_issued(&self, rec: &EventRecord, now: u64) {
        if rec.needs_seal() {
            return;
        }
        {
            let mut seen = self.issued_counted.lock().unwrap_or_else(|p| p.into_inner());
            if seen.get(&rec.event).is_some_and(|at| now < at + PREQUEUE_COUNT_EVERY_SECS) {
                return;
            }
            seen.insert(rec.event.clone(), now);
        }
        let shown = rec.samples.last().map_or(0, |s| s.issued).max(rec.issued_count);
        let counted = match self.store.shard_counts(&rec.event, rec.config.shards).await {
            Ok(counts) => Line { counts: &counts, p: rec.prequeue_total() }.issued(),
            Err(e) => {
                tracing::warn!(event = "tier1.count_issued_failed", event_id = %rec.event, error = %e);
                return;
            }
        };
        if counted > shown {
            match self.store.set_issued_count(&rec.event, counted, now).await {
                Ok(()) => self.invalidate(&rec.event),
                Err(e) => {
                    tracing::warn!(event = "tier1.count_issued_failed", event_id = %rec.event, error = %e)
                }
            }
        }
    }

    /// Refreshes the pre-queue size shown in the status documents, every few seconds.
    async fn count_prequeue(&self, rec: &EventRecord, now: u64) -> Result<(), Tier1Error> {
        {
            let mut seen = self.prequeue_counted.lock().unwrap_or_else(|p| p.into_inner());
            if seen.get(&rec.event).is_some_and(|at| now < at + PREQUEUE_COUNT_EVERY_SECS) {
                return Ok(());
            }
            seen.insert(rec.event.clone(), now);
        }
        let size = self.store.shard_counts(&rec.event, rec.config.shards).await?.total_pre();
        if size != rec.prequeue_size {
            self.store.set_prequeue_size(&rec.event, size, now).await?;
            self.invalidate(&rec.event);
        }
        Ok(())
    }

    /// Applies the step due at `now` to one open event, at most once per step across all
    /// callers.
    pub async fn advance_step(&self, mut rec: EventRecord, now: u64) -> Result<StepOutcome, StoreError> {
        let event = rec.event.clone();
        // Steps are identified by their start time, not by `now / interval`: a step number
        // taken in one interval's units is meaningless after `intervalSeconds` changes.
        let step = now - now % rec.config.interval_seconds.max(1);
        for _ in 0..CAS_ATTEMPTS {
            if rec.last_step_at > now.saturating_add(STEP_SKEW_LEEWAY_SECS) {
                return Ok(StepOutcome::Stuck { event, step, last_step_at: rec.last_step_at });
            }
            if rec.last_step_at >= step {
                return Ok(StepOutcome::AlreadyDone { event, step });
            }
            if rec.state != EventState::Open || rec.needs_seal() {
                return Ok(StepOutcome::NotDue { event });
            }
            if let Some(hold) = &rec.hold {
                return Ok(StepOutcome::Held { event, by: hold.by, reason: hold.reason.clone() });
            }
            let counts = self.store.shard_counts(&event, rec.config.shards).await?;
            let line = Line { counts: &counts, p: rec.prequeue_total() };
            let waiting = line.waiting(rec.serving_counter);
            let batch = match rec.config.mode {
                OutflowMode::Fixed => rec.config.batch_size,
                OutflowMode::TargetArrivals => {
                    let plan = outflow::plan(&outflow::StepInputs {
                        config: &rec.config,
                        samples: &rec.samples,
                        now,
                        serving: rec.serving_counter,
                        redeemed: counts.total_redeemed(),
                        released: counts.total_released(),
                        steady_since: rec.steady_since(),
                    });
                    tracing::debug!(
                        event = "tier1.outflow_plan",
                        event_id = %event,
                        batch = plan.batch,
                        show_rate = plan.show_rate,
                        base = plan.base,
                        feedback = plan.feedback,
                        arrivals_per_minute = plan.arrivals_per_minute,
                        released = plan.released
                    );
                    plan.batch
                }
            };
            let new = rec.serving_counter.saturating_add(batch).min(line.highest()).max(rec.serving_counter);
            if new == rec.serving_counter {
                let automatic = rec.config.batch_size > 0 || rec.config.mode == OutflowMode::TargetArrivals;
                return Ok(StepOutcome::Idle { event, step, waiting, automatic });
            }
            let samples = push_sample(
                &rec.samples,
                Sample {
                    at: now,
                    serving: new,
                    issued: line.issued(),
                    redeemed: counts.total_redeemed(),
                    released: counts.total_released(),
                },
            );
            let update = ServingUpdate { expected: rec.serving_counter, new, step: Some(step), samples, now };
            if self.store.update_serving(&event, update, None).await? {
                self.invalidate(&event);
                self.count(&event, |m| m.served += new.saturating_sub(rec.serving_counter));
                return Ok(StepOutcome::Advanced {
                    event,
                    step,
                    from: rec.serving_counter,
                    to: new,
                    waiting: line.waiting(new),
                });
            }
            match self.store.get_event(&event).await? {
                Some(r) => rec = r,
                None => return Ok(StepOutcome::NotDue { event }),
            }
        }
        Err(StoreError::Unavailable(format!("advancer step for {event} kept conflicting")))
    }
}
