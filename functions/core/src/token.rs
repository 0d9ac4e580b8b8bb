//! Tier-1 tokens: JWT HS256 with a `kid` header and the claims `iss`, `aud`, `sub` (requestId),
//! `eid` (eventId), `pos`, `tier: 1`, `iat`, `nbf`, `exp`, `jti` (docs/tokens.md#tier-1-tokens).
//!
//! Verification rejects a bad signature, an unknown `kid`, any `alg` but HS256 (`none`
//! included), a missing or past `exp`, a future `nbf` (beyond a small leeway), a wrong `tier`,
//! a wrong event, and a wrong issuer or audience.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::ids::EventId;
use crate::keys::HmacKeyring;

/// Longest token accepted before any parsing.
pub const MAX_TOKEN_LEN: usize = 4096;
/// Clock skew allowed for `nbf`.
pub const NBF_LEEWAY_SECS: u64 = 30;

/// Claims of a tier-1 token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tier1Claims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub eid: String,
    pub pos: u64,
    pub tier: u8,
    pub iat: u64,
    pub nbf: u64,
    pub exp: u64,
    pub jti: String,
}

/// Claims as read from an untrusted token: everything optional so a missing claim is a
/// typed refusal rather than a parse error.
#[derive(Debug, Deserialize)]
struct RawClaims {
    iss: Option<String>,
    aud: Option<serde_json::Value>,
    sub: Option<String>,
    eid: Option<String>,
    pos: Option<u64>,
    tier: Option<serde_json::Value>,
    iat: Option<u64>,
    nbf: Option<u64>,
    exp: Option<u64>,
    jti: Option<String>,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("token is malformed")]
    Malformed,
    #[error("token algorithm is not accepted")]
    UnsupportedAlg,
    #[error("token key id is missing or unknown")]
    UnknownKid,
    #[error("token signature does not match")]
    BadSignature,
    #[error("token has no expiry")]
    MissingExp,
    #[error("token has expired")]
    Expired,
    #[error("token is not valid yet")]
    NotYetValid,
    #[error("token is for another tier")]
    WrongTier,
    #[error("token is for another event")]
    WrongEvent,
    #[error("token is for another user")]
    WrongUser,
    #[error("token has the wrong issuer or audience")]
    WrongIssuer,
    #[error("token lacks a required claim")]
    MissingClaim,
}

impl TokenError {
    /// Stable machine code for logs and metrics.
    pub fn code(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::UnsupportedAlg => "unsupported_alg",
            Self::UnknownKid => "unknown_kid",
            Self::BadSignature => "bad_signature",
            Self::MissingExp => "missing_exp",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::WrongTier => "wrong_tier",
            Self::WrongEvent => "wrong_event",
            Self::WrongUser => "wrong_user",
            Self::WrongIssuer => "wrong_issuer",
            Self::MissingClaim => "missing_claim",
        }
    }
}

#[derive(Deserialize)]
struct RawHeader {
    alg: Option<String>,
    kid: Option<String>,
}

/// Reads the `alg` and `kid` of a JWT header, refusing anything but `expected_alg`.
pub fn read_header(token: &str, expected_alg: &str) -> Result<String, TokenError> {
    if token.len() > MAX_TOKEN_LEN || !token.is_ascii() {
        return Err(TokenError::Malformed);
    }
    let head = token.split('.').next().ok_or(TokenError::Malformed)?;
    if token.split('.').count() != 3 {
        return Err(TokenError::Malformed);
    }
    let raw = URL_SAFE_NO_PAD.decode(head).map_err(|_| TokenError::Malformed)?;
    let h: RawHeader = serde_json::from_slice(&raw).map_err(|_| TokenError::Malformed)?;
    if h.alg.as_deref() != Some(expected_alg) {
        return Err(TokenError::UnsupportedAlg);
    }
    h.kid.ok_or(TokenError::UnknownKid)
}

/// Checks `exp` (required, in the future) and `nbf` (not beyond the leeway); returns `exp`.
pub fn check_times(exp: Option<u64>, nbf: Option<u64>, now: u64) -> Result<u64, TokenError> {
    let exp = exp.ok_or(TokenError::MissingExp)?;
    if now >= exp {
        return Err(TokenError::Expired);
    }
    if nbf.is_some_and(|nbf| nbf > now.saturating_add(NBF_LEEWAY_SECS)) {
        return Err(TokenError::NotYetValid);
    }
    Ok(exp)
}

/// Checks `iss` and `aud` (a string, or a list containing the audience).
pub fn check_issuer(
    iss: Option<&str>,
    aud: Option<&serde_json::Value>,
    issuer: &str,
    audience: &str,
) -> Result<(), TokenError> {
    let aud_ok = match aud {
        Some(serde_json::Value::String(a)) => a == audience,
        Some(serde_json::Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(audience)),
        _ => false,
    };
    if iss != Some(issuer) || !aud_ok {
        return Err(TokenError::WrongIssuer);
    }
    Ok(())
}

/// Issues and verifies tier-1 tokens. Built from the tier-1 master key ring; tokens are
/// signed with the ring derived from it for the edge ([`HmacKeyring::edge_ring`]), so the
/// edge never holds the master keys.
#[derive(Debug, Clone)]
pub struct Tier1Tokens {
    ring: HmacKeyring,
    edge: HmacKeyring,
    issuer: String,
    audience: String,
}

impl Tier1Tokens {
    pub fn new(ring: HmacKeyring, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self { edge: ring.edge_ring(), ring, issuer: issuer.into(), audience: audience.into() }
    }

    /// The master ring (tickets derive their keys from it; it never leaves tier 1).
    pub fn ring(&self) -> &HmacKeyring {
        &self.ring
    }

    /// The keys of the edge verifier: the only tier-1 keys to configure at the edge.
    pub fn edge_ring(&self) -> &HmacKeyring {
        &self.edge
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Signs `claims` with the signing key. HS256 is deterministic: the same claims give the
    /// same token.
    pub fn sign(&self, claims: &Tier1Claims) -> Result<String, TokenError> {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.edge.signing_kid().to_owned());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(self.edge.signing_key()))
            .map_err(|_| TokenError::Malformed)
    }

    /// Verifies a tier-1 token for `event` at time `now`.
    pub fn verify(&self, token: &str, event: &EventId, now: u64) -> Result<Tier1Claims, TokenError> {
        let kid = read_header(token, "HS256")?;
        let key = self.edge.key(&kid).ok_or(TokenError::UnknownKid)?;
        let mut v = Validation::new(Algorithm::HS256);
        v.validate_exp = false;
        v.validate_nbf = false;
        v.validate_aud = false;
        v.required_spec_claims.clear();
        let data = jsonwebtoken::decode::<RawClaims>(token, &DecodingKey::from_secret(key), &v).map_err(
            |e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::InvalidSignature => TokenError::BadSignature,
                jsonwebtoken::errors::ErrorKind::InvalidAlgorithm => TokenError::UnsupportedAlg,
                _ => TokenError::Malformed,
            },
        )?;
        let c = data.claims;
        let exp = check_times(c.exp, c.nbf, now)?;
        if c.tier != Some(serde_json::Value::from(1)) {
            return Err(TokenError::WrongTier);
        }
        if c.eid.as_deref() != Some(event.as_str()) {
            return Err(TokenError::WrongEvent);
        }
        check_issuer(c.iss.as_deref(), c.aud.as_ref(), &self.issuer, &self.audience)?;
        let (Some(sub), Some(pos), Some(jti)) = (c.sub, c.pos, c.jti) else {
            return Err(TokenError::MissingClaim);
        };
        let nbf = c.nbf.unwrap_or(0);
        Ok(Tier1Claims {
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            sub,
            eid: event.as_str().to_owned(),
            pos,
            tier: 1,
            iat: c.iat.unwrap_or(nbf),
            nbf,
            exp,
            jti,
        })
    }
}

#[cfg(test)]
mod tests;

/// The ES256 public keys of a JWKS document by `kid`, decoded once at load: verifiers given
/// only public keys (entry tokens at the authorizer, the site's enqueue tokens) check
/// signatures with it.
#[derive(Clone)]
pub struct EcVerifyingKeys(std::collections::BTreeMap<String, DecodingKey>);

impl std::fmt::Debug for EcVerifyingKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EcVerifyingKeys").field(&self.0.keys().collect::<Vec<_>>()).finish()
    }
}

impl EcVerifyingKeys {
    /// The P-256 keys with a `kid` of a JWKS document (others are ignored); each is checked,
    /// and at least one must be there.
    pub fn from_jwks(jwks: &str) -> Result<Self, crate::keys::KeyError> {
        use crate::keys::KeyError;
        use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet};
        let set: JwkSet = serde_json::from_str(jwks).map_err(|e| KeyError::BadJson(e.to_string()))?;
        let mut keys = std::collections::BTreeMap::new();
        for jwk in &set.keys {
            if let (AlgorithmParameters::EllipticCurve(ec), Some(kid)) = (&jwk.algorithm, &jwk.common.key_id)
                && ec.curve == EllipticCurve::P256
            {
                let key = DecodingKey::from_ec_components(&ec.x, &ec.y)
                    .map_err(|_| KeyError::BadEntry(format!("{kid}: bad EC key")))?;
                keys.insert(kid.clone(), key);
            }
        }
        if keys.is_empty() {
            return Err(KeyError::Empty);
        }
        Ok(Self(keys))
    }

    /// From `(kid, x, y)` of keys already checked (a loaded ring's own); one that does not
    /// decode is left out.
    pub fn from_components<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> Self {
        Self(
            keys.into_iter()
                .filter_map(|(kid, x, y)| Some((kid.to_owned(), DecodingKey::from_ec_components(x, y).ok()?)))
                .collect(),
        )
    }

    /// The claims of an ES256 token signed by one of these keys. Times, issuer, audience and
    /// the rest are the caller's to check.
    pub fn decode<T: serde::de::DeserializeOwned>(&self, token: &str) -> Result<T, TokenError> {
        let kid = read_header(token, "ES256")?;
        let key = self.0.get(&kid).ok_or(TokenError::UnknownKid)?;
        let mut v = Validation::new(Algorithm::ES256);
        v.validate_exp = false;
        v.validate_nbf = false;
        v.validate_aud = false;
        v.required_spec_claims.clear();
        jsonwebtoken::decode::<T>(token, key, &v).map(|d| d.claims).map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => TokenError::BadSignature,
            jsonwebtoken::errors::ErrorKind::InvalidAlgorithm => TokenError::UnsupportedAlg,
            _ => TokenError::Malformed,
        })
    }
}
