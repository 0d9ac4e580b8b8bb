//! Why preflight cannot run at all (a row's own trouble is a `not checked` row, not an error).

/// Every way `vwr preflight` fails before reading anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PreflightError {
    /// The `--plan` file cannot be read.
    #[error("--plan {path}: {reason}")]
    PlanUnreadable { path: String, reason: String },
    /// The `--plan` file is not the JSON `vwr plan --json` writes.
    #[error("--plan {path}: not a `vwr plan --json` file: {reason}")]
    PlanInvalid { path: String, reason: String },
    /// No AWS region configured: every call would fail.
    #[error("no AWS region: set AWS_REGION (or a profile's region)")]
    NoRegion,
    /// No AWS credentials could be loaded: every call would fail, each with the same message.
    #[error("no AWS credentials: {0} (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")]
    NoCredentials(String),
    /// AWS does not answer at all (a closed endpoint, no network): every row would say so.
    #[error("cannot reach AWS at {endpoint}: {cause}")]
    Unreachable { endpoint: String, cause: String },
    /// This `vwr` was built without the AWS clients the checks use.
    #[error(
        "this vwr was built without the AWS checks (--no-default-features): run `cargo run --release --bin vwr -- preflight …`"
    )]
    NotBuilt,
    /// The report could not be written as JSON.
    #[error("report: {0}")]
    Render(String),
}
