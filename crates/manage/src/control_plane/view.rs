//! The JSON shapes of tenants on the control plane.

use super::CreatedTenant;
use crate::applications::ApplicationView;
use serde::Serialize;
use svc_domain::Tenant;
use time::OffsetDateTime;

/// A tenant as the control plane shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TenantView {
    /// The tenant's id (`ten_…`).
    pub id: String,
    /// Its host label.
    pub slug: String,
    /// Name shown on hosted pages.
    pub display_name: String,
    /// `active` or `suspended`.
    pub status: String,
    /// Whether the hosted sign-up page is open.
    pub signup_enabled: bool,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl From<&Tenant> for TenantView {
    fn from(tenant: &Tenant) -> Self {
        Self {
            id: tenant.id.to_string(),
            slug: tenant.slug.to_string(),
            display_name: tenant.display_name.clone(),
            status: tenant.status.as_str().to_owned(),
            signup_enabled: tenant.signup_enabled,
            created_at: tenant.created_at,
            updated_at: tenant.updated_at,
        }
    }
}

/// The answer to creating a tenant: the tenant, its management application, and that
/// application's client secret, shown this once.
#[derive(Clone, PartialEq, Serialize)]
pub struct CreatedTenantView {
    /// The new tenant.
    pub tenant: TenantView,
    /// Its management application (client_credentials, every management scope).
    pub management_application: ApplicationView,
    /// The management application's secret (`cs_…`); never retrievable again.
    pub client_secret: String,
}

impl std::fmt::Debug for CreatedTenantView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedTenantView")
            .field("tenant", &self.tenant)
            .field("management_application", &self.management_application)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

impl From<&CreatedTenant> for CreatedTenantView {
    fn from(created: &CreatedTenant) -> Self {
        Self {
            tenant: TenantView::from(&created.tenant),
            management_application: ApplicationView::from(&created.management_application),
            client_secret: created.client_secret.clone(),
        }
    }
}
