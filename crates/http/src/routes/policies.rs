//! `/api/v1/policies` (scopes `policies:read|write`): a tenant's access-control policies, the
//! named rules the authorization and token endpoints enforce, and their OpenAPI operations,
//! declared together through `OpenApiRouter` — create, list, read, update, delete. Thin handlers
//! over `svc_manage::policies`, always within the token's own tenant: another tenant's policy,
//! or a malformed id, is simply not found.
//!
//! The API conventions as they apply here: a tenant holds at most 50 policies, so the list is
//! one page (`next_cursor` always `null`); a created policy answers `201` with `Location`
//! (replays of an idempotent create included); reading or changing one answers its `ETag`, and
//! every change honours `If-Match`. Bodies are read with the member path in every refusal, and
//! unknown members are refused at every level.

use super::organizations::body;
use crate::Problem;
use crate::api::conventions;
use crate::api::{ApiState, Authorized, PoliciesRead, PoliciesWrite, create_idempotently};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_domain::{AccessPolicy, PolicyId};
use svc_manage::policies::{self, NewPolicy, PolicyPatch, PolicyView};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The base path of the routes.
const BASE: &str = "/api/v1/policies";

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
}

/// The policy routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

fn policy_id(raw: &str) -> Result<PolicyId, Problem> {
    PolicyId::parse(raw).map_err(|_| Problem::not_found("no such policy"))
}

/// `Location` of a policy.
fn location(id: &str) -> String {
    format!("{BASE}/{id}")
}

/// `200` with the policy and its `ETag`.
fn tagged(policy: &AccessPolicy) -> Response {
    conventions::with_etag(
        Json(PolicyView::from(policy)).into_response(),
        policy.updated_at,
    )
}

#[utoipa::path(
    post, path = "/api/v1/policies", tag = tags::POLICIES,
    operation_id = "createPolicy",
    summary = "Create an access-control policy",
    description = "Creates a named policy that gates sign-in and token issuance.\n\n\
        `targets` says where it applies: `applications` (client ids), `organizations` (requests \
        made in one of them) and `roles` (people holding one, as a tenant role or as an \
        organization role in the request's organization), each of this tenant and at most 50. \
        Every list given must match and one entry of a list is enough; no list at all means \
        every sign-in of the tenant.\n\n\
        `rules` says what such a grant needs, at least one of: `require_acr` (`urn:svc:aal1` or \
        `urn:svc:aal2`: below it the person steps up, or sets up a second factor, at sign-in), \
        `allowed_ip_ranges` (CIDR networks the person's address must be in at the \
        authorization endpoint, and at the token endpoint for public clients), \
        `sign_in_methods` (RFC 8176 `amr` values `pwd`, `otp`, `hwk`, `swk`, `fed`, one of \
        which the sign-in used), `max_session_age_secs` (60 to 31622400: an older sign-in \
        signs in again, and refreshing an older grant is refused). Every policy that applies \
        must hold: the authorization endpoint answers `access_denied`, the token endpoint \
        `invalid_grant`, each naming the policy and the rule, and the audit log records \
        `access_policy.denied.<rule>`. Refresh tokens of a grant a new or changed policy \
        refuses are revoked at their next use.\n\n\
        `name` is 1 to 100 characters, unique in the tenant (`409` when taken); a tenant holds \
        at most 50 policies (`409` beyond). Unknown members are refused (`400`) at every level, \
        and every refusal names the member at fault. With an `idempotency-key`, a retry with \
        the same key and body replays the first answer.",
    params(
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "create-finance-policy-2026-11-24"),
    ),
    request_body(content = NewPolicy, content_type = "application/json"),
    responses(
        (status = 201, description = "The policy, created.", body = PolicyView,
         headers(("Location" = String, description = "The policy's URL: `/api/v1/policies/{id}`.")),
         links(
            ("GetPolicy" = (operation_id = "getPolicy",
                            parameters(("id" = "$response.body#/id")),
                            description = "Read the policy created.")),
            ("UpdatePolicy" = (operation_id = "updatePolicy",
                               parameters(("id" = "$response.body#/id")),
                               description = "Change the policy created.")),
            ("DeletePolicy" = (operation_id = "deletePolicy",
                               parameters(("id" = "$response.body#/id")),
                               description = "Delete the policy created.")),
         )),
    ),
    security(("tenant_token" = ["policies:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
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
        |bytes| body::<NewPolicy>(bytes, "policy"),
        |input| async move {
            let policy = policies::create(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(PolicyView::from(&policy))
        },
        |body| body["id"].as_str().map(location),
    )
    .await
}

/// Every policy of the tenant.
#[derive(Debug, Serialize, ToSchema)]
struct PolicyList {
    /// The policies, oldest first, enabled or not.
    items: Vec<PolicyView>,
    /// Always `null`: a tenant's policies fit in one page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[utoipa::path(
    get, path = "/api/v1/policies", tag = tags::POLICIES,
    operation_id = "listPolicies",
    summary = "List access-control policies",
    description = "Every policy of the tenant (at most 50), oldest first, enabled or not.",
    responses((status = 200, description = "The policies.", body = PolicyList)),
    security(("tenant_token" = ["policies:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesRead>,
) -> Result<Response, Problem> {
    let items = policies::list(&state.manage, &caller.tenant.tenant.id).await?;
    Ok(Json(PolicyList {
        items: items.iter().map(PolicyView::from).collect(),
        next_cursor: None,
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/policies/{id}", tag = tags::POLICIES,
    operation_id = "getPolicy",
    summary = "Read an access-control policy",
    description = "One policy of the tenant. The `ETag` names this revision: send it as \
        `If-Match` on a change to make sure nobody changed the policy in between.",
    params(("id" = String, Path, description = "The policy's id.",
            example = "pol_01jd2p6r8t0v2x4z6b8d0f2h4k")),
    responses(
        (status = 200, description = "The policy.", body = PolicyView,
         headers(("ETag" = String, description = "The policy's current revision (strong)."))),
    ),
    security(("tenant_token" = ["policies:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let policy = policies::get(&state.manage, &caller.tenant.tenant.id, &policy_id(&id)?).await?;
    Ok(tagged(&policy))
}

#[utoipa::path(
    patch, path = "/api/v1/policies/{id}", tag = tags::POLICIES,
    operation_id = "updatePolicy",
    summary = "Change an access-control policy",
    description = "Changes only the members present: `name`, `description`, `enabled`, and \
        `targets` and `rules`, each replacing the whole object. `null` is refused for every \
        member (`400`). The same rules as on create apply. The next sign-in and the next \
        refresh of every grant the policy governs see the change. A body that changes nothing \
        writes nothing.\n\n\
        With `If-Match`, the change applies only if the policy is still at one of the given \
        revisions (`412` otherwise); one changed by someone else while this request ran is a \
        `412` too.",
    params(
        ("id" = String, Path, description = "The policy's id.",
         example = "pol_01jd2p6r8t0v2x4z6b8d0f2h4k"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = PolicyPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The policy as changed.", body = PolicyView,
         headers(("ETag" = String, description = "The policy's new revision."))),
    ),
    security(("tenant_token" = ["policies:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let id = policy_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let patch: PolicyPatch = body(&bytes, "policy")?;
    let policy = policies::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&policy))
}

#[utoipa::path(
    delete, path = "/api/v1/policies/{id}", tag = tags::POLICIES,
    operation_id = "deletePolicy",
    summary = "Delete an access-control policy",
    description = "Deletes the policy for good (the audit log keeps the history). With \
        `If-Match`, only if the policy is still at one of the given revisions (`412` \
        otherwise).",
    params(
        ("id" = String, Path, description = "The policy's id.",
         example = "pol_01jd2p6r8t0v2x4z6b8d0f2h4k"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the deletion was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Deleted.")),
    security(("tenant_token" = ["policies:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<PoliciesWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = policy_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    policies::delete(
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
        let (r, w) = ("policies:read", "policies:write");
        let one = "/api/v1/policies/{id}";
        let expected: Vec<_> = [
            (BASE, "post", w, false),
            (BASE, "get", r, false),
            (one, "get", r, false),
            (one, "patch", w, true),
            (one, "delete", w, true),
        ]
        .into_iter()
        .map(|(path, method, scope, if_match)| (path, method, scope, if_match, tags::POLICIES))
        .collect();
        let json = serde_json::to_value(operations()).unwrap();
        crate::openapi::assert_operations(&json, &expected);
    }

    /// The schemas list what the server sends as required and refuse unknown members at every
    /// level of the body.
    #[test]
    fn schemas_and_bodies_are_closed() {
        let json = serde_json::to_value(operations()).unwrap();
        let schemas = &json["components"]["schemas"];
        for name in ["NewPolicy", "PolicyPatch"] {
            assert!(schemas[name]["example"].is_object(), "{name}");
        }
        assert_eq!(
            schemas["NewPolicy"]["required"],
            serde_json::json!(["name", "rules"])
        );
        let mut required: Vec<&str> = schemas["PolicyView"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        required.sort_unstable();
        assert_eq!(
            required,
            [
                "created_at",
                "description",
                "enabled",
                "id",
                "name",
                "rules",
                "targets",
                "updated_at"
            ]
        );
        let detail = |raw: &str| {
            body::<NewPolicy>(raw.as_bytes(), "policy")
                .unwrap_err()
                .detail()
                .to_owned()
        };
        let nested = detail(r#"{"name": "p", "rules": {"require_mfa": true}}"#);
        assert!(
            nested.contains("rules") && nested.contains("require_mfa"),
            "{nested}"
        );
        let targets = detail(r#"{"name": "p", "rules": {}, "targets": {"users": []}}"#);
        assert!(targets.contains("users"), "{targets}");
        assert!(body::<NewPolicy>(br#"{"name": "p", "rules": {}}"#, "policy").is_ok());
    }
}
