//! Agent challenge-response (`[challenge]`, issue 19 item 3), first half: the challenges.
//!
//! An agent asks `POST /oauth/agent/challenge` with its id and gets a challenge it must answer
//! within the lifetime, once: it signs an assertion carrying the challenge as `nonce` with a key
//! it registered, and presents it at the token endpoint (`crate::token`'s agent grant). No
//! secret of the agent ever crosses the wire, and a captured assertion is worth nothing once
//! answered.
//!
//! A challenge is `base64url(exp ‖ random ‖ tag)`: `exp` (8 bytes, Unix seconds, big endian),
//! 16 random bytes, and the first 16 bytes of `HMAC-SHA-256(tenant pairwise secret,
//! "svc-agent-challenge" ‖ 0 ‖ agent id ‖ 0 ‖ exp ‖ random)`. So:
//! - nothing is stored when one is handed out, every instance can check any of them, and an
//!   unknown agent id gets a challenge of the same shape at the same cost — the endpoint does
//!   not tell which agents exist;
//! - a challenge names its agent and tenant through the tag: one given to another agent, or by
//!   another tenant, is refused ([`open`]);
//! - single use is the store's: the random part is recorded against the agent until `exp`
//!   (`use_agent_challenge`) when the answer is accepted.

use crate::context::ProtocolContext;
use crate::error::OAuthError;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use std::time::Duration;
use subtle::ConstantTimeEq;
use svc_crypto::digest::hmac_sha256;
use svc_domain::{AgentId, Tenant};

/// Domain separation of the tag from every other use of the pairwise secret.
const CONTEXT: &[u8] = b"svc-agent-challenge";

/// Random bytes in a challenge.
const RANDOM_BYTES: usize = 16;

/// Bytes of the tag kept: 128 bits.
const TAG_BYTES: usize = 16;

/// Decoded length of a challenge.
const CHALLENGE_BYTES: usize = 8 + RANDOM_BYTES + TAG_BYTES;

/// `[challenge]` in the engine's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeSettings {
    /// Challenges are handed out and agent assertions accepted.
    pub enabled: bool,
    /// How long a challenge may be answered.
    pub lifetime: Duration,
}

impl Default for ChallengeSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            lifetime: Duration::from_secs(60),
        }
    }
}

/// The answer of the challenge endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Challenge {
    /// To be signed as the assertion's `nonce`.
    pub challenge: String,
    /// Seconds it may be answered.
    pub expires_in: u64,
}

/// A challenge that names the agent presenting it and has not expired; single use is still to
/// be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opened {
    /// The random part (base64url): what the single-use record keys on.
    pub(crate) id: String,
    /// Its `exp` (Unix seconds).
    pub(crate) exp: i64,
}

fn tag(tenant: &Tenant, agent: &str, exp: &[u8], random: &[u8]) -> [u8; TAG_BYTES] {
    let mut input = Vec::with_capacity(CONTEXT.len() + agent.len() + 2 + exp.len() + random.len());
    input.extend_from_slice(CONTEXT);
    input.push(0);
    input.extend_from_slice(agent.as_bytes());
    input.push(0);
    input.extend_from_slice(exp);
    input.extend_from_slice(random);
    let mac = hmac_sha256(tenant.pairwise_secret.as_bytes(), &input);
    let mut out = [0u8; TAG_BYTES];
    out.copy_from_slice(&mac[..TAG_BYTES]);
    out
}

/// A challenge for `agent` of `tenant`, answerable until `exp`, with `random` as its random part.
pub(crate) fn mint(tenant: &Tenant, agent: &str, exp: i64, random: [u8; RANDOM_BYTES]) -> String {
    let exp = exp.to_be_bytes();
    let mut bytes = Vec::with_capacity(CHALLENGE_BYTES);
    bytes.extend_from_slice(&exp);
    bytes.extend_from_slice(&random);
    bytes.extend_from_slice(&tag(tenant, agent, &exp, &random));
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Why a presented challenge is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChallengeRefused {
    /// Not one of ours for this agent and tenant (malformed, forged, another agent's).
    Foreign,
    /// Ours, but past its `exp`.
    Expired,
}

/// Checks that `presented` was minted for `agent` of `tenant` and is still answerable at `now`
/// (Unix seconds). The tag is compared in constant time.
pub(crate) fn open(
    tenant: &Tenant,
    agent: &str,
    presented: &str,
    now: i64,
) -> Result<Opened, ChallengeRefused> {
    // Longer text cannot decode to the right length; refuse it before decoding.
    if presented.len() > 64 {
        return Err(ChallengeRefused::Foreign);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(presented)
        .map_err(|_| ChallengeRefused::Foreign)?;
    if bytes.len() != CHALLENGE_BYTES {
        return Err(ChallengeRefused::Foreign);
    }
    let (exp, rest) = bytes.split_at(8);
    let (random, presented_tag) = rest.split_at(RANDOM_BYTES);
    let expected = tag(tenant, agent, exp, random);
    if !bool::from(expected.ct_eq(presented_tag)) {
        return Err(ChallengeRefused::Foreign);
    }
    let mut exp_bytes = [0u8; 8];
    exp_bytes.copy_from_slice(exp);
    let exp = i64::from_be_bytes(exp_bytes);
    if exp <= now {
        return Err(ChallengeRefused::Expired);
    }
    Ok(Opened {
        id: URL_SAFE_NO_PAD.encode(random),
        exp,
    })
}

/// `POST /oauth/agent/challenge` for every tenant.
pub struct ChallengeEndpoint {
    ctx: ProtocolContext,
    settings: ChallengeSettings,
}

impl ChallengeEndpoint {
    /// The endpoint over `ctx` with `settings`.
    pub fn new(ctx: ProtocolContext, settings: ChallengeSettings) -> Self {
        Self { ctx, settings }
    }

    /// The settings in force.
    pub fn settings(&self) -> &ChallengeSettings {
        &self.settings
    }

    /// A challenge for the agent named by the form's one `agent_id`. Any well-formed agent id
    /// gets one (see the module documentation); a missing, repeated or malformed one is
    /// `invalid_request`.
    pub fn start(
        &self,
        tenant: &Tenant,
        form: &[(String, String)],
    ) -> Result<Challenge, OAuthError> {
        let mut ids = form.iter().filter(|(k, _)| k == "agent_id").map(|(_, v)| v);
        let agent = match (ids.next(), ids.next()) {
            (Some(one), None) => one,
            (None, _) => return Err(OAuthError::invalid_request("agent_id is required")),
            (Some(_), Some(_)) => {
                return Err(OAuthError::invalid_request(
                    "agent_id must not be repeated (RFC 6749 §3.2)",
                ));
            }
        };
        let agent = AgentId::parse(agent).map_err(|_| {
            OAuthError::invalid_request("agent_id must be a registered agent's id (agt_…)")
        })?;
        let lifetime = self.settings.lifetime.as_secs();
        let exp = self.ctx.clock.now().unix_timestamp() + i64::try_from(lifetime).unwrap_or(60);
        let mut random = [0u8; RANDOM_BYTES];
        self.ctx.rng.fill(&mut random);
        Ok(Challenge {
            challenge: mint(tenant, agent.as_str(), exp, random),
            expires_in: lifetime,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{
        ManualClock, MfaPolicy, PairwiseSecret, SeededRandom, TenantId, TenantSlug, TenantStatus,
    };

    fn tenant(slug: &str, seed: u64) -> Tenant {
        let t0 = time::OffsetDateTime::UNIX_EPOCH;
        let rng = SeededRandom::new(seed);
        Tenant {
            id: TenantId::generate(&ManualClock::new(t0), &rng),
            slug: TenantSlug::parse(slug).unwrap(),
            display_name: slug.into(),
            status: TenantStatus::Active,
            signup_enabled: false,
            mfa_policy: MfaPolicy::Default,
            pairwise_secret: PairwiseSecret::generate(&rng),
            created_at: t0,
            updated_at: t0,
        }
    }

    const AGENT: &str = "agt_01jd0000000000000000000000";
    const OTHER: &str = "agt_01jd0000000000000000000001";

    #[test]
    fn a_challenge_opens_for_its_agent_and_tenant_until_it_expires() {
        let acme = tenant("acme", 1);
        let c = mint(&acme, AGENT, 1_000, [7; 16]);
        let opened = open(&acme, AGENT, &c, 999).expect("open");
        assert_eq!(opened.exp, 1_000);
        assert_eq!(opened.id, URL_SAFE_NO_PAD.encode([7u8; 16]));
        assert_eq!(
            open(&acme, AGENT, &c, 1_000),
            Err(ChallengeRefused::Expired)
        );
    }

    #[test]
    fn another_agent_or_tenant_cannot_use_it() {
        let acme = tenant("acme", 1);
        let other = tenant("other", 2);
        let c = mint(&acme, AGENT, 1_000, [7; 16]);
        assert_eq!(open(&acme, OTHER, &c, 0), Err(ChallengeRefused::Foreign));
        assert_eq!(open(&other, AGENT, &c, 0), Err(ChallengeRefused::Foreign));
    }

    #[test]
    fn tampered_or_malformed_challenges_are_foreign() {
        let acme = tenant("acme", 1);
        let c = mint(&acme, AGENT, 1_000, [7; 16]);
        let mut bytes = URL_SAFE_NO_PAD.decode(&c).unwrap();
        // A later expiry, keeping the tag: the tag covers it.
        bytes[7] ^= 0x01;
        let stretched = URL_SAFE_NO_PAD.encode(&bytes);
        assert_eq!(
            open(&acme, AGENT, &stretched, 0),
            Err(ChallengeRefused::Foreign)
        );
        for bad in [
            "",
            "not base64 !",
            &c[..c.len() - 2],
            &"A".repeat(65),
            &format!("{c}AA"),
        ] {
            assert_eq!(
                open(&acme, AGENT, bad, 0),
                Err(ChallengeRefused::Foreign),
                "{bad}"
            );
        }
    }
}
