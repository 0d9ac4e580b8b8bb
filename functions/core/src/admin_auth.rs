//! Admin authentication. In AWS the admin routes use API Gateway IAM (SigV4) auth and the
//! Lambda entry point marks requests that carry an IAM identity with [`AdminCaller`]; locally
//! a bearer key (`Authorization: Bearer $VWR_ADMIN_KEY`) is required. Never open.

use crate::ErrorCode;
use std::sync::Arc;

use aws_lc_rs::constant_time;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Minimum length of an admin bearer key.
pub const MIN_ADMIN_KEY_LEN: usize = 16;

/// Identity of an admin caller established upstream (API Gateway IAM auth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminCaller(pub String);

/// How admin requests are authenticated.
#[derive(Clone)]
pub enum AdminAuth {
    /// `Authorization: Bearer <key>` (local server).
    Bearer(Arc<str>),
    /// An [`AdminCaller`] extension put there by the Lambda entry point from the IAM context,
    /// whose principal ARN matches one of the patterns (none = any principal IAM let through).
    Iam(PrincipalPatterns),
}

impl std::fmt::Debug for AdminAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("AdminAuth::Bearer(…)"),
            Self::Iam(p) => write!(f, "AdminAuth::Iam({:?})", p.0),
        }
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
    /// A bearer key; refuses keys too short to be secret.
    pub fn bearer(key: &str) -> Result<Self, String> {
        let key = key.trim();
        if key.len() < MIN_ADMIN_KEY_LEN {
            return Err(format!("the admin key must have at least {MIN_ADMIN_KEY_LEN} characters"));
        }
        Ok(Self::Bearer(Arc::from(key)))
    }

    /// Whether the request is allowed.
    pub fn check(&self, req: &Request) -> Result<(), ApiError> {
        match self {
            Self::Iam(allowed) => match req.extensions().get::<AdminCaller>() {
                Some(AdminCaller(arn)) if allowed.allows(arn) => Ok(()),
                Some(AdminCaller(arn)) => {
                    tracing::warn!(event = "admin.principal_refused", principal = %arn);
                    Err(ApiError::forbidden(
                        ErrorCode::PrincipalNotAllowed,
                        "this IAM principal is not among the administrators (VWR_ADMIN_PRINCIPALS)",
                    ))
                }
                None => Err(ApiError::forbidden(
                    ErrorCode::Forbidden,
                    "admin routes need IAM (SigV4) authentication",
                )),
            },
            Self::Bearer(key) => {
                let given = req
                    .headers()
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
                    .ok_or_else(|| ApiError::unauthorized("missing bearer admin key"))?;
                constant_time::verify_slices_are_equal(given.trim().as_bytes(), key.as_bytes())
                    .map_err(|_| ApiError::unauthorized("wrong admin key"))
            }
        }
    }
}

/// `axum::middleware::from_fn_with_state` guard for admin routes.
pub async fn require_admin(State(auth): State<AdminAuth>, req: Request, next: Next) -> Response {
    match auth.check(&req) {
        Ok(()) => next.run(req).await,
        Err(e) => {
            tracing::warn!(event = "admin.auth_refused", path = %req.uri().path(), code = e.code.as_str());
            e.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(arn: Option<&str>) -> Request {
        let mut r = Request::new(axum::body::Body::empty());
        if let Some(a) = arn {
            r.extensions_mut().insert(AdminCaller(a.to_owned()));
        }
        r
    }

    /// Review finding 16: any IAM principal was an admin. With an allow-list, only matching
    /// principals are.
    #[test]
    fn principal_allow_list() {
        let ops = "arn:aws:sts::123456789012:assumed-role/ops/alice";
        let dev = "arn:aws:sts::123456789012:assumed-role/dev/bob";
        let open = AdminAuth::Iam(PrincipalPatterns::default());
        assert!(open.check(&req(Some(dev))).is_ok());
        assert!(open.check(&req(None)).is_err());
        let only_ops = AdminAuth::Iam(
            PrincipalPatterns::parse("arn:aws:sts::123456789012:assumed-role/ops/*, arn:aws:iam::1:user/x")
                .unwrap(),
        );
        assert!(only_ops.check(&req(Some(ops))).is_ok());
        let e = only_ops.check(&req(Some(dev))).unwrap_err();
        assert_eq!((e.status.as_u16(), e.code.as_str()), (403, "principal_not_allowed"));
        assert!(only_ops.check(&req(Some("arn:aws:iam::1:user/x"))).is_ok());
        assert!(only_ops.check(&req(Some("arn:aws:iam::1:user/xy"))).is_err());
        assert!(PrincipalPatterns::parse("ops-*").is_err());
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
