//! Creates a tenant together with its management application, in one transaction: a tenant
//! never exists without a way to manage it, and a failed creation leaves nothing behind.

use super::rules::{check_display_name, check_mfa_policy, check_slug};
use crate::applications::management_application;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::Deserialize;
use std::fmt;
use svc_domain::{
    Application, MfaPolicy, PairwiseSecret, Tenant, TenantId, TenantSlug, TenantStatus,
};
use svc_store::StoreError;

/// What an operator sends to create a tenant. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"slug": "acme", "display_name": "Acme Corp", "signup_enabled": false}))]
pub struct NewTenant {
    /// The host label (`{slug}.{base_domain}`): a lowercase DNS label (letters, digits and
    /// inner hyphens, at most 63 characters), unique, never changed.
    #[schema(
        example = "acme",
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
    )]
    pub slug: String,
    /// Name shown on hosted pages, 1 to 200 characters after trimming, no control characters.
    #[schema(example = "Acme Corp", min_length = 1, max_length = 200)]
    pub display_name: String,
    /// Whether people may create their own account on the hosted sign-up page (default false).
    #[serde(default)]
    pub signup_enabled: bool,
    /// The tenant's second-factor policy (default `default`: the deployment's
    /// `[two_factor].policy`). See [`crate::MfaPolicyView`].
    #[serde(default)]
    #[schema(value_type = crate::MfaPolicyView)]
    pub mfa_policy: MfaPolicy,
}

/// A new tenant with the credentials of its management application. The plaintext secret is
/// returned this once and never stored; `Debug` redacts it.
#[derive(Clone, PartialEq, Eq)]
pub struct CreatedTenant {
    /// The tenant.
    pub tenant: Tenant,
    /// Its management application.
    pub management_application: Application,
    /// The management application's client secret (`cs_…`).
    pub client_secret: String,
}

impl fmt::Debug for CreatedTenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreatedTenant")
            .field("tenant", &self.tenant)
            .field("management_application", &self.management_application)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// Creates the tenant and its management application ("Management API": client_credentials,
/// `client_secret_basic`, every management scope, the management API audience), audited once
/// as `tenant.created`.
///
/// Errors: [`ManageError::Invalid`] for a bad slug or display name, or a second-factor policy
/// the deployment cannot meet;
/// [`ManageError::Conflict`] when the slug is taken. Nothing is written on error.
pub async fn create_tenant(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewTenant,
) -> Result<CreatedTenant, ManageError> {
    let slug = check_slug(&input.slug)?;
    let display_name = check_display_name(&input.display_name)?;
    let mfa_policy = check_mfa_policy(input.mfa_policy, ctx.second_factors)?;
    let now = ctx.now();
    let tenant = Tenant {
        id: TenantId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        slug,
        display_name,
        status: TenantStatus::Active,
        signup_enabled: input.signup_enabled,
        mfa_policy,
        pairwise_secret: PairwiseSecret::generate(ctx.rng.as_ref()),
        created_at: now,
        updated_at: now,
    };
    let (management, secret) =
        management_application(ctx.clock.as_ref(), ctx.rng.as_ref(), &tenant.id, now);

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_slug(&tenant.slug).await?.is_some() {
        return Err(slug_taken(&tenant.slug));
    }
    match tx.insert_tenant(&tenant).await {
        Ok(()) => {}
        // A concurrent creation won between the check and the insert.
        Err(StoreError::Conflict { .. }) => return Err(slug_taken(&tenant.slug)),
        Err(e) => return Err(e.into()),
    }
    tx.insert_application(&management).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&tenant.id),
        action::TENANT_CREATED,
        Some(tenant.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(CreatedTenant {
        tenant,
        management_application: management,
        client_secret: secret.plaintext,
    })
}

fn slug_taken(slug: &TenantSlug) -> ManageError {
    ManageError::Conflict(format!("a tenant with slug {slug} exists"))
}
