//! Key rings of both tiers ([`KeyRing`]): HMAC keys for tier-1 tokens and tickets, P-256 keys
//! for tier-2 entry tokens. Several keys by `kid`, one of them signing, all of them verifying,
//! so keys rotate without logging anyone out (docs/tokens.md#key-rings-and-rotation).

use std::collections::BTreeMap;
use std::fmt;

use aws_lc_rs::hmac;
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};

/// Minimum HMAC key length in bytes (HS256 wants at least the hash size).
pub const MIN_KEY_BYTES: usize = 32;

/// Prefix of the edge-token key derivation ([`HmacKeyring::edge_ring`]).
pub const EDGE_TOKEN_LABEL: &str = "vwr/edge-token/v1:";
/// Prefix of the place-proof key derivation ([`HmacKeyring::place_ring`]).
pub const PLACE_PROOF_LABEL: &str = "vwr/tier2-place/v1:";

/// A problem with key material or key configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("no keys configured")]
    Empty,
    #[error("key entry {0:?} is not of the form kid:base64key")]
    BadEntry(String),
    #[error("kid {0:?} is invalid: use 1-32 characters of A-Z a-z 0-9 _ -")]
    BadKid(String),
    #[error("key {0:?} is not valid base64")]
    BadBase64(String),
    #[error("key {kid:?} has {len} bytes; at least {MIN_KEY_BYTES} are required")]
    TooShort { kid: String, len: usize },
    #[error("kid {0:?} appears twice")]
    Duplicate(String),
    #[error("signing kid {0:?} is not among the configured keys")]
    UnknownSigningKid(String),
    #[error("key document is not valid JSON: {0}")]
    BadJson(String),
    #[error("random generator failed")]
    Random,
    /// Two rings that must hold the same kids (the tier-1 link keys) do not.
    #[error("the edge and place-proof keys must have the same kids and signing kid: {0}")]
    RingsDiffer(String),
}

/// Checks a key id.
pub fn validate_kid(kid: &str) -> Result<(), KeyError> {
    if kid.is_empty() || kid.len() > 32 || !kid.bytes().all(crate::ids::is_event_id_byte) {
        return Err(KeyError::BadKid(kid.to_owned()));
    }
    Ok(())
}

/// Decodes base64 (URL-safe or standard, padded or not).
pub fn decode_b64(s: &str) -> Option<Vec<u8>> {
    let t = s.trim().trim_end_matches('=');
    URL_SAFE_NO_PAD
        .decode(t)
        .ok()
        .or_else(|| base64::engine::general_purpose::STANDARD_NO_PAD.decode(t).ok())
        .or_else(|| STANDARD.decode(s.trim()).ok())
}

/// `n` bytes from the system's secure random generator.
pub fn random_bytes(n: usize) -> Result<Vec<u8>, KeyError> {
    let mut b = vec![0u8; n];
    SystemRandom::new().fill(&mut b).map_err(|_| KeyError::Random)?;
    Ok(b)
}

/// Material of one key in a [`KeyRing`]: built from (and kept as) its stored bytes.
pub trait KeyMaterial: Clone + Sized {
    /// Checks and builds a key from its stored bytes.
    fn from_bytes(kid: &str, bytes: Vec<u8>) -> Result<Self, KeyError>;
    /// The stored bytes (secret).
    fn bytes(&self) -> &[u8];
}

/// Keys by `kid`, one of them signing, all of them verifying, so keys rotate without logging
/// anyone out. One type for both tiers: [`HmacKeyring`] (tier-1 tokens and tickets) and
/// [`EcKeyring`] (tier-2 entry tokens).
///
/// Text form (env): `kid:base64url,kid2:base64url`, signing kid given or the first. JSON form
/// (Secrets Manager): `{"signingKid":"k1","keys":{"k1":"base64url…","k0":"…"}}`, signing kid
/// given or the last in kid order.
#[derive(Clone)]
pub struct KeyRing<K> {
    signing_kid: String,
    /// A copy of the signing kid's key (so reading it can never fail).
    signing: K,
    keys: BTreeMap<String, K>,
}

impl<K> fmt::Debug for KeyRing<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("KeyRing")
            .field("signing_kid", &self.signing_kid)
            .field("kids", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyDoc {
    signing_kid: Option<String>,
    keys: BTreeMap<String, String>,
}

impl<K: KeyMaterial> KeyRing<K> {
    /// Builds a ring from checked keys.
    pub fn from_keys(signing_kid: &str, keys: BTreeMap<String, K>) -> Result<Self, KeyError> {
        if keys.is_empty() {
            return Err(KeyError::Empty);
        }
        for kid in keys.keys() {
            validate_kid(kid)?;
        }
        let signing = keys
            .get(signing_kid)
            .cloned()
            .ok_or_else(|| KeyError::UnknownSigningKid(signing_kid.to_owned()))?;
        Ok(Self { signing_kid: signing_kid.to_owned(), signing, keys })
    }

    /// Builds a ring from raw key bytes; checks kids, material and the signing kid.
    pub fn new(signing_kid: &str, raw: BTreeMap<String, Vec<u8>>) -> Result<Self, KeyError> {
        let mut keys = BTreeMap::new();
        for (kid, bytes) in raw {
            validate_kid(&kid)?;
            let key = K::from_bytes(&kid, bytes)?;
            keys.insert(kid, key);
        }
        Self::from_keys(signing_kid, keys)
    }

    /// Parses the text form; `signing_kid` defaults to the first.
    pub fn from_text(text: &str, signing_kid: Option<&str>) -> Result<Self, KeyError> {
        let mut raw = BTreeMap::new();
        let mut first = None;
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (kid, b64) = entry.split_once(':').ok_or_else(|| KeyError::BadEntry(redact(entry)))?;
            let kid = kid.trim();
            validate_kid(kid)?;
            let bytes = decode_b64(b64).ok_or_else(|| KeyError::BadBase64(kid.to_owned()))?;
            if raw.insert(kid.to_owned(), bytes).is_some() {
                return Err(KeyError::Duplicate(kid.to_owned()));
            }
            first.get_or_insert_with(|| kid.to_owned());
        }
        let first = first.ok_or(KeyError::Empty)?;
        let signing = signing_kid.map(str::trim).filter(|s| !s.is_empty()).unwrap_or(&first).to_owned();
        Self::new(&signing, raw)
    }

    /// Parses the JSON form kept in Secrets Manager.
    pub fn from_json(json: &str) -> Result<Self, KeyError> {
        let doc: KeyDoc = serde_json::from_str(json).map_err(|e| KeyError::BadJson(e.to_string()))?;
        let mut raw = BTreeMap::new();
        for (kid, b64) in &doc.keys {
            validate_kid(kid)?;
            raw.insert(kid.clone(), decode_b64(b64).ok_or_else(|| KeyError::BadBase64(kid.clone()))?);
        }
        let signing = match doc.signing_kid {
            Some(s) => s,
            None => raw.keys().next_back().cloned().ok_or(KeyError::Empty)?,
        };
        Self::new(&signing, raw)
    }

    pub fn signing_kid(&self) -> &str {
        &self.signing_kid
    }

    /// The signing key (there always is one).
    pub fn signing_key(&self) -> &K {
        &self.signing
    }

    /// The key for `kid`, if known.
    pub fn key(&self, kid: &str) -> Option<&K> {
        self.keys.get(kid)
    }

    pub fn kids(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    pub fn keys(&self) -> impl Iterator<Item = (&str, &K)> {
        self.keys.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Text form (for env files). Contains secrets.
    pub fn to_text(&self) -> String {
        self.keys
            .iter()
            .map(|(k, v)| format!("{k}:{}", URL_SAFE_NO_PAD.encode(v.bytes())))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// JSON form (for Secrets Manager). Contains secrets.
    pub fn to_json(&self) -> String {
        let doc = KeyDoc {
            signing_kid: Some(self.signing_kid.clone()),
            keys: self.keys.iter().map(|(k, v)| (k.clone(), URL_SAFE_NO_PAD.encode(v.bytes()))).collect(),
        };
        serde_json::to_string(&doc).unwrap_or_default()
    }
}

/// An HMAC-SHA256 key (at least [`MIN_KEY_BYTES`] bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct HmacKey(Vec<u8>);

impl fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HmacKey({} bytes)", self.0.len())
    }
}

impl KeyMaterial for HmacKey {
    fn from_bytes(kid: &str, bytes: Vec<u8>) -> Result<Self, KeyError> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(KeyError::TooShort { kid: kid.to_owned(), len: bytes.len() });
        }
        Ok(Self(bytes))
    }

    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::Deref for HmacKey {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for HmacKey {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// HMAC keys: tier-1 tokens (through [`HmacKeyring::edge_ring`]) and tickets.
pub type HmacKeyring = KeyRing<HmacKey>;

impl KeyRing<HmacKey> {
    /// A fresh ring with one random 32-byte key.
    pub fn generate(kid: &str) -> Result<Self, KeyError> {
        validate_kid(kid)?;
        let key = random_bytes(MIN_KEY_BYTES)?;
        Self::new(kid, BTreeMap::from([(kid.to_owned(), key)]))
    }

    /// The ring that signs and verifies tier-1 tokens, the only tier-1 key material that
    /// goes to the edge (CloudFront KeyValueStore, Lambda@Edge bundle). Per kid:
    /// `SHA-256("vwr/edge-token/v1:" + base64url_nopad(master key))`. A leak at the edge can
    /// then not forge tickets (their keys derive from the master by [`HmacKeyring::derive`]).
    /// SHA-256 of a text rather than HMAC so that Terraform can compute the same key with
    /// `base64sha256()` (terraform/modules/tier1); `edge_ring_matches_terraform` pins both.
    pub fn edge_ring(&self) -> Self {
        self.text_digest_ring(EDGE_TOKEN_LABEL)
    }

    /// The ring of place proofs (the `t2` claim of a tier-1 token, docs/tokens.md#place-proofs):
    /// tier 1 signs with it at redemption, tier 2 checks it, the edge never holds it. So whoever
    /// holds only the edge keys can mint a token that passes the edge, but not one that gives a
    /// place in tier 2's line. Per kid: `SHA-256("vwr/tier2-place/v1:" + base64url_nopad(master
    /// key))`, computable by Terraform like [`Self::edge_ring`].
    pub fn place_ring(&self) -> Self {
        self.text_digest_ring(PLACE_PROOF_LABEL)
    }

    fn text_digest_ring(&self, label: &str) -> Self {
        self.map_keys(|key| {
            let text = format!("{label}{}", URL_SAFE_NO_PAD.encode(key));
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, text.as_bytes()).as_ref().to_vec()
        })
    }

    /// Derives a purpose-specific key ring (same kids) so one secret never signs two kinds of
    /// message: `HMAC(key, label)` per kid.
    pub fn derive(&self, label: &str) -> Self {
        self.map_keys(|key| {
            let k = hmac::Key::new(hmac::HMAC_SHA256, key);
            hmac::sign(&k, label.as_bytes()).as_ref().to_vec()
        })
    }

    fn map_keys(&self, f: impl Fn(&[u8]) -> Vec<u8>) -> Self {
        let keys = self.keys.iter().map(|(kid, key)| (kid.clone(), HmacKey(f(key)))).collect();
        Self { signing_kid: self.signing_kid.clone(), signing: HmacKey(f(&self.signing)), keys }
    }
}

/// An ECDSA P-256 private key (PKCS#8 DER) with its public point, for ES256 entry tokens.
#[derive(Clone)]
pub struct EcKey {
    pkcs8: Vec<u8>,
    /// Public point coordinates, base64url (JWK `x`, `y`).
    pub x: String,
    pub y: String,
}

impl fmt::Debug for EcKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EcKey").field("x", &self.x).field("y", &self.y).finish_non_exhaustive()
    }
}

impl KeyMaterial for EcKey {
    fn from_bytes(kid: &str, pkcs8: Vec<u8>) -> Result<Self, KeyError> {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8)
            .map_err(|_| KeyError::BadEntry(format!("{kid}: not a P-256 PKCS#8 private key")))?;
        let public = pair.public_key().as_ref();
        if public.len() != 65 || public[0] != 4 {
            return Err(KeyError::BadEntry(format!("{kid}: unexpected public key form")));
        }
        Ok(Self {
            x: URL_SAFE_NO_PAD.encode(&public[1..33]),
            y: URL_SAFE_NO_PAD.encode(&public[33..65]),
            pkcs8,
        })
    }

    fn bytes(&self) -> &[u8] {
        &self.pkcs8
    }
}

/// ES256 keys: tier-2 entry and identity tokens. All are published in the JWKS.
pub type EcKeyring = KeyRing<EcKey>;

impl KeyRing<EcKey> {
    /// A ring with one fresh P-256 key.
    pub fn generate(kid: &str) -> Result<Self, KeyError> {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| KeyError::Random)?;
        Self::new(kid, BTreeMap::from([(kid.to_owned(), doc.as_ref().to_vec())]))
    }

    /// The public JWKS document (`jsonwebtoken`'s types).
    pub fn jwks(&self) -> jsonwebtoken::jwk::JwkSet {
        use jsonwebtoken::jwk::{
            AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters,
            EllipticCurveKeyType, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse,
        };
        let keys = self
            .keys
            .iter()
            .map(|(kid, k)| Jwk {
                common: CommonParameters {
                    public_key_use: Some(PublicKeyUse::Signature),
                    key_algorithm: Some(KeyAlgorithm::ES256),
                    key_id: Some(kid.clone()),
                    ..CommonParameters::default()
                },
                algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
                    key_type: EllipticCurveKeyType::EC,
                    curve: EllipticCurve::P256,
                    x: k.x.clone(),
                    y: k.y.clone(),
                }),
            })
            .collect();
        JwkSet { keys }
    }
}

fn redact(entry: &str) -> String {
    match entry.split_once(':') {
        Some((kid, _)) => format!("{kid}:…"),
        None => entry.chars().take(8).collect::<String>() + "…",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(n: usize, fill: u8) -> String {
        URL_SAFE_NO_PAD.encode(vec![fill; n])
    }

    #[test]
    fn parses_text_form_with_default_and_explicit_signing_kid() {
        let text = format!("k2:{},k1:{}", b64(32, 2), b64(32, 1));
        let ring = HmacKeyring::from_text(&text, None).unwrap();
        assert_eq!(ring.signing_kid(), "k2");
        assert_eq!(ring.key("k1").map(|k| &k[..]), Some(&[1u8; 32][..]));
        let ring = HmacKeyring::from_text(&text, Some("k1")).unwrap();
        assert_eq!(&ring.signing_key()[..], &[1u8; 32][..]);
    }

    #[test]
    fn rejects_bad_configs() {
        assert_eq!(HmacKeyring::from_text("", None).unwrap_err(), KeyError::Empty);
        assert!(matches!(HmacKeyring::from_text("nocolon", None), Err(KeyError::BadEntry(_))));
        assert!(matches!(
            HmacKeyring::from_text(&format!("k1:{}", b64(16, 1)), None),
            Err(KeyError::TooShort { .. })
        ));
        assert!(matches!(HmacKeyring::from_text("k1:!!!", None), Err(KeyError::BadBase64(_))));
        assert!(matches!(
            HmacKeyring::from_text(&format!("bad kid:{}", b64(32, 1)), None),
            Err(KeyError::BadKid(_))
        ));
        let dup = format!("k1:{},k1:{}", b64(32, 1), b64(32, 2));
        assert!(matches!(HmacKeyring::from_text(&dup, None), Err(KeyError::Duplicate(_))));
        let one = format!("k1:{}", b64(32, 1));
        assert!(matches!(HmacKeyring::from_text(&one, Some("k9")), Err(KeyError::UnknownSigningKid(_))));
    }

    #[test]
    fn error_messages_never_contain_key_material() {
        let secret = b64(8, 7);
        let err = HmacKeyring::from_text(&format!("k1{secret}"), None).unwrap_err().to_string();
        assert!(!err.contains(&secret[4..]), "{err}");
    }

    #[test]
    fn json_round_trip_and_generation() {
        let ring = HmacKeyring::generate("k2026").unwrap();
        let back = HmacKeyring::from_json(&ring.to_json()).unwrap();
        assert_eq!(back.signing_kid(), "k2026");
        assert_eq!(back.signing_key(), ring.signing_key());
        let back = HmacKeyring::from_text(&ring.to_text(), None).unwrap();
        assert_eq!(back.signing_key(), ring.signing_key());
        assert!(!format!("{ring:?}").contains(&URL_SAFE_NO_PAD.encode(ring.signing_key())));
    }

    /// The vector in terraform/modules/tier1/README.md ("Edge keys"), which the Terraform
    /// `base64sha256()` derivation and tests/infra/test_bootstrap.py also check.
    #[test]
    fn edge_ring_matches_terraform() {
        let master = HmacKeyring::new("k1", BTreeMap::from([("k1".to_owned(), vec![1u8; 32])])).unwrap();
        assert_eq!(master.edge_ring().to_text(), "k1:39IwIO3pg-GGyq5lSQfUh-kmyM0jAhY1L1z5lJWwaWQ");
        assert_ne!(master.edge_ring().signing_key(), master.signing_key());
    }

    /// The place-proof keys (docs/tokens.md#place-proofs), computed the same way in Terraform.
    #[test]
    fn place_ring_matches_terraform() {
        let master = HmacKeyring::new("k1", BTreeMap::from([("k1".to_owned(), vec![1u8; 32])])).unwrap();
        assert_eq!(master.place_ring().to_text(), "k1:RoxF3Snpzsr8vOrCbiRpMJ29Vh_YDl69PI9mqZLSvag");
        assert_ne!(master.place_ring().signing_key(), master.edge_ring().signing_key());
    }

    #[test]
    fn derived_keys_differ_per_label() {
        let ring = HmacKeyring::generate("k").unwrap();
        let a = ring.derive("a");
        let b = ring.derive("b");
        assert_ne!(a.signing_key(), b.signing_key());
        assert_ne!(a.signing_key(), ring.signing_key());
        assert_eq!(a.signing_key(), ring.derive("a").signing_key());
    }
}
