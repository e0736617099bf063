//! Compact JWS (RFC 7515 §7.1) for our JWTs: signing with a parsed [`SigningKey`], and a
//! signature-only verifier against our own [`Jwks`] for tests and the SDK.
//!
//! Only the signature layer lives here. Claim rules (`iss`, `aud`, `exp`, `nbf`, `tenant_id`,
//! scopes, `typ`, ...) belong to the token engine and the SDK's validation contract.

use crate::jwk::{PublicMaterial, b64url, b64url_decode};
use crate::{CryptoError, Jwks, SigningKey};
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ED25519, RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents,
    UnparsedPublicKey,
};
use serde_json::{Map, Value};
use svc_domain::SigningAlg;

impl SigningKey {
    /// Signs `claims` as a compact JWS with the protected header `{"alg","kid","typ"}`.
    ///
    /// `typ` is e.g. `at+jwt` for access tokens (RFC 9068 §2.1) or `JWT` for ID tokens
    /// (RFC 7519 §5.1). `claims` must be a JSON object (RFC 7519 §7.1); it is serialised as given,
    /// without reordering or validation.
    pub fn sign_jwt(&self, typ: &str, claims: &Value) -> Result<String, CryptoError> {
        // RFC 7515 §4.1.9: `typ` is a media type; refuse anything that could not be one.
        if typ.is_empty() || !typ.bytes().all(|b| b.is_ascii_graphic() && b != b'"') {
            return Err(CryptoError::InvalidTyp);
        }
        let mut header = Map::new();
        header.insert("kid".into(), self.kid().into());
        header.insert("typ".into(), typ.into());
        self.sign_jws(header, claims)
    }

    /// Signs `claims` as a compact JWS with the protected header `header` plus this key's
    /// `alg` (which replaces any `alg` given). For headers other than ours, e.g. a DPoP proof's
    /// `{"typ": "dpop+jwt", "jwk": …}` (RFC 9449 §4.2).
    pub fn sign_jws(
        &self,
        mut header: Map<String, Value>,
        claims: &Value,
    ) -> Result<String, CryptoError> {
        if !claims.is_object() {
            return Err(CryptoError::ClaimsNotAnObject);
        }
        header.insert("alg".into(), self.alg().as_str().into());
        let header = b64url(Value::Object(header).to_string().as_bytes());
        let payload = b64url(&serde_json::to_vec(claims)?);

        // RFC 7515 §5.1: the signing input is ASCII(BASE64URL(header) || '.' || BASE64URL(payload)).
        let mut token = String::with_capacity(header.len() + payload.len() + 2 + 344);
        token.push_str(&header);
        token.push('.');
        token.push_str(&payload);
        let signature = self.sign_bytes(token.as_bytes())?;
        token.push('.');
        token.push_str(&b64url(&signature));
        Ok(token)
    }
}

/// What a signature-verified JWS carried. The claims are authentic but NOT validated: expiry,
/// issuer, audience and the rest are the caller's job.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedJws {
    /// The `kid` of the key that verified the signature.
    pub kid: String,
    /// The header `typ`, if any.
    pub typ: Option<String>,
    /// The payload, a JSON object.
    pub claims: Value,
}

/// Verifies the signature of a compact JWS against `jwks`, accepting only `expected_alg`
/// (RFC 8725 §3.1: the verifier, not the token, chooses the algorithm) and a key whose own `alg`
/// is `expected_alg`. Headers with `crit` are refused (RFC 7515 §4.1.11: we understand no
/// extensions). Checks no claims.
pub fn verify_jwt_signature(
    jwks: &Jwks,
    token: &str,
    expected_alg: SigningAlg,
) -> Result<VerifiedJws, CryptoError> {
    let mut parts = token.split('.');
    let (Some(header_b64), Some(payload_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(CryptoError::MalformedJws);
    };
    let json_object = |segment: &str| -> Result<Map<String, Value>, CryptoError> {
        let bytes = b64url_decode(segment).ok_or(CryptoError::MalformedJws)?;
        match serde_json::from_slice(&bytes) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(CryptoError::MalformedJws),
        }
    };
    let header = json_object(header_b64)?;
    if header.get("alg").and_then(Value::as_str) != Some(expected_alg.as_str()) {
        return Err(CryptoError::AlgorithmMismatch);
    }
    if header.contains_key("crit") {
        return Err(CryptoError::MalformedJws);
    }
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or(CryptoError::UnknownKid)?;
    let key = jwks.find(kid).ok_or(CryptoError::UnknownKid)?;
    if key.alg() != expected_alg {
        return Err(CryptoError::AlgorithmMismatch);
    }
    let signature = b64url_decode(signature_b64).ok_or(CryptoError::MalformedJws)?;
    // The signing input is the first two segments exactly as received, dot included.
    let signing_input = token
        .as_bytes()
        .get(..header_b64.len() + 1 + payload_b64.len())
        .ok_or(CryptoError::MalformedJws)?;
    let verified = match key.material() {
        PublicMaterial::Ec { x, y } => {
            let mut point = Vec::with_capacity(65);
            point.push(4);
            point.extend_from_slice(x);
            point.extend_from_slice(y);
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                .verify(signing_input, &signature)
        }
        PublicMaterial::Okp { x } => {
            UnparsedPublicKey::new(&ED25519, x).verify(signing_input, &signature)
        }
        PublicMaterial::Rsa { n, e } => RsaPublicKeyComponents { n, e }.verify(
            &RSA_PKCS1_2048_8192_SHA256,
            signing_input,
            &signature,
        ),
    };
    verified.map_err(|_| CryptoError::BadSignature)?;
    let claims = Value::Object(json_object(payload_b64)?);
    Ok(VerifiedJws {
        kid: kid.to_owned(),
        typ: header.get("typ").and_then(Value::as_str).map(str::to_owned),
        claims,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn signed(alg: SigningAlg) -> (SigningKey, Jwks, String) {
        let key = SigningKey::generate(alg).unwrap();
        let jwks = Jwks::new([key.public_key().clone()]).unwrap();
        let token = key
            .sign_jwt("at+jwt", &json!({"sub": "u1", "scope": "a b"}))
            .unwrap();
        (key, jwks, token)
    }

    #[test]
    fn header_names_alg_kid_and_typ() {
        for alg in SigningAlg::ALL {
            let (key, _, token) = signed(alg);
            let header = token.split('.').next().unwrap();
            let header: Value = serde_json::from_slice(&b64url_decode(header).unwrap()).unwrap();
            assert_eq!(
                header,
                json!({"alg": alg.as_str(), "kid": key.kid(), "typ": "at+jwt"})
            );
        }
    }

    #[test]
    fn round_trips_for_every_algorithm() {
        for alg in SigningAlg::ALL {
            let (key, jwks, token) = signed(alg);
            let verified = verify_jwt_signature(&jwks, &token, alg).unwrap();
            assert_eq!(verified.kid, key.kid());
            assert_eq!(verified.typ.as_deref(), Some("at+jwt"));
            assert_eq!(verified.claims["sub"], "u1");
        }
    }

    #[test]
    fn rejects_tampering_wrong_alg_unknown_kid_and_malformed_tokens() {
        let (_, jwks, token) = signed(SigningAlg::Es256);
        let (header, rest) = token.split_once('.').unwrap();
        let (_, signature) = rest.split_once('.').unwrap();
        let forged_payload = b64url(br#"{"sub":"admin","scope":"a b"}"#);
        let forged = format!("{header}.{forged_payload}.{signature}");
        assert!(matches!(
            verify_jwt_signature(&jwks, &forged, SigningAlg::Es256),
            Err(CryptoError::BadSignature)
        ));
        assert!(matches!(
            verify_jwt_signature(&jwks, &token, SigningAlg::EdDsa),
            Err(CryptoError::AlgorithmMismatch)
        ));
        let (_, other_jwks, _) = signed(SigningAlg::Es256);
        assert!(matches!(
            verify_jwt_signature(&other_jwks, &token, SigningAlg::Es256),
            Err(CryptoError::UnknownKid)
        ));
        for bad in ["", "a.b", "a.b.c.d", &format!("{token}.")] {
            assert!(
                verify_jwt_signature(&jwks, bad, SigningAlg::Es256).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn refuses_non_object_claims_and_odd_typ() {
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        assert!(matches!(
            key.sign_jwt("JWT", &json!(["not", "an", "object"])),
            Err(CryptoError::ClaimsNotAnObject)
        ));
        for typ in ["", "a b", "a\"b"] {
            assert!(matches!(
                key.sign_jwt(typ, &json!({})),
                Err(CryptoError::InvalidTyp)
            ));
        }
    }
}
