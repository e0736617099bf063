//! Access-control policies (issue 17 item 6) at the authorization and token endpoints: the
//! network and sign-in-method rules refuse at sign-in with `access_denied` naming the policy;
//! an older session than a policy allows signs in again; an assurance floor nobody can reach is
//! `unmet_authentication_requirements`; and at the token endpoint every rule is checked again,
//! so a policy added after the sign-in refuses the code and the refresh (whose family it
//! revokes). Each refusal is audited as `access_policy.denied.<rule>`.

use super::flow::*;
use super::support::form;
use crate::authorize::AuthorizeOutcome;
use std::net::IpAddr;
use svc_domain::{
    AccessPolicy, Clock, Origin, OsRandom, PolicyId, PolicyRules, PolicyTargets, Session,
};

const INSIDE: &str = "10.1.2.3";
const OUTSIDE: &str = "192.0.2.1";

/// Stores an enabled policy of the flow's tenant named `name`, governing the flow's
/// application.
async fn policy(flow: &Flow, name: &str, rules: PolicyRules) -> AccessPolicy {
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    let policy = AccessPolicy {
        id: PolicyId::generate(flow.fx.clock.as_ref(), &OsRandom),
        tenant_id: flow.fx.tenant.id.clone(),
        name: name.to_owned(),
        description: String::new(),
        enabled: true,
        targets: PolicyTargets {
            applications: [flow.app.id.clone()].into(),
            ..PolicyTargets::default()
        },
        rules,
        created_at: now,
        updated_at: now,
    };
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_access_policy(&policy).await.unwrap();
    tx.commit().await.unwrap();
    policy
}

fn office() -> PolicyRules {
    PolicyRules {
        allowed_ip_ranges: vec!["10.0.0.0/8".parse().unwrap()],
        ..PolicyRules::default()
    }
}

fn at(ip: &str) -> Origin {
    Origin::Person(ip.parse::<IpAddr>().unwrap())
}

async fn authorize_from(flow: &Flow, origin: Origin, extra: &[(&str, &str)]) -> AuthorizeOutcome {
    flow.authorize
        .authorize_from(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(extra),
            Some(&flow.session),
            origin,
        )
        .await
}

async fn redeem_from(
    flow: &Flow,
    code: &str,
    peer: Option<&str>,
) -> Result<crate::token::TokenResponse, crate::OAuthError> {
    flow.fx
        .endpoint
        .handle_from(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[
                ("grant_type", "authorization_code"),
                ("client_id", flow.app.id.as_str()),
                ("code", code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
            ]),
            None,
            peer.map(|p| p.parse().unwrap()),
        )
        .await
}

#[tokio::test]
async fn a_network_policy_admits_sign_in_from_its_networks_only() {
    let flow = Flow::new(true).await;
    let office = policy(&flow, "office \"only\"", office()).await;

    let refused = query(&authorize_from(&flow, at(OUTSIDE), &[]).await);
    assert_eq!(refused["error"], "access_denied");
    assert!(
        refused["error_description"].contains("\"office \"only\"\"")
            && refused["error_description"].contains("network"),
        "{refused:?}"
    );
    assert_eq!(refused["state"], "st-1");
    assert!(!refused.contains_key("code"));
    let audited = flow.audit("access_policy.denied.allowed_ip_ranges").await;
    assert_eq!(audited.len(), 1);
    assert_eq!(audited[0].target.as_deref(), Some(office.id.as_str()));
    assert_eq!(audited[0].actor, format!("user:{}", flow.user.id));
    assert_eq!(audited[0].client_ip.as_deref(), Some(OUTSIDE));

    // An address nobody could tell is never inside.
    let unknown = query(&authorize_from(&flow, Origin::Unknown, &[]).await);
    assert_eq!(unknown["error"], "access_denied");

    let inside = query(&authorize_from(&flow, at(INSIDE), &[]).await);
    let code = inside.get("code").expect("a code from inside").clone();
    // The public client's token request comes from the person's device: outside is refused
    // (and burns the code), inside works.
    let outside = redeem_from(&flow, &code, Some(OUTSIDE)).await.unwrap_err();
    assert_eq!(outside.code().as_str(), "invalid_grant");
    assert!(
        outside.description().contains("office"),
        "{}",
        outside.description()
    );
    let code = query(&authorize_from(&flow, at(INSIDE), &[]).await)["code"].clone();
    let tokens = redeem_from(&flow, &code, Some(INSIDE)).await.unwrap();
    assert!(tokens.refresh_token.is_some());

    // A policy for another application governs nothing here.
    let mut tx = flow.fx.store.write().await.unwrap();
    let mut elsewhere = office.clone();
    elsewhere.targets.applications = [flow.confidential.0.id.clone()].into();
    elsewhere.updated_at = office.updated_at + time::Duration::seconds(1);
    let applied = tx
        .update_access_policy_if_unchanged(&elsewhere, office.updated_at)
        .await
        .unwrap();
    assert_eq!(applied, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
    assert!(query(&authorize_from(&flow, at(OUTSIDE), &[]).await).contains_key("code"));
}

#[tokio::test]
async fn a_network_policy_does_not_judge_a_confidential_clients_back_end() {
    let flow = Flow::new(true).await;
    let mut rules = office();
    rules.max_session_age_secs = Some(3_600);
    let mut stored = policy(&flow, "office", rules).await;
    // Govern the confidential backend: its token requests come from its own servers.
    let mut tx = flow.fx.store.write().await.unwrap();
    let before = stored.updated_at;
    stored.targets.applications = [flow.confidential.0.id.clone()].into();
    stored.updated_at = before + time::Duration::seconds(1);
    let applied = tx
        .update_access_policy_if_unchanged(&stored, before)
        .await
        .unwrap();
    assert_eq!(applied, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
    let verdict = {
        let mut tx = flow.fx.store.read().await.unwrap();
        let sign_in = crate::policies::GrantSignIn {
            user: &flow.user.id,
            organization: None,
            acr: flow.session.acr.as_deref(),
            amr: &flow.session.amr,
            auth_time: flow.session.auth_time,
        };
        let now = flow.fx.clock.now();
        let backend = &flow.confidential.0;
        let from_outside = crate::policies::token_denial(
            tx.as_mut(),
            &flow.fx.tenant.id,
            backend,
            &sign_in,
            Some(OUTSIDE.parse().unwrap()),
            now,
        )
        .await
        .unwrap();
        let mut public = backend.clone();
        public.token_endpoint_auth_method = svc_domain::TokenEndpointAuthMethod::None;
        let public_outside = crate::policies::token_denial(
            tx.as_mut(),
            &flow.fx.tenant.id,
            &public,
            &sign_in,
            Some(OUTSIDE.parse().unwrap()),
            now,
        )
        .await
        .unwrap();
        tx.finish().await.unwrap();
        (from_outside, public_outside)
    };
    assert_eq!(
        verdict.0, None,
        "a back end's address says nothing about the person"
    );
    assert_eq!(
        verdict.1.map(|d| d.rule),
        Some(svc_domain::PolicyRule::Network),
        "a public client's request comes from the person's device"
    );
}

#[tokio::test]
async fn a_sign_in_method_policy_refuses_other_methods() {
    let flow = Flow::new(true).await;
    policy(
        &flow,
        "passkeys",
        PolicyRules {
            sign_in_methods: ["hwk".to_owned(), "swk".to_owned()].into(),
            ..PolicyRules::default()
        },
    )
    .await;
    let refused = query(&flow.authorize(&[]).await);
    assert_eq!(refused["error"], "access_denied");
    assert!(
        refused["error_description"].contains("method"),
        "{refused:?}"
    );
    assert_eq!(
        flow.audit("access_policy.denied.sign_in_methods")
            .await
            .len(),
        1
    );
}

#[tokio::test]
async fn an_older_session_than_a_policy_allows_signs_in_again() {
    let flow = Flow::new(true).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.unwrap();
    policy(
        &flow,
        "eight hours",
        PolicyRules {
            max_session_age_secs: Some(600),
            ..PolicyRules::default()
        },
    )
    .await;
    // Exactly at the limit: still fine.
    flow.fx.clock.advance(time::Duration::seconds(600));
    assert!(query(&flow.authorize(&[]).await).contains_key("code"));
    let refresh = flow.refresh(&refresh).await.unwrap().refresh_token.unwrap();

    flow.fx.clock.advance(time::Duration::seconds(1));
    let outcome = flow.authorize(&[]).await;
    let AuthorizeOutcome::Login { interaction } = outcome else {
        panic!("an old session signs in again, got {outcome:?}");
    };
    assert_eq!(
        query(&flow.authorize(&[("prompt", "none")]).await)["error"],
        "login_required"
    );
    // A sign-in for this very request satisfies the policy.
    let fresh = Session {
        auth_time: flow.fx.clock.now(),
        ..flow.session.clone()
    };
    let resumed = flow
        .authorize
        .resume(&flow.fx.tenant, &flow.fx.issuer, &interaction, Some(&fresh))
        .await;
    assert!(query(&resumed).contains_key("code"), "{resumed:?}");

    // The family's sign-in is too old now: refused, and revoked for good.
    let error = flow.refresh(&refresh).await.unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_grant");
    assert!(
        error.description().contains("eight hours"),
        "{}",
        error.description()
    );
    assert_eq!(
        flow.audit("access_policy.denied.max_session_age_secs")
            .await
            .len(),
        1
    );
    let revoked = flow.events("auth.token.revoked").await;
    assert_eq!(
        revoked.last().unwrap()["reason"],
        "policy_denied",
        "{revoked:?}"
    );
}

#[tokio::test]
async fn a_policy_added_after_sign_in_refuses_the_code_and_the_refresh() {
    let flow = Flow::new(true).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.unwrap();
    let code = flow.code().await;
    // Signed in with a password (aal1); the tenant now requires two factors for this app.
    let mfa = policy(
        &flow,
        "mfa",
        PolicyRules {
            require_acr: Some(svc_domain::ACR_AAL2.into()),
            ..PolicyRules::default()
        },
    )
    .await;
    let error = flow.redeem(&code, VERIFIER).await.unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_grant");
    assert!(
        error.description().contains("\"mfa\""),
        "{}",
        error.description()
    );
    let again = flow.redeem(&code, VERIFIER).await.unwrap_err();
    assert!(
        again.description().contains("already used"),
        "the code stays burned"
    );

    let error = flow.refresh(&refresh).await.unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_grant");
    assert!(error.description().contains("\"mfa\""));
    let audited = flow.audit("access_policy.denied.require_acr").await;
    assert_eq!(audited.len(), 2);
    assert!(
        audited
            .iter()
            .all(|e| e.target.as_deref() == Some(mfa.id.as_str()))
    );

    // Disabling the policy does not bring the revoked family back.
    let mut tx = flow.fx.store.write().await.unwrap();
    let mut off = mfa.clone();
    off.enabled = false;
    off.updated_at = mfa.updated_at + time::Duration::seconds(1);
    let applied = tx
        .update_access_policy_if_unchanged(&off, mfa.updated_at)
        .await
        .unwrap();
    assert_eq!(applied, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
    let gone = flow.refresh(&refresh).await.unwrap_err();
    assert_eq!(gone.code().as_str(), "invalid_grant");
    // A new sign-in works again.
    assert!(flow.redeem(&flow.code().await, VERIFIER).await.is_ok());
}

#[tokio::test]
async fn an_assurance_floor_nobody_can_reach_is_that_policys_refusal() {
    // The flow's settings offer no second factor: aal2 cannot be reached.
    let flow = Flow::new(true).await;
    policy(
        &flow,
        "mfa",
        PolicyRules {
            require_acr: Some(svc_domain::ACR_AAL2.into()),
            ..PolicyRules::default()
        },
    )
    .await;
    let refused = query(&flow.authorize(&[]).await);
    assert_eq!(refused["error"], "unmet_authentication_requirements");
    assert!(
        refused["error_description"].contains("\"mfa\""),
        "{refused:?}"
    );
    assert_eq!(
        flow.audit("access_policy.denied.require_acr").await.len(),
        1
    );
    // A session at aal2 passes.
    let strong = Session {
        acr: Some(svc_domain::ACR_AAL2.into()),
        amr: vec!["pwd".into(), "otp".into(), "mfa".into()],
        ..flow.session.clone()
    };
    let outcome = flow
        .authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(&[]),
            Some(&strong),
        )
        .await;
    assert!(query(&outcome).contains_key("code"), "{outcome:?}");
}

#[tokio::test]
async fn a_role_targeted_policy_governs_only_the_people_holding_the_role() {
    // "Administrators need two factors": a policy on tenant_admin, whatever the application.
    let flow = Flow::new(true).await;
    let now = crate::authorize::truncate_micros(flow.fx.clock.now());
    let admins = AccessPolicy {
        id: PolicyId::generate(flow.fx.clock.as_ref(), &OsRandom),
        tenant_id: flow.fx.tenant.id.clone(),
        name: "admins use two factors".into(),
        description: String::new(),
        enabled: true,
        targets: PolicyTargets {
            roles: [svc_domain::RoleKey::parse("tenant_admin").unwrap()].into(),
            ..PolicyTargets::default()
        },
        rules: PolicyRules {
            require_acr: Some(svc_domain::ACR_AAL2.into()),
            ..PolicyRules::default()
        },
        created_at: now,
        updated_at: now,
    };
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.insert_access_policy(&admins).await.unwrap();
    tx.commit().await.unwrap();

    // Not an administrator: the policy does not apply, and a refresh family is started.
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.unwrap();

    // Made one: the next sign-in and the next refresh are held to the policy.
    let roles = [svc_domain::RoleKey::parse("tenant_admin").unwrap()].into();
    let mut tx = flow.fx.store.write().await.unwrap();
    tx.set_user_roles(&flow.fx.tenant.id, &flow.user.id, &roles, now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let refused = query(&flow.authorize(&[]).await);
    assert_eq!(refused["error"], "unmet_authentication_requirements");
    assert!(refused["error_description"].contains("admins use two factors"));
    let error = flow.refresh(&refresh).await.unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_grant");
    assert!(error.description().contains("admins use two factors"));
}
