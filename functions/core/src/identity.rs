//! Who is calling, as established upstream (API Gateway authorizers). Library crates read
//! these request extensions; only the Lambda glue creates them from the request context.

/// The subject set by an upstream authorizer (JWT or Lambda authorizer) — the site's own
/// notion of the logged-in user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamUser(pub String);

/// Longest user id accepted anywhere.
pub const MAX_USER_ID_LEN: usize = 256;

/// Label of the tier-2 user id derived from a tier-1 subject.
const TIER1_USER_LABEL: &str = "vwr/tier2-user/v1:";

/// The tier-2 user id of a visitor known by their tier-1 token: a digest of the token's
/// subject (the `requestId`), never the subject itself. The `requestId` is a bearer ticket
/// (it re-mints the tier-1 token), so it must not travel in entry tokens, notices, headers to
/// the site or logs; the digest identifies the visitor and gives nothing away.
pub fn tier1_user_id(subject: &str) -> String {
    use base64::Engine;
    let d = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("{TIER1_USER_LABEL}{subject}").as_bytes(),
    );
    format!("t1.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&d.as_ref()[..18]))
}

/// Checks a user id: 1–256 characters, no control characters or whitespace.
pub fn valid_user_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_USER_ID_LEN && !s.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The value of cookie `name` in a `Cookie` header, without decoding. Never fails on
/// malformed input: odd pairs are skipped; the first match wins.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| k.trim() == name)
        .map(|(_, v)| v.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_parsing_is_forgiving() {
        assert_eq!(cookie("a=1; b=2", "b"), Some("2"));
        assert_eq!(cookie("a=1;b=%ZZ;;=;c", "b"), Some("%ZZ"));
        assert_eq!(cookie("junk", "a"), None);
        assert_eq!(cookie("", "a"), None);
        assert_eq!(cookie("a=1; a=2", "a"), Some("1"));
    }

    #[test]
    fn tier1_user_ids_are_stable_digests() {
        let a = tier1_user_id("v1.k1.abc.def");
        assert_eq!(a, tier1_user_id("v1.k1.abc.def"));
        assert_ne!(a, tier1_user_id("v1.k1.abc.deg"));
        assert!(!a.contains("abc") && a.starts_with("t1.") && valid_user_id(&a), "{a}");
        assert_eq!(a.len(), 27);
    }

    #[test]
    fn user_ids() {
        assert!(valid_user_id("alice"));
        assert!(valid_user_id("v1.k1.abc.def"));
        assert!(!valid_user_id(""));
        assert!(!valid_user_id("a b"));
        assert!(!valid_user_id("a\nb"));
        assert!(!valid_user_id(&"x".repeat(257)));
    }
}
