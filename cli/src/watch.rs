//! `vwr watch {eventId}`: a live terminal console for the operator of a sale.
//!
//! Three layers, arrows down:
//! - [`run`]: the I/O loop (tokio). A ticker polls the admin status, a thread reads the
//!   terminal's keys into a channel, HTTP calls run in tasks and report back through another
//!   channel, so a slow answer never freezes the keys. `--once` prints [`snapshot`] instead.
//! - [`App`]: the pure state — the last figures, the recent samples the live rates come from,
//!   the prompt and confirmation state machine. `on_status`, `on_key` and `render` take the
//!   time as a parameter (unix seconds) and do no I/O, so the tests drive them directly.
//! - [`Status`]: the fields read from the admin status JSON, every one optional: a partial or
//!   odd answer shows "—" where a figure is missing, never a crash.
//!
//! Contract: docs/api.md (admin routes of tier 1 and tier 2), docs/lifecycle.md (states,
//! pause / resume / close / message), docs/outflow.md (modes, the `outflow` figures, the health
//! gate's hold: `heldBy`, `holdReason`, `heldSince`, `PUT /api/admin/vwr/health/{eventId}`).

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use http::Method;
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Sparkline, Wrap};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::admin::AdminTarget;
use crate::client::{Auth, HttpClient, Reply};

/// Options of `vwr watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// The event to watch.
    pub event_id: String,
    #[command(flatten)]
    pub target: AdminTarget,
    /// Time between polls of the admin status: seconds, or with a unit (`500ms`, `2s`).
    #[arg(long, default_value = "1", value_parser = parse_interval)]
    pub interval: Duration,
    /// Print one plain-text snapshot of the figures and exit (no terminal needed).
    #[arg(long)]
    pub once: bool,
    /// Base URL of the tier-2 admin API (`GET /api/queue/admin/status/{eventId}`, same
    /// credentials); without it, the `tier2` object of the tier-1 status is shown when present.
    #[arg(long)]
    pub tier2_url: Option<String>,
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(ms) = s.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(secs) = s.strip_suffix('s') {
        (secs, 1.0)
    } else {
        (s, 1.0)
    };
    let secs = num.trim().parse::<f64>().map_err(|_| format!("not a duration: {s:?}"))? * scale;
    if !(0.1..=3600.0).contains(&secs) {
        return Err(format!("interval {s:?} out of range (100ms to 3600s)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

// ---------------------------------------------------------------------------------------------
// The figures
// ---------------------------------------------------------------------------------------------

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
    pub tier2: Option<Tier2>,
}

impl Status {
    /// Reads an admin status answer. `Err` only when it is not a JSON object.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        if !v.is_object() {
            return Err(format!("unexpected answer (not a JSON object): {}", clip(&v.to_string(), 120)));
        }
        let message = v.get("message").filter(|m| m.is_object());
        let rates = v.get("rates");
        let config = v.get("config");
        Ok(Self {
            state: text(v, "state"),
            active: v.get("active").and_then(Value::as_bool),
            message_en: message.and_then(|m| text(m, "en")).filter(|s| !s.is_empty()),
            message_ko: message.and_then(|m| text(m, "ko")).filter(|s| !s.is_empty()),
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

fn uint(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

fn float(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64).filter(|f| f.is_finite())
}

fn text(v: &Value, k: &str) -> Option<String> {
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
const MAX_SAMPLES: usize = 4096;

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

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

/// Reason of a close (docs/lifecycle.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    SoldOut,
    Ended,
}

impl CloseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SoldOut => "sold_out",
            Self::Ended => "ended",
        }
    }
}

/// What a confirmed key asks the loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Pause {
        message: Option<String>,
    },
    Resume,
    Advance {
        by: u64,
    },
    Close {
        reason: CloseReason,
        message: Option<String>,
    },
    /// Both `None` clears the message.
    SetMessage {
        en: Option<String>,
        ko: Option<String>,
    },
    /// The health gate: `ok: false` holds the advancer (with a reason), `ok: true` lets it go on.
    Health {
        ok: bool,
        reason: Option<String>,
    },
    Quit,
}

impl Action {
    /// The admin call: method, path and body. `None` for [`Action::Quit`].
    pub fn request(&self, event_id: &str) -> Option<(Method, String, Option<Value>)> {
        let path = |op: &str| format!("/api/admin/vwr/{op}/{event_id}");
        Some(match self {
            Self::Pause { message } => {
                let body = match message {
                    Some(m) => json!({ "message": { "en": m } }),
                    None => json!({}),
                };
                (Method::POST, path("pause"), Some(body))
            }
            Self::Resume => (Method::POST, path("resume"), None),
            Self::Advance { by } => (Method::POST, path("advance"), Some(json!({ "by": by }))),
            Self::Close { reason, message } => {
                let mut body = json!({ "reason": reason.as_str() });
                if let Some(m) = message {
                    body["message"] = json!({ "en": m });
                }
                (Method::POST, path("close"), Some(body))
            }
            Self::SetMessage { en: None, ko: None } => {
                (Method::PUT, path("message"), Some(json!({ "message": null })))
            }
            Self::SetMessage { en, ko } => {
                let mut m = serde_json::Map::new();
                if let Some(en) = en {
                    m.insert("en".into(), json!(en));
                }
                if let Some(ko) = ko {
                    m.insert("ko".into(), json!(ko));
                }
                (Method::PUT, path("message"), Some(json!({ "message": m })))
            }
            Self::Health { ok, reason } => {
                let mut body = json!({ "ok": ok });
                if let Some(r) = reason {
                    body["reason"] = json!(r);
                }
                (Method::PUT, path("health"), Some(body))
            }
            Self::Quit => return None,
        })
    }

    /// A short name for the status line.
    pub fn label(&self) -> String {
        match self {
            Self::Pause { .. } => "pause".into(),
            Self::Resume => "resume".into(),
            Self::Advance { by } => format!("advance by {by}"),
            Self::Close { reason, .. } => format!("close ({})", reason.as_str()),
            Self::SetMessage { en: None, ko: None } => "clear message".into(),
            Self::SetMessage { .. } => "set message".into(),
            Self::Health { ok: true, .. } => "release the hold".into(),
            Self::Health { ok: false, .. } => "hold".into(),
            Self::Quit => "quit".into(),
        }
    }
}

/// Largest manual advance the API takes (docs/api.md).
pub const MAX_ADVANCE: u64 = 10_000_000;
/// Longest hold reason the API takes (docs/outflow.md#health-gate).
pub const MAX_HOLD_REASON: usize = 200;

/// What the console is asking for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Help,
    Prompt { kind: PromptKind, input: String, error: Option<String> },
    ChooseReason,
    Confirm { action: Action, question: String },
}

/// Which line of text a prompt reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKind {
    PauseMessage,
    AdvanceBy { default: Option<u64> },
    CloseMessage(CloseReason),
    MessageEn,
    MessageKo { en: Option<String> },
    HoldReason,
}

impl PromptKind {
    fn question(&self) -> String {
        match self {
            Self::PauseMessage => "Pause: message to visitors (en, optional; Enter to skip)".into(),
            Self::AdvanceBy { default: Some(d) } => {
                format!("Advance by how many positions? (Enter = {d}, the batch size)")
            }
            Self::AdvanceBy { default: None } => "Advance by how many positions?".into(),
            Self::CloseMessage(r) => {
                format!("Close ({}): message to visitors (en, optional; Enter to skip)", r.as_str())
            }
            Self::MessageEn => "Message in English (empty in both languages = clear)".into(),
            Self::MessageKo { .. } => "Message in Korean (empty in both languages = clear)".into(),
            Self::HoldReason => {
                "Hold the advancer (nobody new is let in): why? (shown in the status and the audit trail)"
                    .into()
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The app
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoticeKind {
    Info,
    Ok,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoticeSource {
    Poll,
    Keys,
    Action,
}

#[derive(Debug, Clone)]
struct Notice {
    text: String,
    kind: NoticeKind,
    source: NoticeSource,
}

/// The console's state. No I/O: the loop feeds it answers, keys and the time.
#[derive(Debug, Clone)]
pub struct App {
    event_id: String,
    status: Option<Status>,
    tier2_direct: Option<Tier2>,
    tier2_error: Option<String>,
    samples: VecDeque<Sample>,
    last_refresh: Option<f64>,
    now: f64,
    notice: Option<Notice>,
    mode: Mode,
    busy: Option<String>,
}

/// One labelled figure, shared by the screen and the `--once` snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: &'static str,
    pub value: String,
    pub style: Style,
}

fn row(label: &'static str, value: impl Into<String>) -> Row {
    Row { label, value: value.into(), style: Style::default() }
}

const DASH: &str = "—";

impl App {
    pub fn new(event_id: &str) -> Self {
        Self {
            event_id: event_id.to_owned(),
            status: None,
            tier2_direct: None,
            tier2_error: None,
            samples: VecDeque::new(),
            last_refresh: None,
            now: 0.0,
            notice: None,
            mode: Mode::Normal,
            busy: None,
        }
    }

    pub fn event_id(&self) -> &str {
        &self.event_id
    }

    pub fn status(&self) -> Option<&Status> {
        self.status.as_ref()
    }

    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    pub fn samples(&self) -> &VecDeque<Sample> {
        &self.samples
    }

    /// Moves the clock (unix seconds) for countdowns and "… ago".
    pub fn tick(&mut self, now: f64) {
        if now > self.now {
            self.now = now;
        }
    }

    /// A status answer arrived at `at` (unix seconds). A bad answer keeps the last figures
    /// and shows the error.
    pub fn on_status(&mut self, json: &Value, at: f64) {
        self.tick(at);
        let status = match Status::from_json(json) {
            Ok(s) => s,
            Err(e) => return self.on_poll_error(&e, at),
        };
        if let (Some(issued), Some(admitted), Some(serving)) =
            (status.issued, status.admitted, status.serving_counter)
        {
            let sample = Sample { at, issued, admitted, serving };
            let went_back = self.samples.back().is_some_and(|b| {
                at < b.at || issued < b.issued || admitted < b.admitted || serving < b.serving
            });
            if went_back {
                // The event was recreated (or a clock jumped): rates across that are nonsense.
                self.samples.clear();
            }
            self.samples.push_back(sample);
            while self.samples.len() > MAX_SAMPLES
                || self.samples.front().is_some_and(|f| at - f.at > HISTORY_SECS + RATE_WINDOW_SECS)
            {
                self.samples.pop_front();
            }
        }
        self.status = Some(status);
        self.last_refresh = Some(at);
        if self.notice.as_ref().is_some_and(|n| n.source == NoticeSource::Poll) {
            self.notice = None;
        }
    }

    /// A poll failed: the figures stay, the error shows.
    pub fn on_poll_error(&mut self, error: &str, at: f64) {
        self.tick(at);
        self.notice = Some(Notice {
            text: format!("poll failed at {}: {error}", fmt_clock(at)),
            kind: NoticeKind::Error,
            source: NoticeSource::Poll,
        });
    }

    /// The separate tier-2 admin status answered (`--tier2-url`).
    pub fn on_tier2(&mut self, json: &Value) {
        match Tier2::from_json(json) {
            Some(t) => {
                self.tier2_direct = Some(t);
                self.tier2_error = None;
            }
            None => self.tier2_error = Some("unexpected answer (not a JSON object)".into()),
        }
    }

    /// The separate tier-2 admin status failed.
    pub fn on_tier2_error(&mut self, error: &str) {
        self.tier2_error = Some(error.to_owned());
    }

    /// An action's answer: every admin route answers the status, so it refreshes the figures.
    pub fn on_action_result(&mut self, label: &str, result: Result<Value, String>, at: f64) {
        self.busy = None;
        match result {
            Ok(v) => {
                if v.is_object() && (v.get("issued").is_some() || v.get("state").is_some()) {
                    self.on_status(&v, at);
                }
                let state = v.get("state").and_then(Value::as_str).map(|s| format!(": now {s}"));
                self.notice = Some(Notice {
                    text: format!("{label}: done{}", state.unwrap_or_default()),
                    kind: NoticeKind::Ok,
                    source: NoticeSource::Action,
                });
            }
            Err(e) => {
                self.notice = Some(Notice {
                    text: format!("{label} failed: {e}"),
                    kind: NoticeKind::Error,
                    source: NoticeSource::Action,
                });
            }
        }
    }

    fn info(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice { text: text.into(), kind: NoticeKind::Info, source: NoticeSource::Keys });
    }

    /// A key. Returns what to do once the operator has confirmed it (or `Quit`).
    pub fn on_key(&mut self, key: KeyEvent) -> Option<Action> {
        if key.kind != KeyEventKind::Press {
            return None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Some(Action::Quit);
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => self.on_normal_key(key),
            Mode::Help => None,
            Mode::ChooseReason => {
                match key.code {
                    KeyCode::Char('s' | 'S' | '1') => {
                        self.prompt(PromptKind::CloseMessage(CloseReason::SoldOut))
                    }
                    KeyCode::Char('e' | 'E' | '2') => {
                        self.prompt(PromptKind::CloseMessage(CloseReason::Ended))
                    }
                    KeyCode::Esc | KeyCode::Char('n' | 'q') => self.info("close cancelled"),
                    _ => self.mode = Mode::ChooseReason,
                }
                None
            }
            Mode::Confirm { action, question } => match key.code {
                KeyCode::Char('y' | 'Y') => {
                    self.busy = Some(action.label());
                    self.info(format!("{}…", action.label()));
                    Some(action)
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                    self.info(format!("{} cancelled", action.label()));
                    None
                }
                _ => {
                    self.mode = Mode::Confirm { action, question };
                    None
                }
            },
            Mode::Prompt { kind, mut input, error } => {
                match key.code {
                    KeyCode::Esc => self.info("cancelled"),
                    KeyCode::Enter => self.submit(kind, input),
                    KeyCode::Backspace => {
                        input.pop();
                        self.mode = Mode::Prompt { kind, input, error: None };
                    }
                    KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        self.mode = Mode::Prompt { kind, input: String::new(), error: None };
                    }
                    KeyCode::Char(c)
                        if !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                    {
                        if input.chars().count() < 500 {
                            input.push(c);
                        }
                        self.mode = Mode::Prompt { kind, input, error: None };
                    }
                    _ => self.mode = Mode::Prompt { kind, input, error },
                }
                None
            }
        }
    }

    fn on_normal_key(&mut self, key: KeyEvent) -> Option<Action> {
        let KeyCode::Char(c) = key.code else {
            return (key.code == KeyCode::Esc).then_some(Action::Quit);
        };
        if matches!(c, 'p' | 'r' | 'a' | 'c' | 'm' | 'h')
            && let Some(busy) = &self.busy
        {
            let text = format!("wait for the answer to {busy}");
            self.info(text);
            return None;
        }
        match c {
            'q' => return Some(Action::Quit),
            '?' => self.mode = Mode::Help,
            'p' => self.prompt(PromptKind::PauseMessage),
            'r' => self.confirm(Action::Resume),
            'a' => {
                let default = self.status.as_ref().and_then(|s| s.batch_size).filter(|b| *b > 0);
                self.prompt(PromptKind::AdvanceBy { default });
            }
            'c' => self.mode = Mode::ChooseReason,
            'm' => self.prompt(PromptKind::MessageEn),
            // The health gate: a held event asks to release the hold, any other one a reason.
            'h' => match self.status.as_ref().map(|s| s.hold.is_some()) {
                None => self.info("no status yet: the health gate needs the event's figures"),
                Some(true) => self.confirm(Action::Health { ok: true, reason: None }),
                Some(false) => self.prompt(PromptKind::HoldReason),
            },
            _ => {}
        }
        None
    }

    fn prompt(&mut self, kind: PromptKind) {
        self.mode = Mode::Prompt { kind, input: String::new(), error: None };
    }

    fn confirm(&mut self, action: Action) {
        let e = &self.event_id;
        let question = match &action {
            Action::Pause { message: None } => format!("Pause event {e}?"),
            Action::Pause { message: Some(m) } => format!("Pause event {e} with message \"{m}\"?"),
            Action::Resume => format!("Resume event {e}?"),
            Action::Advance { by } => format!("Advance event {e} by {by} positions?"),
            Action::Close { reason, message: None } => format!("Close event {e} ({})?", reason.as_str()),
            Action::Close { reason, message: Some(m) } => {
                format!("Close event {e} ({}) with message \"{m}\"?", reason.as_str())
            }
            Action::SetMessage { en: None, ko: None } => format!("Clear the message of event {e}?"),
            Action::SetMessage { .. } => format!("Set the message of event {e}?"),
            Action::Health { ok: true, .. } => {
                let hold = self.status.as_ref().and_then(|s| s.hold.as_ref());
                let why = match hold {
                    Some(Hold { by, reason: Some(r), .. }) => format!(" (held by {by}: {})", clip(r, 60)),
                    Some(Hold { by, reason: None, .. }) => format!(" (held by {by})"),
                    None => String::new(),
                };
                format!("Release the hold on event {e}{why}?")
            }
            Action::Health { ok: false, reason: Some(r) } => {
                format!("Hold event {e} (nobody new is let in, everybody keeps their place): \"{r}\"?")
            }
            Action::Health { ok: false, reason: None } => format!("Hold event {e}?"),
            Action::Quit => "Quit?".to_owned(),
        };
        self.mode = Mode::Confirm { action, question: format!("{question} y/n") };
    }

    fn submit(&mut self, kind: PromptKind, input: String) {
        let trimmed = input.trim();
        let optional = (!trimmed.is_empty()).then(|| trimmed.to_owned());
        match kind {
            PromptKind::PauseMessage => self.confirm(Action::Pause { message: optional }),
            PromptKind::CloseMessage(reason) => self.confirm(Action::Close { reason, message: optional }),
            PromptKind::MessageEn => self.prompt(PromptKind::MessageKo { en: optional }),
            PromptKind::MessageKo { en } => self.confirm(Action::SetMessage { en, ko: optional }),
            PromptKind::HoldReason => match optional {
                None => self.mode = Mode::Prompt { kind, input, error: Some("enter a reason".into()) },
                Some(r) if r.chars().count() > MAX_HOLD_REASON => {
                    let error = Some(format!("at most {MAX_HOLD_REASON} characters"));
                    self.mode = Mode::Prompt { kind, input, error };
                }
                Some(r) => self.confirm(Action::Health { ok: false, reason: Some(r) }),
            },
            PromptKind::AdvanceBy { default } => {
                let parsed = if trimmed.is_empty() {
                    default.ok_or_else(|| "enter a number".to_owned())
                } else {
                    trimmed
                        .replace(['_', ','], "")
                        .parse::<u64>()
                        .map_err(|_| format!("{trimmed:?} is not a whole number"))
                };
                match parsed {
                    Ok(by) if (1..=MAX_ADVANCE).contains(&by) => self.confirm(Action::Advance { by }),
                    Ok(by) => {
                        let error = Some(format!("{by} is out of range (1 to {MAX_ADVANCE})"));
                        self.mode = Mode::Prompt { kind, input, error };
                    }
                    Err(e) => self.mode = Mode::Prompt { kind, input, error: Some(e) },
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Figures as rows
    // -----------------------------------------------------------------------------------------

    fn tier2(&self) -> Option<(&Tier2, &'static str)> {
        match (&self.tier2_direct, self.status.as_ref().and_then(|s| s.tier2.as_ref())) {
            (Some(t), _) => Some((t, "the tier-2 admin status")),
            (None, Some(t)) => Some((t, "the tier-1 status")),
            (None, None) => None,
        }
    }

    /// Lifecycle: state, message, close reason, countdown, seed.
    pub fn event_rows(&self) -> Vec<Row> {
        let Some(s) = &self.status else {
            return vec![row("state", "waiting for the first answer…")];
        };
        let state = s.state().unwrap_or(DASH);
        let mut rows = vec![Row {
            label: "state",
            value: state.to_owned(),
            style: state_style(state).add_modifier(Modifier::BOLD),
        }];
        if let Some(held) = s.hold_text() {
            let value = match s.hold.as_ref().and_then(|h| h.since) {
                Some(at) => format!("{held} ({} ago)", fmt_duration(self.now - at as f64)),
                None => held,
            };
            rows.push(Row { label: "hold", value, style: hold_style() });
        }
        let msg_style = Style::default().fg(Color::Magenta);
        match (&s.message_en, &s.message_ko) {
            (None, None) => rows.push(row("message", DASH)),
            (en, ko) => {
                if let Some(en) = en {
                    rows.push(Row { label: "message en", value: en.clone(), style: msg_style });
                }
                if let Some(ko) = ko {
                    rows.push(Row { label: "message ko", value: ko.clone(), style: msg_style });
                }
            }
        }
        if let Some(r) = &s.close_reason {
            rows.push(Row {
                label: "close reason",
                value: r.clone(),
                style: Style::default().fg(Color::Red),
            });
        }
        let pre_open = matches!(s.state(), Some("scheduled" | "prequeue"));
        if pre_open {
            if let (Some("scheduled"), Some(at)) = (s.state(), s.prequeue_at) {
                rows.push(row("prequeue at", countdown(at, self.now)));
            }
            let value = s.open_at.map_or_else(|| DASH.to_owned(), |at| countdown(at, self.now));
            rows.push(Row { label: "opens", value, style: Style::default().fg(Color::Cyan) });
        } else if let Some(at) = s.opened_at.filter(|a| *a > 0) {
            rows.push(row("opened at", fmt_utc(at as f64)));
        }
        if let Some(at) = s.close_at.filter(|a| *a > 0)
            && s.state() != Some("closed")
        {
            rows.push(row("closes", countdown(at, self.now)));
        }
        let seed = match &s.seed_commitment {
            Some(c) => {
                format!("{} · {}", short_hex(c), if s.seed_revealed { "revealed" } else { "not revealed" })
            }
            None if s.seed_revealed => "revealed".to_owned(),
            None => DASH.to_owned(),
        };
        rows.push(row("seed", seed));
        rows
    }

    /// The line: counters, no-show share, wait estimate.
    pub fn line_rows(&self) -> Vec<Row> {
        let s = self.status.clone().unwrap_or_default();
        let n = |v: Option<u64>| v.map_or_else(|| DASH.to_owned(), |v| v.to_string());
        let mut rows = vec![
            row("issued", n(s.issued)),
            row("serving counter", n(s.serving_counter)),
            row("waiting", n(s.waiting)),
            row("admitted", n(s.admitted)),
            row("prequeue size", n(s.prequeue_size)),
        ];
        let no_show = match (s.outflow_no_show_share(), s.overall_no_show_share()) {
            (Some(f), _) => format!("{:.1} % (recent)", f * 100.0),
            (None, Some(f)) => format!("{:.1} % (whole sale)", f * 100.0),
            (None, None) => DASH.to_owned(),
        };
        rows.push(row("no-show share", no_show));
        rows.push(row(
            "wait, last in line",
            self.wait_estimate().map_or_else(|| DASH.to_owned(), fmt_duration),
        ));
        rows
    }

    /// Seconds the last in line waits: waiting / served per second (the status's 60-s rate,
    /// else the live one).
    pub fn wait_estimate(&self) -> Option<f64> {
        let s = self.status.as_ref()?;
        let waiting = s.waiting?;
        let rate = s
            .served_per_second
            .filter(|r| *r > 0.0)
            .or_else(|| self.live().map(|l| l.served_per_second).filter(|r| *r > 0.0))?;
        Some(waiting as f64 / rate)
    }

    /// The live rates over the last [`RATE_WINDOW_SECS`].
    pub fn live(&self) -> Option<LiveRates> {
        live_rates(&self.samples, RATE_WINDOW_SECS)
    }

    /// joins/s and admitted/s: live 10-s figures and the status's 60-s figures.
    pub fn rate_rows(&self) -> Vec<Row> {
        let live = self.live();
        let s = self.status.clone().unwrap_or_default();
        let r = |v: Option<f64>| v.map_or_else(|| DASH.to_owned(), |v| format!("{v:.1}"));
        vec![
            row(
                "joins/s",
                format!("{} (10 s) · {} (60 s)", r(live.map(|l| l.joins_per_second)), r(s.joins_per_second)),
            ),
            row(
                "admitted/s",
                format!(
                    "{} (10 s) · served {} (60 s)",
                    r(live.map(|l| l.admitted_per_second)),
                    r(s.served_per_second)
                ),
            ),
        ]
    }

    /// Outflow (docs/outflow.md): the mode and its target, redeemed and served per minute,
    /// releases.
    pub fn outflow_rows(&self) -> Vec<Row> {
        let s = self.status.clone().unwrap_or_default();
        let o = s.outflow.clone().unwrap_or_default();
        let r = |v: Option<f64>| v.map_or_else(|| DASH.to_owned(), |v| format!("{v:.1}"));
        let target = o.target_per_minute.or(s.target_arrivals_per_minute).filter(|t| *t > 0);
        let mode = match s.mode() {
            Some("targetArrivals") => {
                let mut v = format!(
                    "targetArrivals · target {}/min",
                    target.map_or_else(|| DASH.to_owned(), |t| t.to_string())
                );
                if let Some(m) = s.max_batch_size {
                    v.push_str(&format!(" · at most {m}/step"));
                }
                v
            }
            Some("fixed") | None if s.batch_size == Some(0) => "fixed · manual advances only".to_owned(),
            Some("fixed") | None if s.batch_size.is_some() => format!(
                "fixed · {} every {}",
                s.batch_size.unwrap_or_default(),
                s.interval_seconds.map_or_else(|| DASH.to_owned(), |i| fmt_duration(i as f64))
            ),
            Some(other) => other.to_owned(),
            None => DASH.to_owned(),
        };
        let mut per_minute =
            format!("redeemed {} · served {}", r(o.redeemed_per_minute), r(o.served_per_minute));
        if let (Some(t), Some(got)) = (target, o.redeemed_per_minute)
            && s.mode() == Some("targetArrivals")
        {
            per_minute.push_str(&format!(" · {:.0} % of target", got / t as f64 * 100.0));
        }
        vec![
            Row { label: "mode", value: mode, style: Style::default().fg(Color::Cyan) },
            row("per minute", per_minute),
            row("released", o.released.map_or_else(|| DASH.to_owned(), |v| v.to_string())),
        ]
    }

    /// Tier 2, when known.
    pub fn tier2_rows(&self) -> Vec<Row> {
        let n = |v: Option<u64>| v.map_or_else(|| DASH.to_owned(), |v| v.to_string());
        let mut rows = Vec::new();
        match self.tier2() {
            Some((t, from)) if t.registered == Some(false) => {
                rows.push(row("tier 2", "not registered"));
                rows.push(row("tier-2 from", from));
            }
            Some((t, from)) => {
                let mut v = format!("active {}/{} · waiting {}", n(t.active), n(t.threshold), n(t.waiting));
                if let Some(h) = t.held {
                    v.push_str(&format!(" · held {h}"));
                }
                if let Some(r) = t.admitted_per_second {
                    v.push_str(&format!(" · admitted {r:.1}/s"));
                }
                rows.push(row("tier 2", v));
                rows.push(row("tier-2 from", from));
            }
            None => rows.push(row("tier 2", DASH)),
        }
        if let Some(e) = &self.tier2_error {
            rows.push(Row {
                label: "tier-2 error",
                value: e.clone(),
                style: Style::default().fg(Color::Red),
            });
        }
        rows
    }

    /// The figures as plain text, one `label  value` per line (`--once`).
    pub fn snapshot_text(&self) -> String {
        let mut out = format!("vwr watch {}\n", self.event_id);
        let sections =
            [self.event_rows(), self.line_rows(), self.outflow_rows(), self.rate_rows(), self.tier2_rows()];
        for rows in sections {
            for r in rows {
                out.push_str(&format!("{:<20}{}\n", r.label, r.value));
            }
        }
        out.push_str(&format!(
            "{:<20}{}\n",
            "refreshed",
            self.last_refresh.map_or_else(|| DASH.to_owned(), fmt_utc)
        ));
        if let Some(n) = &self.notice {
            out.push_str(&format!("{:<20}{}\n", "note", n.text));
        }
        out
    }

    // -----------------------------------------------------------------------------------------
    // Rendering
    // -----------------------------------------------------------------------------------------

    /// Draws the whole screen.
    pub fn render(&self, frame: &mut Frame) {
        let (event_rows, line_rows, tier2_rows) = (self.event_rows(), self.line_rows(), self.tier2_rows());
        let outflow_rows = self.outflow_rows();
        // A long value (the hold's reason) wraps: the panels grow with it.
        let left_inner = usize::from(frame.area().width) * 55 / 100;
        let right_inner = usize::from(frame.area().width) - left_inner;
        let top_height = wrapped_height(&event_rows, EVENT_LABEL, left_inner.saturating_sub(2))
            .max(wrapped_height(&line_rows, LINE_LABEL, right_inner.saturating_sub(2)))
            + 2;
        let [header, top, outflow, rates, tier2, notice, footer] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(u16::try_from(top_height).unwrap_or(u16::MAX)),
            Constraint::Length(u16::try_from(outflow_rows.len() + 2).unwrap_or(u16::MAX)),
            Constraint::Min(6),
            Constraint::Length(u16::try_from(tier2_rows.len() + 2).unwrap_or(u16::MAX)),
            Constraint::Length(1),
            Constraint::Length(2),
        ])
        .areas(frame.area());
        self.render_header(frame, header);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
        frame.render_widget(rows_paragraph(event_rows, "Event", EVENT_LABEL), left);
        frame.render_widget(rows_paragraph(line_rows, "Line", LINE_LABEL), right);
        frame.render_widget(rows_paragraph(outflow_rows, "Outflow", EVENT_LABEL), outflow);
        self.render_rates(frame, rates);
        frame.render_widget(rows_paragraph(tier2_rows, "Tier 2", 13), tier2);
        self.render_notice(frame, notice);
        self.render_footer(frame, footer);
        if self.mode == Mode::Help {
            render_help(frame);
        }
    }

    fn render_header(&self, frame: &mut Frame, area: Rect) {
        let state = self.status.as_ref().and_then(Status::state).unwrap_or(DASH);
        let refreshed = match self.last_refresh {
            Some(at) => format!("refreshed {} ({:.0} s ago)", fmt_clock(at), (self.now - at).max(0.0)),
            None => "not refreshed yet".to_owned(),
        };
        let mut spans = vec![
            Span::styled(" vwr watch ", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(self.event_id.clone()),
            Span::raw("  "),
            Span::styled(state.to_uppercase(), state_style(state).add_modifier(Modifier::BOLD)),
            Span::raw("  "),
        ];
        if let Some(held) = self.status.as_ref().and_then(Status::hold_text) {
            spans.push(Span::styled(format!(" {held} "), hold_style()));
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(refreshed, Style::default().fg(Color::DarkGray)));
        let line = Line::from(spans);
        frame.render_widget(Paragraph::new(line), area);
    }

    fn render_rates(&self, frame: &mut Frame, area: Rect) {
        let block = Block::default().borders(Borders::ALL).title(" Rates (sparklines: last 2 min) ");
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [joins, admitted] = Layout::vertical([Constraint::Fill(1), Constraint::Fill(1)]).areas(inner);
        let rows = self.rate_rows();
        let series = [
            (joins, rate_series(&self.samples, |s| s.issued), Color::Cyan),
            (admitted, rate_series(&self.samples, |s| s.admitted), Color::Green),
        ];
        for ((area, data, color), r) in series.into_iter().zip(rows) {
            let [label, spark] = Layout::horizontal([Constraint::Length(44), Constraint::Min(0)]).areas(area);
            let text = Line::from(vec![
                Span::styled(format!("{:<11}", r.label), Style::default().add_modifier(Modifier::BOLD)),
                Span::raw(r.value),
            ]);
            frame.render_widget(Paragraph::new(text), label);
            let width = usize::from(spark.width);
            let tail = &data[data.len().saturating_sub(width)..];
            frame.render_widget(Sparkline::default().data(tail).style(Style::default().fg(color)), spark);
        }
    }

    fn render_notice(&self, frame: &mut Frame, area: Rect) {
        let (text, style) = match (&self.busy, &self.notice) {
            (Some(b), _) => (format!("{b}… waiting for the answer"), Style::default().fg(Color::Yellow)),
            (None, Some(n)) => (
                n.text.clone(),
                Style::default().fg(match n.kind {
                    NoticeKind::Info => Color::Yellow,
                    NoticeKind::Ok => Color::Green,
                    NoticeKind::Error => Color::Red,
                }),
            ),
            (None, None) => (String::new(), Style::default()),
        };
        frame.render_widget(Paragraph::new(Span::styled(format!(" {text}"), style)), area);
    }

    fn render_footer(&self, frame: &mut Frame, area: Rect) {
        let key = |k: &'static str| {
            Span::styled(k, Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED))
        };
        let lines: Vec<Line> = match &self.mode {
            Mode::Normal | Mode::Help => vec![Line::from(vec![
                key(" p "),
                Span::raw(" pause  "),
                key(" r "),
                Span::raw(" resume  "),
                key(" a "),
                Span::raw(" advance  "),
                key(" c "),
                Span::raw(" close  "),
                key(" m "),
                Span::raw(" message  "),
                key(" h "),
                Span::raw(if self.status.as_ref().is_some_and(|s| s.hold.is_some()) {
                    " release hold  "
                } else {
                    " hold  "
                }),
                key(" ? "),
                Span::raw(" help  "),
                key(" q "),
                Span::raw(" quit"),
            ])],
            Mode::ChooseReason => vec![
                Line::styled(
                    format!("Close event {}: why?", self.event_id),
                    Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                Line::from(vec![
                    key(" s "),
                    Span::raw(" sold_out  "),
                    key(" e "),
                    Span::raw(" ended  "),
                    key(" Esc "),
                    Span::raw(" cancel"),
                ]),
            ],
            Mode::Confirm { question, .. } => vec![
                Line::styled(
                    question.clone(),
                    Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                Line::raw("y = yes, n or Esc = no"),
            ],
            Mode::Prompt { kind, input, error } => {
                let mut first = vec![Span::styled(kind.question(), Style::default().fg(Color::Yellow))];
                if let Some(e) = error {
                    first.push(Span::styled(format!("  ({e})"), Style::default().fg(Color::Red)));
                }
                let prompt = format!("> {input}");
                let cursor_x =
                    area.x.saturating_add(u16::try_from(prompt.chars().count()).unwrap_or(u16::MAX));
                frame.set_cursor_position((
                    cursor_x.min(area.right().saturating_sub(1)),
                    area.y.saturating_add(1),
                ));
                vec![Line::from(first), Line::raw(prompt)]
            }
        };
        frame.render_widget(Paragraph::new(lines), area);
    }
}

/// Label widths of the panels.
const EVENT_LABEL: usize = 13;
const LINE_LABEL: usize = 19;

/// Lines `rows` take in a panel `width` columns wide inside its borders (values wrap; a word
/// moved whole to the next line can cost one more, hence the rounding up per row).
fn wrapped_height(rows: &[Row], label_width: usize, width: usize) -> usize {
    rows.iter()
        .map(|r| {
            let chars = label_width + r.value.chars().count();
            if width == 0 || chars <= width { 1 } else { chars.div_ceil(width.saturating_sub(1).max(1)) }
        })
        .sum()
}

fn rows_paragraph(rows: Vec<Row>, title: &str, label_width: usize) -> Paragraph<'static> {
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|r| {
            Line::from(vec![
                Span::styled(format!("{:<label_width$}", r.label), Style::default().fg(Color::DarkGray)),
                Span::styled(r.value, r.style),
            ])
        })
        .collect();
    Paragraph::new(lines)
        .block(Block::default().borders(Borders::ALL).title(format!(" {title} ")))
        .wrap(Wrap { trim: false })
}

fn render_help(frame: &mut Frame) {
    let text = [
        "p    pause (optional message to visitors, then y/n)",
        "r    resume (y/n)",
        "a    advance the serving counter by N (default: the batch size)",
        "c    close: s = sold_out, e = ended; optional message; y/n",
        "m    set the message (en, then ko; both empty = clear); y/n",
        "h    health gate: hold the advancer (asks a reason), or release a hold; y/n",
        "q    quit (also Esc, Ctrl-C)",
        "?    this help",
        "",
        "In a prompt: Enter accepts, Esc cancels, Ctrl-U clears.",
        "joins/s and admitted/s (10 s) are computed from successive polls;",
        "(60 s) figures come from the status. No-show share: the status's recent",
        "outflow figure, else 1 - admitted / serving over the whole sale.",
        "Outflow per minute: redeemed admissions and served positions (status).",
        "",
        "Any key closes this help.",
    ];
    let area = frame.area();
    let width = area.width.min(78);
    let height = area.height.min(text.len() as u16 + 2);
    let popup =
        Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height };
    frame.render_widget(Clear, popup);
    let lines: Vec<Line> = text.iter().map(|l| Line::raw(*l)).collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Keys ")),
        popup,
    );
}

/// The hold: white on red, as loud as the terminal gets.
fn hold_style() -> Style {
    Style::default().fg(Color::White).bg(Color::Red).add_modifier(Modifier::BOLD)
}

fn state_style(state: &str) -> Style {
    Style::default().fg(match state {
        "scheduled" => Color::Blue,
        "prequeue" => Color::Cyan,
        "open" | "active" => Color::Green,
        "paused" => Color::Yellow,
        "closed" => Color::Red,
        _ => Color::DarkGray,
    })
}

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

fn short_hex(h: &str) -> String {
    clip(h, 12)
}

/// "1h 02m 03s", "5m 00s", "42s".
pub fn fmt_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m {s:02}s"),
        _ => format!("{h}h {m:02}m {s:02}s"),
    }
}

fn countdown(at: u64, now: f64) -> String {
    let left = at as f64 - now;
    // The date only when it is not within the next or last day.
    let when = if left.abs() < 86_400.0 { fmt_clock(at as f64) } else { fmt_utc(at as f64) };
    if left > 0.0 {
        format!("in {} (at {when})", fmt_duration(left))
    } else {
        format!("due {} ago (at {when})", fmt_duration(-left))
    }
}

/// Unix seconds as "YYYY-MM-DD hh:mm:ssZ" (UTC).
pub fn fmt_utc(secs: f64) -> String {
    let secs = secs.max(0.0) as u64;
    let (y, mo, d) = civil_from_days(secs / 86_400);
    format!("{y:04}-{mo:02}-{d:02} {}", fmt_clock(secs as f64))
}

/// Unix seconds as "hh:mm:ssZ" (UTC).
fn fmt_clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64 % 86_400;
    format!("{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

fn now_secs_f64() -> f64 {
    vwr_core::time::now_millis() as f64 / 1000.0
}

// ---------------------------------------------------------------------------------------------
// I/O
// ---------------------------------------------------------------------------------------------

/// The admin API (and the tier-2 admin API) as the console calls it.
#[derive(Clone)]
struct Conn {
    client: HttpClient,
    auth: Auth,
    base: String,
    tier2_base: Option<String>,
    event_id: String,
}

impl Conn {
    async fn new(args: &WatchArgs) -> Result<Self, String> {
        let auth = crate::admin::auth(&args.target).await?;
        // A poll slower than this is an error shown on screen; the next tick tries again.
        let client = HttpClient::new(Duration::from_secs(10)).map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            auth,
            base: args.target.url.trim_end_matches('/').to_owned(),
            tier2_base: args.tier2_url.as_ref().map(|u| u.trim_end_matches('/').to_owned()),
            event_id: args.event_id.clone(),
        })
    }

    async fn call(&self, method: Method, url: &str, body: Option<&Value>) -> Result<Value, String> {
        let reply = self.client.send(method, url, body, &self.auth).await.map_err(|e| e.to_string())?;
        if reply.status.is_success() { Ok(reply.json()) } else { Err(describe_error(&reply)) }
    }

    async fn status(&self) -> Result<Value, String> {
        let url = format!("{}/api/admin/vwr/status/{}", self.base, self.event_id);
        self.call(Method::GET, &url, None).await
    }

    async fn tier2_status(&self) -> Option<Result<Value, String>> {
        let base = self.tier2_base.as_ref()?;
        let url = format!("{base}/api/queue/admin/status/{}", self.event_id);
        Some(self.call(Method::GET, &url, None).await)
    }

    async fn perform(&self, action: &Action) -> Result<Value, String> {
        let (method, path, body) =
            action.request(&self.event_id).ok_or_else(|| "nothing to send".to_owned())?;
        self.call(method, &format!("{}{path}", self.base), body.as_ref()).await
    }
}

/// "409 Conflict: invalid_transition: …" from an error answer (docs/api.md#errors).
fn describe_error(reply: &Reply) -> String {
    let json = reply.json();
    let code = json.get("error").and_then(Value::as_str);
    let message = json.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(c), Some(m)) => format!("{}: {c}: {m}", reply.status),
        (Some(c), None) => format!("{}: {c}", reply.status),
        (None, Some(m)) => format!("{}: {m}", reply.status),
        (None, None) => {
            let body = String::from_utf8_lossy(&reply.body);
            if body.trim().is_empty() {
                reply.status.to_string()
            } else {
                format!("{}: {}", reply.status, clip(body.trim(), 200))
            }
        }
    }
}

fn check_event_id(id: &str) -> Result<(), String> {
    vwr_core::EventId::parse(id).map(|_| ()).map_err(|e| format!("event id {id:?}: {e}"))
}

/// One poll (and the tier-2 status with `--tier2-url`), as the `--once` text. A failed status
/// poll is an error; a failed tier-2 poll shows in the text.
pub async fn snapshot(args: &WatchArgs) -> Result<String, String> {
    check_event_id(&args.event_id)?;
    let conn = Conn::new(args).await?;
    let mut app = App::new(&args.event_id);
    let json = conn.status().await?;
    let at = now_secs_f64();
    Status::from_json(&json)?;
    app.on_status(&json, at);
    match conn.tier2_status().await {
        Some(Ok(v)) => app.on_tier2(&v),
        Some(Err(e)) => app.on_tier2_error(&e),
        None => {}
    }
    Ok(app.snapshot_text())
}

/// `vwr watch`: the live console, or with `--once` one snapshot on stdout.
pub async fn run(args: WatchArgs) -> Result<(), String> {
    check_event_id(&args.event_id)?;
    if args.once {
        let text = snapshot(&args).await?;
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| e.to_string());
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(
            "vwr watch needs a terminal (stdin and stdout); use --once for a plain-text snapshot".into()
        );
    }
    let conn = Conn::new(&args).await?;
    let mut app = App::new(&args.event_id);
    app.tick(now_secs_f64());
    // Installs a panic hook that restores the terminal too.
    let mut terminal = ratatui::try_init().map_err(|e| format!("terminal set-up failed: {e}"))?;
    let restore = RestoreOnDrop;
    let result = event_loop(&mut terminal, &mut app, &conn, args.interval).await;
    drop(restore);
    result
}

/// Puts the terminal back (raw mode off, main screen) however the loop ends.
struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

enum Msg {
    Polled { status: Result<Value, String>, tier2: Option<Result<Value, String>>, at: f64 },
    Done { label: String, result: Result<Value, String>, at: f64 },
}

/// Reads terminal events on a thread (crossterm's reads block) until the receiver is gone.
fn spawn_event_reader(tx: mpsc::UnboundedSender<std::io::Result<Event>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !tx.is_closed() {
            match event::poll(Duration::from_millis(100)) {
                Ok(false) => {}
                Ok(true) => {
                    if tx.send(event::read()).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    })
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    conn: &Conn,
    interval: Duration,
) -> Result<(), String> {
    let (key_tx, mut keys) = mpsc::unbounded_channel();
    let reader = spawn_event_reader(key_tx);
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let mut poll = tokio::time::interval(interval);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut clock = tokio::time::interval(Duration::from_millis(250));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut polling = false;
    let result = loop {
        if let Err(e) = terminal.draw(|f| app.render(f)) {
            break Err(format!("drawing failed: {e}"));
        }
        tokio::select! {
            _ = poll.tick() => {
                if !polling {
                    polling = true;
                    let (conn, tx) = (conn.clone(), tx.clone());
                    tokio::spawn(async move {
                        let status = conn.status().await;
                        let tier2 = conn.tier2_status().await;
                        let _ = tx.send(Msg::Polled { status, tier2, at: now_secs_f64() });
                    });
                }
            }
            _ = clock.tick() => app.tick(now_secs_f64()),
            ev = keys.recv() => match ev {
                None => break Err("terminal input closed".into()),
                Some(Err(e)) => break Err(format!("reading the terminal failed: {e}")),
                Some(Ok(Event::Key(key))) => match app.on_key(key) {
                    Some(Action::Quit) => break Ok(()),
                    Some(action) => {
                        let (conn, tx) = (conn.clone(), tx.clone());
                        tokio::spawn(async move {
                            let result = conn.perform(&action).await;
                            let _ = tx.send(Msg::Done { label: action.label(), result, at: now_secs_f64() });
                        });
                    }
                    None => {}
                },
                Some(Ok(_)) => {}
            },
            Some(msg) = rx.recv() => match msg {
                Msg::Polled { status, tier2, at } => {
                    polling = false;
                    match status {
                        Ok(v) => app.on_status(&v, at),
                        Err(e) => app.on_poll_error(&e, at),
                    }
                    match tier2 {
                        Some(Ok(v)) => app.on_tier2(&v),
                        Some(Err(e)) => app.on_tier2_error(&e),
                        None => {}
                    }
                }
                Msg::Done { label, result, at } => app.on_action_result(&label, result, at),
            },
        }
    };
    drop(keys);
    let _ = reader.join();
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    const T0: f64 = 1_790_000_000.0;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    fn code(k: KeyCode) -> KeyEvent {
        KeyEvent::new(k, KeyModifiers::NONE)
    }

    fn typed(app: &mut App, s: &str) {
        for c in s.chars() {
            assert_eq!(app.on_key(key(c)), None);
        }
    }

    fn screen(app: &App, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| app.render(f)).unwrap();
        let buf = term.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    fn open_status() -> Value {
        json!({
            "eventId": "sale1", "active": true, "state": "open",
            "issued": 1200, "servingCounter": 1000, "highestPosition": 1200,
            "waiting": 200, "admitted": 950, "prequeueSize": 300,
            "config": {"batchSize": 50, "intervalSeconds": 5, "shards": 4, "tokenTtlSeconds": 600},
            "rates": {"windowSeconds": 60, "servedPerSecond": 10.0, "joinsPerSecond": 12.5},
            "seedCommitment": "3f2a9c0b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
            "seed": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
            "openedAt": 1_789_999_000u64, "lastStepAt": 0, "createdAt": 0, "updatedAt": 0, "rev": 7
        })
    }

    fn app_with(v: &Value) -> App {
        let mut app = App::new("sale1");
        app.on_status(v, T0);
        app
    }

    #[test]
    fn renders_an_open_event_with_figures() {
        let app = app_with(&open_status());
        let s = screen(&app, 100, 30);
        for needle in [
            "OPEN",
            "sale1",
            "1200",
            "1000",
            "950",
            "300",
            "5.0 %",
            "20s",
            "12.5 (60 s)",
            "served 10.0 (60 s)",
            "3f2a9c0b1d4e",
            "revealed",
            "p  pause",
        ] {
            assert!(s.contains(needle), "{needle:?} missing in\n{s}");
        }
        assert!(!s.contains("not revealed"), "{s}");
    }

    #[test]
    fn renders_a_prequeue_countdown() {
        let v = json!({
            "eventId": "sale1", "active": true, "state": "prequeue",
            "issued": 0, "servingCounter": 0, "waiting": 0, "admitted": 0, "prequeueSize": 42,
            "prequeueAt": T0 as u64 - 60, "openAt": T0 as u64 + 302,
            "seedCommitment": "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
        });
        let app = app_with(&v);
        let s = screen(&app, 100, 30);
        assert!(s.contains("PREQUEUE"), "{s}");
        assert!(s.contains("in 5m 02s"), "{s}");
        assert!(s.contains("not revealed"), "{s}");
        assert!(s.contains("42"), "{s}");
        // nobody served yet: no no-show share, no wait estimate
        assert!(app.line_rows().iter().any(|r| r.label == "no-show share" && r.value == DASH));
    }

    #[test]
    fn renders_a_scheduled_event_with_both_times() {
        let v = json!({"state": "scheduled", "prequeueAt": T0 as u64 + 3600, "openAt": T0 as u64 + 7200});
        let app = app_with(&v);
        let text = app.snapshot_text();
        assert!(text.contains("in 1h 00m 00s"), "{text}");
        assert!(text.contains("in 2h 00m 00s"), "{text}");
    }

    #[test]
    fn renders_a_paused_event_with_its_message() {
        let mut v = open_status();
        v["state"] = json!("paused");
        v["message"] = json!({"en": "Back in 5 minutes", "ko": "5분 후에 다시"});
        let app = app_with(&v);
        let s = screen(&app, 100, 30);
        assert!(s.contains("PAUSED"), "{s}");
        assert!(s.contains("Back in 5 minutes"), "{s}");
        let text = app.snapshot_text();
        assert!(text.contains("5분 후에 다시"), "{text}");
    }

    #[test]
    fn renders_a_closed_sold_out_event() {
        let mut v = open_status();
        v["state"] = json!("closed");
        v["closeReason"] = json!("sold_out");
        let app = app_with(&v);
        let s = screen(&app, 100, 30);
        assert!(s.contains("CLOSED"), "{s}");
        assert!(s.contains("sold_out"), "{s}");
    }

    #[test]
    fn renders_tier2_from_the_status_and_prefers_the_tier2_api() {
        let mut v = open_status();
        let without = screen(&app_with(&v), 100, 30);
        assert!(without.contains("tier 2"), "{without}");
        assert!(!without.contains("active 80/100"), "{without}");

        v["tier2"] = json!({"eventId": "sale1", "registered": true, "threshold": 100, "lineOrder": "tier1",
            "waiting": 20, "active": 80, "held": 3, "pendingNotices": 0, "admittedLast60s": 60,
            "admittedPerSecond": 1.0});
        let mut app = app_with(&v);
        let s = screen(&app, 100, 30);
        assert!(s.contains("active 80/100 · waiting 20 · held 3"), "{s}");
        assert!(s.contains("the tier-1 status"), "{s}");

        app.on_tier2(&json!({"registered": true, "threshold": 200, "waiting": 7, "active": 150, "held": 0}));
        let s = screen(&app, 100, 30);
        assert!(s.contains("active 150/200 · waiting 7"), "{s}");
        assert!(s.contains("the tier-2 admin status"), "{s}");

        app.on_tier2_error("503 Service Unavailable: service_unavailable: redis down");
        let text = app.snapshot_text();
        assert!(text.contains("redis down"), "{text}");
        assert!(text.contains("active 150/200"), "the last tier-2 figures stay: {text}");
    }

    #[test]
    fn renders_on_a_small_terminal_and_before_any_answer() {
        let app = App::new("sale1");
        let s = screen(&app, 100, 30);
        assert!(s.contains("waiting for the first answer"), "{s}");
        let mut app = app_with(&open_status());
        app.mode = Mode::Help;
        for (w, h) in [(1, 1), (20, 5), (80, 24), (40, 60)] {
            screen(&app, w, h);
        }
    }

    #[test]
    fn help_opens_and_any_key_closes_it() {
        let mut app = app_with(&open_status());
        assert_eq!(app.on_key(key('?')), None);
        assert_eq!(app.mode(), &Mode::Help);
        assert!(screen(&app, 100, 30).contains("Any key closes this help"));
        assert_eq!(app.on_key(key('p')), None);
        assert_eq!(app.mode(), &Mode::Normal, "the key only closed the help");
    }

    fn held_target_arrivals_status() -> Value {
        let mut v = open_status();
        v["config"] = json!({"batchSize": 50, "intervalSeconds": 5, "shards": 4, "tokenTtlSeconds": 600,
            "mode": "targetArrivals", "targetArrivalsPerMinute": 600, "maxBatchSize": 5000,
            "reentryGraceSeconds": 300, "maxSessionSeconds": 1800});
        v["outflow"] = json!({"mode": "targetArrivals", "targetPerMinute": 600,
            "redeemedPerMinute": 540.0, "servedPerMinute": 613.6, "noShowShare": 0.12, "released": 7});
        v["heldBy"] = json!("health");
        v["holdReason"] = json!("origin 5xx");
        v["heldSince"] = json!(T0 as u64 - 302);
        v
    }

    #[test]
    fn renders_a_held_target_arrivals_event() {
        let app = app_with(&held_target_arrivals_status());
        let s = screen(&app, 120, 34);
        for needle in [
            "OPEN",
            // T0 = 14:13:20Z, held 302 s before
            "HELD by health: origin 5xx since 14:08:18Z",
            "5m 02s",
            // the wrapped hold row pushes nothing out of the panel
            "3f2a9c0b1d4e… · revealed",
            "targetArrivals · target 600/min · at most 5000/step",
            "redeemed 540.0 · served 613.6 · 90 % of target",
            "released",
            "12.0 % (recent)",
            "h  release hold",
        ] {
            assert!(s.contains(needle), "{needle:?} missing in\n{s}");
        }
        assert!(!s.contains("whole sale"), "the status's noShowShare wins over 1 - admitted/serving: {s}");
        let st = app.status().unwrap();
        assert_eq!(st.mode(), Some("targetArrivals"));
        assert!((st.no_show_share().unwrap() - 0.12).abs() < 1e-12);
        assert!((st.overall_no_show_share().unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(
            st.hold,
            Some(Hold {
                by: "health".into(),
                reason: Some("origin 5xx".into()),
                since: Some(T0 as u64 - 302)
            })
        );
        let text = app.snapshot_text();
        for needle in [
            "hold                HELD by health: origin 5xx since 14:08:18Z (5m 02s ago)",
            "mode                targetArrivals · target 600/min · at most 5000/step",
            "per minute          redeemed 540.0 · served 613.6 · 90 % of target",
            "released            7",
            "no-show share       12.0 % (recent)",
        ] {
            assert!(text.contains(needle), "{needle:?} missing in\n{text}");
        }

        // the longest reason wraps over several lines; the panel grows, the seed stays visible
        let mut v = held_target_arrivals_status();
        v["holdReason"] = json!("checkout errors ".repeat(12).trim_end());
        let s = screen(&app_with(&v), 100, 40);
        assert!(s.contains("3f2a9c0b1d4e… · revealed"), "{s}");

        // a fixed-mode event without a hold (and an older server without `outflow`)
        let app = app_with(&open_status());
        let s = screen(&app, 100, 30);
        assert!(!s.contains("HELD"), "{s}");
        assert!(s.contains("h  hold"), "{s}");
        let text = app.snapshot_text();
        assert!(text.contains("mode                fixed · 50 every 5s"), "{text}");
        assert!(text.contains("no-show share       5.0 % (whole sale)"), "{text}");
        assert!(text.contains("per minute          redeemed — · served —"), "{text}");
        assert!(!text.contains("\nhold "), "{text}");
        let mut v = open_status();
        v["config"]["batchSize"] = json!(0);
        assert!(app_with(&v).snapshot_text().contains("fixed · manual advances only"));
    }

    #[test]
    fn h_holds_with_a_reason_and_releases_a_held_event() {
        // before any answer: nothing to toggle
        let mut app = App::new("sale1");
        assert_eq!(app.on_key(key('h')), None);
        assert_eq!(app.mode(), &Mode::Normal);
        assert!(app.snapshot_text().contains("no status yet"));

        // not held: h asks a reason, which is required
        let mut app = app_with(&open_status());
        assert_eq!(app.on_key(key('h')), None);
        assert!(matches!(app.mode(), Mode::Prompt { kind: PromptKind::HoldReason, .. }));
        assert!(screen(&app, 120, 30).contains("Hold the advancer"));
        app.on_key(code(KeyCode::Enter));
        assert!(matches!(app.mode(), Mode::Prompt { error: Some(e), .. } if e == "enter a reason"));
        typed(&mut app, &"x".repeat(MAX_HOLD_REASON + 1));
        app.on_key(code(KeyCode::Enter));
        assert!(matches!(app.mode(), Mode::Prompt { error: Some(e), .. } if e.contains("at most 200")));
        app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        typed(&mut app, " origin 5xx ");
        app.on_key(code(KeyCode::Enter));
        let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(question.starts_with("Hold event sale1"), "{question}");
        assert!(question.contains("\"origin 5xx\"") && question.ends_with("y/n"), "{question}");
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Health { ok: false, reason: Some("origin 5xx".into()) });
        assert_eq!(
            action.request("sale1").unwrap(),
            (
                Method::PUT,
                "/api/admin/vwr/health/sale1".into(),
                Some(json!({"ok": false, "reason": "origin 5xx"}))
            )
        );
        // one action at a time
        app.on_key(key('h'));
        assert_eq!(app.mode(), &Mode::Normal);
        assert!(app.snapshot_text().contains("wait for the answer to hold"));

        // the answer is the status: now held
        app.on_action_result(&action.label(), Ok(held_target_arrivals_status()), T0 + 1.0);
        let text = app.snapshot_text();
        assert!(text.contains("hold: done: now open"), "{text}");
        assert!(text.contains("HELD by health: origin 5xx"), "{text}");

        // held: h asks to release it; n cancels
        app.on_key(key('h'));
        let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert_eq!(question, "Release the hold on event sale1 (held by health: origin 5xx)? y/n");
        assert!(screen(&app, 120, 30).contains("Release the hold on event sale1"));
        assert_eq!(app.on_key(key('n')), None);
        assert_eq!(app.mode(), &Mode::Normal);
        assert!(app.snapshot_text().contains("release the hold cancelled"));
        app.on_key(key('h'));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Health { ok: true, reason: None });
        assert_eq!(
            action.request("sale1").unwrap(),
            (Method::PUT, "/api/admin/vwr/health/sale1".into(), Some(json!({"ok": true})))
        );
        app.on_action_result(&action.label(), Ok(open_status()), T0 + 2.0);
        let text = app.snapshot_text();
        assert!(text.contains("release the hold: done"), "{text}");
        assert!(!text.contains("HELD"), "{text}");
        // and h is the hold again, ? the help
        app.on_key(key('h'));
        assert!(matches!(app.mode(), Mode::Prompt { kind: PromptKind::HoldReason, .. }));
        app.on_key(code(KeyCode::Esc));
        app.on_key(key('?'));
        assert_eq!(app.mode(), &Mode::Help);
        assert!(screen(&app, 100, 30).contains("health gate"));
    }

    #[test]
    fn odd_hold_and_outflow_fields_do_not_panic() {
        for v in [
            json!({"heldBy": "health"}),
            json!({"heldBy": "", "holdReason": "x", "heldSince": 5}),
            json!({"heldBy": 3, "outflow": [], "config": {"mode": 7}}),
            json!({"heldBy": "alarm", "heldSince": u64::MAX, "outflow": {"noShowShare": 7.5, "released": -1,
                   "redeemedPerMinute": "x", "targetPerMinute": 0, "mode": "targetArrivals"}}),
            json!({"config": {"mode": "somethingNew"}, "outflow": {"noShowShare": -0.5}}),
        ] {
            let app = app_with(&v);
            screen(&app, 100, 30);
            screen(&app, 20, 6);
            let _ = app.snapshot_text();
        }
        assert_eq!(
            app_with(&json!({"heldBy": "health"})).status().unwrap().hold_text().as_deref(),
            Some("HELD by health")
        );
        assert_eq!(app_with(&json!({"heldBy": ""})).status().unwrap().hold, None);
        let s = app_with(&json!({"outflow": {"noShowShare": 7.5}}));
        assert_eq!(s.status().unwrap().no_show_share(), Some(1.0));
        assert!(
            app_with(&json!({"config": {"mode": "somethingNew"}})).snapshot_text().contains("somethingNew")
        );
    }

    #[test]
    fn quit_keys() {
        let mut app = App::new("e");
        assert_eq!(app.on_key(key('q')), Some(Action::Quit));
        assert_eq!(app.on_key(code(KeyCode::Esc)), Some(Action::Quit));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(app.on_key(ctrl_c), Some(Action::Quit));
        // in a prompt, q is text and Esc cancels
        app.on_key(key('m'));
        assert_eq!(app.on_key(key('q')), None);
        assert_eq!(app.on_key(code(KeyCode::Esc)), None);
        assert_eq!(app.mode(), &Mode::Normal);
    }

    #[test]
    fn pause_asks_a_message_then_confirmation() {
        let mut app = app_with(&open_status());
        assert_eq!(app.on_key(key('p')), None);
        typed(&mut app, "Back soon");
        assert_eq!(app.on_key(code(KeyCode::Enter)), None);
        let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(question.starts_with("Pause event sale1"), "{question}");
        assert!(question.ends_with("y/n"), "{question}");
        assert!(screen(&app, 100, 30).contains("Pause event sale1"));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Pause { message: Some("Back soon".into()) });
        let (m, p, b) = action.request("sale1").unwrap();
        assert_eq!((m, p.as_str()), (Method::POST, "/api/admin/vwr/pause/sale1"));
        assert_eq!(b, Some(json!({"message": {"en": "Back soon"}})));
    }

    #[test]
    fn pause_without_message_and_n_cancels() {
        let mut app = app_with(&open_status());
        app.on_key(key('p'));
        assert_eq!(app.on_key(code(KeyCode::Enter)), None);
        assert_eq!(app.on_key(key('x')), None, "other keys do not answer the question");
        assert!(matches!(app.mode(), Mode::Confirm { .. }));
        assert_eq!(app.on_key(key('n')), None);
        assert_eq!(app.mode(), &Mode::Normal);
        assert!(app.snapshot_text().contains("cancelled"));
        app.on_key(key('p'));
        app.on_key(code(KeyCode::Enter));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Pause { message: None });
        assert_eq!(action.request("e").unwrap().2, Some(json!({})));
    }

    #[test]
    fn resume_needs_confirmation() {
        let mut app = app_with(&open_status());
        assert_eq!(app.on_key(key('r')), None);
        assert_eq!(app.on_key(code(KeyCode::Esc)), None, "Esc answers no");
        assert_eq!(app.mode(), &Mode::Normal);
        app.on_key(key('r'));
        let action = app.on_key(key('Y')).unwrap();
        assert_eq!(action, Action::Resume);
        assert_eq!(action.request("e").unwrap(), (Method::POST, "/api/admin/vwr/resume/e".into(), None));
    }

    #[test]
    fn advance_defaults_to_the_batch_size_and_parses_numbers() {
        let mut app = app_with(&open_status());
        app.on_key(key('a'));
        assert!(screen(&app, 100, 30).contains("Enter = 50"));
        app.on_key(code(KeyCode::Enter));
        let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(question.contains("by 50"), "{question}");
        assert_eq!(app.on_key(key('y')), Some(Action::Advance { by: 50 }));

        app.on_action_result("advance by 50", Ok(open_status()), T0 + 1.0);
        app.on_key(key('a'));
        typed(&mut app, "1,000");
        app.on_key(code(KeyCode::Enter));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Advance { by: 1000 });
        assert_eq!(action.request("e").unwrap().2, Some(json!({"by": 1000})));
    }

    #[test]
    fn advance_refuses_bad_numbers_and_stays_in_the_prompt() {
        let mut app = app_with(&open_status());
        app.on_key(key('a'));
        typed(&mut app, "ten");
        app.on_key(code(KeyCode::Enter));
        let Mode::Prompt { error: Some(e), .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(e.contains("not a whole number"), "{e}");
        for _ in 0..3 {
            app.on_key(code(KeyCode::Backspace));
        }
        typed(&mut app, "0");
        app.on_key(code(KeyCode::Enter));
        let Mode::Prompt { error: Some(e), .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(e.contains("out of range"), "{e}");
        app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        typed(&mut app, "20000000");
        app.on_key(code(KeyCode::Enter));
        assert!(matches!(app.mode(), Mode::Prompt { error: Some(_), .. }));
        app.on_key(code(KeyCode::Esc));
        assert_eq!(app.mode(), &Mode::Normal);

        // no batch size known (manual-only event): Enter alone asks for a number
        let mut v = open_status();
        v["config"]["batchSize"] = json!(0);
        let mut app = app_with(&v);
        app.on_key(key('a'));
        app.on_key(code(KeyCode::Enter));
        assert!(matches!(app.mode(), Mode::Prompt { error: Some(e), .. } if e == "enter a number"));
    }

    #[test]
    fn close_asks_the_reason_then_a_message_then_confirmation() {
        let mut app = app_with(&open_status());
        app.on_key(key('c'));
        assert_eq!(app.mode(), &Mode::ChooseReason);
        assert!(screen(&app, 100, 30).contains("sold_out"));
        app.on_key(key('x'));
        assert_eq!(app.mode(), &Mode::ChooseReason, "only s, e or Esc answer");
        app.on_key(key('s'));
        typed(&mut app, "All gone");
        app.on_key(code(KeyCode::Enter));
        let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(question.contains("Close event sale1 (sold_out)"), "{question}");
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Close { reason: CloseReason::SoldOut, message: Some("All gone".into()) });
        assert_eq!(
            action.request("e").unwrap(),
            (
                Method::POST,
                "/api/admin/vwr/close/e".into(),
                Some(json!({"reason": "sold_out", "message": {"en": "All gone"}}))
            )
        );
        app.on_action_result("close", Err("409 Conflict: invalid_transition: no".into()), T0 + 1.0);

        app.on_key(key('c'));
        app.on_key(key('e'));
        app.on_key(code(KeyCode::Enter));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::Close { reason: CloseReason::Ended, message: None });
        assert_eq!(action.request("e").unwrap().2, Some(json!({"reason": "ended"})));

        app.on_key(key('c'));
        app.on_key(code(KeyCode::Esc));
        assert_eq!(app.mode(), &Mode::Normal);
    }

    #[test]
    fn message_asks_en_then_ko_and_empty_both_clears() {
        let mut app = app_with(&open_status());
        app.on_key(key('m'));
        typed(&mut app, "Hi");
        app.on_key(code(KeyCode::Enter));
        assert!(matches!(app.mode(), Mode::Prompt { kind: PromptKind::MessageKo { .. }, .. }));
        typed(&mut app, "안녕");
        app.on_key(code(KeyCode::Enter));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::SetMessage { en: Some("Hi".into()), ko: Some("안녕".into()) });
        assert_eq!(
            action.request("e").unwrap(),
            (
                Method::PUT,
                "/api/admin/vwr/message/e".into(),
                Some(json!({"message": {"en": "Hi", "ko": "안녕"}}))
            )
        );
        app.on_action_result("set message", Ok(json!({})), T0);

        app.on_key(key('m'));
        app.on_key(code(KeyCode::Enter));
        typed(&mut app, "  ");
        app.on_key(code(KeyCode::Enter));
        let Mode::Confirm { question, .. } = app.mode() else { panic!("{:?}", app.mode()) };
        assert!(question.starts_with("Clear the message"), "{question}");
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action, Action::SetMessage { en: None, ko: None });
        assert_eq!(action.request("e").unwrap().2, Some(json!({"message": null})));

        // only ko
        app.on_action_result("clear message", Ok(json!({})), T0);
        app.on_key(key('m'));
        app.on_key(code(KeyCode::Enter));
        typed(&mut app, "네");
        app.on_key(code(KeyCode::Enter));
        let action = app.on_key(key('y')).unwrap();
        assert_eq!(action.request("e").unwrap().2, Some(json!({"message": {"ko": "네"}})));
    }

    #[test]
    fn no_second_action_while_one_is_in_flight() {
        let mut app = app_with(&open_status());
        app.on_key(key('r'));
        assert_eq!(app.on_key(key('y')), Some(Action::Resume));
        app.on_key(key('p'));
        assert_eq!(app.mode(), &Mode::Normal);
        assert!(screen(&app, 100, 30).contains("waiting for the answer"));
        let mut answer = open_status();
        answer["state"] = json!("open");
        app.on_action_result("resume", Ok(answer), T0 + 1.0);
        assert!(app.snapshot_text().contains("resume: done: now open"));
        app.on_key(key('p'));
        assert!(matches!(app.mode(), Mode::Prompt { .. }));
    }

    #[test]
    fn action_errors_show_the_api_message() {
        let mut app = app_with(&open_status());
        app.on_action_result(
            "pause",
            Err("409 Conflict: invalid_transition: cannot pause a closed event".into()),
            T0 + 1.0,
        );
        let s = screen(&app, 120, 30);
        assert!(
            s.contains("pause failed: 409 Conflict: invalid_transition: cannot pause a closed event"),
            "{s}"
        );
    }

    fn counters(issued: u64, admitted: u64, serving: u64) -> Value {
        json!({"state": "open", "issued": issued, "admitted": admitted, "servingCounter": serving,
               "waiting": issued.saturating_sub(serving)})
    }

    #[test]
    fn rates_from_successive_samples() {
        let mut app = App::new("e");
        assert_eq!(app.live(), None);
        app.on_status(&counters(100, 50, 60), T0);
        assert_eq!(app.live(), None, "one sample is no rate");
        // 20 joins/s, 10 admitted/s, 12 served/s for 15 s
        for i in 1..=15u64 {
            app.on_status(&counters(100 + 20 * i, 50 + 10 * i, 60 + 12 * i), T0 + i as f64);
        }
        let live = app.live().unwrap();
        assert!((live.joins_per_second - 20.0).abs() < 1e-9, "{live:?}");
        assert!((live.admitted_per_second - 10.0).abs() < 1e-9, "{live:?}");
        assert!((live.served_per_second - 12.0).abs() < 1e-9, "{live:?}");
        assert!((live.over - 10.0).abs() < 1e-9, "the 10-s window: {live:?}");
        // no servedPerSecond in the status: the wait estimate uses the live served rate
        let wait = app.wait_estimate().unwrap();
        assert!((wait - 160.0 / 12.0).abs() < 1e-9, "{wait}");
        // then the joins stop: the 10-s rate falls, the older samples no longer count
        for i in 16..=30u64 {
            app.on_status(&counters(400, 200 + 10 * (i - 15), 240 + 10 * (i - 15)), T0 + i as f64);
        }
        assert_eq!(app.live().unwrap().joins_per_second, 0.0);
        let joins = rate_series(app.samples(), |s| s.issued);
        assert_eq!(joins.len(), 30);
        assert_eq!(&joins[..15], &[20; 15]);
        assert_eq!(&joins[15..], &[0; 15]);
        let text = app.snapshot_text();
        assert!(text.contains("0.0 (10 s)"), "{text}");
        assert!(text.contains("10.0 (10 s) · served — (60 s)"), "{text}");
    }

    #[test]
    fn history_is_bounded_and_resets_when_counters_go_back() {
        let mut app = App::new("e");
        for i in 0..1000u64 {
            app.on_status(&counters(i, i / 2, i), T0 + i as f64);
        }
        assert!(app.samples().len() <= (HISTORY_SECS + RATE_WINDOW_SECS) as usize + 1);
        app.on_status(&counters(5, 0, 0), T0 + 1000.0);
        assert_eq!(app.samples().len(), 1, "a recreated event starts a new history");
    }

    #[test]
    fn wait_estimate_and_no_show() {
        let app = app_with(&open_status());
        assert_eq!(app.wait_estimate(), Some(20.0));
        let s = app.status().unwrap();
        assert!((s.no_show_share().unwrap() - 0.05).abs() < 1e-12);
        let app = app_with(&json!({"state": "open", "waiting": 10, "servingCounter": 0, "admitted": 0}));
        assert_eq!(app.wait_estimate(), None);
        assert_eq!(app.status().unwrap().no_show_share(), None);
    }

    #[test]
    fn bad_or_partial_answers_do_not_panic_and_keep_the_figures() {
        let mut app = app_with(&open_status());
        for bad in [json!(null), json!([1, 2, 3]), json!("oops"), json!(42)] {
            app.on_status(&bad, T0 + 1.0);
            let text = app.snapshot_text();
            assert!(text.contains("poll failed"), "{text}");
            assert!(text.contains("1200"), "the last figures stay: {text}");
            screen(&app, 100, 30);
        }
        app.on_poll_error("could not reach http://127.0.0.1:1/: connection refused", T0 + 2.0);
        assert!(screen(&app, 120, 30).contains("connection refused"));
        // a good poll clears the poll error
        app.on_status(&open_status(), T0 + 3.0);
        assert!(!app.snapshot_text().contains("poll failed"));

        for partial in [
            json!({}),
            json!({"state": 5, "issued": "many", "message": "not an object", "rates": null, "tier2": []}),
            json!({"issued": -1, "servingCounter": 1.5, "rates": {"servedPerSecond": "x"}, "config": 3}),
            json!({"state": "weird", "message": {"en": 1, "ko": null}, "openAt": "soon", "seed": 7}),
            json!({"active": false}),
            json!({"state": "prequeue", "openAt": 0}),
            json!({"state": "closed", "closeReason": "sold_out", "closeAt": u64::MAX}),
        ] {
            let mut app = App::new("e");
            app.on_status(&partial, T0);
            app.on_tier2(&json!({"threshold": "x", "active": -3}));
            app.on_tier2(&json!(null));
            screen(&app, 100, 30);
            screen(&app, 30, 10);
            let _ = app.snapshot_text();
        }
        let app = app_with(&json!({"active": false}));
        assert_eq!(app.status().unwrap().state(), Some("inactive"));
    }

    #[test]
    fn watch_args_parse() {
        use clap::{CommandFactory, Parser};
        #[derive(Debug, Parser)]
        struct Cli {
            #[command(flatten)]
            args: WatchArgs,
        }
        Cli::command().debug_assert();
        let cli =
            Cli::try_parse_from(["vwr", "sale1", "--key", "k", "--interval", "500ms", "--once"]).unwrap();
        assert_eq!(cli.args.event_id, "sale1");
        assert_eq!(cli.args.interval, Duration::from_millis(500));
        assert!(cli.args.once);
        assert_eq!(cli.args.tier2_url, None);
        let cli = Cli::try_parse_from(["vwr", "e", "--tier2-url", "http://t2", "--sigv4"]).unwrap();
        assert_eq!(cli.args.interval, Duration::from_secs(1));
        assert_eq!(cli.args.tier2_url.as_deref(), Some("http://t2"));
        assert!(cli.args.target.sigv4);
    }

    #[test]
    fn interval_parsing() {
        assert_eq!(parse_interval("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_interval("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("0.5"), Ok(Duration::from_millis(500)));
        assert!(parse_interval("0").is_err());
        assert!(parse_interval("fast").is_err());
    }

    #[test]
    fn time_formatting() {
        assert_eq!(fmt_utc(0.0), "1970-01-01 00:00:00Z");
        assert_eq!(fmt_utc(951_782_400.0), "2000-02-29 00:00:00Z");
        assert_eq!(fmt_utc(1_790_000_000.0), "2026-09-21 14:13:20Z");
        assert_eq!(fmt_duration(3723.0), "1h 02m 03s");
        assert_eq!(fmt_duration(59.6), "1m 00s");
        assert_eq!(fmt_duration(-5.0), "0s");
    }
}
