//! SCIM 2.0 provisioning (RFC 7643, RFC 7644): what a directory (Entra ID, Okta) does at a
//! tenant's `/scim/v2` with a SCIM token, in domain terms.
//!
//! - [`tokens`]: SCIM bearer tokens (`svcscim_…`), issued through the management API for the
//!   tenant or one organization, stored hashed, revocable; and the authentication of a
//!   presented token ([`ScimCaller`]).
//! - [`users`]: the User resource type: list with filter and paging, read, create, replace,
//!   PATCH, delete (deprovision). Every write goes through the users use cases' in-transaction
//!   halves (`crate::users`), so provisioning follows the management API's rules, records the
//!   same audit entries and events, and ends sessions and refresh tokens the same way.
//! - [`groups`]: the Group resource type, in the token's scope (the tenant, or its
//!   organization), whose members are people the token can see; a person's read-only `groups`.
//! - [`sort`]: `sortBy` / `sortOrder` of both listings; [`search`]: `POST /.search` over both.
//! - [`bulk`]: `POST /Bulk`, many operations through the same use cases, with `bulkId`
//!   references and `failOnErrors`.
//! - [`discovery`]: `/ServiceProviderConfig`, `/Schemas`, `/ResourceTypes`, advertising only
//!   what works (Users and Groups, filtering, sorting, ETags, bulk; no password change).
//!
//! An organization's token sees only that organization's members: another person reads as
//! absent (404), and a person it creates becomes a `member`. Its groups are that
//! organization's, invisible to every other token (see [`groups`] for the mapping). Errors are
//! [`ScimError`], which `svc-http` renders as the RFC 7644 §3.12 error body; nothing here knows
//! HTTP.

pub mod bulk;
pub mod discovery;
pub mod filter;
#[cfg(test)]
mod filter_props;
pub mod group_filter;
pub mod group_resource;
pub mod groups;
mod patch;
pub mod resource;
pub mod search;
pub mod sort;
pub mod tokens;
pub mod users;

use crate::{Actor, ManageError};
use svc_domain::{OrganizationId, ScimTokenId, TenantId};

pub use patch::MAX_OPERATIONS;
pub use resource::{Projection, version_tag};
pub use tokens::{CreatedScimTokenView, ScimTokenInput, ScimTokenView};

/// Deployment limits of SCIM (`[scim]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScimSettings {
    /// Most resources one list answers (`filter.maxResults`); larger `count`s are capped.
    pub max_results: u32,
    /// Largest SCIM request body, in bytes (413 past it).
    pub max_body_bytes: usize,
}

/// Who is provisioning: a valid SCIM token of a tenant, perhaps limited to one organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimCaller {
    /// The tenant of the token (always the tenant addressed).
    pub tenant: TenantId,
    /// The organization the token is limited to.
    pub organization: Option<OrganizationId>,
    /// The token, as the actor of audit entries and events.
    pub token: ScimTokenId,
}

impl ScimCaller {
    /// The actor recorded for this caller's changes (`scim:scimt_…`).
    pub fn actor(&self) -> Actor {
        Actor::Scim(self.token.clone())
    }
}

/// Why a SCIM request did not take effect. Each variant's doc line gives the HTTP status and
/// RFC 7644 §3.12 `scimType` the client sees.
#[derive(Debug, thiserror::Error)]
pub enum ScimError {
    /// 401: no SCIM token, or not a valid one of this tenant.
    #[error("a valid SCIM bearer token of this tenant is required")]
    Unauthenticated,
    /// 404: no such resource within the caller's reach.
    #[error("resource not found")]
    NotFound,
    /// 400 `invalidFilter`.
    #[error("{0}")]
    InvalidFilter(String),
    /// 400 `invalidSyntax`: the body is not the message it should be.
    #[error("{0}")]
    InvalidSyntax(String),
    /// 400 `invalidPath`: a PATCH path names nothing a User has here.
    #[error("{0}")]
    InvalidPath(String),
    /// 400 `noTarget`: a PATCH value path selects nothing.
    #[error("{0}")]
    NoTarget(String),
    /// 400 `invalidValue`: a value breaks a rule.
    #[error("{0}")]
    InvalidValue(String),
    /// 400 `mutability`: an attempt to change what a client may not (`id`, `meta`, passwords).
    #[error("{0}")]
    Mutability(String),
    /// 409 `uniqueness`: the `userName` (or email address) belongs to another person, or the
    /// `displayName` to another group of the scope.
    #[error("{0}")]
    Uniqueness(String),
    /// 409 (no `scimType`): the request clashes with the person's state (e.g. removed).
    #[error("{0}")]
    Conflict(String),
    /// 403: an organization's token changing a person it does not own alone (a member of
    /// another organization too, or a holder of tenant roles).
    #[error("{0}")]
    Forbidden(String),
    /// 412: `If-Match` names a version that is no longer current.
    #[error("the resource has changed since that version")]
    PreconditionFailed,
    /// 413: the body is larger than `[scim].max_body_bytes`.
    #[error("the request body is too large")]
    TooLarge,
    /// 413: a `/Bulk` request beyond `bulk.maxOperations` (RFC 7644 §3.7.4: the body names the
    /// limit).
    #[error("{0}")]
    BulkLimit(String),
    /// 405: a method the endpoint does not take (`GET /Bulk`).
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 501: an endpoint this service does not offer (`/Me`).
    #[error("{0}")]
    NotImplemented(String),
    /// 500 / 503: the management use cases failed (database unavailable, a bug); the cause is
    /// for logs only.
    #[error(transparent)]
    Manage(ManageError),
}

impl From<ManageError> for ScimError {
    fn from(e: ManageError) -> Self {
        match e {
            ManageError::Invalid { field, message } => {
                Self::InvalidValue(format!("{}: {message}", wire_name(&field)))
            }
            ManageError::NotFound => Self::NotFound,
            ManageError::PreconditionFailed => Self::PreconditionFailed,
            ManageError::Conflict(m) if m == crate::users::EMAIL_TAKEN => Self::Uniqueness(m),
            ManageError::Conflict(m) => Self::Conflict(m),
            other => Self::Manage(other),
        }
    }
}

impl From<svc_store::StoreError> for ScimError {
    fn from(e: svc_store::StoreError) -> Self {
        ManageError::from(e).into()
    }
}

/// The SCIM name of a management API field, in messages.
fn wire_name(field: &str) -> &str {
    match field {
        "email" => "emails.value",
        "name" => "displayName",
        "given_name" => "name.givenName",
        "family_name" => "name.familyName",
        other => other,
    }
}
