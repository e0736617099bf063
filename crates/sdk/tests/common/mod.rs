//! Shared test fixtures: freshly generated signing keys (aws-lc-rs through jsonwebtoken), their
//! JWKs, tokens signed with them, and a set of claims and requirements that pass every rule.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use svc_sdk::{Requirements, SubjectType};

pub(crate) const ISSUER: &str = "https://acme.id.example";
pub(crate) const AUDIENCE: &str = "https://acme.id.example/api/v1";
pub(crate) const TENANT: &str = "ten_01jd000000000000000000acme";
pub(crate) const SCOPE: &str = "users:read";
/// A fixed "now" (2027-01-15), so no test depends on the wall clock.
pub(crate) const NOW: i64 = 1_800_000_000;

/// A signing key and the public JWK a JWKS would publish for it.
pub(crate) struct TestKey {
    pub(crate) alg: Algorithm,
    pub(crate) kid: String,
    pub(crate) encoding: EncodingKey,
    pub(crate) jwk: Jwk,
}

impl TestKey {
    pub(crate) fn es256(kid: &str) -> Self {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let der = pair.to_pkcs8v1().unwrap();
        Self::new(
            Algorithm::ES256,
            kid,
            EncodingKey::from_ec_der(der.as_ref()),
        )
    }

    pub(crate) fn eddsa(kid: &str) -> Self {
        // Research note §5.3: aws-lc writes PKCS#8 v2, jsonwebtoken's JWK export needs v1.
        let pair = Ed25519KeyPair::generate().unwrap();
        let der = pair.to_pkcs8v1().unwrap();
        Self::new(
            Algorithm::EdDSA,
            kid,
            EncodingKey::from_ed_der(der.as_ref()),
        )
    }

    pub(crate) fn rs256(kid: &str) -> Self {
        let pair = RsaKeyPair::generate(KeySize::Rsa2048).unwrap();
        let der = AsDer::<Pkcs8V1Der<'static>>::as_der(&pair).unwrap();
        let pem = pem("PRIVATE KEY", der.as_ref());
        Self::new(
            Algorithm::RS256,
            kid,
            EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
        )
    }

    fn new(alg: Algorithm, kid: &str, encoding: EncodingKey) -> Self {
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        Self {
            alg,
            kid: kid.to_owned(),
            encoding,
            jwk,
        }
    }

    /// The RFC 9068 header svc puts on access tokens.
    pub(crate) fn header(&self) -> Header {
        let mut header = Header::new(self.alg);
        header.typ = Some("at+jwt".into());
        header.kid = Some(self.kid.clone());
        header
    }

    pub(crate) fn sign(&self, claims: &Value) -> String {
        self.sign_with(&self.header(), claims)
    }

    pub(crate) fn sign_with(&self, header: &Header, claims: &Value) -> String {
        jsonwebtoken::encode(header, claims, &self.encoding).unwrap()
    }
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

pub(crate) fn jwks(keys: &[&TestKey]) -> JwkSet {
    JwkSet {
        keys: keys.iter().map(|k| k.jwk.clone()).collect(),
    }
}

/// Claims that pass every rule under [`requirements`] at [`NOW`].
pub(crate) fn claims() -> Value {
    json!({
        "iss": ISSUER,
        "sub": "usr_01jd0000000000000000000001",
        "aud": AUDIENCE,
        "exp": NOW + 900,
        "nbf": NOW,
        "iat": NOW,
        "jti": "at_01jd0000000000000000000001",
        "tenant_id": TENANT,
        "client_id": "app_01jd0000000000000000000001",
        "scope": "openid users:read",
        "subject_type": "human",
    })
}

/// The route: management API of the tenant, `users:read`, humans and systems, no leeway.
pub(crate) fn requirements() -> Requirements {
    Requirements::new(ISSUER, AUDIENCE, TENANT)
        .with_scope(SCOPE)
        .with_subject_types([SubjectType::Human, SubjectType::System])
        .with_leeway_secs(0)
}

/// A compact JWS with the given raw header and claims and a fake signature (for tokens no
/// library would sign: `alg: none` and the like).
pub(crate) fn unsigned(header: &Value, claims: &Value, signature: &str) -> String {
    let h = URL_SAFE_NO_PAD.encode(serde_json::to_vec(header).unwrap());
    let c = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap());
    format!("{h}.{c}.{signature}")
}
