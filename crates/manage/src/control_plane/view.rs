//! The JSON shapes of tenants on the control plane. A client secret appears only in the answer
//! to the call that generated it ([`CreatedTenantView`], [`ManagementCredentialsView`]), once;
//! `Debug` redacts it.

use super::CreatedTenant;
use crate::applications::ApplicationView;
use serde::Serialize;
use svc_domain::{ClientId, Tenant};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A tenant as the control plane shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "ten_01jd3k2m4n5p6q7r8s9t0v1w2x",
    "slug": "acme",
    "display_name": "Acme Corp",
    "status": "active",
    "signup_enabled": false,
    "mfa_policy": "default",
    "created_at": "2026-11-23T09:14:07.123456Z",
    "updated_at": "2026-11-23T09:14:07.123456Z"
}))]
pub struct TenantView {
    /// The tenant's id (`ten_…`).
    #[schema(example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    pub id: String,
    /// Its host label: the tenant is served at `{slug}.{base_domain}`. Never changes.
    #[schema(example = "acme")]
    pub slug: String,
    /// Name shown on hosted pages.
    pub display_name: String,
    /// Whether its hosts serve traffic (`active`) or answer 403 (`suspended`).
    #[schema(value_type = TenantState)]
    pub status: String,
    /// Whether the hosted sign-up page is open.
    pub signup_enabled: bool,
    /// Its second-factor policy.
    #[schema(value_type = MfaPolicyView)]
    pub mfa_policy: String,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); its revision is the tenant's `ETag`.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// A tenant's second-factor policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MfaPolicyView {
    /// The deployment's `[two_factor].policy`.
    Default,
    /// Second factors are not offered: nobody enrols one and no authorization request is
    /// stepped up (an application asking for `urn:svc:aal2` as essential gets
    /// `unmet_authentication_requirements`). A factor a person already has is still asked for
    /// at sign-in.
    Off,
    /// People choose whether to set up a second factor; applications may ask for
    /// `urn:svc:aal2`. Needs `[two_factor].enabled`.
    Optional,
    /// Every authorization needs `urn:svc:aal2`: a person without a second factor sets one up
    /// before any application gets a code. Needs `[two_factor].enabled`.
    Required,
}

/// The status of a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TenantState {
    /// Its hosts serve traffic.
    Active,
    /// Every surface of the tenant answers 403 until it is reactivated; its records are kept.
    Suspended,
}

impl From<&Tenant> for TenantView {
    fn from(tenant: &Tenant) -> Self {
        Self {
            id: tenant.id.to_string(),
            slug: tenant.slug.to_string(),
            display_name: tenant.display_name.clone(),
            status: tenant.status.as_str().to_owned(),
            signup_enabled: tenant.signup_enabled,
            mfa_policy: tenant.mfa_policy.as_str().to_owned(),
            created_at: tenant.created_at,
            updated_at: tenant.updated_at,
        }
    }
}

/// Credentials of a tenant's management application: what requests management tokens
/// (client credentials at the tenant's `/oauth/token`, `client_secret_basic`).
#[derive(Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ManagementCredentialsView {
    /// The management application's client id (`app_…`).
    #[schema(example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    pub client_id: String,
    /// Its client secret (`cs_…`), shown this once: only its hash is stored, and the previous
    /// secret, if any, stopped working.
    #[schema(example = "cs_4fJr0bqgWmT2xYkq7nB1vD8cZ5sH3eLa9uP6wN0tR2i")]
    pub client_secret: String,
}

impl ManagementCredentialsView {
    /// The credentials of application `client_id` with its new `client_secret`.
    pub fn new(client_id: &ClientId, client_secret: String) -> Self {
        Self {
            client_id: client_id.to_string(),
            client_secret,
        }
    }
}

impl std::fmt::Debug for ManagementCredentialsView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagementCredentialsView")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// A new tenant's management application: its credentials and the application itself.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ManagementApplicationView {
    /// The credentials (client id and the secret, shown this once).
    #[serde(flatten)]
    pub credentials: ManagementCredentialsView,
    /// The application (client_credentials, every management scope, the management API
    /// audience).
    pub application: ApplicationView,
}

/// The answer to creating a tenant: the tenant and its management application with that
/// application's client secret, shown this once.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CreatedTenantView {
    /// The new tenant.
    pub tenant: TenantView,
    /// Its management application and credentials.
    pub management_application: ManagementApplicationView,
}

impl From<&CreatedTenant> for CreatedTenantView {
    fn from(created: &CreatedTenant) -> Self {
        Self {
            tenant: TenantView::from(&created.tenant),
            management_application: ManagementApplicationView {
                credentials: ManagementCredentialsView::new(
                    &created.management_application.id,
                    created.client_secret.clone(),
                ),
                application: ApplicationView::from(&created.management_application),
            },
        }
    }
}
