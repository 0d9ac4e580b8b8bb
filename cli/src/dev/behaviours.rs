//! The CloudFront distribution's cache behaviours, as `vwr dev` routes by them: the file
//! Terraform builds the distribution from (`terraform/modules/edge/behaviours.json`, kept in the
//! module so that the module is whole by itself), built into the binary and read with serde
//! when the server starts. [`edge`](super::edge) drops the viewer's `x-vwr-*` headers where the
//! verifier runs; [`cdn`](super::cdn) caches the documents. The local proxies read the same file
//! (`edge/local/behaviours.mjs`), so a change there changes all of them.

use serde::Deserialize;

/// The file, as built into the binary.
const SHIPPED: &str = include_str!("../../../terraform/modules/edge/behaviours.json");

/// behaviours.json does not read as the distribution's behaviours.
#[derive(Debug, thiserror::Error)]
pub enum BehavioursError {
    #[error("terraform/modules/edge/behaviours.json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("terraform/modules/edge/behaviours.json: {0}")]
    Invalid(String),
}

/// What runs on the viewer request (`viewerRequest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViewerRequest {
    /// The edge verifier, which also deletes the viewer's `x-vwr-*` headers (docs/invariants.md#25).
    Verifier,
    /// The `/vwr-api` prefix removed (`terraform/modules/edge/functions/strip-prefix.js`).
    StripPrefix,
    /// `/vwr/{eventId}` and `/vwr/queue/{eventId}` to their pages.
    WaitingPageRewrite,
    None,
}

/// What of the viewer's request reaches the origin (`originRequestPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OriginRequestPolicy {
    /// The operator's choice for the site.
    Site,
    /// Nothing: the path alone decides the answer.
    ForwardNothing,
    /// Every cookie and header but `Host`.
    ForwardAllViewer,
    /// No policy: what the cache key holds.
    None,
}

/// One behaviour: the default (no pattern) or an ordered one.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Behaviour {
    /// Why it is so.
    #[serde(rename = "$comment", default)]
    pub comment: String,
    /// A literal path prefix and one trailing `*` (ordered behaviours only).
    #[serde(default)]
    pub path_pattern: Option<String>,
    pub origin: String,
    pub viewer_protocol_policy: String,
    pub allowed_methods: Vec<String>,
    pub cache_policy: String,
    pub origin_request_policy: OriginRequestPolicy,
    pub response_headers_policy: String,
    pub viewer_request: ViewerRequest,
}

impl Behaviour {
    /// The raw path prefix the pattern matches: the pattern less its `*`.
    pub fn prefix(&self) -> Option<&str> {
        self.path_pattern.as_deref().and_then(|p| p.strip_suffix('*'))
    }

    /// Whether the edge verifier runs here (and deletes the viewer's `x-vwr-*` headers).
    pub fn runs_verifier(&self) -> bool {
        self.viewer_request == ViewerRequest::Verifier
    }

    /// Whether this is a shared document: nothing of the viewer's request reaches the origin, so
    /// one cached answer per path serves every visitor.
    pub fn is_document(&self) -> bool {
        self.origin_request_policy == OriginRequestPolicy::ForwardNothing
    }
}

/// The default behaviour and the ordered ones, in CloudFront's order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Behaviours {
    /// What the file is.
    #[serde(rename = "$comment", default)]
    pub comment: String,
    pub default: Behaviour,
    pub ordered: Vec<Behaviour>,
}

impl Behaviours {
    /// The file built into this binary.
    pub fn shipped() -> Result<Self, BehavioursError> {
        Self::parse(SHIPPED)
    }

    /// Reads the behaviours: the default has no pattern; every ordered one has a literal path
    /// prefix and one trailing `*`, the only form matched here.
    pub fn parse(text: &str) -> Result<Self, BehavioursError> {
        let behaviours: Self = serde_json::from_str(text)?;
        if let Some(p) = &behaviours.default.path_pattern {
            return Err(BehavioursError::Invalid(format!("the default behaviour has a pattern ({p:?})")));
        }
        for b in &behaviours.ordered {
            let pattern = b.path_pattern.as_deref().unwrap_or_default();
            let literal = b.prefix().is_some_and(|p| p.starts_with('/') && !p.contains(['*', '?']));
            if !literal {
                return Err(BehavioursError::Invalid(format!(
                    "pattern {pattern:?} is not a path prefix and one trailing `*`"
                )));
            }
        }
        Ok(behaviours)
    }

    /// The behaviour CloudFront picks for a raw (undecoded) path: the first ordered pattern
    /// that matches, case-sensitively, else the default.
    pub fn route(&self, path: &str) -> &Behaviour {
        self.ordered.iter().find(|b| b.prefix().is_some_and(|p| path.starts_with(p))).unwrap_or(&self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_reads_and_routes_as_cloudfront() {
        let b = Behaviours::shipped().unwrap();
        let route = |path| b.route(path).path_pattern.as_deref().unwrap_or("default");
        assert_eq!(route("/vwr-api/vwr/status/e1"), "/vwr-api/vwr/status/*", "the first match wins");
        assert_eq!(route("/vwr-api/vwr/check/e1/r"), "/vwr-api/*");
        assert_eq!(route("/api/queue/line/e1"), "/api/queue/line/*");
        assert_eq!(route("/api/queue/status/e1"), "/api/queue/*");
        for path in ["/events/e1", "/", "/vwr", "/VWR-API/x", "/%76wr-api/x"] {
            assert_eq!(route(path), "default", "{path}");
        }
    }

    #[test]
    fn malformed_files_are_refused() {
        let one = |pattern: &str| {
            let b = r#"{"origin": "o", "viewerProtocolPolicy": "https-only", "allowedMethods": [],
                "cachePolicy": "c", "originRequestPolicy": "none", "responseHeadersPolicy": "r",
                "viewerRequest": "none""#;
            format!(r#"{{"default": {b}}}, "ordered": [{b}, "pathPattern": {pattern}}}]}}"#)
        };
        assert!(Behaviours::parse(&one(r#""/a/*""#)).is_ok());
        for bad in [r#""/a/*/b*""#, r#""/a/""#, r#""a/*""#, r#""/a?/*""#, "null"] {
            assert!(matches!(Behaviours::parse(&one(bad)), Err(BehavioursError::Invalid(_))), "{bad}");
        }
        let typo = one(r#""/a/*""#).replace("cachePolicy", "cachePolicyId");
        assert!(matches!(Behaviours::parse(&typo), Err(BehavioursError::Json(_))));
    }
}
