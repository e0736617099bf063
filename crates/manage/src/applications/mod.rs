//! A tenant's applications (OAuth clients): register, list, read, reconfigure, delete, and
//! rotate the client secret. Every use case is scoped by the tenant, so another tenant's
//! application reads as absent, and every write appends its audit entry in the same transaction.

mod create;
mod delete;
mod document;
mod input;
mod list;
mod management;
mod names;
mod read;
mod rotate_secret;
pub(crate) mod rules;
mod update;
mod view;

pub use create::create;
pub use delete::delete;
pub use input::{ApplicationInput, DetailTypeInput};
pub use list::list;
pub use management::{MANAGEMENT_APPLICATION_NAME, MANAGEMENT_SCOPES};
pub use read::{detail_types, get};
pub use rotate_secret::rotate_secret;
pub use update::update;
pub use view::{ApplicationView, CreatedApplicationView, RotatedSecretView};

pub(crate) use create::create_in;
pub(crate) use document::adopt_in;
pub(crate) use input::ValidApplication;
pub(crate) use management::management_application;
pub(crate) use rules::{check_audience_uri, check_jwks};

use svc_domain::{Application, ClientId, GeneratedSecret, MetadataDocument, SecretHash, TenantId};
use time::OffsetDateTime;

/// Prefix of generated client secrets (`cs_…`), so a leaked string says what it is.
pub const CLIENT_SECRET_PREFIX: &str = "cs_";

/// Facts about an application that registration input does not decide.
struct Identity<'a> {
    id: ClientId,
    tenant_id: &'a TenantId,
    is_management: bool,
    /// The client ID metadata document the application is read from, if any.
    metadata_document: Option<MetadataDocument>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

/// Builds the record from validated input.
fn assemble(
    valid: ValidApplication,
    identity: Identity<'_>,
    secret_hash: Option<SecretHash>,
) -> Application {
    Application {
        id: identity.id,
        tenant_id: identity.tenant_id.clone(),
        name: valid.name,
        redirect_uris: valid.redirect_uris,
        post_logout_redirect_uris: valid.post_logout_redirect_uris,
        grant_types: valid.grant_types,
        token_endpoint_auth_method: valid.token_endpoint_auth_method,
        allowed_scopes: valid.allowed_scopes,
        secret_hash,
        api_audience: valid.api_audience,
        first_party: valid.first_party,
        id_token_signed_response_alg: valid.id_token_signed_response_alg,
        jwks: valid.jwks,
        jwks_uri: valid.jwks_uri,
        is_management: identity.is_management,
        metadata_document: identity.metadata_document,
        minimum_acr: valid.minimum_acr,
        organization_usage: valid.organization_usage,
        require_pushed_authorization_requests: valid.require_pushed_authorization_requests,
        dpop_bound_access_tokens: valid.dpop_bound_access_tokens,
        logout: valid.logout,
        authorization_details_types: valid.authorization_details_types,
        created_at: identity.created_at,
        updated_at: identity.updated_at,
    }
}

/// A new client secret (256 random bits).
fn new_secret(ctx: &crate::ManageContext) -> GeneratedSecret {
    GeneratedSecret::generate(CLIENT_SECRET_PREFIX, ctx.rng.as_ref())
}

/// The `updated_at` of a change to a record last changed at `previous`: now, but always after
/// `previous` (by at least the microsecond every backend stores), so each change gets a new
/// revision even when the clock has not moved or went back.
fn next_revision(ctx: &crate::ManageContext, previous: OffsetDateTime) -> OffsetDateTime {
    ctx.now().max(previous + time::Duration::microseconds(1))
}

/// Writes `app`, read at revision `read_at` in this transaction, unless another writer changed
/// it since ([`ManageError::PreconditionFailed`]: the caller reads again and retries).
async fn store_update(
    tx: &mut dyn svc_store::WriteTx,
    app: &Application,
    read_at: OffsetDateTime,
) -> Result<(), crate::ManageError> {
    match tx.update_application(app, read_at).await? {
        svc_store::UpdateOutcome::Applied => Ok(()),
        svc_store::UpdateOutcome::Stale => Err(crate::ManageError::PreconditionFailed),
    }
}
