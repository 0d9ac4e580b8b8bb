//! Start-up configuration of tier 2 from the environment, checked before serving
//! (docs/settings.md). Redis connection settings are parsed by `vwr-tier2-store`; keys in
//! Secrets Manager are loaded by the Lambda plumbing.
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
//! | `VWR_WAITING_TIMEOUT_SECONDS` | 0 (off) | > 60: a waiting user without a poll leaves the line; off, waiting users are not heard from while they wait |
//! | `VWR_COLLECT_SECONDS` | 10 | an admission no call collected for this long frees its slot (2 to below the heartbeat timeout) |
//! | `VWR_EVICTED_PLACE_SECONDS` | 1800 | a user removed by a timeout who comes back within this gets the old place |
//! | `VWR_ADMIT_BATCH` | 500 | admissions per event per worker step |
//! | `VWR_DEFAULT_THRESHOLD` | 1000 | threshold of events registered from tier 1 |
//! | `VWR_NOTICE_QUEUE_URL` | — | SQS FIFO queue for admission notices (none: not sent) |
//! | `VWR_NOTICE_TIMEOUT_MS` | 2000 | bound of one SQS batch send |
//! | `VWR_WORKER_TICK_SECONDS` | 1 | worker period; a cleanup that has not run for max(10 s, 3 periods) counts the gap as a silence |
//! | `VWR_TIER1_LINK_SECRET_ID`, or `VWR_TIER1_EDGE_KEYS` + `VWR_TIER1_PLACE_KEYS` | — | the derived tier-1 keys, to read callers' tier-1 tokens (identity, position) and renew those of visitors tier 2 holds; never the master keys (`vwr_core::config::LinkSource`) |
//! | `VWR_TABLE` | — | the tier-1 DynamoDB table: events active in tier 1, and the durable copy of tier-2 registrations (without it, Redis is their only copy) |

use std::time::Duration;

pub use vwr_core::config::TIER2_KEYS;
use vwr_core::config::{ConfigError, Env, KeySource};
use vwr_core::keys::{EcKey, EcKeyring};

use crate::entry_token::EntryTokens;
use crate::model::{MAX_THRESHOLD, Tier2Settings};

/// Tier-2 configuration.
#[derive(Debug, Clone)]
pub struct Tier2Config {
    pub keys: Option<KeySource>,
    pub issuer: String,
    pub audience: String,
    pub settings: Tier2Settings,
    pub notice_queue_url: Option<String>,
    pub notice_timeout: Duration,
    pub worker_tick: Duration,
    /// The tier-1 table (`VWR_TABLE`): events tier 1 gates, and the durable copy of
    /// registrations.
    pub table: Option<String>,
    /// How long an event's registration is cached per instance: 1 s, not configurable
    /// (docs/settings.md); the tests set 0 to see writes at once.
    pub registration_cache_ttl: Duration,
}

fn invalid(name: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { name: name.into(), value: "…".into(), reason: reason.into() }
}

impl Tier2Config {
    pub fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let keys = KeySource::from_env::<EcKey>(env, TIER2_KEYS)?;
        let secs = |name: &str, default: u64, max: u64| env.u64_in(name, default, 1..=max).map(|s| s * 1000);
        let tick_secs = env.u64_in("VWR_WORKER_TICK_SECONDS", 1, 1..=60)?;
        let defaults = Tier2Settings::default();
        let mut settings = Tier2Settings {
            active_ttl_ms: secs("VWR_ACTIVE_TTL_SECONDS", 600, 86_400)?,
            active_heartbeat_timeout_ms: secs("VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS", 60, 3_600)?,
            waiting_timeout_ms: env.u64_in("VWR_WAITING_TIMEOUT_SECONDS", 0, 0..=86_400)? * 1000,
            collect_ms: secs("VWR_COLLECT_SECONDS", 10, 3_600)?,
            batch_max: env.u64_in("VWR_ADMIT_BATCH", 500, 1..=100_000)?,
            default_threshold: env.u64_in("VWR_DEFAULT_THRESHOLD", 1000, 1..=MAX_THRESHOLD)?,
            entry_token_ttl_ms: secs("VWR_ENTRY_TOKEN_TTL_SECONDS", 30, 3_600)?,
            ghost_ttl_ms: env.u64_in("VWR_EVICTED_PLACE_SECONDS", 1800, 60..=86_400)? * 1000,
            // A cleanup missing for several worker periods means the servers could not hear.
            silence_after_ms: defaults.silence_after_ms.max(3 * tick_secs * 1000),
            ..defaults
        };
        if settings.entry_token_ttl_ms < 10_000 {
            return Err(invalid(
                "VWR_ENTRY_TOKEN_TTL_SECONDS",
                "must be between 10 and 3600: pages refresh the token with a status call",
            ));
        }
        if settings.waiting_timeout_ms > 0 && settings.waiting_timeout_ms <= 60_000 {
            return Err(invalid(
                "VWR_WAITING_TIMEOUT_SECONDS",
                "must be 0 (off) or exceed 60 s, the longest poll hint, or slow pollers lose their place",
            ));
        }
        if env.get("VWR_COLLECT_SECONDS").is_none() {
            // The default, 10 s, stays below a shorter heartbeat timeout (half of it).
            settings.collect_ms = settings.collect_ms.min(settings.active_heartbeat_timeout_ms / 2);
        } else if settings.collect_ms < 2_000 || settings.collect_ms >= settings.active_heartbeat_timeout_ms {
            return Err(invalid(
                "VWR_COLLECT_SECONDS",
                "must be at least 2 and below VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS: pages learn of an admission within a few seconds",
            ));
        }
        Ok(Self {
            keys,
            issuer: env.string("VWR_ENTRY_ISSUER", "vwr"),
            audience: env.string("VWR_ENTRY_AUDIENCE", "vwr-api"),
            settings,
            notice_queue_url: env.get("VWR_NOTICE_QUEUE_URL").map(str::to_owned),
            notice_timeout: Duration::from_millis(env.u64_in("VWR_NOTICE_TIMEOUT_MS", 2000, 100..=30_000)?),
            worker_tick: Duration::from_secs(tick_secs),
            table: env.get("VWR_TABLE").map(str::to_owned),
            registration_cache_ttl: Duration::from_secs(1),
        })
    }

    /// The key source, without which the tier-2 API and worker do not start.
    pub fn required_keys(&self) -> Result<&KeySource, ConfigError> {
        self.keys.as_ref().ok_or_else(|| ConfigError::Missing {
            name: TIER2_KEYS.keys.into(),
            hint: "set VWR_TIER2_KEYS or VWR_TIER2_KEYS_SECRET_ID (`vwr keys generate`)".into(),
        })
    }

    /// The token issuer over `ring`.
    pub fn tokens(&self, ring: EcKeyring) -> EntryTokens {
        EntryTokens::new(ring, self.issuer.clone(), self.audience.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates() {
        let c = Tier2Config::from_env(&Env::default()).unwrap();
        assert!(c.keys.is_none());
        assert_eq!(c.settings.active_ttl_ms, 600_000);
        assert_eq!((c.settings.ghost_ttl_ms, c.settings.silence_after_ms), (1_800_000, 10_000));
        let slow = Tier2Config::from_env(&Env::from_pairs([("VWR_WORKER_TICK_SECONDS", "20")])).unwrap();
        assert_eq!(slow.settings.silence_after_ms, 60_000, "three worker periods");
        let e = Tier2Config::from_env(&Env::from_pairs([("VWR_EVICTED_PLACE_SECONDS", "5")])).unwrap_err();
        assert!(e.to_string().contains("VWR_EVICTED_PLACE_SECONDS"));
        let e = Tier2Config::from_env(&Env::from_pairs([("VWR_WAITING_TIMEOUT_SECONDS", "30")])).unwrap_err();
        assert!(e.to_string().contains("VWR_WAITING_TIMEOUT_SECONDS"));
        assert_eq!((c.settings.waiting_timeout_ms, c.settings.collect_ms), (0, 10_000), "no waiting timeout");
        let on = Tier2Config::from_env(&Env::from_pairs([("VWR_WAITING_TIMEOUT_SECONDS", "150")])).unwrap();
        assert_eq!(on.settings.waiting_timeout_ms, 150_000);
        let short =
            Tier2Config::from_env(&Env::from_pairs([("VWR_ACTIVE_HEARTBEAT_TIMEOUT_SECONDS", "5")])).unwrap();
        assert_eq!(short.settings.collect_ms, 2_500, "the default stays below a short heartbeat timeout");
        for bad in ["1", "60", "61"] {
            let e = Tier2Config::from_env(&Env::from_pairs([("VWR_COLLECT_SECONDS", bad)])).unwrap_err();
            assert!(e.to_string().contains("VWR_COLLECT_SECONDS"), "{bad}");
        }
        let e = Tier2Config::from_env(&Env::from_pairs([("VWR_TIER2_KEYS", "k:AAAA")])).unwrap_err();
        assert!(e.to_string().contains("VWR_TIER2_KEYS"));
        let ring = EcKeyring::generate("k1").unwrap().to_text();
        let c = Tier2Config::from_env(&Env::from_pairs([("VWR_TIER2_KEYS", ring.as_str())])).unwrap();
        assert!(matches!(c.keys, Some(KeySource::Env { .. })));
    }
}
