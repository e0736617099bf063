//! Registers a new application in a tenant. Secret-based methods get a generated secret,
//! returned once; other methods get none.

use super::{ApplicationInput, Identity, assemble, new_secret};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::EventType;
use svc_domain::{Application, ClientId, TenantId};

/// Validates `input` against the registration rules and stores the application in `tenant`,
/// audited as `application.created`. Returns the application and, for secret-based methods, its
/// plaintext secret (`cs_…`), shown this once.
///
/// Errors: [`ManageError::Invalid`] naming the first field that breaks a rule (nothing is
/// written); [`ManageError::NotFound`] when the tenant does not exist.
pub async fn create(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: ApplicationInput,
) -> Result<(Application, Option<String>), ManageError> {
    let valid = input.validate()?;
    let now = ctx.now();
    let secret = valid
        .token_endpoint_auth_method
        .uses_secret()
        .then(|| new_secret(ctx));
    let identity = Identity {
        id: ClientId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant,
        is_management: false,
        created_at: now,
        updated_at: now,
    };
    let application = assemble(valid, identity, secret.as_ref().map(|s| s.hash.clone()));

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    tx.insert_application(&application).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::APPLICATION_CREATED,
        Some(application.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::application_changed(
        tx.as_mut(),
        ctx,
        actor,
        &application,
        EventType::AdminApplicationCreated,
    )
    .await?;
    tx.commit().await?;
    Ok((application, secret.map(|s| s.plaintext)))
}
