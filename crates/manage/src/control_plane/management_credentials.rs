//! Fresh credentials for a tenant's management application, issued by an operator: the way to
//! get into a tenant whose secret was lost, or the zero-config `default` tenant whose secret was
//! never shown. The old secret stops working at once; the change is audited on the tenant.

use crate::applications::rotate_secret;
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{ClientId, TenantId};

/// Rotates the management application's secret; returns its client id and the new secret.
pub async fn issue_management_credentials(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    tenant: &TenantId,
) -> Result<(ClientId, String), ManageError> {
    let mut after: Option<ClientId> = None;
    loop {
        let (page, next) = crate::applications::list(
            ctx,
            tenant,
            after.as_ref(),
            None,
            Some(crate::MAX_PAGE_SIZE),
        )
        .await?;
        if let Some(app) = page.iter().find(|a| a.is_management) {
            let (_, secret) = rotate_secret(
                ctx,
                tenant,
                actor,
                meta,
                &app.id,
                &crate::Precondition::None,
            )
            .await?;
            return Ok((app.id.clone(), secret));
        }
        match next {
            Some(cursor) => after = Some(cursor),
            None => return Err(ManageError::NotFound),
        }
    }
}
