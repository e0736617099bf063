//! `/api/v1/api-resources` (scopes `applications:read|write`: an API resource is part of
//! registering the applications that call it): the APIs a tenant protects, with the permissions
//! each defines, and their OpenAPI operations, declared together through `OpenApiRouter` —
//! create, list, read, update, delete. Thin handlers over `svc_manage::api_resources`, always
//! within the token's own tenant: another tenant's resource, or a malformed id, is simply not
//! found.
//!
//! The API conventions (`crate::api::conventions`) as they apply here: the list pages with
//! `limit`/`after`/`order`; a created resource answers `201` with `Location` (replays of an
//! idempotent create included); reading or changing a resource answers its `ETag`, and every
//! change (`PATCH`, `DELETE`) honours `If-Match`, the use case writing only at the revision it
//! checked. Bodies are read with the field path in every refusal, and unknown members are
//! refused.

use super::organizations::body;
use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{ApiState, ApplicationsRead, ApplicationsWrite, Authorized, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_domain::{ApiResource, ApiResourceId};
use svc_manage::api_resources::{self, ApiResourcePatch, ApiResourceView, NewApiResource};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
const BASE: &str = "/api/v1/api-resources";

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
}

/// The API resource routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn resource_id(raw: &str) -> Result<ApiResourceId, Problem> {
    ApiResourceId::parse(raw).map_err(|_| Problem::not_found("no such API resource"))
}

/// `Location` of an API resource.
fn location(id: &str) -> String {
    format!("{BASE}/{id}")
}

/// `200` with the API resource and its `ETag`.
fn tagged(resource: &ApiResource) -> Response {
    conventions::with_etag(
        Json(ApiResourceView::from(resource)).into_response(),
        resource.updated_at,
    )
}

#[utoipa::path(
    post, path = "/api/v1/api-resources", tag = tags::API_RESOURCES,
    operation_id = "createApiResource",
    summary = "Register an API resource",
    description = "Registers an API the tenant protects. `identifier` is the audience of the \
        tokens issued for it (RFC 8707 `resource`): an absolute URI without fragment of at most \
        2048 characters, kept exactly as sent, unique in the tenant (`409` when taken) and \
        never changed afterwards. `name` is 1 to 128 characters without control characters. \
        `permissions` (default none) lists at most 100 permissions, each a scope token \
        `<resource>:<action>` (printable ASCII without spaces, quotes or backslashes, at most \
        128 characters, never an OpenID Connect scope) named once, with an optional \
        `description` of at most 256 characters. A tenant registers at most 100 API resources \
        (`409` beyond). Unknown members are refused (`400`), and every refusal names the member \
        at fault.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`) instead of registering a second resource; the same key \
        with another body is a `409`.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "create-invoices-api-2026-11-24"),
    ),
    request_body(content = NewApiResource, content_type = "application/json"),
    responses(
        (status = 201, description = "The API resource, registered.", body = ApiResourceView,
         headers(("Location" = String,
                  description = "The resource's URL: `/api/v1/api-resources/{id}`.")),
         links(
            ("GetApiResource" = (operation_id = "getApiResource",
                                 parameters(("id" = "$response.body#/id")),
                                 description = "Read the API resource registered.")),
            ("UpdateApiResource" = (operation_id = "updateApiResource",
                                    parameters(("id" = "$response.body#/id")),
                                    description = "Change the API resource registered.")),
            ("DeleteApiResource" = (operation_id = "deleteApiResource",
                                    parameters(("id" = "$response.body#/id")),
                                    description = "Delete the API resource registered.")),
         )),
    ),
    security(("tenant_token" = ["applications:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
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
        |bytes| body::<NewApiResource>(bytes, "API resource"),
        |input| async move {
            let resource = api_resources::create(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(ApiResourceView::from(&resource))
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// A page of API resources.
#[derive(Debug, Serialize, ToSchema)]
struct ApiResourceList {
    /// The API resources of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<ApiResourceView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/api-resources", tag = tags::API_RESOURCES,
    operation_id = "listApiResources",
    summary = "List API resources",
    description = "The tenant's API resources with their permissions, in creation order (oldest \
        first; `order=desc` for newest first), a page at a time: pass the `next_cursor` of a \
        page as `after` to get the next one. Unknown query parameters are refused (`400`).",
    params(ListQuery),
    responses((status = 200, description = "One page of API resources.", body = ApiResourceList)),
    security(("tenant_token" = ["applications:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(
        q.after.as_deref(),
        ApiResourceId::parse,
        "not an API resource id",
    )?;
    let (items, next) = api_resources::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(ApiResourceList {
        items: items.iter().map(ApiResourceView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/api-resources/{id}", tag = tags::API_RESOURCES,
    operation_id = "getApiResource",
    summary = "Read an API resource",
    description = "One API resource of the tenant with its permissions. The `ETag` names this \
        revision: send it as `If-Match` on a change to make sure nobody changed the resource in \
        between.",
    params(("id" = String, Path, description = "The API resource's id.",
            example = "res_01jd2p6r8t0v2x4z6b8d0f2h4k")),
    responses(
        (status = 200, description = "The API resource.", body = ApiResourceView,
         headers(("ETag" = String, description = "The resource's current revision (strong)."))),
    ),
    security(("tenant_token" = ["applications:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let resource =
        api_resources::get(&state.manage, &caller.tenant.tenant.id, &resource_id(&id)?).await?;
    Ok(tagged(&resource))
}

#[utoipa::path(
    patch, path = "/api/v1/api-resources/{id}", tag = tags::API_RESOURCES,
    operation_id = "updateApiResource",
    summary = "Change an API resource",
    description = "Changes only the members present: `name`, and `permissions`, which replaces \
        the whole list (`[]` removes them all). A permission left out of the new list is removed \
        from every role holding it, in the same change. `identifier` cannot change: sending \
        another one (or `null`) is a `400`; sending the current one is accepted. `name` and \
        `permissions` cannot be removed with `null`. The same rules as on create apply; unknown \
        members are refused (`400`). A body that changes nothing writes nothing.\n\n\
        With `If-Match`, the change applies only if the resource is still at one of the given \
        revisions (`412` otherwise); one changed by someone else while this request ran is a \
        `412` too, never a lost update.",
    params(
        ("id" = String, Path, description = "The API resource's id.",
         example = "res_01jd2p6r8t0v2x4z6b8d0f2h4k"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = ApiResourcePatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The API resource as changed.", body = ApiResourceView,
         headers(("ETag" = String, description = "The resource's new revision."))),
    ),
    security(("tenant_token" = ["applications:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = resource_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let patch: ApiResourcePatch = body(&bytes, "API resource")?;
    let resource = api_resources::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&resource))
}

#[utoipa::path(
    delete, path = "/api/v1/api-resources/{id}", tag = tags::API_RESOURCES,
    operation_id = "deleteApiResource",
    summary = "Delete an API resource",
    description = "Deletes the API resource and its permissions, for good: every role holding \
        one of them loses it in the same change (the audit log keeps the history). With \
        `If-Match`, only if the resource is still at one of the given revisions (`412` \
        otherwise).",
    params(
        ("id" = String, Path, description = "The API resource's id.",
         example = "res_01jd2p6r8t0v2x4z6b8d0f2h4k"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the deletion was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Deleted, with its permissions and their grants.")),
    security(("tenant_token" = ["applications:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = resource_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    api_resources::delete(
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

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{MAX_ACCESS_DESCRIPTION_CHARS, MAX_RESOURCE_PERMISSIONS, Permission};
    use svc_domain::{PermissionName, TenantId};
    use svc_manage::api_resources::MAX_API_RESOURCE_NAME_CHARS;

    /// Every operation is tagged, named, secured with the tenant token and exactly the scope its
    /// handler's `Authorized<…>` demands, and each change declares `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let (r, w) = ("applications:read", "applications:write");
        let one = "/api/v1/api-resources/{id}";
        let expected = [
            (BASE, "post", w, false),
            (BASE, "get", r, false),
            (one, "get", r, false),
            (one, "patch", w, true),
            (one, "delete", w, true),
        ];
        let json = serde_json::to_value(operations()).unwrap();
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(path, method, scope, if_match)| {
                (path, method, scope, if_match, tags::API_RESOURCES)
            })
            .collect();
        crate::openapi::assert_operations(&json, &expected);
    }

    /// The links of a created resource name operations of this module that take its id.
    #[test]
    fn links_from_a_created_resource_name_real_operations() {
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
        assert_eq!(links.len(), 3);
        for link in links.values() {
            assert!(
                ids.contains(&link["operationId"].as_str().unwrap()),
                "{link}"
            );
            assert_eq!(link["parameters"]["id"], "$response.body#/id");
        }
    }

    /// The view's schema lists every member the server sends, as required, and the bodies'
    /// schemas state the limits the use cases enforce.
    #[test]
    fn schemas_match_what_is_sent_and_enforced() {
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
        let sent = |value: &serde_json::Value| -> Vec<String> {
            let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys
        };
        let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let resource = ApiResource {
            id: ApiResourceId::parse("res_01jd2p6r8t0v2x4z6b8d0f2h4k").unwrap(),
            tenant_id: TenantId::parse("ten_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            identifier: "https://api.example.com".into(),
            name: "Invoices API".into(),
            permissions: vec![Permission {
                name: PermissionName::parse("invoices:read").unwrap(),
                description: String::new(),
            }],
            created_at: at,
            updated_at: at,
        };
        let view = serde_json::to_value(ApiResourceView::from(&resource)).unwrap();
        assert_eq!(required("ApiResourceView"), sent(&view));
        assert_eq!(required("PermissionView"), sent(&view["permissions"][0]));
        assert_eq!(required("ApiResourceList"), ["items", "next_cursor"]);
        assert_eq!(required("NewApiResource"), ["identifier", "name"]);
        assert_eq!(required("NewPermission"), ["name"]);
        for name in ["NewApiResource", "ApiResourcePatch", "NewPermission"] {
            assert!(schemas[name]["example"].is_object(), "{name}");
        }
        for body in ["NewApiResource", "ApiResourcePatch"] {
            let props = &schemas[body]["properties"];
            assert_eq!(props["permissions"]["maxItems"], MAX_RESOURCE_PERMISSIONS);
            assert_eq!(props["name"]["maxLength"], MAX_API_RESOURCE_NAME_CHARS);
            assert_eq!(props["identifier"]["maxLength"], 2048);
        }
        let permission = &schemas["NewPermission"]["properties"];
        assert_eq!(
            permission["description"]["maxLength"],
            MAX_ACCESS_DESCRIPTION_CHARS
        );
        assert_eq!(permission["name"]["maxLength"], 128);
    }

    /// A refused body names the member at fault, wrong types and unknown members alike.
    #[test]
    fn refused_bodies_name_the_member() {
        let detail = |raw: &str| {
            body::<NewApiResource>(raw.as_bytes(), "API resource")
                .unwrap_err()
                .detail()
                .to_owned()
        };
        let wrong = detail(r#"{"identifier": "https://a.example", "name": 5}"#);
        assert!(wrong.starts_with("invalid API resource: name: "), "{wrong}");
        let nested = detail(
            r#"{"identifier": "https://a.example", "name": "A", "permissions": [{"name": 1}]}"#,
        );
        assert!(nested.contains("permissions[0].name: "), "{nested}");
        let unknown = detail(r#"{"identifier": "https://a.example", "name": "A", "owner": 1}"#);
        assert!(unknown.contains("unknown field `owner`"), "{unknown}");
        assert!(
            body::<NewApiResource>(br#"{"identifier": "https://a.example", "name": "A"}"#, "x")
                .is_ok()
        );
    }
}
