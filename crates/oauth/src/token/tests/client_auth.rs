//! Client authentication by secret (RFC 6749 §2.3.1) and `none`.

use super::support::*;
use crate::error::ErrorCode;
use crate::token::*;
use serde_json::json;
use svc_crypto::SigningAlg;
use svc_domain::{ClientId, OsRandom, TokenEndpointAuthMethod};

#[tokio::test]
async fn client_secret_basic_authenticates_and_gets_a_token() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let response = fx.token(&[CC], Some(&client.basic())).await.unwrap();
    assert_eq!(response.token_type, "Bearer");
    assert_eq!(
        response.expires_in, 300,
        "system subjects get the agent lifetime"
    );
    assert_eq!(response.scope, "applications:read audit:read");
    assert_eq!(response.refresh_token, None);
    assert_eq!(response.id_token, None);
}

#[tokio::test]
async fn client_secret_post_authenticates() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;
    let response = fx
        .token(
            &[
                CC,
                ("client_id", client.id()),
                ("client_secret", client.secret()),
            ],
            None,
        )
        .await
        .unwrap();
    assert!(!response.access_token.is_empty());
}

#[tokio::test]
async fn none_authenticates_public_clients_by_client_id_alone() {
    let fx = Fixture::new().await;
    // Authentication succeeds; the grant then refuses (RFC 6749 §4.4: confidential only).
    let public = fx.client(TokenEndpointAuthMethod::None).await;
    let error = fx.refused(&[CC, ("client_id", public.id())], None).await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    // And for the code grant: the public client is authenticated, so an unknown code is
    // invalid_grant, not invalid_client.
    let public = fx
        .client_with(TokenEndpointAuthMethod::None, |app| {
            app.grant_types = vec![GrantType::AuthorizationCode];
        })
        .await;
    let error = fx
        .refused(
            &[
                ("grant_type", "authorization_code"),
                ("client_id", public.id()),
                ("code", "c"),
            ],
            None,
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidGrant);
}

#[tokio::test]
async fn the_registered_method_must_be_used_exactly() {
    let fx = Fixture::new().await;
    let basic_app = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let post_app = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;

    // Basic attempt by a client_secret_post client: 401 with a Basic challenge.
    let error = fx.refused(&[CC], Some(&post_app.basic())).await;
    assert_auth_failed(&error);
    assert!(error.basic_challenge());
    assert!(error.log_detail().unwrap().contains("registered method"));

    // Post attempt by a client_secret_basic client: 401 without a challenge.
    let error = fx
        .refused(
            &[
                CC,
                ("client_id", basic_app.id()),
                ("client_secret", basic_app.secret()),
            ],
            None,
        )
        .await;
    assert_auth_failed(&error);
    assert!(!error.basic_challenge());

    // A confidential client sending only its client_id.
    let error = fx.refused(&[CC, ("client_id", basic_app.id())], None).await;
    assert_auth_failed(&error);

    // A private_key_jwt client sending a secret.
    let key = ClientKey::generate(SigningAlg::Es256);
    let jwt_app = fx
        .client_with(TokenEndpointAuthMethod::PrivateKeyJwt, |app| {
            app.jwks = Some(jwks_of(&[&key]));
        })
        .await;
    let error = fx
        .refused(
            &[CC, ("client_id", jwt_app.id()), ("client_secret", "guess")],
            None,
        )
        .await;
    assert_auth_failed(&error);
    let error = fx.refused(&[CC], Some(&basic(jwt_app.id(), "guess"))).await;
    assert_auth_failed(&error);

    // A client_secret_basic client presenting an assertion.
    let assertion = key.assertion(&fx, basic_app.id(), json!({}));
    let error = fx
        .refused(
            &[
                CC,
                ("client_assertion_type", ASSERTION_TYPE),
                ("client_assertion", &assertion),
            ],
            None,
        )
        .await;
    assert_auth_failed(&error);
}

#[tokio::test]
async fn a_public_client_sending_a_secret_is_refused() {
    let fx = Fixture::new().await;
    let public = fx.client(TokenEndpointAuthMethod::None).await;
    let error = fx
        .refused(
            &[
                CC,
                ("client_id", public.id()),
                ("client_secret", "anything"),
            ],
            None,
        )
        .await;
    assert_auth_failed(&error);
    let error = fx.refused(&[CC], Some(&basic(public.id(), ""))).await;
    assert_auth_failed(&error);
    assert!(error.basic_challenge());
}

#[tokio::test]
async fn unknown_client_and_wrong_secret_are_indistinguishable() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let unknown_id = ClientId::generate(fx.clock.as_ref(), &OsRandom);

    let wrong_secret = fx
        .refused(&[CC], Some(&basic(client.id(), "cs_wrong")))
        .await;
    let unknown = fx
        .refused(&[CC], Some(&basic(unknown_id.as_str(), client.secret())))
        .await;
    let malformed_id = fx
        .refused(&[CC], Some(&basic("not-an-id", client.secret())))
        .await;
    assert_auth_failed(&wrong_secret);
    assert_same_error(&wrong_secret, &unknown);
    assert_same_error(&wrong_secret, &malformed_id);
    assert!(wrong_secret.basic_challenge());
    // Only the logs can tell them apart.
    assert_eq!(wrong_secret.log_detail(), Some("wrong client secret"));
    assert_eq!(unknown.log_detail(), Some("unknown client"));

    // The same holds in the body.
    let post = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;
    let wrong = fx
        .refused(
            &[CC, ("client_id", post.id()), ("client_secret", "x")],
            None,
        )
        .await;
    let unknown = fx
        .refused(
            &[
                CC,
                ("client_id", unknown_id.as_str()),
                ("client_secret", "x"),
            ],
            None,
        )
        .await;
    assert_same_error(&wrong, &unknown);
    assert!(!wrong.basic_challenge());
}

#[tokio::test]
async fn another_tenants_client_is_unknown_here() {
    let fx = Fixture::new().await;
    let foreign = fx
        .client_in(
            &fx.other_tenant,
            TokenEndpointAuthMethod::ClientSecretBasic,
            |_| {},
        )
        .await;
    let error = fx.refused(&[CC], Some(&foreign.basic())).await;
    assert_auth_failed(&error);
    assert_eq!(error.log_detail(), Some("unknown client"));
    // It works at its own tenant.
    let response = fx
        .endpoint
        .handle(
            &fx.other_tenant,
            "https://other.example.com",
            &form(&[CC]),
            Some(&foreign.basic()),
        )
        .await
        .unwrap();
    assert!(!response.access_token.is_empty());
}

#[tokio::test]
async fn no_client_authentication_is_invalid_client() {
    let fx = Fixture::new().await;
    let error = fx.refused(&[CC], None).await;
    assert_eq!(error.code(), ErrorCode::InvalidClient);
    assert!(!error.basic_challenge());
}
