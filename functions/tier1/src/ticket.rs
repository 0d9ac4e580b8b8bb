//! Tickets: the opaque `requestId` that `assign` hands out. A ticket carries the event, the
//! position and the issue time, signed with a key derived from the tier-1 key ring, so `check`
//! needs no per-user read and nobody can forge or alter a place in line.
//!
//! Form: `v1.<kid>.<payload>.<mac>` where `payload` is base64url of `eventId:place:issuedAt`
//! and `mac` is the first 16 bytes of HMAC-SHA256 over `v1.<kid>.<payload>`, base64url.
//! `place` is a join index `j` (decimal) or a pre-queue index `q{i}`; positions are computed
//! from it (docs/lifecycle.md#pre-queue-and-the-randomized-open).

use aws_lc_rs::{constant_time, hmac};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use vwr_core::EventId;
use vwr_core::keys::{HmacKeyring, validate_kid};

/// Label from which the ticket key ring is derived.
pub const TICKET_KEY_LABEL: &str = "vwr/ticket/v1";
/// Label from which the request-secret key ring is derived (proof of possession).
pub const SECRET_KEY_LABEL: &str = "vwr/request-secret/v1";
/// Bytes of a request secret (before base64url).
const SECRET_BYTES: usize = 16;
/// Longest ticket accepted (far above any real one; a guard against huge inputs).
pub const MAX_TICKET_LEN: usize = 256;
const MAC_BYTES: usize = 16;

/// The content of a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub event: EventId,
    pub place: Place,
    pub issued_at: u64,
}

/// Where a ticket stands: both indices start at 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// The j-th regular join: position `P + j`, P the sealed pre-queue size (0 without one).
    Join(u64),
    /// The i-th pre-queue join (interleaved over the shards): its position is drawn at the
    /// open (docs/fairness.md).
    Pre(u64),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Join(j) => write!(f, "{j}"),
            Self::Pre(i) => write!(f, "q{i}"),
        }
    }
}

/// Why a ticket was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TicketError {
    #[error("request id is malformed")]
    Malformed,
    #[error("request id was signed with an unknown key")]
    UnknownKid,
    #[error("request id signature does not match")]
    BadSignature,
    #[error("request id belongs to another event")]
    WrongEvent,
    #[error("request id has expired")]
    Expired,
}

/// Signs and verifies tickets.
#[derive(Debug, Clone)]
pub struct TicketSigner {
    ring: HmacKeyring,
    secrets: HmacKeyring,
    ttl_secs: u64,
}

impl TicketSigner {
    /// `ring` is the tier-1 key ring; the ticket keys are derived from it.
    pub fn new(tier1_ring: &HmacKeyring, ttl_secs: u64) -> Self {
        Self {
            ring: tier1_ring.derive(TICKET_KEY_LABEL),
            secrets: tier1_ring.derive(SECRET_KEY_LABEL),
            ttl_secs,
        }
    }

    pub fn ttl_secs(&self) -> u64 {
        self.ttl_secs
    }

    fn mac(key: &[u8], signed: &str) -> Vec<u8> {
        let k = hmac::Key::new(hmac::HMAC_SHA256, key);
        hmac::sign(&k, signed.as_bytes()).as_ref()[..MAC_BYTES].to_vec()
    }

    /// The request secret of a ticket (docs/tokens.md#request-secrets): HMAC of the ticket
    /// string under a key derived for secrets, of the kid that signed the ticket. Only the
    /// one who received it from `assign` has it: the ticket alone, seen in a log or a URL, is
    /// worth nothing. Derived rather than stored, so `assign` can answer it again (one place
    /// per account) without a write. `None` for a ticket of an unknown kid.
    pub fn secret_for(&self, request_id: &str) -> Option<String> {
        let kid = request_id.split('.').nth(1)?;
        let key = self.secrets.key(kid)?;
        let k = hmac::Key::new(hmac::HMAC_SHA256, key);
        Some(URL_SAFE_NO_PAD.encode(&hmac::sign(&k, request_id.as_bytes()).as_ref()[..SECRET_BYTES]))
    }

    /// Whether `secret` is the request secret of `request_id` (constant time).
    pub fn secret_matches(&self, request_id: &str, secret: &str) -> bool {
        match self.secret_for(request_id) {
            Some(want) => constant_time::verify_slices_are_equal(want.as_bytes(), secret.as_bytes()).is_ok(),
            None => false,
        }
    }

    /// Issues a ticket string.
    pub fn issue(&self, t: &Ticket) -> String {
        let kid = self.ring.signing_kid();
        let payload = URL_SAFE_NO_PAD.encode(format!("{}:{}:{}", t.event, t.place, t.issued_at));
        let signed = format!("v1.{kid}.{payload}");
        let mac = URL_SAFE_NO_PAD.encode(Self::mac(self.ring.signing_key(), &signed));
        format!("{signed}.{mac}")
    }

    /// Verifies a ticket for `event` at time `now`, its life counted from its issue.
    pub fn verify(&self, s: &str, event: &EventId, now: u64) -> Result<Ticket, TicketError> {
        let t = self.verify_signed(s, event)?;
        self.check_life(&t, t.issued_at, now)?;
        Ok(t)
    }

    /// `Expired` once the ticket's life, counted from `start` (its issue, or a later moment
    /// such as the open of its event: docs/tokens.md#tickets), has passed at `now`.
    pub fn check_life(&self, t: &Ticket, start: u64, now: u64) -> Result<(), TicketError> {
        if now >= self.expires_at(t, start) {
            return Err(TicketError::Expired);
        }
        Ok(())
    }

    /// When `t` expires if its life counts from `start` (never before its issue).
    pub fn expires_at(&self, t: &Ticket, start: u64) -> u64 {
        start.max(t.issued_at).saturating_add(self.ttl_secs)
    }

    /// Verifies a ticket's form, signature and event, not its age: the caller decides when its
    /// life starts ([`Self::check_life`]).
    pub fn verify_signed(&self, s: &str, event: &EventId) -> Result<Ticket, TicketError> {
        if s.len() > MAX_TICKET_LEN || !s.is_ascii() {
            return Err(TicketError::Malformed);
        }
        let mut parts = s.split('.');
        let (Some(ver), Some(kid), Some(payload), Some(mac), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TicketError::Malformed);
        };
        if ver != "v1" || validate_kid(kid).is_err() {
            return Err(TicketError::Malformed);
        }
        let signed = &s[..s.len() - mac.len() - 1];
        let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| TicketError::Malformed)?;
        if mac.len() != MAC_BYTES {
            return Err(TicketError::Malformed);
        }
        let key = self.ring.key(kid).ok_or(TicketError::UnknownKid)?;
        let want = Self::mac(key, signed);
        constant_time::verify_slices_are_equal(&want, &mac).map_err(|_| TicketError::BadSignature)?;
        let raw = URL_SAFE_NO_PAD.decode(payload).map_err(|_| TicketError::Malformed)?;
        let raw = String::from_utf8(raw).map_err(|_| TicketError::Malformed)?;
        let mut f = raw.split(':');
        let (Some(ev), Some(pos), Some(iat), None) = (f.next(), f.next(), f.next(), f.next()) else {
            return Err(TicketError::Malformed);
        };
        let ticket_event = EventId::parse(ev).map_err(|_| TicketError::Malformed)?;
        let place = match pos.strip_prefix('q') {
            Some(i) => Place::Pre(parse_index(i)?),
            None => Place::Join(parse_index(pos)?),
        };
        let issued_at: u64 = iat.parse().map_err(|_| TicketError::Malformed)?;
        if &ticket_event != event {
            return Err(TicketError::WrongEvent);
        }
        Ok(Ticket { event: ticket_event, place, issued_at })
    }
}

/// A decimal index ≥ 1 (digits only: no sign, no spaces).
fn parse_index(s: &str) -> Result<u64, TicketError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TicketError::Malformed);
    }
    match s.parse::<u64>() {
        Ok(0) | Err(_) => Err(TicketError::Malformed),
        Ok(v) => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> TicketSigner {
        TicketSigner::new(&HmacKeyring::generate("k1").unwrap(), 3600)
    }

    fn ev(s: &str) -> EventId {
        EventId::parse(s).unwrap()
    }

    #[test]
    fn round_trip() {
        let s = signer();
        let t = Ticket { event: ev("e1"), place: Place::Join(42), issued_at: 1000 };
        let id = s.issue(&t);
        assert!(id.len() < 100, "{id}");
        assert_eq!(s.verify(&id, &ev("e1"), 1001), Ok(t));
    }

    #[test]
    fn refuses_foreign_event_tamper_expiry_and_garbage() {
        let s = signer();
        let id = s.issue(&Ticket { event: ev("e1"), place: Place::Join(42), issued_at: 1000 });
        assert_eq!(s.verify(&id, &ev("e2"), 1001), Err(TicketError::WrongEvent));
        assert_eq!(s.verify(&id, &ev("e1"), 4600), Err(TicketError::Expired));
        // A payload for another position under the old MAC.
        let parts: Vec<&str> = id.split('.').collect();
        let forged_payload = URL_SAFE_NO_PAD.encode("e1:1:1000");
        let forged = format!("v1.{}.{}.{}", parts[1], forged_payload, parts[3]);
        assert_eq!(s.verify(&forged, &ev("e1"), 1001), Err(TicketError::BadSignature));
        // Flip one character of the MAC.
        let mut bytes = id.clone().into_bytes();
        let last = bytes.len() - 2;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(bytes).unwrap();
        assert_eq!(s.verify(&flipped, &ev("e1"), 1001), Err(TicketError::BadSignature));
        // Signed by another ring.
        let other = signer().issue(&Ticket { event: ev("e1"), place: Place::Join(42), issued_at: 1000 });
        assert_eq!(s.verify(&other, &ev("e1"), 1001), Err(TicketError::BadSignature));
        for junk in ["", "v1", "v1.k1.x.y", "v2.k1.a.b", "v1.k1.a.b.c", &"v".repeat(300), "v1.k!.YQ.YQ"] {
            assert_eq!(s.verify(junk, &ev("e1"), 1001), Err(TicketError::Malformed), "{junk}");
        }
        let unknown = id.replacen("v1.k1.", "v1.k9.", 1);
        assert_eq!(s.verify(&unknown, &ev("e1"), 1001), Err(TicketError::UnknownKid));
    }

    /// Review finding 18: the master tier-1 key sat at the edge, so an edge leak could forge
    /// tickets (places in line). The edge now holds only the token keys derived for it, from
    /// which no ticket key can be computed.
    #[test]
    fn the_edge_keys_cannot_forge_tickets() {
        let master = HmacKeyring::generate("k1").unwrap();
        let tokens = vwr_core::token::Tier1Tokens::new(master.clone(), "vwr", "vwr-edge");
        let edge = tokens.edge_ring();
        assert_ne!(edge.signing_key(), master.signing_key(), "the edge must not get the master key");
        let real = TicketSigner::new(&master, 3600);
        for leaked in [edge.clone(), edge.derive(TICKET_KEY_LABEL)] {
            let forged = TicketSigner { secrets: leaked.clone(), ring: leaked, ttl_secs: 3600 }
                .issue(&Ticket { event: ev("e1"), place: Place::Join(1), issued_at: 1000 });
            assert_eq!(real.verify(&forged, &ev("e1"), 1001), Err(TicketError::BadSignature));
        }
        let forged = TicketSigner::new(edge, 3600).issue(&Ticket {
            event: ev("e1"),
            place: Place::Join(1),
            issued_at: 1000,
        });
        assert_eq!(real.verify(&forged, &ev("e1"), 1001), Err(TicketError::BadSignature));
    }

    #[test]
    fn a_later_start_lengthens_the_life_an_earlier_one_never_shortens_it() {
        let s = signer();
        let id = s.issue(&Ticket { event: ev("e1"), place: Place::Pre(3), issued_at: 1000 });
        let t = s.verify_signed(&id, &ev("e1")).unwrap();
        assert_eq!(s.verify(&id, &ev("e1"), 4600), Err(TicketError::Expired));
        assert_eq!(s.verify_signed(&id, &ev("e1")), Ok(t.clone()), "no age check");
        assert_eq!(s.expires_at(&t, 9000), 12_600);
        assert_eq!(s.check_life(&t, 9000, 12_599), Ok(()));
        assert_eq!(s.check_life(&t, 9000, 12_600), Err(TicketError::Expired));
        assert_eq!(s.expires_at(&t, 0), 4600);
        assert_eq!(s.verify_signed(&id, &ev("e2")), Err(TicketError::WrongEvent));
    }

    #[test]
    fn pre_queue_places_round_trip_and_bad_indices_are_refused() {
        let s = signer();
        let t = Ticket { event: ev("e1"), place: Place::Pre(7), issued_at: 1000 };
        assert_eq!(s.verify(&s.issue(&t), &ev("e1"), 1001), Ok(t));
        let ring = HmacKeyring::generate("k1").unwrap();
        let signer = TicketSigner::new(&ring, 3600);
        for bad in
            ["e1:q0:1000", "e1:0:1000", "e1:q:1000", "e1:+5:1000", "e1:q-1:1000", "e1:qq1:1000", "e1: 1:1000"]
        {
            let kid = signer.ring.signing_kid();
            let payload = URL_SAFE_NO_PAD.encode(bad);
            let signed = format!("v1.{kid}.{payload}");
            let mac = URL_SAFE_NO_PAD.encode(TicketSigner::mac(signer.ring.signing_key(), &signed));
            assert_eq!(
                signer.verify(&format!("{signed}.{mac}"), &ev("e1"), 1001),
                Err(TicketError::Malformed),
                "{bad}"
            );
        }
    }

    #[test]
    fn request_secrets_belong_to_their_ticket() {
        let s = signer();
        let a = s.issue(&Ticket { event: ev("e1"), place: Place::Join(1), issued_at: 1000 });
        let b = s.issue(&Ticket { event: ev("e1"), place: Place::Join(2), issued_at: 1000 });
        let (sa, sb) = (s.secret_for(&a).unwrap(), s.secret_for(&b).unwrap());
        assert_ne!(sa, sb);
        assert_eq!(sa.len(), 22);
        assert!(s.secret_matches(&a, &sa));
        assert!(!s.secret_matches(&a, &sb), "another ticket's secret");
        assert!(!s.secret_matches(&a, ""));
        assert!(!s.secret_matches(&a, &a), "the ticket is not its own secret");
        // The secret key is not the ticket key: knowing tickets and their MACs gives nothing.
        assert_ne!(s.secrets.signing_key().as_ref(), s.ring.signing_key().as_ref());
        // Another deployment (another master ring) computes another secret.
        assert!(!signer().secret_matches(&a, &sa));
    }

    #[test]
    fn old_kid_still_verifies_after_rotation() {
        let old = HmacKeyring::generate("old").unwrap();
        let id = TicketSigner::new(&old, 60).issue(&Ticket {
            event: ev("e"),
            place: Place::Join(1),
            issued_at: 0,
        });
        let mut text = HmacKeyring::generate("new").unwrap().to_text();
        text.push(',');
        text.push_str(&old.to_text());
        let rotated = HmacKeyring::from_text(&text, Some("new")).unwrap();
        assert!(TicketSigner::new(&rotated, 60).verify(&id, &ev("e"), 1).is_ok());
    }
}
