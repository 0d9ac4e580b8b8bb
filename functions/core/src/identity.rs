//! Who is calling, as established upstream (API Gateway authorizers). Library crates read
//! these request extensions; only the Lambda glue creates them from the request context.
//! And the token cookies that identify a visitor to both tiers: [`cookie`] reads one from the
//! `Cookie` header, [`set_cookie`] and [`cleared_cookie`] write the `Set-Cookie` values.

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

/// The attributes of the waiting room's token cookies — the tier-1 cookie `vwr_t1_{eventId}`
/// and the tier-2 identity cookie `vwr_t2_{eventId}` (docs/tokens.md): sent back on every path
/// of the site, over HTTPS only, never to scripts, and on top-level navigations from other
/// sites. Written by [`set_cookie`] and [`cleared_cookie`] only.
const COOKIE_ATTRIBUTES: &str = "Path=/; Secure; HttpOnly; SameSite=Lax";

/// The `Set-Cookie` value of the token cookie `name` holding `value` for `max_age` seconds;
/// [`cookie`] reads it back from the `Cookie` header. Both tiers write their cookies with it.
pub fn set_cookie(name: &str, value: &str, max_age: u64) -> String {
    format!("{name}={value}; Max-Age={max_age}; {COOKIE_ATTRIBUTES}")
}

/// The `Set-Cookie` value that removes the token cookie `name` (`release`, `leave`).
pub fn cleared_cookie(name: &str) -> String {
    set_cookie(name, "", 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attributes of both tiers' cookies, exactly as docs/tokens.md and docs/openapi.yaml
    /// give them.
    #[test]
    fn token_cookies_keep_their_wire_format() {
        assert_eq!(
            set_cookie("vwr_t1_e1", "h.p.s", 600),
            "vwr_t1_e1=h.p.s; Max-Age=600; Path=/; Secure; HttpOnly; SameSite=Lax"
        );
        assert_eq!(
            cleared_cookie("vwr_t1_e1"),
            "vwr_t1_e1=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax"
        );
        assert_eq!(
            set_cookie("vwr_t2_e1", "h.p.s", 210),
            "vwr_t2_e1=h.p.s; Max-Age=210; Path=/; Secure; HttpOnly; SameSite=Lax"
        );
        // What the writer writes, the reader reads.
        let set = set_cookie("vwr_t1_e1", "h.p.s", 600);
        let pair = set.split(';').next().unwrap_or_default();
        assert_eq!(cookie(&format!("other=1; {pair}"), "vwr_t1_e1"), Some("h.p.s"));
    }

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
