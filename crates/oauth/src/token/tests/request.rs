//! Parsing the token request: unsupported and missing grant types, repeated parameters,
//! several authentication mechanisms, and the client id hint.

use super::support::*;
use crate::error::ErrorCode;
use crate::token::*;
use svc_domain::TokenEndpointAuthMethod;

#[tokio::test]
async fn unsupported_malformed_and_missing_grant_types() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let auth = client.basic();
    for grant in [
        "password",
        "implicit",
        "urn:ietf:params:oauth:grant-type:saml2-bearer",
        "client credentials",
        "CLIENT_CREDENTIALS",
    ] {
        let error = fx.refused(&[("grant_type", grant)], Some(&auth)).await;
        assert_eq!(error.code(), ErrorCode::UnsupportedGrantType, "{grant}");
    }
    // A grant this deployment serves, but not to this client (RFC 6749 §5.2).
    let device = [
        ("grant_type", svc_domain::DEVICE_CODE_GRANT),
        ("device_code", "dc_x"),
    ];
    let error = fx.refused(&device, Some(&auth)).await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    let exchange = [
        ("grant_type", svc_domain::TOKEN_EXCHANGE_GRANT),
        ("subject_token", "st"),
    ];
    let error = fx.refused(&exchange, Some(&auth)).await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    let error = fx.refused(&[("scope", "audit:read")], Some(&auth)).await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
}

#[tokio::test]
async fn duplicated_parameters_are_invalid_request() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;
    let error = fx
        .refused(
            &[
                CC,
                ("client_id", client.id()),
                ("client_secret", client.secret()),
                ("scope", "audit:read"),
                ("scope", "applications:read"),
            ],
            None,
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert!(error.description().contains("`scope`"));
    let error = fx
        .refused(
            &[
                CC,
                CC,
                ("client_id", client.id()),
                ("client_secret", client.secret()),
            ],
            None,
        )
        .await;
    assert!(error.description().contains("`grant_type`"));
}

#[tokio::test]
async fn several_authentication_mechanisms_are_invalid_request() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let error = fx
        .refused(
            &[CC, ("client_secret", client.secret())],
            Some(&client.basic()),
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
}

#[tokio::test]
async fn the_client_id_hint_needs_no_store() {
    let client = "app_01jd0000000000000000000000";
    assert_eq!(
        client_id_hint(&form(&[CC]), Some(&basic(client, "s"))).as_deref(),
        Some(client)
    );
}
