//! Ports of invitations (to join a tenant or one of its organizations). Every call takes the
//! tenant, so another tenant's invitation reads as absent. An invitation is found by id (the
//! API) or by the hash of its link's secret (the hosted page); the secret itself is never stored.
//!
//! Two rules hold in the schema, so no race breaks them: at most one `pending` invitation per
//! (tenant, address, organization or the tenant itself) — a partial unique index,
//! `invitations_pending_key` — and acceptance is a conditional update from `pending` before the
//! deadline ([`InvitationWrites::accept_invitation`]), so of two concurrent acceptances exactly
//! one changes the row. The organization is a foreign key: an invitation goes with its
//! organization and with its tenant. The person who accepted is not (nothing references `users`,
//! see `organizations`).

use crate::{Order, StoreError, UpdateOutcome};
use async_trait::async_trait;
use svc_domain::{
    Email, Invitation, InvitationId, InvitationState, OrganizationId, SecretHash, TenantId, UserId,
};
use time::OffsetDateTime;

/// Which invitations a listing returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvitationFilter {
    /// Only those to join this organization.
    pub organization_id: Option<OrganizationId>,
    /// Only those in this state at [`InvitationFilter::now`] (`expired` and `pending` are told
    /// apart by the deadline).
    pub state: Option<InvitationState>,
    /// The time a state filter is evaluated at.
    pub now: Option<OffsetDateTime>,
}

/// Reads of invitations.
#[async_trait]
pub trait InvitationReads {
    /// The invitation `id` of `tenant`, in any status.
    async fn invitation(
        &mut self,
        tenant: &TenantId,
        id: &InvitationId,
    ) -> Result<Option<Invitation>, StoreError>;

    /// The invitation of `tenant` whose link secret hashes to `hash`, in any status (the page
    /// tells a used or revoked link from an unknown one).
    async fn invitation_by_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<Invitation>, StoreError>;

    /// The `pending` invitation (expired or not) of `email` to `organization` (or, with `None`,
    /// to the tenant itself), if any: there is at most one.
    async fn pending_invitation(
        &mut self,
        tenant: &TenantId,
        email: &Email,
        organization: Option<&OrganizationId>,
    ) -> Result<Option<Invitation>, StoreError>;

    /// Up to `limit` invitations of `tenant` matching `filter`, in id `order`, past `after`.
    async fn list_invitations(
        &mut self,
        tenant: &TenantId,
        filter: &InvitationFilter,
        after: Option<&InvitationId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Invitation>, StoreError>;
}

/// Writes of invitations.
#[async_trait]
pub trait InvitationWrites {
    /// Stores a new invitation. A second pending one for the same address and target is
    /// [`StoreError::Conflict`] on `invitations_pending_key`; an organization that is not the
    /// tenant's on `invitations_organization_fkey`; an unknown tenant on
    /// `invitations_tenant_id_fkey`.
    async fn insert_invitation(&mut self, invitation: &Invitation) -> Result<(), StoreError>;

    /// Replaces status, token hash, deadline and `updated_at` (a resend or a revocation), only
    /// while the stored `updated_at` still equals `read_at`: [`UpdateOutcome::Stale`] otherwise
    /// (an acceptance in between changed it), [`StoreError::NotFound`] when absent.
    async fn update_invitation_if_unchanged(
        &mut self,
        invitation: &Invitation,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Marks the invitation `id` accepted by `user` at `now`, only if it is still `pending`,
    /// still carries the link `hash` (a resend replaced none in between) and its deadline is
    /// after `now`: one conditional update, so two acceptances never both return `true`.
    async fn accept_invitation(
        &mut self,
        tenant: &TenantId,
        id: &InvitationId,
        hash: &SecretHash,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;
}
