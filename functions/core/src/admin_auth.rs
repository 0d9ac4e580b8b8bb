//! Admin authentication and roles (docs/console.md#roles). In AWS the admin routes use API
//! Gateway IAM (SigV4) auth — the Lambda entry point marks requests that carry an IAM identity
//! with [`AdminCaller`] — or, on the console API, a JWT authorizer whose verified claims the
//! Lambda entry point passes as [`VerifiedClaims`]; locally a bearer key
//! (`Authorization: Bearer $VWR_ADMIN_KEY`) or a bearer JWT that a pluggable
//! [`BearerTokenVerifier`] checks. Never open. [`require_admin`] puts the caller's
//! [`AdminIdentity`] on the request; [`require_role`] refuses a call outside its role.

mod identity;
mod roles;

pub use identity::{
    AdminIdentity, BEARER_KEY_NAME, Claims, ClaimsError, DEFAULT_GROUPS_CLAIM, MAX_NAME_CHARS, NAME_CLAIMS,
    Role, VerifiedClaims, Via, groups, identity_from_claims, valid_groups_claim,
};
pub use roles::{RouteRole, RouteRoles, forbidden_role, least_role, require_role};

use crate::ErrorCode;
use std::sync::Arc;

use aws_lc_rs::constant_time;
use axum::extract::{Request, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Minimum length of an admin bearer key.
pub const MIN_ADMIN_KEY_LEN: usize = 16;

/// Identity of an admin caller established upstream (API Gateway IAM auth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminCaller(pub String);

/// Why a bearer JWT was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BearerTokenError {
    /// Bad signature, wrong issuer or audience, expired, malformed: 401.
    #[error("the token is not valid: {0}")]
    Invalid(String),
    /// The keys to check it could not be fetched (the issuer's JWKS): 503.
    #[error("the token could not be checked: {0}")]
    Unavailable(String),
}

/// Verifies a bearer JWT and answers its claims (`vwr dev` plugs its own: its dev key, or an
/// OIDC issuer's JWKS). Only tokens that parse as JWTs reach it; the claims then map to an
/// identity as API Gateway's do ([`identity_from_claims`]).
#[async_trait::async_trait]
pub trait BearerTokenVerifier: Send + Sync {
    async fn verify(&self, token: &str) -> Result<Claims, BearerTokenError>;
}

#[derive(Clone)]
enum Mode {
    Bearer(Arc<str>),
    Iam(PrincipalPatterns),
}

/// How admin requests are authenticated, and how a verified JWT's claims give a role.
#[derive(Clone)]
pub struct AdminAuth {
    mode: Mode,
    groups_claim: Arc<str>,
    verifier: Option<Arc<dyn BearerTokenVerifier>>,
}

impl std::fmt::Debug for AdminAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match &self.mode {
            Mode::Bearer(_) => "Bearer(…)".to_owned(),
            Mode::Iam(p) => format!("Iam({:?})", p.0),
        };
        f.debug_struct("AdminAuth")
            .field("mode", &mode)
            .field("groups_claim", &self.groups_claim)
            .field("verifier", &self.verifier.is_some())
            .finish()
    }
}

/// ARN patterns of the IAM principals allowed to administer (`VWR_ADMIN_PRINCIPALS`,
/// comma-separated; `*` matches any run of characters, e.g.
/// `arn:aws:sts::123456789012:assumed-role/ops/*`). Empty = every principal IAM admits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalPatterns(Vec<String>);

impl PrincipalPatterns {
    /// Parses the comma-separated list; refuses patterns that are not ARNs.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for p in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if !p.starts_with("arn:") || p.chars().any(char::is_whitespace) {
                return Err(format!("{p:?} is not an ARN pattern (arn:aws:iam::123456789012:role/ops-*)"));
            }
            out.push(p.to_owned());
        }
        Ok(Self(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `arn` is allowed.
    pub fn allows(&self, arn: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|p| glob(p.as_bytes(), arn.as_bytes()))
    }
}

/// `*`-only glob match. Written here because the only wildcard IAM-style ARN patterns use is
/// `*`; a glob crate would accept far more syntax than operators should rely on.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pattern.len() && pattern[p] != b'*' && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

impl AdminAuth {
    /// `Authorization: Bearer <key>` (the local server); refuses keys too short to be secret.
    /// The key's caller is [`AdminIdentity::bearer_key`].
    pub fn bearer(key: &str) -> Result<Self, String> {
        let key = key.trim();
        if key.len() < MIN_ADMIN_KEY_LEN {
            return Err(format!("the admin key must have at least {MIN_ADMIN_KEY_LEN} characters"));
        }
        Ok(Self::with_mode(Mode::Bearer(Arc::from(key))))
    }

    /// The Lambdas: an [`AdminCaller`] put there by the Lambda entry point from the IAM
    /// context, whose principal ARN matches one of `allowed` (none = any principal IAM let
    /// through), an admin; or [`VerifiedClaims`] from the console API's JWT authorizer.
    pub fn iam(allowed: PrincipalPatterns) -> Self {
        Self::with_mode(Mode::Iam(allowed))
    }

    fn with_mode(mode: Mode) -> Self {
        Self { mode, groups_claim: Arc::from(DEFAULT_GROUPS_CLAIM), verifier: None }
    }

    /// The claim that lists the caller's groups (default [`DEFAULT_GROUPS_CLAIM`]); refuses a
    /// name that is not 1 to 128 visible characters.
    pub fn with_groups_claim(mut self, name: &str) -> Result<Self, String> {
        self.groups_claim = Arc::from(valid_groups_claim(name.trim())?);
        Ok(self)
    }

    /// Bearer mode: a bearer value that parses as a JWT goes to `verifier`; anything else is
    /// the admin key.
    pub fn with_verifier(mut self, verifier: Arc<dyn BearerTokenVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// The claim that lists the caller's groups.
    pub fn groups_claim(&self) -> &str {
        &self.groups_claim
    }

    /// The identity of verified `claims`: 403 `forbidden_role` without one of vwr's groups.
    pub fn identity_from_claims(&self, claims: &Claims) -> Result<AdminIdentity, ApiError> {
        identity_from_claims(claims, &self.groups_claim).map_err(|e| match e {
            ClaimsError::NoRole { .. } => ApiError::forbidden(ErrorCode::ForbiddenRole, e.to_string()),
            ClaimsError::NoName => ApiError::forbidden(ErrorCode::Forbidden, e.to_string()),
        })
    }

    /// Who makes the request (its head), or why it is refused.
    pub async fn identify(&self, req: &Parts) -> Result<AdminIdentity, ApiError> {
        match &self.mode {
            Mode::Iam(allowed) => {
                if let Some(AdminCaller(arn)) = req.extensions.get::<AdminCaller>() {
                    if allowed.allows(arn) {
                        return Ok(AdminIdentity::iam(arn));
                    }
                    tracing::warn!(event = "admin.principal_refused", principal = %arn);
                    return Err(ApiError::forbidden(
                        ErrorCode::PrincipalNotAllowed,
                        "this IAM principal is not among the administrators (VWR_ADMIN_PRINCIPALS)",
                    ));
                }
                match req.extensions.get::<VerifiedClaims>() {
                    Some(VerifiedClaims(claims)) => self.identity_from_claims(claims),
                    None => Err(ApiError::forbidden(
                        ErrorCode::Forbidden,
                        "admin routes need IAM (SigV4) authentication or a console sign-in",
                    )),
                }
            }
            Mode::Bearer(key) => {
                let given = req
                    .headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
                    .map(str::trim)
                    .ok_or_else(|| ApiError::unauthorized("missing bearer admin key"))?;
                if let Some(verifier) = &self.verifier
                    && looks_like_jwt(given)
                {
                    let claims = verifier.verify(given).await.map_err(|e| match e {
                        BearerTokenError::Invalid(_) => ApiError::unauthorized(e.to_string()),
                        BearerTokenError::Unavailable(_) => ApiError::unavailable(e.to_string()),
                    })?;
                    return self.identity_from_claims(&claims);
                }
                constant_time::verify_slices_are_equal(given.as_bytes(), key.as_bytes())
                    .map_err(|_| ApiError::unauthorized("wrong admin key"))?;
                Ok(AdminIdentity::bearer_key())
            }
        }
    }
}

/// Whether a bearer value is a JWT (three dot-separated parts, a JSON header naming a known
/// algorithm) rather than an admin key.
fn looks_like_jwt(value: &str) -> bool {
    value.split('.').count() == 3 && jsonwebtoken::decode_header(value).is_ok()
}

/// `axum::middleware::from_fn_with_state` guard for admin routes: authenticates the caller
/// and puts its [`AdminIdentity`] on the request (layer [`require_role`] inside it).
pub async fn require_admin(State(auth): State<AdminAuth>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    match auth.identify(&parts).await {
        Ok(who) => {
            parts.extensions.insert(who);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(e) => {
            tracing::warn!(event = "admin.auth_refused", path = %parts.uri.path(), code = e.code.as_str());
            e.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use serde_json::json;

    fn req(arn: Option<&str>) -> Parts {
        let mut r = Request::new(axum::body::Body::empty()).into_parts().0;
        if let Some(a) = arn {
            r.extensions.insert(AdminCaller(a.to_owned()));
        }
        r
    }

    fn with_bearer(value: &str) -> Parts {
        let mut r = req(None);
        r.headers.insert(header::AUTHORIZATION, format!("Bearer {value}").parse().unwrap());
        r
    }

    /// An unsigned JWT of `claims` whose signature part is `sig` (the test verifier reads it).
    fn jwt(claims: serde_json::Value, sig: &str) -> String {
        let b64 =
            |v: serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.{sig}", b64(json!({"alg": "ES256", "typ": "JWT"})), b64(claims))
    }

    /// Accepts tokens signed `good`, refuses others; `down` stands for an unreachable JWKS.
    struct TestVerifier;

    #[async_trait::async_trait]
    impl BearerTokenVerifier for TestVerifier {
        async fn verify(&self, token: &str) -> Result<Claims, BearerTokenError> {
            let parts: Vec<&str> = token.split('.').collect();
            match parts[2] {
                "good" => {
                    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(parts[1]).unwrap();
                    Ok(serde_json::from_slice(&raw).unwrap())
                }
                "down" => Err(BearerTokenError::Unavailable("the JWKS did not answer".into())),
                _ => Err(BearerTokenError::Invalid("bad signature".into())),
            }
        }
    }

    const KEY: &str = "dev-admin-key-0123456789";

    /// Review finding 16: any IAM principal was an admin. With an allow-list, only matching
    /// principals are.
    #[tokio::test]
    async fn principal_allow_list() {
        let ops = "arn:aws:sts::123456789012:assumed-role/ops/alice";
        let dev = "arn:aws:sts::123456789012:assumed-role/dev/bob";
        let open = AdminAuth::iam(PrincipalPatterns::default());
        assert_eq!(open.identify(&req(Some(dev))).await.unwrap(), AdminIdentity::iam(dev));
        let e = open.identify(&req(None)).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (403, "forbidden"));
        let only_ops = AdminAuth::iam(
            PrincipalPatterns::parse("arn:aws:sts::123456789012:assumed-role/ops/*, arn:aws:iam::1:user/x")
                .unwrap(),
        );
        assert!(only_ops.identify(&req(Some(ops))).await.is_ok());
        let e = only_ops.identify(&req(Some(dev))).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (403, "principal_not_allowed"));
        assert!(only_ops.identify(&req(Some("arn:aws:iam::1:user/x"))).await.is_ok());
        assert!(only_ops.identify(&req(Some("arn:aws:iam::1:user/xy"))).await.is_err());
        assert!(PrincipalPatterns::parse("ops-*").is_err());
    }

    #[tokio::test]
    async fn an_iam_caller_is_an_admin_named_by_its_arn() {
        let arn = "arn:aws:iam::1:user/ops";
        let who = AdminAuth::iam(PrincipalPatterns::default()).identify(&req(Some(arn))).await.unwrap();
        assert_eq!(who, AdminIdentity { name: arn.into(), role: Role::Admin, via: Via::Iam });
    }

    /// The console API: API Gateway's JWT authorizer verified the token; the Lambda entry
    /// point passed its claims (strings). The groups claim's name is configurable.
    #[tokio::test]
    async fn verified_claims_give_the_role_of_their_groups() {
        let claims = |groups: &str| {
            let mut r = req(None);
            r.extensions.insert(VerifiedClaims::from_strings([
                ("email".to_owned(), "ann@example.com".to_owned()),
                ("cognito:groups".to_owned(), groups.to_owned()),
                ("groups".to_owned(), "[vwr-viewer]".to_owned()),
            ]));
            r
        };
        let auth = AdminAuth::iam(PrincipalPatterns::default());
        let who = auth.identify(&claims("[vwr-operator staff]")).await.unwrap();
        assert_eq!(
            who,
            AdminIdentity { name: "ann@example.com".into(), role: Role::Operator, via: Via::Oidc }
        );
        let e = auth.identify(&claims("[staff]")).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (403, "forbidden_role"));
        let by_groups = auth.clone().with_groups_claim("groups").unwrap();
        assert_eq!(by_groups.identify(&claims("[staff]")).await.unwrap().role, Role::Viewer);
        assert!(auth.clone().with_groups_claim("two words").is_err());
        // The principal allow-list is about IAM principals; a signed-in person is not one.
        let only_ops = AdminAuth::iam(PrincipalPatterns::parse("arn:aws:iam::1:role/ops-*").unwrap());
        assert_eq!(only_ops.identify(&claims("[vwr-admin]")).await.unwrap().role, Role::Admin);
        // The bearer mode ignores claims on the request (only the Lambda entry point sets them).
        let bearer = AdminAuth::bearer(KEY).unwrap();
        assert_eq!(bearer.identify(&claims("[vwr-admin]")).await.unwrap_err().status.as_u16(), 401);
    }

    #[tokio::test]
    async fn the_admin_key_is_the_dev_admin() {
        let auth = AdminAuth::bearer(KEY).unwrap();
        assert_eq!(auth.identify(&with_bearer(KEY)).await.unwrap(), AdminIdentity::bearer_key());
        assert_eq!(AdminIdentity::bearer_key().name, "dev");
        let e = auth.identify(&with_bearer("wrong-key-wrong-key")).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (401, "unauthorized"));
        let e = auth.identify(&req(None)).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (401, "unauthorized"));
        // Without a verifier a JWT is only a wrong key.
        let token = jwt(json!({"sub": "s", "cognito:groups": ["vwr-admin"]}), "good");
        assert_eq!(auth.identify(&with_bearer(&token)).await.unwrap_err().status.as_u16(), 401);
        assert!(AdminAuth::bearer("short").is_err());
    }

    #[tokio::test]
    async fn a_bearer_jwt_goes_to_the_verifier_and_the_key_still_works() {
        let auth = AdminAuth::bearer(KEY).unwrap().with_verifier(Arc::new(TestVerifier));
        let claims = json!({"preferred_username": "bo", "cognito:groups": ["vwr-viewer"]});
        let who = auth.identify(&with_bearer(&jwt(claims.clone(), "good"))).await.unwrap();
        assert_eq!(who, AdminIdentity { name: "bo".into(), role: Role::Viewer, via: Via::Oidc });
        let e = auth.identify(&with_bearer(&jwt(claims.clone(), "forged"))).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (401, "unauthorized"));
        let e = auth.identify(&with_bearer(&jwt(claims, "down"))).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (503, "service_unavailable"));
        let e = auth.identify(&with_bearer(&jwt(json!({"sub": "s"}), "good"))).await.unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (403, "forbidden_role"));
        assert_eq!(auth.identify(&with_bearer(KEY)).await.unwrap(), AdminIdentity::bearer_key());
        // Three dot-separated parts are not enough to be a JWT: the key path refuses it.
        let e = auth.identify(&with_bearer("a.b.c-not-a-jwt-at-all")).await.unwrap_err();
        assert_eq!(e.message, "wrong admin key");
    }

    #[test]
    fn glob_matches_stars_only() {
        assert!(glob(b"a*c", b"abbbc"));
        assert!(glob(b"*", b""));
        assert!(glob(b"a**", b"a"));
        assert!(!glob(b"a*c", b"abbb"));
        assert!(!glob(b"a?c", b"abc"));
        assert!(glob(b"*b*", b"abc"));
    }
}
