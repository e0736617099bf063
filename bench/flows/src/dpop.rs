//! The client side of DPoP (RFC 9449) for `token-dpop`: one ES256 key per worker, generated in
//! the setup, and a fresh proof for every request.
//!
//! A proof is `{"typ":"dpop+jwt","alg":"ES256","jwk":<public key>}` . `{"jti","htm","htu","iat"}`
//! signed with the key (ECDSA P-256, SHA-256, the fixed 64-byte `r ‖ s` form JWS uses). The header
//! never changes for a key, so it is encoded once, as a real client would; every proof has its
//! own random `jti`, the current `iat` and its own signature (nothing is reused: svc takes each
//! `jti` once). Signing is aws-lc-rs's, the library svc itself signs with, so the driver's cost
//! per proof is about what a well-built client pays.

use anyhow::{Context, anyhow};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;
use sha2::{Digest, Sha256};

/// A worker's DPoP key and the parts of its proofs that never change.
pub(crate) struct Prover {
    key: EcdsaKeyPair,
    rng: SystemRandom,
    /// base64url of the proof header, followed by `.`.
    header_b64: String,
    /// `htu`: the token endpoint as svc advertises it (`{issuer}/oauth/token`).
    htu: String,
    /// RFC 7638 SHA-256 thumbprint of the public key: the `cnf.jkt` svc must bind to.
    jkt: String,
}

impl std::fmt::Debug for Prover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prover").field("jkt", &self.jkt).finish()
    }
}

impl Prover {
    /// A new P-256 key for proofs of `POST htu`.
    pub(crate) fn generate(htu: String) -> anyhow::Result<Self> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| anyhow!("generating a P-256 key"))?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .map_err(|_| anyhow!("loading the generated P-256 key"))?;
        // Uncompressed SEC1 point: 0x04 ‖ x (32 bytes) ‖ y (32 bytes).
        let point = key.public_key().as_ref();
        let (x, y) = match point {
            [0x04, rest @ ..] if rest.len() == 64 => rest.split_at(32),
            _ => return Err(anyhow!("unexpected P-256 public key encoding")),
        };
        let (x, y) = (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y));
        // RFC 7638: the required members in lexicographic order, no whitespace.
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let jkt = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        let header = json!({
            "typ": "dpop+jwt",
            "alg": "ES256",
            "jwk": {"kty": "EC", "crv": "P-256", "x": x, "y": y},
        });
        let header_json = serde_json::to_vec(&header).context("encoding the proof header")?;
        let mut header_b64 = URL_SAFE_NO_PAD.encode(header_json);
        header_b64.push('.');
        Ok(Self {
            key,
            rng,
            header_b64,
            htu,
            jkt,
        })
    }

    /// The key's RFC 7638 thumbprint.
    pub(crate) fn jkt(&self) -> &str {
        &self.jkt
    }

    /// A new proof for `POST htu` now: a fresh random `jti`, the current `iat`, a new signature.
    pub(crate) fn proof(&self) -> anyhow::Result<String> {
        let jti = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 16]>());
        let iat = crate::totp::unix_now().as_secs();
        let claims = json!({"jti": jti, "htm": "POST", "htu": self.htu, "iat": iat});
        let claims_json = serde_json::to_vec(&claims).context("encoding the proof claims")?;
        let mut jws = String::with_capacity(self.header_b64.len() + claims_json.len() * 4 / 3 + 90);
        jws.push_str(&self.header_b64);
        URL_SAFE_NO_PAD.encode_string(claims_json, &mut jws);
        let signature = self
            .key
            .sign(&self.rng, jws.as_bytes())
            .map_err(|_| anyhow!("signing a DPoP proof"))?;
        jws.push('.');
        URL_SAFE_NO_PAD.encode_string(signature.as_ref(), &mut jws);
        Ok(jws)
    }
}

/// Prints the mean wall time, in µs, of one ES256 verification and one ES256 signature of a
/// proof-sized input, each measured for `seconds` on this thread: the floor of what a DPoP request
/// costs on top of a plain one (svc verifies, the client signs). svc verifies with the same call
/// (`UnparsedPublicKey` over the raw `x`, `y` point and the fixed 64-byte signature).
pub(crate) fn print_costs(seconds: f64) -> anyhow::Result<()> {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
    use std::time::{Duration, Instant};
    let prover = Prover::generate("https://bench.example/oauth/token".into())?;
    let proof = prover.proof()?;
    let (input, signature) = proof
        .rsplit_once('.')
        .ok_or_else(|| anyhow!("a proof without a signature"))?;
    let signature = URL_SAFE_NO_PAD.decode(signature)?;
    let point = prover.key.public_key().as_ref().to_vec();
    let window = Duration::from_secs_f64(seconds.max(0.1));
    let per_op = |op: &mut dyn FnMut() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        let (start, mut ops) = (Instant::now(), 0u32);
        while start.elapsed() < window {
            op()?;
            ops += 1;
        }
        Ok(start.elapsed().as_secs_f64() * 1e6 / f64::from(ops.max(1)))
    };
    let verify_us = per_op(&mut || {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(input.as_bytes(), &signature)
            .map_err(|_| anyhow!("the proof does not verify"))
    })?;
    let sign_us = per_op(&mut || {
        prover
            .key
            .sign(&prover.rng, input.as_bytes())
            .map(drop)
            .map_err(|_| anyhow!("signing failed"))
    })?;
    println!("verify_us={verify_us:.1}");
    println!("sign_us={sign_us:.1}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
    use serde_json::Value;

    #[test]
    fn the_costs_are_measured_on_a_proof_that_verifies() {
        // print_costs fails when the proof it times does not verify.
        print_costs(0.1).unwrap();
    }

    fn part(jws: &str, i: usize) -> Vec<u8> {
        let p = jws.split('.').nth(i).unwrap_or_default();
        URL_SAFE_NO_PAD.decode(p).unwrap_or_default()
    }

    #[test]
    fn proofs_verify_with_the_header_key_and_are_fresh() {
        let prover = Prover::generate("http://bench.localhost:1/oauth/token".into()).unwrap();
        let (a, b) = (prover.proof().unwrap(), prover.proof().unwrap());
        assert_ne!(a, b);
        let header: Value = serde_json::from_slice(&part(&a, 0)).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        let claims: Value = serde_json::from_slice(&part(&a, 1)).unwrap();
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "http://bench.localhost:1/oauth/token");
        assert!(claims["iat"].as_u64().unwrap() > 1_700_000_000);
        let other: Value = serde_json::from_slice(&part(&b, 1)).unwrap();
        assert_ne!(claims["jti"], other["jti"]);
        // The signature verifies with the key in the header.
        let x = URL_SAFE_NO_PAD
            .decode(header["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(header["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let point = [&[0x04u8][..], &x, &y].concat();
        let signed = a.rsplit_once('.').unwrap().0;
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
            .verify(signed.as_bytes(), &part(&a, 2))
            .unwrap();
        assert_eq!(prover.jkt().len(), 43);
    }
}
