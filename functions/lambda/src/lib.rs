//! Plumbing shared by the six vwr Lambdas, and nothing of either tier: library crates never
//! see Lambda types, so this crate turns the API Gateway request context into plain request
//! extensions, configures the AWS SDK, loads secrets ([`secrets`]: key rings, the Redis URL, the
//! origin secret) for both tiers in one place, and bounds scheduled runs. Each Lambda's
//! `main.rs` is its composition root (docs/adr/0014-workspace-layout.md).

pub mod secrets;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use lambda_http::RequestExt;
use lambda_http::request::RequestContext;
use vwr_core::admin_auth::{AdminCaller, VerifiedClaims};
use vwr_core::identity::UpstreamUser;

/// Logs a start-up failure with context (Lambda would otherwise only show "dispatch failure")
/// and turns it into the runtime's error type.
pub fn startup_error(what: &str, err: impl std::fmt::Display) -> lambda_http::Error {
    tracing::error!(event = "startup_failed", what, error = %err);
    format!("{what}: {err}").into()
}

/// Loads the AWS SDK configuration (honours `AWS_ENDPOINT_URL`) with explicit time limits,
/// so a slow dependency becomes a quick 503 rather than a Lambda timeout: 1 s to connect,
/// 2 s per attempt, 5 s per operation (retries included).
pub async fn sdk_config() -> aws_config::SdkConfig {
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(std::time::Duration::from_secs(1))
        .operation_attempt_timeout(std::time::Duration::from_secs(2))
        .operation_timeout(std::time::Duration::from_secs(5))
        .build();
    aws_config::defaults(aws_config::BehaviorVersion::latest()).timeout_config(timeouts).load().await
}

fn iam_caller(ctx: &RequestContext) -> Option<String> {
    match ctx {
        RequestContext::ApiGatewayV2(c) => c.authorizer.as_ref()?.iam.as_ref()?.user_arn.clone(),
        RequestContext::ApiGatewayV1(c) => c.identity.user_arn.clone(),
        _ => None,
    }
}

/// The caller's identity as set by an upstream API Gateway authorizer (JWT or Lambda
/// authorizer): the `sub` claim or the authorizer's `userId`/`principalId` context field.
fn authorizer_subject(ctx: &RequestContext) -> Option<String> {
    let auth = match ctx {
        RequestContext::ApiGatewayV2(c) => c.authorizer.as_ref()?,
        RequestContext::ApiGatewayV1(c) => &c.authorizer,
        _ => return None,
    };
    if let Some(sub) = auth.jwt.as_ref().and_then(|j| j.claims.get("sub")) {
        return Some(sub.clone());
    }
    let field = |k: &str| auth.fields.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    field("userId").or_else(|| field("principalId")).or_else(|| {
        auth.fields.get("lambda").and_then(|l| l.get("userId")).and_then(|v| v.as_str()).map(str::to_owned)
    })
}

/// The claims a JWT authorizer verified (payload 2.0 `requestContext.authorizer.jwt.claims`,
/// strings; the console API): the admin guard maps them to a person and a role.
fn jwt_claims(ctx: &RequestContext) -> Option<VerifiedClaims> {
    let RequestContext::ApiGatewayV2(c) = ctx else { return None };
    let claims = &c.authorizer.as_ref()?.jwt.as_ref()?.claims;
    (!claims.is_empty()).then(|| VerifiedClaims::from_strings(claims.clone()))
}

/// The request context's identities as request extensions: the IAM caller ([`AdminCaller`]),
/// a JWT authorizer's claims ([`VerifiedClaims`]) and the authorizer's subject
/// ([`UpstreamUser`]).
pub async fn identity_layer(mut req: Request, next: Next) -> Response {
    let ctx = req.request_context_ref().cloned();
    if let Some(ctx) = ctx {
        if let Some(arn) = iam_caller(&ctx).filter(|a| !a.is_empty()) {
            req.extensions_mut().insert(AdminCaller(arn));
        }
        if let Some(claims) = jwt_claims(&ctx) {
            req.extensions_mut().insert(claims);
        }
        if let Some(sub) = authorizer_subject(&ctx).filter(|s| !s.is_empty()) {
            req.extensions_mut().insert(UpstreamUser(sub));
        }
    }
    next.run(req).await
}

/// Serves `router` on the Lambda runtime, with the API Gateway identity mapped to extensions.
pub async fn serve(router: Router) -> Result<(), lambda_http::Error> {
    serve_with(router, None).await
}

/// [`serve`] for an API behind CloudFront: with `origin`, requests without the origin secret
/// are refused (IAM-authenticated admin requests excepted).
pub async fn serve_with(
    router: Router,
    origin: Option<vwr_core::http::OriginSecret>,
) -> Result<(), lambda_http::Error> {
    let router = behind_cdn(router.fallback(vwr_core::error::not_found_fallback), origin);
    lambda_http::run(router.layer(middleware::from_fn(identity_layer))).await
}

/// `router` with the origin-secret check on its routes when `origin` is set: requests without
/// CloudFront's secret are refused (IAM-authenticated admin requests excepted). Routes merged
/// afterwards are not checked (the tier-2 admin routes, reached through the admin and console
/// APIs, never through CloudFront).
pub fn behind_cdn(router: Router, origin: Option<vwr_core::http::OriginSecret>) -> Router {
    match origin {
        Some(secret) => {
            router.layer(middleware::from_fn_with_state(secret, vwr_core::http::require_origin_secret))
        }
        None => router,
    }
}

/// Runs `hook` when Lambda stops this instance, as far as the runtime lets a process know:
/// Lambda sends SIGTERM (and gives ~500 ms) only to functions with an extension, so an
/// internal one is registered — it subscribes to nothing — and a task waits for the signal.
/// Call before serving (registration must happen during init). Where the extensions API does
/// not answer (a test's runtime), it logs `lambda.shutdown_hook_unavailable` and goes on: the
/// hook is an improvement, never a condition to serve. (`lambda_runtime`'s own
/// `spawn_graceful_shutdown_handler` does the same but panics when registration fails.)
pub async fn on_shutdown<F, Fut>(hook: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let extension = lambda_extension::Extension::new()
        .with_events(&[])
        .with_extension_name("vwr-shutdown-hook")
        .register()
        .await;
    let extension = match extension {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(event = "lambda.shutdown_hook_unavailable", error = %e);
            return;
        }
    };
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(event = "lambda.shutdown_hook_unavailable", error = %e);
            return;
        }
    };
    tokio::spawn(async move {
        let shutdown = async move {
            term.recv().await;
            hook().await;
            std::process::exit(0);
        };
        // The extension receives no events; running it only ends Lambda's init phase for it.
        let _: ((), ()) = tokio::join!(shutdown, async {
            let _ = extension.run().await;
        });
    });
}

/// Stop a scheduled run this long before the invocation deadline.
pub const DEADLINE_MARGIN: std::time::Duration = std::time::Duration::from_secs(3);
/// A scheduled run never lasts longer than one schedule period.
pub const MAX_SCHEDULED_RUN: std::time::Duration = std::time::Duration::from_secs(60);

/// How long a scheduled invocation (advancer, worker) may keep ticking, given its deadline in
/// milliseconds since the epoch.
pub fn scheduled_budget(deadline_ms: u64) -> std::time::Duration {
    let left = std::time::Duration::from_millis(deadline_ms.saturating_sub(vwr_core::time::now_millis()));
    left.saturating_sub(DEADLINE_MARGIN).min(MAX_SCHEDULED_RUN)
}
