//! `/api/v1/organizations/{id}/members` (scopes `organizations:read|write`): the members of an
//! organization — add, list, read, change roles, remove — as thin handlers over
//! `svc_manage::organizations`, registered by `organizations::api`. Another tenant's
//! organization or member, or a malformed id in the path, is not found; a `user_id` in the body
//! that is not a user of this tenant is a `400` naming it, whatever the reason.
//!
//! A membership has no `ETag`: its one mutable part is its set of roles, replaced whole, and
//! removing a member is final and idempotent in effect (a second removal is a `404`).

use super::organizations::{BASE, body, organization_id, user_id};
use crate::Problem;
use crate::api::conventions;
use crate::api::{
    ApiState, OrgAuthorized, OrganizationsRead, OrganizationsWrite, create_idempotently,
};
use crate::openapi::tags;
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use svc_domain::UserId;
use svc_manage::organizations::{self, MemberPatch, MembershipView, NewMember};
use utoipa::{IntoParams, ToSchema};

/// `Location` of a membership.
fn location(org: &str, user: &str) -> String {
    format!("{BASE}/{org}/members/{user}")
}

#[utoipa::path(
    post, path = "/api/v1/organizations/{id}/members", tag = tags::ORGANIZATIONS,
    operation_id = "addOrganizationMember",
    summary = "Add a member",
    description = "Adds a person to the organization with the roles given (default \
        `[\"member\"]`). `user_id` must be a user of this tenant that is not removed (`400` \
        naming `user_id` otherwise, the same for an unknown id as for another tenant's user). \
        `roles` lists 1 to 16 of the built-in organization roles `owner`, `admin` and `member` \
        (`400` naming `roles` otherwise). A person already a member is a `409`, and so is one \
        who already belongs to 500 organizations. Unknown members are refused (`400`).\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "add-ada-to-acme-eu"),
    ),
    request_body(content = NewMember, content_type = "application/json"),
    responses(
        (status = 201, description = "The membership, created.", body = MembershipView,
         headers(("Location" = String,
                  description = "The membership's URL: \
                                 `/api/v1/organizations/{id}/members/{user_id}`."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn add_member(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let org = match organization_id(&id) {
        Ok(org) => org,
        Err(problem) => return problem.into_response(),
    };
    let scope = caller
        .actor
        .idempotency_scope(Some(&caller.tenant.tenant.id));
    let path = format!("{BASE}/{org}/members");
    // The create runs in a future of its own: it borrows the request's parts.
    let (state, caller) = (&state, &caller);
    create_idempotently(
        &state.manage,
        &scope,
        &headers,
        (&path, &bytes),
        |bytes| body::<NewMember>(bytes, "member"),
        |input| async move {
            let m = organizations::add_member(
                &state.manage,
                &caller.tenant.tenant.id,
                (&caller.actor, &caller.meta),
                &caller.reach,
                &org,
                input,
            )
            .await?;
            Ok(MembershipView::from(&m))
        },
        |body| {
            Some(location(
                body["organization_id"].as_str()?,
                body["user_id"].as_str()?,
            ))
        },
    )
    .await
}

/// Query of `GET /api/v1/organizations/{id}/members`: the page.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct MembersQuery {
    /// Page size, 1..=200 (default 50; larger values are clamped).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Return members after this user id: the `next_cursor` of the previous page.
    #[param(max_length = 64)]
    after: Option<String>,
}

/// A page of members.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct MemberList {
    /// The memberships of this page, in user-id order.
    items: Vec<MembershipView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/members", tag = tags::ORGANIZATIONS,
    operation_id = "listOrganizationMembers",
    summary = "List members",
    description = "The organization's members with their roles, in user-id order, a page at a \
        time: pass the `next_cursor` of a page as `after` to get the next one. Unknown query \
        parameters are refused (`400`).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        MembersQuery,
    ),
    responses((status = 200, description = "One page of members.", body = MemberList)),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn list_members(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path(id): Path<String>,
    query: Result<Query<MembersQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), UserId::parse, "not a user id")?;
    let (items, next) = organizations::list_members(
        &state.manage,
        &caller.tenant.tenant.id,
        &org,
        after.as_ref(),
        q.limit,
    )
    .await?;
    Ok(Json(MemberList {
        items: items.iter().map(MembershipView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/members/{user_id}", tag = tags::ORGANIZATIONS,
    operation_id = "getOrganizationMember",
    summary = "Read a membership",
    description = "One member of the organization and the roles they hold. A person who is not \
        a member is not found.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("user_id" = String, Path, description = "The member's user id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    responses((status = 200, description = "The membership.", body = MembershipView)),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn get_member(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path((id, user)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let user = user_id(&user)?;
    let m = organizations::get_member(&state.manage, &caller.tenant.tenant.id, &org, &user).await?;
    Ok(Json(MembershipView::from(&m)).into_response())
}

#[utoipa::path(
    patch, path = "/api/v1/organizations/{id}/members/{user_id}", tag = tags::ORGANIZATIONS,
    operation_id = "updateOrganizationMemberRoles",
    summary = "Change a member's roles",
    description = "Replaces the roles the member holds: 1 to 16 of `owner`, `admin` and \
        `member` (`400` naming `roles` otherwise). The same roles again change nothing. Unknown \
        members are refused (`400`).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("user_id" = String, Path, description = "The member's user id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    request_body(content = MemberPatch, content_type = "application/json"),
    responses((status = 200, description = "The membership as changed.", body = MembershipView)),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn change_member_roles(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path((id, user)): Path<(String, String)>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    let user = user_id(&user)?;
    let patch: MemberPatch = body(&bytes, "member")?;
    let m = organizations::change_member_roles(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &caller.reach,
        &org,
        &user,
        patch,
    )
    .await?;
    Ok(Json(MembershipView::from(&m)).into_response())
}

#[utoipa::path(
    delete, path = "/api/v1/organizations/{id}/members/{user_id}", tag = tags::ORGANIZATIONS,
    operation_id = "removeOrganizationMember",
    summary = "Remove a member",
    description = "Ends the person's membership of the organization (the person stays a user of \
        the tenant). A person who is not a member is not found.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("user_id" = String, Path, description = "The member's user id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    responses((status = 204, description = "Removed.")),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn remove_member(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path((id, user)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    let user = user_id(&user)?;
    organizations::remove_member(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &caller.reach,
        &org,
        &user,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
