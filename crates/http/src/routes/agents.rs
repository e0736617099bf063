//! `/api/v1/agents` (scopes `agents:read|write`): the tenant's registered agents — software that
//! acts with a key it registered — and their OpenAPI operations: register, list, read, change
//! (suspend and reactivate included) and revoke. Thin handlers over `svc_manage::agents`,
//! always within the caller's own tenant: another tenant's agent, or a malformed id, is simply
//! not found. Reads and changes carry the agent's `ETag`; changes honour `If-Match`.

use super::organizations::body;
use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{AgentsRead, AgentsWrite, ApiState, Authorized, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_domain::{Agent, AgentId};
use svc_manage::agents::{self, AgentPatch, AgentView, NewAgent};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
const BASE: &str = "/api/v1/agents";

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(register, list))
        .routes(routes!(read, update, revoke))
}

/// The agent routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn location(id: &str) -> String {
    format!("{BASE}/{id}")
}

/// `200` with the agent and its `ETag`.
fn tagged(agent: &Agent) -> Response {
    conventions::with_etag(
        Json(AgentView::from(agent)).into_response(),
        agent.updated_at,
    )
}

#[utoipa::path(
    post, path = "/api/v1/agents", tag = tags::AGENTS,
    operation_id = "registerAgent",
    summary = "Register an agent",
    description = "Registers software that acts — for itself, or for people who delegate to \
        it — and proves who it is with a key it holds: `jwks` is the public half (1 to 10 \
        keys, at most 16 KiB; private members are refused). No secret is issued.\n\n\
        `owner` is the person (`usr_…`, able to sign in) or the application (`app_…`) of this \
        tenant who answers for the agent. `allowed_scopes` and `allowed_resources` bound what \
        it may ever be granted (never the OpenID Connect sign-in scopes); `metadata` is a free \
        object of at most 4 KiB. A tenant registers at most 1000 agents (`409` beyond). The \
        agent starts `active`. Audited as `agent.registered`, announced as \
        `admin.agent.registered`. With an `idempotency-key`, a retry with the same key and \
        body replays the first answer.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "register-travel-agent-2026-11-25"),
    ),
    request_body(content = NewAgent, content_type = "application/json"),
    responses(
        (status = 201, description = "The agent, registered.", body = AgentView,
         headers(("Location" = String, description = "The agent's URL: `/api/v1/agents/{id}`.")),
         links(
            ("GetAgent" = (operation_id = "getAgent",
                           parameters(("id" = "$response.body#/id")),
                           description = "Read the agent registered.")),
            ("UpdateAgent" = (operation_id = "updateAgent",
                              parameters(("id" = "$response.body#/id")),
                              description = "Change or suspend the agent registered.")),
            ("RevokeAgent" = (operation_id = "revokeAgent",
                              parameters(("id" = "$response.body#/id")),
                              description = "Revoke the agent registered.")),
         )),
    ),
    security(("tenant_token" = ["agents:write"])),
)]
async fn register(
    State(state): State<ApiState>,
    caller: Authorized<AgentsWrite>,
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
        |bytes| body::<NewAgent>(bytes, "agent"),
        |input| async move {
            let agent = agents::register(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(AgentView::from(&agent))
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// A page of agents.
#[derive(Debug, Serialize, ToSchema)]
struct AgentList {
    /// The agents of this page, in registration order (oldest first unless `order=desc`).
    items: Vec<AgentView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/agents", tag = tags::AGENTS,
    operation_id = "listAgents",
    summary = "List agents",
    description = "The tenant's agents in registration order (oldest first; `order=desc` for \
        newest first), suspended and revoked ones included, a page at a time: pass \
        `next_cursor` as `after` for the next page; it is `null` on the last.",
    params(ListQuery),
    responses((status = 200, description = "A page of agents.", body = AgentList)),
    security(("tenant_token" = ["agents:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<AgentsRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), AgentId::parse, "not an agent id")?;
    let (items, next) = agents::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(AgentList {
        items,
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/agents/{id}", tag = tags::AGENTS,
    operation_id = "getAgent",
    summary = "Read an agent",
    description = "One agent of the tenant, in any status. The `ETag` names this revision: \
        send it as `If-Match` on a change to make sure nobody changed the agent in between.",
    params(("id" = String, Path, description = "The agent's id (`agt_…`).",
            example = "agt_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses(
        (status = 200, description = "The agent.", body = AgentView,
         headers(("ETag" = String, description = "The agent's current revision (strong)."))),
    ),
    security(("tenant_token" = ["agents:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<AgentsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let agent = agents::get(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(tagged(&agent))
}

#[utoipa::path(
    patch, path = "/api/v1/agents/{id}", tag = tags::AGENTS,
    operation_id = "updateAgent",
    summary = "Change, suspend or reactivate an agent",
    description = "Changes only the members present: `name`, `jwks`, `allowed_scopes`, \
        `allowed_resources` and `metadata` (each list and object replacing the whole value), \
        and `status` (`active` or `suspended`). `null` is refused for every member. The same rules as on \
        registration apply. A revoked agent cannot change (`409`). A body that changes nothing \
        writes nothing. Audited as `agent.updated`, announced as `admin.agent.updated`.\n\n\
        With `If-Match`, the change applies only if the agent is still at one of the given \
        revisions (`412` otherwise).",
    params(
        ("id" = String, Path, description = "The agent's id (`agt_…`).",
         example = "agt_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = AgentPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The agent as changed.", body = AgentView,
         headers(("ETag" = String, description = "The agent's new revision."))),
    ),
    security(("tenant_token" = ["agents:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<AgentsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let precondition = conventions::precondition(&headers)?;
    let patch: AgentPatch = body(&bytes, "agent")?;
    let agent = agents::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&agent))
}

#[utoipa::path(
    delete, path = "/api/v1/agents/{id}", tag = tags::AGENTS,
    operation_id = "revokeAgent",
    summary = "Revoke an agent",
    description = "Revokes the agent for good: it can never be reactivated or changed (a new \
        agent is registered instead), and stays listed as `revoked`. Revoking a \
        revoked agent succeeds and changes nothing. Audited as `agent.revoked`, announced as \
        `admin.agent.revoked`. With `If-Match`, only if the agent is still at one of the given \
        revisions (`412` otherwise).",
    params(
        ("id" = String, Path, description = "The agent's id (`agt_…`).",
         example = "agt_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the revocation was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Revoked.")),
    security(("tenant_token" = ["agents:write"])),
)]
async fn revoke(
    State(state): State<ApiState>,
    caller: Authorized<AgentsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let precondition = conventions::precondition(&headers)?;
    agents::revoke(
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

    /// Every operation is tagged, named, secured with the tenant token and exactly the scope its
    /// handler's `Authorized<…>` demands, and each change declares `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let (r, w) = ("agents:read", "agents:write");
        let one = "/api/v1/agents/{id}";
        let expected: Vec<_> = [
            (BASE, "post", w, false),
            (BASE, "get", r, false),
            (one, "get", r, false),
            (one, "patch", w, true),
            (one, "delete", w, true),
        ]
        .into_iter()
        .map(|(path, method, scope, if_match)| (path, method, scope, if_match, tags::AGENTS))
        .collect();
        let json = serde_json::to_value(operations()).unwrap();
        crate::openapi::assert_operations(&json, &expected);
    }

    /// Unknown members are refused, naming them; the examples are present.
    #[test]
    fn bodies_are_closed() {
        let json = serde_json::to_value(operations()).unwrap();
        let schemas = &json["components"]["schemas"];
        for name in ["NewAgent", "AgentPatch", "AgentView"] {
            assert!(schemas[name]["example"].is_object(), "{name}");
        }
        let refused = body::<NewAgent>(
            br#"{"name": "a", "owner": "usr_x", "jwks": {}, "secret": "s"}"#,
            "agent",
        )
        .unwrap_err();
        assert!(refused.detail().contains("secret"), "{}", refused.detail());
        let refused = body::<AgentPatch>(br#"{"name": null}"#, "agent").unwrap_err();
        assert!(refused.detail().contains("null"), "{}", refused.detail());
    }
}
