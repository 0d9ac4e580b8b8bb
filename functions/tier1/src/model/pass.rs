//! Passes (docs/passes.md): signed, short-lived stand-ins for a tier-1 token that staff,
//! synthetic monitors and payment callbacks use to get through the edge of a gated event. The
//! event item keeps each pass's record (never the pass itself), so creating and revoking one
//! is a lifecycle write with its audit entry, and the edge learns revocations from these
//! records (`revoked` of the edge configuration, docs/adr/0027-passes.md).

use serde::{Deserialize, Serialize};

/// Longest life of a pass: a revoked pass stays in the edge configuration until it would have
/// expired, and that entry has 1 KB for everything (edge/README.md).
pub const MAX_PASS_TTL_SECS: u64 = 12 * 3600;
/// Shortest life of a pass.
pub const MIN_PASS_TTL_SECS: u64 = 60;
/// Passes of one event that may be unexpired and unrevoked at once: a revoked pass frees its
/// slot, so a leaked monitor or callback pass can always be revoked and issued again.
pub const MAX_LIVE_PASSES: usize = 20;
/// Records of one event's unexpired passes, revoked ones included (a revoked pass stays
/// listed for the edge until it would have expired): what bounds the list.
pub const MAX_PASS_RECORDS: usize = 2 * MAX_LIVE_PASSES;
/// Longest label, in characters.
pub const MAX_PASS_LABEL_CHARS: usize = 64;
/// Characters of a pass id (its token's `jti`): random URL-safe base64 (72 bits).
pub const PASS_ID_LEN: usize = 12;

/// The record of a pass on its event's item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pass {
    /// The pass token's `jti` (what the edge's revocation list names).
    pub id: String,
    pub label: String,
    pub created_at: u64,
    pub expires_at: u64,
    /// Who created it (the admin caller).
    pub created_by: String,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<u64>,
}

impl Pass {
    /// Still before its expiry at `now`.
    pub fn live(&self, now: u64) -> bool {
        now < self.expires_at
    }
}

/// Why a pass cannot be created or revoked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PassError {
    #[error("ttlSeconds must be from {MIN_PASS_TTL_SECS} to {MAX_PASS_TTL_SECS} (12 hours)")]
    BadTtl,
    #[error("label must be 1 to {MAX_PASS_LABEL_CHARS} characters of plain text")]
    BadLabel,
    #[error("this event has {MAX_LIVE_PASSES} unexpired, unrevoked passes already: revoke one first")]
    TooMany,
    #[error(
        "this event has {MAX_PASS_RECORDS} unexpired passes counting the revoked ones (listed until they would have expired, at most 12 hours): wait until one expires"
    )]
    TooManyRecords,
    #[error("no such pass for this event")]
    NotFound,
    #[error("this pass has expired; nothing to revoke")]
    Expired,
}

/// Checks a new pass's label and life.
pub fn validate_pass(label: &str, ttl_secs: u64) -> Result<(), PassError> {
    if !(MIN_PASS_TTL_SECS..=MAX_PASS_TTL_SECS).contains(&ttl_secs) {
        return Err(PassError::BadTtl);
    }
    let n = label.chars().count();
    if n == 0 || n > MAX_PASS_LABEL_CHARS || !super::text::is_plain(label, false) {
        return Err(PassError::BadLabel);
    }
    Ok(())
}

/// Adds `pass` to `passes`, dropping those expired at `now` (the list stays bounded). Only
/// unrevoked passes count against [`MAX_LIVE_PASSES`].
pub fn add_pass(passes: &mut Vec<Pass>, pass: Pass, now: u64) -> Result<(), PassError> {
    passes.retain(|p| p.live(now));
    if passes.iter().filter(|p| p.revoked_at.is_none()).count() >= MAX_LIVE_PASSES {
        return Err(PassError::TooMany);
    }
    if passes.len() >= MAX_PASS_RECORDS {
        return Err(PassError::TooManyRecords);
    }
    passes.push(pass);
    Ok(())
}

/// Marks pass `id` revoked at `now` (a second revocation keeps the first time).
pub fn revoke_pass(passes: &mut Vec<Pass>, id: &str, now: u64) -> Result<(), PassError> {
    let p = passes.iter_mut().find(|p| p.id == id).ok_or(PassError::NotFound)?;
    if !p.live(now) {
        return Err(PassError::Expired);
    }
    p.revoked_at.get_or_insert(now);
    passes.retain(|p| p.live(now));
    Ok(())
}

/// The revoked passes still unexpired at `now`: id → expiry (what the edge must refuse).
pub fn revoked_live(passes: &[Pass], now: u64) -> impl Iterator<Item = (&str, u64)> {
    passes
        .iter()
        .filter(move |p| p.revoked_at.is_some() && p.live(now))
        .map(|p| (p.id.as_str(), p.expires_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(id: &str, expires_at: u64) -> Pass {
        Pass {
            id: id.into(),
            label: "l".into(),
            created_at: 0,
            expires_at,
            created_by: "t".into(),
            revoked_at: None,
        }
    }

    #[test]
    fn labels_and_lives_are_checked() {
        assert_eq!(validate_pass("monitor", 7200), Ok(()));
        assert_eq!(validate_pass("monitor", 59), Err(PassError::BadTtl));
        assert_eq!(validate_pass("monitor", MAX_PASS_TTL_SECS + 1), Err(PassError::BadTtl));
        assert_eq!(validate_pass("", 600), Err(PassError::BadLabel));
        assert_eq!(validate_pass("a\nb", 600), Err(PassError::BadLabel));
        assert_eq!(validate_pass(&"x".repeat(65), 600), Err(PassError::BadLabel));
        assert_eq!(validate_pass("mon\u{202E}itor", 600), Err(PassError::BadLabel), "bidi override");
        assert_eq!(validate_pass("\u{200B}", 600), Err(PassError::BadLabel), "an invisible label");
    }

    #[test]
    fn a_revoked_pass_frees_its_slot() {
        // The review's case: 20 passes, one leaks and is revoked; the 21st (its replacement)
        // was refused with 409 until the revoked one expired, up to 12 hours later.
        let mut list: Vec<Pass> = (0..MAX_LIVE_PASSES).map(|i| pass(&format!("p{i}"), 1000)).collect();
        assert_eq!(add_pass(&mut list, pass("new", 1000), 10), Err(PassError::TooMany));
        assert_eq!(revoke_pass(&mut list, "p3", 10), Ok(()));
        assert_eq!(add_pass(&mut list, pass("again", 1000), 11), Ok(()));
        assert_eq!(revoked_live(&list, 11).collect::<Vec<_>>(), [("p3", 1000)], "still refused at the edge");
        // Revocations are never refused; new passes stop once the records reach their bound.
        for i in 0..MAX_LIVE_PASSES - 1 {
            let id = format!("p{}", if i >= 3 { i + 1 } else { i });
            assert_eq!(revoke_pass(&mut list, &id, 12), Ok(()));
            assert_eq!(add_pass(&mut list, pass(&format!("n{i}"), 1000), 12), Ok(()));
        }
        assert_eq!(list.len(), MAX_PASS_RECORDS);
        assert_eq!(revoke_pass(&mut list, "again", 13), Ok(()));
        assert_eq!(add_pass(&mut list, pass("x", 1000), 13), Err(PassError::TooManyRecords));
        assert_eq!(add_pass(&mut list, pass("x", 2000), 1000), Ok(()), "once they expire, room again");
    }

    #[test]
    fn the_list_is_bounded_and_expired_passes_go() {
        let mut list: Vec<Pass> = (0..MAX_LIVE_PASSES).map(|i| pass(&format!("p{i}"), 100)).collect();
        assert_eq!(add_pass(&mut list, pass("new", 200), 50), Err(PassError::TooMany));
        assert_eq!(add_pass(&mut list, pass("new", 200), 100), Ok(()));
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn revoking_marks_once_and_lists_until_expiry() {
        let mut list = vec![pass("a", 100), pass("b", 100)];
        assert_eq!(revoke_pass(&mut list, "a", 10), Ok(()));
        assert_eq!(revoke_pass(&mut list, "a", 20), Ok(()));
        assert_eq!(list[0].revoked_at, Some(10));
        assert_eq!(revoke_pass(&mut list, "zz", 20), Err(PassError::NotFound));
        assert_eq!(revoked_live(&list, 99).collect::<Vec<_>>(), [("a", 100)]);
        assert_eq!(revoked_live(&list, 100).count(), 0);
        assert_eq!(revoke_pass(&mut list, "b", 100), Err(PassError::Expired));
    }
}
