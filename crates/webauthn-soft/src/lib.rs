//! A software WebAuthn authenticator and client, for tests and benchmarks of svc.
//!
//! **Test tooling, never product code.** Product crates may use this crate only as a
//! dev-dependency; svc-testkit and the benchmark driver (bench/flows) may use it as a normal
//! dependency (`scripts/check-deps.sh` enforces both, and that this crate depends on no svc
//! crate). Its keys are derived from a `u64` seed and nothing here is constant-time.
//!
//! [`SoftAuthenticator`] plays the browser and the authenticator at once: it takes the JSON
//! options the server sends (what webauthn-rs serialises as `CreationChallengeResponse` or
//! `RequestChallengeResponse`, `{"publicKey": {...}}`) and returns the JSON credential the
//! browser would post back (what webauthn-rs-proto deserialises as
//! `RegisterPublicKeyCredential` or `PublicKeyCredential`):
//!
//! - one ES256 (P-256) credential per authenticator, attestation format `"none"`, an all-zero
//!   AAGUID, transports `["internal"]`;
//! - `clientDataJSON` is `{"type":…,"challenge":…,"origin":…,"crossOrigin":false}`;
//! - binary fields are base64url without padding, as webauthn-rs-proto expects.
//!
//! It checks nothing itself (neither the origin against the RP ID nor `excludeCredentials` or
//! `allowCredentials`): deciding is the server's job, and the knobs (`set_*` / `with_*`) let a
//! test make it lie about exactly one thing at a time.

mod cbor;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{DerSignature, SigningKey};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// Authenticator data flag: user present.
const FLAG_UP: u8 = 0x01;
/// Authenticator data flag: user verified.
const FLAG_UV: u8 = 0x04;
/// Authenticator data flag: backup eligible (a synchronised, multi-device credential).
const FLAG_BE: u8 = 0x08;
/// Authenticator data flag: backed up.
const FLAG_BS: u8 = 0x10;
/// Authenticator data flag: attested credential data included.
const FLAG_AT: u8 = 0x40;

/// COSE algorithm identifier of ES256 (ECDSA with P-256 and SHA-256).
const COSE_ALG_ES256: i64 = -7;

/// Encodes `bytes` as base64url without padding (the encoding of every binary field of the
/// WebAuthn JSON).
pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes base64 leniently: url or standard alphabet, padded or not, whitespace ignored.
/// `None` when `s` is not base64 at all.
pub fn from_b64url(s: &str) -> Option<Vec<u8>> {
    let url_safe: String = s
        .chars()
        .filter(|c| *c != '=' && !c.is_ascii_whitespace())
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect();
    URL_SAFE_NO_PAD.decode(url_safe).ok()
}

/// How the signature counter moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CounterMode {
    /// Each assertion first adds one to the counter and reports the new value (a hardware key).
    #[default]
    Incrementing,
    /// Every registration and assertion reports 0 and the held counter never moves (most
    /// synchronised passkeys).
    Zero,
}

/// A software authenticator holding one ES256 credential, and the browser in front of it.
///
/// The P-256 key and the credential ID are derived from the seed given to
/// [`from_seed`](Self::from_seed), so a test is reproducible; the credential exists for the
/// server once [`register`](Self::register) has answered creation options.
///
/// [`Clone`] makes a second authenticator with the same key, credential ID, user handle,
/// counter and knobs, which then lives its own life: the way to test a cloned authenticator
/// (use the original, then the clone, whose counter is behind).
///
/// Defaults: user verified, not backup eligible nor backed up (a hardware-bound key),
/// [`CounterMode::Incrementing`] from 0, no overrides.
#[derive(Clone, Debug)]
pub struct SoftAuthenticator {
    key: SigningKey,
    credential_id: Vec<u8>,
    registered: bool,
    user_handle: Option<Vec<u8>>,
    counter: u32,
    counter_mode: CounterMode,
    user_verified: bool,
    backup_eligible: bool,
    backup_state: bool,
    rp_id_override: Option<String>,
    challenge_override: Option<Vec<u8>>,
    user_handle_override: Option<Vec<u8>>,
}

/// SHA-256 of a domain-separated label, the seed and a round number: the source of every
/// seeded value.
fn derive(label: &str, seed: u64, round: u32) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"svc-webauthn-soft/");
    hash.update(label.as_bytes());
    hash.update(seed.to_be_bytes());
    hash.update(round.to_be_bytes());
    hash.finalize().into()
}

/// The options inside `{"publicKey": …}`, or the value itself when it has no such wrapper.
fn public_key(options: &Value) -> &Value {
    options.get("publicKey").unwrap_or(options)
}

/// The base64 string at `field` of `object` decoded, empty when missing or undecodable.
fn decoded(object: &Value, field: &str) -> Vec<u8> {
    object
        .get(field)
        .and_then(Value::as_str)
        .and_then(from_b64url)
        .unwrap_or_default()
}

/// The host of an origin such as `https://id.example.com:8443` (no IPv6 literals: test tooling).
fn host_of(origin: &str) -> String {
    let rest = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    authority.split(':').next().unwrap_or_default().to_owned()
}

/// `clientDataJSON` as a browser writes it, members in the browser's order.
fn client_data_json(kind: &str, challenge: &[u8], origin: &str) -> Vec<u8> {
    let string = |s: &str| Value::String(s.to_owned()).to_string();
    format!(
        r#"{{"type":{},"challenge":{},"origin":{},"crossOrigin":false}}"#,
        string(kind),
        string(&b64url(challenge)),
        string(origin),
    )
    .into_bytes()
}

impl SoftAuthenticator {
    /// A fresh authenticator whose key and credential ID come from `seed` (deterministic, for
    /// reproducible tests): equal seeds give equal keys, different seeds different keys.
    pub fn from_seed(seed: u64) -> Self {
        // A hash is a valid P-256 scalar unless it is zero or not below the group order, which
        // is astronomically unlikely; the next round is taken if it happens.
        let mut round = 0;
        let key = loop {
            if let Ok(key) = SigningKey::from_slice(&derive("key", seed, round)) {
                break key;
            }
            round += 1;
        };
        let length = derive("credential-id-length", seed, 0)[0] % 17;
        let credential_id = derive("credential-id", seed, 0)[..16 + usize::from(length)].to_vec();
        Self {
            key,
            credential_id,
            registered: false,
            user_handle: None,
            counter: 0,
            counter_mode: CounterMode::default(),
            user_verified: true,
            backup_eligible: false,
            backup_state: false,
            rp_id_override: None,
            challenge_override: None,
            user_handle_override: None,
        }
    }

    /// Answers creation options (the server's JSON, `{"publicKey": {...}}`) as a browser at
    /// `origin` would, returning the `RegisterPublicKeyCredential` JSON.
    ///
    /// Checks nothing itself: the credential is created for `publicKey.rp.id` (or the RP ID
    /// override; the origin's host when the options name none), and `publicKey.user.id` is
    /// remembered as the user handle for later assertions. Authenticator data carries the flags
    /// UP, AT, UV (unless turned off) and BE/BS (when set), the current counter (0 in
    /// [`CounterMode::Zero`]), an all-zero AAGUID, the credential ID and the COSE ES256 key.
    /// Registering again re-registers the same credential (same key and ID) under the new
    /// options' user; `excludeCredentials` is ignored.
    ///
    /// Missing or undecodable options fields are taken as empty, never a panic: the server is
    /// what should refuse the result.
    pub fn register(&mut self, options: &Value, origin: &str) -> Value {
        let options = public_key(options);
        let challenge = self
            .challenge_override
            .clone()
            .unwrap_or_else(|| decoded(options, "challenge"));
        let rp_id = self.rp_id_override.clone().unwrap_or_else(|| {
            options
                .pointer("/rp/id")
                .and_then(Value::as_str)
                .map_or_else(|| host_of(origin), str::to_owned)
        });
        self.user_handle = Some(
            options
                .get("user")
                .map(|user| decoded(user, "id"))
                .unwrap_or_default(),
        );
        self.registered = true;

        let mut auth_data = self.auth_data_head(&rp_id, FLAG_AT, self.reported_counter());
        auth_data.extend_from_slice(&[0; 16]); // AAGUID: none
        // 16..=32 bytes: the length always fits two bytes.
        auth_data.extend_from_slice(&(self.credential_id.len() as u16).to_be_bytes());
        auth_data.extend_from_slice(&self.credential_id);
        auth_data.extend_from_slice(&self.cose_key());

        let mut attestation_object = Vec::new();
        cbor::map(&mut attestation_object, 3);
        cbor::text(&mut attestation_object, "fmt");
        cbor::text(&mut attestation_object, "none");
        cbor::text(&mut attestation_object, "attStmt");
        cbor::map(&mut attestation_object, 0);
        cbor::text(&mut attestation_object, "authData");
        cbor::bytes(&mut attestation_object, &auth_data);

        let id = b64url(&self.credential_id);
        json!({
            "id": id,
            "rawId": id,
            "type": "public-key",
            "response": {
                "attestationObject": b64url(&attestation_object),
                "clientDataJSON": b64url(&client_data_json("webauthn.create", &challenge, origin)),
                "transports": ["internal"],
            },
            "extensions": {},
        })
    }

    /// Answers request options (`{"publicKey": {...}}`) with an assertion, returning the
    /// `PublicKeyCredential` JSON.
    ///
    /// `allowCredentials` is ignored (it may be empty, for discoverable sign-in): the one
    /// credential answers. The counter is incremented first (unless [`CounterMode::Zero`]);
    /// authenticator data is the SHA-256 of `publicKey.rpId` (or the override; the origin's host
    /// when the options name none), the flags UP, UV (unless turned off), BE/BS (when set) and
    /// the counter; the signature is ES256 over authenticatorData ‖ SHA-256(clientDataJSON),
    /// DER-encoded; `userHandle` is the user handle remembered at registration (or the
    /// override), `null` before any registration.
    pub fn assert(&mut self, options: &Value, origin: &str) -> Value {
        let options = public_key(options);
        let challenge = self
            .challenge_override
            .clone()
            .unwrap_or_else(|| decoded(options, "challenge"));
        let rp_id = self.rp_id_override.clone().unwrap_or_else(|| {
            options
                .get("rpId")
                .and_then(Value::as_str)
                .map_or_else(|| host_of(origin), str::to_owned)
        });
        if self.counter_mode == CounterMode::Incrementing {
            self.counter = self.counter.wrapping_add(1);
        }

        let auth_data = self.auth_data_head(&rp_id, 0, self.reported_counter());
        let client_data = client_data_json("webauthn.get", &challenge, origin);
        let mut signed = auth_data.clone();
        signed.extend_from_slice(&Sha256::digest(&client_data));
        let signature: DerSignature = self.key.sign(&signed);

        let user_handle = self
            .user_handle_override
            .as_deref()
            .or(self.user_handle.as_deref())
            .map(b64url);
        let id = b64url(&self.credential_id);
        json!({
            "id": id,
            "rawId": id,
            "type": "public-key",
            "response": {
                "authenticatorData": b64url(&auth_data),
                "clientDataJSON": b64url(&client_data),
                "signature": b64url(signature.as_bytes()),
                "userHandle": user_handle,
            },
            "extensions": {},
        })
    }

    /// The credential ID (raw bytes), once [`register`](Self::register) has run.
    pub fn credential_id(&self) -> Option<&[u8]> {
        self.registered.then_some(self.credential_id.as_slice())
    }

    /// The user handle remembered at the last registration (`publicKey.user.id`, raw bytes).
    pub fn user_handle(&self) -> Option<&[u8]> {
        self.user_handle.as_deref()
    }

    /// The counter the authenticator holds: the value of its last assertion (or the one set).
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// The credential's public key as an uncompressed SEC1 point (`04 ‖ x ‖ y`, 65 bytes).
    pub fn public_key_sec1(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_sec1_point(false)
            .as_bytes()
            .to_vec()
    }

    /// Whether answers claim user verification (the UV flag). Default on; off makes a passkey
    /// ceremony (which requires UV) fail.
    pub fn set_user_verified(&mut self, verified: bool) -> &mut Self {
        self.user_verified = verified;
        self
    }

    /// Sets the backup eligible flag (BE): on for a synchronised passkey, off (default) for a
    /// hardware-bound key. Independent of [`set_backup_state`](Self::set_backup_state), so a
    /// test can also claim "backed up" without "eligible".
    pub fn set_backup_eligible(&mut self, eligible: bool) -> &mut Self {
        self.backup_eligible = eligible;
        self
    }

    /// Sets the backed-up flag (BS). Default off.
    pub fn set_backup_state(&mut self, backed_up: bool) -> &mut Self {
        self.backup_state = backed_up;
        self
    }

    /// Sets the counter the authenticator holds. A registration reports it as is; the next
    /// assertion reports `value + 1` ([`CounterMode::Incrementing`]). Setting it below what the
    /// server saw last simulates a cloned authenticator.
    pub fn set_counter(&mut self, value: u32) -> &mut Self {
        self.counter = value;
        self
    }

    /// Sets how the counter moves (default [`CounterMode::Incrementing`]).
    pub fn set_counter_mode(&mut self, mode: CounterMode) -> &mut Self {
        self.counter_mode = mode;
        self
    }

    /// Signs for this RP ID (the rpIdHash) instead of the one the options name; `None` goes
    /// back to the options' RP ID.
    pub fn set_rp_id_override(&mut self, rp_id: Option<&str>) -> &mut Self {
        self.rp_id_override = rp_id.map(str::to_owned);
        self
    }

    /// Answers with this challenge (raw bytes) in `clientDataJSON` instead of the options' one;
    /// `None` goes back to the options' challenge.
    pub fn set_challenge_override(&mut self, challenge: Option<&[u8]>) -> &mut Self {
        self.challenge_override = challenge.map(<[u8]>::to_vec);
        self
    }

    /// Claims this user handle (raw bytes, e.g. another user's UUID) in assertions instead of
    /// the one remembered at registration; `None` goes back to the remembered one.
    /// Registration is unaffected.
    pub fn set_user_handle_override(&mut self, user_handle: Option<&[u8]>) -> &mut Self {
        self.user_handle_override = user_handle.map(<[u8]>::to_vec);
        self
    }

    /// Builder form of [`set_user_verified`](Self::set_user_verified).
    pub fn with_user_verified(mut self, verified: bool) -> Self {
        self.set_user_verified(verified);
        self
    }

    /// Builder form of [`set_backup_eligible`](Self::set_backup_eligible).
    pub fn with_backup_eligible(mut self, eligible: bool) -> Self {
        self.set_backup_eligible(eligible);
        self
    }

    /// Builder form of [`set_backup_state`](Self::set_backup_state).
    pub fn with_backup_state(mut self, backed_up: bool) -> Self {
        self.set_backup_state(backed_up);
        self
    }

    /// Builder form of [`set_counter`](Self::set_counter).
    pub fn with_counter(mut self, value: u32) -> Self {
        self.set_counter(value);
        self
    }

    /// Builder form of [`set_counter_mode`](Self::set_counter_mode).
    pub fn with_counter_mode(mut self, mode: CounterMode) -> Self {
        self.set_counter_mode(mode);
        self
    }

    /// Builder form of [`set_rp_id_override`](Self::set_rp_id_override).
    pub fn with_rp_id_override(mut self, rp_id: &str) -> Self {
        self.set_rp_id_override(Some(rp_id));
        self
    }

    /// Builder form of [`set_challenge_override`](Self::set_challenge_override).
    pub fn with_challenge_override(mut self, challenge: &[u8]) -> Self {
        self.set_challenge_override(Some(challenge));
        self
    }

    /// Builder form of [`set_user_handle_override`](Self::set_user_handle_override).
    pub fn with_user_handle_override(mut self, user_handle: &[u8]) -> Self {
        self.set_user_handle_override(Some(user_handle));
        self
    }

    /// The counter an answer reports.
    fn reported_counter(&self) -> u32 {
        match self.counter_mode {
            CounterMode::Incrementing => self.counter,
            CounterMode::Zero => 0,
        }
    }

    /// rpIdHash ‖ flags ‖ counter: the authenticator data without attested credential data.
    /// `extra_flags` adds to UP and the flags the knobs set.
    fn auth_data_head(&self, rp_id: &str, extra_flags: u8, counter: u32) -> Vec<u8> {
        let mut flags = FLAG_UP | extra_flags;
        if self.user_verified {
            flags |= FLAG_UV;
        }
        if self.backup_eligible {
            flags |= FLAG_BE;
        }
        if self.backup_state {
            flags |= FLAG_BS;
        }
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(flags);
        data.extend_from_slice(&counter.to_be_bytes());
        data
    }

    /// The credential public key as a COSE_Key (RFC 9053 EC2, P-256, ES256), integer keys in
    /// CTAP2 canonical order: {1: 2, 3: -7, -1: 1, -2: x, -3: y}.
    fn cose_key(&self) -> Vec<u8> {
        let point = self.public_key_sec1();
        let (x, y) = point[1..].split_at(32);
        let mut out = Vec::new();
        cbor::map(&mut out, 5);
        cbor::int(&mut out, 1); // kty
        cbor::int(&mut out, 2); // EC2
        cbor::int(&mut out, 3); // alg
        cbor::int(&mut out, COSE_ALG_ES256);
        cbor::int(&mut out, -1); // crv
        cbor::int(&mut out, 1); // P-256
        cbor::int(&mut out, -2); // x
        cbor::bytes(&mut out, x);
        cbor::int(&mut out, -3); // y
        cbor::bytes(&mut out, y);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_helpers_are_lenient_on_input_and_strict_on_output() {
        let bytes = [0xfb, 0xff, 0xfe, 0x01];
        assert_eq!(b64url(&bytes), "-__-AQ");
        for form in ["-__-AQ", "-__-AQ==", "+//+AQ==", "+//+AQ", " -__-\nAQ "] {
            assert_eq!(from_b64url(form).as_deref(), Some(&bytes[..]), "{form}");
        }
        assert_eq!(from_b64url("not base64!"), None);
        assert_eq!(from_b64url(""), Some(Vec::new()));
    }

    #[test]
    fn the_seed_decides_key_and_credential_id() {
        let a = SoftAuthenticator::from_seed(7);
        let b = SoftAuthenticator::from_seed(7);
        let c = SoftAuthenticator::from_seed(8);
        assert_eq!(a.public_key_sec1(), b.public_key_sec1());
        assert_eq!(a.credential_id, b.credential_id);
        assert_ne!(a.public_key_sec1(), c.public_key_sec1());
        assert_ne!(a.credential_id, c.credential_id);
        for seed in 0..64 {
            let len = SoftAuthenticator::from_seed(seed).credential_id.len();
            assert!((16..=32).contains(&len), "{len}");
        }
        assert_eq!(a.credential_id(), None);
    }

    #[test]
    fn the_cose_key_is_canonical_ctap2() {
        let key = SoftAuthenticator::from_seed(1).cose_key();
        // a5 (map of 5), 01 02, 03 26, 20 01, 21 58 20 <x>, 22 58 20 <y>
        assert_eq!(
            key[..9],
            [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58]
        );
        assert_eq!(key[9], 0x20);
        assert_eq!(key[42..45], [0x22, 0x58, 0x20]);
        assert_eq!(key.len(), 77);
    }

    #[test]
    fn client_data_is_what_a_browser_writes() {
        let json = client_data_json("webauthn.get", &[1, 2, 3], "http://localhost:8080");
        assert_eq!(
            String::from_utf8(json).unwrap(),
            r#"{"type":"webauthn.get","challenge":"AQID","origin":"http://localhost:8080","crossOrigin":false}"#
        );
        assert_eq!(
            host_of("https://id.example.com:8443/path"),
            "id.example.com"
        );
        assert_eq!(host_of("http://localhost"), "localhost");
    }

    #[test]
    fn registration_and_assertion_shapes() {
        let options = json!({"publicKey": {
            "rp": {"id": "localhost", "name": "svc"},
            "user": {"id": b64url(b"user-1"), "name": "a", "displayName": "A"},
            "challenge": b64url(b"challenge"),
        }});
        let mut auth = SoftAuthenticator::from_seed(3).with_backup_eligible(true);
        let reg = auth.register(&options, "http://localhost:8080");
        assert_eq!(reg["type"], "public-key");
        assert_eq!(reg["id"], reg["rawId"]);
        assert_eq!(reg["response"]["transports"], json!(["internal"]));
        let cred_id = auth.credential_id().unwrap().to_vec();
        assert_eq!(from_b64url(reg["id"].as_str().unwrap()).unwrap(), cred_id);

        let attestation =
            from_b64url(reg["response"]["attestationObject"].as_str().unwrap()).unwrap();
        // {"fmt": "none", "attStmt": {}, "authData": bytes(…)}
        assert!(attestation.starts_with(b"\xa3\x63fmt\x64none\x67attStmt\xa0\x68authData\x58"));
        let auth_data = &attestation[attestation.len() - (37 + 18 + cred_id.len() + 77)..];
        assert_eq!(auth_data[..32], Sha256::digest(b"localhost")[..]);
        assert_eq!(auth_data[32], FLAG_UP | FLAG_UV | FLAG_BE | FLAG_AT);
        assert_eq!(auth_data[33..37], [0, 0, 0, 0]);

        let request = json!({"publicKey": {"rpId": "localhost", "challenge": "AQID", "allowCredentials": []}});
        let assertion = auth.assert(&request, "http://localhost:8080");
        let data =
            from_b64url(assertion["response"]["authenticatorData"].as_str().unwrap()).unwrap();
        assert_eq!(data.len(), 37);
        assert_eq!(data[32], FLAG_UP | FLAG_UV | FLAG_BE);
        assert_eq!(data[33..37], [0, 0, 0, 1]);
        assert_eq!(assertion["response"]["userHandle"], b64url(b"user-1"));
        assert_eq!(auth.counter(), 1);

        auth.set_counter_mode(CounterMode::Zero);
        let assertion = auth.assert(&request, "http://localhost:8080");
        let data =
            from_b64url(assertion["response"]["authenticatorData"].as_str().unwrap()).unwrap();
        assert_eq!(data[33..37], [0, 0, 0, 0]);
    }
}
