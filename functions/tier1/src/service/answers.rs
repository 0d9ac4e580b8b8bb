//! What the tier-1 operations answer: typed data, serialized as the JSON bodies of
//! docs/api.md; the status documents are built here from an event item and its counters.
//! Headers and cookies are `http`'s business.

use serde::Serialize;

use crate::draw::Seed;
use crate::model::{
    CloseReason, EventConfig, EventRecord, EventState, HoldBy, Line, Message, OutflowMode, RATE_WINDOW_SECS,
    ShardCounts, joins_per_second,
};
use crate::outflow;

/// Answer of `assign` once the event is open: a place in line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placed {
    pub request_id: String,
    /// Proof of possession: `check` requires it (docs/tokens.md#request-secrets).
    pub request_secret: String,
    pub position: u64,
    pub queue_length: u64,
    pub serving_counter: u64,
    pub estimated_wait_seconds: u64,
    pub next_poll_seconds: u64,
    pub state: EventState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `assign` before the open: a ticket whose position is drawn at the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrequeueJoin {
    pub request_id: String,
    pub request_secret: String,
    pub state: EventState,
    pub opens_at: u64,
    pub next_poll_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `assign`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AssignResponse {
    Placed(Placed),
    Prequeue(PrequeueJoin),
}

impl AssignResponse {
    pub fn request_id(&self) -> &str {
        match self {
            Self::Placed(p) => &p.request_id,
            Self::Prequeue(p) => &p.request_id,
        }
    }

    pub fn request_secret(&self) -> &str {
        match self {
            Self::Placed(p) => &p.request_secret,
            Self::Prequeue(p) => &p.request_secret,
        }
    }

    /// The position, once known.
    pub fn position(&self) -> Option<u64> {
        match self {
            Self::Placed(p) => Some(p.position),
            Self::Prequeue(_) => None,
        }
    }
}

/// Answer of `check` while waiting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    pub admitted: bool,
    pub state: EventState,
    pub position: u64,
    pub serving_counter: u64,
    pub people_ahead: u64,
    pub estimated_wait_seconds: u64,
    pub next_poll_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `check` before the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrequeueWait {
    pub admitted: bool,
    pub state: EventState,
    pub opens_at: u64,
    pub next_poll_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `check` after the close for a ticket that was never admitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedAnswer {
    pub admitted: bool,
    pub state: EventState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<CloseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Answer of `check` once admitted: the tier-1 token of the event and its expiry (`http` also
/// sets it as the event's tier-1 cookie).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Admitted {
    pub admitted: bool,
    pub token: String,
    pub expires_at: u64,
    /// When the answer was made (unix seconds): the token is good for `expires_at -
    /// answered_at` more seconds (the cookie's `Max-Age`).
    #[serde(skip)]
    pub answered_at: u64,
}

/// Answer of `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    Waiting(Waiting),
    Admitted(Admitted),
    Prequeue(PrequeueWait),
    Closed(ClosedAnswer),
}

/// Admin status of an event (docs/api.md#admin-routes-apiadminvwr, docs/lifecycle.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventStatus {
    pub event_id: String,
    pub state: EventState,
    /// `state != inactive`.
    pub active: bool,
    /// Positions handed out, the pre-queue included.
    pub issued: u64,
    pub serving_counter: u64,
    /// Highest position handed out (the advancer's ceiling).
    pub highest_position: u64,
    /// Positions handed out and not yet served.
    pub waiting: u64,
    /// Tickets redeemed (first admissions).
    pub admitted: u64,
    pub config: EventConfig,
    pub rates: Rates,
    /// Start (unix seconds) of the last advancer step applied; 0 = none yet.
    pub last_step_at: u64,
    pub created_at: u64,
    pub updated_at: u64,
    pub rev: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prequeue_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<CloseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_commitment: Option<String>,
    /// Only once the pre-queue is sealed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_counts: Option<Vec<u64>>,
    /// Pre-queue joins so far, or P once sealed.
    pub prequeue_size: u64,
    /// `health` while the health gate holds the advancer (an alarm hold is only seen by the
    /// advancer: logs and the `AdvancerHeld` metric).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<HoldBy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_since: Option<u64>,
    /// A standby event's alarm (docs/lifecycle.md#standby).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standby_alarm: Option<String>,
    /// Its state as the advancer reads it now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standby_alarm_state: Option<StandbyAlarmState>,
    pub outflow: OutflowFigures,
}

/// A standby alarm's state as tier 1 reads it: `unreadable` means the advancer cannot open
/// the event when the alarm fires (an alarm deleted or renamed since it was set, or denied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StandbyAlarmState {
    Ok,
    Alarm,
    Unreadable,
}

/// How the line is flowing out (docs/outflow.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutflowFigures {
    pub mode: OutflowMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_per_minute: Option<u64>,
    /// Redeemed admissions over the last minute (`null` until a minute of samples exists).
    pub redeemed_per_minute: Option<f64>,
    /// Positions served over the last minute.
    pub served_per_minute: Option<f64>,
    /// Share of served positions that did not show up, from the lagged window the
    /// `targetArrivals` controller uses (`null` without enough data).
    pub no_show_share: Option<f64>,
    /// Admissions the site ended early (`release`).
    pub released: u64,
}

/// The public status document (docs/lifecycle.md#the-public-status-document): the same body
/// for every visitor, cacheable for a second.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicStatus {
    pub event_id: String,
    pub state: EventState,
    pub serving_counter: u64,
    pub issued: u64,
    pub served_per_second: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<CloseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_commitment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_counts: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prequeue_size: Option<u64>,
    pub updated_at: u64,
}

/// Recent rates over the last minute (`null` while unknown).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rates {
    pub window_seconds: u64,
    pub served_per_second: Option<f64>,
    pub joins_per_second: Option<f64>,
}

pub(super) fn commitment(rec: &EventRecord) -> Option<String> {
    rec.seed.as_deref().and_then(|s| Seed::from_hex(s).ok()).map(|s| s.commitment())
}

fn outflow_figures(rec: &EventRecord, counts: &ShardCounts, now: u64) -> OutflowFigures {
    let inputs = outflow::StepInputs {
        config: &rec.config,
        samples: &rec.samples,
        now,
        serving: rec.serving_counter,
        redeemed: counts.total_redeemed(),
        released: counts.total_released(),
        steady_since: rec.steady_since(),
    };
    let plan = outflow::plan(&inputs);
    let has_data = rec.serving_counter >= outflow::MIN_SERVED_FOR_ESTIMATE;
    OutflowFigures {
        mode: rec.config.mode,
        target_per_minute: (rec.config.mode == OutflowMode::TargetArrivals)
            .then_some(rec.config.target_arrivals_per_minute),
        redeemed_per_minute: plan.arrivals_per_minute,
        served_per_minute: rec.served_per_second(now).map(|r| r * 60.0),
        no_show_share: has_data.then(|| 1.0 - outflow::show_rate(&inputs)),
        released: counts.total_released(),
    }
}

pub(super) fn build_status(rec: EventRecord, counts: &ShardCounts, now: u64) -> EventStatus {
    let outflow = outflow_figures(&rec, counts, now);
    let sealed = rec.sealed_counts.is_some();
    let line = Line { counts, p: rec.prequeue_total() };
    // Before the seal, the pre-queue joins stand in line too (their positions are drawn later).
    let unsealed_pre = if sealed { 0 } else { counts.total_pre() };
    let issued = line.issued() + unsealed_pre;
    EventStatus {
        event_id: rec.event.to_string(),
        state: rec.state,
        active: rec.active(),
        issued,
        serving_counter: rec.serving_counter,
        highest_position: line.highest(),
        waiting: line.waiting(rec.serving_counter) + unsealed_pre,
        admitted: counts.total_redeemed(),
        config: rec.config,
        rates: Rates {
            window_seconds: RATE_WINDOW_SECS,
            served_per_second: rec.served_per_second(now),
            joins_per_second: joins_per_second(&rec.samples, now, issued),
        },
        last_step_at: rec.last_step_at,
        created_at: rec.created_at,
        updated_at: rec.updated_at,
        rev: rec.rev,
        prequeue_at: rec.schedule.map(|s| s.prequeue_at),
        open_at: rec.schedule.map(|s| s.open_at),
        close_at: rec.schedule.and_then(|s| s.close_at),
        opened_at: rec.opened_at,
        close_reason: rec.close_reason,
        message: rec.message.clone(),
        seed_commitment: commitment(&rec),
        seed: rec.seed.clone().filter(|_| sealed),
        sealed_counts: rec.sealed_counts.clone(),
        prequeue_size: if sealed { rec.prequeue_total() } else { counts.total_pre() },
        held_by: rec.hold.as_ref().map(|h| h.by),
        hold_reason: rec.hold.as_ref().map(|h| h.reason.clone()),
        held_since: rec.hold.as_ref().map(|h| h.since),
        standby_alarm: rec.standby_alarm.clone(),
        standby_alarm_state: None,
        outflow,
    }
}

/// `GET /vwr/page/{eventId}` (docs/brand.md): the event's page settings, the same for every
/// visitor, cached a minute at the CDN; only `eventId` and `updatedAt` when none are set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicPage {
    pub event_id: String,
    #[serde(flatten)]
    pub page: crate::model::PageSettings,
    /// Unix seconds of the event item's last change.
    pub updated_at: u64,
}
