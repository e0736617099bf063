//! `GET /api/v1/tenant-users/{id}/login-history`: a person's sign-in attempts, for the tenant's
//! administrators (scope `users:read`). Registered with the other tenant-user routes.

use crate::Problem;
use crate::api::conventions::{self, ListQuery};
use crate::api::{ApiState, Authorized, UsersRead};
use crate::openapi::tags;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use svc_domain::{LoginRecordId, UserId};
use svc_manage::users::{self, LoginRecordView};
use utoipa::ToSchema;

/// A page of a user's login history.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct LoginHistoryPage {
    /// The attempts of this page, newest first unless `order=asc`.
    items: Vec<LoginRecordView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// Lists a user's sign-in attempts.
#[utoipa::path(
    get, path = "/api/v1/tenant-users/{id}/login-history", tag = tags::USERS,
    operation_id = "listTenantUserLoginHistory",
    summary = "List a user's login history",
    description = "Every sign-in attempt on the user's account — successful, refused for a \
        wrong password (or an account that may not sign in), or refused while the account was \
        locked — with its time, client address, browser and method, newest first (`order=asc` \
        for oldest first), a page at a time: pass the `next_cursor` of a page as `after` to \
        get the next one. Attempts that name no account are in nobody's history. A removed \
        user's history stays readable. Unknown query parameters are refused (`400`).",
    params(
        ("id" = String, Path, description = "The user's id.",
         example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"),
        ListQuery,
    ),
    responses((status = 200, description = "One page of the login history.",
               body = LoginHistoryPage)),
    security(("tenant_token" = ["users:read"])),
)]
pub(super) async fn login_history(
    State(state): State<ApiState>,
    caller: Authorized<UsersRead>,
    Path(id): Path<String>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let id = UserId::parse(&id).map_err(|_| Problem::not_found("no such user"))?;
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(
        q.after.as_deref(),
        LoginRecordId::parse,
        "not a login history record id",
    )?;
    let (records, next) = users::login_history(
        &state.manage,
        &caller.tenant.tenant.id,
        &id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(LoginHistoryPage {
        items: records.iter().map(LoginRecordView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}
