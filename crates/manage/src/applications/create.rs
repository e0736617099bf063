//! Registers a new application in a tenant. Secret-based methods get a generated secret,
//! returned once; other methods get none.

use super::input::ValidApplication;
use super::{ApplicationInput, Identity, assemble, new_secret};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::EventType;
use svc_domain::{Application, ClientId, MetadataDocument, TenantId};
use svc_store::WriteTx;

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
    let valid = input.validate()?.offered_by(ctx)?;
    let id = ClientId::generate(ctx.clock.as_ref(), ctx.rng.as_ref());
    let mut tx = ctx.store.write().await?;
    let created = create_in(tx.as_mut(), ctx, tenant, actor, meta, id, valid, None).await?;
    tx.commit().await?;
    Ok(created)
}

/// Stores the validated application `id` in `tenant` within `tx`, with its audit entry and
/// event; the caller commits (dynamic registration adds its registration access token to the
/// same transaction). The one place an application is created; `metadata_document` is the
/// client ID metadata document it is read from, if any.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn create_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: ClientId,
    valid: ValidApplication,
    metadata_document: Option<MetadataDocument>,
) -> Result<(Application, Option<String>), ManageError> {
    let now = ctx.now();
    let secret = valid
        .token_endpoint_auth_method
        .uses_secret()
        .then(|| new_secret(ctx));
    let identity = Identity {
        id,
        tenant_id: tenant,
        is_management: false,
        metadata_document,
        created_at: now,
        updated_at: now,
    };
    let application = assemble(valid, identity, secret.as_ref().map(|s| s.hash.clone()));
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
    audit::record(tx, &entry).await?;
    events::application_changed(
        tx,
        ctx,
        actor,
        &application,
        EventType::AdminApplicationCreated,
    )
    .await?;
    Ok((application, secret.map(|s| s.plaintext)))
}
