//! `/api/v1/organizations/{id}/sso` (scopes `organizations:read|write`): an organization's
//! enterprise single sign-on connection — configure or replace (`PUT`), read, remove — as thin
//! handlers over `svc_manage::sso`, registered by `organizations::api` while
//! `[enterprise_sso]` is on (otherwise unrouted, and absent from the API reference). Another
//! tenant's organization, or a malformed id, is not found.

use super::organizations::{body, organization_id};
use crate::Problem;
use crate::api::{ApiState, OrgAuthorized, OrganizationsRead, OrganizationsWrite};
use crate::openapi::tags;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use svc_manage::sso::{self, SsoInput, SsoView};

/// The path of the routes, for the API reference's list of what a deployment serves.
pub const PATH: &str = "/api/v1/organizations/{id}/sso";

#[utoipa::path(
    put, path = "/api/v1/organizations/{id}/sso", tag = tags::ORGANIZATIONS,
    operation_id = "putOrganizationSso",
    summary = "Configure single sign-on",
    description = "Connects the organization to its OpenID provider, or replaces the \
        connection. The provider's discovery document is read first \
        (`<issuer>/.well-known/openid-configuration`, through the outbound guard: no redirects, \
        5 s, public addresses only in production) and must name exactly `issuer`; its \
        endpoints are kept. Register `redirect_uri` from the answer at the provider. \
        `client_secret` is required the first time, sealed at once and never shown; omitted on \
        a replacement, the stored one stays. `scopes` must include `openid` (default `openid \
        email profile`). With `enforced`, password sign-in is refused for addresses at the \
        organization's verified domains. People sign in through it from the sign-in page by \
        an address at one of those domains. Only a tenant-wide caller or an owner of the \
        organization may configure it (`403` for an organization admin). An unreadable \
        discovery document is a `400` naming `issuer`; unknown members are refused.",
    params(("id" = String, Path, description = "The organization's id.",
            example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    request_body(content = SsoInput, content_type = "application/json"),
    responses(
        (status = 200, description = "The connection, replaced.", body = SsoView),
        (status = 201, description = "The connection, new.", body = SsoView),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn put_sso(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let input = body::<SsoInput>(&bytes, "single sign-on connection")?;
    let (connection, created) = sso::put(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &caller.reach,
        &org,
        input,
    )
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(SsoView::new(&connection, &caller.tenant.issuer)),
    )
        .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/sso", tag = tags::ORGANIZATIONS,
    operation_id = "getOrganizationSso",
    summary = "Read single sign-on",
    description = "The organization's single sign-on connection: the provider's issuer and \
        endpoints, our client id there, scopes, enforcement and the redirect URI to register. \
        The client secret is never shown. `404` when the organization has none.",
    params(("id" = String, Path, description = "The organization's id.",
            example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    responses((status = 200, description = "The connection.", body = SsoView)),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn get_sso(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let connection = sso::get(&state.manage, &caller.tenant.tenant.id, &caller.reach, &org).await?;
    Ok(Json(SsoView::new(&connection, &caller.tenant.issuer)).into_response())
}

#[utoipa::path(
    delete, path = "/api/v1/organizations/{id}/sso", tag = tags::ORGANIZATIONS,
    operation_id = "removeOrganizationSso",
    summary = "Remove single sign-on",
    description = "Removes the connection and the links it made between the provider's \
        subjects and people. People keep their accounts and memberships and sign in however \
        else they can; enforcement ends. Only a tenant-wide caller or an owner of the \
        organization may remove it (`403` for an organization admin).",
    params(("id" = String, Path, description = "The organization's id.",
            example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    responses((status = 204, description = "Removed.")),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn remove_sso(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    sso::remove(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &caller.reach,
        &org,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
