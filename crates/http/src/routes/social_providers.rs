//! `/api/v1/social-providers` (scopes `policies:read|write`): the tenant's social sign-in
//! providers — configure or replace (`PUT`), list, read, remove — and a person's links to them
//! (`/api/v1/tenant-users/{id}/social-links`, scopes `users:read|write`), as thin handlers over
//! `svc_manage::social`. Routed only while `[social]` is on (otherwise the plain 404 of an
//! unknown path, and absent from the API reference). Tenant-wide callers only: a provider
//! decides who signs in as any of the tenant's people. Another tenant's provider or person is
//! not found.

use super::organizations::body;
use crate::Problem;
use crate::api::{ApiState, Authorized, PoliciesRead, PoliciesWrite, UsersRead, UsersWrite};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::Serialize;
use svc_domain::UserId;
use svc_manage::social::links::{self, SocialLinkView};
use svc_manage::social::{self, SocialProviderInput, SocialProviderView};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The paths of the routes, for the API reference's list of what a deployment serves.
pub const PATHS: [&str; 4] = [
    "/api/v1/social-providers",
    "/api/v1/social-providers/{slug}",
    "/api/v1/tenant-users/{id}/social-links",
    "/api/v1/tenant-users/{id}/social-links/{provider}",
];

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(list_providers))
        .routes(routes!(put_provider, get_provider, remove_provider))
        .routes(routes!(list_links))
        .routes(routes!(remove_link))
}

/// The routes, state applied; callers merge them only with `[social]` on.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes (a deployment without `[social]` leaves them out of
/// its document).
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn user_id(raw: &str) -> Result<UserId, Problem> {
    UserId::parse(raw).map_err(|_| Problem::not_found("no such user"))
}

#[utoipa::path(
    put, path = "/api/v1/social-providers/{slug}", tag = tags::SOCIAL,
    operation_id = "putSocialProvider",
    summary = "Configure a social sign-in provider",
    description = "Configures the provider `slug` (1 to 32 of `a-z`, `0-9`, `-`, starting with \
        a letter), or replaces it. `preset` fixes the protocol and endpoints: `google`, \
        `microsoft` (`directory`: `common`, `organizations`, `consumers`, a directory id or \
        domain; Microsoft vouches for addresses only by its optional claim `xms_edov`), \
        `apple` (`apple`: team id, key id \
        and the `.p8` key; no `client_secret`; answers by `form_post`), `github` (`base_url` \
        for GitHub Enterprise Server), `gitlab` (`base_url` for a self-managed GitLab), and, \
        with `[generic_oauth]` on, `oidc` (`issuer`) and `oauth2` (`authorization_endpoint`, \
        `token_endpoint`, `userinfo_endpoint`, optional `emails_endpoint`). An OpenID \
        provider's discovery document is read first (through the outbound guard: no redirects, \
        5 s, public addresses only in production) and must name exactly the issuer expected; a \
        failure is a `400` naming `issuer`, `base_url` or `directory`. `client_secret` (or \
        Apple's key) is required every time, sealed at once and never shown. Register \
        `redirect_uri` from the answer at the provider. A tenant holds at most 16 providers \
        (`409` for another). Every refusal names the member at fault; unknown members are \
        refused. Audited as `social_provider.configured`; emits `social.configured`.",
    params(("slug" = String, Path, description = "The provider's name within the tenant.",
            example = "google")),
    request_body(content = SocialProviderInput, content_type = "application/json"),
    responses(
        (status = 200, description = "The provider, replaced.", body = SocialProviderView),
        (status = 201, description = "The provider, new.", body = SocialProviderView),
    ),
    security(("tenant_token" = ["policies:write"])),
)]
async fn put_provider(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
    Path(slug): Path<String>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let input = body::<SocialProviderInput>(&bytes, "social provider")?;
    let (provider, created) = social::put(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &slug,
        input,
    )
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let view = SocialProviderView::new(&provider, &caller.tenant.issuer);
    Ok((status, Json(view)).into_response())
}

/// Every social provider of the tenant.
#[derive(Debug, Serialize, ToSchema)]
struct SocialProviderList {
    /// The providers by slug, enabled or not (a tenant has at most 16).
    items: Vec<SocialProviderView>,
}

#[utoipa::path(
    get, path = "/api/v1/social-providers", tag = tags::SOCIAL,
    operation_id = "listSocialProviders",
    summary = "List social sign-in providers",
    description = "Every social provider of the tenant (at most 16) by slug, enabled or not, \
        with its endpoints and the redirect URI to register. Secrets and keys are never shown.",
    responses((status = 200, description = "The providers.", body = SocialProviderList)),
    security(("tenant_token" = ["policies:read"])),
)]
async fn list_providers(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesRead>,
) -> Result<Response, Problem> {
    let providers = social::list(&state.manage, &caller.tenant.tenant.id).await?;
    let issuer = &caller.tenant.issuer;
    Ok(Json(SocialProviderList {
        items: providers
            .iter()
            .map(|p| SocialProviderView::new(p, issuer))
            .collect(),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/social-providers/{slug}", tag = tags::SOCIAL,
    operation_id = "getSocialProvider",
    summary = "Read a social sign-in provider",
    description = "One social provider of the tenant: its preset, client id, scopes, \
        endpoints and the redirect URI to register. The client secret and Apple's key are \
        never shown. `404` when the tenant has none by that slug.",
    params(("slug" = String, Path, description = "The provider's name within the tenant.",
            example = "google")),
    responses((status = 200, description = "The provider.", body = SocialProviderView)),
    security(("tenant_token" = ["policies:read"])),
)]
async fn get_provider(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesRead>,
    Path(slug): Path<String>,
) -> Result<Response, Problem> {
    let provider = social::get(&state.manage, &caller.tenant.tenant.id, &slug).await?;
    Ok(Json(SocialProviderView::new(&provider, &caller.tenant.issuer)).into_response())
}

#[utoipa::path(
    delete, path = "/api/v1/social-providers/{slug}", tag = tags::SOCIAL,
    operation_id = "removeSocialProvider",
    summary = "Remove a social sign-in provider",
    description = "Removes the provider and every link from its accounts to people (and the \
        sign-ins in flight through it). People keep their accounts and sign in however else \
        they can. Audited as `social_provider.removed`; emits `social.configured` with \
        `removed: true`.",
    params(("slug" = String, Path, description = "The provider's name within the tenant.",
            example = "google")),
    responses((status = 204, description = "Removed.")),
    security(("tenant_token" = ["policies:write"])),
)]
async fn remove_provider(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
    Path(slug): Path<String>,
) -> Result<Response, Problem> {
    social::remove(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &slug,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// A person's links to social providers.
#[derive(Debug, Serialize, ToSchema)]
struct SocialLinkList {
    /// The links by provider slug (at most one per provider).
    items: Vec<SocialLinkView>,
}

#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}/social-links", tag = tags::USERS,
    operation_id = "listTenantUserSocialLinks",
    summary = "List a user's social links",
    description = "The upstream accounts that sign in as this person, one per provider at \
        most: the provider's slug, the person's subject there and the address it gave when \
        linked. No upstream token is kept, so none is shown.",
    params(("id" = String, Path, description = "The user's id.",
            example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")),
    responses((status = 200, description = "The user's links.", body = SocialLinkList)),
    security(("tenant_token" = ["users:read"])),
)]
async fn list_links(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let user = user_id(&id)?;
    let items = links::list(&state.manage, &caller.tenant.tenant.id, &user).await?;
    Ok(Json(SocialLinkList {
        items: items.iter().map(SocialLinkView::from).collect(),
    })
    .into_response())
}

#[utoipa::path(
    delete, path = "/api/v1/tenant-users/{id}/social-links/{provider}",
    tag = tags::USERS,
    operation_id = "removeTenantUserSocialLink",
    summary = "Remove a user's social link",
    description = "Unlinks the person's account at `provider`: it no longer signs in as them \
        (signing in there again follows the rules of a new account, never a silent link). \
        `404` when the person has no such link. Audited as \
        `tenant_user.social_link_removed`; emits `social.account.unlinked`.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ("provider" = String, Path, description = "The provider's slug.", example = "google"),
    ),
    responses((status = 204, description = "Unlinked.")),
    security(("tenant_token" = ["users:write"])),
)]
async fn remove_link(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path((id, provider)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let user = user_id(&id)?;
    links::remove(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &user,
        &provider,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::assert_operations;

    #[test]
    fn every_operation_is_documented_with_its_scope() {
        let (pr, pw) = ("policies:read", "policies:write");
        let (ur, uw) = ("users:read", "users:write");
        let p = tags::SOCIAL;
        let u = tags::USERS;
        let doc = serde_json::to_value(operations()).unwrap();
        assert_operations(
            &doc,
            &[
                (PATHS[0], "get", pr, false, p),
                (PATHS[1], "put", pw, false, p),
                (PATHS[1], "get", pr, false, p),
                (PATHS[1], "delete", pw, false, p),
                (PATHS[2], "get", ur, false, u),
                (PATHS[3], "delete", uw, false, u),
            ],
        );
    }
}
