//! Event identifiers: 1–64 characters of `[A-Za-z0-9_-]` (docs/api.md#identifiers).

use std::fmt;

use serde::Serialize;

/// Maximum length of an event id.
pub const MAX_EVENT_ID_LEN: usize = 64;

/// A validated event id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EventId(String);

/// Why a string is not an event id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventIdError {
    #[error("event id is empty")]
    Empty,
    #[error("event id is longer than {MAX_EVENT_ID_LEN} characters")]
    TooLong,
    #[error("event id may contain only A-Z, a-z, 0-9, '_' and '-'")]
    BadCharacter,
}

impl EventId {
    /// Validates `s` as an event id.
    pub fn parse(s: &str) -> Result<Self, EventIdError> {
        if s.is_empty() {
            return Err(EventIdError::Empty);
        }
        if s.len() > MAX_EVENT_ID_LEN {
            return Err(EventIdError::TooLong);
        }
        if !s.bytes().all(is_event_id_byte) {
            return Err(EventIdError::BadCharacter);
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `b` may appear in an event id.
pub fn is_event_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for EventId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_ids() {
        for ok in ["e1", "A-b_9", &"x".repeat(64)] {
            assert!(EventId::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_invalid_ids() {
        assert_eq!(EventId::parse(""), Err(EventIdError::Empty));
        assert_eq!(EventId::parse(&"x".repeat(65)), Err(EventIdError::TooLong));
        for bad in ["a b", "a/b", "a%2F", "é", "a.b", "{e}", "a:b"] {
            assert_eq!(EventId::parse(bad), Err(EventIdError::BadCharacter), "{bad}");
        }
    }
}
