//! Refresh-token lifetimes and rotation edge cases (RFC 6749 §6, RFC 9700 §4.14.2): idle and
//! absolute expiry refuse a token without rotating it (so no reuse alarm), real reuse raises
//! one, a refresh that narrows `offline_access` away ends the family, and a suspended person's
//! tokens stop working.

use super::flow::*;
use super::support::*;
use crate::token::TokenSettings;
use std::time::Duration;
use svc_domain::UserStatus;

const REFRESH_REUSE: &str = "security.refresh_token.reuse";
const CODE_REUSE: &str = "security.authorization_code.reuse";

/// Refresh tokens idle out after an hour; a family lives three.
async fn short_lived() -> Flow {
    let fx = Fixture::with_settings(TokenSettings {
        refresh_token_idle: Duration::from_secs(3600),
        refresh_token_lifetime_human: Duration::from_secs(3 * 3600),
        ..TokenSettings::default()
    })
    .await;
    Flow::with(fx, true).await
}

fn minutes(n: i64) -> time::Duration {
    time::Duration::minutes(n)
}

/// Asserts `token` is refused as expired, twice: the first refusal changed nothing.
async fn refused_as_expired(flow: &Flow, token: &str) {
    for attempt in 1..=2 {
        let error = flow.refresh(token).await.unwrap_err();
        assert_eq!(error.code().as_str(), "invalid_grant", "attempt {attempt}");
        assert_eq!(
            error.description(),
            "the refresh token has expired",
            "attempt {attempt} must not look like reuse"
        );
    }
}

#[tokio::test]
async fn an_idle_expired_refresh_token_is_invalid_grant_without_a_reuse_alarm() {
    let flow = short_lived().await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.unwrap();
    flow.fx.clock.advance(minutes(61));
    refused_as_expired(&flow, &refresh).await;
    assert!(flow.audit(REFRESH_REUSE).await.is_empty(), "no reuse alarm");
}

#[tokio::test]
async fn past_the_familys_absolute_end_a_refresh_token_is_invalid_grant_without_a_reuse_alarm() {
    let flow = short_lived().await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    // Used every 50 minutes it never idles out, but the family ends after three hours.
    let mut refresh = tokens.refresh_token.unwrap();
    let mut rotated = Vec::new();
    for _ in 0..3 {
        flow.fx.clock.advance(minutes(50));
        let next = flow.refresh(&refresh).await.unwrap().refresh_token.unwrap();
        rotated.push(std::mem::replace(&mut refresh, next));
    }
    // 150 minutes in: the newest token is 0 minutes idle, the family has 30 minutes left.
    flow.fx.clock.advance(minutes(31));
    refused_as_expired(&flow, &refresh).await;
    // Stale members of an ended family are expired too, not a reason for an alarm.
    let error = flow.refresh(&rotated[0]).await.unwrap_err();
    assert_eq!(error.description(), "the refresh token has expired");
    assert!(flow.audit(REFRESH_REUSE).await.is_empty(), "no reuse alarm");
}

#[tokio::test]
async fn real_reuse_of_a_refresh_token_or_a_code_is_audited() {
    let flow = short_lived().await;
    let code = flow.code().await;
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.unwrap();
    flow.refresh(&refresh).await.unwrap();
    let reuse = flow.refresh(&refresh).await.unwrap_err();
    assert_eq!(reuse.code().as_str(), "invalid_grant");
    let entries = flow.audit(REFRESH_REUSE).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].actor, format!("client:{}", flow.app.id));

    assert!(flow.audit(CODE_REUSE).await.is_empty());
    assert!(flow.redeem(&code, VERIFIER).await.is_err());
    let entries = flow.audit(CODE_REUSE).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].target.as_deref(), Some(flow.user.id.as_str()));
}

#[tokio::test]
async fn narrowing_offline_access_away_issues_no_refresh_token_and_ends_the_family() {
    let flow = Flow::new(true).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    // Keeping offline_access rotates as usual.
    let kept = flow
        .refresh_with(
            &tokens.refresh_token.unwrap(),
            "openid profile offline_access",
        )
        .await
        .unwrap();
    let refresh = kept
        .refresh_token
        .expect("offline_access kept: a successor");
    let narrowed = flow.refresh_with(&refresh, "openid profile").await.unwrap();
    assert_eq!(narrowed.scope, "openid profile");
    assert_eq!(
        narrowed.refresh_token, None,
        "no offline access, no refresh token"
    );
    assert!(narrowed.id_token.is_some() && !narrowed.access_token.is_empty());
    // The family is over: the presented token was the last.
    assert_eq!(
        flow.refresh(&refresh).await.unwrap_err().code().as_str(),
        "invalid_grant"
    );
}

#[tokio::test]
async fn a_suspended_persons_refresh_token_is_invalid_grant() {
    let flow = Flow::new(true).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    flow.set_user_status(UserStatus::Suspended).await;
    let refused = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap_err();
    assert_eq!(refused.code().as_str(), "invalid_grant");
}
