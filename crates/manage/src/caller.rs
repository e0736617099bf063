//! What the management API asks the database about its caller once the access token has passed
//! the stateless validation contract: whether the token has since been revoked, and, for a token
//! issued to a person (a human administrator), whether that person may still act and with which
//! tenant roles.
//!
//! The spec's validation contract (signature, issuer, audience, lifetime, tenant, scope) is
//! what any resource server can check on its own; svc is also the issuer, so a management
//! token revoked at `/oauth/revoke` (RFC 7009 §2: "invalidates the token immediately") is
//! refused here too, not only by introspection and UserInfo. Likewise a person suspended,
//! removed or stripped of their tenant roles loses the management API at their next request,
//! not when their token expires.

use crate::{ManageContext, ManageError, Reach};
use svc_domain::{OrgStatus, OrganizationId, TENANT_ADMIN, TenantId, UserId};

/// Whether the access token `jti` of `tenant` has been revoked by now.
pub async fn access_token_revoked(
    ctx: &ManageContext,
    tenant: &TenantId,
    jti: &str,
) -> Result<bool, ManageError> {
    let now = ctx.clock.now();
    Ok(svc_store::access_token_revoked(ctx.store.as_ref(), tenant, jti, now).await?)
}

/// Where a person holding a management token stands now (see [`standing`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// No such person in the tenant, or they cannot sign in now: their token is void.
    Gone,
    /// They may act, this far.
    Reaches(Reach),
    /// They may sign in but hold no role that reaches the management API.
    Powerless,
}

/// Where the person `user` of `tenant` stands, in one read transaction: `tenant_admin` reaches
/// the tenant; failing that, `owner` or `admin` of `organization` (the organization their
/// token was issued for, when it is still active) reaches that organization
/// ([`Reach`]). Asked on every request a person makes to the management API, so a role taken
/// away, a membership ended, an organization suspended or a person suspended counts at once.
pub async fn standing(
    ctx: &ManageContext,
    tenant: &TenantId,
    user: &UserId,
    organization: Option<&OrganizationId>,
) -> Result<Standing, ManageError> {
    let mut tx = ctx.store.read().await?;
    let standing = match tx.user(tenant, user).await? {
        Some(person) if person.can_sign_in() => {
            let roles = tx.granted_roles(tenant, user).await?;
            if roles.iter().any(|r| r.as_str() == TENANT_ADMIN) {
                Standing::Reaches(Reach::Tenant)
            } else {
                match organization {
                    Some(org) => organization_reach(tx.as_mut(), tenant, org, user).await?,
                    None => None,
                }
                .map_or(Standing::Powerless, Standing::Reaches)
            }
        }
        _ => Standing::Gone,
    };
    tx.finish().await?;
    Ok(standing)
}

/// The reach the membership of `user` in the active organization `org` gives, if any.
async fn organization_reach(
    tx: &mut dyn svc_store::ReadTx,
    tenant: &TenantId,
    org: &OrganizationId,
    user: &UserId,
) -> Result<Option<Reach>, ManageError> {
    match tx.organization(tenant, org).await? {
        Some(o) if o.status == OrgStatus::Active => Ok(tx
            .held_organization_roles(tenant, org, user)
            .await?
            .and_then(|roles| Reach::of_organization_roles(org, &roles))),
        _ => Ok(None),
    }
}
