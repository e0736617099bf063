//! A tenant's roles and the permissions they hold (issue 17 items 1 and 2): list and read every
//! role, built-in and custom; create, change and delete custom roles; change the permissions of
//! the built-in organization roles; read and replace the tenant roles of an application. Every
//! use case is scoped by the tenant, so another tenant's role or application reads as absent,
//! and every write appends its audit entry and its outbox event (`admin.role.*`,
//! `admin.application.roles_changed`) in the same transaction as the change.
//!
//! Rules:
//! - The built-in roles ([`TENANT_ROLES`], [`ORG_ROLES`]) exist in every tenant without being
//!   stored; their keys cannot be created, and they cannot be deleted. `tenant_admin` holds the
//!   management API's scopes, fixed by this version, so it cannot be changed at all; `owner`,
//!   `admin` and `member` keep their fixed descriptions and rules, and only the permissions they
//!   hold can change.
//! - A tenant has at most [`MAX_CUSTOM_ROLES`] custom roles, each holding at most
//!   [`MAX_ROLE_PERMISSIONS`] permissions, each one a permission an API resource of the tenant
//!   defines (named by the resource's identifier and the permission's name).
//! - A custom role is deleted only while nobody holds it (no person, membership or application):
//!   the deletion counts the holders after deleting, in the same transaction, and rolls back
//!   when there are any, so an assignment racing with it either lands first (and the deletion is
//!   refused) or sees the role gone.
//! - Assignments ([`crate::users::set_roles`], the organization membership use cases and
//!   [`set_application_roles`]) accept a custom role only of their kind, read and held (its row
//!   written unchanged, which takes its lock) in their write transaction ([`unassignable`]).
//!
//! A custom role's `updated_at` is its revision (`ETag`/`If-Match`): every change of it, of its
//! description or of its permissions, moves it forward and is written only at the revision read,
//! so two changes made from the same revision never both apply.

mod application;
mod create;
mod delete;
mod input;
mod permissions;
mod read;
mod update;
mod view;

pub use application::{application_roles, set_application_roles};
pub use create::create;
pub use delete::delete;
pub use input::{ApplicationRolesInput, NewRole, RolePatch, RolePermissionInput};
pub use read::{get, list};
pub use update::update;
pub use view::{ApplicationRolesView, RoleKindSchema, RolePermissionView, RoleView};

use crate::{Actor, ManageContext, ManageError, RequestMeta, audit, events};
use std::collections::BTreeSet;
use svc_domain::{EventData, EventType, ORG_ROLES, RoleKey, RoleKind, TENANT_ROLES, TenantId};
use svc_store::WriteTx;

/// The shape of a role key ([`RoleKey::parse`]) as a JSON Schema pattern.
pub const ROLE_KEY_PATTERN: &str = "^[a-z0-9_.-]{1,64}$";

/// The most custom roles one tenant may have.
pub const MAX_CUSTOM_ROLES: usize = 100;
/// The most permissions a role may be given (entries of `permissions`, repeats included).
pub const MAX_ROLE_PERMISSIONS: usize = 100;
/// The most entries the roles of an application may list (repeats included).
pub const MAX_APPLICATION_ROLES: usize = 16;

/// Whether `key` is a built-in role (of either kind).
fn is_built_in(key: &RoleKey) -> bool {
    RoleKind::of_built_in(key.as_str()).is_some()
}

/// The first of `roles` that is not a role of `kind` in `tenant`, with the kind it has when it
/// is a role at all: built-in roles of `kind` pass, other keys must name a stored custom role of
/// `kind`, which stays locked ([`hold`]) until the caller's write transaction ends, so the answer
/// holds when it commits.
pub(crate) async fn unassignable(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    roles: &BTreeSet<RoleKey>,
    kind: RoleKind,
) -> Result<Option<(RoleKey, Option<RoleKind>)>, ManageError> {
    for key in roles {
        match RoleKind::of_built_in(key.as_str()) {
            Some(built_in) if built_in == kind => continue,
            Some(other) => return Ok(Some((key.clone(), Some(other)))),
            None => {}
        }
        match hold(tx, tenant, key).await? {
            Some(found) if found == kind => {}
            found => return Ok(Some((key.clone(), found))),
        }
    }
    Ok(None)
}

/// The kind of the custom role `key` of `tenant` (`None` when there is none), read with the
/// lock that makes a deletion of it wait for this transaction ([`svc_store::AccessWrites::lock_role`]):
/// either the deletion commits first and the role reads as gone here, or it waits and then
/// counts the holder this transaction adds ([`delete`] counts holders after deleting).
async fn hold(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    key: &RoleKey,
) -> Result<Option<RoleKind>, ManageError> {
    Ok(tx.lock_role(tenant, key).await?.map(|role| role.kind))
}

/// Appends the audit entry (target: the role's key) and the `admin.role.*` event of a change of
/// the role `view` by `actor`.
async fn record_change(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    tenant: &TenantId,
    view: &RoleView,
    change: (&str, EventType),
) -> Result<(), ManageError> {
    let (verb, event_type) = change;
    let entry = audit::entry(ctx, actor, meta, Some(tenant), verb, Some(&view.key));
    audit::record(tx, &entry).await?;
    let data = EventData::Role {
        role: view.key.clone(),
        kind: view.kind.as_str().to_owned(),
        permissions: view
            .permissions
            .iter()
            .map(|p| format!("{} {}", p.resource, p.name))
            .collect(),
        actor: actor.as_audit_string(),
    };
    events::record(tx, ctx, tenant, event_type, data).await
}

/// Every built-in role key, in the order the API lists them.
fn built_in_keys() -> impl Iterator<Item = &'static str> {
    TENANT_ROLES.into_iter().chain(ORG_ROLES)
}

/// A role key of a path: one that does not parse names no role.
fn path_key(raw: &str) -> Result<RoleKey, ManageError> {
    RoleKey::parse(raw).map_err(|_| ManageError::NotFound)
}
