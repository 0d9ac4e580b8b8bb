//! The figures: the admin status as read (every field optional) and the live rates.

use super::*;
use serde_json::Value;
use std::collections::VecDeque;

/// The tier-2 admin status (`GET /api/queue/admin/status/{eventId}`, or the `tier2` object of
/// the tier-1 status in `vwr dev`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tier2 {
    pub registered: Option<bool>,
    pub threshold: Option<u64>,
    pub line_order: Option<String>,
    pub active: Option<u64>,
    pub waiting: Option<u64>,
    pub held: Option<u64>,
    pub admitted_per_second: Option<f64>,
}

impl Tier2 {
    /// Reads a tier-2 status object; `None` when `v` is not an object.
    pub fn from_json(v: &Value) -> Option<Self> {
        v.as_object()?;
        Some(Self {
            registered: v.get("registered").and_then(Value::as_bool),
            threshold: uint(v, "threshold"),
            line_order: text(v, "lineOrder"),
            active: uint(v, "active"),
            waiting: uint(v, "waiting"),
            held: uint(v, "held"),
            admitted_per_second: float(v, "admittedPerSecond"),
        })
    }
}

/// The `outflow` object of the admin status (docs/outflow.md): how the line flows out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outflow {
    pub mode: Option<String>,
    pub target_per_minute: Option<u64>,
    pub redeemed_per_minute: Option<f64>,
    pub served_per_minute: Option<f64>,
    /// Share of served positions that did not show up, over the controller's lagged window.
    pub no_show_share: Option<f64>,
    pub released: Option<u64>,
}

impl Outflow {
    /// Reads an `outflow` object; `None` when `v` is not an object.
    pub fn from_json(v: &Value) -> Option<Self> {
        v.as_object()?;
        Some(Self {
            mode: text(v, "mode"),
            target_per_minute: uint(v, "targetPerMinute"),
            redeemed_per_minute: float(v, "redeemedPerMinute"),
            served_per_minute: float(v, "servedPerMinute"),
            no_show_share: float(v, "noShowShare"),
            released: uint(v, "released"),
        })
    }
}

/// The health gate's hold (docs/outflow.md#health-gate), when the status shows one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hold {
    /// `health` (an operator or a health check, through the admin API).
    pub by: String,
    pub reason: Option<String>,
    pub since: Option<u64>,
}

/// The fields of the tier-1 admin status that the console shows; all optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub state: Option<String>,
    pub active: Option<bool>,
    pub message_en: Option<String>,
    pub message_ko: Option<String>,
    /// The message in the page's other languages (label, text), e.g. `("message ja", …)`.
    pub message_more: Vec<(&'static str, String)>,
    pub close_reason: Option<String>,
    pub prequeue_at: Option<u64>,
    pub open_at: Option<u64>,
    pub close_at: Option<u64>,
    pub opened_at: Option<u64>,
    pub seed_commitment: Option<String>,
    pub seed_revealed: bool,
    pub issued: Option<u64>,
    pub serving_counter: Option<u64>,
    pub highest_position: Option<u64>,
    pub waiting: Option<u64>,
    pub admitted: Option<u64>,
    pub prequeue_size: Option<u64>,
    pub batch_size: Option<u64>,
    pub interval_seconds: Option<u64>,
    /// `config.mode`: `fixed` or `targetArrivals`.
    pub mode: Option<String>,
    pub target_arrivals_per_minute: Option<u64>,
    pub max_batch_size: Option<u64>,
    pub served_per_second: Option<f64>,
    pub joins_per_second: Option<f64>,
    pub outflow: Option<Outflow>,
    pub hold: Option<Hold>,
    /// A standby event's alarm and its state as tier 1 reads it (`ok`, `alarm`, `unreadable`;
    /// docs/lifecycle.md#standby).
    pub standby_alarm: Option<(String, Option<String>)>,
    pub tier2: Option<Tier2>,
}

impl Status {
    /// Reads an admin status answer. `Err` only when it is not a JSON object.
    pub fn from_json(v: &Value) -> Result<Self, WatchError> {
        if !v.is_object() {
            return Err(WatchError::NotAnObject(clip(&v.to_string(), 120)));
        }
        let message = v.get("message").filter(|m| m.is_object());
        let rates = v.get("rates");
        let config = v.get("config");
        Ok(Self {
            state: text(v, "state"),
            active: v.get("active").and_then(Value::as_bool),
            message_en: message.and_then(|m| text(m, "en")).filter(|s| !s.is_empty()),
            message_ko: message.and_then(|m| text(m, "ko")).filter(|s| !s.is_empty()),
            message_more: [
                ("ja", "message ja"),
                ("zh-Hans", "message zh-Hans"),
                ("zh-Hant", "message zh-Hant"),
            ]
            .into_iter()
            .filter_map(|(lang, label)| {
                message.and_then(|m| text(m, lang)).filter(|s| !s.is_empty()).map(|t| (label, t))
            })
            .collect(),
            close_reason: text(v, "closeReason"),
            prequeue_at: uint(v, "prequeueAt"),
            open_at: uint(v, "openAt").or_else(|| uint(v, "opensAt")),
            close_at: uint(v, "closeAt").or_else(|| uint(v, "closesAt")),
            opened_at: uint(v, "openedAt"),
            seed_commitment: text(v, "seedCommitment"),
            seed_revealed: v.get("seed").is_some_and(|s| s.as_str().is_some_and(|s| !s.is_empty())),
            issued: uint(v, "issued"),
            serving_counter: uint(v, "servingCounter"),
            highest_position: uint(v, "highestPosition"),
            waiting: uint(v, "waiting"),
            admitted: uint(v, "admitted"),
            prequeue_size: uint(v, "prequeueSize"),
            batch_size: config.and_then(|c| uint(c, "batchSize")),
            interval_seconds: config.and_then(|c| uint(c, "intervalSeconds")),
            mode: config.and_then(|c| text(c, "mode")),
            target_arrivals_per_minute: config.and_then(|c| uint(c, "targetArrivalsPerMinute")),
            max_batch_size: config.and_then(|c| uint(c, "maxBatchSize")),
            served_per_second: rates.and_then(|r| float(r, "servedPerSecond")),
            joins_per_second: rates.and_then(|r| float(r, "joinsPerSecond")),
            outflow: v.get("outflow").and_then(Outflow::from_json),
            hold: text(v, "heldBy").filter(|b| !b.is_empty()).map(|by| Hold {
                by,
                reason: text(v, "holdReason").filter(|r| !r.is_empty()),
                since: uint(v, "heldSince").filter(|t| *t > 0),
            }),
            standby_alarm: text(v, "standbyAlarm").map(|a| (a, text(v, "standbyAlarmState"))),
            tier2: v.get("tier2").and_then(Tier2::from_json),
        })
    }

    /// The outflow mode: `config.mode`, else `outflow.mode`.
    pub fn mode(&self) -> Option<&str> {
        self.mode.as_deref().or_else(|| self.outflow.as_ref().and_then(|o| o.mode.as_deref()))
    }

    /// The lifecycle state; from `active` for a server that does not send `state`.
    pub fn state(&self) -> Option<&str> {
        self.state.as_deref().or(match self.active {
            Some(true) => Some("active"),
            Some(false) => Some("inactive"),
            None => None,
        })
    }

    /// The share of served positions that did not show up: the status's `outflow.noShowShare`
    /// (the recent, lagged window the `targetArrivals` controller uses) when present, else
    /// 1 − admitted / servingCounter over the whole sale (not yet redeemed included).
    pub fn no_show_share(&self) -> Option<f64> {
        self.outflow_no_show_share().or_else(|| self.overall_no_show_share())
    }

    /// `outflow.noShowShare`, within 0–1.
    pub fn outflow_no_show_share(&self) -> Option<f64> {
        self.outflow.as_ref().and_then(|o| o.no_show_share).map(|f| f.clamp(0.0, 1.0))
    }

    /// 1 − admitted / servingCounter.
    pub fn overall_no_show_share(&self) -> Option<f64> {
        let serving = self.serving_counter.filter(|s| *s > 0)?;
        let admitted = self.admitted?;
        Some((1.0 - admitted as f64 / serving as f64).clamp(0.0, 1.0))
    }

    /// "HELD by health: origin 5xx since 12:03:04Z", or `None` when nothing holds the advancer.
    pub fn hold_text(&self) -> Option<String> {
        let h = self.hold.as_ref()?;
        let mut t = format!("HELD by {}", h.by);
        if let Some(r) = &h.reason {
            t.push_str(&format!(": {}", clip(r, 200)));
        }
        if let Some(at) = h.since {
            t.push_str(&format!(" since {}", fmt_clock(at as f64)));
        }
        Some(t)
    }
}

pub(super) fn uint(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

pub(super) fn float(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64).filter(|f| f.is_finite())
}

pub(super) fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_owned)
}

// ---------------------------------------------------------------------------------------------
// Samples and live rates
// ---------------------------------------------------------------------------------------------

/// One poll's counters, at the local time of the answer (unix seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub at: f64,
    pub issued: u64,
    pub admitted: u64,
    pub serving: u64,
}

/// Rates computed from successive samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveRates {
    pub joins_per_second: f64,
    pub admitted_per_second: f64,
    pub served_per_second: f64,
    /// Seconds actually covered (≤ the window asked for).
    pub over: f64,
}

/// Window of the live rates, in seconds.
pub const RATE_WINDOW_SECS: f64 = 10.0;
/// How far back the sparklines go, in seconds.
pub const HISTORY_SECS: f64 = 120.0;
pub(super) const MAX_SAMPLES: usize = 4096;

/// Rates between the newest sample and the oldest one at most `window` seconds older.
pub fn live_rates(samples: &VecDeque<Sample>, window: f64) -> Option<LiveRates> {
    let last = samples.back()?;
    let first = samples.iter().find(|s| last.at - s.at <= window + 0.5)?;
    let dt = last.at - first.at;
    if dt <= 0.0 {
        return None;
    }
    let per = |a: u64, b: u64| b.saturating_sub(a) as f64 / dt;
    Some(LiveRates {
        joins_per_second: per(first.issued, last.issued),
        admitted_per_second: per(first.admitted, last.admitted),
        served_per_second: per(first.serving, last.serving),
        over: dt,
    })
}

/// Per-interval rates between consecutive samples (oldest first), for a sparkline.
pub fn rate_series(samples: &VecDeque<Sample>, pick: fn(&Sample) -> u64) -> Vec<u64> {
    samples
        .iter()
        .zip(samples.iter().skip(1))
        .filter(|(a, b)| b.at > a.at)
        .map(|(a, b)| (pick(b).saturating_sub(pick(a)) as f64 / (b.at - a.at)).round() as u64)
        .collect()
}
