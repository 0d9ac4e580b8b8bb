//! Sign-in locally (docs/console.md#sign-in-locally): `vwr dev` verifies the bearer JWTs the
//! console sends, as API Gateway's JWT authorizer does in AWS, and hands their claims to
//! [`AdminAuth`](vwr_core::admin_auth::AdminAuth), which maps them to a person and a role.
//! Two issuers are trusted:
//! - `vwr dev` itself ([`dev_key`]): an ES256 key kept in the state file, published at
//!   `/console/jwks.json`, that signs the dev tokens of `vwr admin console-token`;
//! - with `--admin-oidc-issuer URL`, an OpenID Connect issuer ([`remote`]): its keys found by
//!   discovery, fetched, cached and refetched on an unknown `kid`.

pub mod dev_key;
pub mod remote;

use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use vwr_core::admin_auth::{BearerTokenError, BearerTokenVerifier, Claims};

use super::console::ConsoleConfig;
use dev_key::DevIssuer;
use remote::RemoteIssuer;

/// Seconds of clock skew allowed on `exp` (and `nbf`).
pub const LEEWAY_SECS: u64 = 30;

/// `vwr dev`'s sign-in options (docs/console.md#sign-in-locally).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OidcArgs {
    /// Also take the console's tokens of this OpenID Connect issuer (its JWKS, found at
    /// URL/.well-known/openid-configuration): https, or http on 127.0.0.1 or localhost.
    #[arg(long, value_name = "URL")]
    pub admin_oidc_issuer: Option<String>,
    /// An audience the issuer's tokens may carry (`aud`, or an access token's `client_id`)
    /// besides the client id; this or --admin-oidc-client-id is needed.
    #[arg(long, value_name = "AUDIENCE", requires = "admin_oidc_issuer")]
    pub admin_oidc_audience: Option<String>,
    /// The claim that lists the caller's groups (vwr-viewer, vwr-operator, vwr-admin), for the
    /// issuer's tokens and the dev tokens alike.
    #[arg(long, value_name = "CLAIM", default_value = vwr_core::admin_auth::DEFAULT_GROUPS_CLAIM)]
    pub admin_oidc_groups_claim: String,
    /// The issuer's client id for the console's sign-in (authorization code with PKCE), said in
    /// /console/config.json; without it the console takes only dev tokens.
    #[arg(long, value_name = "ID", requires = "admin_oidc_issuer")]
    pub admin_oidc_client_id: Option<String>,
}

/// A sign-in option `vwr dev` cannot start with.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error("{flag} {value:?}: {reason}")]
    Flag { flag: &'static str, value: String, reason: String },
    #[error(
        "--admin-oidc-issuer needs --admin-oidc-audience or --admin-oidc-client-id: without one, the \
         issuer's tokens for any other application would open the admin API"
    )]
    NoAudience,
    #[error("the console-token key in the state file: {0}")]
    DevKey(String),
    #[error("the HTTP client for the issuer: {0}")]
    Client(String),
}

/// Checks an issuer-side URL: `https://host…`, or `http://` on this machine (127.0.0.1,
/// localhost, [::1]); no user, query or fragment. Answers it without a trailing slash.
pub fn checked_url(flag: &'static str, url: &str) -> Result<String, OidcError> {
    let bad = |reason: &str| OidcError::Flag { flag, value: url.to_owned(), reason: reason.to_owned() };
    let trimmed = url.trim().trim_end_matches('/');
    if trimmed.contains(['?', '#']) || trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("give a plain URL: no query, fragment or spaces"));
    }
    let uri: http::Uri = trimmed.parse().map_err(|_| bad("not a URL"))?;
    let authority = uri.authority().ok_or_else(|| bad("not an absolute URL (https://…)"))?;
    if authority.as_str().contains('@') {
        return Err(bad("a URL with a user name or password is not taken"));
    }
    let host = authority.host().trim_start_matches('[').trim_end_matches(']');
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(trimmed.to_owned()),
        Some("http") if matches!(host, "127.0.0.1" | "localhost" | "::1") => Ok(trimmed.to_owned()),
        Some("http") => Err(bad("http only on this machine (127.0.0.1 or localhost); use https")),
        _ => Err(bad("use https://")),
    }
}

/// Verifies `token` signed with `key` (alg `alg`), issued by `issuer`, unexpired (with
/// [`LEEWAY_SECS`]); answers its claims. The audience is the caller's to check.
pub(crate) fn decode_claims(
    token: &str,
    key: &DecodingKey,
    alg: Algorithm,
    issuer: &str,
) -> Result<Claims, BearerTokenError> {
    let mut v = Validation::new(alg);
    v.leeway = LEEWAY_SECS;
    v.set_issuer(&[issuer]);
    v.set_required_spec_claims(&["exp", "iss"]);
    v.validate_aud = false;
    v.validate_nbf = true;
    jsonwebtoken::decode::<Claims>(token, key, &v)
        .map(|data| data.claims)
        .map_err(|e| BearerTokenError::Invalid(e.to_string()))
}

/// Whether `claims` are for one of `audiences`: its `aud` (a string or a list) names one, or
/// its `client_id` (an access token's) is one, as API Gateway's JWT authorizer checks.
pub(crate) fn for_audience(claims: &Claims, audiences: &[String]) -> Result<(), BearerTokenError> {
    let named = |v: &Value| v.as_str().is_some_and(|s| audiences.iter().any(|a| a == s));
    let ok = match claims.get("aud") {
        Some(Value::Array(items)) => items.iter().any(named),
        Some(v) => named(v),
        None => false,
    } || claims.get("client_id").is_some_and(named);
    if ok {
        Ok(())
    } else {
        Err(BearerTokenError::Invalid(format!(
            "the token is not for this audience ({})",
            audiences.join(", ")
        )))
    }
}

/// The issuers `vwr dev` takes tokens of, and what the console is told of them.
pub struct SignIn {
    pub dev: Arc<DevIssuer>,
    pub remote: Option<Arc<RemoteIssuer>>,
    client_id: Option<String>,
}

impl SignIn {
    /// Checks the options; `dev` is `vwr dev`'s own issuer.
    pub fn new(args: &OidcArgs, dev: DevIssuer) -> Result<Self, OidcError> {
        let remote = match &args.admin_oidc_issuer {
            None => None,
            Some(url) => {
                let issuer = checked_url("--admin-oidc-issuer", url)?;
                let audiences: Vec<String> = [&args.admin_oidc_audience, &args.admin_oidc_client_id]
                    .into_iter()
                    .flatten()
                    .map(|a| a.trim().to_owned())
                    .filter(|a| !a.is_empty())
                    .collect();
                if audiences.is_empty() {
                    return Err(OidcError::NoAudience);
                }
                Some(Arc::new(RemoteIssuer::new(issuer, audiences)?))
            }
        };
        let client_id = args.admin_oidc_client_id.as_deref().map(str::trim).filter(|c| !c.is_empty());
        Ok(Self { dev: Arc::new(dev), remote, client_id: client_id.map(str::to_owned) })
    }

    /// What `/console/config.json` says: the issuer and client of `--admin-oidc-issuer`, else
    /// this server's own origin (dev tokens only).
    pub fn console_config(&self) -> ConsoleConfig {
        match &self.remote {
            Some(r) => {
                ConsoleConfig { issuer: Some(r.issuer().to_owned()), client_id: self.client_id.clone() }
            }
            None => ConsoleConfig::default(),
        }
    }

    /// The verifier for `AdminAuth::with_verifier`.
    pub fn verifier(&self) -> Arc<dyn BearerTokenVerifier> {
        Arc::new(Verifier { dev: Arc::clone(&self.dev), remote: self.remote.clone() })
    }
}

/// Sends each token to the issuer its `iss` names, if it is one this server trusts.
struct Verifier {
    dev: Arc<DevIssuer>,
    remote: Option<Arc<RemoteIssuer>>,
}

#[async_trait::async_trait]
impl BearerTokenVerifier for Verifier {
    async fn verify(&self, token: &str) -> Result<Claims, BearerTokenError> {
        // Read unverified only to pick the issuer whose keys then verify everything.
        let claims: Claims = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|e| BearerTokenError::Invalid(e.to_string()))?;
        let iss = claims.get("iss").and_then(Value::as_str).unwrap_or_default();
        if iss == self.dev.issuer() {
            return self.dev.verify(token);
        }
        match &self.remote {
            Some(r) if r.issues(iss) => r.verify(token).await,
            _ => Err(BearerTokenError::Invalid(format!(
                "issued by {iss:?}, which this server does not trust (vwr dev's own tokens, or \
                 --admin-oidc-issuer's)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn issuer_urls_are_https_or_this_machine() {
        let ok = |u: &str| checked_url("--x", u).unwrap();
        assert_eq!(
            ok("https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/"),
            "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc"
        );
        assert_eq!(ok("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
        assert_eq!(ok("http://localhost:8081/realms/vwr"), "http://localhost:8081/realms/vwr");
        assert_eq!(ok("http://[::1]:9000"), "http://[::1]:9000");
        for (bad, says) in [
            ("http://idp.example.com", "http only on this machine"),
            ("http://127.0.0.2", "http only on this machine"),
            ("ftp://idp.example.com", "use https"),
            ("idp.example.com", "use https"),
            ("/realms/vwr", "not an absolute URL"),
            ("https://idp.example.com/?x=1", "no query"),
            ("https://user:pw@idp.example.com", "user name"),
            ("https://idp.example.com/a b", "no query, fragment or spaces"),
        ] {
            let e = checked_url("--admin-oidc-issuer", bad).unwrap_err().to_string();
            assert!(e.starts_with("--admin-oidc-issuer") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_audience_is_aud_or_client_id() {
        let auds = vec!["console".to_owned()];
        let c = |v: Value| v.as_object().cloned().unwrap();
        assert!(for_audience(&c(json!({"aud": "console"})), &auds).is_ok());
        assert!(for_audience(&c(json!({"aud": ["x", "console"]})), &auds).is_ok());
        assert!(for_audience(&c(json!({"client_id": "console"})), &auds).is_ok());
        assert!(for_audience(&c(json!({"aud": "other"})), &auds).is_err());
        assert!(for_audience(&c(json!({"aud": ["other"], "client_id": "x"})), &auds).is_err());
        assert!(for_audience(&c(json!({})), &auds).is_err());
    }

    #[test]
    fn an_issuer_needs_an_audience() {
        let dev = DevIssuer::generate("http://127.0.0.1:1", "cognito:groups").unwrap();
        let args = OidcArgs {
            admin_oidc_issuer: Some("https://idp.example.com".into()),
            admin_oidc_groups_claim: "cognito:groups".into(),
            ..OidcArgs::default()
        };
        assert!(matches!(SignIn::new(&args, dev), Err(OidcError::NoAudience)));
        let dev = DevIssuer::generate("http://127.0.0.1:1", "cognito:groups").unwrap();
        let args = OidcArgs { admin_oidc_client_id: Some("c1".into()), ..args };
        let s = SignIn::new(&args, dev).unwrap();
        let cfg = s.console_config();
        assert_eq!(
            (cfg.issuer.as_deref(), cfg.client_id.as_deref()),
            (Some("https://idp.example.com"), Some("c1"))
        );
    }
}
