//! The tier-2 hold: what tier 2 signs into a visitor's identity cookie (`vwr_t2_{eventId}`)
//! about the place it holds for them, and how it is read with tier 2's *public* keys — by tier
//! 2 (who the caller is; the place to give back after its store lost it) and by tier 1 (a
//! visitor tier 2 holds keeps their tier-1 session however long the tier-2 wait; docs/tokens.md#tier-2-holds,
//! docs/invariants.md#27).
//!
//! The identity token is an ES256 JWT of tier 2's entry-token keys with audience
//! [`IDENTITY_AUDIENCE`], so it is never an entry token. Its claims: `sub` (the tier-2 user),
//! `eid`, `pos` (the tier-1 position it came with), `tier: 2`, `iat`, `exp`, and the hold as
//! of `iat`: `ls` (the score of a place in line) or `adm` (an admission,
//! `"jti|admittedAtMs|endsAtMs|tokenEndsAtMs"`, the store's own record).

use serde::{Deserialize, Serialize};

use crate::EventId;
use crate::token::{EcVerifyingKeys, TokenError, check_issuer, check_times};

/// Audience of tier-2 identity tokens (the `vwr_t2_{eventId}` cookie). An identity token is
/// never an entry token: entry-token verification demands the configured API audience and
/// `sub` = the event, an identity token has neither.
pub const IDENTITY_AUDIENCE: &str = "vwr-tier2-identity";

/// The tier-2 identity cookie is `{IDENTITY_COOKIE_PREFIX}{eventId}`.
pub const IDENTITY_COOKIE_PREFIX: &str = "vwr_t2_";

/// The place tier 2 held for a visitor when it signed their identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// In line, at this score.
    Waiting { score: u64 },
    /// Admitted: the store's admission record.
    Admitted(Admission),
}

/// An admission as the tier-2 store records it (milliseconds since the epoch, the store's
/// clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    pub jti: String,
    pub admitted_at_ms: u64,
    /// End of the admission (the slot); no entry token outlives it.
    pub expires_at_ms: u64,
    /// End of the latest entry token handed out for it (0 = none yet); never after
    /// `expires_at_ms`. The slot stays taken until then even if the user leaves.
    pub token_expires_at_ms: u64,
}

impl Admission {
    /// The record's text form, `jti|admittedAtMs|endsAtMs|tokenEndsAtMs` (as the stores keep it).
    pub fn encode(&self) -> String {
        format!("{}|{}|{}|{}", self.jti, self.admitted_at_ms, self.expires_at_ms, self.token_expires_at_ms)
    }

    /// Reads [`Self::encode`]'s form; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('|');
        let jti = parts.next().filter(|j| !j.is_empty() && j.len() <= 64)?.to_owned();
        let admitted_at_ms = parts.next()?.parse().ok()?;
        let expires_at_ms = parts.next()?.parse().ok()?;
        let token_expires_at_ms = match parts.next() {
            Some("") | None => 0,
            Some(t) => t.parse().ok()?,
        };
        if parts.next().is_some() || !jti.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) {
            return None;
        }
        Some(Self { jti, admitted_at_ms, expires_at_ms, token_expires_at_ms })
    }
}

/// Claims of a tier-2 identity token: who the visitor is in tier 2 (`sub`, the tier-2 user
/// id), their tier-1 position, and the place tier 2 held for them when it signed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityClaims {
    pub iss: String,
    pub aud: String,
    /// The tier-2 user id.
    pub sub: String,
    /// The event.
    pub eid: String,
    /// The visitor's tier-1 position, when they came through tier 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pos: Option<u64>,
    pub tier: u8,
    pub iat: u64,
    pub exp: u64,
    /// Waiting: the place's score in line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ls: Option<u64>,
    /// Admitted: the admission record (see [`Admission::encode`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adm: Option<String>,
}

impl IdentityClaims {
    /// The place tier 2 held when it signed these claims, if any.
    pub fn held(&self) -> Option<Held> {
        if let Some(a) = self.adm.as_deref().and_then(Admission::parse) {
            return Some(Held::Admitted(a));
        }
        self.ls.map(|score| Held::Waiting { score })
    }

    /// Whether tier 2 still holds the visitor as far as these claims tell at `now_ms`: a place
    /// in line (it lasts until the turn, however long), or an admission not yet ended.
    pub fn holds_at(&self, now_ms: u64) -> bool {
        match self.held() {
            Some(Held::Waiting { .. }) => true,
            Some(Held::Admitted(a)) => a.expires_at_ms > now_ms,
            None => false,
        }
    }
}

/// Signs a tier-2 identity token with `ring`'s signing key (ES256, header `kid`): what tier 2
/// does at every call that finds the visitor (`vwr-tier2`'s `EntryTokens::sign_identity`).
pub fn sign(ring: &crate::keys::EcKeyring, claims: &IdentityClaims) -> Result<String, TokenError> {
    use crate::keys::KeyMaterial;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some(ring.signing_kid().to_owned());
    jsonwebtoken::encode(&header, claims, &jsonwebtoken::EncodingKey::from_ec_der(ring.signing_key().bytes()))
        .map_err(|_| TokenError::Malformed)
}

/// An identity token's claims as read: a tier-1 token's (untrusted, all optional) and the hold.
#[derive(Deserialize)]
struct RawIdentity {
    #[serde(flatten)]
    c: crate::token::RawClaims,
    ls: Option<u64>,
    adm: Option<String>,
}

/// Verifies tier-2 identity tokens with tier 2's public keys only.
#[derive(Debug, Clone)]
pub struct HoldVerifier {
    keys: EcVerifyingKeys,
    issuer: String,
}

impl HoldVerifier {
    pub fn new(keys: EcVerifyingKeys, issuer: impl Into<String>) -> Self {
        Self { keys, issuer: issuer.into() }
    }

    /// From tier 2's JWKS document (`VWR_TIER2_JWKS`) and its issuer.
    pub fn from_jwks(jwks: &str, issuer: &str) -> Result<Self, crate::keys::KeyError> {
        Ok(Self::new(EcVerifyingKeys::from_jwks(jwks)?, issuer))
    }

    /// Verifies an identity token of `event` at `now` (seconds).
    pub fn verify(&self, token: &str, event: &EventId, now: u64) -> Result<IdentityClaims, TokenError> {
        let RawIdentity { c, ls, adm } = self.keys.decode(token)?;
        let exp = check_times(c.exp, c.nbf, now)?;
        if c.tier != Some(serde_json::Value::from(2)) {
            return Err(TokenError::WrongTier);
        }
        if c.eid.as_deref() != Some(event.as_str()) {
            return Err(TokenError::WrongEvent);
        }
        check_issuer(c.iss.as_deref(), c.aud.as_ref(), &self.issuer, IDENTITY_AUDIENCE)?;
        let sub = c.sub.filter(|s| crate::identity::valid_user_id(s)).ok_or(TokenError::MissingClaim)?;
        Ok(IdentityClaims {
            iss: self.issuer.clone(),
            aud: IDENTITY_AUDIENCE.to_owned(),
            sub,
            eid: event.to_string(),
            pos: c.pos,
            tier: 2,
            iat: c.iat.unwrap_or(0),
            exp,
            ls,
            adm: adm.filter(|a| Admission::parse(a).is_some()),
        })
    }

    /// The claims of the first identity cookie of `event` in the `Cookie` headers that verifies
    /// at `now` (a few values tried at most).
    pub fn from_cookies<'a>(
        &self,
        cookie_headers: impl IntoIterator<Item = &'a str>,
        event: &EventId,
        now: u64,
    ) -> Option<IdentityClaims> {
        let name = format!("{IDENTITY_COOKIE_PREFIX}{event}");
        cookie_headers
            .into_iter()
            .filter_map(|h| crate::identity::cookie(h, &name))
            .take(4)
            .find_map(|t| self.verify(t, event, now).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_records_read_back_and_refuse_junk() {
        let a = Admission {
            jti: "p.7".into(),
            admitted_at_ms: 10,
            expires_at_ms: 600_010,
            token_expires_at_ms: 30_010,
        };
        assert_eq!(Admission::parse(&a.encode()), Some(a));
        assert_eq!(Admission::parse("j|1|2|").map(|a| a.token_expires_at_ms), Some(0));
        assert_eq!(Admission::parse("j|1|2").map(|a| a.expires_at_ms), Some(2));
        for bad in ["", "|1|2|3", "j|x|2|3", "j|1|2|3|4", "j k|1|2|3", "j|1", "j|1|2|-3"] {
            assert_eq!(Admission::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_place_in_line_holds_until_the_turn_and_an_admission_until_its_end() {
        let c = |ls: Option<u64>, adm: Option<&str>| IdentityClaims {
            iss: "vwr".into(),
            aud: IDENTITY_AUDIENCE.into(),
            sub: "u".into(),
            eid: "e1".into(),
            pos: Some(3),
            tier: 2,
            iat: 0,
            exp: 100,
            ls,
            adm: adm.map(str::to_owned),
        };
        assert!(c(Some(3), None).holds_at(u64::MAX));
        assert!(c(None, Some("j|1|5000|0")).holds_at(4_999));
        assert!(!c(None, Some("j|1|5000|0")).holds_at(5_000));
        assert!(!c(None, None).holds_at(0), "an identity without a place holds nothing");
        assert_eq!(c(Some(3), Some("j|1|5000|0")).held().map(|h| matches!(h, Held::Admitted(_))), Some(true));
    }
}
