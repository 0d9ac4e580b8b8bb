//! Reading configuration from the environment with clear, named errors at start-up.

use std::collections::HashMap;
use std::ops::RangeInclusive;

/// A configuration problem, reported before serving anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{name} is required: {hint}")]
    Missing { name: String, hint: String },
    #[error("{name}={value:?} is invalid: {reason}")]
    Invalid { name: String, value: String, reason: String },
}

/// A source of variables (the process environment, or a map in tests).
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// Snapshot of the process environment.
    pub fn from_process() -> Self {
        Self { vars: std::env::vars().collect() }
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self { vars: pairs.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect() }
    }

    pub fn set(&mut self, k: &str, v: &str) {
        self.vars.insert(k.to_owned(), v.to_owned());
    }

    /// The value, with empty strings treated as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(|s| s.trim()).filter(|s| !s.is_empty())
    }

    pub fn required(&self, name: &str, hint: &str) -> Result<&str, ConfigError> {
        self.get(name).ok_or_else(|| ConfigError::Missing { name: name.into(), hint: hint.into() })
    }

    pub fn string(&self, name: &str, default: &str) -> String {
        self.get(name).unwrap_or(default).to_owned()
    }

    /// An integer in `range`, or `default` when unset.
    pub fn u64_in(&self, name: &str, default: u64, range: RangeInclusive<u64>) -> Result<u64, ConfigError> {
        let Some(raw) = self.get(name) else {
            return Ok(default);
        };
        let v: u64 = raw.parse().map_err(|_| ConfigError::Invalid {
            name: name.into(),
            value: raw.into(),
            reason: "not a non-negative integer".into(),
        })?;
        if !range.contains(&v) {
            return Err(ConfigError::Invalid {
                name: name.into(),
                value: raw.into(),
                reason: format!("must be between {} and {}", range.start(), range.end()),
            });
        }
        Ok(v)
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.get(name).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(other) => Err(ConfigError::Invalid {
                name: name.into(),
                value: other.into(),
                reason: "expected true or false".into(),
            }),
        }
    }
}

/// Where a key ring comes from: the environment (local runs, tests) or a Secrets Manager
/// secret (AWS; the Lambdas load it at start, `vwr_lambda::secrets`). The same for both tiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `{keys_var}` (+ `{kid_var}` naming the signing kid).
    Env { text: String, signing_kid: Option<String> },
    /// A Secrets Manager secret id or ARN holding `{"signingKid":…,"keys":{…}}`.
    Secret(String),
}

/// The variables naming one key ring.
#[derive(Debug, Clone, Copy)]
pub struct KeyVars {
    /// The keys in text form, e.g. `VWR_TIER1_KEYS`.
    pub keys: &'static str,
    /// The signing kid, e.g. `VWR_TIER1_SIGNING_KID`.
    pub signing_kid: &'static str,
    /// The secret, e.g. `VWR_TIER1_KEYS_SECRET_ID`.
    pub secret: &'static str,
}

/// The tier-1 key ring (HMAC; tickets and, through the derived edge ring, tier-1 tokens).
pub const TIER1_KEYS: KeyVars = KeyVars {
    keys: "VWR_TIER1_KEYS",
    signing_kid: "VWR_TIER1_SIGNING_KID",
    secret: "VWR_TIER1_KEYS_SECRET_ID",
};

/// The tier-2 key ring (ES256; entry and identity tokens).
pub const TIER2_KEYS: KeyVars = KeyVars {
    keys: "VWR_TIER2_KEYS",
    signing_kid: "VWR_TIER2_SIGNING_KID",
    secret: "VWR_TIER2_KEYS_SECRET_ID",
};

impl KeySource {
    /// Reads the source named by `vars`; `None` when neither is set. Keys given in the
    /// environment are parsed now (as `K`), so a typo fails at start-up.
    pub fn from_env<K: crate::keys::KeyMaterial>(
        env: &Env,
        vars: KeyVars,
    ) -> Result<Option<Self>, ConfigError> {
        match (env.get(vars.keys), env.get(vars.secret)) {
            (Some(_), Some(_)) => Err(ConfigError::Invalid {
                name: vars.keys.into(),
                value: "…".into(),
                reason: format!("set either {} or {}, not both", vars.keys, vars.secret),
            }),
            (Some(text), None) => {
                let signing_kid = env.get(vars.signing_kid).map(str::to_owned);
                crate::keys::KeyRing::<K>::from_text(text, signing_kid.as_deref()).map_err(|e| {
                    ConfigError::Invalid {
                        name: vars.keys.into(), value: "…".into(), reason: e.to_string()
                    }
                })?;
                Ok(Some(Self::Env { text: text.to_owned(), signing_kid }))
            }
            (None, Some(id)) => Ok(Some(Self::Secret(id.to_owned()))),
            (None, None) => Ok(None),
        }
    }

    /// The ring, when the keys are in the environment (`None` for a secret: the Lambda
    /// plumbing loads those).
    pub fn env_ring<K: crate::keys::KeyMaterial>(
        &self,
    ) -> Option<Result<crate::keys::KeyRing<K>, crate::KeyError>> {
        match self {
            Self::Env { text, signing_kid } => {
                Some(crate::keys::KeyRing::from_text(text, signing_kid.as_deref()))
            }
            Self::Secret(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_validates() {
        let env = Env::from_pairs([("A", "5"), ("B", "x"), ("C", " "), ("D", "99"), ("F", "yes")]);
        assert_eq!(env.u64_in("A", 1, 1..=10), Ok(5));
        assert_eq!(env.u64_in("C", 7, 1..=10), Ok(7));
        assert!(env.u64_in("B", 1, 1..=10).unwrap_err().to_string().contains("B=\"x\""));
        assert!(env.u64_in("D", 1, 1..=10).unwrap_err().to_string().contains("between 1 and 10"));
        assert!(env.required("C", "set it").unwrap_err().to_string().contains("C is required"));
        assert_eq!(env.bool("F", false), Ok(true));
        assert!(env.bool("B", false).is_err());
    }
}
