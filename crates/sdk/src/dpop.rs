//! DPoP proofs (RFC 9449): reading the `DPoP` header and verifying the proof JWT a client sends
//! with a request, for the svc server (token endpoint, UserInfo, management API) and for resource
//! servers alike. What comes out is the proof key's RFC 7638 thumbprint, which rule 10
//! ([`crate::rules::dpop`]) compares with the token's `cnf.jkt`.
//!
//! [`verify_proof`] runs RFC 9449 §4.3's checks, in its order, each a named step:
//! 1. one `DPoP` header ([`proof_header`]) holding one compact JWS of at most
//!    [`MAX_PROOF_BYTES`];
//! 2. header `typ` is `dpop+jwt`, `alg` an asymmetric algorithm of [`PROOF_ALGORITHMS`] (never
//!    `none` or HS*), no `crit`;
//! 3. header `jwk` is a public key (no `d`, `p`, `q`, … and no symmetric `oct` key) of the type
//!    `alg` needs (RSA at least 2048 bits);
//! 4. the signature verifies with that key;
//! 5. claims `jti` (≤ [`MAX_JTI_BYTES`]), `htm`, `htu` and `iat` are present and typed;
//! 6. `htm` is the request's method;
//! 7. `htu` is the request's URI without query and fragment, compared after RFC 3986 §6
//!    scheme-based normalisation (case of scheme and host, default port);
//! 8. `iat` is within the acceptance window of now, either side;
//! 9. with an access token, `ath` is the base64url SHA-256 of it (§4.2).
//!
//! Two checks stay with the caller because they need state: the `jti` replay cache for the
//! window (§11.1; [`ReplayCache`] is an in-process one for a single resource server) and server
//! nonces (§8, §9), whose value [`VerifiedProof::nonce`] hands over. Extra claims are ignored,
//! as the RFC requires. Errors are [`ProofError`]; their text never repeats the proof.

use aws_lc_rs::digest;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use url::Url;

mod members;

use members::{Claims, Header, Jwk, Member};

/// The proof algorithms accepted and advertised (`dpop_signing_alg_values_supported`).
pub const PROOF_ALGORITHMS: [&str; 4] = ["ES256", "EdDSA", "RS256", "PS256"];

/// Longest accepted proof, in bytes: an RSA-4096 proof is under 2 KiB.
pub const MAX_PROOF_BYTES: usize = 8 * 1024;

/// Longest accepted `jti`, in bytes (it is stored by replay caches).
pub const MAX_JTI_BYTES: usize = 256;

/// RFC 9449 §4.3 item 11's window for `iat`, either side of now, unless the caller chooses
/// another (CONTRACTS.md: ±60 s).
pub const DEFAULT_IAT_WINDOW_SECS: i64 = 60;

/// Smallest accepted RSA modulus, in bits.
const MIN_RSA_BITS: usize = 2048;

/// JWK members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4).
const PRIVATE_MEMBERS: [&str; 9] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv"];

/// Why a DPoP proof was refused. Every variant is `invalid_dpop_proof` (RFC 9449 §7.1) except
/// [`ProofError::UseNonce`], which is `use_dpop_nonce` (§8, §9).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProofError {
    /// No `DPoP` header where one is required.
    #[error("a DPoP proof is required")]
    Missing,
    /// More than one `DPoP` header (§4.3 item 1).
    #[error("exactly one DPoP header is allowed")]
    Multiple,
    /// Not one compact JWS with a JSON header and a JSON object payload, or too long.
    #[error("the DPoP proof is not a well-formed signed JWT")]
    Malformed,
    /// Header `typ` is not `dpop+jwt`.
    #[error("the DPoP proof's typ must be dpop+jwt")]
    WrongType,
    /// `alg` is missing, `none`, symmetric or not accepted.
    #[error("the DPoP proof is signed with an algorithm that is not accepted")]
    DisallowedAlgorithm,
    /// The header lists `crit` extensions, none of which is understood.
    #[error("the DPoP proof requires header extensions that are not supported")]
    UnsupportedCriticalHeader,
    /// `jwk` is missing, not a public key, too weak, or not of the type `alg` needs.
    #[error("the DPoP proof's jwk is not an acceptable public key for its alg")]
    BadKey,
    /// The signature does not verify with the header's key.
    #[error("the DPoP proof signature is invalid")]
    BadSignature,
    /// A required claim is missing or has the wrong type.
    #[error("the DPoP proof lacks a valid {claim} claim")]
    MissingClaim {
        /// The claim's name.
        claim: &'static str,
    },
    /// `htm` is not the request's method.
    #[error("the DPoP proof was made for another HTTP method")]
    WrongMethod,
    /// `htu` is not the request's URI.
    #[error("the DPoP proof was made for another URL")]
    WrongUrl,
    /// `iat` is outside the acceptance window.
    #[error("the DPoP proof is too old or issued in the future")]
    Stale,
    /// `ath` is missing or not the hash of the access token sent with it.
    #[error("the DPoP proof's ath does not match the access token")]
    WrongAccessTokenHash,
    /// The `jti` was seen within the window (§11.1).
    #[error("the DPoP proof was already used")]
    Replayed,
    /// The server requires a nonce and the proof has none, or a stale one (§8).
    #[error("a DPoP nonce from the server is required")]
    UseNonce,
}

impl ProofError {
    /// The OAuth `error` code: `use_dpop_nonce` or `invalid_dpop_proof`.
    pub fn error_code(&self) -> &'static str {
        match self {
            Self::UseNonce => "use_dpop_nonce",
            _ => "invalid_dpop_proof",
        }
    }

    /// The resource server's `WWW-Authenticate` value (RFC 9449 §7.1): the `DPoP` scheme with
    /// the error and the accepted algorithms.
    pub fn www_authenticate(&self) -> String {
        format!(
            "DPoP error=\"{}\", error_description=\"{self}\", algs=\"{}\"",
            self.error_code(),
            PROOF_ALGORITHMS.join(" ")
        )
    }
}

/// Step 1: the one `DPoP` header of a request, if any; two or more are refused.
pub fn proof_header(headers: &http::HeaderMap) -> Result<Option<&str>, ProofError> {
    let mut values = headers.get_all("dpop").iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(None),
        (Some(value), None) => value.to_str().map(Some).map_err(|_| ProofError::Malformed),
        (Some(_), Some(_)) => Err(ProofError::Multiple),
    }
}

/// What a proof must match: the request it came with.
#[derive(Debug, Clone, Copy)]
pub struct ProofRequest<'a> {
    /// The request's method (`htm`), e.g. `POST`.
    pub method: &'a str,
    /// The URI the request was sent to (`htu`); a query or fragment is ignored.
    pub url: &'a str,
    /// The access token sent with the proof (resource requests), whose hash `ath` must be;
    /// `None` at the token endpoint.
    pub access_token: Option<&'a str>,
    /// Now, in seconds since the epoch.
    pub now_unix: i64,
    /// How far `iat` may be from now, either side, in seconds.
    pub iat_window_secs: i64,
}

/// A proof that passed steps 1–9.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedProof {
    /// RFC 7638 SHA-256 thumbprint of the proof key, base64url: the `cnf.jkt` it binds to.
    pub jkt: String,
    /// The proof's `jti`, for the caller's replay cache.
    pub jti: String,
    /// The proof's `iat`.
    pub iat: i64,
    /// The proof's `nonce`, for the caller's nonce check.
    pub nonce: Option<String>,
}

/// Steps 2–9 on the `proof` of `request`.
pub fn verify_proof(proof: &str, request: &ProofRequest<'_>) -> Result<VerifiedProof, ProofError> {
    let parts = split_proof(proof)?; // step 1
    let header_bytes = decode(parts.header)?;
    let (alg, key) = check_header(&header_bytes)?; // steps 2, 3
    let claims_bytes = check_signature(&parts, alg, &key)?; // step 4
    let claims: Claims<'_> = members::parse_object(&claims_bytes).ok_or(ProofError::Malformed)?;
    let jti = string_claim(&claims.jti, "jti")?; // step 5
    if jti.len() > MAX_JTI_BYTES {
        return Err(ProofError::MissingClaim { claim: "jti" });
    }
    let htm = string_claim(&claims.htm, "htm")?;
    let htu = string_claim(&claims.htu, "htu")?;
    let iat = claims
        .iat
        .as_i64()
        .ok_or(ProofError::MissingClaim { claim: "iat" })?;
    check_method(htm, request.method)?; // step 6
    check_url(htu, request.url)?; // step 7
    check_iat(iat, request.now_unix, request.iat_window_secs)?; // step 8
    if let Some(token) = request.access_token {
        check_ath(&claims.ath, token)?; // step 9
    }
    let nonce = match &claims.nonce {
        Member::Absent => None,
        Member::Str(nonce) => Some(nonce.clone().into_owned()),
        _ => return Err(ProofError::MissingClaim { claim: "nonce" }),
    };
    Ok(VerifiedProof {
        jkt: key.thumbprint(),
        jti: jti.to_owned(),
        iat,
        nonce,
    })
}

/// The `ath` of `access_token` (RFC 9449 §4.2): base64url SHA-256 of its ASCII bytes.
pub fn access_token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(digest::digest(&digest::SHA256, access_token.as_bytes()))
}

/// The three segments of a compact JWS, as received.
struct ProofParts<'p> {
    header: &'p str,
    payload: &'p str,
    signature: &'p str,
    /// `header.payload`, the signing input (RFC 7515 §5.2), exactly as received.
    signing_input: &'p [u8],
}

/// Step 1: one compact JWS of at most [`MAX_PROOF_BYTES`].
fn split_proof(proof: &str) -> Result<ProofParts<'_>, ProofError> {
    if proof.len() > MAX_PROOF_BYTES {
        return Err(ProofError::Malformed);
    }
    let mut parts = proof.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ProofError::Malformed);
    };
    if payload.is_empty() || signature.is_empty() {
        return Err(ProofError::Malformed);
    }
    let signing_input = proof
        .as_bytes()
        .get(..header.len() + 1 + payload.len())
        .ok_or(ProofError::Malformed)?;
    Ok(ProofParts {
        header,
        payload,
        signature,
        signing_input,
    })
}

/// The signature algorithms of [`PROOF_ALGORITHMS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProofAlg {
    Es256,
    EdDsa,
    Rs256,
    Ps256,
}

/// A proof's public key, decoded from its `jwk` once: verified from its raw components (no JWK
/// library round trip on every request), thumbprinted from the members as sent.
#[derive(Debug)]
enum ProofKey<'h> {
    /// P-256: the uncompressed point `04 || x || y` and the `x`, `y` members.
    Ec {
        point: [u8; 65],
        x: Cow<'h, str>,
        y: Cow<'h, str>,
    },
    /// Ed25519: the public key and the `x` member.
    Okp { public: [u8; 32], x: Cow<'h, str> },
    /// RSA: modulus and exponent, and the `n`, `e` members.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
        n_member: Cow<'h, str>,
        e_member: Cow<'h, str>,
    },
}

impl ProofKey<'_> {
    /// RFC 7638 SHA-256 thumbprint, base64url: the required members in lexicographic order,
    /// no whitespace. The members were checked to be base64url (step 3), which JSON needs no
    /// escaping for, and decoding refused non-canonical encodings, so the string is canonical.
    fn thumbprint(&self) -> String {
        let canonical = match self {
            Self::Ec { x, y, .. } => format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#),
            Self::Okp { x, .. } => format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#),
            Self::Rsa {
                n_member, e_member, ..
            } => format!(r#"{{"e":"{e_member}","kty":"RSA","n":"{n_member}"}}"#),
        };
        URL_SAFE_NO_PAD.encode(digest::digest(&digest::SHA256, canonical.as_bytes()))
    }
}

/// A base64url segment of the proof, decoded.
fn decode(segment: &str) -> Result<Vec<u8>, ProofError> {
    URL_SAFE_NO_PAD
        .decode(segment)
        .map_err(|_| ProofError::Malformed)
}

/// Steps 2 and 3: the header's algorithm and public key, from the decoded header.
fn check_header(header: &[u8]) -> Result<(ProofAlg, ProofKey<'_>), ProofError> {
    let header = members::parse_object::<Header<'_>>(header).ok_or(ProofError::Malformed)?;
    let typ = header.typ.as_str().unwrap_or("");
    if !typ.eq_ignore_ascii_case("dpop+jwt") {
        return Err(ProofError::WrongType);
    }
    let alg = match header.alg.as_str() {
        Some("ES256") => ProofAlg::Es256,
        Some("EdDSA") => ProofAlg::EdDsa,
        Some("RS256") => ProofAlg::Rs256,
        Some("PS256") => ProofAlg::Ps256,
        _ => return Err(ProofError::DisallowedAlgorithm),
    };
    if header.crit.is_present() {
        return Err(ProofError::UnsupportedCriticalHeader);
    }
    let Member::Object(jwk) = header.jwk else {
        return Err(ProofError::BadKey);
    };
    Ok((alg, public_key_for(jwk, alg)?))
}

/// A base64url member of `jwk`, decoded into `out` (which must be its exact length), with the
/// string as sent.
fn key_member_into<'h>(member: Member<'h>, out: &mut [u8]) -> Result<Cow<'h, str>, ProofError> {
    let member = string_member(member).ok_or(ProofError::BadKey)?;
    match URL_SAFE_NO_PAD.decode_slice(member.as_bytes(), out) {
        Ok(len) if len == out.len() => Ok(member),
        _ => Err(ProofError::BadKey),
    }
}

/// A base64url member of `jwk` of any length, decoded, with the string as sent.
fn key_member<'h>(member: Member<'h>) -> Result<(Vec<u8>, Cow<'h, str>), ProofError> {
    let member = string_member(member).ok_or(ProofError::BadKey)?;
    let bytes = URL_SAFE_NO_PAD
        .decode(member.as_bytes())
        .map_err(|_| ProofError::BadKey)?;
    Ok((bytes, member))
}

/// A string member of the header.
fn string_member(member: Member<'_>) -> Option<Cow<'_, str>> {
    match member {
        Member::Str(s) => Some(s),
        _ => None,
    }
}

/// Step 3: `jwk` is a public key of the type `alg` needs.
fn public_key_for(jwk: Jwk<'_>, alg: ProofAlg) -> Result<ProofKey<'_>, ProofError> {
    if jwk.private {
        return Err(ProofError::BadKey);
    }
    match (alg, jwk.kty.as_str(), jwk.crv.as_str()) {
        (ProofAlg::Es256, Some("EC"), Some("P-256")) => {
            let mut point = [4u8; 65];
            let (xs, ys) = point[1..].split_at_mut(32);
            let x = key_member_into(jwk.x, xs)?;
            let y = key_member_into(jwk.y, ys)?;
            Ok(ProofKey::Ec { point, x, y })
        }
        (ProofAlg::EdDsa, Some("OKP"), Some("Ed25519")) => {
            let mut public = [0u8; 32];
            let x = key_member_into(jwk.x, &mut public)?;
            Ok(ProofKey::Okp { public, x })
        }
        (ProofAlg::Rs256 | ProofAlg::Ps256, Some("RSA"), _) => {
            let (n, n_member) = key_member(jwk.n)?;
            let (e, e_member) = key_member(jwk.e)?;
            if significant_bits(&n) < MIN_RSA_BITS || e.is_empty() {
                return Err(ProofError::BadKey);
            }
            Ok(ProofKey::Rsa {
                n,
                e,
                n_member,
                e_member,
            })
        }
        _ => Err(ProofError::BadKey),
    }
}

/// Bits of a big-endian unsigned integer, leading zeros aside.
fn significant_bits(n: &[u8]) -> usize {
    let Some(first) = n.iter().position(|b| *b != 0) else {
        return 0;
    };
    let lead = n.get(first).map_or(0, |b| 8 - b.leading_zeros() as usize);
    (n.len() - first - 1) * 8 + lead
}

/// Step 4: the signature verifies with the header's key (an off-curve point or a malformed
/// modulus verifies nothing); the decoded payload is returned for step 5.
fn check_signature(
    parts: &ProofParts<'_>,
    alg: ProofAlg,
    key: &ProofKey<'_>,
) -> Result<Vec<u8>, ProofError> {
    use aws_lc_rs::signature::{
        ECDSA_P256_SHA256_FIXED, ED25519, RSA_PKCS1_2048_8192_SHA256, RSA_PSS_2048_8192_SHA256,
        RsaPublicKeyComponents, UnparsedPublicKey,
    };
    let signature = decode(parts.signature)?;
    let input = parts.signing_input;
    let verified = match (key, alg) {
        (ProofKey::Ec { point, .. }, ProofAlg::Es256) => {
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point).verify(input, &signature)
        }
        (ProofKey::Okp { public, .. }, ProofAlg::EdDsa) => {
            UnparsedPublicKey::new(&ED25519, public).verify(input, &signature)
        }
        (ProofKey::Rsa { n, e, .. }, ProofAlg::Rs256) => {
            RsaPublicKeyComponents { n, e }.verify(&RSA_PKCS1_2048_8192_SHA256, input, &signature)
        }
        (ProofKey::Rsa { n, e, .. }, ProofAlg::Ps256) => {
            RsaPublicKeyComponents { n, e }.verify(&RSA_PSS_2048_8192_SHA256, input, &signature)
        }
        _ => return Err(ProofError::BadKey),
    };
    verified.map_err(|_| ProofError::BadSignature)?;
    decode(parts.payload)
}

/// Step 5: a non-empty string claim.
fn string_claim<'c>(member: &'c Member<'_>, claim: &'static str) -> Result<&'c str, ProofError> {
    member
        .as_str()
        .filter(|v| !v.is_empty())
        .ok_or(ProofError::MissingClaim { claim })
}

/// Step 6: methods are case-sensitive (RFC 9110 §9.1).
fn check_method(htm: &str, method: &str) -> Result<(), ProofError> {
    if htm == method {
        Ok(())
    } else {
        Err(ProofError::WrongMethod)
    }
}

/// Step 7: same scheme, host, port and path; query and fragment ignored (RFC 9449 §4.3 item 9).
fn check_url(htu: &str, target: &str) -> Result<(), ProofError> {
    // The same string is the same URI, whatever normalisation would do; clients that copy the
    // advertised endpoint (nearly all) never pay for parsing two URLs.
    if htu == target {
        return Ok(());
    }
    let (Ok(htu), Ok(target)) = (Url::parse(htu), Url::parse(target)) else {
        return Err(ProofError::WrongUrl);
    };
    // `Url` already lower-cases scheme and host and drops a default port.
    let same = htu.scheme() == target.scheme()
        && htu.host_str() == target.host_str()
        && htu.port_or_known_default() == target.port_or_known_default()
        && htu.path() == target.path();
    if same {
        Ok(())
    } else {
        Err(ProofError::WrongUrl)
    }
}

/// Step 8: `iat` within `window` seconds of `now`, either side.
fn check_iat(iat: i64, now: i64, window: i64) -> Result<(), ProofError> {
    if iat.abs_diff(now) <= window.unsigned_abs() {
        Ok(())
    } else {
        Err(ProofError::Stale)
    }
}

/// Step 9: `ath` is the hash of the access token, compared in constant time.
fn check_ath(ath: &Member<'_>, access_token: &str) -> Result<(), ProofError> {
    let ath = ath.as_str().ok_or(ProofError::WrongAccessTokenHash)?;
    let expected = access_token_hash(access_token);
    if aws_lc_rs::constant_time::verify_slices_are_equal(ath.as_bytes(), expected.as_bytes())
        .is_ok()
    {
        Ok(())
    } else {
        Err(ProofError::WrongAccessTokenHash)
    }
}

/// An in-process `jti` replay cache (RFC 9449 §11.1) for a resource server running as one
/// process: remembers each (key thumbprint, `jti`) until the proof's window has passed.
///
/// Each proof is kept as a 128-bit digest of its key and `jti` (collisions would need 2^64
/// proofs) in a set, and in a bucket of the second it may be forgotten, so forgetting costs
/// only what expired (no scan of the whole set under the lock). Bounded: at
/// [`ReplayCache::capacity`] live proofs, new ones are refused as replays rather than let the
/// memory grow or live `jti`s be forgotten; size it above the proof rate times twice the window
/// (each entry is about 60 bytes).
#[derive(Debug)]
pub struct ReplayCache {
    capacity: usize,
    state: Mutex<Remembered>,
}

/// The live digests, and when each may be forgotten.
#[derive(Debug, Default)]
struct Remembered {
    live: HashSet<[u8; 16]>,
    expiring: BTreeMap<i64, Vec<[u8; 16]>>,
}

impl Remembered {
    /// Forgets every digest whose time has come at `now`.
    fn forget_until(&mut self, now: i64) {
        while let Some(entry) = self.expiring.first_entry() {
            if *entry.key() > now {
                break;
            }
            for digest in entry.remove() {
                self.live.remove(&digest);
            }
        }
    }
}

impl ReplayCache {
    /// A cache holding at most `capacity` live proofs.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            state: Mutex::new(Remembered::default()),
        }
    }

    /// The most live proofs held.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records `proof`, remembered until `forget_after` (Unix seconds; its `iat` plus the
    /// window); [`ProofError::Replayed`] when it was seen and not yet forgotten at `now_unix`,
    /// or when the cache is full of live proofs.
    pub fn check_and_record(
        &self,
        proof: &VerifiedProof,
        forget_after: i64,
        now_unix: i64,
    ) -> Result<(), ProofError> {
        self.check_and_record_in("", &proof.jkt, &proof.jti, forget_after, now_unix)
    }

    /// [`Self::check_and_record`] for the proof `jti` of key `jkt` within `scope` (a tenant,
    /// say): one cache can serve several scopes that must never share a record.
    pub fn check_and_record_in(
        &self,
        scope: &str,
        jkt: &str,
        jti: &str,
        forget_after: i64,
        now_unix: i64,
    ) -> Result<(), ProofError> {
        let digest = proof_digest(scope, jkt, jti);
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.forget_until(now_unix);
        if state.live.contains(&digest) || state.live.len() >= self.capacity {
            return Err(ProofError::Replayed);
        }
        state.live.insert(digest);
        state.expiring.entry(forget_after).or_default().push(digest);
        Ok(())
    }
}

/// 128 bits of SHA-256 over the scope, the key thumbprint and the `jti`, the first two
/// length-prefixed so no two triples share an input.
fn proof_digest(scope: &str, jkt: &str, jti: &str) -> [u8; 16] {
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(&(scope.len() as u64).to_be_bytes());
    context.update(scope.as_bytes());
    context.update(&(jkt.len() as u64).to_be_bytes());
    context.update(jkt.as_bytes());
    context.update(jti.as_bytes());
    let full = context.finish();
    let mut out = [0u8; 16];
    out.copy_from_slice(full.as_ref().get(..16).unwrap_or(&[0u8; 16]));
    out
}

#[cfg(test)]
#[path = "dpop_tests.rs"]
mod tests;
