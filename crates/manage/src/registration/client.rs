//! RFC 7592: a registered client reads (§2.1), replaces (§2.2) and deletes (§2.3) its own
//! registration at `/oauth/register/{client_id}`, authenticated by its registration access
//! token. Replacement and deletion are the management API's own use cases, so the rules, audit
//! entries, events and cache invalidation are the same; the actor is the client itself.

use super::authenticate;
use super::metadata::{ClientMetadata, Kept, in_metadata_terms};
use crate::applications;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{Application, TenantId};

/// The registration of `client_id` in `tenant`, for the holder of its registration access
/// `token`.
///
/// Errors: [`ManageError::Unauthenticated`] for a missing token, or one that is not this
/// client's (an unknown client, one created through the management API, another's token).
pub async fn read(
    ctx: &ManageContext,
    tenant: &TenantId,
    client_id: &str,
    token: Option<&str>,
) -> Result<Application, ManageError> {
    let mut tx = ctx.store.read().await?;
    let id = authenticate(tx.as_mut(), tenant, client_id, token).await?;
    let app = tx
        .application(tenant, &id)
        .await?
        .ok_or_else(|| ManageError::Unauthenticated(super::INVALID_TOKEN.to_owned()))?;
    tx.finish().await?;
    Ok(app)
}

/// Replaces the registration of `client_id` with `metadata` (RFC 7592 §2.2: every field; an
/// omitted one takes its default), keeping what an administrator set that registration does not
/// carry (audience, first-party, minimum `acr`, organization usage). Returns the application and,
/// when it newly became secret-based, its new secret.
///
/// Errors: as [`read`]; [`ManageError::Invalid`] when `metadata` lacks this `client_id`, sends a
/// `client_secret` other than the current one, or breaks a rule (nothing is written).
pub async fn replace(
    ctx: &ManageContext,
    tenant: &TenantId,
    meta: &RequestMeta,
    client_id: &str,
    token: Option<&str>,
    metadata: ClientMetadata,
) -> Result<(Application, Option<String>), ManageError> {
    let existing = read(ctx, tenant, client_id, token).await?;
    check_same_client(&metadata, &existing)?;
    let input = metadata
        .vouched(ctx, tenant)
        .await?
        .to_input(Kept::of(&existing))
        .map_err(in_metadata_terms)?;
    applications::update(
        ctx,
        tenant,
        &Actor::Client(existing.id.clone()),
        meta,
        &existing.id,
        input,
        &Precondition::None,
    )
    .await
    .map_err(in_metadata_terms)
}

/// Deletes the registration of `client_id` (RFC 7592 §2.3), as the management API deletes an
/// application: its token goes with it, and so does every grant it holds.
///
/// Errors: as [`read`].
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    meta: &RequestMeta,
    client_id: &str,
    token: Option<&str>,
) -> Result<(), ManageError> {
    let existing = read(ctx, tenant, client_id, token).await?;
    applications::delete(
        ctx,
        tenant,
        &Actor::Client(existing.id.clone()),
        meta,
        &existing.id,
        &Precondition::None,
    )
    .await
}

/// Rule (RFC 7592 §2.2): the body names this client, and a `client_secret` in it is the current
/// one (the client cannot choose its secret), compared in constant time.
fn check_same_client(metadata: &ClientMetadata, existing: &Application) -> Result<(), ManageError> {
    if metadata.client_id.as_deref() != Some(existing.id.as_str()) {
        return Err(ManageError::invalid(
            "client_id",
            "client_id must be present and be this client's identifier",
        ));
    }
    if let Some(sent) = metadata.client_secret.as_deref() {
        let current = existing
            .secret_hash
            .as_ref()
            .is_some_and(|hash| hash.verify(sent));
        if !current {
            return Err(ManageError::invalid(
                "client_secret",
                "client_secret must be the current secret; a client cannot choose its secret",
            ));
        }
    }
    Ok(())
}
