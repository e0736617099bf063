//! `/api/v1/control-plane/tenants*`: tenant lifecycle for the deployment's operators (create
//! with the management application, list, read, change, suspend, reactivate, delete, issue new
//! management credentials). Thin handlers: the operator extractor, one use case, a typed view.
//!
//! Each route and its OpenAPI operation come from one declaration (`OpenApiRouter`). The API
//! conventions apply: `201 Created` with `Location`, an `ETag` on a tenant read or changed,
//! `If-Match` on its `PATCH`, and `limit`/`after` on the list.

use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{ApiState, OperatorCaller, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_domain::{Tenant, TenantId};
use svc_manage::TenantView;
use svc_manage::control_plane::{
    self as cp, CreatedTenantView, ManagementCredentialsView, NewTenant, TenantPatch,
};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
        .routes(routes!(suspend))
        .routes(routes!(reactivate))
        .routes(routes!(management_credentials))
}

/// The control-plane routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn tenant_id(raw: &str) -> Result<TenantId, Problem> {
    TenantId::parse(raw).map_err(|_| Problem::not_found("no such tenant"))
}

fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(body)
        .map_err(|e| Problem::bad_request(format!("invalid JSON body: {e}")))
}

fn location(id: &str) -> String {
    format!("/api/v1/control-plane/tenants/{id}")
}

/// A tenant's view with its `ETag`.
fn tagged(tenant: &Tenant) -> Response {
    conventions::with_etag(
        Json(TenantView::from(tenant)).into_response(),
        tenant.updated_at,
    )
}

/// Creates a tenant.
#[utoipa::path(
    post, path = "/api/v1/control-plane/tenants", tag = tags::CONTROL_PLANE,
    operation_id = "createTenant",
    summary = "Create a tenant",
    description = "Creates a tenant, served at `{slug}.{base_domain}`, together with its \
        management application (client_credentials, `client_secret_basic`, every management \
        scope) in one transaction: a tenant never exists without a way to manage it. The \
        answer carries that application's `client_secret`, this once; with it, request a \
        management token at the tenant's `/oauth/token`. A taken slug is 409. Audited as \
        `tenant.created` on the new tenant.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`, the same secret); the same key with another body is 409.",
    params(("idempotency-key" = Option<String>, Header,
            description = "Makes the creation safely retryable for 24 hours (printable ASCII).")),
    request_body(content = NewTenant, content_type = "application/json"),
    responses((status = 201, description = "Created, with the management credentials.",
        body = CreatedTenantView,
        headers(("Location" = String,
                 description = "The tenant: `/api/v1/control-plane/tenants/{id}`.")))),
    security(("operator_token" = [])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let scope = caller.actor.as_audit_string();
    let ctx = state.manage.clone();
    // The create runs in a future of its own: it borrows the request's parts.
    let (state, caller) = (&state, &caller);
    create_idempotently(
        &ctx,
        &scope,
        &headers,
        ("/api/v1/control-plane/tenants", &body),
        json_body::<NewTenant>,
        |input| async move {
            let created =
                cp::create_tenant(&state.manage, &caller.actor, &caller.meta, input).await?;
            Ok(CreatedTenantView::from(&created))
        },
        |body| body["tenant"]["id"].as_str().map(location),
    )
    .await
}

/// A page of tenants.
#[derive(Debug, Serialize, ToSchema)]
struct TenantList {
    /// The tenants of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<TenantView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// Lists the tenants.
#[utoipa::path(
    get, path = "/api/v1/control-plane/tenants", tag = tags::CONTROL_PLANE,
    operation_id = "listTenants",
    summary = "List tenants",
    description = "Every tenant of the deployment in creation order (oldest first; `order=desc` for newest first), a page at a time: \
        pass `next_cursor` as `after` for the next page; it is `null` on the last.",
    params(ListQuery),
    responses((status = 200, description = "A page of tenants.",
               body = TenantList)),
    security(("operator_token" = [])),
)]
async fn list(
    State(state): State<ApiState>,
    _caller: OperatorCaller,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(page) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(page.after.as_deref(), TenantId::parse, "not a tenant id")?;
    let (tenants, next) = cp::list_tenants(
        &state.manage,
        after.as_ref(),
        conventions::order(page.order),
        page.limit,
    )
    .await?;
    Ok(Json(TenantList {
        items: tenants.iter().map(TenantView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

/// Reads one tenant.
#[utoipa::path(
    get, path = "/api/v1/control-plane/tenants/{id}", tag = tags::CONTROL_PLANE,
    operation_id = "getTenant",
    summary = "Read a tenant",
    description = "The tenant and its revision as `ETag` (send it back in `If-Match` to change \
        it only if nobody else did meanwhile).",
    params(("id" = String, Path, description = "The tenant's id.",
            example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The tenant.", body = TenantView,
               headers(("ETag" = String, description = "Its current revision.")))),
    security(("operator_token" = [])),
)]
async fn read(
    State(state): State<ApiState>,
    _caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = cp::get_tenant(&state.manage, &tenant_id(&id)?).await?;
    Ok(tagged(&tenant))
}

/// Changes a tenant.
#[utoipa::path(
    patch, path = "/api/v1/control-plane/tenants/{id}", tag = tags::CONTROL_PLANE,
    operation_id = "updateTenant",
    summary = "Change a tenant",
    description = "Changes the fields sent (`display_name`, `signup_enabled`, `mfa_policy`) \
        and keeps the others. `mfa_policy` `optional` or `required` needs a deployment with \
        `[two_factor].enabled` (else 400 naming the field). The slug never changes (it is the tenant's host and issuer); the status changes \
        with `suspend` and `reactivate`. A patch that changes nothing writes nothing.\n\n\
        With `If-Match`, the change applies only if the tenant is still at one of the named \
        revisions (`*`: any); otherwise 412 and nothing changes. Without it, a change made \
        concurrently is never overwritten either: the later write is refused with 412. Audited \
        as `tenant.updated`.",
    params(
        ("id" = String, Path, description = "The tenant's id.",
         example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Apply only at this revision: an `ETag` of the tenant, a list of them, \
                        or `*`."),
    ),
    request_body(content = TenantPatch, content_type = "application/json"),
    responses((status = 200, description = "The tenant as it now is.", body = TenantView,
               headers(("ETag" = String, description = "Its revision.")))),
    security(("operator_token" = [])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, Problem> {
    let id = tenant_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let patch: TenantPatch = json_body(&body)?;
    let tenant = cp::update_tenant(
        &state.manage,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&tenant))
}

/// Suspends a tenant.
#[utoipa::path(
    post, path = "/api/v1/control-plane/tenants/{id}/suspend", tag = tags::CONTROL_PLANE,
    operation_id = "suspendTenant",
    summary = "Suspend a tenant",
    description = "Every surface of the tenant (sign-in, tokens, discovery, management API) \
        answers 403 until it is reactivated, within the tenant cache's few seconds on other \
        instances; its records are kept. Suspending a suspended tenant changes nothing. No \
        body. Audited as `tenant.suspended`.",
    params(("id" = String, Path, description = "The tenant's id.",
            example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The tenant, suspended.", body = TenantView,
               headers(("ETag" = String, description = "Its revision.")))),
    security(("operator_token" = [])),
)]
async fn suspend(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant =
        cp::suspend_tenant(&state.manage, &caller.actor, &caller.meta, &tenant_id(&id)?).await?;
    Ok(tagged(&tenant))
}

/// Reactivates a tenant.
#[utoipa::path(
    post, path = "/api/v1/control-plane/tenants/{id}/reactivate", tag = tags::CONTROL_PLANE,
    operation_id = "reactivateTenant",
    summary = "Reactivate a tenant",
    description = "The tenant's hosts serve traffic again. Reactivating an active tenant \
        changes nothing. No body. Audited as `tenant.reactivated`.",
    params(("id" = String, Path, description = "The tenant's id.",
            example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The tenant, active.", body = TenantView,
               headers(("ETag" = String, description = "Its revision.")))),
    security(("operator_token" = [])),
)]
async fn reactivate(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant =
        cp::reactivate_tenant(&state.manage, &caller.actor, &caller.meta, &tenant_id(&id)?).await?;
    Ok(tagged(&tenant))
}

/// Deletes a tenant.
#[utoipa::path(
    delete, path = "/api/v1/control-plane/tenants/{id}", tag = tags::CONTROL_PLANE,
    operation_id = "deleteTenant",
    summary = "Delete a tenant",
    description = "Deletes the tenant and everything it owns (applications, keys, users, \
        sessions, grants, webhook subscriptions). Its audit entries stay, including the one \
        recording the deletion (`tenant.deleted`). Not reversible.",
    params(("id" = String, Path, description = "The tenant's id.",
            example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 204, description = "Deleted.")),
    security(("operator_token" = [])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    cp::delete_tenant(&state.manage, &caller.actor, &caller.meta, &tenant_id(&id)?).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Issues new credentials for the tenant's management application.
#[utoipa::path(
    post, path = "/api/v1/control-plane/tenants/{id}/management-credentials",
    tag = tags::CONTROL_PLANE,
    operation_id = "issueManagementCredentials",
    summary = "Issue new management credentials",
    description = "Gives the tenant's management application a new client secret and returns \
        it, this once: the way into a tenant whose secret was lost, or into the zero-config \
        `default` tenant. The previous secret stops working at once. No body. Audited on the \
        tenant as a secret rotation of that application.",
    params(("id" = String, Path, description = "The tenant's id.",
            example = "ten_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The management application's client id and new \
        secret.", body = ManagementCredentialsView)),
    security(("operator_token" = [])),
)]
async fn management_credentials(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = tenant_id(&id)?;
    let (client_id, secret) =
        cp::issue_management_credentials(&state.manage, &caller.actor, &caller.meta, &tenant)
            .await?;
    Ok(Json(ManagementCredentialsView::new(&client_id, secret)).into_response())
}

#[cfg(test)]
mod tests {
    use super::{ManagementCredentialsView, TenantView};
    use utoipa::openapi::RefOr;
    use utoipa::openapi::security::SecurityRequirement;

    #[test]
    fn every_operation_takes_an_operator_token_and_only_patch_takes_if_match() {
        let doc = super::operations();
        let mut count = 0;
        for (path, item) in doc.paths.paths {
            for (method, op) in [
                ("get", item.get),
                ("post", item.post),
                ("delete", item.delete),
                ("patch", item.patch),
            ] {
                let Some(op) = op else { continue };
                count += 1;
                assert_eq!(
                    serde_json::to_value(&op.security).unwrap(),
                    serde_json::to_value(Some(vec![SecurityRequirement::new(
                        crate::openapi::OPERATOR_TOKEN,
                        Vec::<String>::new()
                    )]))
                    .unwrap(),
                    "{method} {path}"
                );
                assert_eq!(
                    op.tags,
                    Some(vec![crate::openapi::tags::CONTROL_PLANE.to_owned()])
                );
                let if_match = op
                    .parameters
                    .iter()
                    .flatten()
                    .any(|p| matches!(p, RefOr::T(p) if p.name == "If-Match"));
                assert_eq!(if_match, method == "patch", "{method} {path}");
            }
        }
        assert_eq!(count, 8);
    }

    #[test]
    fn view_schemas_require_every_member_sent() {
        let doc = serde_json::to_value(super::operations()).unwrap();
        let schemas = &doc["components"]["schemas"];
        let keys = |v: serde_json::Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        let required = |v: &serde_json::Value| {
            let mut r: Vec<String> = v["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            r.sort();
            r
        };
        let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let tenant = TenantView {
            id: "ten_1".into(),
            slug: "acme".into(),
            display_name: "Acme".into(),
            status: "suspended".into(),
            signup_enabled: false,
            mfa_policy: "default".into(),
            created_at: at,
            updated_at: at,
        };
        assert_eq!(
            keys(serde_json::to_value(&tenant).unwrap()),
            required(&schemas["TenantView"])
        );
        assert_eq!(
            schemas["TenantState"]["enum"],
            serde_json::json!(["active", "suspended"])
        );
        assert_eq!(
            schemas["MfaPolicyView"]["enum"],
            serde_json::json!(["default", "off", "optional", "required"])
        );
        let credentials = ManagementCredentialsView {
            client_id: "app_1".into(),
            client_secret: "cs_1".into(),
        };
        assert_eq!(
            keys(serde_json::to_value(&credentials).unwrap()),
            required(&schemas["ManagementCredentialsView"])
        );
        assert!(!format!("{credentials:?}").contains("cs_1"));
        assert_eq!(
            required(&schemas["CreatedTenantView"]),
            ["management_application", "tenant"]
        );
        assert_eq!(required(&schemas["TenantList"]), ["items", "next_cursor"]);
        let management = &schemas["ManagementApplicationView"]["allOf"];
        assert_eq!(
            management[0]["$ref"],
            "#/components/schemas/ManagementCredentialsView"
        );
        assert_eq!(
            management[1]["properties"]["application"]["$ref"],
            "#/components/schemas/ApplicationView"
        );
        for name in ["NewTenant", "TenantPatch"] {
            assert!(schemas[name]["example"].is_object(), "{name}");
        }
    }
}
