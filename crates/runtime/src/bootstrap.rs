//! First-start bootstrap outside production (CONTRACTS.md "Tenancy and issuers"): with no tenant
//! routing configured the service behaves as if `tenant.default_tenant_slug = "default"` and
//! creates that tenant, so a new user gets working endpoints without any setup.

use crate::RuntimeError;
use svc_config::Config;
use svc_domain::{Clock, Rng, Tenant, TenantId, TenantSlug, TenantStatus};
use svc_store::{Store, StoreError};

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

/// Creates the implied default tenant unless it exists. Safe to race with other instances: a
/// concurrent creator's conflict counts as success.
pub(crate) async fn ensure_default_tenant(
    store: &dyn Store,
    slug: &str,
    clock: &dyn Clock,
    rng: &dyn Rng,
) -> Result<bool, RuntimeError> {
    let slug = TenantSlug::parse(slug)
        .map_err(|e| RuntimeError::Bootstrap(format!("tenant.default_tenant_slug: {e}")))?;
    let fail =
        |e: StoreError| RuntimeError::Bootstrap(format!("cannot create the default tenant: {e}"));
    let mut tx = store.write().await.map_err(fail)?;
    if tx.tenant_by_slug(&slug).await.map_err(fail)?.is_some() {
        return Ok(false);
    }
    let now = clock.now();
    let tenant = Tenant {
        id: TenantId::generate(clock, rng),
        display_name: slug.as_str().to_owned(),
        slug,
        status: TenantStatus::Active,
        created_at: now,
        updated_at: now,
    };
    match tx.insert_tenant(&tenant).await {
        Ok(()) => tx.commit().await.map_err(fail).map(|()| true),
        Err(StoreError::Conflict { .. }) => Ok(false),
        Err(e) => Err(fail(e)),
    }
}
