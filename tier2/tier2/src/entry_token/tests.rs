use super::*;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use vwr_core::HmacKeyring;
use vwr_core::token::{Tier1Claims, Tier1Tokens};

const NOW: u64 = 1_800_000_000;

fn ev(s: &str) -> EventId {
    EventId::parse(s).unwrap()
}

fn tokens() -> EntryTokens {
    EntryTokens::new(EcKeyring::generate("e1k").unwrap(), "vwr", "vwr-api")
}

fn claims() -> EntryClaims {
    EntryClaims {
        iss: "vwr".into(),
        aud: "vwr-api".into(),
        sub: "e1".into(),
        uid: "alice".into(),
        tier: 2,
        iat: NOW,
        exp: NOW + 600,
        jti: "j1".into(),
    }
}

#[test]
fn round_trip_and_jwks() {
    let t = tokens();
    let tok = t.sign(&claims()).unwrap();
    assert_eq!(t.verifier().verify(&tok, &ev("e1"), "alice", NOW).unwrap(), claims());
    let jwks = serde_json::to_string(&t.ring().jwks()).unwrap();
    let v = EntryVerifier::from_jwks(&jwks, "vwr", "vwr-api").unwrap();
    assert!(v.verify(&tok, &ev("e1"), "alice", NOW).is_ok());
    assert!(
        !jwks.contains(&URL_SAFE_NO_PAD.encode(t.ring().key("e1k").unwrap().bytes())),
        "JWKS leaks the private key"
    );
    let back = EcKeyring::from_text(&t.ring().to_text(), None).unwrap();
    assert_eq!(back.jwks(), t.ring().jwks());
    let back = EcKeyring::from_json(&t.ring().to_json()).unwrap();
    assert_eq!(back.jwks(), t.ring().jwks());
}

#[test]
fn refuses_tier1_token_even_with_shared_secret_material() {
    // A tier-1 (HS256) token never passes the tier-2 verifier (invariant 7).
    let t1 = Tier1Tokens::new(HmacKeyring::generate("e1k").unwrap(), "vwr", "vwr-api");
    let tok = t1
        .sign(&Tier1Claims {
            iss: "vwr".into(),
            aud: "vwr-api".into(),
            sub: "alice".into(),
            eid: "e1".into(),
            pos: 1,
            tier: 1,
            iat: NOW,
            nbf: NOW,
            exp: NOW + 600,
            jti: "x".into(),
            t2: None,
        })
        .unwrap();
    assert_eq!(tokens().verifier().verify(&tok, &ev("e1"), "alice", NOW), Err(TokenError::UnsupportedAlg));
}

#[test]
fn refuses_other_event_user_expired_missing_exp_wrong_tier() {
    let t = tokens();
    let v = t.verifier();
    let tok = t.sign(&claims()).unwrap();
    assert_eq!(v.verify(&tok, &ev("e2"), "alice", NOW), Err(TokenError::WrongEvent));
    assert_eq!(v.verify(&tok, &ev("e1"), "bob", NOW), Err(TokenError::WrongUser));
    assert_eq!(v.verify(&tok, &ev("e1"), "", NOW), Err(TokenError::WrongUser));
    assert_eq!(v.verify(&tok, &ev("e1"), "alice", NOW + 600), Err(TokenError::Expired));
    // Without exp (signed with the real key).
    #[derive(Serialize)]
    struct NoExp<'a> {
        iss: &'a str,
        aud: &'a str,
        sub: &'a str,
        uid: &'a str,
        tier: u8,
        jti: &'a str,
    }
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some("e1k".into());
    let key = EncodingKey::from_ec_der(t.ring().key("e1k").unwrap().bytes());
    let no_exp = jsonwebtoken::encode(
        &h,
        &NoExp { iss: "vwr", aud: "vwr-api", sub: "e1", uid: "alice", tier: 2, jti: "j" },
        &key,
    )
    .unwrap();
    assert_eq!(v.verify(&no_exp, &ev("e1"), "alice", NOW), Err(TokenError::MissingExp));
    let mut c = claims();
    c.tier = 1;
    assert_eq!(v.verify(&t.sign(&c).unwrap(), &ev("e1"), "alice", NOW), Err(TokenError::WrongTier));
    // Another key ring's token (same kid) fails the signature.
    let other = tokens().sign(&claims()).unwrap();
    assert_eq!(v.verify(&other, &ev("e1"), "alice", NOW), Err(TokenError::BadSignature));
    assert!(v.verify("a.b.c", &ev("e1"), "alice", NOW).is_err());
}

#[test]
fn bad_key_material_is_a_clear_error() {
    assert!(EcKeyring::from_text("k1:AAAA", None).is_err());
    assert!(EcKeyring::from_text("", None).is_err());
    let hmac = HmacKeyring::generate("k").unwrap().to_text();
    assert!(EcKeyring::from_text(&hmac, None).is_err());
    assert!(EntryVerifier::from_jwks("{\"keys\":[]}", "vwr", "a").is_err());
}
