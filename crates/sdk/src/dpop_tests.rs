//! Unit tests of [`super`]: each RFC 9449 §4.3 step refuses what it must, and only that.

use super::*;
use serde_json::{Map, Value, json};
use svc_crypto::SigningKey;
use svc_domain::SigningAlg;

const NOW: i64 = 1_800_000_000;
const URL: &str = "https://acme.id.example/oauth/token";

fn public_jwk(key: &SigningKey) -> Value {
    let mut jwk = key.public_jwk();
    if let Some(map) = jwk.as_object_mut() {
        for member in ["kid", "alg", "use"] {
            map.remove(member);
        }
    }
    jwk
}

fn header(key: &SigningKey) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("typ".into(), json!("dpop+jwt"));
    header.insert("jwk".into(), public_jwk(key));
    header
}

fn claims() -> Value {
    json!({"jti": "j-1", "htm": "POST", "htu": URL, "iat": NOW})
}

fn sign(key: &SigningKey, header: Map<String, Value>, claims: &Value) -> String {
    key.sign_jws(header, claims).unwrap()
}

fn request() -> ProofRequest<'static> {
    ProofRequest {
        method: "POST",
        url: URL,
        access_token: None,
        now_unix: NOW,
        iat_window_secs: DEFAULT_IAT_WINDOW_SECS,
    }
}

fn key(alg: SigningAlg) -> SigningKey {
    SigningKey::generate(alg).unwrap()
}

#[test]
fn a_good_proof_of_each_key_type_yields_its_thumbprint() {
    for alg in [SigningAlg::Es256, SigningAlg::EdDsa, SigningAlg::Rs256] {
        let key = key(alg);
        let proof = sign(&key, header(&key), &claims());
        let verified = verify_proof(&proof, &request()).unwrap();
        // Our keys' kid is their RFC 7638 thumbprint: the same computation, done apart.
        assert_eq!(verified.jkt, key.kid(), "{alg:?}");
        assert_eq!((verified.jti.as_str(), verified.iat), ("j-1", NOW));
        assert_eq!(verified.nonce, None);
    }
}

#[test]
fn the_header_must_be_a_dpop_header() {
    let key = key(SigningAlg::Es256);
    let mut wrong_typ = header(&key);
    wrong_typ.insert("typ".into(), json!("JWT"));
    let mut no_typ = header(&key);
    no_typ.remove("typ");
    let mut crit = header(&key);
    crit.insert("crit".into(), json!(["exp"]));
    let mut no_jwk = header(&key);
    no_jwk.remove("jwk");
    let mut private = header(&key);
    private["jwk"]["d"] = json!("AAAA");
    let other = self::key(SigningAlg::EdDsa);
    let mut mismatched = header(&key);
    mismatched.insert("jwk".into(), public_jwk(&other));
    let cases = [
        (wrong_typ, ProofError::WrongType),
        (no_typ, ProofError::WrongType),
        (crit, ProofError::UnsupportedCriticalHeader),
        (no_jwk, ProofError::BadKey),
        (private, ProofError::BadKey),
        (mismatched, ProofError::BadKey),
    ];
    for (header, expected) in cases {
        let proof = sign(&key, header.clone(), &claims());
        assert_eq!(
            verify_proof(&proof, &request()),
            Err(expected),
            "{header:?}"
        );
    }
    // Upper-case typ is the same media type.
    let mut upper = header(&key);
    upper.insert("typ".into(), json!("DPOP+JWT"));
    assert!(verify_proof(&sign(&key, upper, &claims()), &request()).is_ok());
}

#[test]
fn none_symmetric_and_unknown_algorithms_are_refused() {
    let key = key(SigningAlg::Es256);
    let payload = URL_SAFE_NO_PAD.encode(claims().to_string());
    for alg in ["none", "HS256", "ES384", "RS512", ""] {
        let mut h = header(&key);
        h.insert("alg".into(), json!(alg));
        let h = URL_SAFE_NO_PAD.encode(Value::Object(h).to_string());
        let proof = format!("{h}.{payload}.c2ln");
        assert_eq!(
            verify_proof(&proof, &request()),
            Err(ProofError::DisallowedAlgorithm),
            "{alg}"
        );
    }
    // HS256 with the public key as the secret: refused before any key is used.
    let mut h = header(&key);
    h.insert("alg".into(), json!("HS256"));
    let h = URL_SAFE_NO_PAD.encode(Value::Object(h).to_string());
    assert_eq!(
        verify_proof(&format!("{h}.{payload}."), &request()),
        Err(ProofError::Malformed)
    );
}

#[test]
fn a_symmetric_key_is_never_a_proof_key() {
    let key = key(SigningAlg::Es256);
    let mut h = header(&key);
    h.insert("jwk".into(), json!({"kty": "oct", "k": "c2VjcmV0"}));
    assert_eq!(
        verify_proof(&sign(&key, h, &claims()), &request()),
        Err(ProofError::BadKey)
    );
}

#[test]
fn a_signature_by_another_key_is_refused() {
    let key = key(SigningAlg::Es256);
    let other = self::key(SigningAlg::Es256);
    let proof = sign(&other, header(&key), &claims());
    assert_eq!(
        verify_proof(&proof, &request()),
        Err(ProofError::BadSignature)
    );
}

#[test]
fn malformed_proofs_are_refused() {
    let key = key(SigningAlg::Es256);
    let good = sign(&key, header(&key), &claims());
    let long = "a".repeat(MAX_PROOF_BYTES + 1);
    let cases = [
        String::new(),
        "a.b".into(),
        "a.b.c.d".into(),
        format!("{good}.x"),
        "!!!.e30.c2ln".into(),
        long,
    ];
    for proof in cases {
        assert!(verify_proof(&proof, &request()).is_err(), "{proof:.40}");
    }
    // A payload that is not an object.
    let mut h = header(&key);
    h.insert("alg".into(), json!("ES256"));
    let proof = sign(&key, h, &json!({}))
        .replace(&URL_SAFE_NO_PAD.encode("{}"), &URL_SAFE_NO_PAD.encode("[]"));
    assert!(verify_proof(&proof, &request()).is_err());
}

#[test]
fn every_required_claim_is_required() {
    let key = key(SigningAlg::EdDsa);
    for claim in ["jti", "htm", "htu", "iat"] {
        let mut c = claims();
        c.as_object_mut().unwrap().remove(claim);
        assert_eq!(
            verify_proof(&sign(&key, header(&key), &c), &request()),
            Err(ProofError::MissingClaim { claim }),
            "{claim}"
        );
        let mut wrong_type = claims();
        wrong_type[claim] = json!([1]);
        assert_eq!(
            verify_proof(&sign(&key, header(&key), &wrong_type), &request()),
            Err(ProofError::MissingClaim { claim }),
            "{claim}"
        );
    }
    let mut long_jti = claims();
    long_jti["jti"] = json!("j".repeat(MAX_JTI_BYTES + 1));
    assert_eq!(
        verify_proof(&sign(&key, header(&key), &long_jti), &request()),
        Err(ProofError::MissingClaim { claim: "jti" })
    );
}

#[test]
fn method_and_url_must_be_the_requests() {
    let key = key(SigningAlg::Es256);
    let with = |claim: &str, value: Value| {
        let mut c = claims();
        c[claim] = value;
        verify_proof(&sign(&key, header(&key), &c), &request())
    };
    assert_eq!(with("htm", json!("GET")), Err(ProofError::WrongMethod));
    assert_eq!(with("htm", json!("post")), Err(ProofError::WrongMethod));
    for htu in [
        "https://acme.id.example/oauth/token2",
        "https://other.example/oauth/token",
        "http://acme.id.example/oauth/token",
        "https://acme.id.example:8443/oauth/token",
        "/oauth/token",
    ] {
        assert_eq!(with("htu", json!(htu)), Err(ProofError::WrongUrl), "{htu}");
    }
    // RFC 9449 §4.3 item 9 and RFC 3986 §6: query, fragment, case and default port do not matter.
    for htu in [
        "https://acme.id.example/oauth/token?x=1",
        "https://acme.id.example/oauth/token#f",
        "HTTPS://ACME.id.example/oauth/token",
        "https://acme.id.example:443/oauth/token",
    ] {
        assert!(with("htu", json!(htu)).is_ok(), "{htu}");
    }
    // Extra claims are ignored.
    assert!(with("extra", json!({"a": 1})).is_ok());
}

#[test]
fn iat_must_be_within_the_window_either_side() {
    let key = key(SigningAlg::Es256);
    let at = |iat: i64| {
        let mut c = claims();
        c["iat"] = json!(iat);
        verify_proof(&sign(&key, header(&key), &c), &request())
    };
    for ok in [NOW - 60, NOW - 10, NOW + 10, NOW + 60] {
        assert!(at(ok).is_ok(), "{ok}");
    }
    for stale in [NOW - 61, NOW + 61, NOW - 3600, NOW + 3600, 0, i64::MAX] {
        assert_eq!(at(stale), Err(ProofError::Stale), "{stale}");
    }
}

#[test]
fn ath_binds_the_proof_to_the_access_token() {
    let key = key(SigningAlg::Es256);
    let token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
    let resource = ProofRequest {
        method: "GET",
        url: "https://acme.id.example/userinfo",
        access_token: Some(token),
        ..request()
    };
    let mut c = json!({"jti": "j", "htm": "GET", "htu": resource.url, "iat": NOW});
    assert_eq!(
        verify_proof(&sign(&key, header(&key), &c), &resource),
        Err(ProofError::WrongAccessTokenHash)
    );
    c["ath"] = json!(access_token_hash("another token"));
    assert_eq!(
        verify_proof(&sign(&key, header(&key), &c), &resource),
        Err(ProofError::WrongAccessTokenHash)
    );
    c["ath"] = json!(access_token_hash(token));
    assert!(verify_proof(&sign(&key, header(&key), &c), &resource).is_ok());
    // RFC 9449 §4.2's own example.
    assert_eq!(
        access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
        "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    );
}

#[test]
fn the_nonce_is_handed_over() {
    let key = key(SigningAlg::Es256);
    let mut c = claims();
    c["nonce"] = json!("n-1");
    let verified = verify_proof(&sign(&key, header(&key), &c), &request()).unwrap();
    assert_eq!(verified.nonce.as_deref(), Some("n-1"));
    c["nonce"] = json!(7);
    assert_eq!(
        verify_proof(&sign(&key, header(&key), &c), &request()),
        Err(ProofError::MissingClaim { claim: "nonce" })
    );
}

#[test]
fn one_header_only() {
    let mut headers = http::HeaderMap::new();
    assert_eq!(proof_header(&headers), Ok(None));
    headers.insert("dpop", http::HeaderValue::from_static("a.b.c"));
    assert_eq!(proof_header(&headers), Ok(Some("a.b.c")));
    headers.append("dpop", http::HeaderValue::from_static("d.e.f"));
    assert_eq!(proof_header(&headers), Err(ProofError::Multiple));
}

#[test]
fn the_replay_cache_refuses_a_jti_until_its_window_passed() {
    let cache = ReplayCache::new(2);
    let proof = |jkt: &str, jti: &str| VerifiedProof {
        jkt: jkt.into(),
        jti: jti.into(),
        iat: NOW,
        nonce: None,
    };
    cache
        .check_and_record(&proof("k", "1"), NOW + 60, NOW)
        .unwrap();
    assert_eq!(
        cache.check_and_record(&proof("k", "1"), NOW + 60, NOW + 59),
        Err(ProofError::Replayed)
    );
    // The same jti under another key is another proof.
    cache
        .check_and_record(&proof("k2", "1"), NOW + 60, NOW)
        .unwrap();
    // Full: refused rather than forgetting live entries.
    assert_eq!(
        cache.check_and_record(&proof("k", "2"), NOW + 60, NOW),
        Err(ProofError::Replayed)
    );
    // Once the window passed, entries are forgotten and room is made.
    cache
        .check_and_record(&proof("k", "1"), NOW + 120, NOW + 60)
        .unwrap();
    cache
        .check_and_record(&proof("k", "2"), NOW + 120, NOW + 60)
        .unwrap();
}

#[test]
fn the_replay_cache_forgets_by_expiry_not_by_insertion_order() {
    let cache = ReplayCache::new(1_000);
    let proof = |jti: &str| VerifiedProof {
        jkt: "k".into(),
        jti: jti.into(),
        iat: NOW,
        nonce: None,
    };
    // Recorded out of expiry order: a late iat first, an early one second.
    cache
        .check_and_record(&proof("late"), NOW + 90, NOW)
        .unwrap();
    cache
        .check_and_record(&proof("early"), NOW + 30, NOW)
        .unwrap();
    // At NOW + 31 the early one is forgotten, the late one still remembered.
    cache
        .check_and_record(&proof("early"), NOW + 91, NOW + 31)
        .unwrap();
    assert_eq!(
        cache.check_and_record(&proof("late"), NOW + 91, NOW + 31),
        Err(ProofError::Replayed)
    );
    // Many proofs of one second are forgotten together, at that second and not before.
    for i in 0..500 {
        cache
            .check_and_record(&proof(&format!("b{i}")), NOW + 100, NOW + 40)
            .unwrap();
    }
    assert_eq!(
        cache.check_and_record(&proof("b7"), NOW + 160, NOW + 99),
        Err(ProofError::Replayed)
    );
    cache
        .check_and_record(&proof("b7"), NOW + 160, NOW + 100)
        .unwrap();
}

#[test]
fn errors_name_their_oauth_code_and_challenge() {
    assert_eq!(ProofError::UseNonce.error_code(), "use_dpop_nonce");
    assert_eq!(ProofError::Stale.error_code(), "invalid_dpop_proof");
    let challenge = ProofError::BadSignature.www_authenticate();
    assert!(
        challenge.starts_with("DPoP error=\"invalid_dpop_proof\""),
        "{challenge}"
    );
    assert!(
        challenge.ends_with("algs=\"ES256 EdDSA RS256 PS256\""),
        "{challenge}"
    );
}

#[test]
fn thumbprints_follow_rfc_7638() {
    // RFC 7638 §3.1's example key and thumbprint.
    let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
    let jwk = json!({"kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"});
    let bytes = jwk.to_string();
    let jwk = members::parse_object::<Jwk<'_>>(bytes.as_bytes()).unwrap();
    let key = public_key_for(jwk, ProofAlg::Rs256).unwrap();
    assert_eq!(
        key.thumbprint(),
        "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    );
}

#[test]
fn key_members_must_be_canonical_and_of_the_right_size() {
    let key = key(SigningAlg::Es256);
    let jwk = public_jwk(&key);
    let x = jwk["x"].as_str().unwrap().to_owned();
    // 32 bytes take 43 base64url characters, whose last 2 bits are unused: setting one makes
    // another string of the same bytes, and so another thumbprint for the same key.
    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = ALPHABET.find(x.chars().last().unwrap()).unwrap();
    let last = ALPHABET.chars().nth(last ^ 1).unwrap();
    let mut non_canonical = jwk.clone();
    non_canonical["x"] = json!(format!("{}{last}", &x[..x.len() - 1]));
    let mut short = jwk.clone();
    short["x"] = json!(URL_SAFE_NO_PAD.encode([7u8; 31]));
    let mut padded = jwk.clone();
    padded["y"] = json!(format!("{}=", jwk["y"].as_str().unwrap()));
    let mut not_a_string = jwk.clone();
    not_a_string["y"] = json!(42);
    for bad in [non_canonical, short, padded, not_a_string] {
        let mut h = header(&key);
        h.insert("jwk".into(), bad.clone());
        let proof = sign(&key, h, &claims());
        assert_eq!(
            verify_proof(&proof, &request()).unwrap_err(),
            ProofError::BadKey,
            "{bad}"
        );
    }
}

#[test]
fn a_point_off_the_curve_or_the_other_rsa_padding_verifies_nothing() {
    let key = key(SigningAlg::Es256);
    let mut off_curve = public_jwk(&key);
    off_curve["y"] = json!(URL_SAFE_NO_PAD.encode([1u8; 32]));
    let mut h = header(&key);
    h.insert("jwk".into(), off_curve);
    let proof = sign(&key, h, &claims());
    assert_eq!(
        verify_proof(&proof, &request()).unwrap_err(),
        ProofError::BadSignature
    );
    // An RS256 signature presented as PS256 (same key type, other padding).
    let rsa = self::key(SigningAlg::Rs256);
    let proof = sign(&rsa, header(&rsa), &claims());
    let mut segments: Vec<String> = proof.split('.').map(str::to_owned).collect();
    let mut relabelled = header(&rsa);
    relabelled.insert("alg".into(), json!("PS256"));
    segments[0] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&relabelled).unwrap());
    let forged = segments.join(".");
    assert_eq!(
        verify_proof(&forged, &request()).unwrap_err(),
        ProofError::BadSignature
    );
}

/// A proof whose header and claims are the JSON texts given, as sent (duplicates, escapes and
/// all), signed by an Ed25519 key whose public `x` replaces `{x}` in `header`.
fn raw_proof(header: &str, claims: &str) -> (String, String) {
    use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&aws_lc_rs::rand::SystemRandom::new()).unwrap();
    let key = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let x = URL_SAFE_NO_PAD.encode(key.public_key().as_ref());
    let header = header.replace("{x}", &x);
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(&header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let signature = URL_SAFE_NO_PAD.encode(key.sign(input.as_bytes()).as_ref());
    (format!("{input}.{signature}"), x)
}

const RAW_HEADER: &str =
    r#"{"typ":"dpop+jwt","alg":"EdDSA","jwk":{"kty":"OKP","crv":"Ed25519","x":"{x}"}}"#;
const RAW_CLAIMS: &str =
    r#"{"jti":"j-1","htm":"POST","htu":"https://acme.id.example/oauth/token","iat":1800000000}"#;

#[test]
fn members_are_read_as_a_json_value_would_have_them() {
    // The reference proof verifies, and its thumbprint is RFC 7638's of its key.
    let (proof, x) = raw_proof(RAW_HEADER, RAW_CLAIMS);
    let verified = verify_proof(&proof, &request()).unwrap();
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    assert_eq!(
        verified.jkt,
        URL_SAFE_NO_PAD.encode(digest::digest(&digest::SHA256, canonical.as_bytes()))
    );
    // JSON escapes decode to the same strings: same proof, same thumbprint.
    let escaped_header = RAW_HEADER
        .replace(r#""typ":"dpop+jwt""#, r#""typ":"dpop\u002bjwt""#)
        .replace(r#""kty":"OKP""#, r#""k\u0074y":"OKP""#);
    let escaped_claims = RAW_CLAIMS.replace(r#""jti":"j-1""#, r#""jti":"j\u002d1""#);
    let (proof, x) = raw_proof(&escaped_header, &escaped_claims);
    let verified = verify_proof(&proof, &request()).unwrap();
    assert_eq!(verified.jti, "j-1");
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    assert_eq!(
        verified.jkt,
        URL_SAFE_NO_PAD.encode(digest::digest(&digest::SHA256, canonical.as_bytes()))
    );
    // A member given twice counts with its last value, in the header, the jwk and the claims.
    let twice = RAW_HEADER.replace(r#"{"typ":"dpop+jwt""#, r#"{"typ":"JWT","typ":"dpop+jwt""#);
    assert!(verify_proof(&raw_proof(&twice, RAW_CLAIMS).0, &request()).is_ok());
    let twice = RAW_HEADER.replace(r#"{"typ":"dpop+jwt""#, r#"{"typ":"dpop+jwt","typ":"JWT""#);
    assert_eq!(
        verify_proof(&raw_proof(&twice, RAW_CLAIMS).0, &request()),
        Err(ProofError::WrongType)
    );
    let twice = RAW_HEADER.replace(r#""kty":"OKP""#, r#""kty":"EC","kty":"OKP""#);
    assert!(verify_proof(&raw_proof(&twice, RAW_CLAIMS).0, &request()).is_ok());
    let twice = RAW_CLAIMS.replace(r#""htm":"POST""#, r#""htm":"POST","htm":"GET""#);
    assert_eq!(
        verify_proof(&raw_proof(RAW_HEADER, &twice).0, &request()),
        Err(ProofError::WrongMethod)
    );
}

#[test]
fn members_of_the_wrong_json_type_are_refused_like_missing_ones() {
    let with_header = |from: &str, to: &str| {
        let header = RAW_HEADER.replace(from, to);
        verify_proof(&raw_proof(&header, RAW_CLAIMS).0, &request())
    };
    // Not an object: an array, even one listing the members in order, is no header.
    assert_eq!(
        with_header(RAW_HEADER, r#"["dpop+jwt","EdDSA",null,{"kty":"OKP"}]"#),
        Err(ProofError::Malformed)
    );
    assert_eq!(
        with_header(r#""typ":"dpop+jwt""#, r#""typ":["dpop+jwt"]"#),
        Err(ProofError::WrongType)
    );
    assert_eq!(
        with_header(r#""alg":"EdDSA""#, r#""alg":{"EdDSA":1}"#),
        Err(ProofError::DisallowedAlgorithm)
    );
    // crit is refused whatever its value, null included.
    assert_eq!(
        with_header(r#""alg":"EdDSA""#, r#""alg":"EdDSA","crit":null"#),
        Err(ProofError::UnsupportedCriticalHeader)
    );
    assert_eq!(
        with_header(
            r#"{"kty":"OKP","crv":"Ed25519","x":"{x}"}"#,
            r#""OKP Ed25519 {x}""#
        ),
        Err(ProofError::BadKey)
    );
    // A private member is refused whatever its value.
    assert_eq!(
        with_header(r#""kty":"OKP""#, r#""kty":"OKP","d":null"#),
        Err(ProofError::BadKey)
    );
    let with_claims = |from: &str, to: &str| {
        let claims = RAW_CLAIMS.replace(from, to);
        verify_proof(&raw_proof(RAW_HEADER, &claims).0, &request())
    };
    assert_eq!(with_claims(RAW_CLAIMS, "[]"), Err(ProofError::Malformed));
    assert_eq!(
        with_claims(RAW_CLAIMS, &format!("{RAW_CLAIMS} {{}}")),
        Err(ProofError::Malformed)
    );
    for iat in [
        "1800000000.0",
        "1.8e9",
        "\"1800000000\"",
        "9223372036854775808",
        "null",
    ] {
        assert_eq!(
            with_claims("1800000000", iat),
            Err(ProofError::MissingClaim { claim: "iat" }),
            "{iat}"
        );
    }
    assert_eq!(
        with_claims(r#""htm":"POST""#, r#""htm":null"#),
        Err(ProofError::MissingClaim { claim: "htm" })
    );
    // A null nonce is not an absent one.
    assert_eq!(
        with_claims(r#""htm":"POST""#, r#""htm":"POST","nonce":null"#),
        Err(ProofError::MissingClaim { claim: "nonce" })
    );
}

#[test]
fn the_replay_cache_keeps_scopes_apart() {
    let cache = ReplayCache::new(10);
    cache
        .check_and_record_in("tenant-a", "k", "1", NOW + 60, NOW)
        .unwrap();
    assert_eq!(
        cache.check_and_record_in("tenant-a", "k", "1", NOW + 60, NOW),
        Err(ProofError::Replayed)
    );
    cache
        .check_and_record_in("tenant-b", "k", "1", NOW + 60, NOW)
        .unwrap();
    // Lengths are part of the input: moving a character between scope and key is another proof.
    cache
        .check_and_record_in("tenant-", "ak", "1", NOW + 60, NOW)
        .unwrap();
    cache
        .check_and_record_in("", "k", "1", NOW + 60, NOW)
        .unwrap();
}
