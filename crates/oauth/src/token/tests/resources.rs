//! API resources in tokens ([`crate::resources`]): `resource` on authorize and at the token
//! endpoint, permissions granted as far as the person's roles (tenant roles, and organization
//! roles in an organization) hold them, re-read at redemption and refresh, and machine access
//! through an application's roles with client_credentials.

use super::flow::*;
use super::support::{basic, form};
use crate::authorize::AuthorizeOutcome;
use crate::error::ErrorCode;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use svc_domain::{
    ApiResource, ApiResourceId, Clock, Membership, OrgSlug, OrgStatus, Organization,
    OrganizationId, OsRandom, Permission, PermissionName, Role, RoleKey, RoleKind,
};

const API: &str = "https://invoices.example.com";
const ALL: &str = "openid offline_access invoices:read invoices:write invoices:void";

fn key(k: &str) -> RoleKey {
    RoleKey::parse(k).unwrap()
}

/// The invoices API of the flow's tenant, stored.
async fn invoices(flow: &Flow) -> ApiResource {
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    let p = |n: &str| Permission {
        name: PermissionName::parse(n).unwrap(),
        description: format!("{n} things"),
    };
    let api = ApiResource {
        id: ApiResourceId::generate(flow.fx.clock.as_ref(), &OsRandom),
        tenant_id: flow.fx.tenant.id.clone(),
        identifier: API.into(),
        name: "Invoices".into(),
        permissions: vec![p("invoices:read"), p("invoices:void"), p("invoices:write")],
        created_at: now,
        updated_at: now,
    };
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_api_resource(&api).await.unwrap();
    tx.commit().await.unwrap();
    api
}

/// Gives the role `role` exactly `permissions` of `api`.
async fn grant(flow: &Flow, role: &str, api: &ApiResource, permissions: &[&str]) {
    let grants: BTreeSet<_> = permissions
        .iter()
        .map(|p| (api.id.clone(), PermissionName::parse(p).unwrap()))
        .collect();
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.replace_role_grants(&flow.fx.tenant.id, &key(role), &grants)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// A custom role of `kind`, stored.
async fn role(flow: &Flow, name: &str, kind: RoleKind) {
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_role(&Role {
        tenant_id: flow.fx.tenant.id.clone(),
        key: key(name),
        kind,
        description: String::new(),
        created_at: now,
        updated_at: now,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

async fn hold(flow: &Flow, roles: &[&str]) {
    let roles: BTreeSet<_> = roles.iter().map(|r| key(r)).collect();
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.set_user_roles(
        &flow.fx.tenant.id,
        &flow.user.id,
        &roles,
        flow.fx.clock.now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

async fn redirect(flow: &Flow, extra: &[(&str, &str)]) -> HashMap<String, String> {
    let outcome = flow.authorize(extra).await;
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("expected a redirect, got {outcome:?}");
    };
    url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

fn claims(jwt: &str) -> Value {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

async fn redeem_with(
    flow: &Flow,
    code: &str,
    extra: &[(&str, &str)],
) -> Result<crate::TokenResponse, crate::OAuthError> {
    let mut pairs = vec![
        ("grant_type", "authorization_code"),
        ("client_id", flow.app.id.as_str()),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    pairs.extend_from_slice(extra);
    flow.fx
        .endpoint
        .handle(&flow.fx.tenant, &flow.fx.issuer, &form(&pairs), None)
        .await
}

#[tokio::test]
async fn a_person_gets_the_permissions_of_their_roles_for_the_named_api() {
    let flow = Flow::new(true).await;
    let api = invoices(&flow).await;
    role(&flow, "accountant", RoleKind::Tenant).await;
    grant(
        &flow,
        "accountant",
        &api,
        &["invoices:read", "invoices:void"],
    )
    .await;
    hold(&flow, &["accountant"]).await;

    let q = redirect(&flow, &[("scope", ALL), ("resource", API)]).await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    assert_eq!(
        tokens.scope,
        "invoices:read invoices:void offline_access openid"
    );
    let access = claims(&tokens.access_token);
    assert_eq!(access["aud"], API);
    assert_eq!(
        access["scope"],
        "invoices:read invoices:void offline_access openid"
    );
    // The shop's backend is another API's resource server: this token is not for it.
    let introspected = flow.introspect(&tokens.access_token).await;
    assert_eq!(introspected["active"], false);

    // A permission taken from the role is gone at the next refresh, and stays gone.
    grant(&flow, "accountant", &api, &["invoices:read"]).await;
    let refreshed = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(refreshed.scope, "invoices:read offline_access openid");
    assert_eq!(claims(&refreshed.access_token)["aud"], API);
    hold(&flow, &[]).await;
    let bare = flow
        .refresh(refreshed.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(bare.scope, "offline_access openid");
    grant(
        &flow,
        "accountant",
        &api,
        &["invoices:read", "invoices:write"],
    )
    .await;
    hold(&flow, &["accountant"]).await;
    let again = flow
        .refresh(bare.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(
        again.scope, "offline_access openid",
        "a refresh never widens its grant"
    );
}

#[tokio::test]
async fn without_a_role_the_sign_in_succeeds_with_no_permission() {
    let flow = Flow::new(true).await;
    invoices(&flow).await;
    let q = redirect(&flow, &[("scope", ALL), ("resource", API)]).await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    assert_eq!(tokens.scope, "offline_access openid");
    assert_eq!(claims(&tokens.access_token)["aud"], API);
}

#[tokio::test]
async fn organization_roles_count_only_in_their_organization() {
    let flow = Flow::new(true).await;
    let api = invoices(&flow).await;
    grant(&flow, "member", &api, &["invoices:read"]).await;
    grant(&flow, "tenant_admin", &api, &["invoices:void"]).await;
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    let org = Organization {
        id: OrganizationId::generate(flow.fx.clock.as_ref(), &OsRandom),
        tenant_id: flow.fx.tenant.id.clone(),
        slug: OrgSlug::parse("acme").unwrap(),
        name: "Acme".into(),
        metadata: serde_json::Map::new(),
        status: OrgStatus::Active,
        created_at: now,
        updated_at: now,
    };
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_organization(&org).await.unwrap();
    tx.insert_membership(&Membership {
        tenant_id: flow.fx.tenant.id.clone(),
        organization_id: org.id.clone(),
        user_id: flow.user.id.clone(),
        roles: BTreeSet::from([key("member")]),
        created_at: now,
        updated_at: now,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    hold(&flow, &["tenant_admin"]).await;

    let q = redirect(
        &flow,
        &[("scope", ALL), ("resource", API), ("organization", "acme")],
    )
    .await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    assert_eq!(
        tokens.scope,
        "invoices:read invoices:void offline_access openid"
    );
    assert_eq!(claims(&tokens.access_token)["org_id"], org.id.as_str());

    let q = redirect(&flow, &[("scope", ALL), ("resource", API)]).await;
    let outside = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    assert_eq!(outside.scope, "invoices:void offline_access openid");
}

#[tokio::test]
async fn unknown_repeated_or_malformed_resources_are_invalid_target() {
    let flow = Flow::new(true).await;
    invoices(&flow).await;
    for bad in [
        "https://unknown.example.com",
        "https://invoices.example.com/",
        "https://invoices.example.com#x",
        "invoices",
    ] {
        let q = redirect(&flow, &[("resource", bad)]).await;
        assert_eq!(q["error"], "invalid_target", "{bad}");
        assert_eq!(q["state"], "st-1");
        assert!(!q.contains_key("code"));
    }
    let mut params = flow.params(&[("resource", API)]);
    params.push(("resource".into(), "https://api.shop.example".into()));
    let outcome = flow
        .authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &params,
            Some(&flow.session),
        )
        .await;
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(url.contains("error=invalid_target"), "{url}");
    // The application's own audience is what it gets without the parameter.
    let q = redirect(&flow, &[("resource", "https://api.shop.example")]).await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    assert_eq!(
        claims(&tokens.access_token)["aud"],
        "https://api.shop.example"
    );
}

#[tokio::test]
async fn only_the_named_apis_permissions_escape_the_registered_scopes() {
    let flow = Flow::new(true).await;
    invoices(&flow).await;
    let q = redirect(&flow, &[("scope", "openid invoices:read")]).await;
    assert_eq!(q["error"], "invalid_scope", "no resource named");
    let q = redirect(
        &flow,
        &[
            ("scope", "openid invoices:read reports:read"),
            ("resource", API),
        ],
    )
    .await;
    assert_eq!(q["error"], "invalid_scope");
    assert!(q["error_description"].contains("reports:read"));
}

#[tokio::test]
async fn the_token_request_may_repeat_the_resource_but_not_change_it() {
    let flow = Flow::new(true).await;
    invoices(&flow).await;
    let q = redirect(&flow, &[("resource", API)]).await;
    let tokens = redeem_with(&flow, &q["code"], &[("resource", API)])
        .await
        .unwrap();
    assert_eq!(claims(&tokens.access_token)["aud"], API);
    let refused = flow
        .fx
        .endpoint
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[
                ("grant_type", "refresh_token"),
                ("client_id", flow.app.id.as_str()),
                ("refresh_token", tokens.refresh_token.as_deref().unwrap()),
                ("resource", "https://api.shop.example"),
            ]),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidTarget);
    // The refused refresh did not rotate the token.
    flow.refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap();

    let q = redirect(&flow, &[("resource", API)]).await;
    let other = redeem_with(
        &flow,
        &q["code"],
        &[("resource", "https://api.shop.example")],
    )
    .await
    .unwrap_err();
    assert_eq!(other.code(), ErrorCode::InvalidTarget);
    let burned = flow.redeem(&q["code"], VERIFIER).await.unwrap_err();
    assert_eq!(burned.code(), ErrorCode::InvalidGrant, "the code was spent");

    let q = redirect(&flow, &[]).await;
    let foreign = redeem_with(&flow, &q["code"], &[("resource", API)])
        .await
        .unwrap_err();
    assert_eq!(foreign.code(), ErrorCode::InvalidTarget);
}

#[tokio::test]
async fn a_deleted_api_ends_its_codes_and_refresh_tokens() {
    let flow = Flow::new(true).await;
    let api = invoices(&flow).await;
    let q = redirect(&flow, &[("resource", API)]).await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    let pending = redirect(&flow, &[("resource", API)]).await;
    let mut tx = flow.fx.store.write().await.unwrap();
    assert!(
        tx.delete_api_resource(&flow.fx.tenant.id, &api.id)
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    let error = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidGrant);
    let error = flow.redeem(&pending["code"], VERIFIER).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidGrant);
    // Re-registering the same identifier makes a new resource, not the old grant's.
    invoices(&flow).await;
    let error = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidGrant);
}

#[tokio::test]
async fn an_application_gets_its_roles_permissions_with_client_credentials() {
    let flow = Flow::new(true).await;
    let api = invoices(&flow).await;
    role(&flow, "billing_service", RoleKind::Tenant).await;
    grant(
        &flow,
        "billing_service",
        &api,
        &["invoices:read", "invoices:write"],
    )
    .await;
    let backend = &flow.confidential.0;
    let mut tx = flow.fx.store.write().await.unwrap();
    let mut allowed = backend.clone();
    allowed
        .grant_types
        .push(svc_domain::GrantType::ClientCredentials);
    allowed.updated_at += time::Duration::microseconds(1);
    let updated = tx
        .update_application(&allowed, backend.updated_at)
        .await
        .unwrap();
    assert_eq!(updated, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
    let token = |scope| machine_token(&flow, scope);
    assert_eq!(
        token(None).await.unwrap_err().code(),
        ErrorCode::InvalidScope,
        "an application without roles holds nothing"
    );
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.replace_application_roles(
        &flow.fx.tenant.id,
        &backend.id,
        &BTreeSet::from([key("billing_service")]),
        flow.fx.clock.now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let all = token(None).await.unwrap();
    assert_eq!(all.scope, "invoices:read invoices:write");
    let access = claims(&all.access_token);
    assert_eq!(access["aud"], API);
    assert_eq!(access["sub"], backend.id.as_str());
    let some = token(Some("invoices:read invoices:void")).await.unwrap();
    assert_eq!(some.scope, "invoices:read");
    assert_eq!(
        token(Some("invoices:read openid"))
            .await
            .unwrap_err()
            .code(),
        ErrorCode::InvalidScope
    );
}

async fn machine_token(
    flow: &Flow,
    scope: Option<&str>,
) -> Result<crate::TokenResponse, crate::OAuthError> {
    let (backend, secret) = &flow.confidential;
    let mut pairs = vec![("grant_type", "client_credentials"), ("resource", API)];
    pairs.extend(scope.map(|s| ("scope", s)));
    let auth = basic(backend.id.as_str(), secret);
    flow.fx
        .endpoint
        .handle(&flow.fx.tenant, &flow.fx.issuer, &form(&pairs), Some(&auth))
        .await
}
