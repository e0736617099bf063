//! The client credentials grant (RFC 6749 §4.4): scopes, audience, no refresh token, and
//! which grants an application may use.

use super::support::*;
use crate::error::ErrorCode;
use crate::token::*;
use svc_domain::{ScopeSet, TokenEndpointAuthMethod};

#[tokio::test]
async fn client_credentials_scopes_default_narrow_and_refuse() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let auth = client.basic();

    let all = fx.token(&[CC], Some(&auth)).await.unwrap();
    assert_eq!(all.scope, "applications:read audit:read");

    let subset = fx
        .token(
            &[CC, ("scope", "audit:read applications:read audit:read")],
            Some(&auth),
        )
        .await
        .unwrap();
    assert_eq!(
        subset.scope, "applications:read audit:read",
        "sorted, deduplicated"
    );

    let error = fx
        .refused(&[CC, ("scope", "audit:read users:write")], Some(&auth))
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidScope);
    assert!(error.description().contains("users:write"));

    let error = fx
        .refused(&[CC, ("scope", "audit:read  x")], Some(&auth))
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidScope);
    assert!(error.description().contains("malformed"));
}

#[tokio::test]
async fn client_credentials_audience_follows_resource_and_registration() {
    let fx = Fixture::new().await;
    let client = fx
        .client_with(TokenEndpointAuthMethod::ClientSecretBasic, |app| {
            app.api_audience = Some("https://api.example.net".into());
        })
        .await;
    let auth = client.basic();

    let default = fx.token(&[CC], Some(&auth)).await.unwrap();
    fx.verify(&default.access_token, "https://api.example.net")
        .await;

    let explicit = fx
        .token(&[CC, ("resource", "https://api.example.net")], Some(&auth))
        .await
        .unwrap();
    fx.verify(&explicit.access_token, "https://api.example.net")
        .await;

    for resources in [
        vec![("resource", "https://elsewhere.example.net")],
        vec![("resource", "https://api.example.net#x")],
        vec![("resource", "api.example.net")],
        vec![
            ("resource", "https://api.example.net"),
            ("resource", "https://api.example.net"),
        ],
    ] {
        let mut pairs = vec![CC];
        pairs.extend(resources.iter().copied());
        let error = fx.refused(&pairs, Some(&auth)).await;
        assert_eq!(error.code(), ErrorCode::InvalidTarget, "{resources:?}");
    }
}

#[tokio::test]
async fn client_credentials_never_issues_a_refresh_token() {
    let fx = Fixture::new().await;
    let client = fx
        .client_with(TokenEndpointAuthMethod::ClientSecretBasic, |app| {
            app.allowed_scopes = ScopeSet::parse("offline_access openid audit:read").unwrap();
            app.grant_types = vec![GrantType::ClientCredentials, GrantType::RefreshToken];
        })
        .await;
    let response = fx
        .token(
            &[CC, ("scope", "offline_access openid")],
            Some(&client.basic()),
        )
        .await
        .unwrap();
    assert_eq!(response.refresh_token, None);
    assert_eq!(response.id_token, None);
    let body = serde_json::to_value(&response).unwrap();
    assert!(body.get("refresh_token").is_none() && body.get("id_token").is_none());
}

#[tokio::test]
async fn grants_not_allowed_on_the_application_are_unauthorized_client() {
    let fx = Fixture::new().await;
    let client = fx
        .client_with(TokenEndpointAuthMethod::ClientSecretBasic, |app| {
            app.grant_types = vec![GrantType::AuthorizationCode];
        })
        .await;
    let error = fx.refused(&[CC], Some(&client.basic())).await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    let error = fx
        .refused(
            &[("grant_type", "refresh_token"), ("refresh_token", "r")],
            Some(&client.basic()),
        )
        .await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    // The allowed one runs, and refuses the unknown code.
    let error = fx
        .refused(
            &[("grant_type", "authorization_code"), ("code", "c")],
            Some(&client.basic()),
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidGrant);
}
