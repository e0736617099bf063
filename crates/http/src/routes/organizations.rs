//! `/api/v1/organizations` (scopes `organizations:read|write`): the tenant's organizations and
//! their OpenAPI operations, declared together through `OpenApiRouter` — create, list, read,
//! update, delete, suspend, reactivate; the members (`organizations_members`); the claimed
//! domains (`organizations_domains`); the single sign-on connection (`organizations_sso`); and the organizations one person belongs to
//! (`/api/v1/tenant-users/{id}/organizations`). Thin handlers over `svc_manage::organizations`,
//! always within the token's own tenant: another tenant's organization or person, or a
//! malformed id, is simply not found.
//!
//! The API conventions (`crate::api::conventions`) as they apply here: lists page with
//! `limit`/`after` (and `order` for organizations); a created organization or membership answers
//! `201` with `Location` (replays of an idempotent create included); reading or changing an
//! organization answers its `ETag`, and every change of one (`PATCH`, `DELETE`, `suspend`,
//! `reactivate`) honours `If-Match`, the use case writing only at the revision it checked.
//! Bodies are read with the field path in every refusal (`metadata: invalid type: …`), and
//! unknown members are refused.

use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{
    ApiState, Authorized, OrgAuthorized, OrganizationsRead, OrganizationsWrite, create_idempotently,
};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use svc_domain::{Organization, OrganizationId, UserId};
use svc_manage::organizations::{
    self, NewOrganization, OrganizationPatch, OrganizationView, UserMembershipView,
};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
pub(super) const BASE: &str = "/api/v1/organizations";

/// The routes; the single sign-on ones only with `sso` (`[enterprise_sso]` on), the directory
/// groups' only with `scim` (`[scim]` on).
fn api(sso: bool, scim: bool) -> OpenApiRouter<ApiState> {
    use super::organizations_domains as domains;
    use super::organizations_groups as groups;
    use super::organizations_members as members;
    use super::organizations_sso as connection;
    let api = OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
        .routes(routes!(suspend))
        .routes(routes!(reactivate))
        .routes(routes!(members::add_member, members::list_members))
        .routes(routes!(
            members::get_member,
            members::change_member_roles,
            members::remove_member
        ))
        .routes(routes!(user_organizations))
        .routes(routes!(domains::add_domain, domains::list_domains))
        .routes(routes!(
            domains::get_domain,
            domains::update_domain,
            domains::remove_domain
        ))
        .routes(routes!(domains::verify_domain));
    let api = if scim {
        api.routes(routes!(groups::list_groups))
            .routes(routes!(groups::get_group))
            .routes(routes!(groups::set_group_roles))
    } else {
        api
    };
    if sso {
        api.routes(routes!(
            connection::put_sso,
            connection::get_sso,
            connection::remove_sso
        ))
    } else {
        api
    }
}

/// The organization routes (members included), state applied; the directory groups' with
/// `scim` (`[scim]` on).
pub fn router(state: ApiState, scim: bool) -> Router {
    api(state.manage.sso.is_some(), scim)
        .split_for_parts()
        .0
        .with_state(state)
}

/// The OpenAPI operations of these routes, single sign-on and directory groups included (a
/// deployment without them leaves those out of its document).
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api(true, true).into_openapi()
}

pub(super) fn organization_id(raw: &str) -> Result<OrganizationId, Problem> {
    OrganizationId::parse(raw).map_err(|_| Problem::not_found("no such organization"))
}

pub(super) fn user_id(raw: &str) -> Result<UserId, Problem> {
    UserId::parse(raw).map_err(|_| Problem::not_found("no such user"))
}

/// The JSON object body, or a 400 that names the member at fault (`name: invalid type: …`).
/// Any other JSON value is refused: serde would read an array positionally into the struct, so
/// `[]` would pass as an empty patch.
pub(super) fn body<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, Problem> {
    let parsed = Json::<T>::from_bytes(bytes)
        .map(|Json(value)| value)
        .map_err(|rejection| {
            let text = rejection.body_text();
            let detail = [
                "Failed to deserialize the JSON body into the target type: ",
                "Failed to parse the request body as JSON: ",
            ]
            .iter()
            .find_map(|prefix| text.strip_prefix(prefix))
            .unwrap_or(&text);
            Problem::bad_request(format!("invalid {what}: {detail}"))
        })?;
    if bytes.trim_ascii_start().first() == Some(&b'{') {
        Ok(parsed)
    } else {
        Err(Problem::bad_request(format!(
            "invalid {what}: expected a JSON object"
        )))
    }
}

/// `Location` of an organization.
fn location(id: &str) -> String {
    format!("{BASE}/{id}")
}

/// `200` with the organization and its `ETag`.
fn tagged(org: &Organization) -> Response {
    conventions::with_etag(
        Json(OrganizationView::from(org)).into_response(),
        org.updated_at,
    )
}

#[utoipa::path(
    post, path = "/api/v1/organizations", tag = tags::ORGANIZATIONS,
    operation_id = "createOrganization",
    summary = "Create an organization",
    description = "Creates an `active` organization (a customer company of the tenant). `slug` \
        is a lowercase DNS label unique in the tenant (`409` when taken; uppercase is refused, \
        not folded); `name` is 1 to 200 characters without control characters; `metadata` is a \
        free JSON object of at most 4096 bytes serialized and 5 levels deep (default `{}`). \
        Unknown members are refused (`400`), and every refusal names the member at fault.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`) instead of creating a second organization; the same key \
        with another body is a `409`.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "create-acme-eu-2026-11-24"),
    ),
    request_body(content = NewOrganization, content_type = "application/json"),
    responses(
        (status = 201, description = "The organization, created.", body = OrganizationView,
         headers(("Location" = String,
                  description = "The organization's URL: `/api/v1/organizations/{id}`.")),
         links(
            ("GetOrganization" = (operation_id = "getOrganization",
                                  parameters(("id" = "$response.body#/id")),
                                  description = "Read the organization created.")),
            ("UpdateOrganization" = (operation_id = "updateOrganization",
                                     parameters(("id" = "$response.body#/id")),
                                     description = "Change the organization created.")),
            ("DeleteOrganization" = (operation_id = "deleteOrganization",
                                     parameters(("id" = "$response.body#/id")),
                                     description = "Delete the organization created.")),
            ("AddMember" = (operation_id = "addOrganizationMember",
                            parameters(("id" = "$response.body#/id")),
                            description = "Add a member to the organization created.")),
            ("ListMembers" = (operation_id = "listOrganizationMembers",
                              parameters(("id" = "$response.body#/id")),
                              description = "List the members of the organization created.")),
         )),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<OrganizationsWrite>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let scope = caller
        .actor
        .idempotency_scope(Some(&caller.tenant.tenant.id));
    // The create runs in a future of its own: it borrows the request's parts.
    let (state, caller) = (&state, &caller);
    create_idempotently(
        &state.manage,
        &scope,
        &headers,
        (BASE, &bytes),
        |bytes| body::<NewOrganization>(bytes, "organization"),
        |input| async move {
            let org = organizations::create(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(OrganizationView::from(&org))
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// A page of organizations.
#[derive(Debug, Serialize, ToSchema)]
struct OrganizationList {
    /// The organizations of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<OrganizationView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/organizations", tag = tags::ORGANIZATIONS,
    operation_id = "listOrganizations",
    summary = "List organizations",
    description = "The tenant's organizations in creation order (oldest first; `order=desc` for \
        newest first), suspended ones included, a page at a time: pass the `next_cursor` of a \
        page as `after` to get the next one. Unknown query parameters are refused (`400`).",
    params(ListQuery),
    responses((status = 200, description = "One page of organizations.", body = OrganizationList)),
    security(("tenant_token" = ["organizations:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<OrganizationsRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(
        q.after.as_deref(),
        OrganizationId::parse,
        "not an organization id",
    )?;
    let (items, next) = organizations::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(OrganizationList {
        items: items.iter().map(OrganizationView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}", tag = tags::ORGANIZATIONS,
    operation_id = "getOrganization",
    summary = "Read an organization",
    description = "One organization of the tenant, in any status. The `ETag` names this \
        revision: send it as `If-Match` on a change to make sure nobody changed the organization \
        in between.",
    params(("id" = String, Path, description = "The organization's id.",
            example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    responses(
        (status = 200, description = "The organization.", body = OrganizationView,
         headers(("ETag" = String, description = "The organization's current revision (strong)."))),
    ),
    security(("tenant_token" = ["organizations:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = organization_id(&id)?;
    caller.within(&id)?;
    let org = organizations::get(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(tagged(&org))
}

#[utoipa::path(
    patch, path = "/api/v1/organizations/{id}", tag = tags::ORGANIZATIONS,
    operation_id = "updateOrganization",
    summary = "Change an organization",
    description = "Changes only the members present: `name`, `slug` (`409` when another \
        organization of the tenant has it) and `metadata`, which replaces the whole object \
        (`null` empties it). `name` and `slug` cannot be removed. The same rules as on create \
        apply; unknown members are refused (`400`). A body that changes nothing writes nothing.\n\n\
        With `If-Match`, the change applies only if the organization is still at one of the \
        given revisions (`412` otherwise); one changed by someone else while this request ran is \
        a `412` too, never a lost update.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = OrganizationPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The organization as changed.", body = OrganizationView,
         headers(("ETag" = String, description = "The organization's new revision."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = organization_id(&id)?;
    caller.within(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let patch: OrganizationPatch = body(&bytes, "organization")?;
    let org = organizations::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&org))
}

#[utoipa::path(
    delete, path = "/api/v1/organizations/{id}", tag = tags::ORGANIZATIONS,
    operation_id = "deleteOrganization",
    summary = "Delete an organization",
    description = "Deletes the organization and every membership of it, for good (the audit \
        log keeps its history). With `If-Match`, only if the organization is still at one of the \
        given revisions (`412` otherwise).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the deletion was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Deleted, with its memberships.")),
    security(("tenant_token" = ["organizations:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<OrganizationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = organization_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    organizations::delete(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    post, path = "/api/v1/organizations/{id}/suspend", tag = tags::ORGANIZATIONS,
    operation_id = "suspendOrganization",
    summary = "Suspend an organization",
    description = "Suspends the organization: nobody obtains tokens for it until it is \
        reactivated; its members and data stay. A suspended organization cannot be suspended \
        again (`409`). With `If-Match`, only if the organization is still at one of the given \
        revisions (`412` otherwise). No body.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the suspension was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses(
        (status = 200, description = "The organization, now `suspended`.", body = OrganizationView,
         headers(("ETag" = String, description = "The organization's new revision."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
async fn suspend(
    State(state): State<ApiState>,
    caller: Authorized<OrganizationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = organization_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let org = organizations::suspend(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    Ok(tagged(&org))
}

#[utoipa::path(
    post, path = "/api/v1/organizations/{id}/reactivate", tag = tags::ORGANIZATIONS,
    operation_id = "reactivateOrganization",
    summary = "Reactivate a suspended organization",
    description = "Lifts a suspension: the organization is `active` again. Only a suspended \
        organization can be reactivated (`409`). With `If-Match`, only if the organization is \
        still at one of the given revisions (`412` otherwise). No body.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the reactivation was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses(
        (status = 200, description = "The organization, `active`.", body = OrganizationView,
         headers(("ETag" = String, description = "The organization's new revision."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
async fn reactivate(
    State(state): State<ApiState>,
    caller: Authorized<OrganizationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = organization_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let org = organizations::reactivate(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    Ok(tagged(&org))
}

/// Every membership of one person.
#[derive(Debug, Serialize, ToSchema)]
struct UserOrganizationList {
    /// The person's memberships in organization-id order, each with its organization (at most
    /// 500: a person belongs to at most that many organizations).
    items: Vec<UserMembershipView>,
}

#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}/organizations", tag = tags::ORGANIZATIONS,
    operation_id = "listTenantUserOrganizations",
    summary = "List a user's organizations",
    description = "Every organization the user belongs to, with the roles held in each, in one \
        answer (a person belongs to at most 500 organizations). A user of another tenant, or an \
        unknown one, is not found.",
    params(("id" = String, Path, description = "The user's id.",
            example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")),
    responses(
        (status = 200, description = "The user's memberships.", body = UserOrganizationList),
    ),
    security(("tenant_token" = ["organizations:read"])),
)]
async fn user_organizations(
    State(state): State<ApiState>,
    caller: Authorized<OrganizationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let user = user_id(&id)?;
    let memberships =
        organizations::memberships_of_user(&state.manage, &caller.tenant.tenant.id, &user).await?;
    Ok(Json(UserOrganizationList {
        items: memberships
            .iter()
            .map(|(m, org)| UserMembershipView::new(m, org))
            .collect(),
    })
    .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation is tagged, named, secured with the tenant token and exactly the scope its
    /// handler's `Authorized<…>` demands, and each change of an organization declares
    /// `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let (r, w) = ("organizations:read", "organizations:write");
        let org = "/api/v1/organizations/{id}";
        let member = "/api/v1/organizations/{id}/members/{user_id}";
        let expected = [
            (BASE, "post", w, false),
            (BASE, "get", r, false),
            (org, "get", r, false),
            (org, "patch", w, true),
            (org, "delete", w, true),
            ("/api/v1/organizations/{id}/suspend", "post", w, true),
            ("/api/v1/organizations/{id}/reactivate", "post", w, true),
            ("/api/v1/organizations/{id}/members", "post", w, false),
            ("/api/v1/organizations/{id}/members", "get", r, false),
            (member, "get", r, false),
            (member, "patch", w, false),
            (member, "delete", w, false),
            ("/api/v1/tenant-users/{id}/organizations", "get", r, false),
            // The claimed domains (`organizations_domains`).
            ("/api/v1/organizations/{id}/domains", "post", w, false),
            ("/api/v1/organizations/{id}/domains", "get", r, false),
            (
                "/api/v1/organizations/{id}/domains/{domain_id}",
                "get",
                r,
                false,
            ),
            (
                "/api/v1/organizations/{id}/domains/{domain_id}",
                "patch",
                w,
                true,
            ),
            (
                "/api/v1/organizations/{id}/domains/{domain_id}",
                "delete",
                w,
                true,
            ),
            (
                "/api/v1/organizations/{id}/domains/{domain_id}/verify",
                "post",
                w,
                false,
            ),
            // The single sign-on connection (`organizations_sso`).
            ("/api/v1/organizations/{id}/sso", "put", w, false),
            ("/api/v1/organizations/{id}/sso", "get", r, false),
            ("/api/v1/organizations/{id}/sso", "delete", w, false),
            // The organization's directory groups (`organizations_groups`).
            ("/api/v1/organizations/{id}/scim/groups", "get", r, false),
            (
                "/api/v1/organizations/{id}/scim/groups/{group_id}",
                "get",
                r,
                false,
            ),
            (
                "/api/v1/organizations/{id}/scim/groups/{group_id}/roles",
                "put",
                w,
                false,
            ),
        ];
        let json = serde_json::to_value(operations()).unwrap();
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(path, method, scope, if_match)| {
                (path, method, scope, if_match, tags::ORGANIZATIONS)
            })
            .collect();
        crate::openapi::assert_operations(&json, &expected);
    }

    /// The links of a created organization name operations of this module that take its id.
    #[test]
    fn links_from_a_created_organization_name_real_operations() {
        let json = serde_json::to_value(operations()).unwrap();
        let ids: Vec<&str> = json["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .filter_map(|op| op["operationId"].as_str())
            .collect();
        let links = json["paths"][BASE]["post"]["responses"]["201"]["links"]
            .as_object()
            .unwrap();
        assert_eq!(links.len(), 5);
        for link in links.values() {
            assert!(
                ids.contains(&link["operationId"].as_str().unwrap()),
                "{link}"
            );
            assert_eq!(link["parameters"]["id"], "$response.body#/id");
        }
    }

    /// The views' schemas list every member the server sends, as required.
    #[test]
    fn view_schemas_require_every_member_sent() {
        use svc_domain::{Membership, OrgSlug, OrgStatus, RoleKey, TenantId};
        let json = serde_json::to_value(operations()).unwrap();
        let schemas = &json["components"]["schemas"];
        let required = |name: &str| -> Vec<String> {
            let mut r: Vec<String> = schemas[name]["required"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: {}", schemas[name]))
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            r.sort();
            r
        };
        let sent = |value: serde_json::Value| -> Vec<String> {
            let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys
        };
        let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let org = Organization {
            id: OrganizationId::parse("org_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            tenant_id: TenantId::parse("ten_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            slug: OrgSlug::parse("acme").unwrap(),
            name: "Acme".into(),
            metadata: serde_json::Map::new(),
            status: OrgStatus::Active,
            created_at: at,
            updated_at: at,
        };
        let membership = Membership {
            tenant_id: org.tenant_id.clone(),
            organization_id: org.id.clone(),
            user_id: UserId::parse("usr_01jd2m8q3v7x9k4n6p0r5t2w8y").unwrap(),
            roles: [RoleKey::parse("member").unwrap()].into(),
            created_at: at,
            updated_at: at,
        };
        let view = serde_json::to_value(OrganizationView::from(&org)).unwrap();
        assert_eq!(required("OrganizationView"), sent(view));
        let view = serde_json::to_value(organizations::MembershipView::from(&membership)).unwrap();
        assert_eq!(required("MembershipView"), sent(view));
        let view = serde_json::to_value(UserMembershipView::new(&membership, &org)).unwrap();
        assert_eq!(required("UserMembershipView"), sent(view.clone()));
        assert_eq!(
            required("OrganizationSummary"),
            sent(view["organization"].clone())
        );
        assert_eq!(required("OrganizationList"), ["items", "next_cursor"]);
        assert_eq!(required("MemberList"), ["items", "next_cursor"]);
        assert_eq!(required("UserOrganizationList"), ["items"]);
        assert_eq!(
            schemas["OrganizationStatus"]["enum"],
            serde_json::json!(["active", "suspended"])
        );
        // The built-in roles, or a custom organization role's key.
        assert_eq!(
            schemas["OrganizationRole"]["examples"],
            serde_json::json!(["owner", "admin", "member"])
        );
        assert_eq!(
            schemas["OrganizationRole"]["pattern"],
            svc_manage::roles::ROLE_KEY_PATTERN
        );
        for body in ["NewMember", "MemberPatch"] {
            assert_eq!(
                schemas[body]["properties"]["roles"]["items"]["$ref"],
                "#/components/schemas/OrganizationRole",
                "{body}"
            );
        }
        for name in [
            "NewOrganization",
            "OrganizationPatch",
            "NewMember",
            "MemberPatch",
        ] {
            assert!(schemas[name]["example"].is_object(), "{name}");
        }
        assert_eq!(required("NewOrganization"), ["name", "slug"]);
        assert_eq!(required("NewMember"), ["user_id"]);
        assert_eq!(required("MemberPatch"), ["roles"]);
    }

    /// A refused body names the member at fault, wrong types and unknown members alike.
    #[test]
    fn refused_bodies_name_the_member() {
        let detail = |raw: &str| {
            body::<NewOrganization>(raw.as_bytes(), "organization")
                .unwrap_err()
                .detail()
                .to_owned()
        };
        let wrong = detail(r#"{"name": 5, "slug": "a"}"#);
        assert!(wrong.starts_with("invalid organization: name: "), "{wrong}");
        let meta = detail(r#"{"name": "A", "slug": "a", "metadata": []}"#);
        assert!(meta.contains("metadata: "), "{meta}");
        let unknown = detail(r#"{"name": "A", "slug": "a", "owner": 1}"#);
        assert!(unknown.contains("unknown field `owner`"), "{unknown}");
        let broken = detail(r#"{"name": "#);
        assert!(broken.starts_with("invalid organization: "), "{broken}");
        assert!(body::<NewOrganization>(br#"{"name": "A", "slug": "a"}"#, "organization").is_ok());
    }
}
