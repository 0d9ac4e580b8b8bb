//! A small HTTP(S) JSON client for `vwr admin` (bearer key locally, SigV4 for the deployed
//! admin API behind API Gateway IAM auth), and the stack a command talks to ([`AdminTarget`]):
//! here, below both the `vwr` command and `vwr-watch`, as both address a stack the same way
//! (docs/cli.md#addressing-a-stack).

use std::time::{Duration, SystemTime};

use aws_credential_types::provider::ProvideCredentials;
use axum::body::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The local server's default address (where `vwr dev` listens unless told otherwise).
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// How requests are authenticated.
#[derive(Clone)]
pub enum Auth {
    None,
    Bearer(String),
    /// AWS SigV4 for API Gateway (`execute-api`), credentials from the usual AWS chain.
    SigV4(Box<aws_config::SdkConfig>),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "Auth::None",
            Self::Bearer(_) => "Auth::Bearer(…)",
            Self::SigV4(_) => "Auth::SigV4",
        })
    }
}

/// The stack a command talks to, resolved from the global flags, the environment, the config
/// file's contexts and `vwr dev`'s state (the `vwr` command's `target` module,
/// docs/cli.md#addressing-a-stack).
#[derive(Debug, Clone, Default)]
pub struct AdminTarget {
    /// Base URL of the admin API.
    pub url: String,
    /// Bearer key (locally).
    pub key: Option<String>,
    /// Sign requests with AWS SigV4 (the deployed admin API uses IAM auth).
    pub sigv4: bool,
    /// The region to sign for (else the AWS config's).
    pub region: Option<String>,
    /// The tier-2 admin API when it is not `url`.
    pub tier2_url: Option<String>,
    /// Where `url` came from, said in errors ("--url", "context prod", …).
    pub from: String,
}

impl AdminTarget {
    /// A target at `url` with a bearer key (tests, the load test).
    pub fn bearer(url: &str, key: &str) -> Self {
        Self {
            url: url.trim_end_matches('/').to_owned(),
            key: Some(key.to_owned()),
            from: "--url".into(),
            ..Self::default()
        }
    }

    /// The tier-2 admin API's base URL: `tier2_url`, else `url` (as `vwr dev` and the
    /// deployed admin API serve both).
    pub fn tier2_base(&self) -> &str {
        self.tier2_url.as_deref().unwrap_or(&self.url).trim_end_matches('/')
    }

    /// The credentials: SigV4 from the AWS chain (in `region` when given), or the bearer key
    /// (flag, env, or the local `vwr dev` state file, as resolved).
    pub async fn auth(&self) -> Result<Auth, NoAdminKey> {
        if self.sigv4 {
            let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
            if let Some(region) = &self.region {
                loader = loader.region(aws_config::Region::new(region.clone()));
            }
            return Ok(Auth::SigV4(Box::new(loader.load().await)));
        }
        let key =
            self.key.clone().ok_or_else(|| NoAdminKey { url: self.url.clone(), from: self.from.clone() })?;
        Ok(Auth::Bearer(key))
    }
}

/// A target without SigV4 and without a key.
#[derive(Debug, thiserror::Error)]
#[error(
    "no admin key for {url} (from {from}): pass --key, set VWR_ADMIN_KEY, use --sigv4 for a deployed stack, \
     or start `vwr dev` in this directory first"
)]
pub struct NoAdminKey {
    pub url: String,
    pub from: String,
}

/// A client failure.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid URL {0:?}")]
    Url(String),
    #[error("could not reach {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    #[error("signing failed: {0}")]
    Signing(String),
    #[error("TLS set-up failed: {0}")]
    Tls(String),
}

/// An HTTP/1.1 client with TLS.
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
}

/// A response: status, headers and body bytes.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON (`null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

impl HttpClient {
    pub fn new(timeout: Duration) -> Result<Self, ClientError> {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|e| ClientError::Tls(e.to_string()))?
            .https_or_http()
            .enable_http1()
            .build();
        let inner = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(256).build(https);
        Ok(Self { inner, timeout })
    }

    /// Sends one request; `body` is sent as JSON when present.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        auth: &Auth,
    ) -> Result<Reply, ClientError> {
        let uri: http::Uri = url.parse().map_err(|_| ClientError::Url(url.to_owned()))?;
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let mut req = Request::builder().method(method.clone()).uri(uri.clone());
        if body.is_some() {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        let mut req = req.body(Full::new(bytes.clone())).map_err(|e| ClientError::Url(e.to_string()))?;
        match auth {
            Auth::None => {}
            Auth::Bearer(key) => {
                let v =
                    format!("Bearer {key}").parse().map_err(|_| ClientError::Signing("bad key".into()))?;
                req.headers_mut().insert(header::AUTHORIZATION, v);
            }
            Auth::SigV4(sdk) => sign(sdk, &mut req, &bytes).await?,
        }
        self.raw(req).await
    }
}

impl HttpClient {
    /// Sends a prepared request as is.
    pub async fn raw(&self, req: Request<Full<Bytes>>) -> Result<Reply, ClientError> {
        let url = req.uri().to_string();
        let fut = async {
            let res = self
                .inner
                .request(req)
                .await
                .map_err(|e| ClientError::Connect { url: url.clone(), reason: error_chain(&e) })?;
            let (parts, body) = res.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| ClientError::Connect { url: url.clone(), reason: e.to_string() })?
                .to_bytes();
            Ok(Reply { status: parts.status, headers: parts.headers, body })
        };
        tokio::time::timeout(self.timeout, fut).await.map_err(|_| ClientError::Timeout(self.timeout))?
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

async fn sign(
    sdk: &aws_config::SdkConfig,
    req: &mut Request<Full<Bytes>>,
    body: &Bytes,
) -> Result<(), ClientError> {
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
    let provider =
        sdk.credentials_provider().ok_or_else(|| ClientError::Signing("no AWS credentials".into()))?;
    let creds = provider.provide_credentials().await.map_err(|e| ClientError::Signing(e.to_string()))?;
    let region =
        sdk.region().map(|r| r.to_string()).ok_or_else(|| ClientError::Signing("no AWS region".into()))?;
    let identity = creds.into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(&region)
        .name("execute-api")
        .time(SystemTime::now())
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| ClientError::Signing(e.to_string()))?
        .into();
    let uri = req.uri().to_string();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str().to_owned(), v.to_owned())))
        .collect();
    let signable = SignableRequest::new(
        req.method().as_str(),
        &uri,
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(body),
    )
    .map_err(|e| ClientError::Signing(e.to_string()))?;
    let (instructions, _) =
        sign(signable, &params).map_err(|e| ClientError::Signing(e.to_string()))?.into_parts();
    instructions.apply_to_request_http1x(req);
    Ok(())
}
