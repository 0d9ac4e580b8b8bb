//! Conformance vectors for the JavaScript edge verifier (`edge/`).
//!
//! Every vector is a token made by the real Rust issuer (`Tier1Tokens::sign`) or hand-forged
//! with the same HMAC, verified here by `Tier1Tokens::verify` and asserted against the
//! expected result. The set is written to `edge/test/vectors.json`; the edge tests
//! (`node --test edge/test/`) must reach the same decision for every vector.
//!
//! `VWR_UPDATE_VECTORS=1 cargo test -p vwr-cli --test edge_vectors` (re)writes the file. Without
//! it, the test fails when the committed file differs from what it would write (drift).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::{Value, json};
use vwr_core::token::{MAX_TOKEN_LEN, NBF_LEEWAY_SECS, Tier1Claims, Tier1Tokens, TokenError};
use vwr_core::{EventId, HmacKeyring};

// TEST-ONLY key material, published on purpose so the vectors are stable. It secures nothing
// and must never be configured anywhere. (Everywhere else, test keys are generated at test time.)
const TEST_ONLY_KEY_K1: &[u8; 32] = b"vwr-edge-vectors-TEST-ONLY-k1!!!";
const TEST_ONLY_KEY_K0: &[u8; 32] = b"vwr-edge-vectors-TEST-ONLY-k0!!!";
/// A key the verifier does not know, for signatures that must not verify.
const TEST_ONLY_OTHER_KEY: &[u8; 32] = b"vwr-edge-vectors-TEST-ONLY-xx!!!";

const NOW: u64 = 1_800_000_000;
const TTL: u64 = 600;
const ISSUER: &str = "vwr";
const AUDIENCE: &str = "vwr-edge";
/// The header jsonwebtoken writes for the signing kid, byte for byte.
const HEADER_K1: &str = r#"{"typ":"JWT","alg":"HS256","kid":"test-k1"}"#;

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The tier-1 master keys (what the tier-1 Lambdas hold).
fn keys_text() -> String {
    format!("test-k1:{},test-k0:{}", b64(TEST_ONLY_KEY_K1), b64(TEST_ONLY_KEY_K0))
}

/// The keys the edge gets: derived from the master keys (`HmacKeyring::edge_ring`); tokens
/// are signed with these, the master keys never leave tier 1.
fn edge_keys_text() -> String {
    HmacKeyring::from_text(&keys_text(), Some("test-k1")).unwrap().edge_ring().to_text()
}

/// The edge key of kid `test-k1`, which signs the vectors' tokens.
fn edge_k1() -> Vec<u8> {
    HmacKeyring::from_text(&keys_text(), Some("test-k1")).unwrap().edge_ring().signing_key().to_vec()
}

fn issuer(signing_kid: &str) -> Tier1Tokens {
    Tier1Tokens::new(HmacKeyring::from_text(&keys_text(), Some(signing_kid)).unwrap(), ISSUER, AUDIENCE)
}

fn claims() -> Tier1Claims {
    Tier1Claims {
        iss: ISSUER.into(),
        aud: AUDIENCE.into(),
        sub: "v1.test-k1.vector-request".into(),
        eid: "e1".into(),
        pos: 42,
        tier: 1,
        iat: NOW,
        nbf: NOW,
        exp: NOW + TTL,
        jti: "vector-jti-0001".into(),
        t2: None,
    }
}

fn payload() -> Value {
    serde_json::to_value(claims()).unwrap()
}

/// HMAC-SHA256(key, msg). `HmacKeyring::derive` is documented as exactly `HMAC(key, label)`;
/// `forged_valid_token_equals_the_issuers` below proves it matches what the issuer signs with.
fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let label = String::from_utf8(msg.to_vec()).unwrap();
    HmacKeyring::new("x", BTreeMap::from([("x".to_owned(), key.to_vec())]))
        .unwrap()
        .derive(&label)
        .signing_key()
        .to_vec()
}

/// A JWT from raw header and payload bytes, signed (HS256 MAC) with `key`.
fn forge_bytes(header: &[u8], payload: &[u8], key: &[u8]) -> String {
    let input = format!("{}.{}", b64(header), b64(payload));
    let sig = b64(hmac(key, input.as_bytes()));
    format!("{input}.{sig}")
}

fn forge(header: &str, payload: &Value, key: &[u8]) -> String {
    forge_bytes(header.as_bytes(), payload.to_string().as_bytes(), key)
}

/// The payload with `f` applied.
fn with(f: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut p = payload();
    f(p.as_object_mut().unwrap());
    p
}

/// Re-signs a token's first two segments as given (HS256 with the k1 key).
fn resign(header_b64: &str, payload_b64: &str) -> String {
    let input = format!("{header_b64}.{payload_b64}");
    format!("{input}.{}", b64(hmac(&edge_k1(), input.as_bytes())))
}

fn parts(token: &str) -> Vec<String> {
    token.split('.').map(str::to_owned).collect()
}

/// A valid token of exactly `len` characters: the `jti` and `sub` are padded to fit, and the
/// header is the issuer's or one with a padding field (base64 text lengths skip some residues).
fn token_of_len(len: usize) -> String {
    let padded = (0..4).map(|n| format!(r#"{{"alg":"HS256","kid":"test-k1","pad":"{}"}}"#, "x".repeat(n)));
    for header in std::iter::once(HEADER_K1.to_owned()).chain(padded) {
        for sub_pad in 0..3 {
            for jti_len in 0..MAX_TOKEN_LEN {
                let mut c = claims();
                c.sub.push_str(&"s".repeat(sub_pad));
                c.jti = "j".repeat(jti_len);
                let body = serde_json::to_string(&c).unwrap();
                let tok = forge_bytes(header.as_bytes(), body.as_bytes(), &edge_k1());
                if tok.len() == len {
                    return tok;
                }
                if tok.len() > len {
                    break;
                }
            }
        }
    }
    panic!("no padding gives a token of {len} characters");
}

struct Vector {
    name: &'static str,
    description: &'static str,
    token: String,
    event: &'static str,
    now: u64,
    expect: Result<(), TokenError>,
}

fn v(name: &'static str, description: &'static str, token: String, expect: Result<(), TokenError>) -> Vector {
    Vector { name, description, token, event: "e1", now: NOW, expect }
}

/// The valid payload with `key` set to `value`, signed with the k1 key.
fn set(key: &str, value: Value) -> String {
    let mut p = payload();
    p[key] = value;
    forge(HEADER_K1, &p, &edge_k1())
}

/// The valid payload without `key`, signed with the k1 key.
fn unset(key: &str) -> String {
    let mut p = payload();
    p.as_object_mut().unwrap().remove(key);
    forge(HEADER_K1, &p, &edge_k1())
}

/// The valid payload under another header, signed with the k1 key.
fn header(h: &str) -> String {
    forge(h, &payload(), &edge_k1())
}

fn at(now: u64, v: Vector) -> Vector {
    Vector { now, ..v }
}

fn for_event(event: &'static str, v: Vector) -> Vector {
    Vector { event, ..v }
}

fn vectors() -> Vec<Vector> {
    use TokenError::*;
    let t = issuer("test-k1");
    let valid = t.sign(&claims()).unwrap();
    let [h, p, s]: [String; 3] = parts(&valid).try_into().unwrap();
    let none_header = b64(r#"{"alg":"none","typ":"JWT","kid":"test-k1"}"#);
    let long_event: &'static str = Box::leak("E".repeat(64).into_boxed_str());
    let signed = |c: Tier1Claims| t.sign(&c).unwrap();

    let mut list = vec![
        // Accepted.
        v("valid", "issued by the Rust issuer, checked at issue time", valid.clone(), Ok(())),
        at(NOW + TTL - 1, v("valid_last_second", "one second before exp", valid.clone(), Ok(()))),
        v(
            "valid_old_kid",
            "signed with the second (rotated-out) kid, which still verifies",
            issuer("test-k0").sign(&claims()).unwrap(),
            Ok(()),
        ),
        v(
            "valid_nbf_within_leeway",
            "nbf exactly 30 s in the future (the leeway)",
            signed(Tier1Claims { nbf: NOW + NBF_LEEWAY_SECS, ..claims() }),
            Ok(()),
        ),
        v("valid_without_nbf", "nbf is optional", unset("nbf"), Ok(())),
        v(
            "valid_aud_array",
            "aud as an array that contains the audience",
            set("aud", json!(["other", AUDIENCE])),
            Ok(()),
        ),
        v("valid_max_length", "exactly 4096 characters", token_of_len(MAX_TOKEN_LEN), Ok(())),
        for_event(
            long_event,
            v(
                "valid_long_event_id",
                "a 64-character event id",
                signed(Tier1Claims { eid: long_event.into(), ..claims() }),
                Ok(()),
            ),
        ),
        // Time.
        at(NOW + TTL, v("expired_at_exp", "now == exp", valid.clone(), Err(Expired))),
        at(NOW + 86_400, v("expired_long_ago", "a day after exp", valid.clone(), Err(Expired))),
        v("missing_exp", "no exp claim: never accepted forever", unset("exp"), Err(MissingExp)),
        v("null_exp", "exp: null", set("exp", Value::Null), Err(MissingExp)),
        v("exp_string", "exp as a string", set("exp", json!((NOW + TTL).to_string())), Err(Malformed)),
        v("exp_negative", "exp below zero", set("exp", json!(-1)), Err(Malformed)),
        v("exp_fraction", "exp with a fraction", set("exp", json!(1_800_000_600.5)), Err(Malformed)),
        v(
            "nbf_in_future",
            "nbf 31 s in the future (beyond the leeway)",
            signed(Tier1Claims { nbf: NOW + NBF_LEEWAY_SECS + 1, ..claims() }),
            Err(NotYetValid),
        ),
        // Tier, event, issuer, audience, claims.
        v("tier_2", "tier 2", set("tier", json!(2)), Err(WrongTier)),
        v("tier_string", "tier \"1\" as a string", set("tier", json!("1")), Err(WrongTier)),
        v("tier_missing", "no tier claim", unset("tier"), Err(WrongTier)),
        v("tier_null", "tier: null", set("tier", Value::Null), Err(WrongTier)),
        v(
            "entry_token_shape",
            "a tier-2 entry token (sub = event, uid, tier 2) under the tier-1 key",
            forge(
                HEADER_K1,
                &json!({"sub": "e1", "uid": "u1", "tier": 2, "iat": NOW, "exp": NOW + TTL, "jti": "j2"}),
                &edge_k1(),
            ),
            Err(WrongTier),
        ),
        for_event("e2", v("wrong_event", "token for e1 presented for e2", valid.clone(), Err(WrongEvent))),
        for_event(
            "E1",
            v("wrong_event_case", "event ids are case-sensitive", valid.clone(), Err(WrongEvent)),
        ),
        v("missing_eid", "no eid claim", unset("eid"), Err(WrongEvent)),
        v(
            "wrong_iss",
            "another issuer",
            signed(Tier1Claims { iss: "someone-else".into(), ..claims() }),
            Err(WrongIssuer),
        ),
        v("missing_iss", "no iss claim", unset("iss"), Err(WrongIssuer)),
        v(
            "wrong_aud",
            "another audience",
            signed(Tier1Claims { aud: "vwr-tier2".into(), ..claims() }),
            Err(WrongIssuer),
        ),
        v(
            "aud_array_without_us",
            "aud array without the audience",
            set("aud", json!(["a", "b"])),
            Err(WrongIssuer),
        ),
        v("missing_sub", "no sub claim", unset("sub"), Err(MissingClaim)),
        v("missing_pos", "no pos claim", unset("pos"), Err(MissingClaim)),
        v("missing_jti", "no jti claim", unset("jti"), Err(MissingClaim)),
        v("pos_string", "pos as a string", set("pos", json!("42")), Err(Malformed)),
        // Algorithms and keys.
        v(
            "alg_none_empty_signature",
            "alg none, empty signature",
            format!("{none_header}.{p}."),
            Err(UnsupportedAlg),
        ),
        v(
            "alg_none_two_segments",
            "alg none without the signature segment",
            format!("{none_header}.{p}"),
            Err(Malformed),
        ),
        v(
            "alg_none_with_hs256_signature",
            "alg none carrying a valid HS256 MAC",
            resign(&none_header, &p),
            Err(UnsupportedAlg),
        ),
        v(
            "alg_hs512",
            "alg HS512 carrying a valid HS256 MAC (a verifier ignoring alg would accept it)",
            header(r#"{"typ":"JWT","alg":"HS512","kid":"test-k1"}"#),
            Err(UnsupportedAlg),
        ),
        v(
            "alg_lowercase",
            "alg hs256",
            header(r#"{"typ":"JWT","alg":"hs256","kid":"test-k1"}"#),
            Err(UnsupportedAlg),
        ),
        v(
            "alg_rs256",
            "alg RS256",
            header(r#"{"typ":"JWT","alg":"RS256","kid":"test-k1"}"#),
            Err(UnsupportedAlg),
        ),
        v("alg_missing", "no alg", header(r#"{"typ":"JWT","kid":"test-k1"}"#), Err(UnsupportedAlg)),
        v(
            "alg_number",
            "alg as a number",
            header(r#"{"typ":"JWT","alg":256,"kid":"test-k1"}"#),
            Err(Malformed),
        ),
        v(
            "unknown_kid",
            "a kid the verifier does not know",
            forge(r#"{"typ":"JWT","alg":"HS256","kid":"test-k9"}"#, &payload(), TEST_ONLY_OTHER_KEY),
            Err(UnknownKid),
        ),
        v("missing_kid", "no kid", header(r#"{"typ":"JWT","alg":"HS256"}"#), Err(UnknownKid)),
        v("kid_number", "kid as a number", header(r#"{"typ":"JWT","alg":"HS256","kid":1}"#), Err(Malformed)),
        v(
            "typ_number",
            "typ as a number (the full JWT header is typed)",
            header(r#"{"typ":1,"alg":"HS256","kid":"test-k1"}"#),
            Err(Malformed),
        ),
        // Signatures.
        v(
            "bad_signature_other_key",
            "right kid, signed with another key",
            forge(HEADER_K1, &payload(), TEST_ONLY_OTHER_KEY),
            Err(BadSignature),
        ),
        v(
            "bad_signature_master_key",
            "right kid, signed with the tier-1 master key instead of the edge key derived from it",
            forge(HEADER_K1, &payload(), TEST_ONLY_KEY_K1),
            Err(BadSignature),
        ),
        v(
            "bad_signature_flipped",
            "one signature character changed",
            format!("{h}.{p}.{}", flip_first(&s)),
            Err(BadSignature),
        ),
        v("empty_signature", "HS256 with an empty signature", format!("{h}.{p}."), Err(BadSignature)),
        v(
            "signature_not_base64",
            "signature with characters outside base64url",
            format!("{h}.{p}.{}", "*".repeat(43)),
            Err(Malformed),
        ),
        v(
            "signature_noncanonical",
            "signature whose last character carries non-zero padding bits",
            format!("{h}.{p}.{}", noncanonical_last(&s)),
            Err(Malformed),
        ),
        v(
            "tampered_payload",
            "pos changed to 1, original signature",
            format!(
                "{h}.{}.{s}",
                b64(with(|c| {
                    c.insert("pos".into(), json!(1));
                })
                .to_string())
            ),
            Err(BadSignature),
        ),
        v(
            "tampered_kid",
            "kid switched to the other known kid, original signature",
            format!("{}.{p}.{s}", b64(r#"{"typ":"JWT","alg":"HS256","kid":"test-k0"}"#)),
            Err(BadSignature),
        ),
        // Encoding.
        v(
            "payload_not_base64",
            "payload segment not base64url (validly signed)",
            resign(&h, "e30*"),
            Err(Malformed),
        ),
        v(
            "payload_not_json",
            "payload is not JSON (validly signed)",
            resign(&h, &b64("hello")),
            Err(Malformed),
        ),
        v(
            "payload_array",
            "payload is a JSON array (validly signed)",
            resign(&h, &b64("[]")),
            Err(Malformed),
        ),
        v(
            "payload_invalid_utf8",
            "payload with invalid UTF-8 (validly signed)",
            forge_bytes(HEADER_K1.as_bytes(), b"{\"iss\":\"\xff\"}", &edge_k1()),
            Err(Malformed),
        ),
        v("header_not_json", "header is not JSON", format!("{}.{p}.{s}", b64("hello")), Err(Malformed)),
        v("header_padded", "header with base64 padding", format!("{h}=.{p}.{s}"), Err(Malformed)),
        v(
            "header_bad_char",
            "header with a character outside base64url",
            format!("*{}.{p}.{s}", &h[1..]),
            Err(Malformed),
        ),
        v(
            "header_invalid_utf8",
            "header with invalid UTF-8",
            forge_bytes(b"{\"alg\":\"HS256\",\"kid\":\"test-k1\",\"x\":\"\xff\"}", &p_bytes(&p), &edge_k1()),
            Err(Malformed),
        ),
        v("leading_space", "a valid token with a leading space", format!(" {valid}"), Err(Malformed)),
        v(
            "too_long",
            "a validly signed token of 4097 characters",
            token_of_len(MAX_TOKEN_LEN + 1),
            Err(Malformed),
        ),
        v("garbage_empty", "empty string", String::new(), Err(Malformed)),
        v("garbage_word", "not a JWT", "not-a-token".into(), Err(Malformed)),
        v("garbage_dots", "two dots", "..".into(), Err(Malformed)),
        v("garbage_four_segments", "four segments", "a.b.c.d".into(), Err(Malformed)),
        v("garbage_percent", "percent signs", "%%%.%%%.%%%".into(), Err(Malformed)),
        v("garbage_non_ascii", "non-ASCII", "é.é.é".into(), Err(Malformed)),
        v("garbage_huge", "5000 characters", "a".repeat(5000), Err(Malformed)),
    ];
    list.sort_by_key(|v| v.expect.is_err());
    list
}

fn p_bytes(p_b64: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(p_b64).unwrap()
}

/// The signature with its first character changed (still canonical base64url).
fn flip_first(sig: &str) -> String {
    let first = if sig.starts_with('A') { 'B' } else { 'A' };
    format!("{first}{}", &sig[1..])
}

/// The 43-character signature with its last character's unused low bits set.
fn noncanonical_last(sig: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = sig.as_bytes()[sig.len() - 1];
    let idx = ALPHABET.iter().position(|&c| c == last).unwrap();
    assert_eq!(idx & 0b11, 0, "a 32-byte MAC leaves two zero bits in the last character");
    format!("{}{}", &sig[..sig.len() - 1], ALPHABET[idx | 1] as char)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VectorFile {
    about: &'static str,
    regenerate: &'static str,
    keys: String,
    issuer: &'static str,
    audience: &'static str,
    leeway_seconds: u64,
    max_token_length: usize,
    vectors: Vec<VectorOut>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VectorOut {
    name: &'static str,
    description: &'static str,
    event: &'static str,
    now: u64,
    valid: bool,
    /// `TokenError::code()` of the Rust verifier, or null when valid.
    error: Option<&'static str>,
    /// What the edge does with a navigation to a protected path of `event` carrying the token.
    decision: &'static str,
    token: String,
}

fn render() -> String {
    let t = issuer("test-k1");
    let mut out = Vec::new();
    for vec in vectors() {
        let event = EventId::parse(vec.event).unwrap();
        let got = t.verify(&vec.token, &event, vec.now).map(|_| ());
        assert_eq!(
            got, vec.expect,
            "vector {:?}: the Rust verifier disagrees with the expectation",
            vec.name
        );
        out.push(VectorOut {
            name: vec.name,
            description: vec.description,
            event: vec.event,
            now: vec.now,
            valid: got.is_ok(),
            error: got.err().map(TokenError::code),
            decision: if got.is_ok() { "pass" } else { "redirect" },
            token: vec.token,
        });
    }
    let file = VectorFile {
        about: "Conformance vectors for the edge verifier, generated from the Rust tier-1 issuer by \
                cli/tests/edge_vectors.rs. The keys are TEST-ONLY constants, published on purpose so \
                the vectors are stable: never configure them anywhere.",
        regenerate: "VWR_UPDATE_VECTORS=1 cargo test -p vwr-cli --test edge_vectors",
        keys: edge_keys_text(),
        issuer: ISSUER,
        audience: AUDIENCE,
        leeway_seconds: NBF_LEEWAY_SECS,
        max_token_length: MAX_TOKEN_LEN,
        vectors: out,
    };
    serde_json::to_string_pretty(&file).unwrap() + "\n"
}

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../edge/test/vectors.json")
}

#[test]
fn forged_valid_token_equals_the_issuers() {
    // Proves `hmac` (and so every forged vector) uses the issuer's exact MAC and header.
    // The issuer adds the place proof (t2), which the edge reads as any other claim.
    let tokens = issuer("test-k1");
    let signed = tokens.sign(&claims()).unwrap();
    let proved = tokens.link().verify(&signed, &EventId::parse("e1").unwrap(), NOW).unwrap();
    let forged =
        forge_bytes(HEADER_K1.as_bytes(), serde_json::to_string(&proved).unwrap().as_bytes(), &edge_k1());
    assert_eq!(forged, signed);
}

#[test]
fn vector_names_are_unique_and_both_outcomes_are_covered() {
    let list = vectors();
    let mut names: Vec<_> = list.iter().map(|v| v.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), list.len());
    assert!(list.iter().filter(|v| v.expect.is_ok()).count() >= 5);
    assert!(list.iter().filter(|v| v.expect.is_err()).count() >= 40);
}

#[test]
fn vectors_file_is_current() {
    let rendered = render();
    let path = vectors_path();
    if std::env::var("VWR_UPDATE_VECTORS").as_deref() == Ok("1") {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "edge/test/vectors.json is missing or out of date; regenerate it with \
         `VWR_UPDATE_VECTORS=1 cargo test -p vwr-cli --test edge_vectors` and review the diff"
    );
}
