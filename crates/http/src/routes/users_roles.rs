//! `/api/v1/tenant-users/{id}/roles`: a person's tenant roles — read them (`users:read`) and
//! replace them as a set (`users:write`). This version has one tenant role, `tenant_admin`: the
//! tenant's human administrators, who use the management API with their own sign-in. Registered
//! with the other tenant-user routes; another tenant's user, or a malformed id, is not found.
//!
//! The roles have no `ETag`: they are one set, replaced whole, and the same set again changes
//! nothing, so a `PUT` is idempotent by itself.

use super::organizations::body;
use crate::Problem;
use crate::api::{ApiState, Authorized, UsersRead, UsersWrite};
use crate::openapi::tags;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use svc_domain::UserId;
use svc_manage::users::{self, RolesInput, RolesView};

fn user_id(raw: &str) -> Result<UserId, Problem> {
    UserId::parse(raw).map_err(|_| Problem::not_found("no such user"))
}

/// Reads a user's tenant roles.
#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}/roles", tag = tags::USERS,
    operation_id = "getTenantUserRoles",
    summary = "Read a user's tenant roles",
    description = "The tenant roles the user holds, sorted (`[]` when none). `tenant_admin` \
        lets the person use this API with their own sign-in, holding every management scope, \
        while they can sign in. A removed user holds none.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    responses((status = 200, description = "The user's tenant roles.", body = RolesView)),
    security(("tenant_token" = ["users:read"])),
)]
pub(super) async fn roles(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let roles = users::roles(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(Json(RolesView::from(&roles)).into_response())
}

/// Replaces a user's tenant roles.
#[utoipa::path(
    put, path = "/api/v1/tenant-users/{id}/roles", tag = tags::USERS,
    operation_id = "setTenantUserRoles",
    summary = "Set a user's tenant roles",
    description = "Replaces the tenant roles the user holds with `roles`: at most 16 entries, \
        each `tenant_admin` (`400` naming `roles` otherwise); repeats collapse and `[]` takes \
        every role away. The same roles again change nothing. A change is audited as \
        `tenant_user.roles_changed` and emits the event `tenant_user.roles_changed` with the \
        roles before and after. A removed user cannot be given roles (`409`). Unknown members \
        are refused (`400`).",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    request_body(content = RolesInput, content_type = "application/json"),
    responses((status = 200, description = "The user's tenant roles after the change.",
               body = RolesView)),
    security(("tenant_token" = ["users:write"])),
)]
pub(super) async fn set_roles(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let input: RolesInput = body(&bytes, "roles")?;
    let roles = users::set_roles(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        input,
    )
    .await?;
    Ok(Json(RolesView::from(&roles)).into_response())
}
