//! `/api/v1/webhooks*` (scopes `webhooks:read|write`): the tenant's webhook subscriptions, the
//! event catalog, test deliveries, secret rotation and the delivery history, as thin handlers
//! over `svc_manage::webhooks`, always within the token's own tenant. Another tenant's
//! subscription or delivery id, or a malformed one, is simply not found.
//!
//! Each route and its OpenAPI operation come from one declaration (`OpenApiRouter`). The API
//! conventions apply: `201 Created` with `Location`, an `ETag` on a subscription read or changed,
//! `If-Match` on its update, deletion and secret rotation, and `limit`/`after` on both lists.

use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{ApiState, Authorized, WebhooksRead, WebhooksWrite, create_idempotently};
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
use svc_domain::{DeliveryId, DeliveryStatus, WebhookId};
use svc_manage::webhooks::{
    self, CreatedWebhookView, DeliveryState, DeliveryView, EventTypeView, NewWebhook, RotateSecret,
    WebhookPatch, WebhookView,
};
use svc_store::DeliveryFilter;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(event_types))
        .routes(routes!(read, update, patch, remove))
        .routes(routes!(send_test))
        .routes(routes!(rotate_secret))
        .routes(routes!(deliveries))
        .routes(routes!(delivery))
        .routes(routes!(redeliver))
}

/// The webhook routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
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

fn location(id: &str) -> String {
    format!("/api/v1/webhooks/{id}")
}

/// A subscription with its `ETag`.
fn tagged(view: &WebhookView, body: impl Serialize) -> Response {
    conventions::with_etag(Json(body).into_response(), view.updated_at)
}

/// Creates a subscription.
#[utoipa::path(
    post, path = "/api/v1/webhooks", tag = tags::WEBHOOKS,
    operation_id = "createWebhook",
    summary = "Subscribe a receiver to events",
    description = "Creates a webhook subscription: signed deliveries (`svc-webhook-v1`) of the \
        named event types are POSTed to `url` from now on (an event is delivered to the \
        subscriptions that existed when it happened). The receiver must satisfy the \
        deployment's target policy (in production `https` on port 443 to a public address).\n\n\
        `event_types` names types of `GET /api/v1/webhooks/event-types`; unknown names are \
        refused with the catalog in `detail`, and so are types of features this version does \
        not have yet: only what can be delivered is accepted.\n\n\
        Without `secret`, a signing secret is generated and returned in `secret`, this once; a \
        supplied secret must carry 256 bits of entropy and is never echoed. A tenant has at \
        most `webhooks.max_subscriptions_per_tenant` subscriptions (409 beyond). Audited as \
        `webhook.created`, announced as `admin.webhook.created`.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`); the same key with another body is 409.",
    params(("idempotency-key" = Option<String>, Header,
            description = "Makes the creation safely retryable for 24 hours (printable ASCII).")),
    request_body(content = NewWebhook, content_type = "application/json"),
    responses((status = 201, description = "Subscribed. The body carries the generated secret \
        when none was supplied.", body = CreatedWebhookView,
        headers(("Location" = String,
                 description = "The subscription: `/api/v1/webhooks/{id}`.")))),
    security(("tenant_token" = ["webhooks:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
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
        ("/api/v1/webhooks", &bytes),
        body::<NewWebhook>,
        |input| async move {
            let created = webhooks::create(
                &state.manage,
                &state.webhook_rules,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(created)
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// A page of subscriptions.
#[derive(Debug, Serialize, ToSchema)]
struct WebhookList {
    /// The subscriptions of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<WebhookView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// Lists the subscriptions.
#[utoipa::path(
    get, path = "/api/v1/webhooks", tag = tags::WEBHOOKS,
    operation_id = "listWebhooks",
    summary = "List webhook subscriptions",
    description = "The tenant's subscriptions in creation order (oldest first; `order=desc` for newest first), a page at a time: pass \
        `next_cursor` as `after` for the next page; it is `null` on the last. Secrets are never \
        shown.",
    params(ListQuery),
    responses((status = 200, description = "A page of subscriptions.",
               body = WebhookList)),
    security(("tenant_token" = ["webhooks:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), WebhookId::parse, "not a webhook id")?;
    let (items, next) = webhooks::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(WebhookList {
        items,
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

/// The event catalog.
#[derive(Debug, Serialize, ToSchema)]
struct EventCatalog {
    /// Every event type this version records.
    items: Vec<EventTypeView>,
}

/// Lists the event types.
#[utoipa::path(
    get, path = "/api/v1/webhooks/event-types", tag = tags::WEBHOOKS,
    operation_id = "listWebhookEventTypes",
    summary = "List the event types a subscription may name",
    description = "The event catalog: every type this version records, each with what \
        records it. A subscription may name exactly these; types of features still to come \
        are neither listed nor accepted. Not paginated.",
    responses((status = 200, description = "The catalog.", body = EventCatalog)),
    security(("tenant_token" = ["webhooks:read"])),
)]
async fn event_types(_caller: Authorized<WebhooksRead>) -> Response {
    Json(EventCatalog {
        items: webhooks::event_catalog(),
    })
    .into_response()
}

/// Reads one subscription.
#[utoipa::path(
    get, path = "/api/v1/webhooks/{id}", tag = tags::WEBHOOKS,
    operation_id = "getWebhook",
    summary = "Read a webhook subscription",
    description = "The subscription, without its secret, and its revision as `ETag` (send it \
        back in `If-Match` to change or delete it only if nobody else did meanwhile).",
    params(("id" = String, Path, description = "The subscription's id.",
            example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The subscription.", body = WebhookView,
               headers(("ETag" = String, description = "Its current revision.")))),
    security(("tenant_token" = ["webhooks:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let view = webhooks::get(&state.manage, &caller.tenant.tenant.id, &webhook_id(&id)?).await?;
    Ok(tagged(&view, &view))
}

async fn apply_update(
    state: &ApiState,
    caller: &Authorized<WebhooksWrite>,
    headers: &HeaderMap,
    id: &str,
    bytes: &[u8],
) -> Result<Response, Problem> {
    let id = webhook_id(id)?;
    let precondition = conventions::precondition(headers)?;
    let patch: WebhookPatch = body(bytes)?;
    let view = webhooks::update(
        &state.manage,
        &state.webhook_rules,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&view, &view))
}

/// Changes a subscription.
#[utoipa::path(
    put, path = "/api/v1/webhooks/{id}", tag = tags::WEBHOOKS,
    operation_id = "updateWebhook",
    summary = "Change a webhook subscription",
    description = "Changes the fields sent (`url`, `event_types`, `description`, `active`) and \
        keeps the others; at least one is required, and `\"description\": null` clears the \
        description. The rules are those of creation. Switching a subscription on \
        (`\"active\": true`) clears the `disabled_reason` a 410 Gone left. The secret changes \
        only with `rotate-secret`. `PATCH` is a synonym.\n\n\
        With `If-Match`, the change applies only if the subscription is still at one of the \
        named revisions (`*`: any); otherwise 412 and nothing changes. Without it, a change \
        made concurrently is never overwritten either: the later write is refused with 412. \
        Audited as `webhook.updated`, announced as `admin.webhook.updated`.",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Apply only at this revision: an `ETag` of the subscription, a list of \
                        them, or `*`."),
    ),
    request_body(content = WebhookPatch, content_type = "application/json"),
    responses((status = 200, description = "The changed subscription.", body = WebhookView,
               headers(("ETag" = String, description = "Its new revision.")))),
    security(("tenant_token" = ["webhooks:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    apply_update(&state, &caller, &headers, &id, &bytes).await
}

/// `PATCH`, a synonym of `PUT` (ADR 0003).
#[utoipa::path(
    patch, path = "/api/v1/webhooks/{id}", tag = tags::WEBHOOKS,
    operation_id = "patchWebhook",
    summary = "Change a webhook subscription (synonym of PUT)",
    description = "Exactly `PUT /api/v1/webhooks/{id}`: the fields sent change, the others \
        stay; `If-Match` is honoured the same way.",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Apply only at this revision: an `ETag` of the subscription, a list of \
                        them, or `*`."),
    ),
    request_body(content = WebhookPatch, content_type = "application/json"),
    responses((status = 200, description = "The changed subscription.", body = WebhookView,
               headers(("ETag" = String, description = "Its new revision.")))),
    security(("tenant_token" = ["webhooks:write"])),
)]
async fn patch(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    apply_update(&state, &caller, &headers, &id, &bytes).await
}

/// Deletes a subscription.
#[utoipa::path(
    delete, path = "/api/v1/webhooks/{id}", tag = tags::WEBHOOKS,
    operation_id = "deleteWebhook",
    summary = "Delete a webhook subscription",
    description = "Deletes the subscription and its delivery history; nothing more is sent to \
        it, including attempts still scheduled. With `If-Match`, only if it is still at a named \
        revision (412 otherwise). Audited as `webhook.deleted`, announced as \
        `admin.webhook.deleted` to the tenant's other subscriptions.",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Delete only at this revision: an `ETag` of the subscription, a list of \
                        them, or `*`."),
    ),
    responses((status = 204, description = "Deleted.")),
    security(("tenant_token" = ["webhooks:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = webhook_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    webhooks::delete(
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

/// Rotates the signing secret.
#[utoipa::path(
    post, path = "/api/v1/webhooks/{id}/rotate-secret", tag = tags::WEBHOOKS,
    operation_id = "rotateWebhookSecret",
    summary = "Rotate a subscription's signing secret",
    description = "Replaces the signing secret. During the overlap (`overlap_secs`, default a \
        day, at most a week) the previous secret keeps signing beside the new one, so every \
        delivery carries both signatures and receivers can switch without losing any; \
        `previous_secret_expires_at` says until when. The body is optional: empty (or `null`) \
        asks for a generated secret, returned in `secret` this once. With `If-Match`, only if \
        the subscription is still at a named revision (412 otherwise). Audited as \
        `webhook.secret_rotated`, announced as `admin.webhook.secret_rotated`.",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Rotate only at this revision: an `ETag` of the subscription, a list of \
                        them, or `*`."),
    ),
    request_body(content = Option<RotateSecret>, content_type = "application/json"),
    responses((status = 200, description = "Rotated. The body carries the new secret when it \
        was generated.", body = CreatedWebhookView,
        headers(("ETag" = String, description = "The subscription's new revision.")))),
    security(("tenant_token" = ["webhooks:write"])),
)]
async fn rotate_secret(
    State(state): State<ApiState>,
    caller: Authorized<WebhooksWrite>,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = webhook_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    // An empty body (or `null`) asks for a generated secret and the default overlap.
    let input: RotateSecret = if bytes.iter().all(u8::is_ascii_whitespace) {
        RotateSecret::default()
    } else {
        body::<Option<RotateSecret>>(&bytes)?.unwrap_or_default()
    };
    let rotated = webhooks::rotate_secret(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        input,
        &precondition,
    )
    .await?;
    Ok(tagged(&rotated.webhook, &rotated))
}

/// Sends a test delivery.
#[utoipa::path(
    post, path = "/api/v1/webhooks/{id}/test", tag = tags::WEBHOOKS,
    operation_id = "sendWebhookTest",
    summary = "Send a test delivery",
    description = "Queues a `webhook.test` delivery to the subscription, due now, whatever \
        event types it names: signed and retried like any other, and listed in its deliveries. \
        No body. 409 while the subscription is switched off. Audited as `webhook.test_sent`.",
    params(("id" = String, Path, description = "The subscription's id.",
            example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 202, description = "Queued: the delivery as it starts (`pending`); \
        follow it at `/api/v1/webhooks/{id}/deliveries/{delivery_id}`.", body = DeliveryView)),
    security(("tenant_token" = ["webhooks:write"])),
)]
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
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct DeliveriesQuery {
    /// Only deliveries in this state.
    #[param(value_type = Option<DeliveryState>)]
    status: Option<String>,
    /// Page size, 1..=100 (default 20; larger values are clamped): each delivery carries its
    /// attempts.
    #[param(minimum = 1, maximum = 100)]
    limit: Option<u32>,
    /// Return the deliveries after this cursor, in the list's order: the `next_cursor` of the
    /// previous page.
    #[param(max_length = 64)]
    after: Option<String>,
    /// `asc` (oldest first) or `desc` (newest first); default `desc`.
    #[param(inline)]
    order: Option<conventions::SortOrder>,
}

/// A page of a subscription's deliveries.
#[derive(Debug, Serialize, ToSchema)]
struct DeliveryList {
    /// The deliveries of this page, in the order asked for (default newest first), each with its
    /// attempts.
    items: Vec<DeliveryView>,
    /// Pass as `after` to get the next (older) page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// Lists a subscription's deliveries.
#[utoipa::path(
    get, path = "/api/v1/webhooks/{id}/deliveries", tag = tags::WEBHOOKS,
    operation_id = "listWebhookDeliveries",
    summary = "List a subscription's deliveries",
    description = "The delivery history, newest first (`order=asc` for oldest first), each delivery with its attempts: \
        `pending` (waiting for its first attempt), `failed` (the last attempt failed and \
        another is scheduled at `next_attempt_at`), `succeeded`, or `exhausted` (no attempt \
        will follow). Pass `next_cursor` as `after` for the next (older) page; it is `null` on \
        the last. Finished deliveries are kept for `webhooks.history_retention_days`.",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        DeliveriesQuery,
    ),
    responses((status = 200, description = "A page of deliveries, in the order asked for.",
               body = DeliveryList)),
    security(("tenant_token" = ["webhooks:read"])),
)]
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
    let after = conventions::after(q.after.as_deref(), DeliveryId::parse, "not a delivery id")?;
    let (items, next) = webhooks::list_deliveries(
        &state.manage,
        &caller.tenant.tenant.id,
        &id,
        &DeliveryFilter { status },
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(DeliveryList {
        items,
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

/// Reads one delivery.
#[utoipa::path(
    get, path = "/api/v1/webhooks/{id}/deliveries/{delivery_id}", tag = tags::WEBHOOKS,
    operation_id = "getWebhookDelivery",
    summary = "Read a delivery",
    description = "One delivery of the subscription with every attempt (start, duration, the \
        receiver's status or the error).",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("delivery_id" = String, Path, description = "The delivery's id (`X-SVC-Delivery`).",
         example = "dlv_01jd3k9x2c4v6b8n0m2q4w6e8r"),
    ),
    responses((status = 200, description = "The delivery.", body = DeliveryView)),
    security(("tenant_token" = ["webhooks:read"])),
)]
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

/// Redelivers a finished delivery.
#[utoipa::path(
    post, path = "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", tag = tags::WEBHOOKS,
    operation_id = "redeliverWebhookDelivery",
    summary = "Send a delivery again",
    description = "Queues the event of a finished (`succeeded` or `exhausted`) delivery again \
        as a new delivery, due now: a new id (`X-SVC-Delivery`), `redelivery_of` naming the \
        original, the same event and body. No body. 409 while the original still has attempts \
        to come or the subscription is switched off. Audited as `webhook.redelivered`.",
    params(
        ("id" = String, Path, description = "The subscription's id.",
         example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("delivery_id" = String, Path, description = "The delivery to send again.",
         example = "dlv_01jd3k9x2c4v6b8n0m2q4w6e8r"),
    ),
    responses((status = 202, description = "Queued: the new delivery (`pending`).",
               body = DeliveryView)),
    security(("tenant_token" = ["webhooks:write"])),
)]
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

#[cfg(test)]
mod tests {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::path::Operation;
    use utoipa::openapi::security::SecurityRequirement;

    fn operations() -> Vec<(String, &'static str, Operation)> {
        let doc = super::operations();
        let mut all = Vec::new();
        for (path, item) in doc.paths.paths {
            for (method, op) in [
                ("get", item.get),
                ("put", item.put),
                ("post", item.post),
                ("delete", item.delete),
                ("patch", item.patch),
            ] {
                if let Some(op) = op {
                    all.push((path.clone(), method, op));
                }
            }
        }
        all
    }

    #[test]
    fn reads_need_webhooks_read_writes_webhooks_write_and_changes_take_if_match() {
        let all = operations();
        assert_eq!(all.len(), 12);
        for (path, method, op) in all {
            let scope = if method == "get" {
                "webhooks:read"
            } else {
                "webhooks:write"
            };
            assert_eq!(
                serde_json::to_value(&op.security).unwrap(),
                serde_json::to_value(Some(vec![SecurityRequirement::new(
                    crate::openapi::TENANT_TOKEN,
                    [scope]
                )]))
                .unwrap(),
                "{method} {path}"
            );
            assert_eq!(
                op.tags,
                Some(vec![crate::openapi::tags::WEBHOOKS.to_owned()])
            );
            let if_match = op
                .parameters
                .iter()
                .flatten()
                .any(|p| matches!(p, RefOr::T(p) if p.name == "If-Match"));
            let changes = path == "/api/v1/webhooks/{id}" && method != "get"
                || path.ends_with("/rotate-secret");
            assert_eq!(if_match, changes, "{method} {path}");
            assert!(
                op.summary.is_some() && op.description.is_some(),
                "{method} {path}"
            );
        }
    }

    /// The members a view sends, and the members its schema requires.
    fn sent_and_required(view: &impl serde::Serialize, name: &str) -> (Vec<String>, Vec<String>) {
        let doc = serde_json::to_value(super::operations()).unwrap();
        let mut required: Vec<String> = doc["components"]["schemas"][name]["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no required members"))
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        required.sort();
        let mut sent: Vec<String> = serde_json::to_value(view)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        sent.sort();
        (sent, required)
    }

    #[test]
    fn view_schemas_require_every_member_sent() {
        use svc_manage::webhooks::{AttemptView, DeliveryView, WebhookView, event_catalog};
        let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let webhook = WebhookView {
            id: "whk_1".into(),
            url: "https://h.example/a".into(),
            event_types: vec!["auth.logout".into()],
            description: None,
            active: true,
            disabled_reason: None,
            previous_secret_expires_at: None,
            created_at: at,
            updated_at: at,
        };
        let (sent, required) = sent_and_required(&webhook, "WebhookView");
        assert_eq!(sent, required);
        let attempt = AttemptView {
            number: 1,
            started_at: at,
            duration_ms: 3,
            status_code: None,
            error: None,
        };
        let (sent, required) = sent_and_required(&attempt, "AttemptView");
        assert_eq!(sent, required);
        let delivery = DeliveryView {
            id: "dlv_1".into(),
            event_id: "evt_1".into(),
            event_type: "webhook.test".into(),
            status: "pending".into(),
            attempts: 0,
            last_status_code: None,
            last_error: None,
            next_attempt_at: None,
            redelivery_of: None,
            history: vec![attempt],
            created_at: at,
            updated_at: at,
        };
        let (sent, required) = sent_and_required(&delivery, "DeliveryView");
        assert_eq!(sent, required);
        let (sent, required) = sent_and_required(&event_catalog()[0], "EventTypeView");
        assert_eq!(sent, required);
        let doc = serde_json::to_value(super::operations()).unwrap();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["DeliveryState"]["enum"],
            serde_json::json!(["pending", "succeeded", "failed", "exhausted"])
        );
        for status in ["pending", "succeeded", "failed", "exhausted"] {
            assert!(
                svc_domain::DeliveryStatus::parse(status).is_some(),
                "{status}"
            );
        }
        let created = &schemas["CreatedWebhookView"]["allOf"];
        assert_eq!(created[0]["$ref"], "#/components/schemas/WebhookView");
        assert_eq!(created[1]["properties"]["secret"]["type"], "string");
        assert!(created[1]["required"].is_null(), "secret may be absent");
        for name in ["NewWebhook", "WebhookPatch", "RotateSecret"] {
            assert!(schemas[name]["example"].is_object(), "{name}");
            assert_eq!(schemas[name]["additionalProperties"], false, "{name}");
        }
    }

    #[test]
    fn the_documented_secret_example_is_accepted() {
        let doc = serde_json::to_value(super::operations()).unwrap();
        let example = doc["components"]["schemas"]["NewWebhook"]["properties"]["secret"]["example"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(svc_domain::WebhookSecret::parse(&example).is_ok());
    }
}
