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

use crate::{ManageContext, ManageError};
use std::collections::BTreeSet;
use svc_domain::{RoleKey, TenantId, UserId};

/// Whether the access token `jti` of `tenant` has been revoked.
pub async fn access_token_revoked(
    ctx: &ManageContext,
    tenant: &TenantId,
    jti: &str,
) -> Result<bool, ManageError> {
    Ok(svc_store::access_token_revoked(ctx.store.as_ref(), tenant, jti).await?)
}

/// The tenant roles of the person `user` of `tenant`, read in one read transaction, or `None`
/// when there is no such person in the tenant or they cannot sign in now
/// ([`svc_domain::User::can_sign_in`]: suspended, removed or not yet activated). An empty set is
/// a person who may sign in but holds no tenant role. Asked on every request a human
/// administrator makes to the management API.
pub async fn human_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    user: &UserId,
) -> Result<Option<BTreeSet<RoleKey>>, ManageError> {
    let mut tx = ctx.store.read().await?;
    let roles = match tx.user(tenant, user).await? {
        Some(person) if person.can_sign_in() => Some(tx.user_roles(tenant, user).await?),
        _ => None,
    };
    tx.finish().await?;
    Ok(roles)
}
