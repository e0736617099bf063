//! `/api/v1/control-plane/tenants`: tenant lifecycle for control-plane operators. Thin handlers:
//! the operator extractor, one use case, a JSON view.

use crate::Problem;
use crate::api::{ApiState, OperatorCaller, idempotent};
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use svc_domain::TenantId;
use svc_manage::control_plane::{self as cp, NewTenant, TenantPatch};
use svc_manage::{ApplicationView, TenantView};

/// The control-plane routes.
pub fn router(state: ApiState) -> Router {
    Router::new()
        .route("/api/v1/control-plane/tenants", post(create).get(list))
        .route(
            "/api/v1/control-plane/tenants/{id}",
            get(read).patch(update).delete(remove),
        )
        .route("/api/v1/control-plane/tenants/{id}/suspend", post(suspend))
        .route(
            "/api/v1/control-plane/tenants/{id}/reactivate",
            post(reactivate),
        )
        .route(
            "/api/v1/control-plane/tenants/{id}/management-credentials",
            post(management_credentials),
        )
        .with_state(state)
}

/// Cursor pagination parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Page {
    pub(crate) after: Option<String>,
    pub(crate) limit: Option<u32>,
}

fn tenant_id(raw: &str) -> Result<TenantId, Problem> {
    TenantId::parse(raw).map_err(|_| Problem::not_found("no such tenant"))
}

fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(body)
        .map_err(|e| Problem::bad_request(format!("invalid JSON body: {e}")))
}

async fn create(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let scope = caller.actor.as_audit_string();
    let ctx = state.manage.clone();
    idempotent(
        &ctx,
        &scope,
        &headers,
        (&Method::POST, "/api/v1/control-plane/tenants", &body),
        || async {
            let input: NewTenant = match json_body(&body) {
                Ok(input) => input,
                Err(problem) => return problem.into_response(),
            };
            match cp::create_tenant(&state.manage, &caller.actor, &caller.meta, input).await {
                Ok(created) => (
                    StatusCode::CREATED,
                    Json(json!({
                        "tenant": TenantView::from(&created.tenant),
                        "management_application": {
                            "client_id": created.management_application.id,
                            "client_secret": created.client_secret,
                            "application": ApplicationView::from(&created.management_application),
                        },
                    })),
                )
                    .into_response(),
                Err(e) => Problem::from(e).into_response(),
            }
        },
    )
    .await
}

async fn list(
    State(state): State<ApiState>,
    _caller: OperatorCaller,
    Query(page): Query<Page>,
) -> Result<Response, Problem> {
    let after = page.after.as_deref().map(tenant_id).transpose()?;
    let (tenants, next) = cp::list_tenants(&state.manage, after.as_ref(), page.limit).await?;
    let items: Vec<TenantView> = tenants.iter().map(TenantView::from).collect();
    Ok(Json(json!({ "items": items, "next_cursor": next })).into_response())
}

async fn read(
    State(state): State<ApiState>,
    _caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = cp::get_tenant(&state.manage, &tenant_id(&id)?).await?;
    Ok(Json(TenantView::from(&tenant)).into_response())
}

async fn update(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, Problem> {
    let patch: TenantPatch = json_body(&body)?;
    let tenant = cp::update_tenant(
        &state.manage,
        &caller.actor,
        &caller.meta,
        &tenant_id(&id)?,
        patch,
    )
    .await?;
    Ok(Json(TenantView::from(&tenant)).into_response())
}

async fn suspend(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant =
        cp::suspend_tenant(&state.manage, &caller.actor, &caller.meta, &tenant_id(&id)?).await?;
    Ok(Json(TenantView::from(&tenant)).into_response())
}

async fn reactivate(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant =
        cp::reactivate_tenant(&state.manage, &caller.actor, &caller.meta, &tenant_id(&id)?).await?;
    Ok(Json(TenantView::from(&tenant)).into_response())
}

async fn remove(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    cp::delete_tenant(&state.manage, &caller.actor, &caller.meta, &tenant_id(&id)?).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn management_credentials(
    State(state): State<ApiState>,
    caller: OperatorCaller,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = tenant_id(&id)?;
    let (client_id, secret) =
        cp::issue_management_credentials(&state.manage, &caller.actor, &caller.meta, &tenant)
            .await?;
    Ok(Json(json!({ "client_id": client_id, "client_secret": secret })).into_response())
}
