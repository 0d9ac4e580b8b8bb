//! The state machine of an event (docs/lifecycle.md#states) as one pure function: given the
//! stored item (or none) and an action, the item to write or why the action is refused. Both
//! stores write its result with a revision check, so whatever races, only transitions this
//! function allows are ever stored (docs/invariants.md#11).

use vwr_core::EventId;

use crate::model::{
    CloseReason, ConfigPatch, EventConfig, EventRecord, EventState, Hold, HoldBy, MAX_SCHEDULE_AHEAD_SECS,
    Message, PageError, PageSettings, Pass, PassError, Schedule, add_pass, revoke_pass,
};

/// Something that changes an event's lifecycle fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Creates or reschedules an event. `seed` is used only if the event has none yet.
    Schedule {
        schedule: Schedule,
        patch: ConfigPatch,
        seed: String,
    },
    /// Creates an event or updates its configuration; opens it if it is not open yet
    /// (`sealed` must carry the pre-queue counts when [`EventRecord::needs_seal`]).
    Activate {
        patch: ConfigPatch,
        sealed: Option<Vec<u64>>,
    },
    Deactivate,
    /// Advancer: `scheduled` → `prequeue` at `prequeueAt`.
    StartPrequeue,
    /// Advancer: `prequeue` → `open` at `openAt`, with the sealed pre-queue counts.
    Open {
        sealed: Vec<u64>,
    },
    Pause {
        message: Option<Message>,
    },
    Resume,
    Close {
        reason: CloseReason,
        message: Option<Message>,
    },
    /// Sets (`Some`) or clears (`None`) the message.
    SetMessage(Option<Message>),
    /// The health gate: `ok: false` holds the advancer, `ok: true` lets it go on.
    SetHealth {
        ok: bool,
        reason: Option<String>,
    },
    /// Keeps an event known but ungated until `alarm` fires (docs/lifecycle.md#standby): from
    /// inactive (or new), or to change the alarm or configuration of a standby event.
    Standby {
        alarm: String,
        patch: ConfigPatch,
    },
    /// Ends a standby: the event is inactive again.
    EndStandby,
    /// Advancer: the standby's alarm fired: open, in arrival order (no pre-queue, no draw).
    StandbyOpen,
    /// Sets (`Some`) or clears (`None`) the page settings (docs/brand.md); checked first.
    SetPage(Option<PageSettings>),
    /// Records a new pass (docs/passes.md); the event must exist.
    CreatePass(Pass),
    /// Marks a pass revoked (the edge then refuses it).
    RevokePass {
        id: String,
    },
}

impl Action {
    /// The name recorded in the audit trail.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Schedule { .. } => "schedule",
            Self::Activate { .. } => "activate",
            Self::Deactivate => "deactivate",
            Self::StartPrequeue => "prequeue",
            Self::Open { .. } => "open",
            Self::Pause { .. } => "pause",
            Self::Resume => "resume",
            Self::Close { .. } => "close",
            Self::SetMessage(_) => "message",
            Self::SetHealth { .. } => "health",
            Self::Standby { .. } => "standby",
            Self::EndStandby => "standby_end",
            Self::StandbyOpen => "standby_open",
            Self::SetPage(_) => "page",
            Self::CreatePass(_) => "pass_create",
            Self::RevokePass { .. } => "pass_revoke",
        }
    }
}

/// Why an action is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LifecycleError {
    #[error("no such event")]
    NotFound,
    #[error("cannot {action} an event that is {state}")]
    InvalidTransition { action: &'static str, state: EventState },
    #[error("{0}")]
    InvalidSchedule(String),
    #[error("{0}")]
    InvalidConfig(String),
    #[error("shards is fixed at {current} for this event")]
    ShardsImmutable { current: u32 },
    #[error(
        "this event has already handed out places in line; a pre-queue can only stand in front of an empty line — use a new event id"
    )]
    HasHistory,
    /// The caller must seal the pre-queue first (a bug in the caller if it ever surfaces).
    #[error("the pre-queue must be sealed before the event opens")]
    SealRequired,
    /// Once the pre-queue has started it is sealed, and so drawn, at `openAt` and at no moment
    /// anyone chooses (docs/invariants.md#21).
    #[error("{reason}")]
    SealTimeFixed { state: EventState, reason: &'static str },
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error(transparent)]
    Page(#[from] PageError),
}

const ACTIVATE_IN_PREQUEUE: &str = "the pre-queue has started: it is sealed and drawn at openAt, not earlier \
     (docs/fairness.md). To change the configuration, PUT schedule with the same prequeueAt and openAt; to \
     end the sale, close it";
const ACTIVATE_UNSEALED: &str = "this event's pre-queue has visitors and was never sealed: it can only open at \
     its openAt. Gate it again with PUT schedule and the same prequeueAt and openAt before then, or use a new \
     event id";
const TIMES_FIXED: &str = "the pre-queue has started: prequeueAt and openAt are fixed (it is sealed and drawn \
     at openAt). Send the same prequeueAt and openAt to change the configuration or closeAt; to end the sale, \
     close it";
const OPEN_AT_PASSED: &str = "this event's pre-queue has visitors and its openAt has passed: it can no longer \
     open; use a new event id";
const OPEN_BEFORE_OPEN_AT: &str = "the pre-queue is sealed at openAt, not before";

/// Facts the state machine needs besides the item: the time and whether the event already
/// handed out regular places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub now: u64,
    /// Regular joins ever handed out (schedule is refused when > 0).
    pub regular_joins: u64,
    /// Pre-queue joins counted so far (read for `schedule` and `activate` while the event
    /// needs a seal): a pre-queue with visitors has started even when the event was
    /// deactivated or closed since.
    pub prequeue_joins: u64,
}

/// The item to store after `action`, or why it is refused. `old` is the stored item.
/// The result's `rev` is `old.rev + 1` (1 for a new item); counters, samples and
/// `lastStepAt` are never changed here.
pub fn apply(
    event: &EventId,
    old: Option<&EventRecord>,
    action: &Action,
    facts: Facts,
) -> Result<EventRecord, LifecycleError> {
    use EventState::*;
    let now = facts.now;
    let refuse = |state: EventState| LifecycleError::InvalidTransition { action: action.name(), state };
    let mut rec = match (old, action) {
        (None, Action::Schedule { .. } | Action::Activate { .. } | Action::Standby { .. }) => {
            EventRecord::new(event.clone(), Inactive, EventConfig::default(), now)
        }
        (None, _) => return Err(LifecycleError::NotFound),
        (Some(o), _) => o.clone(),
    };
    let is_new = old.is_none();
    // The pre-queue has started: its seal time is fixed (docs/invariants.md#21).
    let started = rec.needs_seal() && (rec.state == Prequeue || facts.prequeue_joins > 0);
    let state = rec.state;
    let fixed = move |reason| LifecycleError::SealTimeFixed { state, reason };
    match action {
        Action::Schedule { schedule, patch, seed } => {
            if !matches!(rec.state, Inactive | Scheduled | Prequeue) {
                return Err(refuse(rec.state));
            }
            if rec.sealed_counts.is_some() || facts.regular_joins > 0 || rec.serving_counter > 0 {
                return Err(LifecycleError::HasHistory);
            }
            if (started || rec.state == Prequeue)
                && let Some(s) = rec.schedule
                && (s.prequeue_at, s.open_at) != (schedule.prequeue_at, schedule.open_at)
            {
                return Err(fixed(TIMES_FIXED));
            }
            if rec.state == Prequeue && rec.schedule.is_some() {
                // The times are the stored ones; only closeAt is new.
                validate_close(schedule)?;
            } else if started && schedule.open_at <= now {
                return Err(fixed(OPEN_AT_PASSED));
            } else {
                validate_schedule(schedule, now)?;
            }
            apply_patch(&mut rec, patch, is_new)?;
            if rec.seed.is_none() {
                rec.seed = Some(seed.clone());
            }
            rec.state =
                if rec.state == Prequeue || now >= schedule.prequeue_at { Prequeue } else { Scheduled };
            rec.schedule = Some(*schedule);
            rec.close_reason = None;
        }
        Action::Activate { patch, sealed } => {
            if rec.state == Prequeue {
                return Err(fixed(ACTIVATE_IN_PREQUEUE));
            }
            if started && !matches!(rec.state, Open | Paused | Closed) {
                return Err(fixed(ACTIVATE_UNSEALED));
            }
            apply_patch(&mut rec, patch, is_new)?;
            if !matches!(rec.state, Open | Paused | Closed) {
                if rec.needs_seal() {
                    rec.sealed_counts = Some(sealed.clone().ok_or(LifecycleError::SealRequired)?);
                }
                open(&mut rec, now);
            }
        }
        Action::Deactivate => {
            if rec.state == Inactive {
                return Err(refuse(rec.state));
            }
            rec.state = Inactive;
        }
        Action::StartPrequeue => {
            if rec.state != Scheduled {
                return Err(refuse(rec.state));
            }
            rec.state = Prequeue;
        }
        Action::Open { sealed } => {
            if rec.state != Prequeue {
                return Err(refuse(rec.state));
            }
            if rec.schedule.is_some_and(|s| now < s.open_at) {
                return Err(fixed(OPEN_BEFORE_OPEN_AT));
            }
            rec.sealed_counts = Some(sealed.clone());
            rec.state = Open;
            rec.opened_at = Some(now);
        }
        Action::Pause { message } => {
            if rec.state != Open {
                return Err(refuse(rec.state));
            }
            rec.state = Paused;
            if message.is_some() {
                rec.message = message.clone();
            }
        }
        Action::Resume => {
            if rec.state != Paused {
                return Err(refuse(rec.state));
            }
            rec.state = Open;
            rec.resumed_at = Some(now);
        }
        Action::Close { reason, message } => {
            if !matches!(rec.state, Scheduled | Prequeue | Open | Paused) {
                return Err(refuse(rec.state));
            }
            rec.state = Closed;
            rec.close_reason = Some(*reason);
            // The close replaces the message: a pause notice left on a sold-out page would
            // mislead; without one the page shows its own "sold out" / "sale ended" text.
            rec.message = message.clone();
        }
        Action::SetMessage(m) => {
            rec.message = m.clone();
        }
        Action::SetHealth { ok: true, .. } => {
            if rec.hold.take().is_some() {
                rec.resumed_at = Some(now);
            }
        }
        Action::SetHealth { ok: false, reason } => {
            let since = rec.hold.as_ref().map_or(now, |h| h.since);
            let reason = reason.clone().unwrap_or_default();
            rec.hold = Some(Hold { by: HoldBy::Health, reason, since });
        }
        Action::Standby { alarm, patch } => {
            // Only an event with nothing in line: a standby opens in arrival order, which a
            // scheduled pre-queue (a draw) or a running sale would contradict.
            if !matches!(rec.state, Inactive | Standby) || rec.needs_seal() {
                return Err(refuse(rec.state));
            }
            validate_alarm_name(alarm)?;
            apply_patch(&mut rec, patch, is_new)?;
            rec.state = Standby;
            rec.standby_alarm = Some(alarm.clone());
        }
        Action::EndStandby => {
            if rec.state != Standby {
                return Err(refuse(rec.state));
            }
            rec.state = Inactive;
            rec.standby_alarm = None;
        }
        Action::StandbyOpen => {
            if rec.state != Standby {
                return Err(refuse(rec.state));
            }
            open(&mut rec, now);
        }
        Action::SetPage(page) => {
            if let Some(p) = page {
                p.validate()?;
            }
            rec.page = page.clone();
        }
        Action::CreatePass(pass) => add_pass(&mut rec.passes, pass.clone(), now)?,
        Action::RevokePass { id } => revoke_pass(&mut rec.passes, id, now)?,
    }
    rec.rev = old.map_or(1, |o| o.rev + 1);
    rec.audit_seq = old.map_or(1, |o| o.audit_seq + 1);
    rec.updated_at = now;
    Ok(rec)
}

/// Opens `rec` at `now` (an activation, or a standby whose alarm fired).
fn open(rec: &mut EventRecord, now: u64) {
    rec.state = EventState::Open;
    rec.opened_at = Some(now);
    rec.close_reason = None;
}

/// Longest CloudWatch alarm name.
pub const MAX_ALARM_NAME_CHARS: usize = 255;

/// A CloudWatch alarm name: 1–255 characters, no control characters (also `vwr dev`'s alarms
/// by hand).
pub fn validate_alarm_name(name: &str) -> Result<(), LifecycleError> {
    let n = name.chars().count();
    if n == 0 || n > MAX_ALARM_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(LifecycleError::InvalidConfig(format!(
            "alarm must be a CloudWatch alarm name: 1 to {MAX_ALARM_NAME_CHARS} characters, no control characters"
        )));
    }
    Ok(())
}

fn apply_patch(rec: &mut EventRecord, patch: &ConfigPatch, is_new: bool) -> Result<(), LifecycleError> {
    patch.validate().map_err(LifecycleError::InvalidConfig)?;
    if is_new {
        rec.config = patch.apply(rec.config);
        rec.config.shards = patch.shards.unwrap_or(rec.config.shards);
    } else {
        if let Some(s) = patch.shards
            && s != rec.config.shards
        {
            return Err(LifecycleError::ShardsImmutable { current: rec.config.shards });
        }
        rec.config = patch.apply(rec.config);
    }
    ConfigPatch::validate_result(&rec.config).map_err(LifecycleError::InvalidConfig)
}

fn validate_schedule(s: &Schedule, now: u64) -> Result<(), LifecycleError> {
    let bad = |m: &str| Err(LifecycleError::InvalidSchedule(m.to_owned()));
    if s.prequeue_at >= s.open_at {
        return bad("prequeueAt must be before openAt");
    }
    if s.open_at <= now {
        return bad("openAt is in the past; use activate to open now");
    }
    if s.open_at > now + MAX_SCHEDULE_AHEAD_SECS {
        return bad("openAt is more than a year ahead");
    }
    validate_close(s)
}

fn validate_close(s: &Schedule) -> Result<(), LifecycleError> {
    if let Some(c) = s.close_at
        && c <= s.open_at
    {
        return Err(LifecycleError::InvalidSchedule("closeAt must be after openAt".to_owned()));
    }
    Ok(())
}

/// Why [`apply_to`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    #[error(transparent)]
    Store(#[from] crate::model::StoreError),
    #[error("the event changed concurrently")]
    Conflict,
}

/// Applies `action` straight to `store` in one attempt, with its audit entry: for tools and
/// tests that set up events. No pre-queue seal and no edge sync — the service does those.
pub async fn apply_to(
    store: &dyn crate::store::PositionStore,
    event: &EventId,
    action: &Action,
    actor: &str,
    now: u64,
) -> Result<EventRecord, ApplyError> {
    let old = store.get_event(event).await?;
    let new = apply(event, old.as_ref(), action, Facts { now, regular_joins: 0, prequeue_joins: 0 })?;
    let audit = crate::model::AuditEntry {
        seq: new.audit_seq,
        at: now,
        actor: actor.to_owned(),
        action: action.name().to_owned(),
        before: old.as_ref().map_or(serde_json::Value::Null, EventRecord::audit_view),
        after: new.audit_view(),
    };
    if store.write_event(old.as_ref().map(|o| o.rev), &new, &audit).await? {
        Ok(new)
    } else {
        Err(ApplyError::Conflict)
    }
}

/// Every state and the actions allowed in it (docs/lifecycle.md#states), for the tests.
pub fn allowed(state: EventState, action: &Action) -> bool {
    use EventState::*;
    match action {
        Action::Schedule { .. } => matches!(state, Inactive | Scheduled | Prequeue),
        Action::Activate { .. } => state != Prequeue,
        Action::SetMessage(_) | Action::SetHealth { .. } => true,
        Action::CreatePass(_) | Action::RevokePass { .. } | Action::SetPage(_) => true,
        Action::Standby { .. } => matches!(state, Inactive | Standby),
        Action::EndStandby | Action::StandbyOpen => state == Standby,
        Action::Deactivate => state != Inactive,
        Action::StartPrequeue => state == Scheduled,
        Action::Open { .. } => state == Prequeue,
        Action::Pause { .. } => state == Open,
        Action::Resume => state == Paused,
        Action::Close { .. } => matches!(state, Scheduled | Prequeue | Open | Paused),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventState::*;

    fn ev() -> EventId {
        EventId::parse("e").unwrap()
    }

    fn facts(now: u64) -> Facts {
        Facts { now, regular_joins: 0, prequeue_joins: 0 }
    }

    fn sched(now: u64) -> Action {
        Action::Schedule {
            schedule: Schedule { prequeue_at: now + 10, open_at: now + 20, close_at: None },
            patch: ConfigPatch::default(),
            seed: "s1".into(),
        }
    }

    fn at(state: EventState) -> EventRecord {
        EventRecord { rev: 3, ..EventRecord::new(ev(), state, EventConfig::default(), 0) }
    }

    fn all_actions() -> Vec<Action> {
        vec![
            sched(100),
            Action::Activate { patch: ConfigPatch::default(), sealed: Some(vec![0]) },
            Action::Deactivate,
            Action::StartPrequeue,
            Action::Open { sealed: vec![0] },
            Action::Pause { message: None },
            Action::Resume,
            Action::Close { reason: CloseReason::SoldOut, message: None },
            Action::SetMessage(None),
            Action::SetHealth { ok: false, reason: None },
        ]
    }

    #[test]
    fn exactly_the_documented_transitions_are_allowed() {
        for state in EventState::ALL {
            for action in all_actions() {
                let got = apply(&ev(), Some(&at(state)), &action, facts(100));
                assert_eq!(got.is_ok(), allowed(state, &action), "{state} {action:?}: {got:?}");
                if let Ok(r) = got {
                    assert_eq!(r.rev, 4);
                }
            }
        }
    }

    #[test]
    fn the_resulting_states() {
        let go = |s, a: Action| apply(&ev(), Some(&at(s)), &a, facts(100)).unwrap().state;
        assert_eq!(go(Inactive, sched(100)), Scheduled);
        assert_eq!(go(Prequeue, sched(100)), Prequeue);
        let started = Action::Schedule {
            schedule: Schedule { prequeue_at: 90, open_at: 120, close_at: None },
            patch: ConfigPatch::default(),
            seed: "s".into(),
        };
        assert_eq!(go(Scheduled, started), Prequeue, "prequeueAt passed");
        assert_eq!(go(Scheduled, Action::StartPrequeue), Prequeue);
        assert_eq!(go(Prequeue, Action::Open { sealed: vec![3] }), Open);
        assert_eq!(go(Open, Action::Pause { message: None }), Paused);
        assert_eq!(go(Paused, Action::Resume), Open);
        assert_eq!(go(Paused, Action::Close { reason: CloseReason::Ended, message: None }), Closed);
        assert_eq!(go(Closed, Action::Activate { patch: ConfigPatch::default(), sealed: None }), Closed);
        assert_eq!(go(Closed, Action::Deactivate), Inactive);
    }

    #[test]
    fn schedule_draws_the_seed_once_and_refuses_a_used_line() {
        let first = apply(&ev(), None, &sched(100), facts(100)).unwrap();
        assert_eq!((first.state, first.rev, first.seed.as_deref()), (Scheduled, 1, Some("s1")));
        let again = Action::Schedule {
            schedule: Schedule { prequeue_at: 150, open_at: 200, close_at: Some(300) },
            patch: ConfigPatch::default(),
            seed: "s2".into(),
        };
        let second = apply(&ev(), Some(&first), &again, facts(101)).unwrap();
        assert_eq!(second.seed.as_deref(), Some("s1"), "the committed seed never changes");
        assert_eq!(second.schedule.and_then(|s| s.close_at), Some(300));
        let used = Facts { now: 101, regular_joins: 1, prequeue_joins: 0 };
        assert_eq!(apply(&ev(), Some(&at(Inactive)), &again, used), Err(LifecycleError::HasHistory));
        let sealed = EventRecord { sealed_counts: Some(vec![1]), ..at(Inactive) };
        assert_eq!(apply(&ev(), Some(&sealed), &again, facts(101)), Err(LifecycleError::HasHistory));
    }

    #[test]
    fn bad_schedules_are_refused() {
        for (p, o, c) in [
            (20, 20, None),
            (30, 20, None),
            (10, 90, None),
            (110, 120, Some(120)),
            (110, 100 + 400 * 86_400, None),
        ] {
            let a = Action::Schedule {
                schedule: Schedule { prequeue_at: p, open_at: o, close_at: c },
                patch: ConfigPatch::default(),
                seed: "s".into(),
            };
            assert!(
                matches!(apply(&ev(), None, &a, facts(100)), Err(LifecycleError::InvalidSchedule(_))),
                "{p} {o} {c:?}"
            );
        }
    }

    #[test]
    fn opening_a_scheduled_event_needs_its_seal() {
        let s = apply(&ev(), None, &sched(100), facts(100)).unwrap();
        let open = Action::Activate { patch: ConfigPatch::default(), sealed: None };
        assert_eq!(apply(&ev(), Some(&s), &open, facts(101)), Err(LifecycleError::SealRequired));
        let open = Action::Activate { patch: ConfigPatch::default(), sealed: Some(vec![4]) };
        let r = apply(&ev(), Some(&s), &open, facts(101)).unwrap();
        assert_eq!((r.state, r.prequeue_total(), r.opened_at), (Open, 4, Some(101)));
    }

    /// docs/invariants.md#21: once the pre-queue has started only the advancer seals it, at
    /// `openAt`; nobody can move that moment or seal earlier.
    #[test]
    fn the_seal_time_is_fixed_once_the_prequeue_starts() {
        let scheduled = apply(&ev(), None, &sched(100), facts(100)).unwrap();
        let pre = apply(&ev(), Some(&scheduled), &Action::StartPrequeue, facts(110)).unwrap();
        let fixed = |r: Result<EventRecord, LifecycleError>, what: &str| {
            let e = r.expect_err(what);
            assert!(e.to_string().contains("openAt"), "{what}: {e}");
        };
        let open_now = Action::Activate { patch: ConfigPatch::default(), sealed: Some(vec![3]) };
        fixed(apply(&ev(), Some(&pre), &open_now, facts(111)), "activate seals early");
        let moved = |p: u64, o: u64| Action::Schedule {
            schedule: Schedule { prequeue_at: p, open_at: o, close_at: None },
            patch: ConfigPatch::default(),
            seed: "s2".into(),
        };
        fixed(apply(&ev(), Some(&pre), &moved(110, 115), facts(111)), "openAt moved earlier");
        fixed(apply(&ev(), Some(&pre), &moved(110, 500), facts(111)), "openAt moved later");
        fixed(apply(&ev(), Some(&pre), &moved(105, 120), facts(111)), "prequeueAt moved");
        fixed(apply(&ev(), Some(&pre), &Action::Open { sealed: vec![3] }, facts(119)), "open before openAt");
        // The configuration and closeAt may change, with the same times.
        let same = Action::Schedule {
            schedule: Schedule { prequeue_at: 110, open_at: 120, close_at: Some(900) },
            patch: ConfigPatch { batch_size: Some(7), ..Default::default() },
            seed: "s2".into(),
        };
        let r = apply(&ev(), Some(&pre), &same, facts(111)).unwrap();
        assert_eq!(
            (r.state, r.config.batch_size, r.schedule.and_then(|s| s.close_at)),
            (Prequeue, 7, Some(900))
        );
        assert_eq!(r.seed.as_deref(), Some("s1"));
        let opened = apply(&ev(), Some(&r), &Action::Open { sealed: vec![3] }, facts(120)).unwrap();
        assert_eq!((opened.state, opened.prequeue_total()), (Open, 3));
        // Before the pre-queue starts an early open is fine: nobody has joined.
        let early = apply(&ev(), Some(&scheduled), &open_now, facts(105)).unwrap();
        assert_eq!(early.state, Open);
        // Closing stays possible.
        let closed = Action::Close { reason: CloseReason::Ended, message: None };
        assert_eq!(apply(&ev(), Some(&pre), &closed, facts(111)).unwrap().state, Closed);
        // Deactivated with visitors in the pre-queue, it cannot be opened at a chosen moment
        // either, nor get other times; the same times gate it again.
        let off = apply(&ev(), Some(&pre), &Action::Deactivate, facts(112)).unwrap();
        let joined = Facts { now: 113, regular_joins: 0, prequeue_joins: 3 };
        assert!(matches!(
            apply(&ev(), Some(&off), &open_now, joined),
            Err(LifecycleError::SealTimeFixed { state: Inactive, .. })
        ));
        fixed(apply(&ev(), Some(&off), &moved(110, 200), joined), "other times after a deactivation");
        let again = apply(&ev(), Some(&off), &moved(110, 120), joined).unwrap();
        assert_eq!((again.state, again.schedule.map(|s| s.open_at)), (Prequeue, Some(120)));
        let late = Facts { now: 121, ..joined };
        assert!(matches!(
            apply(&ev(), Some(&off), &moved(110, 120), late),
            Err(LifecycleError::SealTimeFixed { .. })
        ));
        // Without visitors nothing was drawn yet: it may open at once.
        assert_eq!(apply(&ev(), Some(&off), &open_now, facts(113)).unwrap().state, Open);
    }

    #[test]
    fn shards_stay_fixed() {
        let r = apply(
            &ev(),
            Some(&at(Open)),
            &Action::Activate { patch: ConfigPatch { shards: Some(4), ..Default::default() }, sealed: None },
            facts(1),
        );
        assert_eq!(r, Err(LifecycleError::ShardsImmutable { current: 1 }));
    }

    #[test]
    fn messages_are_set_kept_and_cleared() {
        let m = Message { en: Some("hold on".into()), ..Default::default() };
        let p = apply(&ev(), Some(&at(Open)), &Action::Pause { message: Some(m.clone()) }, facts(1)).unwrap();
        assert_eq!(p.message, Some(m.clone()));
        let r = apply(&ev(), Some(&p), &Action::Resume, facts(2)).unwrap();
        assert_eq!(r.message, Some(m), "resume keeps the message");
        let c = apply(&ev(), Some(&r), &Action::SetMessage(None), facts(3)).unwrap();
        assert_eq!(c.message, None);
        let closed =
            apply(&ev(), Some(&r), &Action::Close { reason: CloseReason::SoldOut, message: None }, facts(4))
                .unwrap();
        assert_eq!(closed.message, None, "the close replaces the pause notice");
    }

    #[test]
    fn message_text_is_checked() {
        let long = Message { en: Some("x".repeat(501)), ..Default::default() };
        assert!(long.normalize().is_err());
        let ctl = Message { en: Some("a\u{7}b".into()), ..Default::default() };
        assert!(ctl.normalize().is_err());
        let blank = Message { en: Some("  ".into()), ko: Some(String::new()), ..Default::default() };
        assert_eq!(blank.normalize(), Ok(None));
        let ok = Message {
            en: None, ko: Some(" 잠시만요\n곧 재개합니다 ".into()), ..Default::default()
        };
        assert_eq!(ok.normalize().unwrap().unwrap().ko.as_deref(), Some("잠시만요\n곧 재개합니다"));
    }

    #[test]
    fn a_message_speaks_every_language_of_the_page() {
        // Before: only en and ko; `ja` was refused with 400 though the page speaks five.
        let m: Message = serde_json::from_str(
            r#"{"en":"Hold on","ko":"잠시만요","ja":"お待ちください","zh-Hans":"请稍候","zh-Hant":"請稍候"}"#,
        )
        .unwrap();
        let m = m.normalize().unwrap().unwrap();
        assert_eq!(
            (m.ja.as_deref(), m.zh_hans.as_deref(), m.zh_hant.as_deref()),
            (Some("お待ちください"), Some("请稍候"), Some("請稍候"))
        );
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["zh-Hant"], "請稍候");
        let only_ja: Message = serde_json::from_str(r#"{"ja":"お待ちください"}"#).unwrap();
        assert!(only_ja.normalize().unwrap().is_some(), "one language is a message");
        let long: Message =
            serde_json::from_value(serde_json::json!({ "zh-Hans": "x".repeat(501) })).unwrap();
        assert_eq!(long.normalize(), Err("message.zh-Hans must be at most 500 characters".into()));
        assert!(
            serde_json::from_str::<Message>(r#"{"fr":"Patientez"}"#).is_err(),
            "not a language of the page"
        );
    }
}
