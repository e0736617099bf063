//! `/api/v1/scim/groups*` (scopes `users:read|write`): the tenant's own directory groups (those
//! its directory maintains at `/scim/v2/Groups`) as administrators see them, and the tenant
//! roles each grants its members. Thin handlers over `svc_manage::directory_groups`; an
//! organization's group, another tenant's or a malformed id is not found.

use super::organizations::body;
use crate::Problem;
use crate::api::conventions::{self, Page};
use crate::api::{ApiState, Authorized, UsersRead, UsersWrite};
use crate::openapi::tags;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::Deserialize;
use svc_domain::ScimGroupId;
use svc_manage::directory_groups::{self, DirectoryGroupView, GroupRolesInput, GroupScope};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The paths of the tenant's and the organizations' directory-group operations, for the API
/// reference of a deployment without `[scim]` (which serves none of them).
pub const PATHS: [&str; 6] = [
    "/api/v1/scim/groups",
    "/api/v1/scim/groups/{id}",
    "/api/v1/scim/groups/{id}/roles",
    "/api/v1/organizations/{id}/scim/groups",
    "/api/v1/organizations/{id}/scim/groups/{group_id}",
    "/api/v1/organizations/{id}/scim/groups/{group_id}/roles",
];

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(read))
        .routes(routes!(set_roles))
}

/// The directory group routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

pub(super) fn group_id(raw: &str) -> Result<ScimGroupId, Problem> {
    ScimGroupId::parse(raw).map_err(|_| Problem::not_found("no such group"))
}

/// Paging of the list (id order only).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct GroupsQuery {
    /// Page size, 1..=200 (default 50; larger values are clamped).
    #[param(minimum = 1, maximum = 200)]
    pub(super) limit: Option<u32>,
    /// Return groups after this cursor: the `next_cursor` of the previous page.
    #[param(max_length = 64)]
    pub(super) after: Option<String>,
}

/// Lists the tenant's directory groups.
#[utoipa::path(
    get, path = "/api/v1/scim/groups", tag = tags::USERS,
    operation_id = "listDirectoryGroups",
    summary = "List directory groups",
    description = "The tenant's own SCIM groups (pushed by its directory with a tenant SCIM \
        token; an organization's groups are not listed), in id order, each with its member \
        count and the tenant roles it grants its members.",
    params(GroupsQuery),
    responses((status = 200, description = "One page of groups.",
               body = inline(Page<DirectoryGroupView>))),
    security(("tenant_token" = ["users:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    query: Result<Query<GroupsQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), ScimGroupId::parse, "not a group id")?;
    let (items, next) = directory_groups::list(
        &state.manage,
        &caller.tenant.tenant.id,
        GroupScope::Tenant,
        after.as_ref(),
        q.limit,
    )
    .await?;
    Ok(Page::respond(items, next))
}

/// Reads one directory group.
#[utoipa::path(
    get, path = "/api/v1/scim/groups/{id}", tag = tags::USERS,
    operation_id = "getDirectoryGroup",
    summary = "Read a directory group",
    description = "One of the tenant's own SCIM groups with its member count and roles.",
    params(("id" = String, Path, description = "The group's SCIM `id` (`scimg_…`).",
            example = "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    responses((status = 200, description = "The group.", body = DirectoryGroupView)),
    security(("tenant_token" = ["users:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = group_id(&id)?;
    let group = directory_groups::get(
        &state.manage,
        &caller.tenant.tenant.id,
        GroupScope::Tenant,
        &id,
    )
    .await?;
    Ok(Json(group).into_response())
}

/// Maps a directory group to tenant roles.
#[utoipa::path(
    put, path = "/api/v1/scim/groups/{id}/roles", tag = tags::USERS,
    operation_id = "setDirectoryGroupRoles",
    summary = "Set the roles a directory group grants",
    description = "Replaces the tenant roles every member of the group holds through it \
        (besides their own): at most 16 entries, each `tenant_admin` or a custom tenant role \
        (`400` naming `roles` otherwise); `[]` maps it to none. Members gain or lose them as the \
        directory changes the group, on their next token. Audited as \
        `directory_group.roles_changed`; the same roles again change nothing. A custom role \
        mapped to a group cannot be deleted until unmapped (`409`).",
    params(("id" = String, Path, description = "The group's SCIM `id` (`scimg_…`).",
            example = "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    request_body(content = GroupRolesInput, content_type = "application/json"),
    responses((status = 200, description = "The group after the change.",
               body = DirectoryGroupView)),
    security(("tenant_token" = ["users:write"])),
)]
async fn set_roles(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = group_id(&id)?;
    let input: GroupRolesInput = body(&bytes, "roles")?;
    let group = directory_groups::set_roles(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        GroupScope::Tenant,
        &id,
        input,
    )
    .await?;
    Ok(Json(group).into_response())
}
