//! Interoperability with an independent JOSE implementation: tokens we sign verify with
//! jsonwebtoken 11 using only the JWK we publish (RFC 7515, RFC 7517, RFC 7518, RFC 8037), our
//! `kid` equals its RFC 7638 thumbprint, and any tampering is caught by it.

// clippy.toml allows these inside `#[test]` functions only; the shared helpers here are test code too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use jsonwebtoken::jwk::{Jwk, JwkSet, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use serde_json::{Value, json};
use svc_crypto::{Jwks, SigningAlg, SigningKey, verify_jwt_signature};

const ISSUER: &str = "https://id.example.com/t/acme";
const AUDIENCE: &str = "https://api.example.com";

fn install_provider() {
    // research §5.3: jsonwebtoken panics unless exactly one provider is chosen; install it
    // explicitly so feature unification elsewhere in the workspace cannot break this test.
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
}

fn theirs(alg: SigningAlg) -> Algorithm {
    match alg {
        SigningAlg::Es256 => Algorithm::ES256,
        SigningAlg::EdDsa => Algorithm::EdDSA,
        SigningAlg::Rs256 => Algorithm::RS256,
    }
}

fn claims() -> Value {
    let now = jsonwebtoken::get_current_timestamp();
    json!({
        "iss": ISSUER,
        "sub": "usr_01jd0000000000000000000000",
        "aud": AUDIENCE,
        "iat": now,
        "exp": now + 900,
        "jti": "j1",
        "scope": "openid profile",
    })
}

fn validation(alg: SigningAlg) -> Validation {
    let mut validation = Validation::new(theirs(alg));
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[AUDIENCE]);
    validation
}

/// The decoding key jsonwebtoken builds from our published JWK (found in our JWKS document).
fn their_key(jwks_document: &str, kid: &str) -> (Jwk, DecodingKey) {
    let set: JwkSet = serde_json::from_str(jwks_document).unwrap();
    let jwk = set.find(kid).expect("our kid is in our JWKS").clone();
    let key = DecodingKey::from_jwk(&jwk).unwrap();
    (jwk, key)
}

#[test]
fn jsonwebtoken_verifies_our_tokens_with_our_published_jwk() {
    install_provider();
    for alg in SigningAlg::ALL {
        let key = SigningKey::generate(alg).unwrap();
        let jwks = Jwks::new([key.public_key().clone()]).unwrap();
        let (jwk, decoding) = their_key(jwks.document(), key.kid());
        assert_eq!(
            jwk.thumbprint(ThumbprintHash::SHA256).unwrap(),
            key.kid(),
            "{alg}: RFC 7638"
        );

        let typ = if alg == SigningAlg::Rs256 {
            "JWT"
        } else {
            "at+jwt"
        };
        let token = key.sign_jwt(typ, &claims()).unwrap();
        let data = decode::<Value>(&token, &decoding, &validation(alg))
            .unwrap_or_else(|e| panic!("{alg}: {e}"));
        assert_eq!(data.header.alg, theirs(alg));
        assert_eq!(data.header.kid.as_deref(), Some(key.kid()));
        assert_eq!(data.header.typ.as_deref(), Some(typ));
        assert_eq!(data.claims, claims_without_time(&claims(), &data.claims));
    }
}

/// Our claims with `iat`/`exp` taken from `got` (the clock may tick between two `claims()`).
fn claims_without_time(expected: &Value, got: &Value) -> Value {
    let mut expected = expected.clone();
    expected["iat"] = got["iat"].clone();
    expected["exp"] = got["exp"].clone();
    expected
}

#[test]
fn jsonwebtoken_rejects_tampered_tokens_and_foreign_keys() {
    install_provider();
    for alg in SigningAlg::ALL {
        let key = SigningKey::generate(alg).unwrap();
        let (_, decoding) = their_key(&Jwks::render([key.public_key()]), key.kid());
        let token = key.sign_jwt("at+jwt", &claims()).unwrap();
        let [header, payload, signature]: [&str; 3] =
            token.split('.').collect::<Vec<_>>().try_into().unwrap();

        let mut forged_claims = claims();
        forged_claims["sub"] = json!("usr_admin");
        let forged_payload = svc_b64(&serde_json::to_vec(&forged_claims).unwrap());
        let forged = format!("{header}.{forged_payload}.{signature}");
        assert!(
            decode::<Value>(&forged, &decoding, &validation(alg)).is_err(),
            "{alg} payload"
        );

        // Flip one bit in the middle of the signature.
        let mut sig = signature.as_bytes().to_vec();
        let mid = sig.len() / 2;
        sig[mid] = if sig[mid] == b'A' { b'B' } else { b'A' };
        let bad_sig = format!("{header}.{payload}.{}", String::from_utf8(sig).unwrap());
        assert!(
            decode::<Value>(&bad_sig, &decoding, &validation(alg)).is_err(),
            "{alg} signature"
        );

        let other = SigningKey::generate(alg).unwrap();
        let (_, other_decoding) = their_key(&Jwks::render([other.public_key()]), other.kid());
        assert!(
            decode::<Value>(&token, &other_decoding, &validation(alg)).is_err(),
            "{alg} other key"
        );

        // And the untouched token still verifies, so the failures above are the tampering.
        assert!(decode::<Value>(&token, &decoding, &validation(alg)).is_ok());
    }
}

fn svc_b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The reverse direction for the curve algorithms: jsonwebtoken signs with the PKCS#8 we export
/// (Ed25519 must be v1 for it, research §5.3) and our verifier accepts the result.
#[test]
fn our_verifier_accepts_jsonwebtoken_signatures_from_our_exported_keys() {
    install_provider();
    for alg in [SigningAlg::Es256, SigningAlg::EdDsa] {
        let key = SigningKey::generate(alg).unwrap();
        let der = key.to_pkcs8().unwrap();
        let encoding = match alg {
            SigningAlg::Es256 => EncodingKey::from_ec_der(&der),
            _ => EncodingKey::from_ed_der(&der),
        };
        let their_jwk = Jwk::from_encoding_key(&encoding, theirs(alg)).unwrap();
        assert_eq!(
            their_jwk.thumbprint(ThumbprintHash::SHA256).unwrap(),
            key.kid(),
            "{alg}"
        );

        let mut header = Header::new(theirs(alg));
        header.kid = Some(key.kid().to_owned());
        let token = encode(&header, &claims(), &encoding).unwrap();
        let jwks = Jwks::new([key.public_key().clone()]).unwrap();
        let verified = verify_jwt_signature(&jwks, &token, alg).unwrap();
        assert_eq!(verified.claims["iss"], ISSUER);
    }
}
