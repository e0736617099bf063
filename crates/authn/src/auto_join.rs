//! Auto-join through verified domains: a person whose address at a domain becomes verified
//! joins the organization that verified exactly that domain, when that organization opted in
//! (`auto_join`), with the roles it chose, in the transaction that verified the address.
//!
//! Only a verified address counts (the mailbox was proven), and only an exact domain match
//! (`eu.example.com` does not match `example.com`). Nothing is refused here: a person already a
//! member, or already in [`MAX_MEMBERSHIPS_PER_USER`] organizations, is skipped silently, so
//! verifying an address never fails because of an organization's settings. A custom role the
//! organization chose that no longer exists as an organization role is left out (`member` stands
//! in when none is left), so a membership never names a role that is gone.

use crate::engine::Authn;
use crate::error::AuthnError;
use std::collections::BTreeSet;
use svc_domain::{
    DomainName, EventData, EventType, MAX_MEMBERSHIPS_PER_USER, Membership, ORG_MEMBER, RoleKey,
    RoleKind, User,
};
use svc_store::WriteTx;

impl Authn {
    /// Makes `user` (whose address is verified) a member of the organization holding their
    /// address's domain verified with auto-join on, within `tx`, with the event
    /// `org.member.added` and the audit entry `organization.member_added` (actor `system`,
    /// target the organization, as for a member added through the API). Returns the membership
    /// made, if any.
    pub(crate) async fn auto_join(
        &self,
        tx: &mut dyn WriteTx,
        user: &User,
    ) -> Result<Option<Membership>, AuthnError> {
        if !user.email_verified {
            return Ok(None);
        }
        let Some(domain) = DomainName::of_email(user.email.as_str()) else {
            return Ok(None);
        };
        let tenant = &user.tenant_id;
        let Some(claim) = tx.verified_domain_by_name(tenant, &domain).await? else {
            return Ok(None);
        };
        if !claim.auto_join
            || tx
                .membership(tenant, &claim.organization_id, &user.id)
                .await?
                .is_some()
            || tx.memberships_of_user(tenant, &user.id).await?.len() >= MAX_MEMBERSHIPS_PER_USER
        {
            return Ok(None);
        }
        let mut roles = BTreeSet::new();
        for key in &claim.auto_join_roles {
            let holds = match RoleKind::of_built_in(key.as_str()) {
                Some(kind) => kind == RoleKind::Organization,
                // Locked like an assignment through the API: a deletion of the role waits for
                // this transaction, then counts this member as a holder.
                None => tx
                    .lock_role(tenant, key)
                    .await?
                    .is_some_and(|role| role.kind == RoleKind::Organization),
            };
            if holds {
                roles.insert(key.clone());
            }
        }
        if roles.is_empty()
            && let Ok(member) = RoleKey::parse(ORG_MEMBER)
        {
            roles.insert(member);
        }
        self.add_member(tx, user, &claim.organization_id, roles)
            .await
            .map(Some)
    }

    /// Makes `user` a member of `org` with `roles` within `tx` (the caller checked they are
    /// not one yet and may join), with the event `org.member.added` and the audit entry
    /// `organization.member_added`, both by `system`.
    pub(crate) async fn add_member(
        &self,
        tx: &mut dyn WriteTx,
        user: &User,
        org: &svc_domain::OrganizationId,
        roles: BTreeSet<RoleKey>,
    ) -> Result<Membership, AuthnError> {
        let tenant = &user.tenant_id;
        let now = self.now();
        let membership = Membership {
            tenant_id: tenant.clone(),
            organization_id: org.clone(),
            user_id: user.id.clone(),
            roles,
            created_at: now,
            updated_at: now,
        };
        tx.insert_membership(&membership).await?;
        let data = EventData::OrgMember {
            organization_id: membership.organization_id.clone(),
            user_id: membership.user_id.clone(),
            roles: membership
                .roles
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect(),
            previous_roles: None,
            actor: "system".to_owned(),
        };
        self.record_event(tx, tenant, EventType::OrgMemberAdded, data)
            .await?;
        self.record_audit(
            tx,
            tenant,
            ("system", crate::join::action::ORGANIZATION_MEMBER_ADDED),
            membership.organization_id.as_str(),
        )
        .await?;
        Ok(membership)
    }
}
