//! Entry tokens (tier 2): JWT ES256 with `sub` = eventId, `uid`, `tier: 2`, `iat`, `exp`, `jti`
//! (plus `iss`/`aud`), signed with tier-2 keys separate from tier 1. Protected services verify
//! them with the public keys from the JWKS endpoint, without any secret.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};
use vwr_core::EventId;
use vwr_core::hold::HoldVerifier;
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

pub use vwr_core::hold::{IDENTITY_AUDIENCE, IdentityClaims};

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
        vwr_core::hold::sign(&self.ring, claims)
    }

    /// A verifier with this ring's public keys.
    pub fn verifier(&self) -> EntryVerifier {
        let keys =
            EcVerifyingKeys::from_components(self.ring.keys().map(|(k, v)| (k, v.x.as_str(), v.y.as_str())));
        EntryVerifier::new(keys, &self.issuer, &self.audience)
    }
}

/// Verifies entry tokens with public keys only.
#[derive(Debug, Clone)]
pub struct EntryVerifier {
    keys: EcVerifyingKeys,
    issuer: String,
    audience: String,
    /// The same keys, for identity tokens.
    holds: HoldVerifier,
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
        Ok(Self::new(EcVerifyingKeys::from_jwks(json)?, issuer, audience))
    }

    fn new(keys: EcVerifyingKeys, issuer: &str, audience: &str) -> Self {
        let holds = HoldVerifier::new(keys.clone(), issuer);
        Self { keys, issuer: issuer.to_owned(), audience: audience.to_owned(), holds }
    }

    /// The verifier of identity tokens (tier 2's holds) with these keys: what tier 1 is given
    /// too (`VWR_TIER2_JWKS`).
    pub fn holds(&self) -> &HoldVerifier {
        &self.holds
    }

    /// Decodes and checks the signature of an ES256 token of this ring.
    fn decode<T: serde::de::DeserializeOwned>(&self, token: &str) -> Result<T, TokenError> {
        self.keys.decode(token)
    }

    /// Verifies a tier-2 identity token for `event` at `now` (as tier 1 does, with the same
    /// public keys: [`HoldVerifier`]).
    pub fn verify_identity(
        &self,
        token: &str,
        event: &EventId,
        now: u64,
    ) -> Result<IdentityClaims, TokenError> {
        self.holds.verify(token, event, now)
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
