//! The console of `vwr dev` (docs/console.md): the files of `static/console/` (built by
//! `static/build.mjs` and embedded at build time, as the waiting page's are) at `/console/`, and
//! the `config.json` that Terraform writes for the deployed console (`/vwr-console/`): here the
//! API is this origin and the console takes the dev tokens of `vwr admin console-token`.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

const INDEX: &str = include_str!("../../../static/console/index.html");
const FILES: &[(&str, &str, &str)] = &[
    ("console.js", "text/javascript; charset=utf-8", include_str!("../../../static/console/console.js")),
    ("console.css", "text/css; charset=utf-8", include_str!("../../../static/console/console.css")),
    ("vendor.js", "text/javascript; charset=utf-8", include_str!("../../../static/console/vendor.js")),
    ("vendor.css", "text/css; charset=utf-8", include_str!("../../../static/console/vendor.css")),
    ("LICENSES.txt", "text/plain; charset=utf-8", include_str!("../../../static/console/LICENSES.txt")),
];

/// The console's sign-in: an OpenID Connect issuer and client (`--admin-oidc-issuer`), else
/// only `vwr dev`'s own tokens.
#[derive(Debug, Clone, Default)]
pub struct ConsoleConfig {
    /// The issuer the console signs in with (authorization code with PKCE); `None`: this
    /// server's own origin, whose tokens come from `vwr admin console-token`.
    pub issuer: Option<String>,
    /// The issuer's client id for the console; empty: no OIDC sign-in, dev tokens only.
    pub client_id: Option<String>,
}

/// The scopes the console asks the issuer for.
pub const CONSOLE_SCOPES: &str = "openid email profile";

/// `scheme://host[:port]` of an `http(s)` URL made of URL characters, else `None`: what the
/// console's policy lets it reach besides this origin.
fn origin_of(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let ok = !host.is_empty()
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
    ok.then(|| &url[..url.len() - rest.len() + host.len()])
}

/// The console's Content-Security-Policy: its own scripts and styles, calls to this origin and
/// the issuer (discovery, token), frames of this origin only (the waiting page's preview), and
/// no framing of the console itself.
pub fn console_csp(cfg: &ConsoleConfig) -> String {
    let issuer = cfg.issuer.as_deref().and_then(origin_of).map(|o| format!(" {o}")).unwrap_or_default();
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'{issuer}; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
}

/// `config.json` for a browser that reached this server as `host`.
pub fn config_json(cfg: &ConsoleConfig, host: Option<&str>) -> serde_json::Value {
    let own = host
        .filter(|h| {
            h.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
        })
        .map(|h| format!("http://{h}"))
        .unwrap_or_default();
    serde_json::json!({
        "api": "",
        "issuer": cfg.issuer.clone().unwrap_or(own),
        "clientId": cfg.client_id.clone().unwrap_or_default(),
        "scopes": CONSOLE_SCOPES,
        "devTokens": true,
    })
}

fn served(body: impl IntoResponse, content_type: &'static str, cache: &'static str) -> Response {
    let mut res = body.into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    res
}

async fn index(State(cfg): State<ConsoleConfig>) -> Response {
    let mut res = served(INDEX, "text/html; charset=utf-8", "no-cache");
    if let Ok(csp) = HeaderValue::from_str(&console_csp(&cfg)) {
        res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    res.headers_mut().insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    res
}

async fn file(State(cfg): State<ConsoleConfig>, Path(name): Path<String>, headers: HeaderMap) -> Response {
    if name == "config.json" {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        return served(axum::Json(config_json(&cfg, host)), "application/json", "no-store");
    }
    if name == "index.html" {
        return index(State(cfg)).await;
    }
    match FILES.iter().find(|(file, _, _)| *file == name) {
        Some((_, content_type, text)) => served(*text, content_type, "no-cache"),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// `/console/` (and `/console`, sent there), `/console/{file}`, `/console/config.json`.
pub fn router(cfg: ConsoleConfig) -> Router {
    Router::new()
        .route("/console", get(|| async { Redirect::permanent("/console/") }))
        .route("/console/", get(index))
        .route("/console/{name}", get(file))
        .with_state(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_reaches_only_the_issuer_besides_this_origin() {
        let none = console_csp(&ConsoleConfig::default());
        assert!(none.contains("connect-src 'self';"), "{none}");
        assert!(none.contains("frame-ancestors 'none'"));
        let cfg = |i: &str| ConsoleConfig { issuer: Some(i.to_owned()), client_id: Some("c".to_owned()) };
        let csp = console_csp(&cfg("https://login.example.com:8443/realms/vwr"));
        assert!(csp.contains("connect-src 'self' https://login.example.com:8443;"), "{csp}");
        // An issuer that is no plain URL adds nothing to the policy.
        for bad in ["ftp://x", "https://a;script-src *", "https://", "javascript:alert(1)"] {
            assert!(console_csp(&cfg(bad)).contains("connect-src 'self';"), "{bad}");
        }
    }

    #[test]
    fn config_json_names_this_origin_and_dev_tokens_unless_an_issuer_is_given() {
        let own = config_json(&ConsoleConfig::default(), Some("127.0.0.1:8080"));
        assert_eq!(own["api"], "");
        assert_eq!(own["issuer"], "http://127.0.0.1:8080");
        assert_eq!(own["clientId"], "");
        assert_eq!(own["devTokens"], true);
        assert_eq!(config_json(&ConsoleConfig::default(), Some("x\"y"))["issuer"], "");
        let oidc =
            ConsoleConfig { issuer: Some("https://idp.example".into()), client_id: Some("vwr".into()) };
        let j = config_json(&oidc, Some("127.0.0.1:8080"));
        assert_eq!(
            (j["issuer"].as_str(), j["clientId"].as_str()),
            (Some("https://idp.example"), Some("vwr"))
        );
        assert_eq!(j["scopes"], CONSOLE_SCOPES);
    }

    #[test]
    fn every_file_the_page_names_is_served() {
        for name in ["console.js", "console.css", "vendor.js", "vendor.css"] {
            assert!(INDEX.contains(&format!("\"{name}\"")), "{name}");
            assert!(FILES.iter().any(|(f, _, _)| *f == name), "{name}");
        }
    }
}
