//! What a route demands of an access token: the inputs of rules 3–10 (and 6b).

use crate::claims::SubjectType;

/// Default clock-skew allowance for `exp` and `nbf` (rule 5), in seconds.
pub const DEFAULT_LEEWAY_SECS: u64 = 5;

/// Most actors a delegated token's chain may name unless a route says otherwise: the issuer's
/// default cap (CONTRACTS.md, `[delegation].max_chain_depth`).
pub const DEFAULT_MAX_DELEGATION_DEPTH: usize = 3;

/// What one protected route demands of an access token (spec "Access-token validation contract
/// for protected APIs", rules 3–10, and rule 6b for routes scoped to one organization).
///
/// Build it per route (or per request, when the owning tenant comes from the request):
///
/// ```
/// use svc_sdk::{Requirements, SubjectType};
///
/// let req = Requirements::new("https://acme.id.example", "https://acme.id.example/api/v1", "ten_01")
///     .with_scope("users:read")
///     .with_subject_types([SubjectType::Human, SubjectType::System])
///     .with_organization("org_01hzzzzzzzzzzzzzzzzzzzzzzz");
/// assert_eq!(req.required_scope.as_deref(), Some("users:read"));
/// assert_eq!(req.organization.as_deref(), Some("org_01hzzzzzzzzzzzzzzzzzzzzzzz"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirements {
    /// Rule 3: the issuer URL `iss` must equal exactly (no normalisation).
    pub issuer: String,
    /// Rule 4: this API's own audience, which `aud` must contain. For the svc management APIs it
    /// is `{issuer}/api/v1` (CONTRACTS.md "Tenant API scopes and audience").
    pub audience: String,
    /// Rule 6: the tenant owning the resource; `tenant_id` must equal it.
    pub tenant_id: String,
    /// Rule 6b: the organization owning the resource (its id, `org_…`), for a route scoped to
    /// one organization: the token's organization (`org_id`, else `org`) must equal it exactly.
    /// `None` (the default) checks no organization.
    pub organization: Option<String>,
    /// Rule 7: the scope the route requires, if any. One scope token; `*:write` does not imply
    /// `*:read`.
    pub required_scope: Option<String>,
    /// Rule 8: the subject types the route accepts. Empty accepts none (fail closed).
    pub subject_types: Vec<SubjectType>,
    /// Rule 9: whether a delegated token (one carrying `act`) is accepted.
    pub allow_delegation: bool,
    /// Rule 9: most actors a delegated token's chain may name (the acting party and those it
    /// acts through). Default [`DEFAULT_MAX_DELEGATION_DEPTH`].
    pub max_delegation_depth: usize,
    /// Rule 9: the parties (their `sub`) trusted to act, as the outermost `act`; empty trusts
    /// any party the issuer let act.
    pub trusted_actors: Vec<String>,
    /// Rule 10: the RFC 7638 thumbprint of the key of a DPoP proof the caller has already
    /// verified for this request (RFC 9449 §4.3, including `ath`, `htm`, `htu`, `iat` and its
    /// `jti` replay check). This crate does not verify DPoP proofs; `None` means no proof.
    pub dpop_jkt: Option<String>,
    /// Rule 5: clock-skew allowance for `exp` and `nbf`, in seconds. Keep it small (0–30).
    pub leeway_secs: u64,
}

impl Requirements {
    /// Requirements for `issuer`, `audience` and the owning `tenant_id`, with: no organization,
    /// no required scope, subject types `human`, `agent` and `system` (not `anonymous`), no
    /// delegation, no DPoP proof, and [`DEFAULT_LEEWAY_SECS`].
    pub fn new(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        tenant_id: impl Into<String>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            audience: audience.into(),
            tenant_id: tenant_id.into(),
            organization: None,
            required_scope: None,
            subject_types: vec![SubjectType::Human, SubjectType::Agent, SubjectType::System],
            allow_delegation: false,
            max_delegation_depth: DEFAULT_MAX_DELEGATION_DEPTH,
            trusted_actors: Vec::new(),
            dpop_jkt: None,
            leeway_secs: DEFAULT_LEEWAY_SECS,
        }
    }

    /// Requires the token to act in the organization with this id (`org_…`), compared exactly
    /// (rule 6b).
    #[must_use]
    pub fn with_organization(mut self, id: impl Into<String>) -> Self {
        self.organization = Some(id.into());
        self
    }

    /// Requires `scope` (rule 7).
    #[must_use]
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.required_scope = Some(scope.into());
        self
    }

    /// Accepts exactly these subject types (rule 8).
    #[must_use]
    pub fn with_subject_types(mut self, types: impl IntoIterator<Item = SubjectType>) -> Self {
        self.subject_types = types.into_iter().collect();
        self
    }

    /// Accepts or refuses delegated tokens (rule 9).
    #[must_use]
    pub fn with_delegation(mut self, allow: bool) -> Self {
        self.allow_delegation = allow;
        self
    }

    /// Accepts delegated tokens whose chain names at most `depth` actors (rule 9).
    #[must_use]
    pub fn with_max_delegation_depth(mut self, depth: usize) -> Self {
        self.max_delegation_depth = depth;
        self
    }

    /// Accepts delegated tokens only when the acting party (the outermost `act`) is one of
    /// `actors` (rule 9).
    #[must_use]
    pub fn with_trusted_actors<I, S>(mut self, actors: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.trusted_actors = actors.into_iter().map(Into::into).collect();
        self
    }

    /// Records the thumbprint of a DPoP proof the caller verified for this request (rule 10).
    #[must_use]
    pub fn with_dpop_jkt(mut self, jkt: impl Into<String>) -> Self {
        self.dpop_jkt = Some(jkt.into());
        self
    }

    /// Sets the clock-skew allowance (rule 5).
    #[must_use]
    pub fn with_leeway_secs(mut self, secs: u64) -> Self {
        self.leeway_secs = secs;
        self
    }
}
