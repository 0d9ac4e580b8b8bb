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

/// The tier-1 link keys in text form (tier 2, locally): the edge and place-proof rings.
pub const TIER1_EDGE_KEYS: &str = "VWR_TIER1_EDGE_KEYS";
pub const TIER1_PLACE_KEYS: &str = "VWR_TIER1_PLACE_KEYS";
/// The same from Secrets Manager, JSON `{"signingKid", "edge", "place"}`.
pub const TIER1_LINK_SECRET: &str = "VWR_TIER1_LINK_SECRET_ID";

/// Where tier 2 gets the tier-1 link keys (docs/tokens.md#place-proofs): the derived edge and
/// place-proof rings, never the tier-1 master keys.
#[derive(Debug, Clone)]
pub enum LinkSource {
    /// `VWR_TIER1_EDGE_KEYS` + `VWR_TIER1_PLACE_KEYS` (+ `VWR_TIER1_SIGNING_KID`), checked.
    Env { edge: crate::keys::HmacKeyring, place: crate::keys::HmacKeyring },
    /// A Secrets Manager secret id or ARN (`VWR_TIER1_LINK_SECRET_ID`).
    Secret(String),
}

impl LinkSource {
    /// Reads the link keys of a tier-2 process; `None` when none are configured. The tier-1
    /// master keys are refused outright: tier 2 only verifies tier-1 tokens and their place
    /// proofs, and must never be able to sign tickets or proofs (review finding F12).
    pub fn from_env(env: &Env) -> Result<Option<Self>, ConfigError> {
        let invalid = |name: &str, reason: String| ConfigError::Invalid {
            name: name.into(),
            value: "…".into(),
            reason,
        };
        for master in [TIER1_KEYS.keys, TIER1_KEYS.secret] {
            if env.get(master).is_some() {
                return Err(invalid(
                    master,
                    format!(
                        "tier 2 never takes the tier-1 master keys: give it {TIER1_LINK_SECRET}, or \
                         {TIER1_EDGE_KEYS} and {TIER1_PLACE_KEYS} (`vwr keys generate` prints them)"
                    ),
                ));
            }
        }
        let (edge, place, secret) =
            (env.get(TIER1_EDGE_KEYS), env.get(TIER1_PLACE_KEYS), env.get(TIER1_LINK_SECRET));
        match (edge, place, secret) {
            (None, None, None) => Ok(None),
            (None, None, Some(id)) => Ok(Some(Self::Secret(id.to_owned()))),
            (Some(_) | None, Some(_) | None, Some(_)) => Err(invalid(
                TIER1_LINK_SECRET,
                format!(
                    "set either {TIER1_LINK_SECRET} or {TIER1_EDGE_KEYS} and {TIER1_PLACE_KEYS}, not both"
                ),
            )),
            (Some(edge), Some(place), None) => {
                let kid = env.get(TIER1_KEYS.signing_kid);
                let edge = crate::keys::HmacKeyring::from_text(edge, kid)
                    .map_err(|e| invalid(TIER1_EDGE_KEYS, e.to_string()))?;
                let place = crate::keys::HmacKeyring::from_text(place, kid)
                    .map_err(|e| invalid(TIER1_PLACE_KEYS, e.to_string()))?;
                crate::token::Tier1Link::checked(edge.clone(), place.clone(), "", "")
                    .map_err(|e| invalid(TIER1_PLACE_KEYS, e.to_string()))?;
                Ok(Some(Self::Env { edge, place }))
            }
            (Some(_), None, None) | (None, Some(_), None) => Err(invalid(
                if edge.is_some() { TIER1_PLACE_KEYS } else { TIER1_EDGE_KEYS },
                format!(
                    "{TIER1_EDGE_KEYS} and {TIER1_PLACE_KEYS} go together: a tier-1 token counts for tier 2 only with its place proof"
                ),
            )),
        }
    }
}

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

    /// Review finding F12: tier 2 gets the derived link keys and refuses the master keys, with
    /// a message naming the variable.
    #[test]
    fn link_keys_are_checked_at_start() {
        let master = crate::keys::HmacKeyring::generate("k1").unwrap();
        let (edge, place) = (master.edge_ring().to_text(), master.place_ring().to_text());
        let ok = Env::from_pairs([(TIER1_EDGE_KEYS, edge.as_str()), (TIER1_PLACE_KEYS, place.as_str())]);
        assert!(matches!(LinkSource::from_env(&ok), Ok(Some(LinkSource::Env { .. }))));
        assert!(matches!(LinkSource::from_env(&Env::default()), Ok(None)));
        let secret = Env::from_pairs([(TIER1_LINK_SECRET, "arn:aws:secretsmanager:x")]);
        assert!(matches!(LinkSource::from_env(&secret), Ok(Some(LinkSource::Secret(_)))));
        let refused = |pairs: &[(&str, &str)], name: &str| {
            let e = LinkSource::from_env(&Env::from_pairs(pairs.iter().copied())).unwrap_err().to_string();
            assert!(e.starts_with(name), "{name}: {e}");
        };
        let master_text = master.to_text();
        refused(&[("VWR_TIER1_KEYS", master_text.as_str())], "VWR_TIER1_KEYS");
        refused(&[("VWR_TIER1_KEYS_SECRET_ID", "arn:x")], "VWR_TIER1_KEYS_SECRET_ID");
        refused(&[(TIER1_EDGE_KEYS, edge.as_str())], TIER1_PLACE_KEYS);
        refused(&[(TIER1_PLACE_KEYS, place.as_str())], TIER1_EDGE_KEYS);
        refused(&[(TIER1_EDGE_KEYS, edge.as_str()), (TIER1_PLACE_KEYS, "k1:AAAA")], TIER1_PLACE_KEYS);
        let other = crate::keys::HmacKeyring::generate("k2").unwrap().place_ring().to_text();
        refused(&[(TIER1_EDGE_KEYS, edge.as_str()), (TIER1_PLACE_KEYS, other.as_str())], TIER1_PLACE_KEYS);
        refused(
            &[(TIER1_EDGE_KEYS, edge.as_str()), (TIER1_PLACE_KEYS, place.as_str()), (TIER1_LINK_SECRET, "x")],
            TIER1_LINK_SECRET,
        );
        // The JSON of the secret reads back to the same rings.
        let link = crate::token::Tier1Link::new(master.edge_ring(), master.place_ring(), "vwr", "vwr-edge");
        let (e, p) = crate::token::Tier1Link::rings_from_json(&link.to_json()).unwrap();
        assert_eq!((e.to_text(), p.to_text()), (edge, place));
        assert!(crate::token::Tier1Link::rings_from_json(r#"{"edge":{},"place":{},"keys":{}}"#).is_err());
    }

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
