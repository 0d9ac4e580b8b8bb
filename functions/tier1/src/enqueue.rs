//! Enqueue tokens: one place per site account (docs/abuse.md#one-place-per-account). The site
//! signs, for a logged-in account, a short ES256 JWT `{k, eid, exp}`; vwr holds only the
//! site's public keys (a JWKS, `VWR_ENQUEUE_JWKS`, rotated by `kid` like the other rings).
//! The account is kept only as a digest.

use aws_lc_rs::digest;
use jsonwebtoken::Algorithm;
use serde::Deserialize;

use vwr_core::EventId;
use vwr_core::keys::KeyError;
use vwr_core::token::{EcVerifyingKeys, TokenError, check_times};

/// Longest account id accepted.
pub const MAX_ACCOUNT_LEN: usize = 256;

/// Verifies the site's enqueue tokens.
#[derive(Debug, Clone)]
pub struct EnqueueVerifier {
    keys: EcVerifyingKeys,
}

#[derive(Deserialize)]
struct Claims {
    k: Option<String>,
    eid: Option<String>,
    exp: Option<u64>,
    nbf: Option<u64>,
}

impl EnqueueVerifier {
    /// From the site's JWKS (EC P-256 keys with a `kid`).
    pub fn from_jwks(json: &str) -> Result<Self, KeyError> {
        Ok(Self { keys: EcVerifyingKeys::from_jwks(json)? })
    }

    /// The account digest (hex SHA-256 of `k`) of a valid token for `event` at `now`.
    pub fn verify(&self, token: &str, event: &EventId, now: u64) -> Result<String, TokenError> {
        let c: Claims = self.keys.decode(token)?;
        check_times(c.exp, c.nbf, now)?;
        if c.eid.as_deref() != Some(event.as_str()) {
            return Err(TokenError::WrongEvent);
        }
        let k =
            c.k.filter(|k| !k.is_empty() && k.len() <= MAX_ACCOUNT_LEN).ok_or(TokenError::MissingClaim)?;
        let d = digest::digest(&digest::SHA256, k.as_bytes());
        Ok(d.as_ref().iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// Signs an enqueue token as the site does (the integration example of docs/tutorial.md; `vwr dev`,
/// the load test and the tests use it). `ring` is the site's private key ring.
pub fn sign(
    ring: &vwr_core::keys::EcKeyring,
    account: &str,
    event: &EventId,
    exp: u64,
) -> Result<String, TokenError> {
    let mut h = jsonwebtoken::Header::new(Algorithm::ES256);
    h.kid = Some(ring.signing_kid().to_owned());
    let key = jsonwebtoken::EncodingKey::from_ec_der(vwr_core::keys::KeyMaterial::bytes(ring.signing_key()));
    let claims = serde_json::json!({ "k": account, "eid": event.as_str(), "exp": exp });
    jsonwebtoken::encode(&h, &claims, &key).map_err(|_| TokenError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vwr_core::keys::EcKeyring;

    fn sign(ring: &EcKeyring, claims: serde_json::Value) -> String {
        let mut h = jsonwebtoken::Header::new(Algorithm::ES256);
        h.kid = Some(ring.signing_kid().to_owned());
        let key =
            jsonwebtoken::EncodingKey::from_ec_der(vwr_core::keys::KeyMaterial::bytes(ring.signing_key()));
        jsonwebtoken::encode(&h, &claims, &key).unwrap()
    }

    #[test]
    fn valid_tokens_give_the_account_digest_and_nothing_else_passes() {
        let site = EcKeyring::generate("site1").unwrap();
        let v = EnqueueVerifier::from_jwks(&serde_json::to_string(&site.jwks()).unwrap()).unwrap();
        let e1 = EventId::parse("e1").unwrap();
        let t = sign(&site, serde_json::json!({"k": "acct-42", "eid": "e1", "exp": 2000}));
        let d = v.verify(&t, &e1, 1000).unwrap();
        assert_eq!(d.len(), 64);
        assert!(!d.contains("acct"), "only a digest of the account");
        let t2 = sign(&site, serde_json::json!({"k": "acct-42", "eid": "e1", "exp": 3000}));
        assert_eq!(v.verify(&t2, &e1, 1000).unwrap(), d, "one account, one digest");
        assert_eq!(v.verify(&t, &e1, 2000), Err(TokenError::Expired));
        assert_eq!(v.verify(&t, &EventId::parse("e2").unwrap(), 1000), Err(TokenError::WrongEvent));
        let no_k = sign(&site, serde_json::json!({"eid": "e1", "exp": 2000}));
        assert_eq!(v.verify(&no_k, &e1, 1000), Err(TokenError::MissingClaim));
        let no_exp = sign(&site, serde_json::json!({"k": "a", "eid": "e1"}));
        assert_eq!(v.verify(&no_exp, &e1, 1000), Err(TokenError::MissingExp));
        let other = EcKeyring::generate("site1").unwrap();
        assert_eq!(
            v.verify(&sign(&other, serde_json::json!({"k": "a", "eid": "e1", "exp": 2000})), &e1, 1000),
            Err(TokenError::BadSignature)
        );
        assert_eq!(v.verify("x.y.z", &e1, 1000), Err(TokenError::Malformed));
    }
}
