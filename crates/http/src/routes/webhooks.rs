//! `/api/v1/webhooks` (scopes `webhooks:read|write`): thin handlers over `svc_manage::webhooks`,
//! always within the token's own tenant. Another tenant's subscription or delivery id, or a
//! malformed one, is simply not found.

use crate::Problem;
use crate::api::{ApiState, Authorized, WebhooksRead, WebhooksWrite, idempotent};
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use svc_domain::{DeliveryId, DeliveryStatus, WebhookId};
use svc_manage::webhooks::{self, NewWebhook, RotateSecret, WebhookPatch};
use svc_store::DeliveryFilter;

/// The webhook routes.
pub fn router(state: ApiState) -> Router {
    Router::new()
        .route("/api/v1/webhooks", post(create).get(list))
        .route("/api/v1/webhooks/event-types", get(event_types))
        .route(
            "/api/v1/webhooks/{id}",
            get(read).put(update).patch(update).delete(remove),
        )
        .route("/api/v1/webhooks/{id}/test", post(send_test))
        .route("/api/v1/webhooks/{id}/rotate-secret", post(rotate_secret))
        .route("/api/v1/webhooks/{id}/deliveries", get(deliveries))
        .route(
            "/api/v1/webhooks/{id}/deliveries/{delivery_id}",
            get(delivery),
        )
        .route(
            "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver",
            post(redeliver),
        )
        .with_state(state)
}

fn webhook_id(raw: &str) -> Result<WebhookId, Problem> {
    WebhookId::parse(raw).map_err(|_| Problem::not_found("no such webhook subscription"))
}

fn delivery_id(raw: &str) -> Result<DeliveryId, Problem> {
    DeliveryId::parse(raw).map_err(|_| Problem::not_found("no such delivery"))
}

fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(bytes)
        .map_err(|e| Problem::bad_request(format!("invalid webhook request: {e}")))
}

async fn create(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let scope = caller
        .actor
        .idempotency_scope(Some(&caller.tenant.tenant.id));
    idempotent(
        &state.manage,
        &scope,
        &headers,
        (&Method::POST, "/api/v1/webhooks", &bytes),
        || async {
            let input: NewWebhook = match body(&bytes) {
                Ok(input) => input,
                Err(problem) => return problem.into_response(),
            };
            match webhooks::create(
                &state.manage,
                &state.webhook_rules,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await
            {
                Ok(created) => (StatusCode::CREATED, Json(created)).into_response(),
                Err(e) => Problem::from(e).into_response(),
            }
        },
    )
    .await
}

/// Query of `GET /api/v1/webhooks`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    after: Option<String>,
    limit: Option<u32>,
}

async fn list(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = q
        .after
        .as_deref()
        .map(|a| WebhookId::parse(a).map_err(|_| Problem::bad_request("after: not a webhook id")))
        .transpose()?;
    let (items, next) = webhooks::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        q.limit,
    )
    .await?;
    Ok(Json(json!({ "items": items, "next_cursor": next })).into_response())
}

async fn event_types(_caller: Authorized<WebhooksRead>) -> Response {
    Json(json!({ "items": webhooks::event_catalog() })).into_response()
}

async fn read(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let view = webhooks::get(&state.manage, &caller.tenant.tenant.id, &webhook_id(&id)?).await?;
    Ok(Json(view).into_response())
}

async fn update(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = webhook_id(&id)?;
    let patch: WebhookPatch = body(&bytes)?;
    let view = webhooks::update(
        &state.manage,
        &state.webhook_rules,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
    )
    .await?;
    Ok(Json(view).into_response())
}

async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    webhooks::delete(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &webhook_id(&id)?,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn rotate_secret(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = webhook_id(&id)?;
    // An empty body asks for a generated secret and the default overlap.
    let input: RotateSecret = if bytes.iter().all(u8::is_ascii_whitespace) {
        RotateSecret::default()
    } else {
        body(&bytes)?
    };
    let view = webhooks::rotate_secret(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        input,
    )
    .await?;
    Ok(Json(view).into_response())
}

async fn send_test(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let view = webhooks::send_test(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &webhook_id(&id)?,
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(view)).into_response())
}

/// Query of `GET /api/v1/webhooks/{id}/deliveries`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveriesQuery {
    /// `pending`, `succeeded`, `failed` or `exhausted`.
    status: Option<String>,
    /// Cursor: the last id of the previous page.
    before: Option<String>,
    /// Page size, 1 to 100 (default 20).
    limit: Option<u32>,
}

async fn deliveries(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksRead>,
    Path(id): Path<String>,
    query: Result<Query<DeliveriesQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let id = webhook_id(&id)?;
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let status = q
        .status
        .as_deref()
        .map(|s| {
            DeliveryStatus::parse(s).ok_or_else(|| {
                Problem::bad_request("status: one of pending, succeeded, failed, exhausted")
            })
        })
        .transpose()?;
    let before = q
        .before
        .as_deref()
        .map(|b| {
            DeliveryId::parse(b).map_err(|_| Problem::bad_request("before: not a delivery id"))
        })
        .transpose()?;
    let (items, next) = webhooks::list_deliveries(
        &state.manage,
        &caller.tenant.tenant.id,
        &id,
        &DeliveryFilter { status },
        before.as_ref(),
        q.limit,
    )
    .await?;
    Ok(Json(json!({ "items": items, "next_cursor": next })).into_response())
}

async fn delivery(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksRead>,
    Path((id, delivery)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let view = webhooks::delivery(
        &state.manage,
        &caller.tenant.tenant.id,
        &webhook_id(&id)?,
        &delivery_id(&delivery)?,
    )
    .await?;
    Ok(Json(view).into_response())
}

async fn redeliver(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    Path((id, delivery)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let view = webhooks::redeliver(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &webhook_id(&id)?,
        &delivery_id(&delivery)?,
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(view)).into_response())
}
