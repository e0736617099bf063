//! Replaces an application's client secret. The old secret stops working the moment the
//! transaction commits: only the new hash is stored, with no overlap window.

use super::{new_secret, next_revision, store_update};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::EventType;
use svc_domain::{Application, ClientId, TenantId};

/// Generates a new secret for the application `id` of `tenant`, audited as
/// `application.secret_rotated`, if the stored application satisfies `precondition`
/// (`If-Match`). Returns the application as now stored (a new revision) and the new plaintext
/// secret (`cs_…`), shown this once.
///
/// Errors: [`ManageError::NotFound`] when absent (or another tenant's);
/// [`ManageError::PreconditionFailed`] when it is not at a revision `precondition` names, or
/// changed while this ran; [`ManageError::Invalid`] when the application does not authenticate
/// with a secret.
pub async fn rotate_secret(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ClientId,
    precondition: &Precondition,
) -> Result<(Application, String), ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut app = tx
        .application(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(app.updated_at)?;
    if !app.token_endpoint_auth_method.uses_secret() {
        return Err(ManageError::invalid(
            "token_endpoint_auth_method",
            format!(
                "token_endpoint_auth_method is {}; only client_secret_basic and client_secret_post applications have a secret to rotate",
                app.token_endpoint_auth_method.as_str()
            ),
        ));
    }
    let secret = new_secret(ctx);
    let read_at = app.updated_at;
    app.secret_hash = Some(secret.hash.clone());
    app.updated_at = next_revision(ctx, read_at);
    store_update(tx.as_mut(), &app, read_at).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::APPLICATION_SECRET_ROTATED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::application_changed(
        tx.as_mut(),
        ctx,
        actor,
        &app,
        EventType::AdminApplicationSecretRotated,
    )
    .await?;
    tx.commit().await?;
    ctx.changes.application_changed(tenant, id);
    Ok((app, secret.plaintext))
}
