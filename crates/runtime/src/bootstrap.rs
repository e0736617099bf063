//! First-start bootstrap outside production (CONTRACTS.md "Tenancy and issuers"): with no tenant
//! routing configured the service behaves as if `tenant.default_tenant_slug = "default"` and
//! creates that tenant, so a new user gets working endpoints without any setup.

use crate::RuntimeError;
use std::sync::Arc;
use svc_config::Config;
use svc_domain::{Clock, Rng, TenantId, TenantSlug};
use svc_manage::control_plane::{NewTenant, create_tenant};
use svc_manage::{Actor, ManageContext, ManageError, RequestMeta};
use svc_store::Store;

/// The slug used when nothing else is configured.
pub(crate) const ZERO_CONFIG_TENANT: &str = "default";

/// The single-tenant slug this configuration implies, if any.
pub(crate) fn implied_default_tenant(config: &Config) -> Option<String> {
    match (
        &config.tenant.default_tenant_slug,
        &config.server.base_domain,
    ) {
        (Some(slug), _) => Some(slug.clone()),
        (None, None) => Some(ZERO_CONFIG_TENANT.to_owned()),
        (None, Some(_)) => None,
    }
}

/// Creates the implied default tenant unless it exists, through the same use case as the
/// control plane, so it has a management application like any tenant. Its secret is discarded
/// (never logged); an operator obtains credentials with
/// `POST /api/v1/control-plane/tenants/{id}/management-credentials`. Safe to race with other
/// instances: a concurrent creator's conflict counts as success.
pub(crate) async fn ensure_default_tenant(
    store: Arc<dyn Store>,
    slug: &str,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
) -> Result<Option<TenantId>, RuntimeError> {
    let parsed = TenantSlug::parse(slug)
        .map_err(|e| RuntimeError::Bootstrap(format!("tenant.default_tenant_slug: {e}")))?;
    let mut read = store
        .read()
        .await
        .map_err(|e| RuntimeError::Bootstrap(e.to_string()))?;
    let existing = read
        .tenant_by_slug(&parsed)
        .await
        .map_err(|e| RuntimeError::Bootstrap(e.to_string()))?;
    drop(read);
    if existing.is_some() {
        return Ok(None);
    }
    let ctx = ManageContext::new(store, clock, rng);
    let input = NewTenant {
        slug: slug.to_owned(),
        display_name: slug.to_owned(),
        signup_enabled: true,
        mfa_policy: svc_domain::MfaPolicy::Default,
    };
    match create_tenant(&ctx, &Actor::System, &RequestMeta::default(), input).await {
        Ok(created) => Ok(Some(created.tenant.id)),
        Err(ManageError::Conflict(_)) => Ok(None),
        Err(e) => Err(RuntimeError::Bootstrap(format!(
            "cannot create the default tenant: {e}"
        ))),
    }
}
