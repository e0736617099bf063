//! The JSON shape of an API resource on the management API, with its OpenAPI schema. Every
//! member is always sent, so the schema marks them all required.

use serde::Serialize;
use svc_domain::{ApiResource, Permission};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// An API resource as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "res_01jd2p6r8t0v2x4z6b8d0f2h4k",
    "identifier": "https://api.example.com",
    "name": "Invoices API",
    "permissions": [
        {"name": "invoices:read", "description": "Read invoices"},
        {"name": "invoices:write", "description": "Create and change invoices"}
    ],
    "created_at": "2026-11-24T10:15:30.123456Z",
    "updated_at": "2026-11-24T10:15:30.123456Z"
}))]
pub struct ApiResourceView {
    /// Durable id (`res_…`).
    #[schema(example = "res_01jd2p6r8t0v2x4z6b8d0f2h4k")]
    pub id: String,
    /// The audience of the tokens issued for it (RFC 8707 `resource`); never changes.
    #[schema(example = "https://api.example.com")]
    pub identifier: String,
    /// Display name.
    #[schema(example = "Invoices API")]
    pub name: String,
    /// The permissions it defines, sorted by name.
    pub permissions: Vec<PermissionView>,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); the `ETag` of the resource is derived from it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// A permission an API resource defines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PermissionView {
    /// The scope token `<resource>:<action>`.
    #[schema(example = "invoices:read")]
    pub name: String,
    /// What it allows (empty when none was given).
    #[schema(example = "Read invoices")]
    pub description: String,
}

impl From<&Permission> for PermissionView {
    fn from(permission: &Permission) -> Self {
        Self {
            name: permission.name.as_str().to_owned(),
            description: permission.description.clone(),
        }
    }
}

impl From<&ApiResource> for ApiResourceView {
    fn from(resource: &ApiResource) -> Self {
        let mut permissions: Vec<PermissionView> = resource
            .permissions
            .iter()
            .map(PermissionView::from)
            .collect();
        // The store returns them sorted; sorting again keeps the promise for any other source.
        permissions.sort_by(|a, b| a.name.cmp(&b.name));
        Self {
            id: resource.id.to_string(),
            identifier: resource.identifier.clone(),
            name: resource.name.clone(),
            permissions,
            created_at: resource.created_at,
            updated_at: resource.updated_at,
        }
    }
}
