//! `/api/v1/applications*` (scopes `applications:read|write`): the tenant's applications (OAuth
//! clients) — register, list, read, replace, delete, rotate the client secret — and
//! `/api/v1/audit-logs` (`audit:read`): the tenant's audit log. Thin handlers over
//! `svc_manage::applications` and `svc_manage::audit`, always within the token's own tenant;
//! another tenant's application id, or a malformed one, is simply not found.
//!
//! Each route and its OpenAPI operation come from one declaration (`OpenApiRouter`). The API
//! conventions apply: `201 Created` with `Location` (also on an idempotent replay), an `ETag` on
//! an application read or changed, `If-Match` on its replacement, deletion and secret rotation,
//! and `limit`/`after` cursor pagination on both lists (the audit log reads newest first).

use crate::Problem;
use crate::api::conventions::{self, ListQuery, Page};
use crate::api::{
    ApiState, ApplicationsRead, ApplicationsWrite, AuditRead, Authorized, create_idempotently,
};
use crate::openapi::tags;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use svc_domain::{Application, AuditEntryId, ClientId};
use svc_manage::applications::{
    self as apps, ApplicationInput, ApplicationView, CreatedApplicationView, RotatedSecretView,
};
use svc_manage::audit::{self, AuditEntryView};
use svc_store::AuditFilter;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, update, remove))
        .routes(routes!(rotate_secret))
        .routes(routes!(audit_logs))
}

/// The application and audit routes, state applied.
pub fn router(state: ApiState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// An id of another tenant, or a malformed one, is simply not found here (never reveal it exists).
fn client_id(raw: &str) -> Result<ClientId, Problem> {
    ClientId::parse(raw).map_err(|_| Problem::not_found("no such application"))
}

fn input(body: &[u8]) -> Result<ApplicationInput, Problem> {
    serde_json::from_slice(body)
        .map_err(|e| Problem::bad_request(format!("invalid application: {e}")))
}

fn location(id: &str) -> String {
    format!("/api/v1/applications/{id}")
}

/// `body` with the `ETag` of `app`.
fn tagged(app: &Application, body: impl Serialize) -> Response {
    conventions::with_etag(Json(body).into_response(), app.updated_at)
}

/// Registers an application.
#[utoipa::path(
    post, path = "/api/v1/applications", tag = tags::APPLICATIONS,
    operation_id = "createApplication",
    summary = "Register an application",
    description = "Registers an OAuth client in the tenant. The body is validated field by \
        field (the first field that breaks a rule is named in the 400 `detail`; unknown fields \
        are refused): a name of 1 to 200 characters; at most 20 redirect URIs and 20 \
        post-logout redirect URIs, matched exactly (RFC 9700 §4.1.3, RFC 8252 §7); at least one \
        of `authorization_code`, `refresh_token` (needs `authorization_code`) and \
        `client_credentials` (confidential clients only); `authorization_code` needs a \
        redirect URI; at most 64 scopes; `private_key_jwt` needs exactly one of `jwks` (1 to \
        10 public keys) or `jwks_uri` (https), other methods take neither.\n\n\
        A `client_secret_basic` or `client_secret_post` application gets a generated secret \
        (`cs_…`), returned in `client_secret` this once: only its hash is stored. Audited as \
        `application.created`, announced as `admin.application.created`.\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`, same secret); the same key with another body is 409.",
    params(("idempotency-key" = Option<String>, Header,
            description = "Makes the registration safely retryable for 24 hours (printable \
                ASCII).")),
    request_body(content = ApplicationInput, content_type = "application/json"),
    responses((status = 201, description = "Registered. `client_secret` is present for \
        secret-based methods, this once.", body = CreatedApplicationView,
        headers(("Location" = String,
                 description = "The application: `/api/v1/applications/{client_id}`.")))),
    security(("tenant_token" = ["applications:write"])),
)]
async fn create(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    headers: HeaderMap,
    body: Bytes,
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
        ("/api/v1/applications", &body),
        input,
        |input| async move {
            let (app, secret) = apps::create(
                &state.manage,
                &caller.tenant.tenant.id,
                &caller.actor,
                &caller.meta,
                input,
            )
            .await?;
            Ok(CreatedApplicationView::new(&app, secret))
        },
        |body| body["client_id"].as_str().map(location),
    )
    .await
}

/// Lists the applications.
#[utoipa::path(
    get, path = "/api/v1/applications", tag = tags::APPLICATIONS,
    operation_id = "listApplications",
    summary = "List applications",
    description = "The tenant's applications, its management application included, in \
        creation order (oldest first; `order=desc` for newest first), a page at a time: pass `next_cursor` as `after` for the next page; \
        it is `null` on the last. Secrets are never shown.",
    params(ListQuery),
    responses((status = 200, description = "A page of applications.",
               body = inline(Page<ApplicationView>))),
    security(("tenant_token" = ["applications:read"])),
)]
async fn list(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let after = conventions::after(q.after.as_deref(), ClientId::parse, "not an application id")?;
    let (items, next) = apps::list(
        &state.manage,
        &caller.tenant.tenant.id,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    let items: Vec<ApplicationView> = items.iter().map(ApplicationView::from).collect();
    Ok(Page::respond(items, next))
}

/// Reads one application.
#[utoipa::path(
    get, path = "/api/v1/applications/{id}", tag = tags::APPLICATIONS,
    operation_id = "getApplication",
    summary = "Read an application",
    description = "The application, without its secret, and its revision as `ETag` (send it \
        back in `If-Match` to replace, delete or rotate it only if nobody else changed it \
        meanwhile).",
    params(("id" = String, Path, description = "The application's `client_id`.",
            example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x")),
    responses((status = 200, description = "The application.", body = ApplicationView,
               headers(("ETag" = String, description = "Its current revision.")))),
    security(("tenant_token" = ["applications:read"])),
)]
async fn read(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let app = apps::get(&state.manage, &caller.tenant.tenant.id, &client_id(&id)?).await?;
    Ok(tagged(&app, ApplicationView::from(&app)))
}

/// Replaces an application's configuration.
#[utoipa::path(
    put, path = "/api/v1/applications/{id}", tag = tags::APPLICATIONS,
    operation_id = "updateApplication",
    summary = "Replace an application's configuration",
    description = "Replaces every field of the application with the body, validated exactly \
        like a registration (omitted optional fields are cleared). The secret follows the \
        method: a secret-based application keeps its secret; one that becomes secret-based \
        gets a new one, returned in `client_secret` this once; one that stops using a secret \
        loses it. The management application's grants, scopes, authentication method and \
        audience cannot change (403), so a tenant cannot lock itself out.\n\n\
        With `If-Match`, the change applies only if the application is still at that revision \
        (else 412, nothing changed); a change committed by someone else while this one ran is \
        refused the same way, so no update is ever lost. Audited as `application.updated`, \
        announced as `admin.application.updated`.",
    params(
        ("id" = String, Path, description = "The application's `client_id`.",
         example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Apply only if the application's current `ETag` is one of these \
             (or `*`: it exists)."),
    ),
    request_body(content = ApplicationInput, content_type = "application/json"),
    responses((status = 200, description = "Replaced. `client_secret` is present only when a \
        new secret was generated.", body = CreatedApplicationView,
        headers(("ETag" = String, description = "The new revision.")))),
    security(("tenant_token" = ["applications:write"])),
)]
async fn update(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let (app, secret) = apps::update(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        input(&body)?,
        &precondition,
    )
    .await?;
    Ok(tagged(&app, CreatedApplicationView::new(&app, secret)))
}

/// Deletes an application.
#[utoipa::path(
    delete, path = "/api/v1/applications/{id}", tag = tags::APPLICATIONS,
    operation_id = "deleteApplication",
    summary = "Delete an application",
    description = "Deletes the application: its credentials stop working at once. The \
        tenant's management application cannot be deleted (403). With `If-Match`, only if it \
        is still at that revision (else 412). Audited as `application.deleted`, announced as \
        `admin.application.deleted`.",
    params(
        ("id" = String, Path, description = "The application's `client_id`.",
         example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Delete only if the application's current `ETag` is one of these \
             (or `*`: it exists)."),
    ),
    responses((status = 204, description = "Deleted.")),
    security(("tenant_token" = ["applications:write"])),
)]
async fn remove(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    apps::delete(
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

/// Replaces an application's client secret.
#[utoipa::path(
    post, path = "/api/v1/applications/{id}/rotate-secret", tag = tags::APPLICATIONS,
    operation_id = "rotateApplicationSecret",
    summary = "Rotate an application's client secret",
    description = "Generates a new client secret, returned this once. The old secret stops \
        working the moment this succeeds: there is no overlap, so deploy the new secret right \
        away. Only `client_secret_basic` and `client_secret_post` applications have a secret \
        (400 otherwise). The application gets a new revision (`ETag`). With `If-Match`, only \
        if it is still at that revision (else 412). Audited as `application.secret_rotated`, \
        announced as `admin.application.secret_rotated`. Not idempotent: every call makes a \
        new secret.",
    params(
        ("id" = String, Path, description = "The application's `client_id`.",
         example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x"),
        ("If-Match" = Option<String>, Header,
         description = "Rotate only if the application's current `ETag` is one of these \
             (or `*`: it exists)."),
    ),
    responses((status = 200, description = "The new secret.", body = RotatedSecretView,
               headers(("ETag" = String, description = "The application's new revision.")))),
    security(("tenant_token" = ["applications:write"])),
)]
async fn rotate_secret(
    State(state): State<ApiState>,
    caller: Authorized<ApplicationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let id = client_id(&id)?;
    let precondition = conventions::precondition(&headers)?;
    let (app, secret) = apps::rotate_secret(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &id,
        &precondition,
    )
    .await?;
    let view = RotatedSecretView {
        client_id: app.id.to_string(),
        client_secret: secret,
    };
    Ok(tagged(&app, view))
}

/// Pagination and filters of `GET /api/v1/audit-logs`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// Page size, 1..=200 (default 50; larger values are clamped).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Return the entries after this cursor, in the list's order (by default older ones): the
    /// `next_cursor` of the previous page.
    #[param(max_length = 64, example = "aud_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    after: Option<String>,
    /// `asc` (oldest first) or `desc` (newest first); default `desc`.
    #[param(inline)]
    order: Option<conventions::SortOrder>,

    /// Only this action, exactly (e.g. `application.created`).
    #[param(example = "application.created")]
    action: Option<String>,
    /// Only this actor, exactly (e.g. `client:app_…`, `operator:opt_…`).
    #[param(example = "client:app_01jd3k0a1b2c3d4e5f6g7h8j9m")]
    actor: Option<String>,
    /// Only entries about this record, exactly (e.g. an `app_…` id).
    #[param(example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    target: Option<String>,
    /// Only entries at or after this instant (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime, example = "2026-11-01T00:00:00Z")]
    since: Option<String>,
    /// Only entries before this instant (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime, example = "2026-12-01T00:00:00Z")]
    until: Option<String>,
}

/// One page of the audit log.
#[derive(Debug, Serialize, ToSchema)]
struct AuditPage {
    /// The entries of this page, newest first unless `order=asc`.
    items: Vec<AuditEntryView>,
    /// Pass as `after` to get the next (older) page; `null` on the last.
    next_cursor: Option<String>,
}

fn instant(field: &str, raw: Option<&str>) -> Result<Option<OffsetDateTime>, Problem> {
    raw.map(|s| {
        OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
            .map_err(|_| Problem::bad_request(format!("{field}: expected an RFC 3339 timestamp")))
    })
    .transpose()
}

/// Lists the audit log.
#[utoipa::path(
    get, path = "/api/v1/audit-logs", tag = tags::AUDIT,
    operation_id = "listAuditLogs",
    summary = "List the audit log",
    description = "Who changed what in the tenant, from where: one entry per management \
        write (and per control-plane action on the tenant), recorded in the same transaction \
        as the change. Newest first, a page at a time: pass `next_cursor` as `after` for the \
        next (older) page; it is `null` on the last. The filters combine (all must match); \
        `since` is inclusive, `until` exclusive. Entries are kept after the tenant is deleted.",
    params(AuditQuery),
    responses((status = 200, description = "A page of entries, newest first unless `order=asc`.",
               body = AuditPage)),
    security(("tenant_token" = ["audit:read"])),
)]
async fn audit_logs(
    State(state): State<ApiState>,
    caller: Authorized<AuditRead>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(e.body_text()))?;
    let filter = AuditFilter {
        action: q.action,
        actor: q.actor,
        target: q.target,
        since: instant("since", q.since.as_deref())?,
        until: instant("until", q.until.as_deref())?,
    };
    let after = conventions::after(
        q.after.as_deref(),
        AuditEntryId::parse,
        "not an audit entry id",
    )?;
    let (entries, next) = audit::list_audit(
        &state.manage,
        &caller.tenant.tenant.id,
        &filter,
        after.as_ref(),
        conventions::order(q.order),
        q.limit,
    )
    .await?;
    Ok(Json(AuditPage {
        items: entries.iter().map(AuditEntryView::from).collect(),
        next_cursor: next.map(|id| id.to_string()),
    })
    .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn document() -> Value {
        serde_json::to_value(operations()).unwrap_or_default()
    }

    #[test]
    fn every_operation_names_its_scope_tag_and_conditional_headers() {
        let doc = document();
        let app = "/api/v1/applications/{id}";
        let rotate = "/api/v1/applications/{id}/rotate-secret";
        let cases = [
            (
                "/api/v1/applications",
                "post",
                "createApplication",
                "applications:write",
                false,
            ),
            (
                "/api/v1/applications",
                "get",
                "listApplications",
                "applications:read",
                false,
            ),
            (app, "get", "getApplication", "applications:read", false),
            (app, "put", "updateApplication", "applications:write", true),
            (
                app,
                "delete",
                "deleteApplication",
                "applications:write",
                true,
            ),
            (
                rotate,
                "post",
                "rotateApplicationSecret",
                "applications:write",
                true,
            ),
            (
                "/api/v1/audit-logs",
                "get",
                "listAuditLogs",
                "audit:read",
                false,
            ),
        ];
        for (path, method, id, scope, if_match) in cases {
            let op = &doc["paths"][path][method];
            assert_eq!(op["operationId"], id);
            assert!(
                op["summary"].is_string() && op["description"].is_string(),
                "{id}"
            );
            assert_eq!(op["security"], json!([{ "tenant_token": [scope] }]), "{id}");
            let tag = if path.ends_with("audit-logs") {
                tags::AUDIT
            } else {
                tags::APPLICATIONS
            };
            assert_eq!(op["tags"], json!([tag]), "{id}");
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            let takes_if_match = params
                .iter()
                .any(|p| p["name"] == "If-Match" && p["in"] == "header");
            assert_eq!(takes_if_match, if_match, "{id}");
        }
        let created = &doc["paths"]["/api/v1/applications"]["post"]["responses"]["201"];
        assert!(created["headers"]["Location"].is_object(), "{created}");
        let read = &doc["paths"][app]["get"]["responses"]["200"];
        assert!(read["headers"]["ETag"].is_object(), "{read}");
        let audit = doc["paths"]["/api/v1/audit-logs"]["get"]["parameters"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let names: Vec<&str> = audit.iter().filter_map(|p| p["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "limit", "after", "order", "action", "actor", "target", "since", "until"
            ]
        );
    }

    #[test]
    fn the_schemas_match_what_the_handlers_send() {
        let doc = document();
        let schemas = &doc["components"]["schemas"];
        let view = &schemas["ApplicationView"];
        assert_eq!(view["required"].as_array().map(Vec::len), Some(26));
        assert!(
            view["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("require_pushed_authorization_requests"))),
            "RFC 9126 §6 metadata is always sent"
        );
        assert!(
            view["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("minimum_acr"))),
            "minimum_acr is always sent, null when none"
        );
        for acr in [
            &view["properties"]["minimum_acr"],
            &schemas["ApplicationInput"]["properties"]["minimum_acr"],
        ] {
            assert_eq!(
                acr["oneOf"][0]["$ref"],
                "#/components/schemas/ApplicationMinimumAcr"
            );
            assert_eq!(acr["oneOf"][1]["type"], "null");
        }
        assert_eq!(
            schemas["ApplicationMinimumAcr"]["enum"],
            json!([svc_domain::ACR_AAL1, svc_domain::ACR_AAL2])
        );
        let created = &schemas["CreatedApplicationView"]["allOf"];
        assert_eq!(created[0]["$ref"], "#/components/schemas/ApplicationView");
        assert_eq!(created[1]["properties"]["client_secret"]["type"], "string");
        assert!(
            created[1]["required"].is_null(),
            "client_secret may be absent"
        );
        assert!(schemas["ApplicationInput"]["example"].is_object());
        let entry = &schemas["AuditEntryView"];
        assert_eq!(entry["required"].as_array().map(Vec::len), Some(9));
        assert_eq!(
            schemas["AuditOutcomeView"]["enum"],
            json!(["success", "failure"])
        );
    }

    #[test]
    fn audit_queries_refuse_the_old_cursor_name() {
        let parse = |q: &str| {
            let uri: http::Uri = format!("/api/v1/audit-logs?{q}")
                .parse()
                .unwrap_or_default();
            Query::<AuditQuery>::try_from_uri(&uri).map(|Query(q)| q)
        };
        let q = parse("after=aud_x&limit=5&action=a&actor=b&target=c&since=s&until=u");
        assert_eq!(q.ok().and_then(|q| q.after).as_deref(), Some("aud_x"));
        assert!(parse("before=aud_x").is_err());
    }
}
