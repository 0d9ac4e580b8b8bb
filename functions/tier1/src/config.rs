//! Start-up configuration of tier 1, read from the environment and checked before serving.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `VWR_TIER1_KEYS` | — | `kid:base64,kid2:base64` HMAC keys (local / tests) |
//! | `VWR_TIER1_SIGNING_KID` | first key | which kid signs |
//! | `VWR_TIER1_KEYS_SECRET_ID` | — | Secrets Manager secret with `{"signingKid":…,"keys":{…}}` (AWS) |
//! | `VWR_TABLE` | `vwr-tier1` | DynamoDB table |
//! | `VWR_TOKEN_ISSUER` / `VWR_TOKEN_AUDIENCE` | `vwr` / `vwr-edge` | `iss` / `aud` claims |
//! | `VWR_TICKET_TTL_SECONDS` | 86400 | how long a `requestId` stays valid |
//! | `VWR_COOKIE_PREFIX` | `vwr_t1_` | tier-1 cookie is `{prefix}{eventId}` |
//! | `VWR_CACHE_TTL_MS` | 1000 | event/serving-counter cache per instance (0–1000) |
//! | `VWR_ADVANCER_TICK_SECONDS` | 1 | how often the advancer looks for due steps |
//! | `VWR_EDGE_KVS_ARN` | — | admin/advancer: CloudFront KeyValueStore whose `config.events` lists the active events |
//! | `VWR_ORIGIN_SECRET_ID` | — | APIs behind CloudFront: Secrets Manager secret whose string CloudFront sends as `x-vwr-origin-secret`; requests without it get 403 (`VWR_ORIGIN_SECRET` gives the value itself, for local runs) |
//! | `VWR_ADMIN_PRINCIPALS` | — | admin routes: comma-separated IAM principal ARN patterns (`*` wildcard) allowed to administer; empty = any IAM-authenticated principal |

use std::time::Duration;

use vwr_core::HmacKeyring;
use vwr_core::config::{ConfigError, Env};
use vwr_core::token::Tier1Tokens;

use crate::service::Tier1Settings;

/// The AWS SDK configuration type, re-exported for crates that pass it through.
pub use aws_config::SdkConfig;

/// Where the tier-1 keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `VWR_TIER1_KEYS` (+ `VWR_TIER1_SIGNING_KID`).
    Env { text: String, signing_kid: Option<String> },
    /// A Secrets Manager secret id or ARN.
    Secret(String),
}

/// Tier-1 configuration.
#[derive(Debug, Clone)]
pub struct Tier1Config {
    pub keys: KeySource,
    pub table: String,
    pub issuer: String,
    pub audience: String,
    pub settings: Tier1Settings,
    pub advancer_tick: Duration,
    pub edge_kvs_arn: Option<String>,
}

impl Tier1Config {
    /// Reads and validates everything; the error names the variable at fault.
    pub fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let keys = match (env.get("VWR_TIER1_KEYS"), env.get("VWR_TIER1_KEYS_SECRET_ID")) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::Invalid {
                    name: "VWR_TIER1_KEYS".into(),
                    value: "…".into(),
                    reason: "set either VWR_TIER1_KEYS or VWR_TIER1_KEYS_SECRET_ID, not both".into(),
                });
            }
            (Some(text), None) => {
                // Validate now so a typo fails at start-up, not at the first request.
                let signing_kid = env.get("VWR_TIER1_SIGNING_KID").map(str::to_owned);
                HmacKeyring::from_text(text, signing_kid.as_deref()).map_err(|e| ConfigError::Invalid {
                    name: "VWR_TIER1_KEYS".into(),
                    value: "…".into(),
                    reason: e.to_string(),
                })?;
                KeySource::Env { text: text.to_owned(), signing_kid }
            }
            (None, Some(id)) => KeySource::Secret(id.to_owned()),
            (None, None) => {
                return Err(ConfigError::Missing {
                    name: "VWR_TIER1_KEYS".into(),
                    hint: "set VWR_TIER1_KEYS (from `vwr keys generate`) or VWR_TIER1_KEYS_SECRET_ID".into(),
                });
            }
        };
        let table = env.string("VWR_TABLE", "vwr-tier1");
        if !(3..=255).contains(&table.len())
            || !table.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        {
            return Err(ConfigError::Invalid {
                name: "VWR_TABLE".into(),
                value: table,
                reason: "DynamoDB table names are 3-255 characters of A-Z a-z 0-9 _ - .".into(),
            });
        }
        let cookie_prefix = env.string("VWR_COOKIE_PREFIX", "vwr_t1_");
        if cookie_prefix.is_empty() || !cookie_prefix.bytes().all(vwr_core::ids::is_event_id_byte) {
            return Err(ConfigError::Invalid {
                name: "VWR_COOKIE_PREFIX".into(),
                value: cookie_prefix,
                reason: "use characters of A-Z a-z 0-9 _ -".into(),
            });
        }
        Ok(Self {
            keys,
            table,
            issuer: env.string("VWR_TOKEN_ISSUER", "vwr"),
            audience: env.string("VWR_TOKEN_AUDIENCE", "vwr-edge"),
            settings: Tier1Settings {
                ticket_ttl_secs: env.u64_in("VWR_TICKET_TTL_SECONDS", 86_400, 60..=7 * 86_400)?,
                cookie_prefix,
                cache_ttl: Duration::from_millis(env.u64_in("VWR_CACHE_TTL_MS", 1000, 0..=1000)?),
                shard_start: None,
            },
            advancer_tick: Duration::from_secs(env.u64_in("VWR_ADVANCER_TICK_SECONDS", 1, 1..=10)?),
            edge_kvs_arn: match env.get("VWR_EDGE_KVS_ARN") {
                Some(arn) if !arn.starts_with("arn:") => {
                    return Err(ConfigError::Invalid {
                        name: "VWR_EDGE_KVS_ARN".into(),
                        value: arn.into(),
                        reason: "expected the KeyValueStore ARN (arn:aws:cloudfront::…:key-value-store/…)"
                            .into(),
                    });
                }
                other => other.map(str::to_owned),
            },
        })
    }

    /// Loads the key ring (from Secrets Manager when configured so) and builds the token issuer.
    pub async fn tokens(&self, sdk: Option<&aws_config::SdkConfig>) -> Result<Tier1Tokens, ConfigError> {
        let ring = match &self.keys {
            KeySource::Env { text, signing_kid } => HmacKeyring::from_text(text, signing_kid.as_deref()),
            KeySource::Secret(id) => {
                let sdk = sdk.ok_or_else(|| ConfigError::Missing {
                    name: "AWS configuration".into(),
                    hint: "VWR_TIER1_KEYS_SECRET_ID needs AWS credentials and a region".into(),
                })?;
                let json = load_secret(sdk, id).await.map_err(|reason| ConfigError::Invalid {
                    name: "VWR_TIER1_KEYS_SECRET_ID".into(),
                    value: id.clone(),
                    reason,
                })?;
                HmacKeyring::from_json(&json)
            }
        }
        .map_err(|e| ConfigError::Invalid {
            name: "tier-1 keys".into(),
            value: "…".into(),
            reason: e.to_string(),
        })?;
        Ok(Tier1Tokens::new(ring, self.issuer.clone(), self.audience.clone()))
    }
}

/// A DynamoDB client from the SDK configuration.
pub fn dynamo_client(sdk: &aws_config::SdkConfig) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(sdk)
}

/// Builds the tier-1 service on DynamoDB from the environment (the Lambda entry points).
pub async fn dynamo_service(
    env: &Env,
    sdk: &aws_config::SdkConfig,
) -> Result<std::sync::Arc<crate::Tier1Service>, ConfigError> {
    let cfg = Tier1Config::from_env(env)?;
    let tokens = cfg.tokens(Some(sdk)).await?;
    let store = crate::dynamo::DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), cfg.table.clone());
    let mut svc = crate::Tier1Service::new(
        std::sync::Arc::new(store),
        tokens,
        cfg.settings,
        std::sync::Arc::new(vwr_core::time::SystemClock),
    );
    if let Some(arn) = &cfg.edge_kvs_arn {
        svc = svc.with_edge_sync(std::sync::Arc::new(crate::edge_sync::KvsEdgeConfig::new(sdk, arn.clone())));
    }
    Ok(std::sync::Arc::new(svc))
}

/// The origin secret of an API behind CloudFront (`VWR_ORIGIN_SECRET_ID`, or
/// `VWR_ORIGIN_SECRET` locally); `None` when neither is set (no check).
pub async fn origin_secret(
    env: &Env,
    sdk: Option<&aws_config::SdkConfig>,
) -> Result<Option<vwr_core::http::OriginSecret>, ConfigError> {
    let (name, value) = match (env.get("VWR_ORIGIN_SECRET"), env.get("VWR_ORIGIN_SECRET_ID")) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::Invalid {
                name: "VWR_ORIGIN_SECRET".into(),
                value: "…".into(),
                reason: "set either VWR_ORIGIN_SECRET or VWR_ORIGIN_SECRET_ID, not both".into(),
            });
        }
        (Some(v), None) => ("VWR_ORIGIN_SECRET", v.to_owned()),
        (None, Some(id)) => {
            let sdk = sdk.ok_or_else(|| ConfigError::Missing {
                name: "AWS configuration".into(),
                hint: "VWR_ORIGIN_SECRET_ID needs AWS credentials and a region".into(),
            })?;
            let v = load_secret(sdk, id).await.map_err(|reason| ConfigError::Invalid {
                name: "VWR_ORIGIN_SECRET_ID".into(),
                value: id.to_owned(),
                reason,
            })?;
            ("VWR_ORIGIN_SECRET_ID", v)
        }
        (None, None) => return Ok(None),
    };
    vwr_core::http::OriginSecret::new(&value).map(Some).map_err(|reason| ConfigError::Invalid {
        name: name.into(),
        value: "…".into(),
        reason,
    })
}

/// Admin authentication of the Lambdas: IAM, restricted to `VWR_ADMIN_PRINCIPALS` if set.
pub fn iam_admin_auth(env: &Env) -> Result<vwr_core::admin_auth::AdminAuth, ConfigError> {
    let patterns =
        vwr_core::admin_auth::PrincipalPatterns::parse(env.get("VWR_ADMIN_PRINCIPALS").unwrap_or(""))
            .map_err(|reason| ConfigError::Invalid {
                name: "VWR_ADMIN_PRINCIPALS".into(),
                value: env.get("VWR_ADMIN_PRINCIPALS").unwrap_or("").into(),
                reason,
            })?;
    Ok(vwr_core::admin_auth::AdminAuth::Iam(patterns))
}

/// Reads a secret string from Secrets Manager.
pub async fn load_secret(sdk: &aws_config::SdkConfig, id: &str) -> Result<String, String> {
    let client = aws_sdk_secretsmanager::Client::new(sdk);
    let out = client.get_secret_value().secret_id(id).send().await.map_err(|e| {
        format!("could not read the secret: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(&e))
    })?;
    out.secret_string().map(str::to_owned).ok_or_else(|| "the secret has no string value".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> String {
        HmacKeyring::generate("k1").unwrap().to_text()
    }

    #[test]
    fn defaults_and_errors() {
        let k = keys();
        let c = Tier1Config::from_env(&Env::from_pairs([("VWR_TIER1_KEYS", k.as_str())])).unwrap();
        assert_eq!(c.table, "vwr-tier1");
        assert_eq!(c.settings.cache_ttl, Duration::from_secs(1));
        let e = Tier1Config::from_env(&Env::default()).unwrap_err().to_string();
        assert!(e.contains("VWR_TIER1_KEYS is required"), "{e}");
        let e = Tier1Config::from_env(&Env::from_pairs([("VWR_TIER1_KEYS", "k1:short")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("VWR_TIER1_KEYS"), "{e}");
        let e = Tier1Config::from_env(&Env::from_pairs([
            ("VWR_TIER1_KEYS", k.as_str()),
            ("VWR_CACHE_TTL_MS", "5000"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("VWR_CACHE_TTL_MS"), "{e}");
        let e =
            Tier1Config::from_env(&Env::from_pairs([("VWR_TIER1_KEYS", k.as_str()), ("VWR_TABLE", "a b")]))
                .unwrap_err()
                .to_string();
        assert!(e.contains("VWR_TABLE"), "{e}");
    }
}
