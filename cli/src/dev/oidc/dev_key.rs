//! `vwr dev`'s own issuer (docs/console.md#sign-in-locally): an ES256 key kept in the state
//! file signs the console tokens `POST /api/admin/vwr/dev/console-token` mints (admin key
//! only), published at `/console/jwks.json` with a discovery document at
//! `/.well-known/openid-configuration`. `vwr dev` only: nothing here is deployed.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use serde::Deserialize;
use serde_json::{Value, json};
use vwr_core::admin_auth::{
    AdminAuth, AdminIdentity, BearerTokenError, Claims, MAX_NAME_CHARS, Role, Via, require_admin,
};
use vwr_core::http::{json_body, no_store};
use vwr_core::keys::KeyMaterial;
use vwr_core::{ApiError, EcKeyring, ErrorCode};

use super::{OidcError, decode_claims, for_audience};

/// The audience of the console tokens.
pub const CONSOLE_AUDIENCE: &str = "vwr-console";
/// Where the dev key is published.
pub const JWKS_PATH: &str = "/console/jwks.json";
/// A console token's life unless asked: one hour.
pub const DEFAULT_TTL_SECS: u64 = 3600;
/// The longest a console token lives: twelve hours.
pub const MAX_TTL_SECS: u64 = 12 * 3600;

/// `vwr dev`'s own issuer: its key, its name (this server's base URL) and the claim its tokens
/// list the role's group in.
pub struct DevIssuer {
    ring: EcKeyring,
    issuer: String,
    groups_claim: String,
}

/// A console token and what it says.
#[derive(Debug, Clone)]
pub struct ConsoleToken {
    pub token: String,
    pub name: String,
    pub role: Role,
    pub expires_at: u64,
}

impl DevIssuer {
    /// The issuer `issuer` (this server's base URL, `http://127.0.0.1:8080`) signing with the
    /// ES256 keys `keys` (the state file's text form).
    pub fn from_text(keys: &str, issuer: &str, groups_claim: &str) -> Result<Self, OidcError> {
        let ring = EcKeyring::from_text(keys, None).map_err(|e| OidcError::DevKey(e.to_string()))?;
        Ok(Self {
            ring,
            issuer: issuer.trim_end_matches('/').to_owned(),
            groups_claim: groups_claim.to_owned(),
        })
    }

    /// An issuer with a fresh key (tests).
    pub fn generate(issuer: &str, groups_claim: &str) -> Result<Self, OidcError> {
        let ring = EcKeyring::generate("devconsole").map_err(|e| OidcError::DevKey(e.to_string()))?;
        Self::from_text(&ring.to_text(), issuer, groups_claim)
    }

    /// The `iss` of its tokens: this server's base URL.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The public keys.
    pub fn jwks(&self) -> JwkSet {
        self.ring.jwks()
    }

    /// The OpenID Connect discovery document, as far as a token verifier needs it (no sign-in
    /// endpoints: tokens come from `vwr admin console-token`).
    pub fn discovery(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "jwks_uri": format!("{}{JWKS_PATH}", self.issuer),
            "id_token_signing_alg_values_supported": ["ES256"],
            "subject_types_supported": ["public"],
            "response_types_supported": ["id_token"],
            "claims_supported": ["sub", "name", "email", self.groups_claim],
        })
    }

    /// A console token for `name` with `role`, valid `ttl` seconds from `now`.
    pub fn mint(&self, role: Role, name: &str, ttl: u64, now: u64) -> Result<ConsoleToken, ApiError> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.ring.signing_kid().to_owned());
        let expires_at = now + ttl;
        let mut claims = json!({
            "iss": self.issuer,
            "aud": CONSOLE_AUDIENCE,
            "sub": name,
            "name": name,
            "email": name,
            "iat": now,
            "exp": expires_at,
        });
        claims[self.groups_claim.as_str()] = json!([role.group()]);
        let key = EncodingKey::from_ec_der(self.ring.signing_key().bytes());
        let token = jsonwebtoken::encode(&header, &claims, &key).map_err(|e| {
            tracing::error!(event = "dev.console_token_failed", error = %e);
            ApiError::internal("the console token could not be signed")
        })?;
        Ok(ConsoleToken { token, name: name.to_owned(), role, expires_at })
    }

    /// Verifies a token of this issuer: its key, `iss`, `aud` = [`CONSOLE_AUDIENCE`], `exp`.
    pub fn verify(&self, token: &str) -> Result<Claims, BearerTokenError> {
        let invalid = |m: String| BearerTokenError::Invalid(m);
        let header = jsonwebtoken::decode_header(token).map_err(|e| invalid(e.to_string()))?;
        if header.alg != Algorithm::ES256 {
            return Err(invalid(format!("vwr dev signs with ES256, not {:?}", header.alg)));
        }
        let kid = header.kid.unwrap_or_default();
        let key = self.ring.key(&kid).ok_or_else(|| invalid(format!("no key {kid:?} in vwr dev's JWKS")))?;
        let key = DecodingKey::from_ec_components(&key.x, &key.y).map_err(|e| invalid(e.to_string()))?;
        let claims = decode_claims(token, &key, Algorithm::ES256, &self.issuer)?;
        for_audience(&claims, &[CONSOLE_AUDIENCE.to_owned()])?;
        Ok(claims)
    }
}

/// `POST /api/admin/vwr/dev/console-token`'s body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TokenBody {
    role: Option<String>,
    name: Option<String>,
    ttl_seconds: Option<u64>,
}

/// What a console-token request asks for, checked: the role, the name (default
/// `dev-<role>`), the life in seconds (default [`DEFAULT_TTL_SECS`], at most [`MAX_TTL_SECS`]).
fn checked(body: &TokenBody) -> Result<(Role, String, u64), ApiError> {
    let bad = |m: String| ApiError::bad_request(ErrorCode::InvalidBody, m);
    let role = body
        .role
        .as_deref()
        .and_then(Role::parse)
        .ok_or_else(|| bad("role must be \"viewer\", \"operator\" or \"admin\"".into()))?;
    let name = match body.name.as_deref().map(str::trim) {
        None => format!("dev-{role}"),
        Some(n)
            if !n.is_empty() && n.chars().count() <= MAX_NAME_CHARS && !n.chars().any(char::is_control) =>
        {
            n.to_owned()
        }
        Some(_) => return Err(bad(format!("name must be 1 to {MAX_NAME_CHARS} characters, none a control"))),
    };
    let ttl = body.ttl_seconds.unwrap_or(DEFAULT_TTL_SECS);
    if !(1..=MAX_TTL_SECS).contains(&ttl) {
        return Err(bad(format!("ttlSeconds must be 1 to {MAX_TTL_SECS} (twelve hours)")));
    }
    Ok((role, name, ttl))
}

async fn console_token(State(issuer): State<Arc<DevIssuer>>, body: Bytes) -> Result<Response, ApiError> {
    let (role, name, ttl) = checked(&json_body(&body)?)?;
    let minted = issuer.mint(role, &name, ttl, vwr_core::time::now_secs())?;
    tracing::info!(event = "dev.console_token", name = %minted.name, role = role.as_str(), ttl);
    let url = format!("{}/console/#token={}", issuer.issuer(), minted.token);
    Ok(no_store(
        Json(json!({
            "token": minted.token,
            "url": url,
            "name": minted.name,
            "role": role,
            "expiresAt": minted.expires_at,
        }))
        .into_response(),
    ))
}

/// Only `vwr dev`'s admin key mints console tokens: a signed-in caller, admin or not, is
/// refused (a token must not beget tokens that outlive it).
async fn key_only(Extension(who): Extension<AdminIdentity>, req: Request, next: Next) -> Response {
    if who.via == Via::Bearer {
        return next.run(req).await;
    }
    ApiError::forbidden(ErrorCode::Forbidden, "console tokens are minted with vwr dev's admin key only")
        .into_response()
}

fn public_json(body: Value) -> Response {
    let mut res = Json(body).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res
}

/// The JWKS and discovery document (public), and the console-token route behind `auth` and
/// the admin key.
pub fn router(issuer: Arc<DevIssuer>, auth: AdminAuth) -> Router {
    let jwks = serde_json::to_value(issuer.jwks()).unwrap_or_else(|_| json!({ "keys": [] }));
    let discovery = issuer.discovery();
    let mint = Router::new()
        .route("/api/admin/vwr/dev/console-token", post(console_token))
        .layer(middleware::from_fn(vwr_core::http::json_errors))
        .with_state(issuer)
        .layer(middleware::from_fn(key_only))
        .layer(middleware::from_fn_with_state(auth, require_admin));
    Router::new()
        .route(JWKS_PATH, get(move || async move { public_json(jwks) }))
        .route("/.well-known/openid-configuration", get(move || async move { public_json(discovery) }))
        .merge(mint)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use vwr_core::admin_auth::{DEFAULT_GROUPS_CLAIM, identity_from_claims};

    fn issuer() -> DevIssuer {
        DevIssuer::generate("http://127.0.0.1:8080/", DEFAULT_GROUPS_CLAIM).unwrap()
    }

    #[test]
    fn a_minted_token_verifies_and_names_its_person_and_role() {
        let i = issuer();
        let now = vwr_core::time::now_secs();
        let t = i.mint(Role::Operator, "kim@example.com", 600, now).unwrap();
        let claims = i.verify(&t.token).unwrap();
        assert_eq!(claims["iss"], "http://127.0.0.1:8080");
        assert_eq!(claims["aud"], CONSOLE_AUDIENCE);
        assert_eq!(claims["exp"], now + 600);
        let who = identity_from_claims(&claims, DEFAULT_GROUPS_CLAIM).unwrap();
        assert_eq!((who.name.as_str(), who.role, who.via), ("kim@example.com", Role::Operator, Via::Oidc));
        // Another groups claim: the role is listed there.
        let g = DevIssuer::generate("http://x", "groups").unwrap();
        let claims = g.verify(&g.mint(Role::Viewer, "v", 60, now).unwrap().token).unwrap();
        assert_eq!(claims["groups"], json!(["vwr-viewer"]));
    }

    #[test]
    fn expired_foreign_or_tampered_tokens_are_refused() {
        let i = issuer();
        let now = vwr_core::time::now_secs();
        let expired = i.mint(Role::Admin, "a", 60, now - 7200).unwrap();
        assert!(matches!(i.verify(&expired.token), Err(BearerTokenError::Invalid(_))));
        // Within the leeway it still passes.
        let just = i.mint(Role::Admin, "a", 1, now - 1 - super::super::LEEWAY_SECS / 2).unwrap();
        assert!(i.verify(&just.token).is_ok());
        let other = issuer().mint(Role::Admin, "a", 60, now).unwrap();
        assert!(matches!(i.verify(&other.token), Err(BearerTokenError::Invalid(_))));
        let elsewhere = DevIssuer::generate("http://127.0.0.1:9", DEFAULT_GROUPS_CLAIM).unwrap();
        let mut parts: Vec<String> =
            elsewhere.mint(Role::Admin, "a", 60, now).unwrap().token.split('.').map(str::to_owned).collect();
        let ours: Vec<String> =
            i.mint(Role::Admin, "a", 60, now).unwrap().token.split('.').map(str::to_owned).collect();
        parts[2].clone_from(&ours[2]);
        assert!(i.verify(&parts.join(".")).is_err(), "a signature of another payload");
    }

    #[test]
    fn requests_are_checked() {
        let body = |v: Value| serde_json::from_value::<TokenBody>(v).unwrap();
        let (role, name, ttl) = checked(&body(json!({"role": "viewer"}))).unwrap();
        assert_eq!((role, name.as_str(), ttl), (Role::Viewer, "dev-viewer", DEFAULT_TTL_SECS));
        let (_, name, ttl) =
            checked(&body(json!({"role": "admin", "name": " Ann ", "ttlSeconds": 43200}))).unwrap();
        assert_eq!((name.as_str(), ttl), ("Ann", MAX_TTL_SECS));
        for bad in [
            json!({}),
            json!({"role": "owner"}),
            json!({"role": "Admin"}),
            json!({"role": "admin", "ttlSeconds": 0}),
            json!({"role": "admin", "ttlSeconds": 43201}),
            json!({"role": "admin", "name": ""}),
            json!({"role": "admin", "name": "a\nb"}),
        ] {
            let e = checked(&body(bad.clone())).unwrap_err();
            assert_eq!((e.status.as_u16(), e.code.as_str()), (400, "invalid_body"), "{bad}");
        }
        assert!(serde_json::from_value::<TokenBody>(json!({"role": "admin", "scope": "x"})).is_err());
    }

    #[test]
    fn the_discovery_document_points_at_the_jwks() {
        let d = issuer().discovery();
        assert_eq!(d["issuer"], "http://127.0.0.1:8080");
        assert_eq!(d["jwks_uri"], "http://127.0.0.1:8080/console/jwks.json");
        let jwks = issuer().jwks();
        assert_eq!(jwks.keys.len(), 1);
        assert_eq!(jwks.keys[0].common.key_id.as_deref(), Some("devconsole"));
    }
}
