//! `/api/v1/applications` (scopes `applications:read|write`) and `/api/v1/audit-logs`
//! (`audit:read`): thin handlers over `svc-manage`, always within the token's own tenant.

use crate::Problem;
use crate::api::{
    ApiState, ApplicationsRead, ApplicationsWrite, AuditRead, Authorized, idempotent,
};
use crate::routes::control_plane::Page;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use svc_domain::{AuditEntryId, ClientId};
use svc_manage::applications::{self as apps, ApplicationInput};
use svc_manage::{ApplicationView, audit};
use svc_store::AuditFilter;
use time::OffsetDateTime;

/// The application and audit routes.
pub fn router(state: ApiState) -> Router {
    Router::new()
        .route("/api/v1/applications", post(create).get(list))
        .route(
            "/api/v1/applications/{id}",
            get(read).put(update).delete(remove),
        )
        .route(
            "/api/v1/applications/{id}/rotate-secret",
            post(rotate_secret),
        )
        .route("/api/v1/audit-logs", get(audit_logs))
        .with_state(state)
}

/// An id of another tenant, or a malformed one, is simply not found here (never reveal it exists).
fn client_id(raw: &str) -> Result<ClientId, Problem> {
    ClientId::parse(raw).map_err(|_| Problem::not_found("no such application"))
}

fn input(body: &[u8]) -> Result<ApplicationInput, Problem> {
    serde_json::from_slice(body)
        .map_err(|e| Problem::bad_request(format!("invalid application: {e}")))
}

fn with_secret(app: &svc_domain::Application, secret: Option<String>) -> serde_json::Value {
    let mut view = serde_json::to_value(ApplicationView::from(app)).unwrap_or_default();
    if let (Some(secret), Some(map)) = (secret, view.as_object_mut()) {
        map.insert("client_secret".into(), json!(secret));
    }
    view
}

async fn create(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let scope = format!(
        "{}:{}",
        caller.tenant.tenant.id,
        caller.actor.as_audit_string()
    );
    let ctx = state.manage.clone();
    idempotent(
        &ctx,
        &scope,
        &headers,
        (&Method::POST, "/api/v1/applications", &body),
        || async {
            let input = match input(&body) {
                Ok(input) => input,
                Err(problem) => return problem.into_response(),
            };
            match apps::create(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await
            {
                Ok((app, secret)) => {
                    (StatusCode::CREATED, Json(with_secret(&app, secret))).into_response()
                }
                Err(e) => Problem::from(e).into_response(),
            }
        },
    )
    .await
}

async fn list(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    Query(page): Query<Page>,
) -> Result<Response, Problem> {
    let after = match page.after.as_deref() {
        Some(raw) => Some(
            ClientId::parse(raw)
                .map_err(|_| Problem::bad_request("after: not an application id"))?,
        ),
        None => None,
    };
    let (items, next) = apps::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        page.limit,
    )
    .await?;
    let items: Vec<ApplicationView> = items.iter().map(ApplicationView::from).collect();
    Ok(Json(json!({ "items": items, "next_cursor": next })).into_response())
}

async fn read(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let app = apps::get(&state.manage, &caller.tenant.tenant.id, &client_id(&id)?).await?;
    Ok(Json(ApplicationView::from(&app)).into_response())
}

async fn update(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let (app, secret) = apps::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        input(&body)?,
    )
    .await?;
    Ok(Json(with_secret(&app, secret)).into_response())
}

async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    apps::delete(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &client_id(&id)?,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn rotate_secret(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let secret = apps::rotate_secret(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
    )
    .await?;
    Ok(Json(json!({ "client_id": id, "client_secret": secret })).into_response())
}

/// Filters of `GET /api/v1/audit-logs`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    action: Option<String>,
    actor: Option<String>,
    target: Option<String>,
    /// RFC 3339.
    since: Option<String>,
    /// RFC 3339.
    until: Option<String>,
    before: Option<String>,
    limit: Option<u32>,
}

fn instant(field: &str, raw: Option<&str>) -> Result<Option<OffsetDateTime>, Problem> {
    raw.map(|s| {
        OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
            .map_err(|_| Problem::bad_request(format!("{field}: expected an RFC 3339 timestamp")))
    })
    .transpose()
}

async fn audit_logs(
    State(state): State<ApiState>,
    caller: Authorized<AuditRead>,
    Query(q): Query<AuditQuery>,
) -> Result<Response, Problem> {
    let filter = AuditFilter {
        action: q.action,
        actor: q.actor,
        target: q.target,
        since: instant("since", q.since.as_deref())?,
        until: instant("until", q.until.as_deref())?,
    };
    let before = match q.before.as_deref() {
        Some(raw) => Some(
            AuditEntryId::parse(raw)
                .map_err(|_| Problem::bad_request("before: not an audit entry id"))?,
        ),
        None => None,
    };
    let (entries, next) = audit::list_audit(
        &state.manage,
        &caller.tenant.tenant.id,
        &filter,
        before.as_ref(),
        q.limit,
    )
    .await?;
    Ok(Json(json!({ "items": entries, "next_cursor": next })).into_response())
}
