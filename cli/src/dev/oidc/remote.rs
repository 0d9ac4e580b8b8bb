//! An OpenID Connect issuer `vwr dev` trusts (`--admin-oidc-issuer`,
//! docs/console.md#sign-in-locally): its keys found by discovery
//! (`URL/.well-known/openid-configuration` → `jwks_uri`), fetched with the HTTP client the
//! `vwr` command shares, kept, and fetched again when a token names a key id they lack — at most
//! once a minute. RS256 and ES256. An issuer that cannot be reached is a 503
//! ([`BearerTokenError::Unavailable`]), a token that does not verify a 401.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use http::Method;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use vwr_core::admin_auth::{BearerTokenError, Claims};
use vwr_loadtest::client::{Auth, HttpClient};

use super::{OidcError, checked_url, decode_claims, for_audience};

/// The least time between two fetches of the keys for an unknown key id.
pub const REFETCH_AFTER: Duration = Duration::from_secs(60);
/// After a failed fetch, the time before the next try (meanwhile: 503 at once).
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);
/// How long one fetch (discovery or JWKS) may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The algorithms taken.
const ALGORITHMS: [Algorithm; 2] = [Algorithm::RS256, Algorithm::ES256];

/// The keys as last fetched.
#[derive(Default)]
struct Keys {
    /// The `issuer` of the discovery document (the tokens' `iss`).
    iss: String,
    keys: Vec<Jwk>,
    fetched: Option<Instant>,
    failed: Option<(Instant, String)>,
}

impl Keys {
    /// The key for a token's `kid` and `alg`: the one of that id, or without an id the only
    /// key of that algorithm.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let fits = |k: &&Jwk| {
            k.common.public_key_use.as_ref().is_none_or(|u| *u == PublicKeyUse::Signature)
                && k.common.key_algorithm.is_none_or(|a| a == jsonwebtoken::jwk::KeyAlgorithm::from(alg))
        };
        let mut candidates = self.keys.iter().filter(fits);
        let jwk = match kid {
            Some(kid) => candidates.find(|k| k.common.key_id.as_deref() == Some(kid))?,
            None => {
                let only = candidates.next()?;
                if candidates.next().is_some() {
                    return None;
                }
                only
            }
        };
        DecodingKey::from_jwk(jwk).ok().filter(|k| k.family() == alg.family())
    }
}

/// An OpenID Connect issuer and the audiences its tokens must be for.
pub struct RemoteIssuer {
    issuer: String,
    audiences: Vec<String>,
    client: HttpClient,
    keys: RwLock<Arc<Keys>>,
    fetching: tokio::sync::Mutex<()>,
}

impl RemoteIssuer {
    /// `issuer`: a checked URL without its trailing slash; `audiences`: not empty.
    pub fn new(issuer: String, audiences: Vec<String>) -> Result<Self, OidcError> {
        let client = HttpClient::new(FETCH_TIMEOUT).map_err(|e| OidcError::Client(e.to_string()))?;
        Ok(Self {
            issuer,
            audiences,
            client,
            keys: RwLock::new(Arc::new(Keys::default())),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    /// The issuer's URL, as given (without a trailing slash).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Whether a token's `iss` names this issuer.
    pub fn issues(&self, iss: &str) -> bool {
        !iss.is_empty() && iss.trim_end_matches('/') == self.issuer
    }

    fn snapshot(&self) -> Arc<Keys> {
        self.keys.read().map_or_else(|poisoned| Arc::clone(&poisoned.into_inner()), |k| Arc::clone(&k))
    }

    fn store(&self, keys: Keys) {
        let keys = Arc::new(keys);
        match self.keys.write() {
            Ok(mut k) => *k = keys,
            Err(poisoned) => *poisoned.into_inner() = keys,
        }
    }

    /// Verifies a token of this issuer: a key of its JWKS, `iss`, the audience, `exp`.
    pub async fn verify(&self, token: &str) -> Result<Claims, BearerTokenError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| BearerTokenError::Invalid(e.to_string()))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(BearerTokenError::Invalid(format!("{:?} is not taken (RS256, ES256)", header.alg)));
        }
        let (key, iss) = self.key(header.kid.as_deref(), header.alg).await?;
        let claims = decode_claims(token, &key, header.alg, &iss)?;
        for_audience(&claims, &self.audiences)?;
        Ok(claims)
    }

    /// The key for `kid`, fetching the keys when none are kept yet, or when `kid` is unknown and
    /// the last fetch is older than [`REFETCH_AFTER`]; with the issuer's `iss`.
    async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<(DecodingKey, String), BearerTokenError> {
        let unknown =
            || BearerTokenError::Invalid(format!("no key {kid:?} for {alg:?} in the issuer's JWKS"));
        let kept = self.snapshot();
        if let Some(k) = kept.find(kid, alg) {
            return Ok((k, kept.iss.clone()));
        }
        // One fetch at a time; whoever waited looks again first.
        let _one = self.fetching.lock().await;
        let kept = self.snapshot();
        if let Some(k) = kept.find(kid, alg) {
            return Ok((k, kept.iss.clone()));
        }
        if let Some((at, why)) = &kept.failed
            && at.elapsed() < RETRY_AFTER_FAILURE
        {
            return Err(BearerTokenError::Unavailable(why.clone()));
        }
        if kept.fetched.is_some_and(|at| at.elapsed() < REFETCH_AFTER) {
            return Err(unknown());
        }
        match self.fetch().await {
            Ok((iss, keys)) => {
                let fresh = Keys { iss, keys, fetched: Some(Instant::now()), failed: None };
                let found = fresh.find(kid, alg).map(|k| (k, fresh.iss.clone()));
                tracing::info!(event = "dev.oidc_keys_fetched", issuer = %self.issuer, keys = fresh.keys.len());
                self.store(fresh);
                found.ok_or_else(unknown)
            }
            Err(e) => {
                let why = e.to_string();
                tracing::warn!(event = "dev.oidc_keys_unavailable", issuer = %self.issuer, error = %why);
                // The keys kept stay usable; the failure is remembered for a moment.
                self.store(Keys {
                    iss: kept.iss.clone(),
                    keys: kept.keys.clone(),
                    fetched: kept.fetched,
                    failed: Some((Instant::now(), why.clone())),
                });
                Err(BearerTokenError::Unavailable(why))
            }
        }
    }

    /// Discovery, then the JWKS: the issuer's `iss` and its keys (those jsonwebtoken reads).
    async fn fetch(&self) -> Result<(String, Vec<Jwk>), FetchError> {
        let discovery = format!("{}/.well-known/openid-configuration", self.issuer);
        let doc = self.get_json(&discovery).await?;
        let iss = doc.get("issuer").and_then(Value::as_str).unwrap_or_default();
        if iss.trim_end_matches('/') != self.issuer {
            return Err(FetchError::OtherIssuer {
                discovery,
                named: iss.to_owned(),
                want: self.issuer.clone(),
            });
        }
        let Some(jwks_uri) = doc.get("jwks_uri").and_then(Value::as_str) else {
            return Err(FetchError::NoJwksUri(discovery));
        };
        let jwks_uri = checked_url("jwks_uri", jwks_uri)
            .map_err(|e| FetchError::BadJwksUri { discovery, reason: e.to_string() })?;
        let set = self.get_json(&jwks_uri).await?;
        let keys: Vec<Jwk> = set
            .get("keys")
            .and_then(Value::as_array)
            .ok_or(FetchError::NotJwks(jwks_uri))?
            .iter()
            // A key jsonwebtoken cannot read (another key type) is passed over, not fatal.
            .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
            .collect();
        Ok((iss.to_owned(), keys))
    }

    async fn get_json(&self, url: &str) -> Result<Value, FetchError> {
        let url = url.to_owned();
        let reply = match self.client.send(Method::GET, &url, None, &Auth::None).await {
            Ok(r) => r,
            Err(e) => return Err(FetchError::Unreached { url, reason: e.to_string() }),
        };
        if !reply.status.is_success() {
            return Err(FetchError::Status { url, status: reply.status });
        }
        serde_json::from_slice(&reply.body).map_err(|e| FetchError::NotJson { url, reason: e.to_string() })
    }
}

/// Why the issuer's keys could not be fetched (a 503 for the token that needed them).
#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    #[error("GET {url}: {reason}")]
    Unreached { url: String, reason: String },
    #[error("GET {url}: {status}")]
    Status { url: String, status: http::StatusCode },
    #[error("GET {url}: not JSON: {reason}")]
    NotJson { url: String, reason: String },
    #[error("{discovery} names the issuer {named:?}, not {want:?}")]
    OtherIssuer { discovery: String, named: String, want: String },
    #[error("{0} has no jwks_uri")]
    NoJwksUri(String),
    #[error("{discovery}: {reason}")]
    BadJwksUri { discovery: String, reason: String },
    #[error("{0} is not a JWKS (no \"keys\" list)")]
    NotJwks(String),
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn keys(list: Value) -> Keys {
        Keys { keys: serde_json::from_value(list).unwrap(), ..Keys::default() }
    }

    const X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
    const Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";

    #[test]
    fn a_key_is_found_by_id_and_algorithm() {
        let ec = |kid: &str| json!({"kty": "EC", "crv": "P-256", "x": X, "y": Y, "kid": kid, "alg": "ES256", "use": "sig"});
        let k = keys(json!([ec("a"), ec("b")]));
        assert!(k.find(Some("a"), Algorithm::ES256).is_some());
        assert!(k.find(Some("c"), Algorithm::ES256).is_none());
        // The key says ES256: an RS256 header does not get it.
        assert!(k.find(Some("a"), Algorithm::RS256).is_none());
        // No kid: only when one key fits.
        assert!(k.find(None, Algorithm::ES256).is_none());
        assert!(keys(json!([ec("a")])).find(None, Algorithm::ES256).is_some());
        // An encryption key is not a signing key; a key without `alg` fits by its type.
        let enc = json!([{"kty": "EC", "crv": "P-256", "x": X, "y": Y, "kid": "e", "use": "enc"}]);
        assert!(keys(enc).find(Some("e"), Algorithm::ES256).is_none());
        let bare = json!([{"kty": "EC", "crv": "P-256", "x": X, "y": Y, "kid": "n"}]);
        assert!(keys(bare.clone()).find(Some("n"), Algorithm::ES256).is_some());
        assert!(keys(bare).find(Some("n"), Algorithm::RS256).is_none());
    }

    /// An issuer on this machine whose JWKS holds `ring`'s keys; counts the JWKS fetches.
    async fn serve(ring: &vwr_core::EcKeyring) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let doc = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")});
        let jwks = serde_json::to_value(ring.jwks()).unwrap();
        let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = Arc::clone(&hits);
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(move || async move { axum::Json(doc) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move {
                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    axum::Json(jwks)
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, hits)
    }

    #[tokio::test]
    async fn an_unknown_key_id_fetches_the_keys_again_after_a_minute() {
        use vwr_core::keys::KeyMaterial;
        let ring = vwr_core::EcKeyring::generate("k2").unwrap();
        let (url, hits) = serve(&ring).await;
        let r = RemoteIssuer::new(url.clone(), vec!["app".into()]).unwrap();
        let mut header = jsonwebtoken::Header::new(Algorithm::ES256);
        header.kid = Some("k2".into());
        let claims = json!({"iss": url, "aud": "app", "sub": "s", "exp": vwr_core::time::now_secs() + 60});
        let key = jsonwebtoken::EncodingKey::from_ec_der(ring.signing_key().bytes());
        let token = jsonwebtoken::encode(&header, &claims, &key).unwrap();
        // Keys fetched just now without k2 (the issuer rotated since): k2 waits for the minute.
        let stale = |ago: Duration| Keys {
            iss: url.clone(),
            keys: Vec::new(),
            fetched: Instant::now().checked_sub(ago),
            failed: None,
        };
        r.store(stale(Duration::from_secs(1)));
        assert!(matches!(r.verify(&token).await, Err(BearerTokenError::Invalid(_))));
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
        r.store(stale(REFETCH_AFTER + Duration::from_secs(1)));
        assert_eq!(r.verify(&token).await.unwrap()["sub"], "s");
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Kept since.
        assert!(r.verify(&token).await.is_ok());
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_issuer_naming_another_issuer_is_unavailable() {
        let ring = vwr_core::EcKeyring::generate("k").unwrap();
        let (url, _) = serve(&ring).await;
        // The same server by another name: its document names 127.0.0.1.
        let r = RemoteIssuer::new(url.replace("127.0.0.1", "localhost"), vec!["app".into()]).unwrap();
        let e = r.fetch().await.unwrap_err();
        assert!(matches!(e, FetchError::OtherIssuer { .. }), "{e}");
        assert!(e.to_string().contains("names the issuer"), "{e}");
    }

    #[test]
    fn the_issuer_is_named_with_or_without_its_slash() {
        let r = RemoteIssuer::new("https://idp.example.com/realms/vwr".into(), vec!["c".into()]).unwrap();
        assert!(r.issues("https://idp.example.com/realms/vwr"));
        assert!(r.issues("https://idp.example.com/realms/vwr/"));
        assert!(!r.issues("https://idp.example.com/realms"));
        assert!(!r.issues(""));
    }
}
