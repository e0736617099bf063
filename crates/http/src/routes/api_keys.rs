//! `/api/v1/api-keys*` (scopes `applications:read|write`, see `svc_manage::api_keys` for why):
//! the tenant's API keys (`svck_…`), created with scopes and an optional expiry and shown once,
//! listed and read without secrets, rotated with an overlap, revoked. Thin handlers over
//! `svc_manage::api_keys`, always within the caller's own tenant; another tenant's key id, or a
//! malformed one, is simply not found. Beside them, `/api/v1/api-key-policy`: whether the
//! tenant's people may create keys for themselves on the account page, and for which APIs.
//! Routed only while `[api_keys].enabled`.

use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{ApiState, ApplicationsRead, ApplicationsWrite, Authorized};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use svc_domain::ApiKeyId;
use svc_manage::api_keys::policy::{self, ApiKeyPolicyInput, ApiKeyPolicyView};
use svc_manage::api_keys::{self, ApiKeyView, ApiKeys, CreatedApiKeyView, NewApiKey, RotateApiKey};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, revoke))
        .routes(routes!(rotate))
        .routes(routes!(read_policy, set_policy))
}

/// The API-key routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// The key service; the routes are not served without one, so its absence is "not found".
fn service(state: &ApiState) -> Result<&Arc<ApiKeys>, Problem> {
    state
        .api_keys
        .as_ref()
        .ok_or_else(|| Problem::not_found("API keys are not enabled"))
}

fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(bytes)
        .map_err(|e| Problem::bad_request(format!("invalid API key request: {e}")))
}

fn location(id: &str) -> String {
    format!("/api/v1/api-keys/{id}")
}

/// Creates a key.
#[utoipa::path(
    post, path = "/api/v1/api-keys", tag = tags::APPLICATIONS,
    operation_id = "createApiKey",
    summary = "Create an API key",
    description = "A long-lived machine credential for this management API: present it as \
        `Authorization: Bearer svck_…` on any route its scopes allow (it reaches the whole \
        tenant, like a management application's token). The key is returned in `key` this \
        once: only a keyed hash is stored.\n\n\
        `scopes` are management scopes the caller itself holds (no key can hold more than its \
        creator). `expires_at` must be in the future and within the deployment's maximum \
        lifetime (`api_keys.max_lifetime_days`; without `expires_at` the key expires at it \
        when one is set). A tenant holds at most `api_keys.max_per_tenant` live keys (409 \
        beyond). Audited as `api_key.created`, announced as `admin.api_key.created`.\n\n\
        With `subject` and `resource` (where the deployment allows, `api_keys.subject_keys`), \
        the key acts as that person (`usr_…`, the caller needs `users:write`) or agent \
        (`agt_…`, needs `agents:write`) at that API resource of the tenant: `scopes` are \
        permissions the API defines (for an agent, within its `allowed_scopes`, and the API \
        among its `allowed_resources`). The management API refuses such a key; the API's \
        resource servers learn at token introspection what it grants now (a person's key \
        never more than their roles grant there).\n\n\
        No `idempotency-key`: replaying the answer would mean storing the key in the clear. \
        A retry after a lost answer creates another key; revoke the one never received.",
    request_body(content = NewApiKey, content_type = "application/json"),
    responses((status = 201, description = "Created; `key` is shown this once.",
               body = CreatedApiKeyView,
               headers(("Location" = String,
                        description = "The key's handle: `/api/v1/api-keys/{id}`.")))),
    security(("tenant_token" = ["applications:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let keys = service(&state)?;
    let input: NewApiKey = body(&bytes)?;
    let created = api_keys::create(
        &state.manage,
        keys,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.scopes,
        &caller.meta,
        input,
    )
    .await?;
    Ok(conventions::created(&location(&created.view.id), &created))
}

/// A page of keys.
#[derive(Debug, Serialize, ToSchema)]
struct ApiKeyList {
    /// The keys of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<ApiKeyView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// Lists the keys.
#[utoipa::path(
    get, path = "/api/v1/api-keys", tag = tags::APPLICATIONS,
    operation_id = "listApiKeys",
    summary = "List API keys",
    description = "The tenant's API keys in creation order (oldest first; `order=desc` for \
        newest first), revoked and expired ones included, a page at a time: pass \
        `next_cursor` as `after` for the next page; it is `null` on the last. Never the keys \
        themselves.",
    params(ListQuery),
    responses((status = 200, description = "A page of keys.", body = ApiKeyList)),
    security(("tenant_token" = ["applications:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    service(&state)?;
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), ApiKeyId::parse, "not an API key id")?;
    let (items, next) = api_keys::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(ApiKeyList {
        items,
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

/// Reads a key.
#[utoipa::path(
    get, path = "/api/v1/api-keys/{id}", tag = tags::APPLICATIONS,
    operation_id = "getApiKey",
    summary = "Read an API key",
    description = "One API key of the tenant: its name, scopes, expiry, last use (to the \
        minute) and revocation; never the key itself.",
    params(("id" = String, Path, description = "The key's handle (`apik_…`).",
            example = "apik_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The key.", body = ApiKeyView)),
    security(("tenant_token" = ["applications:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    service(&state)?;
    let view = api_keys::get(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(Json(view).into_response())
}

/// Revokes a key.
#[utoipa::path(
    delete, path = "/api/v1/api-keys/{id}", tag = tags::APPLICATIONS,
    operation_id = "revokeApiKey",
    summary = "Revoke an API key",
    description = "Revokes the key at once: its next request is refused (401) on this \
        instance, and within 5 seconds on every other (their short cache of accepted keys). \
        Revoking a revoked key succeeds and changes nothing. The key stays listed as revoked. \
        Audited as `api_key.revoked`, announced as `admin.api_key.revoked`.",
    params(("id" = String, Path, description = "The key's handle (`apik_…`).",
            example = "apik_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 204, description = "Revoked.")),
    security(("tenant_token" = ["applications:write"])),
)]
async fn revoke(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let keys = service(&state)?;
    api_keys::revoke(
        &state.manage,
        keys,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Rotates a key.
#[utoipa::path(
    post, path = "/api/v1/api-keys/{id}/rotate", tag = tags::APPLICATIONS,
    operation_id = "rotateApiKey",
    summary = "Rotate an API key",
    description = "Creates a new key with the same name and scopes (and, when the old one \
        expires, the same lifetime from now), returned in `key` this once; the old key keeps \
        working for `overlap_secs` (default 86400, at most 604800, 0: stops at once) so \
        deployments can switch without downtime. The caller must hold every scope of the key \
        (403 otherwise); a revoked or expired key cannot be rotated (409). Audited as \
        `api_key.rotated`, announced as `admin.api_key.rotated`. No `idempotency-key`, as for \
        creation: the answer is never stored.",
    params(("id" = String, Path, description = "The key's handle (`apik_…`).",
            example = "apik_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    request_body(content = RotateApiKey, content_type = "application/json"),
    responses((status = 201, description = "Rotated; `key` is the new key, shown this once.",
               body = CreatedApiKeyView,
               headers(("Location" = String,
                        description = "The new key's handle: `/api/v1/api-keys/{id}`.")))),
    security(("tenant_token" = ["applications:write"])),
)]
async fn rotate(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let keys = service(&state)?;
    let input: RotateApiKey = if bytes.is_empty() {
        RotateApiKey::default()
    } else {
        body(&bytes)?
    };
    let created = api_keys::rotate(
        &state.manage,
        keys,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.scopes,
        &caller.meta,
        &id,
        input,
    )
    .await?;
    Ok(conventions::created(&location(&created.view.id), &created))
}

/// Reads the policy for people's own keys.
#[utoipa::path(
    get, path = "/api/v1/api-key-policy", tag = tags::APPLICATIONS,
    operation_id = "getApiKeyPolicy",
    summary = "Read the policy for people's own API keys",
    description = "Whether the tenant's people may create API keys for themselves on the \
        account page (`/auth/account/api-keys`), for which of the tenant's APIs, how many live \
        keys one person holds at most and how many days one lives. Off until set; it takes \
        effect only where the deployment allows keys acting as a person \
        (`api_keys.subject_keys`).",
    responses((status = 200, description = "The policy.", body = ApiKeyPolicyView)),
    security(("tenant_token" = ["applications:read"])),
)]
async fn read_policy(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
) -> Result<Json<ApiKeyPolicyView>, Problem> {
    Ok(Json(
        policy::get_policy(&state.manage, &caller.tenant.tenant.id).await?,
    ))
}

/// Sets the policy for people's own keys.
#[utoipa::path(
    put, path = "/api/v1/api-key-policy", tag = tags::APPLICATIONS,
    operation_id = "setApiKeyPolicy",
    summary = "Set the policy for people's own API keys",
    description = "Lets the tenant's people create keys for themselves (`self_service`) for \
        the APIs named in `resources` (identifiers of the tenant's API resources, at least one \
        when on, at most 20), each key acting as its person at one of them with permissions \
        their roles grant there (introspection narrows it again at every use). \
        `max_per_person` (1 to 20, default 5) bounds a person's live keys; \
        `max_lifetime_days` (1 to 365 and within the deployment's `api_keys.max_lifetime_days`, \
        default 90) bounds a key's life: a person's key always expires. Turning it on where \
        the deployment does not allow keys acting as a person is refused (400 naming \
        `self_service`). Turning it off stops new keys only: existing ones work until revoked \
        (`DELETE /api/v1/api-keys/{id}`) or expired. Audited as `api_key_policy.set`.",
    request_body(content = ApiKeyPolicyInput, content_type = "application/json"),
    responses((status = 200, description = "The policy now in force.", body = ApiKeyPolicyView)),
    security(("tenant_token" = ["applications:write"])),
)]
async fn set_policy(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    bytes: Bytes,
) -> Result<Json<ApiKeyPolicyView>, Problem> {
    let keys = service(&state)?;
    let input: ApiKeyPolicyInput = serde_json::from_slice(&bytes)
        .map_err(|e| Problem::bad_request(format!("invalid API key policy: {e}")))?;
    Ok(Json(
        policy::set_policy(
            &state.manage,
            keys,
            &caller.tenant.tenant.id,
            &caller.actor,
            &caller.meta,
            input,
        )
        .await?,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_operation_is_documented_with_its_scope() {
        let doc = serde_json::to_value(super::operations()).unwrap();
        crate::openapi::assert_operations(
            &doc,
            &[
                (
                    "/api/v1/api-keys",
                    "post",
                    "applications:write",
                    false,
                    "Applications",
                ),
                (
                    "/api/v1/api-keys",
                    "get",
                    "applications:read",
                    false,
                    "Applications",
                ),
                (
                    "/api/v1/api-keys/{id}",
                    "get",
                    "applications:read",
                    false,
                    "Applications",
                ),
                (
                    "/api/v1/api-keys/{id}",
                    "delete",
                    "applications:write",
                    false,
                    "Applications",
                ),
                (
                    "/api/v1/api-keys/{id}/rotate",
                    "post",
                    "applications:write",
                    false,
                    "Applications",
                ),
                (
                    "/api/v1/api-key-policy",
                    "get",
                    "applications:read",
                    false,
                    "Applications",
                ),
                (
                    "/api/v1/api-key-policy",
                    "put",
                    "applications:write",
                    false,
                    "Applications",
                ),
            ],
        );
    }
}
