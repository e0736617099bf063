//! `/api/v1/registration-policy` and `/api/v1/registration-tokens*` (scopes
//! `applications:read|write`): the tenant's dynamic client registration policy (`disabled`, the
//! default, `open` or `protected`) and its initial access tokens (RFC 7591 §3). Thin handlers
//! over `svc_manage::registration`. The policy only matters while the deployment serves
//! `/oauth/register` (`[dynamic_registration].enabled`); it can be set either way, so a tenant
//! can decide before the operator opens the endpoint.

use crate::Problem;
use crate::api::{ApiState, ApplicationsRead, ApplicationsWrite, Authorized};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use svc_manage::registration::{
    self as dcr, CreatedInitialAccessTokenView, InitialAccessTokenInput, InitialAccessTokenView,
    RegistrationPolicyInput, RegistrationPolicyView,
};
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(read, set))
        .routes(routes!(create_token, list_tokens))
        .routes(routes!(delete_token))
}

/// The registration policy routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// Reads the registration policy.
#[utoipa::path(
    get, path = "/api/v1/registration-policy", tag = tags::APPLICATIONS,
    operation_id = "getRegistrationPolicy",
    summary = "Read the dynamic client registration policy",
    description = "Who may register applications at `/oauth/register` (RFC 7591): `disabled` \
        (the default: nobody), `open` (anyone, within the deployment's hourly limit per \
        address) or `protected` (only with one of the tenant's initial access tokens, \
        `/api/v1/registration-tokens`). Registration works only while the deployment also enables it \
        (`[dynamic_registration].enabled`), which discovery's `registration_endpoint` shows. \
        Also whether client ID metadata documents are accepted, and the software statement \
        issuers (RFC 7591 §2.3) this tenant trusts beside the deployment's.",
    responses((status = 200, description = "The policy.", body = RegistrationPolicyView)),
    security(("tenant_token" = ["applications:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
) -> Result<Json<RegistrationPolicyView>, Problem> {
    Ok(Json(
        dcr::get_policy(&state.manage, &caller.tenant.tenant.id).await?,
    ))
}

/// Sets the registration policy.
#[utoipa::path(
    put, path = "/api/v1/registration-policy", tag = tags::APPLICATIONS,
    operation_id = "setRegistrationPolicy",
    summary = "Set the dynamic client registration policy",
    description = "Sets who may register applications at `/oauth/register`: `disabled`, \
        `open` or `protected`. Applications already registered stay (delete them through \
        `/api/v1/applications`); closing registration refuses new ones at once. \
        `software_statement_issuers`, when sent, replaces the tenant's own trusted issuers (at \
        most 8; public JWK Sets only; a refusal names `software_statement_issuers[i].issuer` or \
        `.jwks`). Audited as `registration_policy.set`.",
    request_body(content = RegistrationPolicyInput, content_type = "application/json"),
    responses((status = 200, description = "The policy now in force.",
               body = RegistrationPolicyView)),
    security(("tenant_token" = ["applications:write"])),
)]
async fn set(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    body: Bytes,
) -> Result<Json<RegistrationPolicyView>, Problem> {
    let input: RegistrationPolicyInput = serde_json::from_slice(&body)
        .map_err(|e| Problem::bad_request(format!("invalid registration policy: {e}")))?;
    Ok(Json(
        dcr::set_policy(
            &state.manage,
            &caller.tenant.tenant.id,
            &caller.actor,
            &caller.meta,
            input,
        )
        .await?,
    ))
}

/// Creates an initial access token.
#[utoipa::path(
    post, path = "/api/v1/registration-tokens", tag = tags::APPLICATIONS,
    operation_id = "createRegistrationToken",
    summary = "Create an initial access token",
    description = "An initial access token (RFC 7591 §3) for `/oauth/register` while the \
        tenant's registration policy is `protected`: presented as `Authorization: Bearer`, each \
        registration spending one use. `expires_in_secs` 60 to 31536000 (default 86400), \
        `max_uses` 1 to 10000 (absent: any number until it expires). The token (`iatok_…`) is \
        returned in `token` this once: only its hash is stored. At most 100 per tenant \
        (expired and spent ones count until deleted). Audited as \
        `initial_access_token.created`.",
    request_body(content = InitialAccessTokenInput, content_type = "application/json"),
    responses((status = 201, description = "Created; `token` is shown this once.",
               body = CreatedInitialAccessTokenView,
               headers(("Location" = String,
                        description = "The token's handle: `/api/v1/registration-tokens/{id}`.")))),
    security(("tenant_token" = ["applications:write"])),
)]
async fn create_token(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    body: Bytes,
) -> Result<Response, Problem> {
    let input: InitialAccessTokenInput = serde_json::from_slice(&body)
        .map_err(|e| Problem::bad_request(format!("invalid initial access token: {e}")))?;
    let created = dcr::create_initial_token(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        input,
    )
    .await?;
    let location = format!("/api/v1/registration-tokens/{}", created.view.id);
    Ok(crate::api::conventions::created(&location, created))
}

/// Lists the initial access tokens.
#[utoipa::path(
    get, path = "/api/v1/registration-tokens", tag = tags::APPLICATIONS,
    operation_id = "listRegistrationTokens",
    summary = "List initial access tokens",
    description = "The tenant's initial access tokens (at most 100), oldest first, with their \
        expiry and uses; never the tokens themselves. One page: `next_cursor` is always `null`.",
    responses((status = 200, description = "The tokens.",
               body = inline(crate::api::conventions::Page<InitialAccessTokenView>))),
    security(("tenant_token" = ["applications:read"])),
)]
async fn list_tokens(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
) -> Result<Response, Problem> {
    let items = dcr::list_initial_tokens(&state.manage, &caller.tenant.tenant.id).await?;
    Ok(crate::api::conventions::Page::respond(
        items,
        None::<String>,
    ))
}

/// Deletes an initial access token.
#[utoipa::path(
    delete, path = "/api/v1/registration-tokens/{id}", tag = tags::APPLICATIONS,
    operation_id = "deleteRegistrationToken",
    summary = "Delete an initial access token",
    description = "Deletes the initial access token at once: it registers nothing more. The \
        applications it allowed stay. Audited as `initial_access_token.deleted`.",
    params(("id" = String, Path, description = "The token's handle (`iat_…`).",
            example = "iat_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 204, description = "Deleted.")),
    security(("tenant_token" = ["applications:write"])),
)]
async fn delete_token(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    dcr::delete_initial_token(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
