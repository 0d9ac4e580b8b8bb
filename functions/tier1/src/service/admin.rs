//! The operator's operations, called by the admin router (`/api/admin/vwr/...`) and the
//! `vwr` command: the lifecycle transitions (activate, schedule, pause, resume, close,
//! deactivate), the message, the health gate, the manual advance, the status and the audit.

use vwr_core::EventId;

use super::answers::{PublicPage, StandbyAlarmState, build_status};
use super::{CAS_ATTEMPTS, EventStatus, Tier1Error, Tier1Service};
use crate::draw::Seed;
use crate::lifecycle::{Action, LifecycleError};
use crate::model::{
    AuditEntry, CloseReason, ConfigPatch, EventRecord, EventState, Line, MAX_ADVANCE_BY,
    MAX_HOLD_REASON_CHARS, Message, PageSettings, Sample, Schedule, push_sample,
};
use crate::store::ServingUpdate;

/// The body of `schedule`: the times and any configuration field of `activate`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleRequest {
    pub prequeue_at: u64,
    pub open_at: u64,
    pub close_at: Option<u64>,
    pub config: ConfigPatch,
}

impl Tier1Service {
    /// Admin: the health gate. `ok: false` holds the advancer until `ok: true`.
    pub async fn set_health(
        &self,
        event: &EventId,
        ok: bool,
        reason: Option<String>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        if let Some(r) = &reason
            && (r.chars().count() > MAX_HOLD_REASON_CHARS || !crate::model::text::is_plain(r, false))
        {
            return Err(Tier1Error::InvalidMessage(format!(
                "reason must be plain text of at most {MAX_HOLD_REASON_CHARS} characters"
            )));
        }
        let rec = self.transition(event, actor, Action::SetHealth { ok, reason }).await?;
        self.status_of(rec).await
    }

    /// Admin: create or update an event; opens it unless it is open, paused or closed.
    pub async fn activate(
        &self,
        event: &EventId,
        patch: ConfigPatch,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        self.validate_patch(&patch)?;
        let rec = self.transition(event, actor, Action::Activate { patch, sealed: None }).await?;
        if rec.state == EventState::Open {
            // An activation of an already open event may have been a no-op for the edge.
            self.sync_edge(Some((event, true)), None, false).await?;
        }
        self.status_of(rec).await
    }

    fn validate_patch(&self, patch: &ConfigPatch) -> Result<(), Tier1Error> {
        patch.validate().map_err(Tier1Error::InvalidConfig)?;
        if patch.enqueue_token_required == Some(true) && self.enqueue.is_none() {
            return Err(Tier1Error::InvalidConfig(
                "enqueueTokenRequired needs the site's public keys: set VWR_ENQUEUE_JWKS".into(),
            ));
        }
        Ok(())
    }

    /// Admin: schedule (or reschedule) a sale with a pre-queue and a randomized open.
    pub async fn schedule(
        &self,
        event: &EventId,
        req: ScheduleRequest,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let patch = req.config;
        self.validate_patch(&patch)?;
        let seed = match &self.settings.fixed_seed {
            Some(hex) => {
                Seed::from_hex(hex).map_err(|_| Tier1Error::Internal("the fixed seed is not hex"))?
            }
            None => Seed::generate().map_err(|_| Tier1Error::Internal("random generator failed"))?,
        };
        let schedule =
            Schedule { prequeue_at: req.prequeue_at, open_at: req.open_at, close_at: req.close_at };
        let rec =
            self.transition(event, actor, Action::Schedule { schedule, patch, seed: seed.to_hex() }).await?;
        self.status_of(rec).await
    }

    /// Admin: stop gating an event.
    pub async fn deactivate(&self, event: &EventId, actor: &str) -> Result<EventStatus, Tier1Error> {
        let rec = self.transition(event, actor, Action::Deactivate).await?;
        self.status_of(rec).await
    }

    /// Admin: keep the event known but ungated until the CloudWatch alarm `alarm` fires; the
    /// advancer then opens it in arrival order (docs/lifecycle.md#standby). `patch`: the
    /// configuration it opens with, as for `activate`.
    pub async fn standby(
        &self,
        event: &EventId,
        alarm: String,
        patch: ConfigPatch,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        self.validate_patch(&patch)?;
        // An alarm the advancer could never read would leave the event ungated exactly when
        // the site falls over: read it once now, and refuse it with nothing changed.
        if let Some(alarms) = &self.alarms
            && let Err(reason) = alarms.in_alarm(&alarm).await
        {
            tracing::warn!(event = "tier1.standby_alarm_refused", event_id = %event, alarm = %alarm, error = %reason);
            return Err(Tier1Error::StandbyAlarmUnreadable { alarm, reason });
        }
        let rec = self.transition(event, actor, Action::Standby { alarm, patch }).await?;
        self.status_of(rec).await
    }

    /// Admin: end a standby without opening: the event is inactive again.
    pub async fn end_standby(&self, event: &EventId, actor: &str) -> Result<EventStatus, Tier1Error> {
        let rec = self.transition(event, actor, Action::EndStandby).await?;
        self.status_of(rec).await
    }

    /// Admin: the page in the site's colours and words (docs/brand.md): set, or cleared with
    /// `None`. Checked before anything is written (400 `invalid_page`); audited (`page`).
    pub async fn set_page(
        &self,
        event: &EventId,
        page: Option<PageSettings>,
        actor: &str,
    ) -> Result<PublicPage, Tier1Error> {
        let rec = self.transition(event, actor, Action::SetPage(page)).await?;
        Ok(PublicPage {
            event_id: rec.event.to_string(),
            page: rec.page.unwrap_or_default(),
            updated_at: rec.updated_at,
        })
    }

    /// Admin: hold the line; everybody keeps their place.
    pub async fn pause(
        &self,
        event: &EventId,
        message: Option<Message>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let message = normalize(message)?;
        let rec = self.transition(event, actor, Action::Pause { message }).await?;
        self.status_of(rec).await
    }

    pub async fn resume(&self, event: &EventId, actor: &str) -> Result<EventStatus, Tier1Error> {
        let rec = self.transition(event, actor, Action::Resume).await?;
        self.status_of(rec).await
    }

    /// Admin: no more joins or admissions; the edge keeps gating.
    pub async fn close(
        &self,
        event: &EventId,
        reason: CloseReason,
        message: Option<Message>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let message = normalize(message)?;
        let rec = self.transition(event, actor, Action::Close { reason, message }).await?;
        self.status_of(rec).await
    }

    /// Admin: set (`Some`) or clear (`None`) the message to the visitors.
    pub async fn set_message(
        &self,
        event: &EventId,
        message: Option<Message>,
        actor: &str,
    ) -> Result<EventStatus, Tier1Error> {
        let message = normalize(message)?;
        let rec = self.transition(event, actor, Action::SetMessage(message)).await?;
        self.status_of(rec).await
    }

    /// Admin: the audit trail, oldest first.
    pub async fn audit(&self, event: &EventId) -> Result<Vec<AuditEntry>, Tier1Error> {
        if self.store.get_event(event).await?.is_none() {
            return Err(Tier1Error::EventNotFound);
        }
        Ok(self.store.audit(event).await?)
    }

    /// Admin: counters, waiting, admitted and recent rates.
    pub async fn status(&self, event: &EventId) -> Result<EventStatus, Tier1Error> {
        let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
        self.status_of(rec).await
    }

    async fn status_of(&self, rec: EventRecord) -> Result<EventStatus, Tier1Error> {
        let counts = self.store.shard_counts(&rec.event, rec.config.shards).await?;
        let alarm = self.standby_alarm_state(&rec).await;
        let mut status = build_status(rec, &counts, self.now());
        status.standby_alarm_state = alarm;
        Ok(status)
    }

    /// The state of a standby event's alarm as the advancer reads it (`None` for other events
    /// or without an alarm reader): what status and `vwr watch` show.
    pub(crate) async fn standby_alarm_state(&self, rec: &EventRecord) -> Option<StandbyAlarmState> {
        let (EventState::Standby, Some(name), Some(alarms)) = (rec.state, &rec.standby_alarm, &self.alarms)
        else {
            return None;
        };
        Some(match alarms.in_alarm(name).await {
            Ok(true) => StandbyAlarmState::Alarm,
            Ok(false) => StandbyAlarmState::Ok,
            Err(_) => StandbyAlarmState::Unreadable,
        })
    }

    /// Admin: raise `servingCounter` by `by`, capped at the highest issued position. Allowed
    /// while the event is open, paused or inactive.
    pub async fn advance(&self, event: &EventId, by: u64, actor: &str) -> Result<EventStatus, Tier1Error> {
        if !(1..=MAX_ADVANCE_BY).contains(&by) {
            return Err(Tier1Error::InvalidAdvance(format!("by must be between 1 and {MAX_ADVANCE_BY}")));
        }
        for _ in 0..CAS_ATTEMPTS {
            let rec = self.store.get_event(event).await?.ok_or(Tier1Error::EventNotFound)?;
            if !matches!(rec.state, EventState::Open | EventState::Paused | EventState::Inactive)
                || rec.needs_seal()
            {
                return Err(LifecycleError::InvalidTransition { action: "advance", state: rec.state }.into());
            }
            let counts = self.store.shard_counts(event, rec.config.shards).await?;
            let line = Line { counts: &counts, p: rec.prequeue_total() };
            let now = self.now();
            let new = rec.serving_counter.saturating_add(by).min(line.highest()).max(rec.serving_counter);
            if new == rec.serving_counter {
                return Ok(build_status(rec, &counts, now));
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
            let update = ServingUpdate {
                expected: rec.serving_counter,
                new,
                step: None,
                samples: samples.clone(),
                now,
            };
            let audit = AuditEntry {
                seq: rec.audit_seq + 1,
                at: now,
                actor: actor.to_owned(),
                action: "advance".into(),
                before: serde_json::json!({ "servingCounter": rec.serving_counter }),
                after: serde_json::json!({ "servingCounter": new }),
            };
            if self.store.update_serving(event, update, Some(&audit)).await? {
                self.invalidate(event);
                self.count(event, |m| m.served += new.saturating_sub(rec.serving_counter));
                tracing::info!(event = "tier1.advanced_manually", event_id = %event, actor, from = rec.serving_counter, to = new);
                // Rare: written at once rather than a minute later.
                let _ = self.flush_report().await;
                let rec = EventRecord {
                    serving_counter: new,
                    samples,
                    updated_at: now,
                    audit_seq: audit.seq,
                    ..rec
                };
                return Ok(build_status(rec, &counts, now));
            }
        }
        Err(Tier1Error::Busy)
    }
}

fn normalize(message: Option<Message>) -> Result<Option<Message>, Tier1Error> {
    match message {
        None => Ok(None),
        Some(m) => m.normalize().map_err(Tier1Error::InvalidMessage),
    }
}
