//! Why a load test, its analysis or a fault proxy stops before it has a report, and why its
//! options are refused. The messages are the ones `vwr` prints after `vwr: ` (docs/cli.md).

use std::net::SocketAddr;
use std::path::PathBuf;

use http::StatusCode;

use crate::client::ClientError;
use crate::records::RecordsError;

/// What stops `vwr loadtest`, `vwr loadtest analyze` or `vwr aws-proxy`.
#[derive(Debug, thiserror::Error)]
pub enum LoadtestError {
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error("no admin key: pass --admin-key, set VWR_ADMIN_KEY, or run in the directory of `vwr dev`")]
    NoAdminKey,
    #[error(transparent)]
    Client(#[from] ClientError),
    /// An admin call of the harness answered an error.
    #[error("{path}: {status} {body}")]
    Admin { path: String, status: StatusCode, body: String },
    #[error("{proxy} is not a vwr aws-proxy ({status})")]
    NotAProxy { proxy: String, status: StatusCode },
    #[error("status document: {0}")]
    StatusDocument(StatusCode),
    #[error("event {0} was not in its pre-queue a second before its open: is the advancer running?")]
    NoPrequeue(String),
    /// A proxy could not listen: `what` is `front proxy` or `fault proxy`.
    #[error("{what} on {listen}: {source}")]
    Listen { what: &'static str, listen: SocketAddr, source: std::io::Error },
    #[error(transparent)]
    EventId(#[from] vwr_core::ids::EventIdError),
    #[error("--enqueue-key: {0}")]
    EnqueueKey(vwr_core::KeyError),
    /// The settings of a rehearsal's records are not options `vwr loadtest` takes.
    #[error("the records' settings: {0}")]
    Settings(clap::Error),
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

impl LoadtestError {
    /// The error of a failed write of `path` (`map_err(LoadtestError::write(path))`).
    pub fn write(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + use<> {
        let path = path.to_owned();
        move |source| Self::Write { path, source }
    }
}

/// Options the run cannot go with (refused before anything is sent), and `--action` and
/// `--fault` values that do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("--visitors must be at least 1")]
    NoVisitors,
    /// A share that is not between 0 and 1: the flag's name.
    #[error("{0} must be between 0 and 1")]
    NotAShare(&'static str),
    #[error("--mode target-arrivals needs --target-per-minute N (N ≥ 1)")]
    NoTarget,
    #[error("--prequeue-seconds must be at least 4 (the pre-queue opens 1 s after the start)")]
    ShortPrequeue,
    #[error("--no-show-rate is for --scenario steady")]
    NoShowsInPrequeue,
    #[error("a redis fault needs --redis-stop-cmd and --redis-start-cmd")]
    RedisCommands,
    #[error(
        "dynamodb/sqs faults need --aws-proxy URL of a running `vwr aws-proxy` (and vwr's AWS_ENDPOINT_URL pointed at it)"
    )]
    NoAwsProxy,
    #[error("action {0:?}: expected SECONDS:advance=N or SECONDS:threshold=N")]
    Action(String),
    #[error("fault {0:?}: expected KIND@START+DURATION, KIND one of redis, dynamodb, sqs, check403")]
    Fault(String),
}
