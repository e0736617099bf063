//! `/api/v1/tenant-users/{id}/second-factors`: what second factors a person has set up
//! (`users:read`; never a secret) and resetting them all (`users:write`), e.g. after a lost
//! phone with no backup codes left. Registered with the other tenant-user routes.

use crate::Problem;
use crate::api::{ApiState, Authorized, UsersRead, UsersWrite};
use crate::openapi::tags;
use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use svc_domain::UserId;
use svc_manage::users::{self, SecondFactorsView};

fn user_id(raw: &str) -> Result<UserId, Problem> {
    UserId::parse(raw).map_err(|_| Problem::not_found("no such user"))
}

/// Lists a user's second factors.
#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}/second-factors", tag = tags::USERS,
    operation_id = "listTenantUserSecondFactors",
    summary = "List a user's second factors",
    description = "The second factors the user confirmed (a TOTP authenticator app; enrolments \
        not yet confirmed are left out), oldest first, and how many unused backup codes they \
        have. Secrets and codes are never shown.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    responses((status = 200, description = "The user's second factors.",
               body = SecondFactorsView)),
    security(("tenant_token" = ["users:read"])),
)]
pub(super) async fn second_factors(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    let view = users::second_factors(&state.manage, &caller.tenant.tenant.id, &id).await?;
    Ok(Json(view).into_response())
}

/// Resets a user's second factors.
#[utoipa::path(
    delete, path = "/api/v1/tenant-users/{id}/second-factors", tag = tags::USERS,
    operation_id = "resetTenantUserSecondFactors",
    summary = "Reset a user's second factors",
    description = "Removes every second factor and backup code of the user (a lost \
        authenticator with no backup codes left): their next sign-in needs only the password, \
        and they can set up a new authenticator. Emits `auth.mfa.removed` for each factor and \
        is audited as `tenant_user.second_factors_reset`. Idempotent.",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
    ),
    responses((status = 204, description = "Reset.")),
    security(("tenant_token" = ["users:write"])),
)]
pub(super) async fn reset_second_factors(
    State(state): State<ApiState>,
    caller: Authorized<UsersWrite>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let id = user_id(&id)?;
    users::reset_second_factors(
        &state.manage,
        (&caller.tenant.tenant, &caller.tenant.issuer),
        &caller.actor,
        &caller.meta,
        &id,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
