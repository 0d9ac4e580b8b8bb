//! Who the tier-2 caller is (SPEC §2): never a client-chosen value. In order:
//! 1. the subject from an upstream authorizer ([`UpstreamUser`], set by the Lambda glue);
//! 2. the subject of the caller's verified tier-1 token (cookie `{prefix}{eventId}` or header
//!    `x-vwr-token`);
//! 3. the `X-User-Id` header, only when local development mode is on.
//!
//! A verified tier-1 token also gives the caller's tier-1 position (the only source of a
//! tier-1-ordered line score).

use std::sync::Arc;

use http::HeaderMap;
use http::request::Parts;
use vwr_core::identity::{UpstreamUser, cookie, valid_user_id};
use vwr_core::time::Clock;
use vwr_core::token::{Tier1Claims, Tier1Tokens};
use vwr_core::{ApiError, EventId};

use crate::service::Caller;

/// Header that may carry the tier-1 token when cookies are not available.
pub const TIER1_TOKEN_HEADER: &str = "x-vwr-token";
/// Local development only.
pub const DEV_USER_HEADER: &str = "x-user-id";

/// How callers are identified.
#[derive(Clone)]
pub struct Identity {
    pub tier1: Option<Tier1Tokens>,
    pub cookie_prefix: String,
    /// Accept `X-User-Id` (local development only).
    pub dev_user_header: bool,
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("tier1", &self.tier1.is_some())
            .field("cookie_prefix", &self.cookie_prefix)
            .field("dev_user_header", &self.dev_user_header)
            .finish()
    }
}

impl Identity {
    /// The verified tier-1 claims for `event`, if the caller brings a valid token.
    pub fn tier1_claims(&self, headers: &HeaderMap, event: &EventId) -> Option<Tier1Claims> {
        let tokens = self.tier1.as_ref()?;
        let now = self.clock.now_secs();
        let name = format!("{}{}", self.cookie_prefix, event);
        let from_cookies = headers
            .get_all(http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|h| cookie(h, &name));
        let from_header = headers.get(TIER1_TOKEN_HEADER).and_then(|v| v.to_str().ok());
        from_header.into_iter().chain(from_cookies).take(4).find_map(|t| tokens.verify(t, event, now).ok())
    }

    /// Resolves the caller for `event`.
    pub fn caller(&self, parts: &Parts, event: &EventId) -> Result<Caller, ApiError> {
        let claims = self.tier1_claims(&parts.headers, event);
        let position = claims.as_ref().map(|c| c.pos);
        if let Some(UpstreamUser(u)) = parts.extensions.get::<UpstreamUser>() {
            if !valid_user_id(u) {
                return Err(ApiError::forbidden("invalid_identity", "the upstream identity is not usable"));
            }
            return Ok(Caller { user: u.clone(), tier1_position: position });
        }
        if let Some(c) = claims {
            return Ok(Caller { user: c.sub, tier1_position: position });
        }
        if self.dev_user_header
            && let Some(u) = parts.headers.get(DEV_USER_HEADER).and_then(|v| v.to_str().ok())
        {
            if !valid_user_id(u) {
                return Err(ApiError::bad_request(
                    "invalid_user_id",
                    "X-User-Id must be 1-256 visible characters",
                ));
            }
            return Ok(Caller { user: u.to_owned(), tier1_position: None });
        }
        Err(ApiError::unauthorized("no caller identity: sign in, or pass the waiting room first")
            .with_code("identity_required"))
    }
}
