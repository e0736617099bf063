//! `/api/v1/invitations` (scopes `users:read|write`: inviting a person is user management): the
//! tenant's invitations to join it or one of its organizations, and their OpenAPI operations,
//! declared together through `OpenApiRouter` — create, list, read, resend, revoke. Thin handlers
//! over `svc_manage::invitations`, always within the token's own tenant: another tenant's
//! invitation, or a malformed id, is simply not found. The person accepts on the hosted page
//! `/auth/join` (`crate::hosted`), not here.
//!
//! The API conventions as they apply here: the list pages with `limit`/`after`/`order` and
//! filters; a created invitation answers `201` with `Location` (replays of an idempotent create
//! included); reading, resending and revoking honour the invitation's `ETag`/`If-Match`. Bodies
//! go through the shared object reader (`organizations::body`): unknown members and non-object
//! bodies are refused naming the fault.

use super::organizations::body;
use crate::Problem;
use crate::api::conventions::{self, SortOrder};
use crate::api::{ApiState, OrgAuthorized, UsersRead, UsersWrite, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use svc_domain::{InvitationId, InvitationState, OrganizationId};
use svc_manage::invitations::{self, InvitationStateSchema, InvitationView, NewInvitation};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
const BASE: &str = "/api/v1/invitations";

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, revoke))
        .routes(routes!(resend))
}

/// The invitation routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn invitation_id(raw: &str) -> Result<InvitationId, Problem> {
    InvitationId::parse(raw).map_err(|_| Problem::not_found("no such invitation"))
}

/// `Location` of an invitation.
fn location(id: &str) -> String {
    format!("{BASE}/{id}")
}

/// `200` with the invitation and its `ETag`.
fn tagged(view: InvitationView) -> Response {
    let at = view.updated_at;
    conventions::with_etag(Json(view).into_response(), at)
}

#[utoipa::path(
    post, path = "/api/v1/invitations", tag = tags::USERS,
    operation_id = "createInvitation",
    summary = "Invite a person",
    description = "Invites `email` to join the tenant or, with `organization_id`, one of its \
        active organizations, and mails the link `{issuer}/auth/join?token=…` once the \
        invitation is stored (the link's secret is never shown by the API). On that page the \
        person signs in (or creates their account, when the address has none) and accepts: they \
        join the organization with `roles` (organization roles, default `[\"member\"]`), or gain \
        `roles` in the tenant (tenant roles, default none). Only a person with the invited \
        address may accept.\n\n\
        `expires_in_secs` is 300 to 2592000 (default 604800, 7 days). A malformed, unknown, \
        suspended or other tenant's organization, a role that is unknown or of the other kind, \
        an unknown member or a bad value is a `400` naming the field. A pending invitation for \
        the same address and target (expired or not), or a person with the address who already \
        belongs to the organization (for the tenant: already holds every role offered), is a \
        `409`.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`) instead of inviting twice; the same key with another body \
        is a `409`.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "invite-ada-2026-11-24"),
    ),
    request_body(content = NewInvitation, content_type = "application/json"),
    responses(
        (status = 201, description = "The invitation, created and mailed.", body = InvitationView,
         headers(("Location" = String,
                  description = "The invitation's URL: `/api/v1/invitations/{id}`.")),
         links(
            ("GetInvitation" = (operation_id = "getInvitation",
                                parameters(("id" = "$response.body#/id")),
                                description = "Read the invitation created.")),
            ("ResendInvitation" = (operation_id = "resendInvitation",
                                   parameters(("id" = "$response.body#/id")),
                                   description = "Mail the invitation created again.")),
            ("RevokeInvitation" = (operation_id = "revokeInvitation",
                                   parameters(("id" = "$response.body#/id")),
                                   description = "Revoke the invitation created.")),
         )),
    ),
    security(("tenant_token" = ["users:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: OrgAuthorized<UsersWrite>,
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
        |bytes| body::<NewInvitation>(bytes, "invitation"),
        |input| async move {
            let view = invitations::create(
                &state.manage,
                &caller.tenant.tenant,
                &caller.tenant.issuer,
                (&caller.actor, &caller.meta),
                &caller.reach,
                input,
            )
            .await?;
            Ok(view)
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// Query of `GET /api/v1/invitations`: the filters, and the page.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct InvitationsQuery {
    /// Only invitations to join this organization.
    #[param(max_length = 64, example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    organization_id: Option<String>,
    /// Only invitations in this state (`expired`: pending past the deadline).
    #[param(value_type = Option<InvitationStateSchema>)]
    status: Option<String>,
    /// Return invitations after this cursor, in the list's order: the `next_cursor` of the
    /// previous page.
    #[param(max_length = 64)]
    after: Option<String>,
    /// Page size, 1..=200 (default 50; larger values are clamped).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// `asc` (oldest first) or `desc` (newest first); default `asc`.
    #[param(inline)]
    order: Option<SortOrder>,
}

/// A page of invitations.
#[derive(Debug, Serialize, ToSchema)]
struct InvitationList {
    /// The invitations of this page, in creation order (oldest first unless `order=desc`).
    items: Vec<InvitationView>,
    /// Pass as `after` to get the next page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/invitations", tag = tags::USERS,
    operation_id = "listInvitations",
    summary = "List invitations",
    description = "The tenant's invitations in creation order (oldest first; `order=desc` for \
        newest first), accepted and revoked ones included, a page at a time: pass the \
        `next_cursor` of a page as `after` to get the next one. `organization_id` and `status` \
        narrow the list (both at once: invitations matching both). A malformed filter or cursor \
        and unknown query parameters are refused (`400`).",
    params(InvitationsQuery),
    responses((status = 200, description = "One page of invitations.", body = InvitationList)),
    security(("tenant_token" = ["users:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: OrgAuthorized<UsersRead>,
    query: Result<Query<InvitationsQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let organization = q
        .organization_id
        .as_deref()
        .map(|raw| {
            OrganizationId::parse(raw)
                .map_err(|_| Problem::bad_request("organization_id: not an organization id"))
        })
        .transpose()?;
    // An organization administrator lists their organization's invitations; naming another
    // organization finds nothing, as naming an unknown one does.
    let organization = match caller.reach.organization() {
        None => organization,
        Some(own) if organization.as_ref().is_none_or(|o| o == own) => Some(own.clone()),
        Some(_) => return Err(Problem::from(svc_manage::ManageError::NotFound)),
    };
    let status = q
        .status
        .as_deref()
        .map(|raw| {
            InvitationState::parse(raw).ok_or_else(|| {
                Problem::bad_request("status: one of pending, expired, accepted, revoked")
            })
        })
        .transpose()?;
    let after = conventions::after(
        q.after.as_deref(),
        InvitationId::parse,
        "not an invitation id",
    )?;
    let (items, next) = invitations::list(
        &state.manage,
        &caller.tenant.tenant.id,
        (organization, status),
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(InvitationList {
        items,
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/invitations/{id}", tag = tags::USERS,
    operation_id = "getInvitation",
    summary = "Read an invitation",
    description = "One invitation of the tenant, as it stands now (`expired` once a pending \
        one's deadline passed). The `ETag` names this revision.",
    params(("id" = String, Path, description = "The invitation's id.",
            example = "inv_01jd2p8r3t5v7x9z1b3d5f7h9k")),
    responses(
        (status = 200, description = "The invitation.", body = InvitationView,
         headers(("ETag" = String, description = "The invitation's current revision (strong)."))),
    ),
    security(("tenant_token" = ["users:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: OrgAuthorized<UsersRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let view = invitations::get(
        &state.manage,
        &caller.tenant.tenant.id,
        &invitation_id(&id)?,
    )
    .await?;
    // An invitation's target never changes, so checking it after the read is final.
    caller
        .reach
        .within(
            view.organization_id
                .as_deref()
                .and_then(|o| OrganizationId::parse(o).ok())
                .as_ref(),
        )
        .map_err(Problem::from)?;
    Ok(tagged(view))
}

#[utoipa::path(
    post, path = "/api/v1/invitations/{id}/resend", tag = tags::USERS,
    operation_id = "resendInvitation",
    summary = "Mail an invitation again",
    description = "Mails a pending or expired invitation again with a new link: the older link \
        stops working, and the deadline is as far from now as the original one was from the \
        invitation's creation. An accepted or revoked invitation cannot be resent (`409`). With \
        `If-Match`, only if the invitation is still at one of the given revisions (`412` \
        otherwise). No body.",
    params(
        ("id" = String, Path, description = "The invitation's id.",
         example = "inv_01jd2p8r3t5v7x9z1b3d5f7h9k"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the resend was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses(
        (status = 200, description = "The invitation, `pending` with its new deadline.",
         body = InvitationView,
         headers(("ETag" = String, description = "The invitation's new revision."))),
    ),
    security(("tenant_token" = ["users:write"])),
)]
async fn resend(
    State(state): State<ApiState>,
    caller: OrgAuthorized<UsersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = invitation_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let view = invitations::resend(
        &state.manage,
        &caller.tenant.tenant,
        &caller.tenant.issuer,
        (&caller.actor, &caller.meta),
        &caller.reach,
        &id,
        &precondition,
    )
    .await?;
    Ok(tagged(view))
}

#[utoipa::path(
    delete, path = "/api/v1/invitations/{id}", tag = tags::USERS,
    operation_id = "revokeInvitation",
    summary = "Revoke an invitation",
    description = "Revokes a pending or expired invitation: its link stops working at once, and \
        it stays listed as `revoked`. An accepted or revoked invitation cannot be revoked \
        (`409`). With `If-Match`, only if the invitation is still at one of the given revisions \
        (`412` otherwise).",
    params(
        ("id" = String, Path, description = "The invitation's id.",
         example = "inv_01jd2p8r3t5v7x9z1b3d5f7h9k"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the revocation was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Revoked.")),
    security(("tenant_token" = ["users:write"])),
)]
async fn revoke(
    State(state): State<ApiState>,
    caller: OrgAuthorized<UsersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = invitation_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    invitations::revoke(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &caller.reach,
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
    /// handler's `Authorized<…>` demands, and each change of an invitation declares `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let (r, w) = ("users:read", "users:write");
        let one = "/api/v1/invitations/{id}";
        let expected = [
            (BASE, "post", w, false),
            (BASE, "get", r, false),
            (one, "get", r, false),
            (one, "delete", w, true),
            ("/api/v1/invitations/{id}/resend", "post", w, true),
        ];
        let json = serde_json::to_value(operations()).unwrap();
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(path, method, scope, if_match)| (path, method, scope, if_match, tags::USERS))
            .collect();
        crate::openapi::assert_operations(&json, &expected);
    }

    /// The view's schema lists every member the server sends, as required, and the state's
    /// schema its four values.
    #[test]
    fn the_view_schema_requires_every_member_sent() {
        let json = serde_json::to_value(operations()).unwrap();
        let schemas = &json["components"]["schemas"];
        let mut required: Vec<&str> = schemas["InvitationView"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        required.sort_unstable();
        assert_eq!(
            required,
            [
                "accepted_at",
                "accepted_by",
                "created_at",
                "email",
                "expires_at",
                "id",
                "invited_by",
                "organization_id",
                "roles",
                "status",
                "updated_at"
            ]
        );
        assert_eq!(
            schemas["InvitationStatus"]["enum"],
            serde_json::json!(["pending", "expired", "accepted", "revoked"])
        );
        assert_eq!(
            schemas["NewInvitation"]["required"],
            serde_json::json!(["email"])
        );
    }

    /// A refused body names the member at fault; a non-object is refused.
    #[test]
    fn refused_bodies_name_the_member() {
        let detail = |raw: &str| {
            body::<NewInvitation>(raw.as_bytes(), "invitation")
                .unwrap_err()
                .detail()
                .to_owned()
        };
        assert!(detail(r#"{"email": 5}"#).contains("email: "));
        assert!(detail(r#"{"email": "a@b.c", "token": "x"}"#).contains("unknown field `token`"));
        assert!(detail("[]").starts_with("invalid invitation: "));
        assert!(body::<NewInvitation>(br#"{"email": "a@b.c"}"#, "invitation").is_ok());
    }
}
