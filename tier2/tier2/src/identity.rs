//! Who the tier-2 caller is: never a client-chosen value. In order:
//! 1. the subject from an upstream authorizer ([`UpstreamUser`], set by the Lambda glue);
//! 2. the caller's verified tier-1 token (cookie `{prefix}{eventId}` or header `x-vwr-token`)
//!    with its place proof: the user is a digest of its subject ([`tier1_user_id`]), never the
//!    `requestId` itself;
//! 3. the caller's tier-2 identity cookie (`vwr_t2_{eventId}`), issued by tier 2 itself at
//!    each check/status/heartbeat, so a visitor stays known for as long as they wait or are
//!    active in tier 2, whatever the life of their tier-1 token;
//! 4. the caller's tier-1 token as in 2 but expired ([`Source::Tier1Lapsed`]): only to find the
//!    place, or the place a timeout took, they already have — never to join
//!    (docs/invariants.md#20, #23);
//! 5. the `X-User-Id` header, only when local development mode is on.
//!
//! Tier-1 tokens are read through [`Tier1Link`] only: the derived edge and place-proof keys,
//! never the tier-1 master keys, and a token counts only with a valid place proof, so one
//! minted with the edge keys alone gives no identity and no position (docs/invariants.md#24).
//! A verified tier-1 token, or the identity cookie it led to, also gives the caller's tier-1
//! position (the only source of a tier-1-ordered line score).

use std::sync::Arc;

use http::HeaderMap;
use http::request::Parts;
use vwr_core::EventId;
use vwr_core::identity::{UpstreamUser, cookie, tier1_user_id, valid_user_id};
use vwr_core::time::Clock;
use vwr_core::token::{Tier1Claims, Tier1Link};

use crate::entry_token::{EntryVerifier, IdentityClaims};
use crate::model::HoldProof;

/// Header that may carry the tier-1 token when cookies are not available.
pub const TIER1_TOKEN_HEADER: &str = "x-vwr-token";
/// Local development only.
pub const DEV_USER_HEADER: &str = "x-user-id";
pub use vwr_core::hold::IDENTITY_COOKIE_PREFIX;
/// Cookie values tried per request at most (duplicates from several paths).
const MAX_COOKIES_TRIED: usize = 4;

/// Why a caller could not be identified (mapped to answers in `http`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("the upstream identity is not usable")]
    BadUpstream,
    #[error("X-User-Id must be 1-256 visible characters")]
    BadDevUser,
    #[error("no caller identity: sign in, or pass the waiting room first")]
    Missing,
}

/// Where the caller's identity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Upstream,
    Tier1Token,
    IdentityCookie,
    /// A tier-1 token that has expired (still signed, place-proven, of this event): the caller
    /// may find a place they have, never join.
    Tier1Lapsed,
    DevHeader,
}

/// The caller of a tier-2 request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    /// The position from the caller's verified tier-1 token (or identity cookie) for this
    /// event, if any.
    pub tier1_position: Option<u64>,
    pub source: Source,
    /// The place tier 2 signed into the caller's identity cookie, when `check` reads it: given
    /// back if the store lost it since (docs/invariants.md#27).
    pub proof: Option<HoldProof>,
}

impl Caller {
    /// Whether this caller may join a line (not only find a place they have).
    pub fn may_join(&self) -> bool {
        self.source != Source::Tier1Lapsed
    }
}

/// How callers are identified.
#[derive(Clone)]
pub struct Identity {
    /// Reads callers' tier-1 tokens: the edge and place-proof keys, never the master keys.
    pub tier1: Option<Tier1Link>,
    /// Verifies tier-2 identity cookies (public keys are enough).
    pub tier2: Option<EntryVerifier>,
    pub cookie_prefix: String,
    /// Accept `X-User-Id` (local development only).
    pub dev_user_header: bool,
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("tier1", &self.tier1.is_some())
            .field("tier2", &self.tier2.is_some())
            .field("cookie_prefix", &self.cookie_prefix)
            .field("dev_user_header", &self.dev_user_header)
            .finish()
    }
}

fn cookie_values<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(move |h| cookie(h, name))
        .take(MAX_COOKIES_TRIED)
}

/// Tier 1 hands out positions from 1: a position 0 is no place (and 0 is the score of an
/// admission coming back to the front of a line, docs/invariants.md#23).
fn position(c: &Tier1Claims) -> Option<u64> {
    Some(c.pos).filter(|p| *p > 0)
}

impl Identity {
    /// Callers known by an upstream authorizer, by their tier-1 tokens (read with `tier1`'s
    /// link keys, in the cookie of its prefix; `vwr_t1_` without) and by their tier-2 identity
    /// cookies (verified with `tier2`); never by `X-User-Id` (`dev_user_header` turns that on,
    /// in `vwr dev` only).
    pub fn new(
        tier1: Option<(Tier1Link, String)>,
        tier2: Option<EntryVerifier>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let (tier1, cookie_prefix) = match tier1 {
            Some((link, prefix)) => (Some(link), prefix),
            None => (None, "vwr_t1_".to_owned()),
        };
        Self { tier1, tier2, cookie_prefix, dev_user_header: false, clock }
    }

    /// The tier-1 tokens the caller brings for `event` (header first), at most a few.
    fn tier1_tokens<'a>(&self, headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let from_header = headers.get(TIER1_TOKEN_HEADER).and_then(|v| v.to_str().ok());
        from_header.into_iter().chain(cookie_values(headers, name)).take(MAX_COOKIES_TRIED)
    }

    /// The verified tier-1 claims for `event`, place proof included, if the caller brings a
    /// valid token.
    pub fn tier1_claims(&self, headers: &HeaderMap, event: &EventId) -> Option<Tier1Claims> {
        let link = self.tier1.as_ref()?;
        let now = self.clock.now_secs();
        let name = self.tier1_cookie_name(event);
        self.tier1_tokens(headers, &name).find_map(|t| link.verify(t, event, now).ok())
    }

    /// Like [`Self::tier1_claims`], but a token that has expired counts too.
    pub fn lapsed_tier1_claims(&self, headers: &HeaderMap, event: &EventId) -> Option<Tier1Claims> {
        let link = self.tier1.as_ref()?;
        let now = self.clock.now_secs();
        let name = self.tier1_cookie_name(event);
        self.tier1_tokens(headers, &name).find_map(|t| link.verify_lapsed(t, event, now).ok())
    }

    /// The verified tier-2 identity claims for `event`, if the caller brings the cookie.
    pub fn identity_claims(&self, headers: &HeaderMap, event: &EventId) -> Option<IdentityClaims> {
        let verifier = self.tier2.as_ref()?;
        let now = self.clock.now_secs();
        let name = format!("{IDENTITY_COOKIE_PREFIX}{event}");
        cookie_values(headers, &name).find_map(|t| verifier.verify_identity(t, event, now).ok())
    }

    /// The tier-1 token of `user`, renewed for a visitor tier 2 holds (docs/tokens.md#tier-2-holds):
    /// from the tier-1 token the caller brings (expired or not) whose subject's digest is
    /// `user`, the same claims with `exp` = max(old `exp`, now + `window_secs`), re-signed with
    /// the edge key; `http` sends it as the tier-1 cookie for `window_secs`. `None` when the
    /// caller brings no such token, or its `exp` would not move.
    pub fn renewed_tier1_token(
        &self,
        headers: &HeaderMap,
        event: &EventId,
        user: &str,
        window_secs: u64,
    ) -> Option<String> {
        let link = self.tier1.as_ref()?;
        let now = self.clock.now_secs();
        let name = self.tier1_cookie_name(event);
        let claims = self
            .tier1_tokens(headers, &name)
            .filter_map(|t| link.verify_lapsed(t, event, now).ok())
            .find(|c| tier1_user_id(&c.sub) == user)?;
        let exp = now.saturating_add(window_secs);
        if claims.exp >= exp {
            return None;
        }
        link.resign(&Tier1Claims { exp, ..claims }).ok()
    }

    /// The place tier 2 signed into `user`'s identity cookie of `event` (their hold), if they
    /// bring one that verifies.
    pub fn proof(&self, headers: &HeaderMap, event: &EventId, user: &str) -> Option<HoldProof> {
        let c = self.identity_claims(headers, event).filter(|c| c.sub == user)?;
        Some(HoldProof { held: c.held()?, issued_at: c.iat })
    }

    /// The name of the caller's tier-1 cookie of `event`: `{prefix}{eventId}`.
    pub fn tier1_cookie_name(&self, event: &EventId) -> String {
        format!("{}{}", self.cookie_prefix, event)
    }

    /// Resolves the caller for `event`.
    pub fn caller(&self, parts: &Parts, event: &EventId) -> Result<Caller, IdentityError> {
        let claims = self.tier1_claims(&parts.headers, event);
        let ident = || self.identity_claims(&parts.headers, event);
        if let Some(UpstreamUser(u)) = parts.extensions.get::<UpstreamUser>() {
            if !valid_user_id(u) {
                return Err(IdentityError::BadUpstream);
            }
            let position = match &claims {
                Some(c) => position(c),
                None => ident().filter(|i| &i.sub == u).and_then(|i| i.pos),
            };
            return Ok(Caller {
                user: u.clone(),
                tier1_position: position,
                source: Source::Upstream,
                proof: None,
            });
        }
        if let Some(c) = claims {
            return Ok(Caller {
                user: tier1_user_id(&c.sub),
                tier1_position: position(&c),
                source: Source::Tier1Token,
                proof: None,
            });
        }
        if let Some(i) = ident() {
            return Ok(Caller {
                user: i.sub,
                tier1_position: i.pos,
                source: Source::IdentityCookie,
                proof: None,
            });
        }
        if let Some(c) = self.lapsed_tier1_claims(&parts.headers, event) {
            return Ok(Caller {
                user: tier1_user_id(&c.sub),
                tier1_position: position(&c),
                source: Source::Tier1Lapsed,
                proof: None,
            });
        }
        if self.dev_user_header
            && let Some(u) = parts.headers.get(DEV_USER_HEADER).and_then(|v| v.to_str().ok())
        {
            if !valid_user_id(u) {
                return Err(IdentityError::BadDevUser);
            }
            return Ok(Caller {
                user: u.to_owned(),
                tier1_position: None,
                source: Source::DevHeader,
                proof: None,
            });
        }
        Err(IdentityError::Missing)
    }
}
