//! Authorization decisions around authentication and consent (OIDC Core §3.1.2.1): `max_age`
//! after a fresh sign-in, `prompt=consent` for first- and third-party applications, and
//! `prompt=none` answering `login_required` / `consent_required` instead of showing a page.

use super::flow::*;
use crate::authorize::AuthorizeOutcome;
use svc_domain::Clock;

fn redirect_param(outcome: &AuthorizeOutcome, name: &str) -> Option<String> {
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("expected a redirect to the client, got {outcome:?}");
    };
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

#[tokio::test]
async fn max_age_zero_is_met_by_the_sign_in_made_for_the_request_instead_of_looping() {
    let flow = Flow::new(true).await;
    flow.fx.clock.advance(time::Duration::seconds(30));
    let AuthorizeOutcome::Login { interaction } = flow.authorize(&[("max_age", "0")]).await else {
        panic!("an older session does not meet max_age=0");
    };
    // The person signs in for this request; a few seconds pass before the resume.
    flow.fx.clock.advance(time::Duration::seconds(2));
    let fresh = flow.sign_in_again(flow.fx.clock.now()).await;
    flow.fx.clock.advance(time::Duration::seconds(3));
    let resumed = flow
        .authorize
        .resume(&flow.fx.tenant, &flow.fx.issuer, &interaction, Some(&fresh))
        .await;
    assert!(
        redirect_param(&resumed, "code").is_some(),
        "resume issues a code"
    );
    // A session older than the request still does not satisfy max_age=0.
    assert!(matches!(
        flow.authorize(&[("max_age", "0")]).await,
        AuthorizeOutcome::Login { .. }
    ));
}

#[tokio::test]
async fn prompt_consent_asks_first_party_applications_too_then_issues_the_code() {
    let flow = Flow::new(true).await;
    // Without prompt=consent a first-party application gets its code at once.
    assert!(redirect_param(&flow.authorize(&[]).await, "code").is_some());
    let AuthorizeOutcome::Consent { interaction } = flow.authorize(&[("prompt", "consent")]).await
    else {
        panic!("prompt=consent must show the consent page");
    };
    let decided = flow
        .authorize
        .decide_consent(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &interaction,
            Some(&flow.session),
            true,
        )
        .await;
    let code = redirect_param(&decided, "code").unwrap();
    assert!(flow.redeem(&code, VERIFIER).await.is_ok());
}

#[tokio::test]
async fn prompt_consent_asks_again_even_when_third_party_consent_is_remembered() {
    let flow = Flow::new(false).await;
    flow.code().await; // consents once
    assert!(redirect_param(&flow.authorize(&[]).await, "code").is_some());
    assert!(matches!(
        flow.authorize(&[("prompt", "consent")]).await,
        AuthorizeOutcome::Consent { .. }
    ));
}

#[tokio::test]
async fn prompt_none_answers_consent_required_or_login_required_with_state_and_iss() {
    let flow = Flow::new(false).await;
    let silent = flow.authorize(&[("prompt", "none")]).await;
    assert_eq!(
        redirect_param(&silent, "error").as_deref(),
        Some("consent_required")
    );
    assert_eq!(redirect_param(&silent, "state").as_deref(), Some("st-1"));
    assert_eq!(redirect_param(&silent, "iss"), Some(flow.fx.issuer.clone()));
    let anonymous = flow
        .authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(&[("prompt", "none")]),
            None,
        )
        .await;
    assert_eq!(
        redirect_param(&anonymous, "error").as_deref(),
        Some("login_required")
    );
    // Once consent is given, prompt=none succeeds silently.
    flow.code().await;
    assert!(redirect_param(&flow.authorize(&[("prompt", "none")]).await, "code").is_some());
}
