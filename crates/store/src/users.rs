//! Ports of tenant users, browser sessions and one-time link tokens (the hosted sign-in's own
//! records), plus the fixed-window counters behind brute-force protection.

use crate::{Order, StoreError, UpdateOutcome};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    Email, LoginRecord, LoginRecordId, RoleKey, SecretHash, Session, SessionId, TenantId, User,
    UserId, UserStatus, UserToken, UserTokenPurpose,
};
use time::OffsetDateTime;

/// Filters of a user listing; every field narrows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFilter {
    /// Only users in this state.
    pub status: Option<UserStatus>,
    /// Only the user with this (normalised) address.
    pub email: Option<Email>,
}

/// Reads of tenant users.
#[async_trait]
pub trait UserReads {
    /// The user `id` of `tenant` (any state, removed included).
    async fn user(&mut self, tenant: &TenantId, id: &UserId) -> Result<Option<User>, StoreError>;

    /// The user of `tenant` holding `email`, ignoring removed users (at most one exists).
    async fn user_by_email(
        &mut self,
        tenant: &TenantId,
        email: &Email,
    ) -> Result<Option<User>, StoreError>;

    /// Up to `limit` users of `tenant` in id `order`, past the cursor `after`.
    async fn list_users(
        &mut self,
        tenant: &TenantId,
        filter: &UserFilter,
        after: Option<&UserId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<User>, StoreError>;
}

/// Reads of a person's tenant roles (role keys; which keys exist is the use cases' rule).
#[async_trait]
pub trait UserRoleReads {
    /// The tenant roles of `user`, sorted; empty when none (or no such person).
    async fn user_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<BTreeSet<RoleKey>, StoreError>;

    /// Every tenant role `user` holds now, sorted: those given to them directly
    /// ([`UserRoleReads::user_roles`]) and those the tenant's directory groups they belong to
    /// are mapped to ([`crate::ScimGroupWrites::set_scim_group_roles`]). What authorization
    /// reads; the management API's role assignment reads and writes the direct ones.
    async fn granted_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<BTreeSet<RoleKey>, StoreError>;
}

/// Writes of a person's tenant roles.
#[async_trait]
pub trait UserRoleWrites {
    /// Replaces the tenant roles of `user` with `roles` (an empty set removes them all), each
    /// assignment stamped `now` when new (kept roles keep their time). A tenant that does not
    /// exist is [`StoreError::Conflict`] on `user_roles_tenant_id_fkey`.
    async fn set_user_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
}

/// Writes of tenant users.
#[async_trait]
pub trait UserWrites {
    /// Creates a user; [`StoreError::Conflict`] with constraint `users_tenant_email_key` when a
    /// user of the tenant that is not removed holds the address.
    async fn insert_user(&mut self, user: &User) -> Result<(), StoreError>;

    /// Replaces every mutable field (all but id, tenant and creation time), but only while the
    /// stored `updated_at` still equals `read_at`, the revision the caller read (as the store gave
    /// it back): a compare-and-set, so two writers that read the same revision cannot both apply
    /// (no lost update). On PostgreSQL under READ COMMITTED the second writer waits for the first
    /// one's row lock, re-checks the condition against the committed row and changes nothing.
    ///
    /// [`UpdateOutcome::Stale`] (nothing written) when the row is at another revision;
    /// [`StoreError::NotFound`] when absent; the same conflict as insert on the address.
    async fn update_user_if_unchanged(
        &mut self,
        user: &User,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;
}

/// Reads of browser sessions.
#[async_trait]
pub trait SessionReads {
    /// The session whose cookie hashes to `secret` (any state; callers check
    /// [`Session::is_live`]).
    async fn session_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<Session>, StoreError>;

    /// The session `id` of `tenant`.
    async fn session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
    ) -> Result<Option<Session>, StoreError>;

    /// The user's sessions that are live at `now`, newest first.
    async fn live_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<Session>, StoreError>;

    /// Up to `limit` records of the user's login history in id (time) `order`, past the
    /// cursor `after`.
    async fn login_history(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        after: Option<&LoginRecordId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<LoginRecord>, StoreError>;
}

/// Writes of browser sessions.
#[async_trait]
pub trait SessionWrites {
    /// Creates a session.
    async fn insert_session(&mut self, session: &Session) -> Result<(), StoreError>;

    /// Appends a record to a person's login history.
    async fn insert_login_record(&mut self, record: &LoginRecord) -> Result<(), StoreError>;

    /// Deletes every tenant's login-history records made before `before` (the retention);
    /// returns how many went. Oldest first.
    ///
    /// At most `limit` rows of each kind per call, so a backlog is worked off over several
    /// calls, each in a transaction of its own (the janitor repeats while rows go).
    async fn purge_login_history(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError>;

    /// Records use at `now` (`last_seen_at`).
    async fn touch_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Revokes one session; false when it did not exist or was already revoked. When it was
    /// revoked, each application it signed into that registered a back-channel logout URI gets
    /// a [`svc_domain::LogoutNotice`] due at `now`, in the same transaction.
    async fn revoke_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Revokes every unrevoked session of a user; returns how many. Logout notices are written
    /// as for [`SessionWrites::revoke_session`].
    async fn revoke_user_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError>;
}

/// One-time link tokens (email verification, password reset, invitation).
#[async_trait]
pub trait UserTokenWrites {
    /// Stores a new token.
    async fn insert_user_token(&mut self, token: &UserToken) -> Result<(), StoreError>;

    /// Marks the token used and returns it, only if it exists for `tenant` and `purpose`, is
    /// unused and has not expired at `now`; atomic, so a token works once even under races.
    async fn consume_user_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<UserToken>, StoreError>;

    /// Marks every unused token of `user` for `purpose` used (a newer link replaces older ones,
    /// and a password change kills outstanding reset links); returns how many.
    async fn invalidate_user_tokens(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError>;
}

/// A fixed-window counter after one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterState {
    /// Hits in the current window, this one included.
    pub count: u32,
    /// When the current window ends (and the count starts again from zero).
    pub window_ends_at: OffsetDateTime,
}

/// Fixed-window counters shared by every instance (failed sign-ins per account and per IP,
/// registrations per IP). Keys are namespaced by the caller (`signin:acct:{tenant}:{hash}`).
#[async_trait]
pub trait CounterWrites {
    /// Counts one hit on `key` at `now`: within an unexpired window the count grows, otherwise
    /// a new window of length `window` starts at 1. Atomic under concurrency.
    async fn hit_counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
        window: time::Duration,
    ) -> Result<CounterState, StoreError>;

    /// The counter's state at `now`, `None` when absent or its window has ended.
    async fn counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<CounterState>, StoreError>;

    /// Forgets a counter (a successful sign-in clears the account's failures).
    async fn clear_counter(&mut self, key: &str) -> Result<(), StoreError>;
}
