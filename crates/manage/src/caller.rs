//! What the management API asks the database about its caller once the access token has passed
//! the stateless validation contract: whether the token has since been revoked.
//!
//! The spec's validation contract (signature, issuer, audience, lifetime, tenant, scope) is
//! what any resource server can check on its own; svc is also the issuer, so a management
//! token revoked at `/oauth/revoke` (RFC 7009 §2: "invalidates the token immediately") is
//! refused here too, not only by introspection and UserInfo.

use crate::{ManageContext, ManageError};
use svc_domain::TenantId;

/// Whether the access token `jti` of `tenant` has been revoked.
pub async fn access_token_revoked(
    ctx: &ManageContext,
    tenant: &TenantId,
    jti: &str,
) -> Result<bool, ManageError> {
    Ok(svc_store::access_token_revoked(ctx.store.as_ref(), tenant, jti).await?)
}
