//! `/api/v1/delegations` (scopes `agents:read|write`): the grants people gave agents on the
//! hosted consent page (`/auth/delegate`), as administrators see them — a person's list, one
//! delegation, revocation. Thin handlers over `svc_manage::delegations`, always within the
//! caller's own tenant: another tenant's delegation, or a malformed id, is simply not found.
//! Delegations are created by people only, never through this API.

use crate::Problem;
use crate::api::{AgentsRead, AgentsWrite, ApiState, Authorized};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::{Deserialize, Serialize};
use svc_manage::delegations::{self, DelegationView};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(read, revoke))
}

/// The delegation routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// Whose delegations to list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct DelegationQuery {
    /// The person who granted them (`usr_…`); at least one of `user_id` and `agent_id`.
    #[param(example = "usr_01jd2p6r8t0v2x4z6b8d0f2h4k")]
    user_id: Option<String>,
    /// Only those to this agent (`agt_…`); alone, every person's to it.
    #[param(example = "agt_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    agent_id: Option<String>,
}

/// Delegations of a person or to an agent.
#[derive(Debug, Serialize, ToSchema)]
struct DelegationList {
    /// Newest first, revoked and expired ones included (at most 200).
    items: Vec<DelegationView>,
}

#[utoipa::path(
    get, path = "/api/v1/delegations", tag = tags::AGENTS,
    operation_id = "listDelegations",
    summary = "List delegations of a person or to an agent",
    description = "The delegations people granted agents on the hosted consent page \
        (`/auth/delegate`), newest first, revoked and expired ones included (`live` says \
        whether the agent may act on one now): those the person `user_id` granted (only those \
        to `agent_id` when given too), or every person's to `agent_id`. One of the two is \
        required (`400` otherwise).",
    params(DelegationQuery),
    responses((status = 200, description = "The delegations asked for.", body = DelegationList)),
    security(("tenant_token" = ["agents:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<AgentsRead>,
    query: Result<Query<DelegationQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let items = delegations::list(
        &state.manage,
        &caller.tenant.tenant.id,
        q.user_id.as_deref(),
        q.agent_id.as_deref(),
    )
    .await?;
    Ok(Json(DelegationList { items }).into_response())
}

#[utoipa::path(
    get, path = "/api/v1/delegations/{id}", tag = tags::AGENTS,
    operation_id = "getDelegation",
    summary = "Read a delegation",
    description = "One delegation of the tenant, revoked or expired included.",
    params(("id" = String, Path, description = "The delegation's id (`dlg_…`).",
            example = "dlg_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The delegation.", body = DelegationView)),
    security(("tenant_token" = ["agents:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<AgentsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let found = delegations::get(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(Json(found).into_response())
}

#[utoipa::path(
    delete, path = "/api/v1/delegations/{id}", tag = tags::AGENTS,
    operation_id = "revokeDelegation",
    summary = "Revoke a delegation",
    description = "Revokes the delegation: the agent can no longer act for the person with it, \
        and the tokens it obtained on it are inactive at introspection at once (resource \
        servers that validate tokens locally see it at their `exp`). It stays listed as not \
        `live`. Revoking a revoked delegation succeeds and changes nothing. Audited as \
        `delegation.revoked`, announced as `admin.delegation.revoked`.",
    params(("id" = String, Path, description = "The delegation's id (`dlg_…`).",
            example = "dlg_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 204, description = "Revoked.")),
    security(("tenant_token" = ["agents:write"])),
)]
async fn revoke(
    State(state): State<ApiState>,
    caller: Authorized<AgentsWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    delegations::revoke(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation is tagged, named and secured with the tenant token and exactly the scope
    /// its handler's `Authorized<…>` demands; none takes `If-Match` (a revocation is final).
    #[test]
    fn operations_name_their_scope() {
        let (base, one) = ("/api/v1/delegations", "/api/v1/delegations/{id}");
        let expected: Vec<_> = [
            (base, "get", "agents:read", false),
            (one, "get", "agents:read", false),
            (one, "delete", "agents:write", false),
        ]
        .into_iter()
        .map(|(path, method, scope, if_match)| (path, method, scope, if_match, tags::AGENTS))
        .collect();
        let json = serde_json::to_value(operations()).unwrap();
        crate::openapi::assert_operations(&json, &expected);
        assert!(json["components"]["schemas"]["DelegationView"]["example"].is_object());
    }
}
