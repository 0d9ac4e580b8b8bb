//! What the two tiers know of each other, as traits in the core so that neither tier depends
//! on the other: the composition roots (each Lambda's `main`, `vwr dev`) plug one into the
//! other (docs/adr/0014-workspace-layout.md).

use async_trait::async_trait;

use crate::{ApiError, EventId};

/// A lookup failure of [`ActiveEvents`] (the tier-1 store is unreachable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("active-event lookup failed: {0}")]
pub struct LookupError(pub String);

/// Does tier 1 gate this event? Tier 2 registers such events implicitly and orders their
/// line by tier-1 position.
#[async_trait]
pub trait ActiveEvents: Send + Sync + 'static {
    async fn is_active(&self, event: &EventId) -> Result<bool, LookupError>;
}

/// No tier 1 in front (tier 2 stand-alone, the worker).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoActiveEvents;

#[async_trait]
impl ActiveEvents for NoActiveEvents {
    async fn is_active(&self, _: &EventId) -> Result<bool, LookupError> {
        Ok(false)
    }
}

/// More figures for tier 1's admin status of an event (tier 2's, when both run in one
/// process, as in `vwr dev`).
#[async_trait]
pub trait StatusExtra: Send + Sync + 'static {
    /// The key under which the figures appear.
    fn key(&self) -> &'static str;
    async fn figures(&self, event: &EventId) -> Result<Option<serde_json::Value>, ApiError>;
}
