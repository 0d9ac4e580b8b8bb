//! Start-up configuration of tier 2 from the environment, checked before serving.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `VWR_REDIS_URL` | — | `redis://…` / `rediss://…`; comma-separated seed nodes for a cluster |
//! | `VWR_REDIS_URL_SECRET_ID` | — | instead: a Secrets Manager secret whose string is that URL (it holds the password) |
//! | `VWR_REDIS_CLUSTER` | `false` | Redis Cluster mode |
//! | `VWR_REDIS_TIMEOUT_MS` | 1000 | connect and response timeout |
//! | `VWR_TIER2_KEYS` / `VWR_TIER2_SIGNING_KID` | — | ES256 keys `kid:base64url(PKCS#8)` |
//! | `VWR_TIER2_KEYS_SECRET_ID` | — | instead: Secrets Manager `{"signingKid":…,"keys":{…}}` |
//! | `VWR_ENTRY_ISSUER` / `VWR_ENTRY_AUDIENCE` | `vwr` / `vwr-api` | entry-token `iss` / `aud` |
//! | `VWR_ACTIVE_TTL_SECONDS` | 600 | admission lifetime (entry tokens are refreshed up to it) |
//! | `VWR_ENTRY_TOKEN_TTL_SECONDS` | 30 | one entry token's lifetime (10–3600); `status` hands out fresh ones; a user who left keeps their slot counted until their last token expires |
//! | `VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS` | 60 | an active user without heartbeat loses the slot |
//! | `VWR_WAITING_TIMEOUT_SECONDS` | 150 | a waiting user without a poll leaves the line |
//! | `VWR_ADMIT_BATCH` | 500 | admissions per event per worker step |
//! | `VWR_DEFAULT_THRESHOLD` | 1000 | threshold of events registered from tier 1 |
//! | `VWR_NOTICE_QUEUE_URL` | — | SQS FIFO queue for admission notices (none: not sent) |
//! | `VWR_NOTICE_TIMEOUT_MS` | 2000 | bound of one SQS batch send |
//! | `VWR_WORKER_TICK_SECONDS` | 1 | worker period |
//! | `VWR_TIER1_KEYS`… | — | tier-1 keys, to read callers' tier-1 tokens (identity, position) |
//! | `VWR_TABLE` | — | the tier-1 DynamoDB table: events active in tier 1, and the durable copy of tier-2 registrations (without it, Redis is their only copy) |

use std::time::Duration;

use vwr_core::config::{ConfigError, Env};

use crate::entry_token::{EcKeyring, EntryTokens};
use crate::model::{MAX_THRESHOLD, Tier2Settings};
use crate::redis_store::RedisConfig;

/// Tier-2 configuration.
#[derive(Debug, Clone)]
pub struct Tier2Config {
    pub redis: Option<RedisConfig>,
    pub keys: Option<KeySource>,
    pub issuer: String,
    pub audience: String,
    pub settings: Tier2Settings,
    pub notice_queue_url: Option<String>,
    pub notice_timeout: Duration,
    pub worker_tick: Duration,
}

/// Where the tier-2 signing keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Env { text: String, signing_kid: Option<String> },
    Secret(String),
}

/// Parses the Redis URL(s) with the cluster flag and timeout from `env`.
pub fn redis_config(env: &Env, raw: &str, name: &str) -> Result<RedisConfig, ConfigError> {
    let timeout = Duration::from_millis(env.u64_in("VWR_REDIS_TIMEOUT_MS", 1000, 50..=30_000)?);
    let urls: Vec<String> = raw.split(',').map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect();
    if urls.is_empty() {
        return Err(invalid(name, "no URL given"));
    }
    for u in &urls {
        if !(u.starts_with("redis://") || u.starts_with("rediss://")) {
            return Err(invalid(name, "use redis://host:port or rediss://host:port"));
        }
    }
    let cluster = env.bool("VWR_REDIS_CLUSTER", false)?;
    if urls.len() > 1 && !cluster {
        return Err(invalid(name, "several URLs need VWR_REDIS_CLUSTER=true"));
    }
    Ok(RedisConfig { urls, cluster, connect_timeout: timeout, response_timeout: timeout })
}

fn invalid(name: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { name: name.into(), value: "…".into(), reason: reason.into() }
}

impl Tier2Config {
    pub fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let timeout = Duration::from_millis(env.u64_in("VWR_REDIS_TIMEOUT_MS", 1000, 50..=30_000)?);
        let redis = match env.get("VWR_REDIS_URL") {
            None => None,
            Some(raw) => {
                let urls: Vec<String> =
                    raw.split(',').map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect();
                for u in &urls {
                    if !(u.starts_with("redis://") || u.starts_with("rediss://")) {
                        return Err(invalid("VWR_REDIS_URL", "use redis://host:port or rediss://host:port"));
                    }
                }
                let cluster = env.bool("VWR_REDIS_CLUSTER", false)?;
                if urls.len() > 1 && !cluster {
                    return Err(invalid("VWR_REDIS_URL", "several URLs need VWR_REDIS_CLUSTER=true"));
                }
                Some(RedisConfig { urls, cluster, connect_timeout: timeout, response_timeout: timeout })
            }
        };
        let keys = match (env.get("VWR_TIER2_KEYS"), env.get("VWR_TIER2_KEYS_SECRET_ID")) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "VWR_TIER2_KEYS",
                    "set either VWR_TIER2_KEYS or VWR_TIER2_KEYS_SECRET_ID",
                ));
            }
            (Some(text), None) => {
                let signing_kid = env.get("VWR_TIER2_SIGNING_KID").map(str::to_owned);
                EcKeyring::from_text(text, signing_kid.as_deref())
                    .map_err(|e| invalid("VWR_TIER2_KEYS", e.to_string()))?;
                Some(KeySource::Env { text: text.to_owned(), signing_kid })
            }
            (None, Some(id)) => Some(KeySource::Secret(id.to_owned())),
            (None, None) => None,
        };
        let secs = |name: &str, default: u64, max: u64| env.u64_in(name, default, 1..=max).map(|s| s * 1000);
        let settings = Tier2Settings {
            active_ttl_ms: secs("VWR_ACTIVE_TTL_SECONDS", 600, 86_400)?,
            active_heartbeat_timeout_ms: secs("VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS", 60, 3_600)?,
            waiting_timeout_ms: secs("VWR_WAITING_TIMEOUT_SECONDS", 150, 86_400)?,
            batch_max: env.u64_in("VWR_ADMIT_BATCH", 500, 1..=100_000)?,
            default_threshold: env.u64_in("VWR_DEFAULT_THRESHOLD", 1000, 1..=MAX_THRESHOLD)?,
            entry_token_ttl_ms: secs("VWR_ENTRY_TOKEN_TTL_SECONDS", 30, 3_600)?,
            ..Tier2Settings::default()
        };
        if settings.entry_token_ttl_ms < 10_000 {
            return Err(invalid(
                "VWR_ENTRY_TOKEN_TTL_SECONDS",
                "must be between 10 and 3600: pages refresh the token with a status call",
            ));
        }
        if settings.waiting_timeout_ms <= 60_000 {
            return Err(invalid(
                "VWR_WAITING_TIMEOUT_SECONDS",
                "must exceed 60 s, the longest poll hint, or slow pollers lose their place",
            ));
        }
        Ok(Self {
            redis,
            keys,
            issuer: env.string("VWR_ENTRY_ISSUER", "vwr"),
            audience: env.string("VWR_ENTRY_AUDIENCE", "vwr-api"),
            settings,
            notice_queue_url: env.get("VWR_NOTICE_QUEUE_URL").map(str::to_owned),
            notice_timeout: Duration::from_millis(env.u64_in("VWR_NOTICE_TIMEOUT_MS", 2000, 100..=30_000)?),
            worker_tick: Duration::from_secs(env.u64_in("VWR_WORKER_TICK_SECONDS", 1, 1..=60)?),
        })
    }

    /// Loads the signing keys and builds the token issuer (`None` when no keys are configured).
    pub async fn tokens(
        &self,
        sdk: Option<&aws_config_like::SdkConfig>,
    ) -> Result<Option<EntryTokens>, ConfigError> {
        let ring = match &self.keys {
            None => return Ok(None),
            Some(KeySource::Env { text, signing_kid }) => EcKeyring::from_text(text, signing_kid.as_deref()),
            Some(KeySource::Secret(id)) => {
                let sdk =
                    sdk.ok_or_else(|| invalid("VWR_TIER2_KEYS_SECRET_ID", "needs AWS configuration"))?;
                let json = vwr_tier1::config::load_secret(sdk, id)
                    .await
                    .map_err(|r| invalid("VWR_TIER2_KEYS_SECRET_ID", r))?;
                EcKeyring::from_json(&json)
            }
        }
        .map_err(|e| invalid("tier-2 keys", e.to_string()))?;
        Ok(Some(EntryTokens::new(ring, self.issuer.clone(), self.audience.clone())))
    }
}

/// Re-export so callers need no direct aws-config dependency.
pub mod aws_config_like {
    pub use vwr_tier1::config::SdkConfig;
}

/// What a tier-2 Lambda needs, built from the environment.
pub struct AwsParts {
    pub service: std::sync::Arc<crate::Tier2Service>,
    pub identity: crate::identity::Identity,
    pub notices: std::sync::Arc<dyn crate::notices::NoticeSink>,
    pub worker_tick: Duration,
}

fn missing(name: &str, hint: &str) -> ConfigError {
    ConfigError::Missing { name: name.into(), hint: hint.into() }
}

/// Caller identity in AWS: upstream authorizer, tier-1 token or tier-2 identity cookie,
/// never a dev header.
fn lambda_identity(
    t1: Option<(vwr_core::token::Tier1Tokens, vwr_tier1::config::Tier1Config)>,
    tier2: crate::entry_token::EntryVerifier,
    clock: std::sync::Arc<dyn vwr_core::time::Clock>,
) -> crate::identity::Identity {
    crate::identity::Identity {
        cookie_prefix: t1
            .as_ref()
            .map_or_else(|| "vwr_t1_".to_owned(), |(_, c)| c.settings.cookie_prefix.clone()),
        tier1: t1.map(|(t, _)| t),
        tier2: Some(tier2),
        dev_user_header: false,
        clock,
    }
}

/// Tier-1 tokens for reading callers' tier-1 tokens, when tier-1 keys are configured.
pub async fn tier1_identity_tokens(
    env: &Env,
    sdk: &aws_config_like::SdkConfig,
) -> Result<Option<(vwr_core::token::Tier1Tokens, vwr_tier1::config::Tier1Config)>, ConfigError> {
    if env.get("VWR_TIER1_KEYS").is_none() && env.get("VWR_TIER1_KEYS_SECRET_ID").is_none() {
        return Ok(None);
    }
    let cfg = vwr_tier1::config::Tier1Config::from_env(env)?;
    Ok(Some((cfg.tokens(Some(sdk)).await?, cfg)))
}

/// Builds the tier-2 service for the API and worker Lambdas: Redis, signing keys, optional
/// tier-1 keys (identity and positions) and table (implicit registration), optional SQS queue.
pub async fn aws_parts(env: &Env, sdk: &aws_config_like::SdkConfig) -> Result<AwsParts, ConfigError> {
    use std::sync::Arc;
    let cfg = Tier2Config::from_env(env)?;
    let redis = match (&cfg.redis, env.get("VWR_REDIS_URL_SECRET_ID")) {
        (Some(r), _) => r.clone(),
        (None, Some(id)) => {
            let url = vwr_tier1::config::load_secret(sdk, id)
                .await
                .map_err(|r| invalid("VWR_REDIS_URL_SECRET_ID", r))?;
            redis_config(env, url.trim(), "VWR_REDIS_URL_SECRET_ID")?
        }
        (None, None) => {
            return Err(missing(
                "VWR_REDIS_URL",
                "the tier-2 Lambdas need Redis (VWR_REDIS_URL or VWR_REDIS_URL_SECRET_ID)",
            ));
        }
    };
    let tokens = cfg.tokens(Some(sdk)).await?.ok_or_else(|| {
        missing("VWR_TIER2_KEYS", "set VWR_TIER2_KEYS or VWR_TIER2_KEYS_SECRET_ID (`vwr keys generate`)")
    })?;
    let store = crate::redis_store::RedisStore::connect(&redis)
        .await
        .map_err(|e| invalid("VWR_REDIS_URL", format!("cannot connect: {e}")))?;
    let clock: Arc<dyn vwr_core::time::Clock> = Arc::new(vwr_core::time::SystemClock);
    let t1 = tier1_identity_tokens(env, sdk).await?;
    let lookup: Arc<dyn crate::service::Tier1Lookup> = match (&t1, env.get("VWR_TABLE")) {
        (Some((tok, t1cfg)), Some(_)) => {
            let dynamo = vwr_tier1::dynamo::DynamoStore::new(
                vwr_tier1::config::dynamo_client(sdk),
                t1cfg.table.clone(),
            );
            Arc::new(vwr_tier1::Tier1Service::new(
                Arc::new(dynamo),
                tok.clone(),
                t1cfg.settings.clone(),
                Arc::clone(&clock),
            ))
        }
        _ => Arc::new(crate::service::NoTier1),
    };
    let identity = lambda_identity(t1, tokens.verifier(), Arc::clone(&clock));
    let registry: Arc<dyn crate::registry::Registry> = match env.get("VWR_TABLE") {
        Some(table) => {
            Arc::new(crate::registry::DynamoRegistry::new(aws_sdk_dynamodb::Client::new(sdk), table))
        }
        None => {
            tracing::warn!(
                event = "tier2.registry_in_memory",
                "VWR_TABLE is not set: tier-2 registrations live only in Redis; a Redis data loss resets thresholds"
            );
            Arc::new(crate::registry::MemoryRegistry::default())
        }
    };
    let notices: Arc<dyn crate::notices::NoticeSink> = match &cfg.notice_queue_url {
        Some(url) => Arc::new(crate::notices::SqsNotices::new(
            aws_sdk_sqs::Client::new(sdk),
            url.clone(),
            cfg.notice_timeout,
        )),
        None => Arc::new(crate::notices::MemoryNotices::default()),
    };
    let service = Arc::new(
        crate::Tier2Service::new(Arc::new(store), tokens, cfg.settings, lookup, Duration::from_secs(1))
            .with_registry(registry)
            .with_clock(clock)
            .with_metrics(vwr_core::metrics::MetricsSink::Emf),
    );
    Ok(AwsParts { service, identity, notices, worker_tick: cfg.worker_tick })
}

/// The protected-API check for the authorizer Lambda: public keys from `VWR_TIER2_JWKS`
/// (a JWKS document) or derived from `VWR_TIER2_KEYS`; caller identity from tier-1 tokens.
pub async fn protector(
    env: &Env,
    sdk: &aws_config_like::SdkConfig,
) -> Result<crate::protect::Protector, ConfigError> {
    use std::sync::Arc;
    let cfg = Tier2Config::from_env(env)?;
    let verifier = match env.get("VWR_TIER2_JWKS") {
        Some(jwks) => crate::entry_token::EntryVerifier::from_jwks(jwks, &cfg.issuer, &cfg.audience)
            .map_err(|e| invalid("VWR_TIER2_JWKS", e.to_string()))?,
        None => cfg
            .tokens(Some(sdk))
            .await?
            .ok_or_else(|| {
                missing("VWR_TIER2_JWKS", "set VWR_TIER2_JWKS (the public JWKS) or VWR_TIER2_KEYS")
            })?
            .verifier(),
    };
    let t1 = tier1_identity_tokens(env, sdk).await?;
    let identity = lambda_identity(t1, verifier.clone(), Arc::new(vwr_core::time::SystemClock));
    Ok(crate::protect::Protector { verifier, identity })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates() {
        let c = Tier2Config::from_env(&Env::default()).unwrap();
        assert!(c.redis.is_none() && c.keys.is_none());
        assert_eq!(c.settings.active_ttl_ms, 600_000);
        let e = Tier2Config::from_env(&Env::from_pairs([("VWR_REDIS_URL", "http://x")])).unwrap_err();
        assert!(e.to_string().contains("VWR_REDIS_URL"));
        let e =
            Tier2Config::from_env(&Env::from_pairs([("VWR_REDIS_URL", "redis://a,redis://b")])).unwrap_err();
        assert!(e.to_string().contains("VWR_REDIS_CLUSTER"));
        let e = Tier2Config::from_env(&Env::from_pairs([("VWR_WAITING_TIMEOUT_SECONDS", "30")])).unwrap_err();
        assert!(e.to_string().contains("VWR_WAITING_TIMEOUT_SECONDS"));
        let e = Tier2Config::from_env(&Env::from_pairs([("VWR_TIER2_KEYS", "k:AAAA")])).unwrap_err();
        assert!(e.to_string().contains("VWR_TIER2_KEYS"));
        let ring = EcKeyring::generate("k1").unwrap().to_text();
        let c = Tier2Config::from_env(&Env::from_pairs([
            ("VWR_TIER2_KEYS", ring.as_str()),
            ("VWR_REDIS_URL", "redis://127.0.0.1:7000,redis://127.0.0.1:7001"),
            ("VWR_REDIS_CLUSTER", "true"),
        ]))
        .unwrap();
        assert!(c.redis.unwrap().cluster);
    }
}
