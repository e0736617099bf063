//! The JSON shapes of a role, of a permission it holds and of an application's roles on the
//! management API, with their OpenAPI schemas. Every member is always sent (`null` where it has
//! no value), so the schemas mark them all required.

use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeSet;
use svc_domain::{RoleKey, RoleKind};
use time::OffsetDateTime;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// A role as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "key": "billing_viewer",
    "kind": "tenant",
    "built_in": false,
    "description": "Reads invoices.",
    "permissions": [{
        "resource": "https://api.acme.example/billing",
        "resource_id": "res_01jd2n4k6m8p0r2t4v6x8z0b2d",
        "name": "invoices:read"
    }],
    "created_at": "2026-11-24T10:15:30.123456Z",
    "updated_at": "2026-11-24T10:15:30.123456Z"
}))]
pub struct RoleView {
    /// The role's key, unique in the tenant across both kinds.
    #[schema(example = "billing_viewer")]
    pub key: String,
    /// Where it is assigned.
    #[schema(value_type = RoleKindSchema)]
    pub kind: RoleKind,
    /// Whether it is one of the built-in roles every tenant has (`tenant_admin`, `owner`,
    /// `admin`, `member`).
    pub built_in: bool,
    /// What it is for (fixed for built-in roles).
    pub description: String,
    /// The permissions it holds, sorted by resource identifier, then name.
    pub permissions: Vec<RolePermissionView>,
    /// Creation time (RFC 3339); `null` for built-in roles.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub created_at: Option<OffsetDateTime>,
    /// Last change of the description or permissions (RFC 3339); the `ETag` of a custom role is
    /// derived from it. `null` for built-in roles.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub updated_at: Option<OffsetDateTime>,
}

/// One permission a role holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, ToSchema)]
pub struct RolePermissionView {
    /// The identifier of the API resource defining it (the audience of its tokens).
    #[schema(example = "https://api.acme.example/billing")]
    pub resource: String,
    /// The API resource's id (`res_…`); `null` for the management API itself, whose
    /// permissions (`tenant_admin`'s) are the management scopes.
    #[schema(required = true, example = "res_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub resource_id: Option<String>,
    /// The permission: a scope token `<resource>:<action>`.
    #[schema(example = "invoices:read")]
    pub name: String,
}

/// The schema of [`RoleKind`] on the wire (named `RoleKind` in the document).
pub struct RoleKindSchema;

impl PartialSchema for RoleKindSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(
                [RoleKind::Tenant, RoleKind::Organization].map(RoleKind::as_str),
            ))
            .description(Some(
                "`tenant` (held by a person in the whole tenant, or by an application) or \
                 `organization` (held by a member in one organization).",
            ))
            .into()
    }
}

impl ToSchema for RoleKindSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("RoleKind")
    }
}

/// The tenant roles of an application, as the management API shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"roles": ["billing_service"]}))]
pub struct ApplicationRolesView {
    /// The custom tenant roles the application holds, sorted; empty when none.
    pub roles: Vec<String>,
}

impl From<&BTreeSet<RoleKey>> for ApplicationRolesView {
    fn from(roles: &BTreeSet<RoleKey>) -> Self {
        Self {
            roles: roles.iter().map(|r| r.as_str().to_owned()).collect(),
        }
    }
}
