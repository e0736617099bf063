//! API keys (CONTRACTS.md "Organizations, roles, keys, SCIM"): long-lived machine credentials
//! presented as `Authorization: Bearer svck_…` — a tenant's for its management API, or one that
//! acts as a person or an agent ([`KeySubject`]) at one of the tenant's APIs.
//!
//! This module owns the record and the key's wire shape: `svck_` and 256 random bits in
//! unpadded lowercase base32 (the SCIM tokens' shape, [`crate::base32_secret`]). How a key is
//! hashed for storage (a keyed hash under a per-tenant key) is `svc_crypto::api_key`'s: the
//! domain performs no keyed cryptography. A revoked key is kept (listed as revoked) so the audit
//! trail keeps pointing at something.

use crate::secret::is_base32_secret_body;
use crate::{
    AgentId, ApiKeyId, ApiResourceId, IdError, MANAGEMENT_API_SCOPES, ScopeSet, SecretHash,
    TenantId, UserId,
};
use time::OffsetDateTime;

/// Prefix of API keys (`svck_…`), so a leaked string says what it is (and secret scanners can
/// find it); distinct from their ids (`apik_…`).
pub const API_KEY_PREFIX: &str = "svck_";

/// Length of every API key: the prefix and 52 base32 characters.
pub const MAX_API_KEY_CHARS: usize = API_KEY_PREFIX.len() + 52;

/// Longest key name, in characters.
pub const MAX_API_KEY_NAME_CHARS: usize = 100;

/// Most scopes one key holds: every management scope at most.
pub const MAX_API_KEY_SCOPES: usize = MANAGEMENT_API_SCOPES.len();

/// Whether `presented` has the exact shape of an API key (prefix, 52 characters of the
/// lowercase base32 alphabet). Anything else is refused before any lookup or hashing, in time
/// independent of whether such a key exists.
pub fn looks_like_api_key(presented: &str) -> bool {
    presented
        .strip_prefix(API_KEY_PREFIX)
        .is_some_and(is_base32_secret_body)
}

/// Whom a key acts as at an API of its tenant (a key without one is a management key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySubject {
    /// A person: the key grants at most what their roles grant there, while they may sign in.
    User(UserId),
    /// An agent: within its `allowed_scopes` and `allowed_resources`, while it is active.
    Agent(AgentId),
}

impl KeySubject {
    /// The subject from its id (`usr_…` or `agt_…`).
    pub fn parse(id: &str) -> Result<Self, IdError> {
        if id.starts_with("agt_") {
            AgentId::parse(id).map(Self::Agent)
        } else {
            UserId::parse(id).map(Self::User)
        }
    }

    /// Its id, as a token's `sub`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::User(id) => id.as_str(),
            Self::Agent(id) => id.as_str(),
        }
    }
}

/// What a key reaches: its tenant's management API, or one API of the tenant as a subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyReach {
    /// The management API, with management scopes (the key is its own subject).
    Management,
    /// One API resource of the tenant, acting as `subject`, with permissions that API defines.
    Api {
        /// The API resource (its tokens' audience).
        resource: ApiResourceId,
        /// Whom the key acts as.
        subject: KeySubject,
    },
}

/// An API key of a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// Its handle.
    pub id: ApiKeyId,
    /// Its tenant.
    pub tenant_id: TenantId,
    /// What it is for, as its creator named it (not unique).
    pub name: String,
    /// What it reaches, and as whom.
    pub reach: KeyReach,
    /// Management scopes (a subset of its creator's at creation), or the API's permissions it
    /// may carry at most.
    pub scopes: ScopeSet,
    /// The keyed hash of the key (never the key).
    pub hash: SecretHash,
    /// Who created it, in the audit log's spelling (`client:app_…`, `user:usr_…`, `api_key:…`).
    pub created_by: String,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it stops working; `None`: never. A rotation brings it forward to the end of the
    /// overlap.
    pub expires_at: Option<OffsetDateTime>,
    /// When it was last accepted (written at most once a minute per key and instance).
    pub last_used_at: Option<OffsetDateTime>,
    /// When it was revoked; a revoked key authenticates nothing.
    pub revoked_at: Option<OffsetDateTime>,
    /// The key this one replaced by rotation, if any.
    pub rotated_from: Option<ApiKeyId>,
}

impl ApiKey {
    /// Whether the key authenticates at `now`: not revoked and not past its expiry.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| now < at)
    }
}

/// Most keys a person may hold at once that a tenant may allow ([`ApiKeyPolicy::max_per_person`]).
pub const MAX_KEYS_PER_PERSON: u32 = 20;
/// Longest lifetime, in days, a tenant may allow people's own keys.
pub const MAX_PERSON_KEY_DAYS: u32 = 365;

/// A tenant's rules for the keys its people create for themselves on the account page: whether
/// they may, for which of the tenant's APIs, how many at once and for how long. Absent, nobody
/// may ([`ApiKeyPolicy::default`]). A person's own key acts as them at one of `resources`, with
/// at most the permissions their roles grant there (checked again at every introspection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyPolicy {
    /// Whether people may create keys for themselves.
    pub self_service: bool,
    /// The APIs they may create them for; never empty while `self_service`.
    pub resources: Vec<ApiResourceId>,
    /// Most live keys one person holds (1 to [`MAX_KEYS_PER_PERSON`]).
    pub max_per_person: u32,
    /// Longest lifetime of one of their keys, in days (1 to [`MAX_PERSON_KEY_DAYS`]): a person's
    /// key always expires.
    pub max_lifetime_days: u32,
    /// Whether they may also create keys for the active agents they own (each within the
    /// agent's `allowed_resources` and `allowed_scopes`); only with `self_service`.
    pub agent_keys: bool,
}

impl Default for ApiKeyPolicy {
    fn default() -> Self {
        Self {
            self_service: false,
            resources: Vec::new(),
            max_per_person: 5,
            max_lifetime_days: 90,
            agent_keys: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, SeededRandom, base32_secret};
    use time::Duration;

    #[test]
    fn keys_have_one_exact_shape() {
        let key = base32_secret(API_KEY_PREFIX, &SeededRandom::new(7));
        assert_eq!(key.len(), MAX_API_KEY_CHARS);
        assert!(looks_like_api_key(&key));
        assert!(!looks_like_api_key(""));
        assert!(!looks_like_api_key(API_KEY_PREFIX));
        assert!(!looks_like_api_key(&key[..key.len() - 1]));
        assert!(!looks_like_api_key(&format!("{key}a")));
        assert!(!looks_like_api_key(&key.to_uppercase()));
        assert!(!looks_like_api_key(&key.replace(API_KEY_PREFIX, "svcx_")));
        let mut wrong_alphabet = key.clone();
        wrong_alphabet.replace_range(10..11, "1");
        assert!(!looks_like_api_key(&wrong_alphabet));
    }

    #[test]
    fn a_key_lives_until_revoked_or_expired() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let rng = SeededRandom::new(1);
        let mut key = ApiKey {
            id: ApiKeyId::generate(&ManualClock::new(now), &rng),
            tenant_id: TenantId::generate(&ManualClock::new(now), &rng),
            name: "ci".into(),
            reach: KeyReach::Management,
            scopes: ScopeSet::parse("applications:read").unwrap_or_default(),
            hash: SecretHash::of("x"),
            created_by: "system".into(),
            created_at: now,
            expires_at: None,
            last_used_at: None,
            revoked_at: None,
            rotated_from: None,
        };
        assert!(key.is_live(now + Duration::days(10_000)));
        key.expires_at = Some(now + Duration::seconds(1));
        assert!(key.is_live(now));
        assert!(!key.is_live(now + Duration::seconds(1)));
        key.expires_at = None;
        key.revoked_at = Some(now);
        assert!(!key.is_live(now));
    }
}
