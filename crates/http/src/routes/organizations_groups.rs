//! `/api/v1/organizations/{id}/scim/groups*` (scopes `organizations:read|write`): the groups an
//! organization's own directory maintains (with an organization SCIM token) and the
//! organization roles each grants its members, as thin handlers over
//! `svc_manage::directory_groups` in an organization's scope, registered by
//! `organizations::api`. The caller's reach applies as for members: an organization it does not
//! cover, another tenant's, a group of another scope or a malformed id is not found; an `admin`
//! mapping to `owner` (or changing a group that grants it) is forbidden.

use super::directory_groups::{GroupsQuery, group_id};
use super::organizations::{body, organization_id};
use crate::Problem;
use crate::api::conventions::{self, Page};
use crate::api::{ApiState, OrgAuthorized, OrganizationsRead, OrganizationsWrite};
use crate::openapi::tags;
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use svc_domain::ScimGroupId;
use svc_manage::directory_groups::{
    self, DirectoryGroupView, GroupScope, OrganizationGroupRolesInput,
};

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/scim/groups", tag = tags::ORGANIZATIONS,
    operation_id = "listOrganizationDirectoryGroups",
    summary = "List an organization's directory groups",
    description = "The SCIM groups the organization's own directory pushed (with an \
        organization SCIM token), in id order, each with its member count and the organization \
        roles it grants its members.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        GroupsQuery,
    ),
    responses((status = 200, description = "One page of groups.",
               body = inline(Page<DirectoryGroupView>))),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn list_groups(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path(id): Path<String>,
    query: Result<Query<GroupsQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), ScimGroupId::parse, "not a group id")?;
    let (items, next) = directory_groups::list(
        &state.manage,
        &caller.tenant.tenant.id,
        GroupScope::Organization(&org, &caller.reach),
        after.as_ref(),
        q.limit,
    )
    .await?;
    Ok(Page::respond(items, next))
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/scim/groups/{group_id}", tag = tags::ORGANIZATIONS,
    operation_id = "getOrganizationDirectoryGroup",
    summary = "Read an organization's directory group",
    description = "One of the organization's SCIM groups with its member count and the \
        organization roles it grants.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("group_id" = String, Path, description = "The group's SCIM `id` (`scimg_…`).",
         example = "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d"),
    ),
    responses((status = 200, description = "The group.", body = DirectoryGroupView)),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn get_group(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path((id, group)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    let group = group_id(&group)?;
    let view = directory_groups::get(
        &state.manage,
        &caller.tenant.tenant.id,
        GroupScope::Organization(&org, &caller.reach),
        &group,
    )
    .await?;
    Ok(Json(view).into_response())
}

#[utoipa::path(
    put, path = "/api/v1/organizations/{id}/scim/groups/{group_id}/roles",
    tag = tags::ORGANIZATIONS,
    operation_id = "setOrganizationDirectoryGroupRoles",
    summary = "Set the organization roles a directory group grants",
    description = "Replaces the organization roles every member of the organization who is in \
        the group holds through it (besides their membership's own): at most 16 of `owner`, \
        `admin`, `member` and the tenant's custom organization roles (`400` naming `roles` \
        otherwise); `[]` maps it to none. A group never makes anyone a member. Members gain or \
        lose the roles as the directory changes the group, on their next token. An `admin` may \
        not map to `owner` nor change a group that grants it (`403`). Audited as \
        `directory_group.roles_changed`; the same roles again change nothing.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("group_id" = String, Path, description = "The group's SCIM `id` (`scimg_…`).",
         example = "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d"),
    ),
    request_body(content = OrganizationGroupRolesInput, content_type = "application/json"),
    responses((status = 200, description = "The group after the change.",
               body = DirectoryGroupView)),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn set_group_roles(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path((id, group)): Path<(String, String)>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    let group = group_id(&group)?;
    let input: OrganizationGroupRolesInput = body(&bytes, "roles")?;
    let view = directory_groups::set_roles(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        GroupScope::Organization(&org, &caller.reach),
        &group,
        input.into(),
    )
    .await?;
    Ok(Json(view).into_response())
}
