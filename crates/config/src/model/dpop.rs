//! `[dpop]`: sender-constrained tokens (RFC 9449) — whether DPoP proofs are accepted, and the
//! server nonce and proof-freshness rules.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DPoP (Demonstrating Proof of Possession).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DpopConfig {
    /// Accept `DPoP` proofs at the token endpoint (every grant then issues access tokens bound
    /// to the proof key, `cnf.jkt`, `token_type: DPoP`, and binds public clients' refresh
    /// tokens), the `dpop_jkt` authorization parameter, proofs at PAR, `Authorization: DPoP` at
    /// UserInfo and the management API, and the `dpop_bound_access_tokens` application setting.
    /// When false a request carrying a proof is served as if it had none and discovery
    /// advertises nothing. Default: true.
    pub enabled: bool,
    /// Require a server nonce (RFC 9449 §8, §9) in every proof: a proof without the current
    /// nonce is answered `use_dpop_nonce` with a `DPoP-Nonce` header to retry with. Nonces are
    /// derived per tenant from the tenant's secret and the time, so every instance knows them
    /// without sharing state. Default: false.
    pub require_nonce: bool,
    /// How far a proof's `iat` may be from the server's clock, either side, in seconds; a proof's
    /// `jti` is remembered until its `iat` has left this window, to refuse replays. Default: 60.
    /// Allowed range: 5..=300.
    pub proof_window_secs: u32,
    /// How long one server nonce is current, in seconds; the previous one is still accepted
    /// for as long again. Default: 300. Allowed range: 30..=3600.
    pub nonce_lifetime_secs: u32,
}

impl Default for DpopConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            require_nonce: false,
            proof_window_secs: 60,
            nonce_lifetime_secs: 300,
        }
    }
}
