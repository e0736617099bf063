//! An agent as the management API shows it.

use serde::Serialize;
use svc_domain::Agent;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A registered agent.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "agt_01jd3k2m4n5p6q7r8s9t0v1w2x", "name": "Travel booking assistant",
    "owner": "usr_01jd2p6r8t0v2x4z6b8d0f2h4k",
    "jwks": {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1",
                        "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]},
    "allowed_scopes": ["bookings:read", "bookings:write"],
    "allowed_resources": ["https://api.example.com/bookings"],
    "authorization_details_types": [],
    "metadata": {"model": "assistant-2"}, "status": "active",
    "created_at": "2026-11-25T10:00:00Z", "updated_at": "2026-11-25T10:00:00Z",
    "revoked_at": null
}))]
pub struct AgentView {
    /// Its id (`agt_…`): the `sub` of its tokens.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Who answers for it (`usr_…` or `app_…`).
    pub owner: String,
    /// Its public keys (JWK Set).
    #[schema(value_type = Object)]
    pub jwks: serde_json::Value,
    /// The most it may ever be granted, sorted.
    pub allowed_scopes: Vec<String>,
    /// The API resources it may obtain tokens for.
    pub allowed_resources: Vec<String>,
    /// The RAR detail types (RFC 9396) it may ask people to delegate.
    pub authorization_details_types: Vec<crate::applications::DetailTypeInput>,
    /// What the tenant keeps with it.
    #[schema(value_type = Object)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// `active`, `suspended` or `revoked`.
    pub status: &'static str,
    /// When it was registered.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it last changed.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// When it was revoked; `null` unless it was.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&Agent> for AgentView {
    fn from(agent: &Agent) -> Self {
        Self {
            id: agent.id.to_string(),
            name: agent.name.clone(),
            owner: agent.owner.to_string(),
            // Checked JSON when stored; an unreadable set shows as empty rather than failing
            // the whole read.
            jwks: serde_json::from_str(&agent.jwks).unwrap_or_else(|_| serde_json::json!({})),
            allowed_scopes: agent
                .allowed_scopes
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            allowed_resources: agent.allowed_resources.clone(),
            authorization_details_types: agent
                .authorization_details_types
                .iter()
                .map(Into::into)
                .collect(),
            metadata: agent.metadata.clone(),
            status: agent.status.as_str(),
            created_at: agent.created_at,
            updated_at: agent.updated_at,
            revoked_at: agent.revoked_at,
        }
    }
}
