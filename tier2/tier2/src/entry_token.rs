//! Entry tokens (tier 2): JWT ES256 with `sub` = eventId, `uid`, `tier: 2`, `iat`, `exp`, `jti`
//! (plus `iss`/`aud`), signed with tier-2 keys separate from tier 1. Protected services verify
//! them with the public keys from the JWKS endpoint, without any secret.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};
use vwr_core::EventId;
use vwr_core::keys::{EcKeyring, KeyError, KeyMaterial};
use vwr_core::token::{EcVerifyingKeys, TokenError, check_issuer, check_times};

/// Claims of an entry token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryClaims {
    pub iss: String,
    pub aud: String,
    /// The event id.
    pub sub: String,
    pub uid: String,
    pub tier: u8,
    pub iat: u64,
    pub exp: u64,
    pub jti: String,
}

/// Audience of tier-2 identity tokens (the `vwr_t2_{eventId}` cookie). An identity token is
/// never an entry token: entry-token verification demands the configured API audience and
/// `sub` = the event, an identity token has neither.
pub const IDENTITY_AUDIENCE: &str = "vwr-tier2-identity";

/// Claims of a tier-2 identity token: who the visitor is in tier 2 (`sub`, the tier-2 user
/// id) and their tier-1 position, so a visitor stays known while waiting or active in tier 2
/// after their tier-1 token has expired (docs/adr/0008-tier2-identity-and-line-order.md).
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
}

/// Signs entry tokens.
#[derive(Debug, Clone)]
pub struct EntryTokens {
    ring: EcKeyring,
    issuer: String,
    audience: String,
}

impl EntryTokens {
    pub fn new(ring: EcKeyring, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self { ring, issuer: issuer.into(), audience: audience.into() }
    }

    pub fn ring(&self) -> &EcKeyring {
        &self.ring
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn audience(&self) -> &str {
        &self.audience
    }

    pub fn sign(&self, claims: &EntryClaims) -> Result<String, TokenError> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.ring.signing_kid().to_owned());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(self.ring.signing_key().bytes()))
            .map_err(|_| TokenError::Malformed)
    }

    /// Signs a tier-2 identity token (audience [`IDENTITY_AUDIENCE`], `tier: 2`).
    pub fn sign_identity(&self, claims: &IdentityClaims) -> Result<String, TokenError> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.ring.signing_kid().to_owned());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(self.ring.signing_key().bytes()))
            .map_err(|_| TokenError::Malformed)
    }

    /// A verifier with this ring's public keys.
    pub fn verifier(&self) -> EntryVerifier {
        let keys =
            EcVerifyingKeys::from_components(self.ring.keys().map(|(k, v)| (k, v.x.as_str(), v.y.as_str())));
        EntryVerifier { keys, issuer: self.issuer.clone(), audience: self.audience.clone() }
    }
}

/// Verifies entry tokens with public keys only.
#[derive(Debug, Clone)]
pub struct EntryVerifier {
    keys: EcVerifyingKeys,
    issuer: String,
    audience: String,
}

#[derive(Deserialize)]
struct RawIdentity {
    iss: Option<String>,
    aud: Option<serde_json::Value>,
    sub: Option<String>,
    eid: Option<String>,
    pos: Option<u64>,
    tier: Option<serde_json::Value>,
    iat: Option<u64>,
    nbf: Option<u64>,
    exp: Option<u64>,
}

#[derive(Deserialize)]
struct RawClaims {
    iss: Option<String>,
    aud: Option<serde_json::Value>,
    sub: Option<String>,
    uid: Option<String>,
    tier: Option<serde_json::Value>,
    iat: Option<u64>,
    nbf: Option<u64>,
    exp: Option<u64>,
    jti: Option<String>,
}

impl EntryVerifier {
    /// From a JWKS document (EC P-256 keys with `kid`; other keys are ignored).
    pub fn from_jwks(json: &str, issuer: &str, audience: &str) -> Result<Self, KeyError> {
        let keys = EcVerifyingKeys::from_jwks(json)?;
        Ok(Self { keys, issuer: issuer.to_owned(), audience: audience.to_owned() })
    }

    /// Decodes and checks the signature of an ES256 token of this ring.
    fn decode<T: serde::de::DeserializeOwned>(&self, token: &str) -> Result<T, TokenError> {
        self.keys.decode(token)
    }

    /// Verifies a tier-2 identity token for `event` at `now`.
    pub fn verify_identity(
        &self,
        token: &str,
        event: &EventId,
        now: u64,
    ) -> Result<IdentityClaims, TokenError> {
        let c: RawIdentity = self.decode(token)?;
        let exp = check_times(c.exp, c.nbf, now)?;
        if c.tier != Some(serde_json::Value::from(2)) {
            return Err(TokenError::WrongTier);
        }
        if c.eid.as_deref() != Some(event.as_str()) {
            return Err(TokenError::WrongEvent);
        }
        check_issuer(c.iss.as_deref(), c.aud.as_ref(), &self.issuer, IDENTITY_AUDIENCE)?;
        let sub = c.sub.filter(|s| vwr_core::identity::valid_user_id(s)).ok_or(TokenError::MissingClaim)?;
        Ok(IdentityClaims {
            iss: self.issuer.clone(),
            aud: IDENTITY_AUDIENCE.to_owned(),
            sub,
            eid: event.to_string(),
            pos: c.pos,
            tier: 2,
            iat: c.iat.unwrap_or(0),
            exp,
        })
    }

    /// Verifies a token for `event` and `user` at `now`. There is no "unknown user" bypass:
    /// the caller must know who is asking.
    pub fn verify(
        &self,
        token: &str,
        event: &EventId,
        user: &str,
        now: u64,
    ) -> Result<EntryClaims, TokenError> {
        let c: RawClaims = self.decode(token)?;
        let exp = check_times(c.exp, c.nbf, now)?;
        if c.tier != Some(serde_json::Value::from(2)) {
            return Err(TokenError::WrongTier);
        }
        if c.sub.as_deref() != Some(event.as_str()) {
            return Err(TokenError::WrongEvent);
        }
        if user.is_empty() || c.uid.as_deref() != Some(user) {
            return Err(TokenError::WrongUser);
        }
        check_issuer(c.iss.as_deref(), c.aud.as_ref(), &self.issuer, &self.audience)?;
        let jti = c.jti.ok_or(TokenError::MissingClaim)?;
        Ok(EntryClaims {
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            sub: event.to_string(),
            uid: user.to_owned(),
            tier: 2,
            iat: c.iat.unwrap_or(0),
            exp,
            jti,
        })
    }
}

#[cfg(test)]
mod tests;
