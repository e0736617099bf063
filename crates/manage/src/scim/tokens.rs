//! SCIM bearer tokens (CONTRACTS.md "Organizations, roles, keys, SCIM"): issued through the
//! management API for the tenant or one of its organizations (shown once, stored as SHA-256),
//! listed without secrets, revoked; and the authentication of a token presented at `/scim/v2`.
//!
//! A token is looked up by the SHA-256 of what was presented within the addressed tenant, so a
//! token of tenant A is unknown at tenant B; the hash of a 256-bit secret is the lookup key,
//! like operator tokens, and the stored hash is compared again in constant time.

use super::{ScimCaller, ScimError};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::{Deserialize, Serialize};
use svc_domain::{
    OrgStatus, OrganizationId, SCIM_TOKEN_PREFIX, ScimToken, ScimTokenId, SecretHash, TenantId,
    generate_scim_token,
};
use time::OffsetDateTime;

/// Most SCIM tokens a tenant keeps (revoked ones count).
pub const MAX_SCIM_TOKENS: usize = 100;

/// What a caller sends to issue a SCIM token. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"organization_id": "org_01jd3k2m4n5p6q7r8s9t0v1w2x"}))]
pub struct ScimTokenInput {
    /// The organization the token provisions (its members only); absent: the whole tenant.
    #[serde(default)]
    pub organization_id: Option<String>,
}

/// A SCIM token as listed (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "id": "scimt_01jd3k2m4n5p6q7r8s9t0v1w2x", "organization_id": null,
    "created_at": "2026-11-24T10:00:00Z", "revoked_at": null
}))]
pub struct ScimTokenView {
    /// Its handle.
    pub id: String,
    /// The organization it is limited to; `null`: the whole tenant.
    pub organization_id: Option<String>,
    /// When it was issued.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it was revoked; `null` while it works.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&ScimToken> for ScimTokenView {
    fn from(token: &ScimToken) -> Self {
        Self {
            id: token.id.as_str().to_owned(),
            organization_id: token
                .organization_id
                .as_ref()
                .map(|o| o.as_str().to_owned()),
            created_at: token.created_at,
            revoked_at: token.revoked_at,
        }
    }
}

/// An issued SCIM token: its view and the token, shown this once.
#[derive(Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "id": "scimt_01jd3k2m4n5p6q7r8s9t0v1w2x", "organization_id": null,
    "created_at": "2026-11-24T10:00:00Z", "revoked_at": null,
    "token": "svcscim_mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dzpjqwey3dmrsgk3dg"
}))]
pub struct CreatedScimTokenView {
    /// The token as listed.
    #[serde(flatten)]
    pub view: ScimTokenView,
    /// The token to configure in the directory as its bearer token; only its hash is kept.
    pub token: String,
}

// By hand: the token never reaches a log through `{:?}`.
impl std::fmt::Debug for CreatedScimTokenView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedScimTokenView")
            .field("view", &self.view)
            .finish_non_exhaustive()
    }
}

/// Issues a SCIM token of `tenant` (for `input.organization_id` when given), audited as
/// `scim_token.created`.
///
/// Errors: [`ManageError::Invalid`] naming `organization_id` when it is not an organization of
/// the tenant; [`ManageError::Conflict`] when the tenant already keeps 100;
/// [`ManageError::NotFound`] when the tenant does not exist.
pub async fn create_token(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: ScimTokenInput,
) -> Result<CreatedScimTokenView, ManageError> {
    let unknown_org =
        || ManageError::invalid("organization_id", "not an organization of this tenant");
    let organization = input
        .organization_id
        .as_deref()
        .map(|raw| OrganizationId::parse(raw).map_err(|_| unknown_org()))
        .transpose()?;
    let secret = generate_scim_token(ctx.rng.as_ref());
    let token = ScimToken {
        id: ScimTokenId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        organization_id: organization.clone(),
        hash: secret.hash,
        created_at: ctx.now(),
        revoked_at: None,
    };
    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    if let Some(org) = &organization
        && tx.organization(tenant, org).await?.is_none()
    {
        return Err(unknown_org());
    }
    if tx.scim_tokens(tenant).await?.len() >= MAX_SCIM_TOKENS {
        return Err(ManageError::Conflict(format!(
            "the tenant already has {MAX_SCIM_TOKENS} SCIM tokens"
        )));
    }
    tx.insert_scim_token(&token).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::SCIM_TOKEN_CREATED,
        Some(token.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(CreatedScimTokenView {
        view: ScimTokenView::from(&token),
        token: secret.plaintext,
    })
}

/// Every SCIM token of `tenant` (at most 100), revoked ones included, oldest first.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn list_tokens(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<Vec<ScimTokenView>, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let tokens = tx.scim_tokens(tenant).await?;
    tx.finish().await?;
    Ok(tokens.iter().map(ScimTokenView::from).collect())
}

/// Revokes the SCIM token `id` of `tenant` at once, audited as `scim_token.revoked`.
///
/// Errors: [`ManageError::NotFound`] when absent, already revoked, another tenant's or
/// malformed.
pub async fn revoke_token(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &str,
) -> Result<(), ManageError> {
    let id = ScimTokenId::parse(id).map_err(|_| ManageError::NotFound)?;
    let mut tx = ctx.store.write().await?;
    if !tx.revoke_scim_token(tenant, &id, ctx.now()).await? {
        return Err(ManageError::NotFound);
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::SCIM_TOKEN_REVOKED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(())
}

/// Rule (RFC 7644 §2, RFC 6750 §2.1): the presented bearer token is an unrevoked SCIM token of
/// `tenant`, and its organization, if any, is active. One statement outside a transaction.
///
/// Errors: [`ScimError::Unauthenticated`] for anything else, with no hint of which.
pub async fn authenticate(
    ctx: &ManageContext,
    tenant: &TenantId,
    presented: Option<&str>,
) -> Result<ScimCaller, ScimError> {
    let presented = presented
        .filter(|p| p.starts_with(SCIM_TOKEN_PREFIX))
        .ok_or(ScimError::Unauthenticated)?;
    let hash = SecretHash::of(presented);
    let mut tx = ctx.store.read().await?;
    let token = tx
        .scim_token_by_hash(tenant, &hash)
        .await?
        .filter(|t| t.hash.verify(presented))
        .ok_or(ScimError::Unauthenticated)?;
    if let Some(org) = &token.organization_id {
        let active = tx
            .organization(tenant, org)
            .await?
            .is_some_and(|o| o.status == OrgStatus::Active);
        if !active {
            return Err(ScimError::Unauthenticated);
        }
    }
    tx.finish().await?;
    Ok(ScimCaller {
        tenant: token.tenant_id,
        organization: token.organization_id,
        token: token.id,
    })
}
