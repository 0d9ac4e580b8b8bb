//! The waiting page's rules as the visitors follow them: what a refused `check` means for the
//! ticket, the pace of the status document in each state of the sale, the back-off, the jitter,
//! `Retry-After`, and the booking line's marks and reads (ADR 0032).
//!
//! The page is the truth (`static/assets/app.js`; the booking line's `static/queue/tier2.js`);
//! the rehearsal's visitor keeps the same rules in `rehearsal/vwr_page.py`. The vectors of
//! `static/test/page-rules.json` hold all three to them (`tests/page_rules.rs` here,
//! `static/test/page-rules.test.mjs`, `rehearsal/test_page_rules.py`).

use std::time::UNIX_EPOCH;

use serde_json::Value;

// ---- What a refused `check` means for the ticket ----

/// The tier-1 API's verdicts on a ticket (docs/api.md, `check`): the only answers on which the
/// waiting page forgets its ticket and joins again (docs/invariants.md#15). An honest visitor
/// of the harness (the right secret, its own event, a ticket within its lifetime, never
/// released) causes none of them.
pub const TICKET_VERDICTS: [&str; 6] = [
    "invalid_request_id",
    "wrong_event",
    "proof_required",
    "request_id_expired",
    "admission_expired",
    "session_ended",
];

/// The verdict in a refused `check`'s body, if it is one of [`TICKET_VERDICTS`]: the API's
/// JSON `error` decides, whatever the status. Anything else — a WAF's HTML page (no JSON: the
/// body reads as null), API Gateway's `{"message": "Forbidden"}`, `origin_forbidden`, a 429 —
/// is no verdict.
pub fn ticket_verdict(body: &Value) -> Option<&'static str> {
    let code = body["error"].as_str()?;
    TICKET_VERDICTS.iter().find(|v| **v == code).copied()
}

/// What a refused `check` (not a 200) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A verdict on the ticket (its code): forget it and join again.
    Rejoin(&'static str),
    /// The event's answer: stop waiting (why, as the report's `lostBy`).
    End(&'static str),
    /// No verdict: keep the ticket and its place, back off, ask again.
    Backoff,
}

/// A refused `check`, by its body's `error` as the page reads it.
pub fn refusal(body: &Value) -> Refusal {
    if let Some(code) = ticket_verdict(body) {
        return Refusal::Rejoin(code);
    }
    match body["error"].as_str() {
        Some("event_not_found") => Refusal::End("event_not_found"),
        Some("event_closed") => Refusal::End("closed"),
        // Not gated: the page goes on to `next`; for a visitor of the harness, the end.
        Some("event_not_active") => Refusal::End("inactive"),
        Some("invalid_event_id") => Refusal::End("invalid_event_id"),
        Some("enqueue_token_required") => Refusal::End("enqueue_token_required"),
        _ => Refusal::Backoff,
    }
}

// ---- The pace of the status document ----

/// The waiting page reads the status document every ~10 s before the open.
pub const STATUS_POLL_SECONDS: f64 = 10.0;
/// … and every ~15 s while the sale is paused.
pub const PAUSED_POLL_SECONDS: f64 = 15.0;
/// At the open, each page waits a random 0–5 s before its first call.
pub const OPEN_SPREAD_SECONDS: f64 = 5.0;

/// The wait at the open for a `random` draw in [0, 1): `random` × 5 s.
pub fn open_spread(random: f64) -> f64 {
    OPEN_SPREAD_SECONDS * random
}

/// The server's poll hint as the page takes it: 1–60 s, 5 s without a number (the page's
/// `pollSeconds`).
pub fn hint_of(body: &Value) -> f64 {
    body["nextPollSeconds"].as_f64().map_or(5.0, |s| s.clamp(1.0, 60.0))
}

/// Seconds until the turn of `place` (1 = next) at `rate` positions per second; without a
/// rate `max(place ÷ 50, 5)` — the page's `waitSeconds`.
pub fn wait_seconds(place: u64, rate: Option<f64>) -> f64 {
    if place == 0 {
        return 0.0;
    }
    match rate {
        Some(r) if r > 0.0 && r.is_finite() => (place as f64 / r).ceil(),
        _ => ((place / 50) as f64).max(5.0),
    }
}

/// Seconds between looks at the status document in line: a quarter of the expected wait,
/// 1–30 s — the page's `pollForWait` (the server's `nextPollSeconds` follows the same rule).
pub fn poll_for_wait(wait: f64) -> f64 {
    (wait / 4.0).clamp(1.0, 30.0)
}

/// What to do after a status document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Look {
    /// `check` at once: the turn has come (or came before a pause or the close).
    Check,
    /// The status document again after these seconds (before jitter).
    Status(f64),
    /// Stop waiting (why, as the report's `lostBy`).
    End(&'static str),
    /// Not the status document (no `state`): the back-off.
    Backoff,
}

/// After a 200 status document `doc`, for a ticket at `position` whose last estimate implied
/// `rate` (used while the document has no `servedPerSecond`): the page's `onStatus` in line.
pub fn status_look(doc: &Value, position: u64, rate: Option<f64>) -> Look {
    let Some(state) = doc["state"].as_str() else {
        return Look::Backoff;
    };
    let serving = doc["servingCounter"].as_u64().unwrap_or(0);
    let served = serving >= position;
    match state {
        "inactive" | "standby" => Look::End("inactive"),
        "closed" if served => Look::Check,
        "closed" => Look::End("closed"),
        "scheduled" | "prequeue" => Look::Status(STATUS_POLL_SECONDS),
        _ if served => Look::Check,
        "paused" => Look::Status(PAUSED_POLL_SECONDS),
        // open, or a state the page does not know
        _ => {
            let rate = doc["servedPerSecond"].as_f64().filter(|r| *r > 0.0).or(rate);
            Look::Status(poll_for_wait(wait_seconds(position.saturating_sub(serving).max(1), rate)))
        }
    }
}

// ---- Back-off, jitter, Retry-After ----

/// The page's back-off after `errors` refusals in a row that were no verdict: 2, 4, 8 … 60 s
/// (before jitter).
pub fn backoff_seconds(errors: u32) -> f64 {
    2f64.powi(i32::try_from(errors.clamp(1, 6)).unwrap_or(6)).min(60.0)
}

/// `seconds` ± 20 % for a `random` draw in [0, 1): the page's `jitter`.
pub fn jitter_seconds(seconds: f64, random: f64) -> f64 {
    seconds * (0.8 + 0.4 * random)
}

/// The longest wait a `Retry-After` can ask for.
pub const RETRY_AFTER_MAX_SECONDS: u64 = 3600;

/// Seconds from a `Retry-After` header at `now_ms` (ms since the epoch): delta-seconds or an
/// HTTP date, at most an hour; `None` when it is neither (the page's `retryAfterSeconds`).
pub fn retry_after_seconds(header: Option<&str>, now_ms: f64) -> Option<u64> {
    let header = header.filter(|h| !h.is_empty())?.trim();
    if !header.is_empty() && header.bytes().all(|b| b.is_ascii_digit()) {
        let secs = header.parse::<u64>().unwrap_or(u64::MAX);
        return Some(secs.min(RETRY_AFTER_MAX_SECONDS));
    }
    let at = httpdate::parse_http_date(header).ok()?;
    let at_ms = match at.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -e.duration().as_secs_f64() * 1000.0,
    };
    let secs = ((at_ms - now_ms) / 1000.0).ceil().clamp(0.0, RETRY_AFTER_MAX_SECONDS as f64);
    // Whole seconds within 0..=3600: the cast is exact.
    Some(secs as u64)
}

/// The wait after a refusal with a `Retry-After` of `after` seconds: `after` × (1 + 0.2 ×
/// `random`), never less than the server asked.
pub fn retry_after_wait(after: f64, random: f64) -> f64 {
    after * (1.0 + 0.2 * random)
}

// ---- The booking line (tier 2's line document, ADR 0032) ----

/// A visitor's place in line from the line document's marks (`[place, score]`, in order): the
/// mark at or below its score, moved on in proportion to the scores up to the next mark,
/// rounded half up (the page's `placeOf`).
pub fn place_from_marks(marks: &[(u64, u64)], score: u64) -> u64 {
    let mut place = 1;
    for (i, &(p, s)) in marks.iter().enumerate() {
        if s > score {
            let Some(&(pa, sa)) = i.checked_sub(1).and_then(|j| marks.get(j)) else {
                return p;
            };
            let (pa, sa, p, s, score) = (pa as f64, sa as f64, p as f64, s as f64, score as f64);
            // A place: a whole number ≥ 0 for marks in line order.
            return (pa + ((p - pa) * (score - sa)) / (s - sa)).round().max(0.0) as u64;
        }
        place = p;
    }
    place
}

/// The longest pause between two reads within `threshold` of the front: a slot a visitor there
/// is given idles at most about this long (SPEC: known within 2 s, p90).
pub const LINE_NEAR_MAX_SECONDS: f64 = 2.0;

/// The longest pause between two reads of the line document.
pub const LINE_HINT_MAX_SECONDS: f64 = 120.0;

/// The longest pause before the visitor has seen its own place move (the cap of ADR 0026).
pub const LINE_UNSEEN_MAX_SECONDS: f64 = 30.0;

/// Seconds until the next look at the line document (ADR 0032; the page's `lineDelay`): within
/// `threshold` of the front, a quarter of the visitor's own expected wait, 1–2 s (every second
/// once the turn is seconds away); beyond them, a quarter of the wait to come within
/// `threshold`, 2–120 s. No rate: 1 s near the front, the slowest beyond.
pub fn line_hint(place: u64, threshold: u64, rate: Option<f64>) -> f64 {
    let Some(rate) = rate.filter(|r| *r > 0.0) else {
        return if place <= threshold { 1.0 } else { LINE_HINT_MAX_SECONDS };
    };
    if place <= threshold {
        return (place as f64 / rate / 4.0).clamp(1.0, LINE_NEAR_MAX_SECONDS);
    }
    ((place - threshold) as f64 / rate / 4.0).clamp(2.0, LINE_HINT_MAX_SECONDS)
}

/// Seconds until the next read of the line document (ADR 0032; the page's `nextRead`): the rule
/// of [`line_hint`] paced by the fastest of the document's rates (`doc_rate`: `estimateRate`,
/// `admittedPerSecond`) and the visitor's own progress (`observed`, the last positive one) —
/// early in a sale the estimate is the configured rate, often far below the real one — and at
/// most 30 s until the visitor has seen its place move.
pub fn next_line_read(place: u64, threshold: u64, doc_rate: Option<f64>, observed: Option<f64>) -> f64 {
    let observed = observed.filter(|r| *r > 0.0);
    let pace = [doc_rate, observed].into_iter().flatten().filter(|r| *r > 0.0).reduce(f64::max);
    let hint = line_hint(place, threshold, pace);
    if observed.is_some() { hint } else { hint.min(LINE_UNSEEN_MAX_SECONDS) }
}

/// The line document's rate: the fastest of `estimateRate` and `admittedPerSecond`.
pub fn line_doc_rate(doc: &Value) -> Option<f64> {
    [doc["estimateRate"].as_f64(), doc["admittedPerSecond"].as_f64()].into_iter().flatten().reduce(f64::max)
}

/// Seconds from a tier-2 answer that gives a line score to the first read of the line
/// document: [`line_hint`] at the rate its estimate implies (`position ÷
/// estimatedWaitSeconds`), not jittered.
pub fn first_line_read(answer: &Value) -> f64 {
    let position = answer["position"].as_u64().unwrap_or(1);
    let rate = answer["estimatedWaitSeconds"].as_f64().filter(|w| *w > 0.0).map(|w| position as f64 / w);
    line_hint(position, answer["threshold"].as_u64().unwrap_or(1), rate)
}

/// The wait before a read of the line document `seconds` away: jittered ± 20 % only above
/// 1 s (every second near the turn stays every second).
pub fn line_read_delay(seconds: f64, random: f64) -> f64 {
    if seconds > 1.0 { jitter_seconds(seconds, random) } else { seconds }
}

/// An older line document (read before the visitor joined): read again this much later.
pub const LINE_STALE_SECONDS: f64 = 0.5;
