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
use crate::keys::{HmacKeyring, KeyError};

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
    /// Place proof (docs/tokens.md#place-proofs): `{kid}.{mac}` of the event, subject,
    /// position and `jti` under the place-proof keys, which only tier 1 (signing) and tier 2
    /// (checking) hold. Set by [`Tier1Tokens::sign`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t2: Option<String>,
}

/// Claims as read from an untrusted token: everything optional so a missing claim is a
/// typed refusal rather than a parse error.
#[derive(Debug, Deserialize)]
pub(crate) struct RawClaims {
    pub(crate) iss: Option<String>,
    pub(crate) aud: Option<serde_json::Value>,
    pub(crate) sub: Option<String>,
    pub(crate) eid: Option<String>,
    pub(crate) pos: Option<u64>,
    pub(crate) tier: Option<serde_json::Value>,
    pub(crate) iat: Option<u64>,
    pub(crate) nbf: Option<u64>,
    pub(crate) exp: Option<u64>,
    pub(crate) jti: Option<String>,
    pub(crate) t2: Option<String>,
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
    /// A tier-1 token without a valid place proof (tier 2 only; the edge does not check it).
    #[error("token carries no valid place proof")]
    NoPlaceProof,
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
            Self::NoPlaceProof => "no_place_proof",
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
/// edge never holds the master keys, and carry a place proof (`t2`) made with the ring
/// derived for tier 2 ([`HmacKeyring::place_ring`]).
#[derive(Debug, Clone)]
pub struct Tier1Tokens {
    ring: HmacKeyring,
    link: Tier1Link,
}

impl Tier1Tokens {
    pub fn new(ring: HmacKeyring, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        let link = Tier1Link::new(ring.edge_ring(), ring.place_ring(), issuer, audience);
        Self { ring, link }
    }

    /// The master ring (tickets derive their keys from it; it never leaves tier 1).
    pub fn ring(&self) -> &HmacKeyring {
        &self.ring
    }

    /// The keys of the edge verifier: the only tier-1 keys to configure at the edge.
    pub fn edge_ring(&self) -> &HmacKeyring {
        &self.link.edge
    }

    /// The keys of place proofs: tier 2's, never the edge's.
    pub fn place_ring(&self) -> &HmacKeyring {
        &self.link.place
    }

    /// What tier 2 gets: verification of tokens and of their place proofs, without the
    /// master keys (docs/tokens.md#place-proofs).
    pub fn link(&self) -> &Tier1Link {
        &self.link
    }

    pub fn issuer(&self) -> &str {
        &self.link.issuer
    }

    pub fn audience(&self) -> &str {
        &self.link.audience
    }

    /// Signs `claims` with the signing key, with the place proof of its event, subject,
    /// position and `jti` (whatever `claims.t2` held). Tier 1 signs only at a redemption, so
    /// the proof says "tier 1 served and redeemed this position for this ticket". HS256 is
    /// deterministic: the same claims give the same token.
    pub fn sign(&self, claims: &Tier1Claims) -> Result<String, TokenError> {
        let proved = Tier1Claims { t2: Some(self.link.place_proof(claims)), ..claims.clone() };
        self.link.resign(&proved)
    }

    /// Signs a pass (docs/passes.md): `claims` as they are, with no place proof (`t2` dropped),
    /// so the edge takes it for a tier-1 token but tier 2, which requires the proof, never
    /// gives it a place in its line.
    pub fn sign_pass(&self, claims: &Tier1Claims) -> Result<String, TokenError> {
        self.link.resign(&Tier1Claims { t2: None, ..claims.clone() })
    }

    /// Verifies a tier-1 token for `event` at time `now` (its place proof is tier 2's to check).
    pub fn verify(&self, token: &str, event: &EventId, now: u64) -> Result<Tier1Claims, TokenError> {
        self.link.verify_signed(token, event, now, Expiry::Enforce)
    }
}

/// Tier 2's part of the tier-1 keys (`vwr dev` runs both tiers in one process).
impl From<Tier1Tokens> for Tier1Link {
    fn from(t: Tier1Tokens) -> Self {
        t.link
    }
}

/// Whether a verification enforces `exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    Enforce,
    /// An expired token is accepted (still signed, of this event and tier); for a visitor
    /// tier 2 still holds (docs/tokens.md#tier-2-holds).
    Lapsed,
}

/// Place-proof input version.
const PLACE_PROOF_V: &str = "vwr-place-v1";
/// Bytes of a place-proof MAC.
const PLACE_PROOF_BYTES: usize = 16;

/// Tier 2's view of tier-1 tokens: the edge keys (they verify tokens, and re-sign one tier 2
/// holds) and the place-proof keys, never the master keys. A token counts for tier 2 only
/// with a valid place proof: the edge keys alone can mint a token that passes the edge, not
/// one that takes a place in tier 2's line (docs/tokens.md#place-proofs).
#[derive(Debug, Clone)]
pub struct Tier1Link {
    edge: HmacKeyring,
    place: HmacKeyring,
    issuer: String,
    audience: String,
}

impl Tier1Link {
    /// `edge`: [`HmacKeyring::edge_ring`] of the master; `place`: its
    /// [`HmacKeyring::place_ring`] (same kids).
    pub fn new(
        edge: HmacKeyring,
        place: HmacKeyring,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        Self { edge, place, issuer: issuer.into(), audience: audience.into() }
    }

    /// [`Self::new`] with the rings checked: the same kids in both and the same signing kid,
    /// as derived from one master ring (a mismatch would verify tokens whose proofs fail).
    pub fn checked(
        edge: HmacKeyring,
        place: HmacKeyring,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<Self, KeyError> {
        let (e, p): (Vec<&str>, Vec<&str>) = (edge.kids().collect(), place.kids().collect());
        if e != p {
            return Err(KeyError::RingsDiffer(format!("edge {e:?}, place {p:?}")));
        }
        if edge.signing_kid() != place.signing_kid() {
            return Err(KeyError::RingsDiffer(format!(
                "signing kid {:?} and {:?}",
                edge.signing_kid(),
                place.signing_kid()
            )));
        }
        Ok(Self::new(edge, place, issuer, audience))
    }

    /// The edge and place-proof rings of the JSON kept in Secrets Manager
    /// (`VWR_TIER1_LINK_SECRET_ID`): `{"signingKid": kid, "edge": {kid: key}, "place": {kid: key}}`,
    /// the signing kid defaulting as [`HmacKeyring::from_json`]'s.
    pub fn rings_from_json(json: &str) -> Result<(HmacKeyring, HmacKeyring), KeyError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct LinkDoc {
            signing_kid: Option<String>,
            edge: serde_json::Value,
            place: serde_json::Value,
        }
        let doc: LinkDoc = serde_json::from_str(json).map_err(|e| KeyError::BadJson(e.to_string()))?;
        let ring = |keys: serde_json::Value| {
            HmacKeyring::from_json(
                &serde_json::json!({"signingKid": doc.signing_kid, "keys": keys}).to_string(),
            )
        };
        Ok((ring(doc.edge)?, ring(doc.place)?))
    }

    /// The JSON form of [`Self::rings_from_json`]. Contains secrets.
    pub fn to_json(&self) -> String {
        let keys = |ring: &HmacKeyring| serde_json::from_str::<serde_json::Value>(&ring.to_json()).ok();
        let (edge, place) = (keys(&self.edge), keys(&self.place));
        serde_json::json!({
            "signingKid": self.edge.signing_kid(),
            "edge": edge.map(|d| d["keys"].clone()),
            "place": place.map(|d| d["keys"].clone()),
        })
        .to_string()
    }

    pub fn edge_ring(&self) -> &HmacKeyring {
        &self.edge
    }

    pub fn place_ring(&self) -> &HmacKeyring {
        &self.place
    }

    fn proof_mac(key: &[u8], c: &Tier1Claims) -> String {
        let k = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key);
        let text = format!("{PLACE_PROOF_V}|{}|{}|{}|{}", c.eid, c.sub, c.pos, c.jti);
        URL_SAFE_NO_PAD.encode(&aws_lc_rs::hmac::sign(&k, text.as_bytes()).as_ref()[..PLACE_PROOF_BYTES])
    }

    /// The place proof of `claims` with the signing key: `{kid}.{mac}`, the MAC over the
    /// event, subject, position and `jti`.
    fn place_proof(&self, claims: &Tier1Claims) -> String {
        format!("{}.{}", self.place.signing_kid(), Self::proof_mac(self.place.signing_key(), claims))
    }

    /// Whether `claims.t2` is a valid place proof of these claims (constant-time compare).
    pub fn place_proved(&self, claims: &Tier1Claims) -> bool {
        let Some((kid, mac)) = claims.t2.as_deref().and_then(|t| t.split_once('.')) else {
            return false;
        };
        let Some(key) = self.place.key(kid) else {
            return false;
        };
        let want = Self::proof_mac(key, claims);
        aws_lc_rs::constant_time::verify_slices_are_equal(want.as_bytes(), mac.as_bytes()).is_ok()
    }

    /// A valid token for `event` at `now` **with** a valid place proof.
    pub fn verify(&self, token: &str, event: &EventId, now: u64) -> Result<Tier1Claims, TokenError> {
        let c = self.verify_signed(token, event, now, Expiry::Enforce)?;
        if !self.place_proved(&c) {
            return Err(TokenError::NoPlaceProof);
        }
        Ok(c)
    }

    /// Like [`Self::verify`], but an expired token is accepted: only for a visitor tier 2
    /// still holds, whose token tier 2 renews ([`Self::resign`]).
    pub fn verify_lapsed(&self, token: &str, event: &EventId, now: u64) -> Result<Tier1Claims, TokenError> {
        let c = self.verify_signed(token, event, now, Expiry::Lapsed)?;
        if !self.place_proved(&c) {
            return Err(TokenError::NoPlaceProof);
        }
        Ok(c)
    }

    /// Signs `claims` as they are (place proof included) with the edge signing key: tier 2
    /// renewing the token of a visitor it holds (new `iat`/`nbf`/`exp`, same place).
    pub fn resign(&self, claims: &Tier1Claims) -> Result<String, TokenError> {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.edge.signing_kid().to_owned());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(self.edge.signing_key()))
            .map_err(|_| TokenError::Malformed)
    }

    fn verify_signed(
        &self,
        token: &str,
        event: &EventId,
        now: u64,
        expiry: Expiry,
    ) -> Result<Tier1Claims, TokenError> {
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
        let exp = match expiry {
            Expiry::Enforce => check_times(c.exp, c.nbf, now)?,
            Expiry::Lapsed => {
                let exp = c.exp.ok_or(TokenError::MissingExp)?;
                check_times(Some(exp.max(now.saturating_add(1))), c.nbf, now)?;
                exp
            }
        };
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
            t2: c.t2,
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
