//! The `organization` authorization parameter (CONTRACTS.md "Organizations, roles, keys, SCIM"):
//! a member of an active organization, named by id or slug, gets tokens carrying `org_id`,
//! `org_slug` (and the spec's `org`), through redemption, refresh and introspection; everyone
//! else gets `access_denied` with the same words whether the organization is unknown,
//! suspended or not theirs; and a grant whose organization access ended (member removed,
//! organization suspended or deleted) is refused at redemption and at refresh, where its family
//! is revoked.

use super::flow::*;
use crate::authorize::AuthorizeOutcome;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use svc_domain::{
    Clock, Membership, OrgSlug, OrgStatus, Organization, OrganizationId, OsRandom, RoleKey, UserId,
};

/// An organization of the flow's tenant, stored, with the person as a member when `member`.
pub(super) async fn organization(flow: &Flow, slug: &str, member: bool) -> Organization {
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    let org = Organization {
        id: OrganizationId::generate(flow.fx.clock.as_ref(), &OsRandom),
        tenant_id: flow.fx.tenant.id.clone(),
        slug: OrgSlug::parse(slug).unwrap(),
        name: format!("Org {slug}"),
        metadata: serde_json::Map::new(),
        status: OrgStatus::Active,
        created_at: now,
        updated_at: now,
    };
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_organization(&org).await.unwrap();
    if member {
        tx.insert_membership(&membership(flow, &org, &flow.user.id))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    org
}

fn membership(flow: &Flow, org: &Organization, user: &UserId) -> Membership {
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    Membership {
        tenant_id: flow.fx.tenant.id.clone(),
        organization_id: org.id.clone(),
        user_id: user.clone(),
        roles: BTreeSet::from([RoleKey::parse("member").unwrap()]),
        created_at: now,
        updated_at: now,
    }
}

/// The query of the redirect an authorization request ends with.
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

/// The JSON claims of a JWT, unverified (the tests of signatures live elsewhere).
pub(super) fn claims(jwt: &str) -> Value {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

async fn set_status(flow: &Flow, org: &Organization, status: OrgStatus) {
    let mut tx = flow.fx.store.write().await.unwrap();
    let changed = Organization {
        status,
        updated_at: org.updated_at + time::Duration::microseconds(1),
        ..org.clone()
    };
    let outcome = tx
        .update_organization_if_unchanged(&changed, org.updated_at)
        .await
        .unwrap();
    assert_eq!(outcome, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn a_member_named_by_id_or_slug_gets_tokens_carrying_the_organization() {
    let flow = Flow::new(true).await;
    let org = organization(&flow, "acme-eu", true).await;
    for named in [org.id.as_str(), "acme-eu"] {
        let q = redirect(&flow, &[("organization", named)]).await;
        let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
        let access = claims(&tokens.access_token);
        assert_eq!(access["org_id"], org.id.as_str(), "named by {named}");
        assert_eq!(access["org"], org.id.as_str());
        assert_eq!(access["org_slug"], "acme-eu");
        let id_token = claims(tokens.id_token.as_deref().unwrap());
        assert_eq!(id_token["org_id"], org.id.as_str());
        assert_eq!(id_token["org_slug"], "acme-eu");
        let introspected = flow.introspect(&tokens.access_token).await;
        assert_eq!(introspected["active"], true);
        assert_eq!(introspected["org_id"], org.id.as_str());
        assert_eq!(introspected["org_slug"], "acme-eu");

        let refreshed = flow
            .refresh(tokens.refresh_token.as_deref().unwrap())
            .await
            .unwrap();
        assert_eq!(claims(&refreshed.access_token)["org_id"], org.id.as_str());
        assert_eq!(
            claims(refreshed.id_token.as_deref().unwrap())["org_slug"],
            "acme-eu"
        );
    }
}

#[tokio::test]
async fn without_the_parameter_tokens_carry_no_organization() {
    let flow = Flow::new(true).await;
    organization(&flow, "acme", true).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let access = claims(&tokens.access_token);
    for claim in ["org", "org_id", "org_slug"] {
        assert!(access.get(claim).is_none(), "{claim}");
    }
}

#[tokio::test]
async fn unknown_suspended_or_foreign_organizations_are_refused_alike() {
    let flow = Flow::new(true).await;
    let not_mine = organization(&flow, "globex", false).await;
    let suspended = organization(&flow, "initech", true).await;
    set_status(&flow, &suspended, OrgStatus::Suspended).await;
    let unknown_id = OrganizationId::generate(flow.fx.clock.as_ref(), &OsRandom);
    let mut answers = Vec::new();
    for named in [
        not_mine.id.as_str(),
        "globex",
        "initech",
        suspended.id.as_str(),
        "nobody",
        unknown_id.as_str(),
    ] {
        let q = redirect(&flow, &[("organization", named)]).await;
        assert!(!q.contains_key("code"), "{named}");
        assert_eq!(q["state"], "st-1");
        answers.push((q["error"].clone(), q["error_description"].clone()));
    }
    assert!(answers.iter().all(|a| a == &answers[0]), "{answers:?}");
    assert_eq!(answers[0].0, "access_denied");
    // Under prompt=none the answer is the same.
    let q = redirect(&flow, &[("organization", "globex"), ("prompt", "none")]).await;
    assert_eq!(q["error"], "access_denied");
}

#[tokio::test]
async fn malformed_or_repeated_organization_parameters_are_invalid_request() {
    let flow = Flow::new(true).await;
    for bad in [
        "Acme",
        "org_",
        "acme eu",
        "-acme",
        &"a".repeat(64),
        "org_0000",
    ] {
        let q = redirect(&flow, &[("organization", bad)]).await;
        assert_eq!(q["error"], "invalid_request", "{bad}");
        assert!(q["error_description"].contains("organization"), "{bad}");
    }
    let mut params = flow.params(&[("organization", "acme")]);
    params.push(("organization".into(), "globex".into()));
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
    assert!(url.contains("error=invalid_request"), "{url}");
}

#[tokio::test]
async fn a_code_whose_organization_access_ended_is_refused_and_burned() {
    let flow = Flow::new(true).await;
    let org = organization(&flow, "acme", true).await;
    let q = redirect(&flow, &[("organization", "acme")]).await;
    let mut tx = flow.fx.store.write().await.unwrap();
    assert!(
        tx.delete_membership(&flow.fx.tenant.id, &org.id, &flow.user.id)
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    let error = flow.redeem(&q["code"], VERIFIER).await.unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_grant");
    assert!(error.description().contains("no longer a member"));
    // Rejoining does not revive the code: it was burned by the refused attempt.
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_membership(&membership(&flow, &org, &flow.user.id))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let again = flow.redeem(&q["code"], VERIFIER).await.unwrap_err();
    assert_eq!(again.code().as_str(), "invalid_grant");
}

#[tokio::test]
async fn a_refresh_after_removal_suspension_or_deletion_revokes_the_family() {
    let flow = Flow::new(true).await;
    // Each way access ends, on a fresh organization and grant.
    for (slug, end) in [("removed", 0), ("suspended", 1), ("deleted", 2)] {
        let org = organization(&flow, slug, true).await;
        let q = redirect(&flow, &[("organization", slug)]).await;
        let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
        let refresh = tokens.refresh_token.unwrap();
        let mut tx = flow.fx.store.write().await.unwrap();
        match end {
            0 => assert!(
                tx.delete_membership(&flow.fx.tenant.id, &org.id, &flow.user.id)
                    .await
                    .unwrap()
            ),
            2 => assert!(
                tx.delete_organization(&flow.fx.tenant.id, &org.id)
                    .await
                    .unwrap()
            ),
            _ => {}
        }
        tx.commit().await.unwrap();
        if end == 1 {
            set_status(&flow, &org, OrgStatus::Suspended).await;
        }
        let error = flow.refresh(&refresh).await.unwrap_err();
        assert_eq!(error.code().as_str(), "invalid_grant", "{slug}");
        assert!(error.description().contains("no longer a member"), "{slug}");
        if end == 1 {
            // Reactivated: the family stays revoked (no token of it ever works again).
            let suspended = {
                let mut tx = flow.fx.store.read().await.unwrap();
                let found = tx.organization(&flow.fx.tenant.id, &org.id).await.unwrap();
                tx.finish().await.unwrap();
                found.unwrap()
            };
            set_status(&flow, &suspended, OrgStatus::Active).await;
        }
        let again = flow.refresh(&refresh).await.unwrap_err();
        assert_eq!(again.code().as_str(), "invalid_grant", "{slug} again");
    }
    let revoked = flow.events("auth.token.revoked").await;
    assert_eq!(revoked.len(), 3, "{revoked:?}");
    assert!(
        revoked
            .iter()
            .all(|data| data["reason"] == "organization_access_ended"),
        "{revoked:?}"
    );
}

#[tokio::test]
async fn the_roles_scope_puts_tenant_and_organization_roles_in_id_tokens_and_userinfo() {
    let flow = Flow::build(super::support::Fixture::new().await, true, |app| {
        app.allowed_scopes =
            svc_domain::ScopeSet::parse("openid profile email offline_access roles").unwrap();
    })
    .await;
    let org = organization(&flow, "acme", true).await;
    let mut tx = flow.fx.store.write().await.unwrap();
    let admin = BTreeSet::from([RoleKey::parse("tenant_admin").unwrap()]);
    tx.set_user_roles(
        &flow.fx.tenant.id,
        &flow.user.id,
        &admin,
        flow.fx.clock.now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let scope = "openid offline_access roles";

    // In the organization: both claims, in the ID token, after refresh and from UserInfo.
    let q = redirect(&flow, &[("organization", "acme"), ("scope", scope)]).await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    let id_token = claims(tokens.id_token.as_deref().unwrap());
    assert_eq!(id_token["roles"], serde_json::json!(["tenant_admin"]));
    assert_eq!(id_token["org_roles"], serde_json::json!(["member"]));
    let refreshed = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(
        claims(refreshed.id_token.as_deref().unwrap())["org_roles"],
        serde_json::json!(["member"])
    );
    let info = flow
        .userinfo()
        .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
        .await
        .unwrap();
    assert_eq!(info["roles"], serde_json::json!(["tenant_admin"]));
    assert_eq!(info["org_roles"], serde_json::json!(["member"]));
    // Roles are read when asked, so a change shows at once.
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.update_membership_roles(
        &flow.fx.tenant.id,
        &org.id,
        &flow.user.id,
        &BTreeSet::from([RoleKey::parse("owner").unwrap()]),
        flow.fx.clock.now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let info = flow
        .userinfo()
        .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
        .await
        .unwrap();
    assert_eq!(info["org_roles"], serde_json::json!(["owner"]));

    // Outside an organization: `roles` only; without the scope: neither.
    let q = redirect(&flow, &[("scope", scope)]).await;
    let tokens = flow.redeem(&q["code"], VERIFIER).await.unwrap();
    let id_token = claims(tokens.id_token.as_deref().unwrap());
    assert_eq!(id_token["roles"], serde_json::json!(["tenant_admin"]));
    assert!(id_token.get("org_roles").is_none());
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let id_token = claims(tokens.id_token.as_deref().unwrap());
    assert!(id_token.get("roles").is_none() && id_token.get("org_roles").is_none());
    let info = flow
        .userinfo()
        .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
        .await
        .unwrap();
    assert!(info.get("roles").is_none());
}
