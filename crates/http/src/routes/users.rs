//! `/api/v1/tenant-users` (scopes `users:read|write`): thin handlers over
//! `svc_manage::users`, always within the token's own tenant. Another tenant's user id, or a
//! malformed one, is simply not found.

use crate::Problem;
use crate::api::{ApiState, Authorized, UsersRead, UsersWrite, idempotent};
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use http::{HeaderMap, Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use svc_domain::{Email, SessionId, UserId, UserStatus};
use svc_manage::users::{self, NewUser, SessionView, UserPatch, UserView};
use svc_store::UserFilter;

/// The tenant user routes.
pub fn router(state: ApiState) -> Router {
    Router::new()
        .route("/api/v1/tenant-users", post(create).get(list))
        .route(
            "/api/v1/tenant-users/{id}",
            get(read).patch(update).delete(remove),
        )
        .route("/api/v1/tenant-users/{id}/suspend", post(suspend))
        .route("/api/v1/tenant-users/{id}/reactivate", post(reactivate))
        .route("/api/v1/tenant-users/{id}/sessions", get(sessions))
        .route(
            "/api/v1/tenant-users/{id}/sessions/{session_id}",
            delete(revoke_session),
        )
        .with_state(state)
}

fn user_id(raw: &str) -> Result<UserId, Problem> {
    UserId::parse(raw).map_err(|_| Problem::not_found("no such user"))
}

fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    serde_json::from_slice(bytes).map_err(|e| Problem::bad_request(format!("invalid user: {e}")))
}

fn view(user: &svc_domain::User) -> Json<UserView> {
    Json(UserView::from(user))
}

async fn create(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
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
        (&Method::POST, "/api/v1/tenant-users", &bytes),
        || async {
            let input: NewUser = match body(&bytes) {
                Ok(input) => input,
                Err(problem) => return problem.into_response(),
            };
            match users::create(
                &state.manage,
                &caller.tenant.tenant,
                &caller.tenant.issuer,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await
            {
                Ok(user) => (StatusCode::CREATED, view(&user)).into_response(),
                Err(e) => Problem::from(e).into_response(),
            }
        },
    )
    .await
}

/// Query of `GET /api/v1/tenant-users`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// `invited`, `pre_provisioned`, `active`, `suspended` or `removed`.
    status: Option<String>,
    /// Exact address (normalised before matching).
    email: Option<String>,
    /// Cursor: the last id of the previous page.
    after: Option<String>,
    /// Page size, 1 to 200 (default 50).
    limit: Option<u32>,
}

async fn list(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
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
    let after = q
        .after
        .as_deref()
        .map(|a| UserId::parse(a).map_err(|_| Problem::bad_request("after: not a user id")))
        .transpose()?;
    let filter = UserFilter { status, email };
    let (items, next) = users::list(
        &state.manage,
        &caller.tenant.tenant.id,
        &filter,
        after.as_ref(),
        q.limit,
    )
    .await?;
    let items: Vec<UserView> = items.iter().map(UserView::from).collect();
    Ok(Json(json!({ "items": items, "next_cursor": next })).into_response())
}

async fn read(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let user = users::get(&state.manage, &caller.tenant.tenant.id, &user_id(&id)?).await?;
    Ok(view(&user).into_response())
}

async fn update(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let patch: UserPatch = body(&bytes)?;
    let user = users::update(
        &state.manage,
        &caller.tenant.tenant,
        &caller.tenant.issuer,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
    )
    .await?;
    Ok(view(&user).into_response())
}

async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = &caller.tenant.tenant.id;
    users::remove(
        &state.manage,
        tenant,
        &caller.actor,
        &caller.meta,
        &user_id(&id)?,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn suspend(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = &caller.tenant.tenant.id;
    let user = users::suspend(
        &state.manage,
        tenant,
        &caller.actor,
        &caller.meta,
        &user_id(&id)?,
    )
    .await?;
    Ok(view(&user).into_response())
}

async fn reactivate(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = &caller.tenant.tenant.id;
    let id = user_id(&id)?;
    let user = users::reactivate(&state.manage, tenant, &caller.actor, &caller.meta, &id).await?;
    Ok(view(&user).into_response())
}

async fn sessions(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let tenant = &caller.tenant.tenant.id;
    let sessions = users::list_sessions(&state.manage, tenant, &user_id(&id)?).await?;
    let items: Vec<SessionView> = sessions.iter().map(SessionView::from).collect();
    Ok(Json(json!({ "items": items })).into_response())
}

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
