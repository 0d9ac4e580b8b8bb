//! Why `vwr watch` stops, or a call of the console fails (shown on screen, the console goes on).

use vwr_core::ids::EventIdError;
use vwr_loadtest::client::{ClientError, NoAdminKey};

/// What stops `vwr watch` (or its `--once` snapshot), and what a poll or an action of the
/// console says when it fails.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("event id {id:?}: {source}")]
    EventId { id: String, source: EventIdError },
    #[error(transparent)]
    NoAdminKey(#[from] NoAdminKey),
    #[error(transparent)]
    Client(#[from] ClientError),
    /// An error answer: "409 Conflict: invalid_transition: …" (docs/api.md#errors).
    #[error("{url}: {answer}")]
    Refused { url: String, answer: String },
    /// An answer that is not a JSON object, clipped.
    #[error("unexpected answer (not a JSON object): {0}")]
    NotAnObject(String),
    #[error("nothing to send")]
    NothingToSend,
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Writing the `--once` snapshot failed.
    #[error(transparent)]
    Output(std::io::Error),
    #[error("vwr watch needs a terminal (stdin and stdout); use --once for a plain-text snapshot")]
    NoTerminal,
    #[error("terminal set-up failed: {0}")]
    TerminalSetUp(std::io::Error),
    #[error("drawing failed: {0}")]
    Draw(std::io::Error),
    #[error("terminal input closed")]
    InputClosed,
    #[error("reading the terminal failed: {0}")]
    ReadTerminal(std::io::Error),
}

/// A `--interval` that is not a duration the console can poll at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntervalError {
    #[error("not a duration: {0:?}")]
    NotADuration(String),
    #[error("interval {0:?} out of range (100ms to 3600s)")]
    OutOfRange(String),
}
