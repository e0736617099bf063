//! How far a management API caller reaches inside its tenant (issue 17 "human administrators,
//! or an org admin, limited to that organization").
//!
//! Machines, operators and people holding `tenant_admin` reach the whole tenant. A person who is
//! an `owner` or `admin` of the organization their token was issued for reaches that one
//! organization only, and only through the routes that accept such a caller (the organization,
//! its members, its domains, its invitations). The rules, checked by the use cases that take a
//! [`Reach`]:
//!
//! 1. Outside the organization nothing exists: another organization, or an invitation to the
//!    tenant or to another organization, is [`ManageError::NotFound`], the answer an unknown id
//!    gets, so an organization administrator learns nothing about the rest of the tenant.
//! 2. Only an owner makes owners: an `admin` granting `owner` (adding a member, changing roles,
//!    inviting) is [`ManageError::Forbidden`].
//! 3. An `admin` leaves owners alone: changing the roles of, or removing, a member who holds
//!    `owner` is [`ManageError::Forbidden`]. Checked inside the write transaction, against the
//!    membership as it stands.
//!
//! Tenant roles are never within an organization administrator's reach: organization member and
//! invitation roles are organization roles by construction, so `tenant_admin` cannot be granted
//! through these routes whatever the caller.

use crate::ManageError;
use std::collections::BTreeSet;
use svc_domain::{ORG_ADMIN, ORG_OWNER, OrganizationId, RoleKey};

/// How far a caller reaches (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The whole tenant.
    Tenant,
    /// One organization, as one of its owners (`owner: true`) or admins.
    Organization {
        /// The organization.
        id: OrganizationId,
        /// Whether the caller holds `owner` there (else `admin`).
        owner: bool,
    },
}

impl Reach {
    /// The reach the organization roles `roles` held in `org` give: `owner` or `admin`, else
    /// none.
    pub fn of_organization_roles(org: &OrganizationId, roles: &BTreeSet<RoleKey>) -> Option<Self> {
        let holds = |key: &str| roles.iter().any(|r| r.as_str() == key);
        (holds(ORG_OWNER) || holds(ORG_ADMIN)).then(|| Self::Organization {
            id: org.clone(),
            owner: holds(ORG_OWNER),
        })
    }

    /// The one organization this caller is limited to, if any.
    pub fn organization(&self) -> Option<&OrganizationId> {
        match self {
            Self::Tenant => None,
            Self::Organization { id, .. } => Some(id),
        }
    }

    /// Rule 1: `org` (`None`: the tenant itself) is within reach, else not found.
    pub fn within(&self, org: Option<&OrganizationId>) -> Result<(), ManageError> {
        match self.organization() {
            None => Ok(()),
            Some(limit) if Some(limit) == org => Ok(()),
            Some(_) => Err(ManageError::NotFound),
        }
    }

    /// Rule 2: the caller may give the roles `roles`.
    pub fn may_grant(&self, roles: &BTreeSet<RoleKey>) -> Result<(), ManageError> {
        if self.is_admin_only() && roles.iter().any(|r| r.as_str() == ORG_OWNER) {
            return Err(ManageError::Forbidden(
                "roles: only an owner of the organization can make an owner".into(),
            ));
        }
        Ok(())
    }

    /// Rule 3: the caller may change or remove a member holding `current`.
    pub fn may_change(&self, current: &BTreeSet<RoleKey>) -> Result<(), ManageError> {
        if self.is_admin_only() && current.iter().any(|r| r.as_str() == ORG_OWNER) {
            return Err(ManageError::Forbidden(
                "only an owner of the organization can change or remove an owner".into(),
            ));
        }
        Ok(())
    }

    /// Whether the caller is limited to an organization and owns it.
    pub fn is_owner(&self) -> bool {
        matches!(self, Self::Organization { owner: true, .. })
    }

    fn is_admin_only(&self) -> bool {
        matches!(self, Self::Organization { owner: false, .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ManualClock, SeededRandom};

    fn roles(keys: &[&str]) -> BTreeSet<RoleKey> {
        keys.iter().map(|k| RoleKey::parse(k).unwrap()).collect()
    }

    fn orgs() -> (OrganizationId, OrganizationId) {
        let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(3);
        (
            OrganizationId::generate(&clock, &rng),
            OrganizationId::generate(&clock, &rng),
        )
    }

    #[test]
    fn only_owners_and_admins_reach_their_organization() {
        let (acme, globex) = orgs();
        assert_eq!(
            Reach::of_organization_roles(&acme, &roles(&["member", "owner"])),
            Some(Reach::Organization {
                id: acme.clone(),
                owner: true
            })
        );
        let admin = Reach::of_organization_roles(&acme, &roles(&["admin"])).unwrap();
        assert_eq!(admin.organization(), Some(&acme));
        assert_eq!(
            Reach::of_organization_roles(&acme, &roles(&["member", "auditor"])),
            None
        );
        assert!(admin.within(Some(&acme)).is_ok());
        assert!(matches!(
            admin.within(Some(&globex)),
            Err(ManageError::NotFound)
        ));
        assert!(matches!(admin.within(None), Err(ManageError::NotFound)));
        assert!(Reach::Tenant.within(None).is_ok());
        assert!(Reach::Tenant.within(Some(&globex)).is_ok());
    }

    #[test]
    fn admins_neither_make_nor_touch_owners() {
        let (acme, _) = orgs();
        let admin = Reach::of_organization_roles(&acme, &roles(&["admin"])).unwrap();
        let owner = Reach::of_organization_roles(&acme, &roles(&["owner"])).unwrap();
        let owners = roles(&["owner"]);
        let admins = roles(&["admin", "member"]);
        assert!(matches!(
            admin.may_grant(&owners),
            Err(ManageError::Forbidden(_))
        ));
        assert!(admin.may_grant(&admins).is_ok());
        assert!(matches!(
            admin.may_change(&owners),
            Err(ManageError::Forbidden(_))
        ));
        assert!(admin.may_change(&admins).is_ok());
        for full in [owner, Reach::Tenant] {
            assert!(full.may_grant(&owners).is_ok());
            assert!(full.may_change(&owners).is_ok());
        }
    }
}
