//! Admin authentication. In AWS the admin routes use API Gateway IAM (SigV4) auth and the
//! Lambda entry point marks requests that carry an IAM identity with [`AdminCaller`]; locally
//! a bearer key (`Authorization: Bearer $VWR_ADMIN_KEY`) is required. Never open.

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
    /// An [`AdminCaller`] extension put there by the Lambda entry point from the IAM context.
    Iam,
}

impl std::fmt::Debug for AdminAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("AdminAuth::Bearer(…)"),
            Self::Iam => f.write_str("AdminAuth::Iam"),
        }
    }
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
            Self::Iam => match req.extensions().get::<AdminCaller>() {
                Some(_) => Ok(()),
                None => Err(ApiError::forbidden("forbidden", "admin routes need IAM (SigV4) authentication")),
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
            tracing::warn!(event = "admin.auth_refused", path = %req.uri().path(), code = e.code);
            e.into_response()
        }
    }
}
