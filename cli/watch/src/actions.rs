//! What a key can ask for: the admin actions, and the prompt and confirmation modes.

use super::*;
use serde_json::{Value, json};

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
    pub(super) fn question(&self) -> String {
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
