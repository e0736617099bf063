//! `/api/v1/scim/tokens*` (scopes `users:read|write`): the SCIM bearer tokens a directory
//! presents at the tenant's `/scim/v2` (CONTRACTS.md "Organizations, roles, keys, SCIM"). Thin
//! handlers over `svc_manage::scim::tokens`. Tokens can be issued whether or not the deployment
//! serves SCIM (`[scim].enabled`), so a tenant can prepare its directory before the operator
//! opens the endpoint.

use crate::Problem;
use crate::api::{ApiState, Authorized, UsersRead, UsersWrite};
use crate::openapi::tags;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use svc_manage::scim::tokens as scim_tokens;
use svc_manage::scim::{CreatedScimTokenView, ScimTokenInput, ScimTokenView};
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create_token, list_tokens))
        .routes(routes!(revoke_token))
}

/// The SCIM token routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// Issues a SCIM token.
#[utoipa::path(
    post, path = "/api/v1/scim/tokens", tag = tags::USERS,
    operation_id = "createScimToken",
    summary = "Issue a SCIM token",
    description = "A bearer token for a directory (Entra ID, Okta) to provision people at the \
        tenant's `/scim/v2` (RFC 7644), served while the deployment enables SCIM \
        (`[scim].enabled`). With `organization_id`, the token provisions that organization \
        only: it sees its members alone and the people it creates become members. The token \
        (`svcscim_…`) is returned in `token` this once: only its hash is stored. At most 100 \
        per tenant (revoked ones count). Audited as `scim_token.created`.",
    request_body(content = ScimTokenInput, content_type = "application/json"),
    responses((status = 201, description = "Issued; `token` is shown this once.",
               body = CreatedScimTokenView,
               headers(("Location" = String,
                        description = "The token's handle: `/api/v1/scim/tokens/{id}`.")))),
    security(("tenant_token" = ["users:write"])),
)]
async fn create_token(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    body: Bytes,
) -> Result<Response, Problem> {
    let input: ScimTokenInput = if body.is_empty() {
        ScimTokenInput::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Problem::bad_request(format!("invalid SCIM token request: {e}")))?
    };
    let created = scim_tokens::create_token(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        input,
    )
    .await?;
    let location = format!("/api/v1/scim/tokens/{}", created.view.id);
    Ok(crate::api::conventions::created(&location, created))
}

/// Lists the SCIM tokens.
#[utoipa::path(
    get, path = "/api/v1/scim/tokens", tag = tags::USERS,
    operation_id = "listScimTokens",
    summary = "List SCIM tokens",
    description = "The tenant's SCIM tokens (at most 100), oldest first, revoked ones included; \
        never the tokens themselves. One page: `next_cursor` is always `null`.",
    responses((status = 200, description = "The tokens.",
               body = inline(crate::api::conventions::Page<ScimTokenView>))),
    security(("tenant_token" = ["users:read"])),
)]
async fn list_tokens(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
) -> Result<Response, Problem> {
    let items = scim_tokens::list_tokens(&state.manage, &caller.tenant.tenant.id).await?;
    Ok(crate::api::conventions::Page::respond(
        items,
        None::<String>,
    ))
}

/// Revokes a SCIM token.
#[utoipa::path(
    delete, path = "/api/v1/scim/tokens/{id}", tag = tags::USERS,
    operation_id = "revokeScimToken",
    summary = "Revoke a SCIM token",
    description = "Revokes the SCIM token at once: the directory's next request is refused \
        (401). People it provisioned stay. Audited as `scim_token.revoked`.",
    params(("id" = String, Path, description = "The token's handle (`scimt_…`).",
            example = "scimt_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 204, description = "Revoked.")),
    security(("tenant_token" = ["users:write"])),
)]
async fn revoke_token(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    scim_tokens::revoke_token(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
