//! Applications read from client ID metadata documents: created on first use and rewritten when
//! a stale reading is refreshed, by the same assembly, audit entries (`application.created`,
//! `application.updated`, by `client:{its id}`) and events as the management API. A refresh that
//! finds the document unchanged only moves its freshness: no audit entry, no event. The
//! management API does not change them (their document is their source, and the next refresh
//! would undo the change); it may delete one, and its next use reads the document again.

use super::input::ValidApplication;
use super::{Identity, assemble, create_in, next_revision, store_update};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::{Application, ClientId, EventType, MetadataDocument, TenantId};
use svc_store::WriteTx;

/// Stores `valid`, read from `document`, as the application of `tenant` for the document's URL,
/// within `tx` (the caller commits, then tells the caches): a new application the first time,
/// the same application (same id, same creation time) afterwards.
///
/// Errors: [`ManageError::PreconditionFailed`] when another instance refreshed it meanwhile,
/// and the store's conflict when another created it meanwhile (the caller reads again).
pub(crate) async fn adopt_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    valid: ValidApplication,
    document: MetadataDocument,
) -> Result<Application, ManageError> {
    let meta = RequestMeta::default();
    let Some(existing) = tx
        .application_by_metadata_url(tenant, document.url.as_str())
        .await?
    else {
        let id = ClientId::generate(ctx.clock.as_ref(), ctx.rng.as_ref());
        let actor = Actor::Client(id.clone());
        let (application, _) =
            create_in(tx, ctx, tenant, &actor, &meta, id, valid, Some(document)).await?;
        return Ok(application);
    };
    let identity = Identity {
        id: existing.id.clone(),
        tenant_id: tenant,
        is_management: false,
        metadata_document: Some(document),
        created_at: existing.created_at,
        updated_at: next_revision(ctx, existing.updated_at),
    };
    let application = assemble(valid, identity, None);
    let unchanged = Application {
        metadata_document: existing.metadata_document.clone(),
        updated_at: existing.updated_at,
        ..application.clone()
    } == existing;
    store_update(tx, &application, existing.updated_at).await?;
    if !unchanged {
        let actor = Actor::Client(existing.id.clone());
        let entry = audit::entry(
            ctx,
            &actor,
            &meta,
            Some(tenant),
            action::APPLICATION_UPDATED,
            Some(existing.id.as_str()),
        );
        audit::record(tx, &entry).await?;
        events::application_changed(
            tx,
            ctx,
            &actor,
            &application,
            EventType::AdminApplicationUpdated,
        )
        .await?;
    }
    Ok(application)
}

/// Rule: the management API leaves an application read from a metadata document alone.
pub(super) fn check_not_from_document(app: &Application) -> Result<(), ManageError> {
    match &app.metadata_document {
        None => Ok(()),
        Some(document) => Err(ManageError::Forbidden(format!(
            "this application is read from its client ID metadata document ({}); change the \
             document, or delete the application",
            document.url.as_str()
        ))),
    }
}
