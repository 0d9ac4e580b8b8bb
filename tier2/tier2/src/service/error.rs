//! Why a tier-2 operation failed: one enum for every caller; `http` maps it to answers once.

use vwr_core::tiers::LookupError;

use crate::model::StoreError;

/// Why a tier-2 operation failed: the domain's own errors; `http` maps them to answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Tier2Error {
    #[error("this event has no waiting room")]
    EventNotFound,
    #[error("you are neither waiting nor admitted; check in first")]
    NotInQueue,
    /// The line is ordered by tier-1 position and the caller brings none.
    #[error("pass the waiting room first (no valid tier-1 token)")]
    Tier1TokenRequired,
    #[error("{0}")]
    InvalidThreshold(String),
    /// Tier 1 (asked whether it gates the event) is unreachable.
    #[error("{0}")]
    Tier1Unavailable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(&'static str),
}

impl From<LookupError> for Tier2Error {
    fn from(e: LookupError) -> Self {
        Self::Tier1Unavailable(e.0)
    }
}
