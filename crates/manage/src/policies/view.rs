//! The JSON shape of a policy on the management API, with its OpenAPI schema. Every member is
//! always sent (lists empty, absent rules `null`), so the schema marks them all required.

use serde::Serialize;
use svc_domain::AccessPolicy;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// An access-control policy as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "pol_01jd2p6r8t0v2x4z6b8d0f2h4k",
    "name": "Finance needs MFA from the office",
    "description": "",
    "enabled": true,
    "targets": {"applications": [], "organizations": ["org_01jd2p6r8t0v2x4z6b8d0f2h4k"],
                "roles": ["accountant"]},
    "rules": {"require_acr": "urn:svc:aal2", "allowed_ip_ranges": ["203.0.113.0/24"],
              "sign_in_methods": [], "max_session_age_secs": 28800},
    "created_at": "2026-11-24T10:15:30.123456Z",
    "updated_at": "2026-11-24T10:15:30.123456Z"
}))]
pub struct PolicyView {
    /// Durable id (`pol_…`).
    #[schema(example = "pol_01jd2p6r8t0v2x4z6b8d0f2h4k")]
    pub id: String,
    /// Unique in the tenant; named in the refusals it causes.
    pub name: String,
    /// For administrators (empty when none was given).
    pub description: String,
    /// Whether it applies.
    pub enabled: bool,
    /// Where it applies.
    pub targets: PolicyTargetsView,
    /// What it requires.
    pub rules: PolicyRulesView,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); the `ETag` of the policy is derived from it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// Where a policy applies (sorted lists; empty: no condition).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PolicyTargetsView {
    /// Application ids.
    pub applications: Vec<String>,
    /// Organization ids.
    pub organizations: Vec<String>,
    /// Role keys.
    pub roles: Vec<String>,
}

/// What a policy requires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PolicyRulesView {
    /// The weakest `acr` accepted, or `null`.
    pub require_acr: Option<String>,
    /// Networks the person's address must be in (empty: anywhere).
    pub allowed_ip_ranges: Vec<String>,
    /// `amr` methods one of which the sign-in used (empty: any).
    pub sign_in_methods: Vec<String>,
    /// How old the sign-in may be, in seconds, or `null`.
    pub max_session_age_secs: Option<u64>,
}

impl From<&AccessPolicy> for PolicyView {
    fn from(policy: &AccessPolicy) -> Self {
        let strings = |items: &mut dyn Iterator<Item = &str>| items.map(str::to_owned).collect();
        Self {
            id: policy.id.as_str().to_owned(),
            name: policy.name.clone(),
            description: policy.description.clone(),
            enabled: policy.enabled,
            targets: PolicyTargetsView {
                applications: strings(&mut policy.targets.applications.iter().map(|i| i.as_str())),
                organizations: strings(
                    &mut policy.targets.organizations.iter().map(|i| i.as_str()),
                ),
                roles: strings(&mut policy.targets.roles.iter().map(|r| r.as_str())),
            },
            rules: PolicyRulesView {
                require_acr: policy.rules.require_acr.clone(),
                allowed_ip_ranges: policy
                    .rules
                    .allowed_ip_ranges
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                sign_in_methods: policy.rules.sign_in_methods.iter().cloned().collect(),
                max_session_age_secs: policy.rules.max_session_age_secs,
            },
            created_at: policy.created_at,
            updated_at: policy.updated_at,
        }
    }
}
