//! The invitation ports of [`FaultyTx`]: delegation, and the writes fail on demand.

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{Email, Invitation, InvitationId, OrganizationId, SecretHash, TenantId, UserId};
use svc_store::{
    InvitationFilter, InvitationReads, InvitationWrites, Order, StoreError, UpdateOutcome,
};
use time::OffsetDateTime;

#[async_trait]
impl InvitationReads for FaultyTx {
    async fn invitation(
        &mut self,
        tenant: &TenantId,
        id: &InvitationId,
    ) -> Result<Option<Invitation>, StoreError> {
        self.inner.invitation(tenant, id).await
    }
    async fn invitation_by_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<Invitation>, StoreError> {
        self.inner.invitation_by_token(tenant, hash).await
    }
    async fn pending_invitation(
        &mut self,
        tenant: &TenantId,
        email: &Email,
        organization: Option<&OrganizationId>,
    ) -> Result<Option<Invitation>, StoreError> {
        self.inner
            .pending_invitation(tenant, email, organization)
            .await
    }
    async fn list_invitations(
        &mut self,
        tenant: &TenantId,
        filter: &InvitationFilter,
        after: Option<&InvitationId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Invitation>, StoreError> {
        self.inner
            .list_invitations(tenant, filter, after, order, limit)
            .await
    }
}

#[async_trait]
impl InvitationWrites for FaultyTx {
    async fn insert_invitation(&mut self, invitation: &Invitation) -> Result<(), StoreError> {
        self.check("insert_invitation")?;
        self.inner.insert_invitation(invitation).await
    }
    async fn update_invitation_if_unchanged(
        &mut self,
        invitation: &Invitation,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.check("update_invitation_if_unchanged")?;
        self.inner
            .update_invitation_if_unchanged(invitation, read_at)
            .await
    }
    async fn accept_invitation(
        &mut self,
        tenant: &TenantId,
        id: &InvitationId,
        hash: &SecretHash,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.check("accept_invitation")?;
        self.inner
            .accept_invitation(tenant, id, hash, user, now)
            .await
    }
}
