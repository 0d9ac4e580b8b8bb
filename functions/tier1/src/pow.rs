//! Proof of work before `assign` (docs/abuse.md#proof-of-work): a stateless challenge — an
//! HMAC of the event and a one-minute time bucket under a key derived from the tier-1 ring,
//! so no challenge is ever written — and a solution `nonce` such that SHA-256 of
//! `challenge:nonce` starts with `difficulty` zero bits. A challenge is good for its minute and
//! the next; the caller bounds replays of one solution (ADR 0019).
//!
//! Challenge form: `{kid}.{bucket}.{mac}` (`mac` = first 12 bytes of
//! HMAC-SHA256(key, "vwr/pow/v1:{eventId}:{bucket}"), base64url).

use aws_lc_rs::{constant_time, digest, hmac};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use vwr_core::EventId;
use vwr_core::keys::HmacKeyring;

/// Label from which the challenge key ring is derived.
pub const POW_KEY_LABEL: &str = "vwr/pow/v1";
/// Length of a time bucket: a challenge is accepted in its bucket and the next.
pub const BUCKET_SECS: u64 = 60;
/// Highest difficulty an event may ask (28 bits ≈ 2.7 × 10⁸ hashes: minutes on a phone).
pub const MAX_DIFFICULTY: u32 = 28;
/// Longest nonce accepted.
pub const MAX_NONCE_LEN: usize = 64;
const MAC_BYTES: usize = 12;

/// Why a solution was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PowError {
    #[error("the challenge is malformed")]
    Malformed,
    #[error("the challenge was not issued for this event")]
    BadChallenge,
    #[error("the challenge has expired")]
    Expired,
    #[error("the solution does not meet the difficulty")]
    TooEasy,
}

/// Issues and checks challenges.
#[derive(Debug, Clone)]
pub struct PowIssuer {
    ring: HmacKeyring,
}

/// Leading zero bits of `bytes`.
pub fn leading_zero_bits(bytes: &[u8]) -> u32 {
    let mut n = 0;
    for b in bytes {
        if *b == 0 {
            n += 8;
        } else {
            return n + b.leading_zeros();
        }
    }
    n
}

/// Leading zero bits of SHA-256(`challenge:nonce`): what a solution must maximise.
pub fn work(challenge: &str, nonce: &str) -> u32 {
    let d = digest::digest(&digest::SHA256, format!("{challenge}:{nonce}").as_bytes());
    leading_zero_bits(d.as_ref())
}

impl PowIssuer {
    /// `tier1_ring` is the tier-1 master ring; the challenge keys are derived from it.
    pub fn new(tier1_ring: &HmacKeyring) -> Self {
        Self { ring: tier1_ring.derive(POW_KEY_LABEL) }
    }

    fn mac(key: &[u8], event: &EventId, bucket: u64) -> String {
        let k = hmac::Key::new(hmac::HMAC_SHA256, key);
        let tag = hmac::sign(&k, format!("vwr/pow/v1:{event}:{bucket}").as_bytes());
        URL_SAFE_NO_PAD.encode(&tag.as_ref()[..MAC_BYTES])
    }

    /// The challenge of `event` for the bucket of `now`.
    pub fn challenge(&self, event: &EventId, now: u64) -> String {
        let bucket = now / BUCKET_SECS;
        let kid = self.ring.signing_kid();
        format!("{kid}.{bucket}.{}", Self::mac(self.ring.signing_key(), event, bucket))
    }

    /// Checks a solution for `event` at `now`.
    pub fn verify(
        &self,
        event: &EventId,
        now: u64,
        challenge: &str,
        nonce: &str,
        difficulty: u32,
    ) -> Result<(), PowError> {
        if challenge.len() > 128
            || nonce.is_empty()
            || nonce.len() > MAX_NONCE_LEN
            || !nonce.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(PowError::Malformed);
        }
        let mut parts = challenge.split('.');
        let (Some(kid), Some(bucket), Some(mac), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(PowError::Malformed);
        };
        let bucket: u64 = bucket.parse().map_err(|_| PowError::Malformed)?;
        let key = self.ring.key(kid).ok_or(PowError::BadChallenge)?;
        let want = Self::mac(key, event, bucket);
        constant_time::verify_slices_are_equal(want.as_bytes(), mac.as_bytes())
            .map_err(|_| PowError::BadChallenge)?;
        let current = now / BUCKET_SECS;
        if bucket > current || current - bucket > 1 {
            return Err(PowError::Expired);
        }
        if work(challenge, nonce) < difficulty {
            return Err(PowError::TooEasy);
        }
        Ok(())
    }
}

/// The moment (unix seconds) from which no solution of `challenge` is accepted any more: the end
/// of the minute after its own. `None` for a malformed challenge.
pub fn valid_until(challenge: &str) -> Option<u64> {
    let bucket: u64 = challenge.split('.').nth(1)?.parse().ok()?;
    bucket.checked_add(2)?.checked_mul(BUCKET_SECS)
}

/// Finds a nonce for `challenge` at `difficulty` (what the page's Web Worker does; tests,
/// benchmarks and the load test's honest visitors use it).
pub fn solve(challenge: &str, difficulty: u32) -> String {
    solve_from(challenge, difficulty, "")
}

/// [`solve`] with nonces `prefix` + a hex counter. Everyone in a minute gets the same
/// challenge and a server takes a solution once, so each solver needs its own prefix (the page
/// draws 12 random hex digits); the prefix must keep the nonce within [`MAX_NONCE_LEN`] of
/// `A-Z a-z 0-9 - _`.
pub fn solve_from(challenge: &str, difficulty: u32, prefix: &str) -> String {
    let mut n: u64 = 0;
    loop {
        let nonce = format!("{prefix}{n:x}");
        if work(challenge, &nonce) >= difficulty {
            return nonce;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> EventId {
        EventId::parse(s).unwrap()
    }

    #[test]
    fn solvers_with_their_own_prefix_find_different_nonces() {
        let a = solve_from("k1.1.x", 8, "0123456789ab");
        let b = solve_from("k1.1.x", 8, "ba9876543210");
        assert!(a.starts_with("0123456789ab") && b.starts_with("ba9876543210"));
        assert!(work("k1.1.x", &a) >= 8 && work("k1.1.x", &b) >= 8);
        assert_eq!(solve("k1.1.x", 8), solve_from("k1.1.x", 8, ""));
    }

    #[test]
    fn a_solved_challenge_passes_and_nothing_else_does() {
        let ring = HmacKeyring::generate("k1").unwrap();
        let pow = PowIssuer::new(&ring);
        let now = 1_800_000_000;
        let c = pow.challenge(&ev("e1"), now);
        let nonce = solve(&c, 12);
        assert!(work(&c, &nonce) >= 12);
        assert_eq!(pow.verify(&ev("e1"), now, &c, &nonce, 12), Ok(()));
        assert_eq!(pow.verify(&ev("e1"), now + 60, &c, &nonce, 12), Ok(()), "good for the next minute");
        assert_eq!(pow.verify(&ev("e1"), now + 120, &c, &nonce, 12), Err(PowError::Expired));
        let until = valid_until(&c).unwrap();
        assert_eq!(pow.verify(&ev("e1"), until - 1, &c, &nonce, 12), Ok(()));
        assert_eq!(pow.verify(&ev("e1"), until, &c, &nonce, 12), Err(PowError::Expired));
        assert_eq!(valid_until("k1.x.y"), None);
        assert_eq!(pow.verify(&ev("e2"), now, &c, &nonce, 12), Err(PowError::BadChallenge));
        let harder = (12..40).find(|d| work(&c, &nonce) < *d).unwrap();
        assert_eq!(pow.verify(&ev("e1"), now, &c, &nonce, harder), Err(PowError::TooEasy));
        let other = PowIssuer::new(&HmacKeyring::generate("k1").unwrap());
        assert_eq!(other.verify(&ev("e1"), now, &c, &nonce, 12), Err(PowError::BadChallenge));
        let future = pow.challenge(&ev("e1"), now + 60);
        assert_eq!(pow.verify(&ev("e1"), now, &future, &solve(&future, 4), 4), Err(PowError::Expired));
        for (c2, n2) in [("x", "1"), (c.as_str(), ""), (c.as_str(), "a b"), ("k1.x.y", "1"), ("a.b.c.d", "1")]
        {
            assert_eq!(pow.verify(&ev("e1"), now, c2, n2, 0), Err(PowError::Malformed), "{c2} {n2}");
        }
    }

    #[test]
    fn zero_bits_are_counted_across_bytes() {
        assert_eq!(leading_zero_bits(&[0, 0, 0x10, 0xff]), 19);
        assert_eq!(leading_zero_bits(&[0x80]), 0);
        assert_eq!(leading_zero_bits(&[0, 0]), 16);
    }
}
