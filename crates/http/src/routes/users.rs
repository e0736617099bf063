//! `/api/v1/tenant-users` (scopes `users:read|write`): the tenant-user routes and their OpenAPI
//! operations, declared together through `OpenApiRouter` — create, list, read, update, remove,
//! suspend, reactivate, a user's sessions (list, revoke one), login history and second factors
//! (list, reset). Thin handlers over
//! `svc_manage::users`, always within the token's own tenant: another tenant's user id, or a
//! malformed one, is simply not found.
//!
//! The API conventions (`crate::api::conventions`) as they apply here: lists page with
//! `limit`/`after`; a created user answers `201` with `Location` (replays of an idempotent create
//! included); reading or changing one user answers its `ETag`, and every change of a user
//! (`PATCH`, `DELETE`, `suspend`, `reactivate`) honours `If-Match`, the use case writing only at
//! the revision it checked. Revoking one session changes the session, not the user, so it takes
//! no `If-Match`.

use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{ApiState, Authorized, UsersRead, UsersWrite, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use svc_domain::{Email, SessionId, User, UserId, UserStatus};
use svc_manage::users::{self, NewUser, SessionView, UserPatch, UserStatusSchema, UserView};
use svc_store::UserFilter;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
const BASE: &str = "/api/v1/tenant-users";

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
        .routes(routes!(suspend))
        .routes(routes!(reactivate))
        .routes(routes!(sessions))
        .routes(routes!(super::users_history::login_history))
        .routes(routes!(
            super::users_factors::second_factors,
            super::users_factors::reset_second_factors
        ))
        .routes(routes!(revoke_session))
        .routes(routes!(
            super::users_roles::roles,
            super::users_roles::set_roles
        ))
}

/// The tenant user routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn user_id(raw: &str) -> Result<UserId, Problem> {
    UserId::parse(raw).map_err(|_| Problem::not_found("no such user"))
}

fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(bytes).map_err(|e| Problem::bad_request(format!("invalid user: {e}")))
}

/// `Location` of a user.
fn location(id: &str) -> String {
    format!("{BASE}/{id}")
}

/// `200` with the user and its `ETag`.
fn tagged(user: &User) -> Response {
    conventions::with_etag(Json(UserView::from(user)).into_response(), user.updated_at)
}

#[utoipa::path(
    post, path = "/api/v1/tenant-users", tag = tags::USERS,
    operation_id = "createTenantUser",
    summary = "Create a user",
    description = "Creates a person who signs in to the tenant, in one of three ways:\n\n\
        - with `password`: the user is `active` (the tenant's password policy and the \
          breached-password check apply);\n\
        - with `invite: true`: the user is `invited` and mailed a link to choose a password \
          (the mail leaves after the answer; a delivery failure does not undo the user);\n\
        - with neither: the user is `pre_provisioned` and claims the account through a password \
          reset.\n\n\
        Both `password` and `invite` is refused. The address must not be held by another user of \
        the tenant that is not removed (`409`). Unknown members are refused (`400`).\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`) instead of creating a second user; the same key with \
        another body is a `409`.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "create-ada-2026-11-22"),
    ),
    request_body(content = NewUser, content_type = "application/json"),
    responses(
        (status = 201, description = "The user, created.", body = UserView,
         headers(("Location" = String, description = "The user's URL: `/api/v1/tenant-users/{id}`.")),
         links(
            ("GetUser" = (operation_id = "getTenantUser",
                          parameters(("id" = "$response.body#/id")),
                          description = "Read the user created.")),
            ("UpdateUser" = (operation_id = "updateTenantUser",
                             parameters(("id" = "$response.body#/id")),
                             description = "Change the user created.")),
            ("RemoveUser" = (operation_id = "removeTenantUser",
                             parameters(("id" = "$response.body#/id")),
                             description = "Remove the user created.")),
            ("SuspendUser" = (operation_id = "suspendTenantUser",
                              parameters(("id" = "$response.body#/id")),
                              description = "Suspend the user created.")),
            ("ReactivateUser" = (operation_id = "reactivateTenantUser",
                                 parameters(("id" = "$response.body#/id")),
                                 description = "Reactivate the user created.")),
            ("ListSessions" = (operation_id = "listTenantUserSessions",
                               parameters(("id" = "$response.body#/id")),
                               description = "List the sessions of the user created.")),
         )),
    ),
    security(("tenant_token" = ["users:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
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
        body::<NewUser>,
        |input| async move {
            let user = users::create(
                &state.manage,
                &caller.tenant.tenant,
                &caller.tenant.issuer,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(UserView::from(&user))
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// Query of `GET /api/v1/tenant-users`: the filters, and the page.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct UsersQuery {
    /// Only users in this state.
    #[param(value_type = Option<UserStatusSchema>)]
    status: Option<String>,
    /// Only the user holding this address (normalised before matching, so the case does not
    /// matter; removed users included).
    #[param(format = Email, example = "ada@example.com")]
    email: Option<String>,
    /// Return users after this cursor, in the list's order: the `next_cursor` of the previous
    /// page.
    #[param(max_length = 64)]
    after: Option<String>,
    /// Page size, 1..=200 (default 50; larger values are clamped).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// `asc` (oldest first) or `desc` (newest first); default `asc`.
    #[param(inline)]
    order: Option<conventions::SortOrder>,
}

/// A page of users.
#[derive(Debug, Serialize, ToSchema)]
struct UserList {
    /// The users of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<UserView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/tenant-users", tag = tags::USERS,
    operation_id = "listTenantUsers",
    summary = "List users",
    description = "The tenant's users in creation order (oldest first; `order=desc` for newest first), removed ones included, a page \
        at a time: pass the `next_cursor` of a page as `after` to get the next one. `status` and \
        `email` narrow the list (both at once: users matching both). Unknown query parameters \
        are refused (`400`).",
    params(UsersQuery),
    responses((status = 200, description = "One page of users.", body = UserList)),
    security(("tenant_token" = ["users:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    query: Result<Query<UsersQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let status = q
        .status
        .as_deref()
        .map(|s| {
            UserStatus::parse(s).ok_or_else(|| {
                Problem::bad_request(
                    "status: one of invited, pre_provisioned, active, suspended, removed",
                )
            })
        })
        .transpose()?;
    let email = q
        .email
        .as_deref()
        .map(|e| Email::parse(e).map_err(|e| Problem::bad_request(format!("email: {e}"))))
        .transpose()?;
    let after = conventions::after(q.after.as_deref(), UserId::parse, "not a user id")?;
    let filter = UserFilter { status, email };
    let (items, next) = users::list(
        &state.manage,
        &caller.tenant.tenant.id,
        &filter,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(UserList {
        items: items.iter().map(UserView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}", tag = tags::USERS,
    operation_id = "getTenantUser",
    summary = "Read a user",
    description = "One user of the tenant, removed users included (they stay as tombstones). \
        The `ETag` names this revision: send it as `If-Match` on a change to make sure nobody \
        changed the user in between.",
    params(("id" = String, Path, description = "The user's id.",
            example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")),
    responses(
        (status = 200, description = "The user.", body = UserView,
         headers(("ETag" = String, description = "The user's current revision (strong)."))),
    ),
    security(("tenant_token" = ["users:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let user = users::get(&state.manage, &caller.tenant.tenant.id, &user_id(&id)?).await?;
    Ok(tagged(&user))
}

#[utoipa::path(
    patch, path = "/api/v1/tenant-users/{id}", tag = tags::USERS,
    operation_id = "updateTenantUser",
    summary = "Change a user",
    description = "Changes only the members present; `null` clears a name. A new address starts \
        unverified (unless `email_verified` comes with it) and every link mailed to the old one \
        stops working; an invited user is invited again at the new address. A new password ends \
        the user's sessions and refresh tokens and activates an invited or pre-provisioned user. \
        A removed user cannot be changed (`409`), nor can an address held by another user be \
        taken (`409`). A body that changes nothing writes nothing.\n\n\
        With `If-Match`, the change applies only if the user is still at one of the given \
        revisions (`412` otherwise); a user changed by someone else while this request ran is a \
        `412` too, never a lost update.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = UserPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The user as changed.", body = UserView,
         headers(("ETag" = String, description = "The user's new revision."))),
    ),
    security(("tenant_token" = ["users:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let patch: UserPatch = body(&bytes)?;
    let user = users::update(
        &state.manage,
        &caller.tenant.tenant,
        &caller.tenant.issuer,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&user))
}

#[utoipa::path(
    delete, path = "/api/v1/tenant-users/{id}", tag = tags::USERS,
    operation_id = "removeTenantUser",
    summary = "Remove a user",
    description = "Removes the user for good: their sessions, refresh tokens and mailed links end \
        at once. The record stays as a tombstone (status `removed`, still readable) so its id is \
        never reused; the address is free for a new user. Removing a removed user is a `409`. \
        With `If-Match`, only if the user is still at one of the given revisions (`412` \
        otherwise).",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the removal was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Removed.")),
    security(("tenant_token" = ["users:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let tenant = &caller.tenant.tenant.id;
    users::remove(
        &state.manage,
        tenant,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    post, path = "/api/v1/tenant-users/{id}/suspend", tag = tags::USERS,
    operation_id = "suspendTenantUser",
    summary = "Suspend a user",
    description = "Blocks the user: they cannot sign in, and their sessions and refresh tokens \
        end at once. A suspended or removed user cannot be suspended (`409`). With `If-Match`, \
        only if the user is still at one of the given revisions (`412` otherwise). No body.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the suspension was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses(
        (status = 200, description = "The user, now `suspended`.", body = UserView,
         headers(("ETag" = String, description = "The user's new revision."))),
    ),
    security(("tenant_token" = ["users:write"])),
)]
async fn suspend(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let tenant = &caller.tenant.tenant.id;
    let user = users::suspend(
        &state.manage,
        tenant,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    Ok(tagged(&user))
}

#[utoipa::path(
    post, path = "/api/v1/tenant-users/{id}/reactivate", tag = tags::USERS,
    operation_id = "reactivateTenantUser",
    summary = "Reactivate a suspended user",
    description = "Lifts a suspension: a user with a password becomes `active`, one without goes \
        back to `pre_provisioned` (claimable through a password reset). Nothing they were \
        granted comes back; they sign in again. Only a suspended user can be reactivated \
        (`409`). With `If-Match`, only if the user is still at one of the given revisions \
        (`412` otherwise). No body.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the reactivation was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses(
        (status = 200, description = "The user, `active` or `pre_provisioned`.", body = UserView,
         headers(("ETag" = String, description = "The user's new revision."))),
    ),
    security(("tenant_token" = ["users:write"])),
)]
async fn reactivate(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let tenant = &caller.tenant.tenant.id;
    let user = users::reactivate(
        &state.manage,
        tenant,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    Ok(tagged(&user))
}

/// A page of a user's live sessions.
#[derive(Debug, Serialize, ToSchema)]
struct SessionList {
    /// The sessions of this page, newest first unless `order=asc`.
    items: Vec<SessionView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}/sessions", tag = tags::USERS,
    operation_id = "listTenantUserSessions",
    summary = "List a user's sessions",
    description = "The user's live browser sessions (not revoked, not expired), newest first (`order=asc` for oldest first), a \
        page at a time: pass the `next_cursor` of a page as `after` to get the next one. Unknown \
        query parameters are refused (`400`).",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ListQuery,
    ),
    responses((status = 200, description = "One page of live sessions.", body = SessionList)),
    security(("tenant_token" = ["users:read"])),
)]
async fn sessions(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), SessionId::parse, "not a session id")?;
    let tenant = &caller.tenant.tenant.id;
    let (sessions, next) = users::list_sessions(
        &state.manage,
        tenant,
        &id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(SessionList {
        items: sessions.iter().map(SessionView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    delete, path = "/api/v1/tenant-users/{id}/sessions/{session_id}", tag = tags::USERS,
    operation_id = "revokeTenantUserSession",
    summary = "Revoke one of a user's sessions",
    description = "Signs the user out of one browser (a lost device, say); their other sessions \
        go on. A session that is not a live session of this user is not found.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ("session_id" = String, Path, description = "The session's id.",
         example = "ses_01jd2mb7c4e6g8j0k2m4p6r8t0"),
    ),
    responses((status = 204, description = "Revoked.")),
    security(("tenant_token" = ["users:write"])),
)]
async fn revoke_session(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path((id, session_id)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let tenant = &caller.tenant.tenant.id;
    let id = user_id(&id)?;
    let session =
        SessionId::parse(&session_id).map_err(|_| Problem::not_found("no such session"))?;
    users::revoke_session(
        &state.manage,
        tenant,
        &caller.actor,
        &caller.meta,
        &id,
        &session,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation is tagged, named, secured with the tenant token and exactly the scope its
    /// handler's `Authorized<…>` demands, and each change of a user declares `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let doc = operations();
        let expected = [
            ("/api/v1/tenant-users", "post", "users:write", false),
            ("/api/v1/tenant-users", "get", "users:read", false),
            ("/api/v1/tenant-users/{id}", "get", "users:read", false),
            ("/api/v1/tenant-users/{id}", "patch", "users:write", true),
            ("/api/v1/tenant-users/{id}", "delete", "users:write", true),
            (
                "/api/v1/tenant-users/{id}/suspend",
                "post",
                "users:write",
                true,
            ),
            (
                "/api/v1/tenant-users/{id}/reactivate",
                "post",
                "users:write",
                true,
            ),
            (
                "/api/v1/tenant-users/{id}/sessions",
                "get",
                "users:read",
                false,
            ),
            (
                "/api/v1/tenant-users/{id}/login-history",
                "get",
                "users:read",
                false,
            ),
            (
                "/api/v1/tenant-users/{id}/sessions/{session_id}",
                "delete",
                "users:write",
                false,
            ),
            (
                "/api/v1/tenant-users/{id}/second-factors",
                "get",
                "users:read",
                false,
            ),
            (
                "/api/v1/tenant-users/{id}/second-factors",
                "delete",
                "users:write",
                false,
            ),
            (
                "/api/v1/tenant-users/{id}/roles",
                "get",
                "users:read",
                false,
            ),
            (
                "/api/v1/tenant-users/{id}/roles",
                "put",
                "users:write",
                false,
            ),
        ];
        let json = serde_json::to_value(&doc).unwrap();
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(path, method, scope, if_match)| (path, method, scope, if_match, tags::USERS))
            .collect();
        crate::openapi::assert_operations(&json, &expected);
    }

    /// The links of a created user name operations of this module that take its id.
    #[test]
    fn links_from_a_created_user_name_real_operations() {
        let json = serde_json::to_value(operations()).unwrap();
        let ids: Vec<&str> = json["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .filter_map(|op| op["operationId"].as_str())
            .collect();
        let links = json["paths"]["/api/v1/tenant-users"]["post"]["responses"]["201"]["links"]
            .as_object()
            .unwrap();
        assert_eq!(links.len(), 6);
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
        let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let user = UserView {
            id: "usr_1".into(),
            email: "a@b.c".into(),
            email_verified: false,
            name: None,
            given_name: None,
            family_name: None,
            status: UserStatus::Active,
            has_password: false,
            created_at: at,
            updated_at: at,
            last_sign_in_at: None,
        };
        let mut sent: Vec<String> = serde_json::to_value(&user)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        sent.sort();
        assert_eq!(required("UserView"), sent);
        assert_eq!(required("UserList"), ["items", "next_cursor"]);
        assert_eq!(required("SessionList"), ["items", "next_cursor"]);
        assert_eq!(
            schemas["UserStatus"]["enum"],
            serde_json::json!([
                "invited",
                "pre_provisioned",
                "active",
                "suspended",
                "removed"
            ])
        );
        assert!(schemas["NewUser"]["example"].is_object());
        assert!(schemas["UserPatch"]["example"].is_object());
    }
}
