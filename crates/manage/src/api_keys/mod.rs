//! API keys (CONTRACTS.md "Organizations, roles, keys, SCIM"; issue 19 item 5): a tenant's
//! long-lived machine credentials for its management API, `svck_…` presented as
//! `Authorization: Bearer`. Created with scopes and an optional expiry, shown once, stored as a
//! keyed hash (`svc_crypto::ApiKeyHasher`), listed without secrets, rotated with an overlap,
//! revoked; `last_used_at` kept at a minute's precision.
//!
//! Managing keys needs `applications:write` (reading them `applications:read`): a key is a
//! machine credential like a management application's client secret, and the contract's scope
//! list has no `api_keys:*` scope. Inventing one would let nobody manage keys until every
//! management application was granted it, and would put a scope in tokens that no other
//! deployment of the contract knows.
//!
//! No privilege escalation: a management key's scopes must be management scopes that its creator
//! holds (the caller's own token or key), and rotating a key (which hands out a new secret with
//! the same scopes) needs every scope the key holds. A management key reaches the whole tenant.
//!
//! Where the deployment allows (`[api_keys].subject_keys`), a key may instead act as a person
//! or an agent at one API resource of the tenant: its scopes are permissions that API defines,
//! the management API refuses it, and that API's resource servers learn at introspection what
//! it grants now — at most what the person's roles grant there (while they may sign in), or
//! what the agent's `allowed_scopes` allow (while it is active and the API is among its
//! `allowed_resources`). Creating or rotating one needs `users:write` (a person) or
//! `agents:write` (an agent): it hands out a credential in that subject's name.
//!
//! Where the tenant's policy also allows ([`policy`], `/api/v1/api-key-policy`), people create
//! such keys for themselves on the account page ([`own`]).
//!
//! [`ApiKeys`] is the service the runtime builds once per process: the hasher, the limits and
//! the short positive cache of authenticated keys ([`auth`]).

pub mod auth;
mod manage;
pub mod own;
pub mod policy;

pub use manage::{create, get, list, revoke, rotate};

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use svc_crypto::ApiKeyHasher;
use svc_domain::{ApiKey, ApiKeyId, KeyReach, TenantId};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// Default overlap of a rotation: the old key keeps working for a day.
pub const DEFAULT_OVERLAP_SECS: u32 = 86_400;
/// Longest overlap of a rotation: seven days.
pub const MAX_OVERLAP_SECS: u32 = 7 * 86_400;

/// The deployment's limits on keys (`[api_keys]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiKeySettings {
    /// Most live (unrevoked, unexpired) keys a tenant holds.
    pub max_per_tenant: u32,
    /// Longest lifetime a key may be given; `None`: keys may never expire.
    pub max_lifetime: Option<Duration>,
    /// Whether keys acting as a person or an agent at an API may be created
    /// (`[api_keys].subject_keys`).
    pub subject_keys: bool,
}

impl Default for ApiKeySettings {
    fn default() -> Self {
        Self {
            max_per_tenant: 100,
            max_lifetime: None,
            subject_keys: false,
        }
    }
}

/// The API-key service of one process: hashing, limits, and the positive cache.
pub struct ApiKeys {
    pub(crate) hasher: Arc<ApiKeyHasher>,
    pub(crate) settings: ApiKeySettings,
    pub(crate) cache: auth::KeyCache,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl ApiKeys {
    /// The service over the deployment's `hasher`, with `settings`.
    #[must_use]
    pub fn new(hasher: Arc<ApiKeyHasher>, settings: ApiKeySettings) -> Self {
        Self {
            hasher,
            settings,
            cache: auth::KeyCache::default(),
        }
    }

    /// Forgets the cached copy of key `id` (another instance revoked or rotated it).
    pub fn forget(&self, tenant: &TenantId, id: &ApiKeyId) {
        self.cache.forget(tenant, id);
    }

    /// Forgets every cached key.
    pub fn forget_all(&self) {
        self.cache.clear();
    }

    /// The deployment's hasher (introspection hashes presented keys with it).
    #[must_use]
    pub fn hasher(&self) -> &Arc<ApiKeyHasher> {
        &self.hasher
    }
}

/// What a caller sends to create a key. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "CI deploy", "scopes": ["applications:read"],
    "expires_at": "2027-05-24T10:00:00Z"
}))]
pub struct NewApiKey {
    /// What the key is for (1 to 100 characters, not unique).
    pub name: String,
    /// A management key: the management scopes it holds, at least one, each held by the
    /// caller. A key for an API (`subject` and `resource`): 1 to 50 permissions that API
    /// defines.
    pub scopes: Vec<String>,
    /// Whom the key acts as at `resource`: a person (`usr_…`, needs `users:write`) or an agent
    /// (`agt_…`, needs `agents:write`). Only where the deployment allows
    /// (`[api_keys].subject_keys`); with `resource`, never without.
    #[serde(default)]
    pub subject: Option<String>,
    /// The identifier of the tenant's API resource the key is for (its resource servers see it
    /// at introspection as `aud`); with `subject`, never without.
    #[serde(default)]
    pub resource: Option<String>,
    /// When it stops working (RFC 3339, in the future, within the deployment's maximum
    /// lifetime); absent: never, or at the maximum lifetime when the deployment sets one.
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
}

/// What a caller may send to rotate a key. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"overlap_secs": 3600}))]
pub struct RotateApiKey {
    /// How long the old key keeps working, in seconds: 0 (stops at once) to 604800 (7 days);
    /// default 86400.
    #[serde(default)]
    #[schema(maximum = 604800)]
    pub overlap_secs: Option<u32>,
}

/// A key as listed and read (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "apik_01jd3k2m4n5p6q7r8s9t0v1w2x", "name": "CI deploy",
    "scopes": ["applications:read"], "subject": null, "resource_id": null,
    "created_by": "client:app_01jd3k2m4n5p6q7r8s9t0v1w2y",
    "created_at": "2026-11-24T10:00:00Z", "expires_at": "2027-05-24T10:00:00Z",
    "last_used_at": null, "revoked_at": null, "rotated_from": null
}))]
pub struct ApiKeyView {
    /// Its handle (`apik_…`).
    pub id: String,
    /// What it is for.
    pub name: String,
    /// The management scopes it holds, or the API permissions it may carry at most, sorted.
    pub scopes: Vec<String>,
    /// Whom it acts as at `resource` (`usr_…`, `agt_…`); `null` for a management key.
    #[schema(required = true)]
    pub subject: Option<String>,
    /// The id of the API resource it is for (`res_…`); `null` for a management key.
    #[schema(required = true)]
    pub resource_id: Option<String>,
    /// Who created it (`client:app_…`, `user:usr_…`, `api_key:apik_…`).
    pub created_by: String,
    /// When it was created.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it stops working; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub expires_at: Option<OffsetDateTime>,
    /// When it was last accepted (to the minute); `null`: never used.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub last_used_at: Option<OffsetDateTime>,
    /// When it was revoked; `null` while it works.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub revoked_at: Option<OffsetDateTime>,
    /// The key it replaced by rotation; `null` otherwise.
    #[schema(required = true)]
    pub rotated_from: Option<String>,
}

impl From<&ApiKey> for ApiKeyView {
    fn from(key: &ApiKey) -> Self {
        Self {
            id: key.id.to_string(),
            name: key.name.clone(),
            scopes: key.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            subject: match &key.reach {
                KeyReach::Management => None,
                KeyReach::Api { subject, .. } => Some(subject.as_str().to_owned()),
            },
            resource_id: match &key.reach {
                KeyReach::Management => None,
                KeyReach::Api { resource, .. } => Some(resource.to_string()),
            },
            created_by: key.created_by.clone(),
            created_at: key.created_at,
            expires_at: key.expires_at,
            last_used_at: key.last_used_at,
            revoked_at: key.revoked_at,
            rotated_from: key.rotated_from.as_ref().map(ToString::to_string),
        }
    }
}

/// A created (or rotated) key: its view and the key, shown this once.
#[derive(Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "apik_01jd3k2m4n5p6q7r8s9t0v1w2x", "name": "CI deploy",
    "scopes": ["applications:read"], "subject": null, "resource_id": null,
    "created_by": "client:app_01jd3k2m4n5p6q7r8s9t0v1w2y",
    "created_at": "2026-11-24T10:00:00Z", "expires_at": "2027-05-24T10:00:00Z",
    "last_used_at": null, "revoked_at": null, "rotated_from": null,
    "key": "svck_mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpjqwey3dmrsgk3dg"
}))]
pub struct CreatedApiKeyView {
    /// The key as listed.
    #[serde(flatten)]
    pub view: ApiKeyView,
    /// The key to present as `Authorization: Bearer`; only its keyed hash is kept.
    pub key: String,
}

// By hand: the key never reaches a log through `{:?}`.
impl std::fmt::Debug for CreatedApiKeyView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedApiKeyView")
            .field("view", &self.view)
            .finish_non_exhaustive()
    }
}
