//! `/api/v1/roles` (scopes `policies:read|write`): the tenant's roles and the permissions they
//! hold, with their OpenAPI operations, declared together through `OpenApiRouter` — list, read,
//! create, change, delete; and the roles of applications (`application_roles`, scopes
//! `applications:read|write`). Thin handlers over `svc_manage::roles`, always within the token's
//! own tenant: another tenant's role or application, or a malformed key or id, is not found.
//!
//! The API conventions as they apply here: the roles are listed whole (a tenant has the four
//! built-in roles and at most 100 custom ones), under `data`; a created role answers `201` with
//! `Location` (replays of an idempotent create included); reading or changing a custom role
//! answers its `ETag`, and every change of one honours `If-Match`. Built-in roles have no
//! revision and so no `ETag`. Bodies are read with the field path in every refusal, and unknown
//! members are refused.

use super::organizations::body;
use crate::Problem;
use crate::api::conventions;
use crate::api::{ApiState, Authorized, PoliciesRead, PoliciesWrite, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_manage::roles::{self, NewRole, RolePatch, RoleView};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
pub(super) const BASE: &str = "/api/v1/roles";

fn api() -> OpenApiRouter<ApiState> {
    use super::application_roles as applications;
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
        .routes(routes!(
            applications::application_roles,
            applications::set_application_roles
        ))
}

/// The role routes (application roles included), state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// `Location` of a role.
fn location(key: &str) -> String {
    format!("{BASE}/{key}")
}

/// `200` with the role, and the `ETag` of a custom role.
fn tagged(role: &RoleView) -> Response {
    let response = Json(role).into_response();
    match role.updated_at {
        Some(at) => conventions::with_etag(response, at),
        None => response,
    }
}

#[utoipa::path(
    post, path = "/api/v1/roles", tag = tags::ROLES,
    operation_id = "createRole",
    summary = "Create a custom role",
    description = "Creates a custom role of `kind` `tenant` (held by people in the whole tenant, \
        and by applications) or `organization` (held by members in one organization). `key` is \
        1 to 64 lowercase letters, digits, `_`, `-` or `.`, unique in the tenant across both \
        kinds; a built-in role's key (`tenant_admin`, `owner`, `admin`, `member`) is taken in \
        every tenant, so it is a `409` like a key another custom role has. `description` is at \
        most 256 characters without control characters (default empty). `permissions` names at \
        most 100 permissions, each by the identifier of an API resource of the tenant and a \
        permission that resource defines (`400` naming the unknown identifier or permission); \
        repeats collapse. A tenant has at most 100 custom roles (`409` beyond). Unknown members \
        are refused (`400`), and every refusal names the member at fault.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`) instead of creating the role again; the same key with \
        another body is a `409`.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "create-billing-viewer-2026-11-24"),
    ),
    request_body(content = NewRole, content_type = "application/json"),
    responses(
        (status = 201, description = "The role, created.", body = RoleView,
         headers(("Location" = String, description = "The role's URL: `/api/v1/roles/{key}`.")),
         links(
            ("GetRole" = (operation_id = "getRole",
                          parameters(("key" = "$response.body#/key")),
                          description = "Read the role created.")),
            ("UpdateRole" = (operation_id = "updateRole",
                             parameters(("key" = "$response.body#/key")),
                             description = "Change the role created.")),
            ("DeleteRole" = (operation_id = "deleteRole",
                             parameters(("key" = "$response.body#/key")),
                             description = "Delete the role created.")),
         )),
    ),
    security(("tenant_token" = ["policies:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
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
        |bytes| body::<NewRole>(bytes, "role"),
        |input| async move {
            let role = roles::create(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(role)
        },
        |body| body["key"].as_str().map(location),
    )
    .await
}

/// Every role of the tenant.
#[derive(Debug, Serialize, ToSchema)]
struct RoleList {
    /// The built-in roles (`tenant_admin`, `owner`, `admin`, `member`), then the custom ones in
    /// key order.
    data: Vec<RoleView>,
}

#[utoipa::path(
    get, path = "/api/v1/roles", tag = tags::ROLES,
    operation_id = "listRoles",
    summary = "List roles",
    description = "Every role of the tenant in one answer: the built-in roles first \
        (`tenant_admin`, then the organization roles `owner`, `admin` and `member`), then the \
        custom ones in key order (a tenant has at most 100). Each comes with the permissions it \
        holds, sorted by resource identifier, then name; `tenant_admin` holds the management \
        API's scopes, on the resource `{issuer}/api/v1`, which is no stored API resource \
        (`resource_id` is `null`).",
    responses((status = 200, description = "The tenant's roles.", body = RoleList)),
    security(("tenant_token" = ["policies:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesRead>,
) -> Result<Response, Problem> {
    let data = roles::list(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.tenant.issuer,
    )
    .await?;
    Ok(Json(RoleList { data }).into_response())
}

#[utoipa::path(
    get, path = "/api/v1/roles/{key}", tag = tags::ROLES,
    operation_id = "getRole",
    summary = "Read a role",
    description = "One role of the tenant, built-in or custom, with the permissions it holds. \
        The `ETag` of a custom role names this revision: send it as `If-Match` on a change to \
        make sure nobody changed the role in between. Built-in roles have no `ETag`.",
    params(("key" = String, Path, description = "The role's key.", example = "billing_viewer")),
    responses(
        (status = 200, description = "The role.", body = RoleView,
         headers(("ETag" = String,
                  description = "A custom role's current revision (strong); absent for built-in \
                                 roles."))),
    ),
    security(("tenant_token" = ["policies:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesRead>,
    Path(key): Path<String>,
) -> Result<Response, Problem> {
    let role = roles::get(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.tenant.issuer,
        &key,
    )
    .await?;
    Ok(tagged(&role))
}

#[utoipa::path(
    patch, path = "/api/v1/roles/{key}", tag = tags::ROLES,
    operation_id = "updateRole",
    summary = "Change a role",
    description = "Changes only the members present: a custom role's `description` (`\"\"` \
        empties it) and `permissions`, which replaces the whole set (`[]` takes every permission \
        away), with the rules of create. A body that changes nothing writes nothing. The key \
        and the kind never change.\n\n\
        Of the built-in organization roles `owner`, `admin` and `member`, only `permissions` \
        change (`description` is a `400`); `tenant_admin` holds the management API's scopes and \
        cannot be changed (`400`).\n\n\
        With `If-Match`, a custom role changes only if it is still at one of the given revisions \
        (`412` otherwise); one changed by someone else while this request ran is a `412` too, \
        never a lost update. A built-in role has no revision to check: it is one fixed \
        description and one set of permissions replaced whole, so there is nothing to be stale \
        about beyond the set sent; `If-Match: *` holds for it and a listed tag does not (`412`).",
    params(
        ("key" = String, Path, description = "The role's key.", example = "billing_viewer"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = RolePatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The role as changed.", body = RoleView,
         headers(("ETag" = String,
                  description = "A custom role's new revision; absent for built-in roles."))),
    ),
    security(("tenant_token" = ["policies:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
    Path(key): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let precondition = conventions::precondition(&headers)?;
    let patch: RolePatch = body(&bytes, "role")?;
    let role = roles::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.tenant.issuer,
        &caller.actor,
        &caller.meta,
        &key,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&role))
}

#[utoipa::path(
    delete, path = "/api/v1/roles/{key}", tag = tags::ROLES,
    operation_id = "deleteRole",
    summary = "Delete a custom role",
    description = "Deletes a custom role and the permissions it holds, for good (the audit log \
        keeps its history). Built-in roles cannot be deleted (`400`). While anyone holds the \
        role (a person, an organization member or an application) it is a `409` saying how many \
        do: take the role away from them first. With `If-Match`, only if the role is still at \
        one of the given revisions (`412` otherwise).",
    params(
        ("key" = String, Path, description = "The role's key.", example = "billing_viewer"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the deletion was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Deleted, with its permissions.")),
    security(("tenant_token" = ["policies:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let precondition = conventions::precondition(&headers)?;
    roles::delete(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.tenant.issuer,
        &caller.actor,
        &caller.meta,
        &key,
        &precondition,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every operation is tagged, named, secured with the tenant token and exactly the scope its
    /// handler's `Authorized<…>` demands, and each change of a role declares `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let (r, w) = ("policies:read", "policies:write");
        let role = "/api/v1/roles/{key}";
        let app = "/api/v1/applications/{id}/roles";
        let expected = [
            (BASE, "post", w, false, tags::ROLES),
            (BASE, "get", r, false, tags::ROLES),
            (role, "get", r, false, tags::ROLES),
            (role, "patch", w, true, tags::ROLES),
            (role, "delete", w, true, tags::ROLES),
            (app, "get", "applications:read", false, tags::APPLICATIONS),
            (app, "put", "applications:write", false, tags::APPLICATIONS),
        ];
        let json = serde_json::to_value(operations()).unwrap();
        crate::openapi::assert_operations(&json, &expected);
        let links = json["paths"][BASE]["post"]["responses"]["201"]["links"]
            .as_object()
            .unwrap();
        assert_eq!(links.len(), 3);
        for link in links.values() {
            assert_eq!(link["parameters"]["key"], "$response.body#/key");
        }
    }

    /// The views' schemas list every member the server sends, as required, and the bodies'
    /// schemas say what is required of a caller.
    #[test]
    fn schemas_require_every_member_sent() {
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
        let view = RoleView {
            key: "billing".into(),
            kind: svc_domain::RoleKind::Tenant,
            built_in: false,
            description: String::new(),
            permissions: vec![roles::RolePermissionView {
                resource: "https://api.example".into(),
                resource_id: None,
                name: "a:b".into(),
            }],
            created_at: Some(at),
            updated_at: None,
        };
        let sent = serde_json::to_value(&view).unwrap();
        let mut keys: Vec<String> = sent.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(required("RoleView"), keys);
        let mut keys: Vec<String> = sent["permissions"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        assert_eq!(required("RolePermissionView"), keys);
        assert_eq!(sent["updated_at"], serde_json::Value::Null);
        assert_eq!(required("RoleList"), ["data"]);
        assert_eq!(required("ApplicationRolesView"), ["roles"]);
        assert_eq!(required("NewRole"), ["key", "kind"]);
        assert_eq!(required("RolePermissionInput"), ["name", "resource"]);
        assert_eq!(required("ApplicationRolesInput"), ["roles"]);
        assert_eq!(
            schemas["RoleKind"]["enum"],
            json!(["tenant", "organization"])
        );
        for name in ["NewRole", "RolePatch", "ApplicationRolesInput", "RoleView"] {
            assert!(schemas[name]["example"].is_object(), "{name}");
        }
    }

    /// A refused body names the member at fault, wrong types and unknown members alike.
    #[test]
    fn refused_bodies_name_the_member() {
        let detail = |raw: &str| {
            body::<NewRole>(raw.as_bytes(), "role")
                .unwrap_err()
                .detail()
                .to_owned()
        };
        let wrong = detail(r#"{"key": 5, "kind": "tenant"}"#);
        assert!(wrong.starts_with("invalid role: key: "), "{wrong}");
        let nested = detail(r#"{"key": "a", "kind": "tenant", "permissions": [{"name": 1}]}"#);
        assert!(nested.contains("permissions[0].name"), "{nested}");
        let unknown = detail(r#"{"key": "a", "kind": "tenant", "built_in": true}"#);
        assert!(unknown.contains("unknown field `built_in`"), "{unknown}");
        assert!(body::<NewRole>(br#"{"key": "a", "kind": "tenant"}"#, "role").is_ok());
        for array in [&b"[]"[..], br#"["a", "tenant"]"#] {
            let problem = body::<NewRole>(array, "role").unwrap_err();
            assert!(
                problem.detail().starts_with("invalid role: "),
                "{problem:?}"
            );
        }
        assert!(body::<RolePatch>(b"[]", "role").is_err());
        assert!(body::<RolePatch>(b"{}", "role").is_ok());
    }
}
