//! Start-up configuration of tier 1, read from the environment and checked before serving
//! (docs/settings.md). Loading keys from Secrets Manager is the Lambda plumbing's job
//! (`vwr_lambda::secrets`); this module only parses.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `VWR_TIER1_KEYS` | — | `kid:base64,kid2:base64` HMAC keys (local / tests) |
//! | `VWR_TIER1_SIGNING_KID` | first key | which kid signs |
//! | `VWR_TIER1_KEYS_SECRET_ID` | — | Secrets Manager secret with `{"signingKid":…,"keys":{…}}` (AWS) |
//! | `VWR_TABLE` | `vwr-tier1` | DynamoDB table |
//! | `VWR_TOKEN_ISSUER` / `VWR_TOKEN_AUDIENCE` | `vwr` / `vwr-edge` | `iss` / `aud` claims |
//! | `VWR_TICKET_TTL_SECONDS` | 86400 | how long a `requestId` stays valid, from the event's open if issued before it (60–604800) |
//! | `VWR_COOKIE_PREFIX` | `vwr_t1_` | tier-1 cookie is `{prefix}{eventId}` |
//! | `VWR_CACHE_TTL_MS` | 1000 | event/serving-counter cache per instance (0–1000) |
//! | `VWR_ADVANCER_TICK_SECONDS` | 1 | how often the advancer looks for due steps |
//! | `VWR_EDGE_KVS_ARN` | — | admin/advancer: CloudFront KeyValueStore whose `config.events` lists the active events |
//! | `VWR_ORIGIN_SECRET_ID` | — | APIs behind CloudFront: Secrets Manager secret whose string CloudFront sends as `x-vwr-origin-secret`; requests without it get 403 (`VWR_ORIGIN_SECRET` gives the value itself, for local runs) |
//! | `VWR_HEALTH_ALARMS` | — | advancer: CloudWatch alarms that hold the advancer while in ALARM: `AlarmName` (every event) or `eventId=AlarmName`, comma-separated (docs/outflow.md#health-gate) |
//! | `VWR_ENQUEUE_JWKS` | — | API/admin: the site's public keys (JWKS, ES256) for enqueue tokens: one place per account (docs/abuse.md#one-place-per-account) |
//! | `VWR_TIER2_JWKS` / `VWR_ENTRY_ISSUER` | — / `vwr` | API: tier 2's public keys (its JWKS) and issuer, to read the holds tier 2 signs into visitors' identity cookies: a visitor tier 2 holds keeps their tier-1 session however long the tier-2 wait (docs/invariants.md#27) |
//! | `VWR_ADMIN_PRINCIPALS` | — | admin routes: comma-separated IAM principal ARN patterns (`*` wildcard) allowed to administer; empty = any IAM-authenticated principal |
//! | `VWR_ADMIN_GROUPS_CLAIM` | `cognito:groups` | admin routes (both tiers' Lambdas): the JWT claim listing a console user's groups; `vwr-viewer`, `vwr-operator`, `vwr-admin` give the role (docs/console.md#roles) |

use std::time::Duration;

use vwr_core::HmacKeyring;
pub use vwr_core::config::TIER1_KEYS;
use vwr_core::config::{ConfigError, Env, KeySource};
use vwr_core::keys::HmacKey;
use vwr_core::token::Tier1Tokens;

use crate::service::Tier1Settings;

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
    pub health_alarms: HealthAlarms,
    /// The site's enqueue-token public keys (`VWR_ENQUEUE_JWKS`), checked at start-up.
    pub enqueue: Option<crate::enqueue::EnqueueVerifier>,
    /// Tier 2's public keys and issuer (`VWR_TIER2_JWKS`, `VWR_ENTRY_ISSUER`): its holds.
    pub tier2_holds: Option<vwr_core::hold::HoldVerifier>,
}

/// CloudWatch alarms that hold the advancer (`VWR_HEALTH_ALARMS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthAlarms {
    /// Alarms that hold every event.
    pub global: Vec<String>,
    /// `(eventId, alarm)`: alarms that hold one event.
    pub per_event: Vec<(vwr_core::EventId, String)>,
}

/// CloudWatch alarm names: 1–255 printable characters, no commas or `=` (the list's syntax).
fn valid_alarm_name(s: &str) -> bool {
    (1..=255).contains(&s.len()) && !s.chars().any(|c| c.is_control() || c == ',' || c == '=')
}

impl HealthAlarms {
    /// Parses `Alarm,e1=OtherAlarm`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut out = Self::default();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match entry.split_once('=') {
                Some((event, alarm)) => {
                    let event =
                        vwr_core::EventId::parse(event.trim()).map_err(|e| format!("{entry:?}: {e}"))?;
                    let alarm = alarm.trim();
                    if !valid_alarm_name(alarm) {
                        return Err(format!("{entry:?}: not an alarm name"));
                    }
                    out.per_event.push((event, alarm.to_owned()));
                }
                None if valid_alarm_name(entry) => out.global.push(entry.to_owned()),
                None => return Err(format!("{entry:?}: not an alarm name")),
            }
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.per_event.is_empty()
    }

    /// Every alarm named, once.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> =
            self.global.iter().cloned().chain(self.per_event.iter().map(|(_, a)| a.clone())).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The alarms that hold `event`.
    pub fn for_event<'a>(&'a self, event: &'a vwr_core::EventId) -> impl Iterator<Item = &'a str> + 'a {
        self.global
            .iter()
            .map(String::as_str)
            .chain(self.per_event.iter().filter(move |(e, _)| e == event).map(|(_, a)| a.as_str()))
    }
}

impl Tier1Config {
    /// Reads and validates everything; the error names the variable at fault.
    pub fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let keys = KeySource::from_env::<HmacKey>(env, TIER1_KEYS)?.ok_or_else(|| ConfigError::Missing {
            name: "VWR_TIER1_KEYS".into(),
            hint: "set VWR_TIER1_KEYS (from `vwr keys generate`) or VWR_TIER1_KEYS_SECRET_ID".into(),
        })?;
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
                fixed_seed: None,
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
            enqueue: match env.get("VWR_ENQUEUE_JWKS") {
                None | Some("") => None,
                Some(json) => Some(crate::enqueue::EnqueueVerifier::from_jwks(json).map_err(|e| {
                    ConfigError::Invalid {
                        name: "VWR_ENQUEUE_JWKS".into(),
                        value: "(the JWKS)".into(),
                        reason: format!("{e}; expected the site's JWKS with EC P-256 keys that have a kid"),
                    }
                })?),
            },
            tier2_holds: match env.get("VWR_TIER2_JWKS") {
                None | Some("") => None,
                Some(json) => {
                    let issuer = env.string("VWR_ENTRY_ISSUER", "vwr");
                    Some(vwr_core::hold::HoldVerifier::from_jwks(json, &issuer).map_err(|e| {
                        ConfigError::Invalid {
                            name: "VWR_TIER2_JWKS".into(),
                            value: "(the JWKS)".into(),
                            reason: format!(
                                "{e}; expected tier 2's JWKS (GET /api/queue/.well-known/jwks.json)"
                            ),
                        }
                    })?)
                }
            },
            health_alarms: HealthAlarms::parse(env.get("VWR_HEALTH_ALARMS").unwrap_or("")).map_err(
                |reason| ConfigError::Invalid {
                    name: "VWR_HEALTH_ALARMS".into(),
                    value: env.get("VWR_HEALTH_ALARMS").unwrap_or("").to_owned(),
                    reason: format!("{reason}; expected AlarmName or eventId=AlarmName, comma-separated"),
                },
            )?,
        })
    }

    /// The token issuer over `ring` (the master key ring, wherever it was loaded from).
    pub fn tokens(&self, ring: HmacKeyring) -> Tier1Tokens {
        Tier1Tokens::new(ring, self.issuer.clone(), self.audience.clone())
    }
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
        let c = Tier1Config::from_env(&Env::from_pairs([
            ("VWR_TIER1_KEYS", k.as_str()),
            ("VWR_HEALTH_ALARMS", "origin-5xx, e1=e1-checkout-errors"),
        ]))
        .unwrap();
        let e1 = vwr_core::EventId::parse("e1").unwrap();
        let e2 = vwr_core::EventId::parse("e2").unwrap();
        assert_eq!(c.health_alarms.for_event(&e1).collect::<Vec<_>>(), ["origin-5xx", "e1-checkout-errors"]);
        assert_eq!(c.health_alarms.for_event(&e2).collect::<Vec<_>>(), ["origin-5xx"]);
        let e = Tier1Config::from_env(&Env::from_pairs([
            ("VWR_TIER1_KEYS", k.as_str()),
            ("VWR_HEALTH_ALARMS", "bad id!=x"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("VWR_HEALTH_ALARMS"), "{e}");
    }
}
