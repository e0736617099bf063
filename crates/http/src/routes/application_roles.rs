//! `/api/v1/applications/{id}/roles`: an application's tenant roles — read them
//! (`applications:read`) and replace them as a set (`applications:write`). They are the custom
//! tenant roles whose permissions the application holds when it calls an API resource of the
//! tenant. Registered with the role routes; another tenant's application, or a malformed id, is
//! not found.
//!
//! The roles have no `ETag`: they are one set, replaced whole, and the same set again changes
//! nothing, so a `PUT` is idempotent by itself.

use super::organizations::body;
use crate::Problem;
use crate::api::{ApiState, ApplicationsRead, ApplicationsWrite, Authorized};
use crate::openapi::tags;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use svc_domain::ClientId;
use svc_manage::roles::{self, ApplicationRolesInput, ApplicationRolesView};

fn client_id(raw: &str) -> Result<ClientId, Problem> {
    ClientId::parse(raw).map_err(|_| Problem::not_found("no such application"))
}

/// Reads an application's roles.
#[utoipa::path(
    get, path = "/api/v1/applications/{id}/roles", tag = tags::APPLICATIONS,
    operation_id = "getApplicationRoles",
    summary = "Read an application's roles",
    description = "The custom tenant roles the application holds, sorted (`[]` when none): \
        their permissions are what it may ask for when it requests a token for an API resource \
        of the tenant.",
    params(
        ("id" = String, Path, description = "The application's client id.",
         example = "app_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    responses((status = 200, description = "The application's roles.",
               body = ApplicationRolesView)),
    security(("tenant_token" = ["applications:read"])),
)]
pub(super) async fn application_roles(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let roles = roles::application_roles(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(Json(ApplicationRolesView::from(&roles)).into_response())
}

/// Replaces an application's roles.
#[utoipa::path(
    put, path = "/api/v1/applications/{id}/roles", tag = tags::APPLICATIONS,
    operation_id = "setApplicationRoles",
    summary = "Set an application's roles",
    description = "Replaces the roles the application holds with `roles`: at most 16 entries, \
        each the key of a custom role of kind `tenant` (`400` naming `roles` otherwise: an \
        unknown key, an organization role, or `tenant_admin`, which is for people — an \
        application calls the management API as the tenant's management application instead); \
        repeats collapse and `[]` takes every role away. The same roles again change nothing. A \
        change is audited as `application.roles_changed` and emits the event \
        `admin.application.roles_changed` with the roles before and after. Unknown members are \
        refused (`400`).",
    params(
        ("id" = String, Path, description = "The application's client id.",
         example = "app_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    request_body(content = ApplicationRolesInput, content_type = "application/json"),
    responses((status = 200, description = "The application's roles after the change.",
               body = ApplicationRolesView)),
    security(("tenant_token" = ["applications:write"])),
)]
pub(super) async fn set_application_roles(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let input: ApplicationRolesInput = body(&bytes, "roles")?;
    let roles = roles::set_application_roles(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        input,
    )
    .await?;
    Ok(Json(ApplicationRolesView::from(&roles)).into_response())
}
