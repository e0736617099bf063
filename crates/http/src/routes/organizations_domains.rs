//! `/api/v1/organizations/{id}/domains` (scopes `organizations:read|write`): the domains an
//! organization claims — claim, list, read, change the auto-join settings of, verify, remove —
//! as thin handlers over `svc_manage::domains`, registered by `organizations::api`. Another
//! tenant's organization, another organization's claim, or a malformed id in the path, is not
//! found.
//!
//! A claim has an `ETag`; `PATCH` and `DELETE` honour `If-Match`. A failed verification is a
//! `400` naming the method (`dns_txt`, `https`) and saying what was looked up and what was
//! expected; a name another organization of the tenant verified is a `409`.

use super::organizations::{BASE, body, organization_id};
use crate::Problem;
use crate::api::conventions;
use crate::api::{
    ApiState, OrgAuthorized, OrganizationsRead, OrganizationsWrite, create_idempotently,
};
use crate::openapi::tags;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_domain::{DomainId, VerifiedDomain};
use svc_manage::domains::{self, DomainPatch, DomainView, NewDomain, VerifyDomain};
use utoipa::ToSchema;

/// `Location` of a claim.
fn location(org: &str, domain: &str) -> String {
    format!("{BASE}/{org}/domains/{domain}")
}

fn domain_id(raw: &str) -> Result<DomainId, Problem> {
    DomainId::parse(raw).map_err(|_| Problem::not_found("no such domain"))
}

/// `200` with the claim and its `ETag`.
fn tagged(domain: &VerifiedDomain) -> Response {
    conventions::with_etag(
        Json(DomainView::from(domain)).into_response(),
        domain.updated_at,
    )
}

#[utoipa::path(
    post, path = "/api/v1/organizations/{id}/domains", tag = tags::ORGANIZATIONS,
    operation_id = "addOrganizationDomain",
    summary = "Claim a domain",
    description = "Claims a domain for the organization: `pending`, with a token of its own. \
        Prove the claim by publishing `verification.dns_txt.value` as a TXT record named \
        `verification.dns_txt.name` (`_svc-verification.<domain>`), or by serving \
        `verification.https.body` at `verification.https.url`, then call `verify`. `name` is \
        two or more labels of letters, digits and inner hyphens, at most 253 characters, no \
        trailing dot, not an IP address (`400` naming `name`); uppercase is folded and an \
        internationalized name is stored as `xn--`. Several organizations may claim one \
        domain, but only one can verify it. The organization already claiming the name, or \
        claiming 50 domains, is a `409`. `auto_join_roles` lists 1 to 16 organization roles \
        (default `[\"member\"]`). Unknown members are refused (`400`).\n\n\
        With an `idempotency-key`, a retry with the same key and body replays the first answer \
        (`idempotent-replayed: true`).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("idempotency-key" = Option<String>, Header,
         description = "Makes the request safe to retry: the first answer is stored and replayed \
                        for 24 hours to a request with the same key and body.",
         example = "claim-acme-example"),
    ),
    request_body(content = NewDomain, content_type = "application/json"),
    responses(
        (status = 201, description = "The claim, pending.", body = DomainView,
         headers(("Location" = String,
                  description = "The claim's URL: \
                                 `/api/v1/organizations/{id}/domains/{domain_id}`."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn add_domain(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let org = match organization_id(&id) {
        Ok(org) => org,
        Err(problem) => return problem.into_response(),
    };
    let scope = caller
        .actor
        .idempotency_scope(Some(&caller.tenant.tenant.id));
    let path = format!("{BASE}/{org}/domains");
    // The create runs in a future of its own: it borrows the request's parts.
    let (state, caller) = (&state, &caller);
    create_idempotently(
        &state.manage,
        &scope,
        &headers,
        (&path, &bytes),
        |bytes| body::<NewDomain>(bytes, "domain"),
        |input| async move {
            let d = domains::add(
                &state.manage,
                &caller.tenant.tenant.id,
                (&caller.actor, &caller.meta),
                &caller.reach,
                &org,
                input,
            )
            .await?;
            Ok(DomainView::from(&d))
        },
        |body| {
            Some(location(
                body["organization_id"].as_str()?,
                body["id"].as_str()?,
            ))
        },
    )
    .await
}

/// The claims of an organization.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct DomainList {
    /// Every claim, in creation order (an organization has at most 50).
    items: Vec<DomainView>,
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/domains", tag = tags::ORGANIZATIONS,
    operation_id = "listOrganizationDomains",
    summary = "List claimed domains",
    description = "Every domain the organization claims, pending and verified, in creation \
        order, in one answer (an organization claims at most 50).",
    params(("id" = String, Path, description = "The organization's id.",
            example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")),
    responses((status = 200, description = "The organization's claims.", body = DomainList)),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn list_domains(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let items = domains::list(&state.manage, &caller.tenant.tenant.id, &org).await?;
    Ok(Json(DomainList {
        items: items.iter().map(DomainView::from).collect(),
    })
    .into_response())
}

#[utoipa::path(
    get, path = "/api/v1/organizations/{id}/domains/{domain_id}", tag = tags::ORGANIZATIONS,
    operation_id = "getOrganizationDomain",
    summary = "Read a claimed domain",
    description = "One claim of the organization, with what to publish to prove it. Another \
        organization's claim is not found. The `ETag` names this revision.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("domain_id" = String, Path, description = "The claim's id.",
         example = "dom_01jd2n4k6m8p0r2t4v6x8z0b2d"),
    ),
    responses(
        (status = 200, description = "The claim.", body = DomainView,
         headers(("ETag" = String, description = "The claim's current revision (strong)."))),
    ),
    security(("tenant_token" = ["organizations:read"])),
)]
pub(super) async fn get_domain(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsRead>,
    Path((id, domain)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let domain = domain_id(&domain)?;
    let d = domains::get(&state.manage, &caller.tenant.tenant.id, &org, &domain).await?;
    Ok(tagged(&d))
}

#[utoipa::path(
    patch, path = "/api/v1/organizations/{id}/domains/{domain_id}", tag = tags::ORGANIZATIONS,
    operation_id = "updateOrganizationDomain",
    summary = "Change a claim's auto-join settings",
    description = "Changes only the members present: `auto_join` and `auto_join_roles` (1 to 16 \
        organization roles, `400` naming `auto_join_roles` otherwise). The name cannot change: \
        claim the new one. Unknown members are refused (`400`). With `If-Match`, only if the \
        claim is still at one of the given revisions (`412` otherwise).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("domain_id" = String, Path, description = "The claim's id.",
         example = "dom_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the change was made from.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    request_body(content = DomainPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The claim as changed.", body = DomainView,
         headers(("ETag" = String, description = "The claim's new revision."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn update_domain(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path((id, domain)): Path<(String, String)>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    let domain = domain_id(&domain)?;
    let precondition = conventions::precondition(&headers)?;
    let patch: DomainPatch = body(&bytes, "domain")?;
    let d = domains::update(
        &state.manage,
        &caller.tenant.tenant.id,
        (&caller.actor, &caller.meta),
        &caller.reach,
        &org,
        &domain,
        patch,
        &precondition,
    )
    .await?;
    Ok(tagged(&d))
}

#[utoipa::path(
    post, path = "/api/v1/organizations/{id}/domains/{domain_id}/verify",
    tag = tags::ORGANIZATIONS,
    operation_id = "verifyOrganizationDomain",
    summary = "Verify a claimed domain",
    description = "Looks for the claim's proof and, when it is there, marks the claim \
        `verified`. `method` is `dns_txt` (default: a TXT record at \
        `_svc-verification.<domain>` whose value is exactly `svc-domain-verification=<token>` of \
        this claim) or `https` (the file `https://<domain>/.well-known/svc-domain-verification.txt` \
        holding that line; the host must resolve to public addresses, no redirect is followed). \
        The body may be empty. A proof that is missing, wrong (another claim's token, an earlier \
        token) or cannot be looked up (no such name, a timeout, a server failure) is a `400` \
        naming the method and saying what was looked up and what was expected; the claim stays \
        `pending` and `last_checked_at` records the attempt. A domain another organization of \
        the tenant verified is a `409`. A claim already verified is returned as it is.",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("domain_id" = String, Path, description = "The claim's id.",
         example = "dom_01jd2n4k6m8p0r2t4v6x8z0b2d"),
    ),
    request_body(content = Option<VerifyDomain>, content_type = "application/json"),
    responses(
        (status = 200, description = "The claim, verified.", body = DomainView,
         headers(("ETag" = String, description = "The claim's new revision."))),
    ),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn verify_domain(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path((id, domain)): Path<(String, String)>,
    bytes: Bytes,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let domain = domain_id(&domain)?;
    let input: VerifyDomain = if bytes.trim_ascii().is_empty() {
        VerifyDomain::default()
    } else {
        body(&bytes, "verification")?
    };
    let d = domains::verify(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &org,
        &domain,
        input,
    )
    .await?;
    Ok(tagged(&d))
}

#[utoipa::path(
    delete, path = "/api/v1/organizations/{id}/domains/{domain_id}", tag = tags::ORGANIZATIONS,
    operation_id = "removeOrganizationDomain",
    summary = "Remove a claimed domain",
    description = "Removes the claim, verified or not: auto-join through it stops, and another \
        organization may verify the domain. People who joined through it stay members. With \
        `If-Match`, only if the claim is still at one of the given revisions (`412` otherwise).",
    params(
        ("id" = String, Path, description = "The organization's id.",
         example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("domain_id" = String, Path, description = "The claim's id.",
         example = "dom_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ("If-Match" = Option<String>, Header,
         description = "`*`, or the `ETag` (or a comma-separated list of them) of the revision \
                        the removal was decided on.",
         example = "\"r18a2b3c4d5e6f7\""),
    ),
    responses((status = 204, description = "Removed.")),
    security(("tenant_token" = ["organizations:write"])),
)]
pub(super) async fn remove_domain(
    State(state): State<ApiState>,
    caller: OrgAuthorized<OrganizationsWrite>,
    Path((id, domain)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let org = organization_id(&id)?;
    caller.within(&org)?;
    let domain = domain_id(&domain)?;
    let precondition = conventions::precondition(&headers)?;
    domains::remove(
        &state.manage,
        &caller.tenant.tenant.id,
        &caller.actor,
        &caller.meta,
        &org,
        &domain,
        &precondition,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa_axum::{router::OpenApiRouter, routes};

    fn operations() -> serde_json::Value {
        let api: OpenApiRouter<ApiState> = OpenApiRouter::new()
            .routes(routes!(add_domain, list_domains))
            .routes(routes!(get_domain, update_domain, remove_domain))
            .routes(routes!(verify_domain));
        serde_json::to_value(api.into_openapi()).unwrap()
    }

    /// Every operation is tagged, named, secured with exactly the scope its handler demands, and
    /// each change of a claim declares `If-Match`.
    #[test]
    fn operations_name_their_scope_and_preconditions() {
        let (r, w) = ("organizations:read", "organizations:write");
        let list = "/api/v1/organizations/{id}/domains";
        let one = "/api/v1/organizations/{id}/domains/{domain_id}";
        let expected = [
            (list, "post", w, false),
            (list, "get", r, false),
            (one, "get", r, false),
            (one, "patch", w, true),
            (one, "delete", w, true),
            (
                "/api/v1/organizations/{id}/domains/{domain_id}/verify",
                "post",
                w,
                false,
            ),
        ];
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(path, method, scope, if_match)| {
                (path, method, scope, if_match, tags::ORGANIZATIONS)
            })
            .collect();
        crate::openapi::assert_operations(&operations(), &expected);
    }

    /// The view's schema lists every member the server sends, as required.
    #[test]
    fn the_view_schema_requires_every_member_sent() {
        use svc_domain::{DomainName, DomainStatus, OrganizationId, RoleKey, TenantId};
        let json = operations();
        let schemas = &json["components"]["schemas"];
        let required = |name: &str| -> Vec<String> {
            let mut r: Vec<String> = schemas[name]["required"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: {}", schemas[name]))
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            r.sort();
            r
        };
        let at = time::OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let domain = VerifiedDomain {
            id: DomainId::parse("dom_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            tenant_id: TenantId::parse("ten_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            organization_id: OrganizationId::parse("org_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            name: DomainName::parse("acme.example").unwrap(),
            status: DomainStatus::Pending,
            token: "0123456789abcdef0123456789abcdef".into(),
            verified_at: None,
            last_checked_at: None,
            auto_join: false,
            auto_join_roles: [RoleKey::parse("member").unwrap()].into(),
            created_at: at,
            updated_at: at,
        };
        let view = serde_json::to_value(DomainView::from(&domain)).unwrap();
        let mut sent: Vec<String> = view.as_object().unwrap().keys().cloned().collect();
        sent.sort();
        assert_eq!(required("DomainView"), sent);
        assert_eq!(required("DomainVerification"), ["dns_txt", "https"]);
        assert_eq!(required("DnsTxtProof"), ["name", "value"]);
        assert_eq!(required("HttpsProof"), ["body", "url"]);
        assert_eq!(
            schemas["DomainStatus"]["enum"],
            serde_json::json!(["pending", "verified"])
        );
        assert_eq!(
            view["verification"]["dns_txt"]["name"],
            "_svc-verification.acme.example"
        );
        assert_eq!(
            view["verification"]["https"]["body"],
            "svc-domain-verification=0123456789abcdef0123456789abcdef"
        );
        assert_eq!(required("NewDomain"), ["name"]);
    }
}
