//! Public JWKs and the JWKS document (RFC 7517, RFC 7518 §6, RFC 8037 §2) and RFC 7638
//! thumbprints, which are our `kid`s.
//!
//! Owns the public half only: a [`PublicJwk`] cannot hold `d`, `p`, `q`, `dp`, `dq`, `qi` or `k`,
//! and parsing one that carries them fails, so a private key can never reach the JWKS endpoint
//! through this type. The runtime keeps the public JWKs of every published key (next, active and
//! retired; retired keys need no private half) and renders the document once per key-set change.

use crate::CryptoError;
use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use std::collections::HashSet;
use svc_domain::SigningAlg;

/// Base64url without padding (RFC 7515 §2 "Base64url Encoding"), as every JOSE member uses.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Strict base64url decoding: padding and non-canonical trailing bits are rejected.
pub(crate) fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// The smallest RSA modulus we accept, in bytes (RFC 7518 §3.3: 2048 bits or larger).
pub(crate) const MIN_RSA_MODULUS_BYTES: usize = 256;

/// Members that only a private (or symmetric) JWK carries (RFC 7518 §6.2.2, §6.3.2, §6.4.1).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// The key material of a public JWK, as raw bytes.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum PublicMaterial {
    /// P-256 point; coordinates are fixed-length 32 bytes (RFC 7518 §6.2.1.2, §6.2.1.3).
    Ec { x: [u8; 32], y: [u8; 32] },
    /// Ed25519 public key (RFC 8037 §2).
    Okp { x: [u8; 32] },
    /// RSA modulus and exponent, big-endian without leading zeros (RFC 7518 §6.3.1).
    Rsa { n: Vec<u8>, e: Vec<u8> },
}

impl PublicMaterial {
    /// The RFC 7638 §3.2 canonical JSON: required members only, lexicographic order, no
    /// whitespace. Base64url text needs no JSON escaping, so formatting is exact.
    fn thumbprint_input(&self) -> String {
        match self {
            Self::Ec { x, y } => format!(
                r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
                b64url(x),
                b64url(y)
            ),
            Self::Okp { x } => format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#, b64url(x)),
            Self::Rsa { n, e } => {
                format!(r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#, b64url(e), b64url(n))
            }
        }
    }

    /// The RFC 7638 SHA-256 thumbprint, base64url: the `kid` of the key.
    pub(crate) fn thumbprint(&self) -> String {
        b64url(digest(&SHA256, self.thumbprint_input().as_bytes()).as_ref())
    }

    /// Which algorithm this material can be used with (one key, one algorithm: RFC 8725 §3.1).
    fn fits(&self, alg: SigningAlg) -> bool {
        matches!(
            (self, alg),
            (Self::Ec { .. }, SigningAlg::Es256)
                | (Self::Okp { .. }, SigningAlg::EdDsa)
                | (Self::Rsa { .. }, SigningAlg::Rs256)
        )
    }
}

/// The public JWK of one svc signing key: `kty`, the curve or RSA parameters, `kid` (the RFC
/// 7638 thumbprint), `alg` and `use: "sig"`. Never private members.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicJwk {
    alg: SigningAlg,
    kid: String,
    material: PublicMaterial,
}

impl std::fmt::Debug for PublicJwk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicJwk")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl PublicJwk {
    /// Builds the JWK of freshly derived key material; the `kid` is computed, not supplied.
    pub(crate) fn from_material(alg: SigningAlg, material: PublicMaterial) -> Self {
        let kid = material.thumbprint();
        Self { alg, kid, material }
    }

    /// The key id: the RFC 7638 SHA-256 thumbprint, base64url.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The algorithm this key signs with.
    pub fn alg(&self) -> SigningAlg {
        self.alg
    }

    pub(crate) fn material(&self) -> &PublicMaterial {
        &self.material
    }

    /// The JWK as a JSON object, as published in JWKS.
    pub fn to_json(&self) -> Value {
        let mut jwk = Map::new();
        match &self.material {
            PublicMaterial::Ec { x, y } => {
                jwk.insert("kty".into(), "EC".into());
                jwk.insert("crv".into(), "P-256".into());
                jwk.insert("x".into(), b64url(x).into());
                jwk.insert("y".into(), b64url(y).into());
            }
            PublicMaterial::Okp { x } => {
                jwk.insert("kty".into(), "OKP".into());
                jwk.insert("crv".into(), "Ed25519".into());
                jwk.insert("x".into(), b64url(x).into());
            }
            PublicMaterial::Rsa { n, e } => {
                jwk.insert("kty".into(), "RSA".into());
                jwk.insert("n".into(), b64url(n).into());
                jwk.insert("e".into(), b64url(e).into());
            }
        }
        jwk.insert("kid".into(), self.kid.clone().into());
        jwk.insert("alg".into(), self.alg.as_str().into());
        jwk.insert("use".into(), "sig".into());
        Value::Object(jwk)
    }

    /// The JWK as compact JSON text (what the store keeps in `public_jwk`).
    pub fn to_json_string(&self) -> String {
        self.to_json().to_string()
    }

    /// Parses stored JWK text; see [`PublicJwk::from_json`].
    pub fn parse(text: &str) -> Result<Self, CryptoError> {
        let value: Value =
            serde_json::from_str(text).map_err(|_| CryptoError::InvalidJwk("not JSON"))?;
        Self::from_json(&value)
    }

    /// Parses a public JWK that svc published. Strict on purpose: the `alg` must be one of ours
    /// and match `kty`/`crv`, coordinates must be fixed-length, `use` (if present) must be
    /// `sig`, private members are refused, and the `kid` must equal the RFC 7638 thumbprint, so
    /// a corrupted row or a swapped key is caught when the key set is loaded, not at verify time.
    pub fn from_json(value: &Value) -> Result<Self, CryptoError> {
        let jwk = value
            .as_object()
            .ok_or(CryptoError::InvalidJwk("not a JSON object"))?;
        if PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)) {
            return Err(CryptoError::InvalidJwk("private key members present"));
        }
        let text = |name: &'static str| -> Result<&str, CryptoError> {
            jwk.get(name)
                .and_then(Value::as_str)
                .ok_or(CryptoError::InvalidJwk("missing or non-string member"))
        };
        let bytes = |name: &'static str| -> Result<Vec<u8>, CryptoError> {
            b64url_decode(text(name)?).ok_or(CryptoError::InvalidJwk("member is not base64url"))
        };
        let fixed32 = |name: &'static str| -> Result<[u8; 32], CryptoError> {
            <[u8; 32]>::try_from(bytes(name)?.as_slice())
                .map_err(|_| CryptoError::InvalidJwk("coordinate is not 32 bytes"))
        };
        let alg =
            SigningAlg::parse(text("alg")?).ok_or(CryptoError::InvalidJwk("unsupported alg"))?;
        if let Some(usage) = jwk.get("use")
            && usage.as_str() != Some("sig")
        {
            return Err(CryptoError::InvalidJwk("use is not sig"));
        }
        let material = match (text("kty")?, jwk.get("crv").and_then(Value::as_str)) {
            ("EC", Some("P-256")) => PublicMaterial::Ec {
                x: fixed32("x")?,
                y: fixed32("y")?,
            },
            ("OKP", Some("Ed25519")) => PublicMaterial::Okp { x: fixed32("x")? },
            ("RSA", None) => {
                let (n, e) = (bytes("n")?, bytes("e")?);
                // RFC 7518 §6.3.1.1/§6.3.1.2: minimal big-endian encoding, no leading zero.
                if n.first().is_none_or(|b| *b == 0) || e.first().is_none_or(|b| *b == 0) {
                    return Err(CryptoError::InvalidJwk("RSA parameter has a leading zero"));
                }
                if n.len() < MIN_RSA_MODULUS_BYTES {
                    return Err(CryptoError::InvalidJwk("RSA modulus under 2048 bits"));
                }
                PublicMaterial::Rsa { n, e }
            }
            _ => return Err(CryptoError::InvalidJwk("unsupported kty/crv")),
        };
        if !material.fits(alg) {
            return Err(CryptoError::InvalidJwk("alg does not match kty/crv"));
        }
        let key = Self::from_material(alg, material);
        if text("kid")? != key.kid {
            return Err(CryptoError::InvalidJwk(
                "kid is not the RFC 7638 thumbprint",
            ));
        }
        Ok(key)
    }
}

/// A JWK Set (RFC 7517 §5): the public keys a tenant publishes, with the document pre-rendered
/// so the JWKS endpoint serves a string instead of serialising per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jwks {
    keys: Vec<PublicJwk>,
    document: String,
}

impl Jwks {
    /// A key set in the given order (callers pass it in a stable order, e.g. the store's
    /// "oldest first", so the document and any ETag derived from it only change with the set).
    /// Fails on a repeated `kid` (RFC 7517 §4.5).
    pub fn new(keys: impl IntoIterator<Item = PublicJwk>) -> Result<Self, CryptoError> {
        let keys: Vec<PublicJwk> = keys.into_iter().collect();
        let mut seen = HashSet::new();
        for key in &keys {
            if !seen.insert(key.kid()) {
                return Err(CryptoError::DuplicateKid(key.kid().to_owned()));
            }
        }
        let document = Self::render(&keys);
        Ok(Self { keys, document })
    }

    /// Renders `{"keys":[...]}` for the given keys, in order.
    pub fn render<'a>(keys: impl IntoIterator<Item = &'a PublicJwk>) -> String {
        let keys: Vec<Value> = keys.into_iter().map(PublicJwk::to_json).collect();
        serde_json::json!({ "keys": keys }).to_string()
    }

    /// The rendered JWKS document (`application/jwk-set+json`).
    pub fn document(&self) -> &str {
        &self.document
    }

    /// The key with this `kid`, if published.
    pub fn find(&self, kid: &str) -> Option<&PublicJwk> {
        self.keys.iter().find(|key| key.kid() == kid)
    }

    /// The published keys, in document order.
    pub fn keys(&self) -> &[PublicJwk] {
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 7638 §3.1 worked example: this RSA key has the thumbprint
    /// `NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs`.
    #[test]
    fn rfc7638_example_thumbprint() {
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        let jwk = json!({"kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256",
            "kid": "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"});
        let parsed = PublicJwk::from_json(&jwk).unwrap();
        assert_eq!(parsed.kid(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
        assert_eq!(parsed.alg(), SigningAlg::Rs256);
    }

    /// RFC 8037 Appendix A.3: the thumbprint of the Appendix A.2 Ed25519 public key.
    #[test]
    fn rfc8037_ed25519_thumbprint() {
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
            "kid": "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"});
        assert!(PublicJwk::from_json(&jwk).is_ok());
    }

    fn sample_ec() -> PublicJwk {
        PublicJwk::from_material(
            SigningAlg::Es256,
            PublicMaterial::Ec {
                x: [1; 32],
                y: [2; 32],
            },
        )
    }

    #[test]
    fn round_trips_through_text() {
        let key = sample_ec();
        let text = key.to_json_string();
        assert_eq!(PublicJwk::parse(&text).unwrap(), key);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["use"], "sig");
        assert_eq!(value["kty"], "EC");
    }

    #[test]
    fn refuses_private_members_wrong_kid_and_mismatched_alg() {
        let good = sample_ec().to_json();
        let with = |name: &str, v: Value| {
            let mut jwk = good.clone();
            jwk[name] = v;
            PublicJwk::from_json(&jwk).unwrap_err().to_string()
        };
        assert!(with("d", json!("AAAA")).contains("private"));
        assert!(with("kid", json!("other")).contains("thumbprint"));
        assert!(with("alg", json!("EdDSA")).contains("does not match"));
        assert!(with("alg", json!("none")).contains("unsupported alg"));
        assert!(with("use", json!("enc")).contains("use"));
        assert!(with("x", json!(b64url(&[1; 31]))).contains("32 bytes"));
        assert!(with("x", json!(format!("{}=", b64url(&[1; 32])))).contains("base64url"));
    }

    #[test]
    fn jwks_renders_keys_in_order_and_rejects_duplicate_kids() {
        let a = sample_ec();
        let b = PublicJwk::from_material(SigningAlg::EdDsa, PublicMaterial::Okp { x: [3; 32] });
        let jwks = Jwks::new([a.clone(), b.clone()]).unwrap();
        let doc: Value = serde_json::from_str(jwks.document()).unwrap();
        assert_eq!(doc["keys"][0]["kid"], a.kid());
        assert_eq!(doc["keys"][1]["kid"], b.kid());
        assert_eq!(jwks.find(b.kid()), Some(&b));
        assert_eq!(jwks.find("nope"), None);
        assert_eq!(jwks.document(), Jwks::render([&a, &b]));
        assert!(matches!(
            Jwks::new([a.clone(), a]),
            Err(CryptoError::DuplicateKid(_))
        ));
        assert_eq!(Jwks::render([]), r#"{"keys":[]}"#);
    }
}
