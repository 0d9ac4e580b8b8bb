//! What the deployed stack and the account allow, against what a sale needs: the domain of
//! `vwr preflight` (docs/rehearsal.md#preflight). Pure: no AWS SDK type, no I/O.
//!
//! The arrow points one way, from the adapter to this crate:
//!
//! - the adapter, in the `vwr` command (`cli/src/preflight/aws/`), reads the account and the
//!   stack through the AWS SDK (Service Quotas, Lambda, API Gateway REST and HTTP APIs,
//!   DynamoDB, the CloudFront KeyValueStore, CloudWatch, WAF) and answers plain
//!   [`Observations`]: each thing found, missing, or not checked with the reason the endpoint
//!   gave (an emulator that does not serve the call, an AccessDenied).
//! - here, [`judge`] turns the observations and, when given, the [`PlanNeeds`] of a
//!   `vwr plan --json` file into one [`Row`] per check (`ok`, `warn`, `fail`, `not checked`), and
//!   [`render_table`] / [`Report`]'s JSON print them.
//!
//! A `not checked` row never counts as `ok`; only a `fail` blocks ([`Report::blocking`]).

mod check;
mod error;
mod judge;
mod names;
mod needs;
mod observe;
mod render;

pub use check::{HEADROOM, Report, Row, Status, Summary, capacity};
pub use error::PreflightError;
pub use judge::judge;
pub use names::{ApiKind, DEFAULT_PREFIX, FUNCTIONS, Names, PLANNED_FUNCTIONS, StageName};
pub use needs::PlanNeeds;
pub use observe::{
    AlarmSeen, FunctionSeen, KvsSeen, LambdaAccount, Observations, Quota, RateRule, Seen, StageSeen,
    TableSeen, TtlSeen, WebAclSeen,
};
pub use render::render_table;
