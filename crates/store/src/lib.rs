//! Storage ports of svc: what the engines may ask of a database, in domain terms.
//!
//! A backend (`svc-store-sqlite`, `svc-store-postgres`) implements [`Store`]; the runtime picks one
//! at startup and hands `Arc<dyn Store>` to the engines, which never learn which it is. Work
//! happens in explicit transactions ([`ReadTx`], [`WriteTx`]) so a state change and the records it
//! implies (outbox events, audit entries) commit together or not at all. Every repository
//! call on tenant-owned data takes a [`svc_domain::TenantId`], so crossing tenants is a type error.
//!
//! This crate must not depend on sqlx or any HTTP framework.

mod access;
mod agents;
mod api_keys;
mod applications;
mod audit;
mod backchannel;
mod change_feed;
mod delegations;
mod device;
mod domains;
mod error;
mod factors;
mod grants;
mod invitations;
mod logout;
mod order;
mod organizations;
mod passkeys;
mod policies;
mod pushed;
mod recovery;
mod registration;
mod revocations;
mod scim;
mod scim_groups;
mod signing_keys;
mod social;
mod sso;
mod tenants;
mod users;
mod webhooks;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use access::{AccessReads, AccessWrites};
pub use agents::{AgentReads, AgentWrites};
pub use api_keys::{ApiKeyReads, ApiKeyWrites};
pub use applications::{
    ApplicationReads, ApplicationWrites, OperatorTokenReads, OperatorTokenWrites, UpdateOutcome,
};
pub use audit::{AuditFilter, AuditReads, AuditWrites, CoordinationWrites, IdempotencyRecord};
pub use backchannel::{BackchannelReads, BackchannelWrites};
pub use change_feed::{ChangeFeed, ChangeSubscription, FeedEvent};
pub use delegations::{DelegationReads, DelegationWrites, MAX_DELEGATIONS_READ};
pub use device::{DeviceReads, DeviceWrites};
pub use domains::{DomainReads, DomainWrites};
pub use error::StoreError;
pub use factors::{FactorReads, FactorWrites};
pub use grants::{CodeRedemption, GrantReads, GrantWrites, RefreshRotation};
pub use invitations::{InvitationFilter, InvitationReads, InvitationWrites};
pub use logout::{EXPIRY_LOOKBACK, LogoutReads, LogoutWrites};
pub use order::Order;
pub use organizations::{OrganizationReads, OrganizationWrites};
pub use passkeys::{PasskeyReads, PasskeyWrites};
pub use policies::{PolicyReads, PolicyWrites};
pub use pushed::PushedRequestWrites;
pub use recovery::{RecoveryReads, RecoveryWrites};
pub use registration::{RegistrationReads, RegistrationWrites};
pub use revocations::{
    Check as RevocationCheck, FRESH as REVOCATIONS_FRESH, Loading as RevocationLoad, RevocationSet,
    parse_revocation_message, revocation_message,
};
pub use scim::{
    ScimAttr, ScimFilter, ScimOp, ScimPage, ScimReads, ScimSort, ScimUser, ScimValue, ScimWrites,
};
pub use scim_groups::{
    ScimGroupAttr, ScimGroupMembership, ScimGroupPage, ScimGroupReads, ScimGroupRecord,
    ScimGroupWrites,
};
pub use signing_keys::{KeyTransition, SigningKeyReads, SigningKeyWrites};
pub use social::{SocialReads, SocialWrites};
pub use sso::{SsoReads, SsoWrites};
pub use tenants::{TenantReads, TenantWrites};
pub use users::{
    CounterState, CounterWrites, SessionReads, SessionWrites, UserFilter, UserReads, UserRoleReads,
    UserRoleWrites, UserTokenWrites, UserWrites,
};
pub use webhooks::{
    AttemptNext, ClaimedDelivery, DeliveryFilter, EventWrites, ExpiredLease, QueueStats,
    StoredEvent, UnrelayedEvent, WebhookReads, WebhookWrites,
};

use async_trait::async_trait;

/// Which engine a store runs on; for logs, metrics and health, never for branching engine logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded development database.
    Sqlite,
    /// The production database.
    Postgres,
}

impl Backend {
    /// Lowercase name for logs and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

/// A snapshot of a connection pool, for the `svc_db_pool_connections` gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    /// Open connections (idle + in use).
    pub size: u32,
    /// Open connections not currently lent out.
    pub idle: u32,
    /// The configured maximum.
    pub max: u32,
}

/// Where a database stands against the migrations embedded in this binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationStatus {
    /// Versions embedded in the binary but not yet applied.
    pub pending: Vec<i64>,
    /// Versions applied to the database that this binary does not know (a newer binary migrated it).
    pub unknown_applied: Vec<i64>,
}

impl MigrationStatus {
    /// True when every embedded migration is applied.
    pub fn is_current(&self) -> bool {
        self.pending.is_empty()
    }
}

/// A database the service can use. Cheap to share behind an `Arc`.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Which engine this is.
    fn backend(&self) -> Backend;

    /// A round trip to the database; readiness depends on it.
    async fn ping(&self) -> Result<(), StoreError>;

    /// The pool's current occupancy.
    fn pool_status(&self) -> PoolStatus;

    /// Compares the applied migrations with the ones embedded in the binary.
    async fn migration_status(&self) -> Result<MigrationStatus, StoreError>;

    /// Applies every pending migration (idempotent; safe with several instances starting at once).
    async fn migrate(&self) -> Result<(), StoreError>;

    /// Opens a read-only view: a transaction, so several reads see one snapshot.
    async fn read(&self) -> Result<Box<dyn ReadTx>, StoreError>;

    /// A read for ONE statement, outside any transaction (autocommit): no BEGIN and no
    /// ROLLBACK round trips. Hot paths that read a single record use it; a caller that reads
    /// twice through it gets no common snapshot.
    async fn read_once(&self) -> Result<Box<dyn ReadTx>, StoreError>;

    /// Opens a write transaction; nothing is visible to others until [`WriteTx::commit`].
    async fn write(&self) -> Result<Box<dyn WriteTx>, StoreError>;

    /// A write of ONE statement, outside any transaction (autocommit): no BEGIN and no COMMIT
    /// round trips. The statement is durable as soon as it returns, whether or not
    /// [`WriteTx::commit`] follows (which then only gives back what the backend held). For
    /// single-use records on hot paths (a DPoP proof's `jti`, a client assertion's): never for
    /// two writes, each of which would commit on its own. A backend without the distinction
    /// opens a transaction.
    async fn write_once(&self) -> Result<Box<dyn WriteTx>, StoreError> {
        self.write().await
    }

    /// Closes the pool, waiting for lent connections to come back.
    async fn close(&self);

    /// The feed other processes on this database hear committed changes through, when the
    /// backend has one ([`ChangeFeed`]); `None` for a backend that serves one process.
    fn change_feed(&self) -> Option<std::sync::Arc<dyn ChangeFeed>> {
        None
    }

    /// The in-memory copy of the revoked access tokens this backend keeps current through its
    /// change feed ([`RevocationSet`]); `None` when every check reads the database. It is
    /// trusted only while the runtime tells it the feed is heard.
    fn revocation_set(&self) -> Option<std::sync::Arc<RevocationSet>> {
        None
    }
}

/// Whether the access token `jti` of `tenant` was revoked, at `now`, for the resource servers
/// svc runs itself (introspection, UserInfo, the management API) that check it on every
/// request: from the backend's [`RevocationSet`] while it is trusted, else one statement outside
/// a transaction ([`Store::read_once`]).
pub async fn access_token_revoked(
    store: &dyn Store,
    tenant: &svc_domain::TenantId,
    jti: &str,
    now: time::OffsetDateTime,
) -> Result<bool, StoreError> {
    let ask = || async {
        let mut tx = store.read_once().await?;
        let revoked = tx.access_token_revoked(tenant, jti).await?;
        tx.finish().await?;
        Ok(revoked)
    };
    let Some(set) = store.revocation_set() else {
        return ask().await;
    };
    let load = |limit| async move {
        let mut tx = store.read_once().await?;
        let rows = tx.access_tokens_revoked(tenant, now, limit).await?;
        tx.finish().await?;
        Ok(rows)
    };
    revocations::check_through(&set, tenant, jti, now, load, ask).await
}

/// A read-only transaction.
#[async_trait]
pub trait ReadTx:
    TenantReads
    + SigningKeyReads
    + ApplicationReads
    + OperatorTokenReads
    + AuditReads
    + UserReads
    + UserRoleReads
    + SessionReads
    + FactorReads
    + PasskeyReads
    + RecoveryReads
    + OrganizationReads
    + DomainReads
    + InvitationReads
    + AccessReads
    + PolicyReads
    + GrantReads
    + DeviceReads
    + RegistrationReads
    + ScimReads
    + ScimGroupReads
    + BackchannelReads
    + WebhookReads
    + AgentReads
    + DelegationReads
    + ApiKeyReads
    + LogoutReads
    + SsoReads
    + SocialReads
    + Send
{
    /// Ends the read.
    async fn finish(self: Box<Self>) -> Result<(), StoreError>;
}

/// A write transaction. Dropping it without [`WriteTx::commit`] rolls everything back.
#[async_trait]
pub trait WriteTx:
    TenantReads
    + TenantWrites
    + SigningKeyReads
    + SigningKeyWrites
    + ApplicationReads
    + ApplicationWrites
    + OperatorTokenReads
    + OperatorTokenWrites
    + AuditReads
    + AuditWrites
    + CoordinationWrites
    + UserReads
    + UserWrites
    + UserRoleReads
    + UserRoleWrites
    + SessionReads
    + SessionWrites
    + UserTokenWrites
    + FactorReads
    + FactorWrites
    + PasskeyReads
    + PasskeyWrites
    + RecoveryReads
    + RecoveryWrites
    + OrganizationReads
    + OrganizationWrites
    + DomainReads
    + DomainWrites
    + InvitationReads
    + InvitationWrites
    + AccessReads
    + AccessWrites
    + PolicyReads
    + PolicyWrites
    + CounterWrites
    + GrantReads
    + GrantWrites
    + PushedRequestWrites
    + DeviceReads
    + DeviceWrites
    + RegistrationReads
    + RegistrationWrites
    + ScimReads
    + ScimWrites
    + ScimGroupReads
    + ScimGroupWrites
    + BackchannelReads
    + BackchannelWrites
    + WebhookReads
    + WebhookWrites
    + EventWrites
    + AgentReads
    + AgentWrites
    + DelegationReads
    + DelegationWrites
    + ApiKeyReads
    + ApiKeyWrites
    + LogoutReads
    + LogoutWrites
    + SsoReads
    + SsoWrites
    + SocialReads
    + SocialWrites
    + Send
{
    /// Makes every change of this transaction durable and visible, atomically.
    async fn commit(self: Box<Self>) -> Result<(), StoreError>;
}

/// How a backend sizes and tunes its connection pool; built by the runtime from `[database]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSettings {
    /// Most connections the pool opens.
    pub max_connections: u32,
    /// Connections kept open even when idle.
    pub min_connections: u32,
    /// How long to wait for a connection (to open one, or for one to be returned).
    pub connect_timeout: std::time::Duration,
    /// Idle connections above `min_connections` are closed after this long (`None`: never).
    pub idle_timeout: Option<std::time::Duration>,
    /// Connections are recycled after this long (`None`: never).
    pub max_lifetime: Option<std::time::Duration>,
    /// Prepared statements cached per connection.
    pub statement_cache_capacity: usize,
    /// Check a connection with a round trip before lending it out.
    pub test_before_acquire: bool,
    /// Server-side cap on one statement (PostgreSQL `statement_timeout`; `None`: no cap).
    pub statement_timeout: Option<std::time::Duration>,
    /// Server-side cap on an idle open transaction (PostgreSQL
    /// `idle_in_transaction_session_timeout`; `None`: no cap).
    pub idle_in_transaction_timeout: Option<std::time::Duration>,
    /// Refuse unencrypted connections (PostgreSQL `sslmode=require` unless the URL is stricter).
    pub require_ssl: bool,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_connections: 10,
            min_connections: 0,
            connect_timeout: std::time::Duration::from_secs(5),
            idle_timeout: Some(std::time::Duration::from_secs(600)),
            max_lifetime: Some(std::time::Duration::from_secs(1800)),
            statement_cache_capacity: 100,
            test_before_acquire: true,
            statement_timeout: Some(std::time::Duration::from_secs(30)),
            idle_in_transaction_timeout: Some(std::time::Duration::from_secs(60)),
            require_ssl: false,
        }
    }
}
