//! DPoP (RFC 9449) on the server side: which proofs a request's `DPoP` header may carry, the
//! `jti` replay record, server nonces, and how a token is bound to a proof key.
//!
//! The stateless checks of a proof (signature, `typ`, `alg`, `jwk`, `htm`, `htu`, `iat`, `ath`)
//! are `svc_sdk::dpop`'s, the same code resource servers run. This module adds, in this order:
//! 1. DPoP switched off (`[dpop].enabled = false`): the header is ignored, nothing is bound;
//! 2. one header at most (RFC 9449 §4.3 item 1);
//! 3. the stateless checks;
//! 4. the server nonce when `[dpop].require_nonce` (§8): the proof must carry the current or
//!    the previous nonce, else `use_dpop_nonce` with a fresh one in `DPoP-Nonce`;
//! 5. the `jti` is used once per tenant and key within the window (§11.1), through
//!    [`ProofReplay`].
//!
//! Nonces are `HMAC-SHA-256(tenant pairwise secret, "dpop-nonce" ‖ period)` truncated to 128
//! bits: every instance computes the same value without sharing state, a client cannot compute
//! the next one, and none is stored.
//!
//! Where the replay record lives is the composition root's choice: [`InstanceReplay`] (this
//! process's memory) is sound only while one instance serves the database, which is what a
//! deployment without `[kms]` is (`instance_lease`); with `[kms]` several instances may serve, and
//! [`StoreReplay`] records proofs in the database's single-use ids.

use crate::error::{ErrorCode, OAuthError};
use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use svc_crypto::digest::hmac_sha256;
use svc_domain::{Clock, Tenant, TenantId};
use svc_sdk::dpop::{ProofError, ProofRequest, ReplayCache, verify_proof};
use svc_store::{Store, StoreError};
use time::OffsetDateTime;

pub use svc_sdk::dpop::{PROOF_ALGORITHMS, ProofError as DpopProofError, proof_header};

/// The `token_type` of a DPoP-bound access token (RFC 9449 §5).
pub const TOKEN_TYPE_DPOP: &str = "DPoP";

/// Most live proofs the in-process replay record holds: proofs live up to twice the window
/// (121 s by default), so this covers 30,000 proofs per second sustained, twice what one
/// instance verifies on the bench machine, in about 250 MiB at most.
const INSTANCE_REPLAY_CAPACITY: usize = 4_000_000;

/// `[dpop]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpopSettings {
    /// Proofs are accepted and bind tokens.
    pub enabled: bool,
    /// Every proof must carry a current server nonce.
    pub require_nonce: bool,
    /// How far `iat` may be from now, either side.
    pub proof_window: Duration,
    /// How long one nonce is current.
    pub nonce_lifetime: Duration,
}

impl Default for DpopSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            require_nonce: false,
            proof_window: Duration::from_secs(60),
            nonce_lifetime: Duration::from_secs(300),
        }
    }
}

/// The single-use record of proof `jti`s (RFC 9449 §11.1).
#[async_trait]
pub trait ProofReplay: Send + Sync {
    /// Records the proof `jti` of key `jkt` in `tenant` until `until`; `false` when it was
    /// already recorded and is still live at `now`.
    async fn first_use(
        &self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        until: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, OAuthError>;
}

/// Proofs remembered in this process: for deployments served by one instance.
#[derive(Debug)]
pub struct InstanceReplay(ReplayCache);

impl Default for InstanceReplay {
    fn default() -> Self {
        Self(ReplayCache::new(INSTANCE_REPLAY_CAPACITY))
    }
}

#[async_trait]
impl ProofReplay for InstanceReplay {
    async fn first_use(
        &self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        until: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, OAuthError> {
        // The tenant is the scope: tenants never share a record.
        Ok(self
            .0
            .check_and_record_in(
                tenant.as_str(),
                jkt,
                jti,
                until.unix_timestamp(),
                now.unix_timestamp(),
            )
            .is_ok())
    }
}

/// Proofs recorded in the database, shared by every instance on it.
pub struct StoreReplay(pub Arc<dyn Store>);

#[async_trait]
impl ProofReplay for StoreReplay {
    async fn first_use(
        &self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        until: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, OAuthError> {
        // One statement: autocommit saves the BEGIN and COMMIT round trips on every proof.
        let mut tx = self.0.write_once().await?;
        match tx.use_proof_id(tenant, jkt, jti, until, now).await {
            Ok(()) => {
                tx.commit().await?;
                Ok(true)
            }
            Err(StoreError::Conflict { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

/// A proof that passed every check but the replay record ([`Dpop::check`]); only
/// [`Dpop::record`] turns it into a [`Proof`].
#[derive(Debug)]
pub struct CheckedProof {
    jkt: String,
    jti: String,
    until: OffsetDateTime,
}

/// A verified, first-used proof: the key a token may be bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// RFC 7638 thumbprint of the proof key (`cnf.jkt`).
    pub jkt: String,
}

/// What a request carried in its `DPoP` header, as the HTTP layer read it.
pub type ProofHeader<'a> = Result<Option<&'a str>, ProofError>;

/// The server side of DPoP for every endpoint of every tenant.
pub struct Dpop {
    settings: DpopSettings,
    replay: Arc<dyn ProofReplay>,
    clock: Arc<dyn Clock>,
}

impl Dpop {
    /// DPoP with `settings`, recording proofs in `replay`.
    pub fn new(
        settings: DpopSettings,
        replay: Arc<dyn ProofReplay>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            settings,
            replay,
            clock,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &DpopSettings {
        &self.settings
    }

    /// Steps 1–5 for a request to `url` with `method`, carrying `header` and, at a resource,
    /// `access_token`: [`Self::check`] then [`Self::record`]. `Ok(None)`: no proof (or DPoP
    /// off). Refusals are `invalid_dpop_proof` or `use_dpop_nonce`, carrying the nonce to retry
    /// with when nonces are required.
    pub async fn verify(
        &self,
        tenant: &Tenant,
        header: ProofHeader<'_>,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<Option<Proof>, OAuthError> {
        match self.check(tenant, header, method, url, access_token)? {
            Some(checked) => self.record(tenant, checked).await.map(Some),
            None => Ok(None),
        }
    }

    /// Steps 1–4, which write nothing: an endpoint that authenticates its caller checks the
    /// proof first and [records](Self::record) it only once the caller is known, so nobody can
    /// spend someone else's proof (or make the database record proofs) without credentials.
    pub fn check(
        &self,
        tenant: &Tenant,
        header: ProofHeader<'_>,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<Option<CheckedProof>, OAuthError> {
        // 1.
        if !self.settings.enabled {
            return Ok(None);
        }
        // 2.
        let Some(proof) = header.map_err(|e| self.refusal(tenant, &e))? else {
            return Ok(None);
        };
        // 3.
        let now = self.clock.now();
        let window = i64::try_from(self.settings.proof_window.as_secs()).unwrap_or(i64::MAX);
        let verified = verify_proof(
            proof,
            &ProofRequest {
                method,
                url,
                access_token,
                now_unix: now.unix_timestamp(),
                iat_window_secs: window,
            },
        )
        .map_err(|e| self.refusal(tenant, &e))?;
        // 4.
        if self.settings.require_nonce && !self.nonce_is_current(tenant, verified.nonce.as_deref())
        {
            return Err(self.refusal(tenant, &ProofError::UseNonce));
        }
        // Remembered until its `iat` has left the window (step 3 bounds `iat`, so the instant
        // exists).
        let until = OffsetDateTime::from_unix_timestamp(
            verified.iat.saturating_add(window).saturating_add(1),
        )
        .unwrap_or(now)
        .max(now);
        Ok(Some(CheckedProof {
            jkt: verified.jkt,
            jti: verified.jti,
            until,
        }))
    }

    /// Step 5: the proof's first use, or `invalid_dpop_proof` for a replay. The only way to a
    /// [`Proof`] a token may be bound to.
    pub async fn record(
        &self,
        tenant: &Tenant,
        checked: CheckedProof,
    ) -> Result<Proof, OAuthError> {
        let now = self.clock.now();
        if !self
            .replay
            .first_use(&tenant.id, &checked.jkt, &checked.jti, checked.until, now)
            .await?
        {
            return Err(self.refusal(tenant, &ProofError::Replayed));
        }
        Ok(Proof { jkt: checked.jkt })
    }

    /// The nonce clients must put in proofs now, when nonces are required.
    pub fn current_nonce(&self, tenant: &Tenant) -> Option<String> {
        self.settings
            .require_nonce
            .then(|| self.nonce_at(tenant, self.period()))
    }

    /// An `OAuthError` for `error`, with the nonce to use when nonces are required.
    fn refusal(&self, tenant: &Tenant, error: &ProofError) -> OAuthError {
        let code = match error {
            ProofError::UseNonce => ErrorCode::UseDpopNonce,
            _ => ErrorCode::InvalidDpopProof,
        };
        let refusal = OAuthError::new(code, error.to_string());
        match self.current_nonce(tenant) {
            Some(nonce) => refusal.with_dpop_nonce(nonce),
            None => refusal,
        }
    }

    fn period(&self) -> u64 {
        let lifetime = self.settings.nonce_lifetime.as_secs().max(1);
        u64::try_from(self.clock.now().unix_timestamp()).unwrap_or(0) / lifetime
    }

    fn nonce_at(&self, tenant: &Tenant, period: u64) -> String {
        let mut input = b"dpop-nonce\n".to_vec();
        input.extend_from_slice(&period.to_be_bytes());
        let mac = hmac_sha256(tenant.pairwise_secret.as_bytes(), &input);
        URL_SAFE_NO_PAD.encode(mac.get(..16).unwrap_or(&mac))
    }

    /// The current nonce or the previous one, compared in constant time.
    fn nonce_is_current(&self, tenant: &Tenant, presented: Option<&str>) -> bool {
        let Some(presented) = presented else {
            return false;
        };
        let now = self.period();
        [now, now.saturating_sub(1)].into_iter().any(|period| {
            let expected = self.nonce_at(tenant, period);
            subtle::ConstantTimeEq::ct_eq(presented.as_bytes(), expected.as_bytes()).into()
        })
    }
}

/// The `cnf` claim binding a token to `jkt` (RFC 9449 §6.1).
pub fn confirmation(jkt: &str) -> Value {
    serde_json::json!({ "jkt": jkt })
}

/// RFC 9449 §7.1 at our own resources (UserInfo, the management API): a bound token needs the
/// `DPoP` scheme and a proof of its key; the `DPoP` scheme needs a bound token. `proof` is the
/// verified proof that came with a `DPoP`-scheme request (`None` with `Bearer`).
pub fn check_binding(
    claims: &Value,
    dpop_scheme: bool,
    proof: Option<&Proof>,
) -> Result<(), OAuthError> {
    let Some(claims) = claims.as_object() else {
        return Err(OAuthError::invalid_token("the access token is malformed"));
    };
    let jkt = if dpop_scheme {
        proof.map(|p| p.jkt.as_str())
    } else {
        // RFC 9449 §7.2: a bound token presented as a bearer token is refused.
        None
    };
    svc_sdk::rules::dpop::check_dpop_binding(claims, jkt)
        .map_err(|e| OAuthError::invalid_token(e.to_string()).with_dpop_challenge())?;
    if dpop_scheme && !claims.contains_key("cnf") {
        return Err(OAuthError::invalid_token(
            svc_sdk::ValidationError::DpopTokenNotBound.to_string(),
        )
        .with_dpop_challenge());
    }
    Ok(())
}

#[cfg(test)]
#[path = "dpop_tests.rs"]
mod tests;
