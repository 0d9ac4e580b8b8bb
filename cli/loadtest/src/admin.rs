//! The harness's own calls, never counted as visitor load: vwr's admin APIs with the admin key,
//! and the counters of the AWS fault proxy.

use http::Method;
use serde_json::Value;

use super::faults::ProxyReport;
use crate::client::{Auth, HttpClient};
use crate::error::LoadtestError;

/// `method path` on vwr at `base` with `auth`: the JSON answer, or the path, status and body.
pub(crate) async fn admin_call(
    client: &HttpClient,
    base: &str,
    auth: &Auth,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, LoadtestError> {
    let r = client.send(method, &format!("{base}{path}"), body.as_ref(), auth).await?;
    if r.status.is_success() {
        Ok(r.json())
    } else {
        let body = String::from_utf8_lossy(&r.body).into_owned();
        Err(LoadtestError::Admin { path: path.to_owned(), status: r.status, body })
    }
}

/// The counters of the `vwr aws-proxy` at `proxy`.
pub(crate) async fn proxy_stats(client: &HttpClient, proxy: &str) -> Result<ProxyReport, LoadtestError> {
    let r = client.send(Method::GET, &format!("{proxy}/_vwr/stats"), None, &Auth::None).await?;
    if !r.status.is_success() {
        return Err(LoadtestError::NotAProxy { proxy: proxy.to_owned(), status: r.status });
    }
    Ok(serde_json::from_value(r.json()).unwrap_or_default())
}
