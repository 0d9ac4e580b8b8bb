//! The adapter: reads the account and the stack through the AWS SDK and answers plain
//! [`Observations`]. Read-only calls only (the IAM actions are listed in
//! docs/rehearsal.md#preflight). An answer that says the thing does not exist is
//! [`Seen::Missing`]; any other error (an operation the endpoint does not serve, AccessDenied, a
//! time-out) is [`Seen::NotChecked`] with its reason, never a guess.

mod account;
mod edge;
mod stack;

use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use vwr_preflight::{Names, Observations, Seen};

/// The SDK configuration of the environment (`AWS_REGION`, credentials, `AWS_ENDPOINT_URL`),
/// with time limits so that an endpoint that hangs becomes a `not checked` row.
pub async fn sdk_config() -> aws_config::SdkConfig {
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(3))
        .operation_attempt_timeout(Duration::from_secs(10))
        .operation_timeout(Duration::from_secs(30))
        .build();
    aws_config::defaults(aws_config::BehaviorVersion::latest()).timeout_config(timeouts).load().await
}

/// One call first: when AWS does not answer at all, that is one line, not twenty rows of the
/// same cause (docs/rehearsal.md#preflight). An answer of any kind (even a refusal) goes on.
pub async fn reachable(sdk: &aws_config::SdkConfig) -> Result<(), vwr_preflight::PreflightError> {
    match aws_sdk_lambda::Client::new(sdk).get_account_settings().send().await {
        Err(e @ (SdkError::DispatchFailure(_) | SdkError::TimeoutError(_))) => {
            let region = sdk.region().map_or_else(String::new, ToString::to_string);
            let endpoint =
                sdk.endpoint_url().map_or_else(|| format!("the {region} endpoints"), str::to_owned);
            Err(vwr_preflight::PreflightError::Unreachable { endpoint, cause: crate::human::root_cause(&e) })
        }
        _ => Ok(()),
    }
}

/// Everything preflight reads, the services asked side by side.
pub async fn observe(sdk: &aws_config::SdkConfig, names: &Names) -> Observations {
    let alarm_prefix = format!("{}-", names.prefix);
    let (lambda, api, (table, ttl, dynamodb_quota), kvs, alarms, web_acl) = tokio::join!(
        account::lambda(sdk, names),
        account::api_gateway(sdk, names),
        stack::table(sdk, &names.table),
        edge::kvs(sdk, names.kvs_arn.as_deref()),
        edge::alarms(sdk, &alarm_prefix),
        edge::web_acl(sdk, &names.web_acl),
    );
    let (lambda_quota, lambda_account, functions) = lambda;
    let (api_quota, api_account, stages) = api;
    Observations {
        lambda_quota,
        lambda_account,
        functions,
        api_quota,
        api_account,
        stages,
        table,
        ttl,
        dynamodb_quota,
        kvs,
        alarms,
        web_acl,
    }
}

/// Error codes that say "no such thing" (the resource is missing, not the check).
const NOT_FOUND: [&str; 5] = [
    "ResourceNotFoundException",
    "ResourceNotFound",
    "NotFoundException",
    "WAFNonexistentItemException",
    "NoSuchEntity",
];

/// An SDK error as a reading: missing when the service says so, else not checked with the reason.
/// `ProvideErrorMetadata`, `SdkError` and `HttpResponse` are the smithy types every SDK crate
/// re-exports, so one function serves them all.
pub(crate) fn unseen<T, E>(op: &str, err: &SdkError<E, HttpResponse>) -> Seen<T>
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match err.code() {
        Some(code) if NOT_FOUND.contains(&code) => Seen::Missing,
        _ => Seen::NotChecked(reason(op, err)),
    }
}

/// Why a call was not answered, short: the error code and message, else the HTTP status, else
/// the error's first line (a time-out, a refused connection).
pub(crate) fn reason<E>(op: &str, err: &SdkError<E, HttpResponse>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let text = match (err.code(), err.message(), err.raw_response().map(|r| r.status().as_u16())) {
        (Some(code), Some(msg), _) if !msg.is_empty() => format!("{code}: {msg}"),
        (Some(code), _, _) => code.to_owned(),
        (None, _, Some(status)) => format!("HTTP {status}, no error code (the endpoint does not serve it)"),
        (None, _, None) => DisplayErrorContext(err).to_string(),
    };
    let line = text.lines().next().unwrap_or_default();
    // DisplayErrorContext ends with the error's Debug form, " (DispatchFailure(…))": drop it.
    let debug_form = |rest: &str| {
        let ident = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
        ident > 0
            && rest.starts_with(|c: char| c.is_ascii_uppercase())
            && rest[ident..].starts_with(['(', ' '])
    };
    let line = line
        .match_indices(" (")
        .find(|(at, _)| debug_form(&line[at + 2..]))
        .map_or(line, |(at, _)| &line[..at]);
    let short: String = line.chars().take(200).collect();
    format!("{op}: {short}")
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::config::http::HttpResponse;
    use aws_sdk_dynamodb::error::ErrorMetadata;
    use aws_sdk_dynamodb::error::SdkError;
    use aws_sdk_dynamodb::operation::describe_table::DescribeTableError;
    use aws_sdk_dynamodb::types::error::ResourceNotFoundException;

    use super::*;

    fn service_error(status: u16, err: DescribeTableError) -> SdkError<DescribeTableError, HttpResponse> {
        let raw = HttpResponse::new(status.try_into().unwrap_or_else(|_| unreachable!()), "".into());
        SdkError::service_error(err, raw)
    }

    #[test]
    fn not_found_is_missing_and_anything_else_is_not_checked_with_its_reason() {
        let missing = DescribeTableError::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .message("no table")
                .meta(ErrorMetadata::builder().code("ResourceNotFoundException").build())
                .build(),
        );
        assert_eq!(unseen::<(), _>("DescribeTable", &service_error(400, missing)), Seen::Missing);
        let denied = DescribeTableError::generic(
            ErrorMetadata::builder().code("AccessDeniedException").message("not allowed").build(),
        );
        assert_eq!(
            unseen::<(), _>("DescribeTable", &service_error(400, denied)),
            Seen::NotChecked("DescribeTable: AccessDeniedException: not allowed".into())
        );
        let unserved = DescribeTableError::generic(ErrorMetadata::builder().build());
        assert_eq!(
            unseen::<(), _>("DescribeTable", &service_error(501, unserved)),
            Seen::NotChecked(
                "DescribeTable: HTTP 501, no error code (the endpoint does not serve it)".into()
            )
        );
    }
}
