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
