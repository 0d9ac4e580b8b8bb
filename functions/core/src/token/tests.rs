use super::*;
use serde_json::json;

const NOW: u64 = 1_800_000_000;

fn ev(s: &str) -> EventId {
    EventId::parse(s).unwrap()
}

fn tokens() -> Tier1Tokens {
    Tier1Tokens::new(HmacKeyring::generate("k1").unwrap(), "vwr", "vwr-edge")
}

fn claims() -> Tier1Claims {
    Tier1Claims {
        iss: "vwr".into(),
        aud: "vwr-edge".into(),
        sub: "v1.k1.abc.def".into(),
        eid: "e1".into(),
        pos: 7,
        tier: 1,
        iat: NOW,
        nbf: NOW,
        exp: NOW + 600,
        jti: "j-1".into(),
        t2: None,
    }
}

/// Signs an arbitrary header and payload with `key` (HS256 MAC), for hand-made bad tokens.
fn forge(header: serde_json::Value, payload: serde_json::Value, key: &[u8]) -> String {
    let h = URL_SAFE_NO_PAD.encode(header.to_string());
    let p = URL_SAFE_NO_PAD.encode(payload.to_string());
    let signing_input = format!("{h}.{p}");
    let k = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key);
    let sig = URL_SAFE_NO_PAD.encode(aws_lc_rs::hmac::sign(&k, signing_input.as_bytes()));
    format!("{signing_input}.{sig}")
}

fn payload() -> serde_json::Value {
    serde_json::to_value(claims()).unwrap()
}

#[test]
fn valid_token_round_trips_and_is_deterministic() {
    let t = tokens();
    let tok = t.sign(&claims()).unwrap();
    assert_eq!(tok, t.sign(&claims()).unwrap());
    let back = t.verify(&tok, &ev("e1"), NOW + 1).unwrap();
    assert_eq!(Tier1Claims { t2: None, ..back.clone() }, claims());
    assert!(back.t2.is_some_and(|p| p.starts_with("k1.")), "signed tokens carry a place proof");
}

#[test]
fn forged_valid_token_is_accepted_so_the_forge_helper_is_faithful() {
    let t = tokens();
    let tok = forge(json!({"alg":"HS256","typ":"JWT","kid":"k1"}), payload(), t.edge_ring().signing_key());
    assert!(t.verify(&tok, &ev("e1"), NOW).is_ok());
}

#[test]
fn rejects_alg_none() {
    let t = tokens();
    let h = URL_SAFE_NO_PAD.encode(json!({"alg":"none","kid":"k1"}).to_string());
    let p = URL_SAFE_NO_PAD.encode(payload().to_string());
    for tok in [format!("{h}.{p}."), format!("{h}.{p}")] {
        let err = t.verify(&tok, &ev("e1"), NOW).unwrap_err();
        assert!(matches!(err, TokenError::UnsupportedAlg | TokenError::Malformed), "{err:?}");
    }
    let tok = forge(json!({"alg":"none","kid":"k1"}), payload(), t.edge_ring().signing_key());
    assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::UnsupportedAlg));
}

#[test]
fn rejects_other_algorithms() {
    let t = tokens();
    for alg in ["HS512", "RS256", "ES256", "hs256", "EdDSA"] {
        let tok = forge(json!({"alg":alg,"kid":"k1"}), payload(), t.edge_ring().signing_key());
        assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::UnsupportedAlg), "{alg}");
    }
}

#[test]
fn rejects_wrong_or_missing_kid() {
    let t = tokens();
    let key = t.edge_ring().signing_key();
    let tok = forge(json!({"alg":"HS256","kid":"k2"}), payload(), key);
    assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::UnknownKid));
    let tok = forge(json!({"alg":"HS256"}), payload(), key);
    assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::UnknownKid));
}

#[test]
fn rejects_a_token_signed_with_another_key_under_the_same_kid() {
    let t = tokens();
    let other = tokens().sign(&claims()).unwrap();
    assert_eq!(t.verify(&other, &ev("e1"), NOW), Err(TokenError::BadSignature));
}

#[test]
fn rejects_expired_and_missing_exp() {
    let t = tokens();
    let tok = t.sign(&claims()).unwrap();
    assert_eq!(t.verify(&tok, &ev("e1"), NOW + 600), Err(TokenError::Expired));
    assert_eq!(t.verify(&tok, &ev("e1"), NOW + 10_000), Err(TokenError::Expired));
    let mut p = payload();
    p.as_object_mut().unwrap().remove("exp");
    let tok = forge(json!({"alg":"HS256","kid":"k1"}), p, t.edge_ring().signing_key());
    assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::MissingExp));
}

#[test]
fn rejects_future_nbf_beyond_leeway() {
    let t = tokens();
    let mut c = claims();
    c.nbf = NOW + NBF_LEEWAY_SECS + 1;
    let tok = t.sign(&c).unwrap();
    assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::NotYetValid));
    c.nbf = NOW + NBF_LEEWAY_SECS;
    let tok = t.sign(&c).unwrap();
    assert!(t.verify(&tok, &ev("e1"), NOW).is_ok());
}

#[test]
fn rejects_wrong_tier() {
    let t = tokens();
    for tier in [json!(2), json!("1"), json!(null), json!(0)] {
        let mut p = payload();
        p["tier"] = tier.clone();
        let tok = forge(json!({"alg":"HS256","kid":"k1"}), p, t.edge_ring().signing_key());
        assert_eq!(t.verify(&tok, &ev("e1"), NOW), Err(TokenError::WrongTier), "{tier}");
    }
}

#[test]
fn rejects_wrong_event() {
    let t = tokens();
    let tok = t.sign(&claims()).unwrap();
    assert_eq!(t.verify(&tok, &ev("e2"), NOW), Err(TokenError::WrongEvent));
}

#[test]
fn rejects_wrong_issuer_or_audience() {
    let t = tokens();
    let mut c = claims();
    c.iss = "someone-else".into();
    assert_eq!(t.verify(&t.sign(&c).unwrap(), &ev("e1"), NOW), Err(TokenError::WrongIssuer));
    let mut c = claims();
    c.aud = "other".into();
    assert_eq!(t.verify(&t.sign(&c).unwrap(), &ev("e1"), NOW), Err(TokenError::WrongIssuer));
}

#[test]
fn rejects_tampered_payload_and_signature() {
    let t = tokens();
    let tok = t.sign(&claims()).unwrap();
    let parts: Vec<&str> = tok.split('.').collect();
    let mut p = payload();
    p["pos"] = json!(1);
    let tampered = format!("{}.{}.{}", parts[0], URL_SAFE_NO_PAD.encode(p.to_string()), parts[2]);
    assert_eq!(t.verify(&tampered, &ev("e1"), NOW), Err(TokenError::BadSignature));
    let mut sig = parts[2].to_owned().into_bytes();
    sig[0] = if sig[0] == b'A' { b'B' } else { b'A' };
    let tampered = format!("{}.{}.{}", parts[0], parts[1], String::from_utf8(sig).unwrap());
    assert_eq!(t.verify(&tampered, &ev("e1"), NOW), Err(TokenError::BadSignature));
}

#[test]
fn rejects_garbage_without_panicking() {
    let t = tokens();
    for junk in ["", ".", "..", "a.b.c", "a.b", "%%%.%%%.%%%", "é.é.é", &"a".repeat(5000)] {
        assert!(t.verify(junk, &ev("e1"), NOW).is_err(), "{junk}");
    }
}

#[test]
fn old_kid_verifies_after_rotation_and_new_kid_signs() {
    let old = HmacKeyring::generate("old").unwrap();
    let tok = Tier1Tokens::new(old.clone(), "vwr", "vwr-edge").sign(&claims()).unwrap();
    let text = format!("{},{}", HmacKeyring::generate("new").unwrap().to_text(), old.to_text());
    let rotated = Tier1Tokens::new(HmacKeyring::from_text(&text, Some("new")).unwrap(), "vwr", "vwr-edge");
    assert!(rotated.verify(&tok, &ev("e1"), NOW).is_ok());
    let fresh = rotated.sign(&claims()).unwrap();
    assert_eq!(read_header(&fresh, "HS256").unwrap(), "new");
}

/// docs/tokens.md#place-proofs: the edge keys alone make a token the edge accepts, never one
/// that tier 2 takes a place from (review finding F11).
#[test]
fn the_edge_keys_alone_cannot_make_a_place_proof() {
    let t = tokens();
    let link = t.link();
    let real = t.sign(&claims()).unwrap();
    let c = link.verify(&real, &ev("e1"), NOW).unwrap();
    assert!(link.place_proved(&c));
    // Minted with the edge key: no proof, a copied proof on another position, a made-up one.
    let edge_only = |c: &Tier1Claims| {
        forge(
            json!({"alg":"HS256","kid":"k1"}),
            serde_json::to_value(c).unwrap(),
            t.edge_ring().signing_key(),
        )
    };
    let minted = edge_only(&Tier1Claims { pos: 0, ..claims() });
    assert!(t.verify(&minted, &ev("e1"), NOW).is_ok(), "the edge would pass it");
    assert_eq!(link.verify(&minted, &ev("e1"), NOW), Err(TokenError::NoPlaceProof));
    let moved = edge_only(&Tier1Claims { pos: 1, t2: c.t2.clone(), ..claims() });
    assert_eq!(link.verify(&moved, &ev("e1"), NOW), Err(TokenError::NoPlaceProof));
    let other_jti = edge_only(&Tier1Claims { jti: "j-2".into(), t2: c.t2.clone(), ..claims() });
    assert_eq!(link.verify(&other_jti, &ev("e1"), NOW), Err(TokenError::NoPlaceProof));
    let made_up = edge_only(&Tier1Claims { t2: Some("k1.AAAAAAAAAAAAAAAAAAAAAA".into()), ..claims() });
    assert_eq!(link.verify(&made_up, &ev("e1"), NOW), Err(TokenError::NoPlaceProof));
}

#[test]
fn a_lapsed_token_verifies_only_where_asked_and_resigns_with_its_place() {
    let t = tokens();
    let link = t.link();
    let tok = t.sign(&claims()).unwrap();
    let late = NOW + 10_000;
    assert_eq!(link.verify(&tok, &ev("e1"), late), Err(TokenError::Expired));
    let c = link.verify_lapsed(&tok, &ev("e1"), late).unwrap();
    assert_eq!(c.exp, NOW + 600);
    assert_eq!(link.verify_lapsed(&tok, &ev("e2"), late), Err(TokenError::WrongEvent));
    let renewed = link.resign(&Tier1Claims { iat: late, nbf: late, exp: late + 60, ..c.clone() }).unwrap();
    let back = link.verify(&renewed, &ev("e1"), late).unwrap();
    assert_eq!((back.pos, back.jti, back.t2), (c.pos, c.jti, c.t2));
}
