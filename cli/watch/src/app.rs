//! The console's state: the last figures, the samples, the prompt and confirmation state
//! machine. No I/O: the loop feeds it answers, keys and the time.

use super::render::{clip, fmt_clock};
use super::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Style;
use serde_json::Value;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NoticeKind {
    Info,
    Ok,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NoticeSource {
    Poll,
    Keys,
    Action,
}

#[derive(Debug, Clone)]
pub(super) struct Notice {
    pub(super) text: String,
    pub(super) kind: NoticeKind,
    pub(super) source: NoticeSource,
}

/// The console's state. No I/O: the loop feeds it answers, keys and the time.
#[derive(Debug, Clone)]
pub struct App {
    pub(super) event_id: String,
    pub(super) status: Option<Status>,
    pub(super) tier2_direct: Option<Tier2>,
    pub(super) tier2_error: Option<String>,
    pub(super) samples: VecDeque<Sample>,
    pub(super) last_refresh: Option<f64>,
    pub(super) now: f64,
    pub(super) notice: Option<Notice>,
    pub(super) mode: Mode,
    pub(super) busy: Option<String>,
}

/// One labelled figure, shared by the screen and the `--once` snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: &'static str,
    pub value: String,
    pub style: Style,
}

pub(super) fn row(label: &'static str, value: impl Into<String>) -> Row {
    Row { label, value: value.into(), style: Style::default() }
}

pub(super) const DASH: &str = "—";

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
            Err(e) => return self.on_poll_error(e, at),
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
    pub fn on_poll_error(&mut self, error: impl std::fmt::Display, at: f64) {
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
    pub fn on_tier2_error(&mut self, error: impl std::fmt::Display) {
        self.tier2_error = Some(error.to_string());
    }

    /// An action's answer: every admin route answers the status, so it refreshes the figures.
    pub fn on_action_done(&mut self, label: &str, v: &Value, at: f64) {
        self.busy = None;
        if v.is_object() && (v.get("issued").is_some() || v.get("state").is_some()) {
            self.on_status(v, at);
        }
        let state = v.get("state").and_then(Value::as_str).map(|s| format!(": now {s}"));
        self.notice = Some(Notice {
            text: format!("{label}: done{}", state.unwrap_or_default()),
            kind: NoticeKind::Ok,
            source: NoticeSource::Action,
        });
    }

    /// An action failed: the figures stay, the error shows.
    pub fn on_action_failed(&mut self, label: &str, error: impl std::fmt::Display) {
        self.busy = None;
        self.notice = Some(Notice {
            text: format!("{label} failed: {error}"),
            kind: NoticeKind::Error,
            source: NoticeSource::Action,
        });
    }

    pub(super) fn info(&mut self, text: impl Into<String>) {
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

    pub(super) fn on_normal_key(&mut self, key: KeyEvent) -> Option<Action> {
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

    pub(super) fn prompt(&mut self, kind: PromptKind) {
        self.mode = Mode::Prompt { kind, input: String::new(), error: None };
    }

    pub(super) fn confirm(&mut self, action: Action) {
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

    pub(super) fn submit(&mut self, kind: PromptKind, input: String) {
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

    pub(super) fn tier2(&self) -> Option<(&Tier2, &'static str)> {
        match (&self.tier2_direct, self.status.as_ref().and_then(|s| s.tier2.as_ref())) {
            (Some(t), _) => Some((t, "the tier-2 admin status")),
            (None, Some(t)) => Some((t, "the tier-1 status")),
            (None, None) => None,
        }
    }
}
