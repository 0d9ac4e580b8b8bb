//! What the tier-2 operations answer: typed data, serialized as the JSON bodies of
//! docs/api.md; the line document and the wait estimate are built here from the store's
//! figures. Headers and cookies are `http`'s business.

use std::time::Duration;

use serde::Serialize;
use vwr_core::EventId;
use vwr_core::hold::Held;

use crate::model::{Figures, LineOrder, LineView};

/// The answer of check / status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueAnswer {
    pub status: &'static str,
    pub position: u64,
    pub people_ahead: u64,
    pub people_behind: u64,
    pub queue_size: u64,
    pub estimated_wait_seconds: u64,
    /// Waiting: when to poll again. Active: when to call `status` again for a fresh entry
    /// token (well before `expiresAt`).
    pub next_poll_seconds: u64,
    pub current_users: u64,
    pub threshold: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_token: Option<String>,
    /// When the entry token expires (seconds since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When the admission itself ends (seconds since the epoch); tokens are refreshed up to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission_ends_at: Option<u64>,
    /// This `check` gave back the place a timeout had taken (docs/invariants.md#23); absent
    /// otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restored: bool,
    /// Queued, in a `check` answer: the caller's score in line. While the line document's
    /// `front` is at or below it the caller is still in line; once `front` passes it (or is
    /// `null`), the caller has left the line and asks `status` (docs/api.md#the-line-document).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_score: Option<u64>,
    /// With `lineScore`: when this answer was made, kept in milliseconds since the epoch and
    /// answered as `checkedAt` in seconds with a millisecond fraction (docs/api.md#times). A
    /// line document tells about the caller only if its `updatedAt` is not earlier: an older
    /// one was read before the caller joined, and its `front` may have passed a score not yet
    /// in line.
    #[serde(
        rename = "checkedAt",
        skip_serializing_if = "Option::is_none",
        serialize_with = "epoch_secs::opt"
    )]
    pub checked_at_ms: Option<u64>,
    /// Active: when the admission was made (the store's clock), kept in milliseconds since the
    /// epoch and answered as `admittedAt` in seconds with a millisecond fraction.
    #[serde(
        rename = "admittedAt",
        skip_serializing_if = "Option::is_none",
        serialize_with = "epoch_secs::opt"
    )]
    pub admitted_at_ms: Option<u64>,
    /// What tier 2 holds for the caller, signed into their identity cookie (not in the body).
    #[serde(skip)]
    pub held: Option<Held>,
}

/// The line document of an event, `GET /api/queue/line/{eventId}`: the same for everyone,
/// cached by CloudFront for a second (docs/api.md#the-line-document).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineDocument {
    pub event_id: String,
    /// People in the line.
    pub waiting: u64,
    /// Slots taken.
    pub active: u64,
    pub threshold: u64,
    /// The score of the first person in line; `null` when nobody waits.
    pub front: Option<u64>,
    /// `[place, score]` of up to 16 people spread over the line, the front and the back
    /// included: a visitor's place is between the two marks around its own score.
    pub marks: Vec<[u64; 2]>,
    /// Admissions per second over the last minute.
    pub admitted_per_second: f64,
    /// The rate wait estimates use (admissions per second; docs/api.md#poll-hints-and-estimates).
    pub estimate_rate: Option<f64>,
    /// When the read behind this document began, kept in milliseconds since the epoch and
    /// answered as `updatedAt` in seconds with a millisecond fraction (docs/api.md#times): it
    /// knows of every join answered (`checkedAt`) before then.
    #[serde(rename = "updatedAt", serialize_with = "epoch_secs::serialize")]
    pub updated_at_ms: u64,
}

/// Times in an answer: seconds since the Unix epoch, with a fraction of milliseconds where
/// they are kept to the millisecond (docs/api.md#times, docs/adr/0034-times-in-seconds.md).
/// `ms / 1000` is the f64 nearest to the decimal, which serde_json prints in its shortest form
/// (`1764337871234` → `1764337871.234`); it keeps the order of the milliseconds, so clients
/// compare two such times as the server did.
pub mod epoch_secs {
    use serde::Serializer;

    /// Seconds since the epoch of `ms` milliseconds since the epoch.
    pub fn of_millis(ms: u64) -> f64 {
        ms as f64 / 1000.0
    }

    /// Serializes milliseconds since the epoch as seconds.
    pub fn serialize<S: Serializer>(ms: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(of_millis(*ms))
    }

    /// [`serialize`] for an optional time (absent ones are skipped by the field).
    pub fn opt<S: Serializer>(ms: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Some(ms) => serialize(ms, s),
            None => s.serialize_none(),
        }
    }
}
impl LineDocument {
    pub(super) fn of(event: &EventId, v: &LineView, admission_ttl_ms: u64, now_ms: u64) -> Self {
        Self {
            event_id: event.to_string(),
            waiting: v.figures.queue_size,
            active: v.figures.active,
            threshold: v.figures.threshold,
            front: v.front,
            marks: v.marks.iter().map(|(p, s)| [*p, *s]).collect(),
            admitted_per_second: v.figures.admitted_last_60s as f64 / 60.0,
            estimate_rate: estimate_rate(&v.figures, admission_ttl_ms),
            updated_at_ms: now_ms,
        }
    }
}

/// A signed tier-2 identity (docs/tokens.md) and how long it lasts: `http` sends it as the
/// identity cookie `vwr_t2_{eventId}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityToken {
    pub token: String,
    pub ttl_secs: u64,
}

/// Tier-2 figures for the admin status.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier2Status {
    pub event_id: String,
    pub registered: bool,
    pub threshold: Option<u64>,
    pub line_order: Option<LineOrder>,
    pub waiting: u64,
    /// Slots taken (released slots still held by a valid entry token included).
    pub active: u64,
    /// Of `active`: slots of users who left, held until their last entry token expires.
    pub held: u64,
    /// Places and admissions kept for users a timeout removed, until they come back
    /// (docs/invariants.md#23).
    pub evicted_places: u64,
    pub pending_notices: u64,
    pub admitted_last_60s: u64,
    pub admitted_per_second: f64,
}

/// How long CloudFront keeps a line document (`max-age`).
pub const LINE_DOCUMENT_TTL: Duration = Duration::from_secs(1);

/// How long admissions must have run before their measured rate is trusted: the rate window.
pub const MEASURED_RATE_AFTER_SECS: u64 = 60;

/// The admission rate a queued user's wait is estimated from
/// (docs/api.md#poll-hints-and-estimates), as tier 1 does with its own data: admissions per
/// second over the last 60 s once the event's first admission is a minute old and the rate is
/// above 0; before that (a young event, or a minute without admissions), the configured rate
/// `threshold ÷ admission TTL` (in steady state each slot frees up once per admission TTL);
/// `None` without either.
pub fn estimate_rate(figures: &Figures, admission_ttl_ms: u64) -> Option<f64> {
    let measured_for = figures.since_first_admission_secs.unwrap_or(0);
    if measured_for >= MEASURED_RATE_AFTER_SECS && figures.admitted_last_60s > 0 {
        return Some(figures.admitted_last_60s as f64 / 60.0);
    }
    (figures.threshold > 0 && admission_ttl_ms > 0)
        .then(|| figures.threshold as f64 * 1000.0 / admission_ttl_ms as f64)
}

#[cfg(test)]
mod tests {
    use vwr_core::hints::estimated_wait_seconds;

    use super::*;

    fn figures(threshold: u64, admitted_last_60s: u64, since: Option<u64>) -> Figures {
        Figures {
            queue_size: 1000,
            active: threshold,
            threshold,
            admitted_last_60s,
            since_first_admission_secs: since,
        }
    }

    /// Until the first admission is a minute old the configured rate (threshold ÷ admission
    /// TTL); then the measured one while it is above 0 (issue 12 #4, as tier 1).
    #[test]
    fn the_configured_rate_until_a_minute_of_admissions() {
        let ttl = 600_000; // 10 min: 100 slots free up 1/6 per second
        let configured = Some(100.0 / 600.0);
        assert_eq!(estimate_rate(&figures(100, 0, None), ttl), configured, "nobody admitted yet");
        assert_eq!(estimate_rate(&figures(100, 300, Some(0)), ttl), configured, "a burst at the start");
        assert_eq!(estimate_rate(&figures(100, 300, Some(59)), ttl), configured);
        assert_eq!(estimate_rate(&figures(100, 300, Some(60)), ttl), Some(5.0), "a whole minute");
        assert_eq!(estimate_rate(&figures(100, 30, Some(3600)), ttl), Some(0.5));
        assert_eq!(
            estimate_rate(&figures(100, 0, Some(3600)), ttl),
            configured,
            "a minute without admissions"
        );
        assert_eq!(estimate_rate(&figures(0, 0, None), ttl), None);
        assert_eq!(estimate_rate(&figures(100, 0, None), 0), None);
        // Place 100 of a young event: 600 s, not the placeholder max(100 / 50, 5) = 5 s.
        assert_eq!(estimated_wait_seconds(100, estimate_rate(&figures(100, 300, Some(10)), ttl)), 600);
        assert_eq!(estimated_wait_seconds(100, estimate_rate(&figures(100, 300, Some(61)), ttl)), 20);
    }

    /// Every time of an answer is in seconds since the epoch; those kept to the millisecond
    /// carry it as a fraction, printed in the shortest form (docs/api.md#times).
    #[test]
    fn times_are_answered_in_seconds_with_a_millisecond_fraction() {
        let view = LineView { figures: figures(2, 0, None), front: None, marks: Vec::new() };
        let doc = LineDocument::of(&EventId::parse("e1").unwrap(), &view, 600_000, 1_764_337_871_234);
        let text = serde_json::to_string(&doc).unwrap();
        assert!(text.contains(r#""updatedAt":1764337871.234"#), "{text}");
        let doc = LineDocument { updated_at_ms: 1_764_337_871_000, ..doc };
        assert!(serde_json::to_string(&doc).unwrap().contains(r#""updatedAt":1764337871.0"#));
        // Distinct milliseconds stay distinct and in order once in seconds.
        let ms = 1_764_337_871_999u64;
        assert!(epoch_secs::of_millis(ms) < epoch_secs::of_millis(ms + 1));
        assert_eq!(epoch_secs::of_millis(ms).to_string(), "1764337871.999");
    }
}
