//! `private_key_jwt` client authentication (RFC 7523 §2.2, §3; OIDC Core §9).

use super::support::*;
use crate::client_auth::JwksFetcher;
use crate::error::ErrorCode;
use crate::token::*;
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use std::sync::Arc;
use svc_crypto::SigningAlg;
use svc_domain::{ClientId, Clock, OsRandom, TokenEndpointAuthMethod};
use time::Duration;

#[tokio::test]
async fn private_key_jwt_authenticates_with_every_supported_algorithm() {
    let fx = Fixture::new().await;
    let es = ClientKey::generate(SigningAlg::Es256);
    let ed = ClientKey::generate(SigningAlg::EdDsa);
    let rsa = ClientKey::generate(SigningAlg::Rs256);
    let client = fx.jwt_client(&[&es, &ed, &rsa]).await;
    for (key, alg) in [
        (&es, Algorithm::ES256),
        (&ed, Algorithm::EdDSA),
        (&rsa, Algorithm::RS256),
        (&rsa, Algorithm::PS256),
    ] {
        let mut header = key.header();
        header.alg = alg;
        let assertion = key.sign(header, &ClientKey::claims(&fx, client.id(), json!({})));
        let response = fx.with_assertion(&assertion, &[]).await;
        assert!(response.is_ok(), "{alg:?}: {:?}", response.err());
    }
    // With a matching client_id in the body, and aud = the token endpoint URL.
    let assertion = es.assertion(
        &fx,
        client.id(),
        json!({"aud": format!("{}/oauth/token", fx.issuer)}),
    );
    fx.with_assertion(&assertion, &[("client_id", client.id())])
        .await
        .unwrap();
}

#[tokio::test]
async fn private_key_jwt_refuses_alg_none_and_hmac_with_the_public_key() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let claims = ClientKey::claims(&fx, client.id(), json!({}));

    // alg=none, empty signature (CVE-2026-16093).
    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none", "kid": key.kid()}).to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let error = fx.assertion_refused(&none).await;
    assert!(error.description().contains("never none or HMAC"));

    // HS256 keyed with the public key (the classic algorithm-confusion attack), both the JWK
    // text and the raw public coordinates as the "secret".
    let jwk_text = key.jwk().to_string();
    for secret in [
        jwk_text.as_bytes().to_vec(),
        URL_SAFE_NO_PAD
            .decode(key.jwk()["x"].as_str().unwrap())
            .unwrap(),
    ] {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(key.kid().to_owned());
        install_provider();
        let forged =
            jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(&secret)).unwrap();
        let error = fx.assertion_refused(&forged).await;
        assert!(error.description().contains("never none or HMAC"));
    }
}

#[tokio::test]
async fn private_key_jwt_refuses_expired_and_long_lived_assertions() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let now = fx.clock.now().unix_timestamp();

    // exp five minutes in the past (FAPI2 ensure-client-assertion-with-exp-is-5-minutes-in-past).
    let expired = key.assertion(
        &fx,
        client.id(),
        json!({"exp": now - 300, "iat": now - 400}),
    );
    assert!(
        fx.assertion_refused(&expired)
            .await
            .description()
            .contains("expired")
    );

    let long = key.assertion(&fx, client.id(), json!({"exp": now + 3600}));
    assert!(
        fx.assertion_refused(&long)
            .await
            .description()
            .contains("expire within")
    );

    let no_exp = key.assertion(&fx, client.id(), json!({"exp": null}));
    assert!(
        fx.assertion_refused(&no_exp)
            .await
            .description()
            .contains("exp")
    );

    // nbf 8 s ahead is fine; over 60 s is not.
    let soon = key.assertion(&fx, client.id(), json!({"nbf": now + 8}));
    fx.with_assertion(&soon, &[]).await.unwrap();
    let later = key.assertion(&fx, client.id(), json!({"nbf": now + 61}));
    assert!(
        fx.assertion_refused(&later)
            .await
            .description()
            .contains("nbf")
    );
    let future_iat = key.assertion(&fx, client.id(), json!({"iat": now + 120}));
    assert!(
        fx.assertion_refused(&future_iat)
            .await
            .description()
            .contains("iat")
    );

    // Time passing makes a once-valid assertion expire.
    let fresh = key.assertion(&fx, client.id(), json!({}));
    fx.clock.advance(Duration::seconds(121));
    assert!(
        fx.assertion_refused(&fresh)
            .await
            .description()
            .contains("expired")
    );
}

#[tokio::test]
async fn private_key_jwt_refuses_a_replayed_jti() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::EdDsa);
    let client = fx.jwt_client(&[&key]).await;
    let assertion = key.assertion(&fx, client.id(), json!({"jti": "once"}));
    fx.with_assertion(&assertion, &[]).await.unwrap();
    let error = fx.assertion_refused(&assertion).await;
    assert_eq!(error.description(), "client assertion replayed");
    // A new assertion with the same jti is a replay too.
    let again = key.assertion(
        &fx,
        client.id(),
        json!({"jti": "once", "exp": fx.clock.now().unix_timestamp() + 60}),
    );
    assert_eq!(
        fx.assertion_refused(&again).await.description(),
        "client assertion replayed"
    );
    let missing = key.assertion(&fx, client.id(), json!({"jti": null}));
    assert!(
        fx.assertion_refused(&missing)
            .await
            .description()
            .contains("jti")
    );
}

#[tokio::test]
async fn private_key_jwt_refuses_a_wrong_audience() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    for aud in [
        json!("https://other.example.com"),
        json!(format!("{}/oauth/par", fx.issuer)),
        json!(format!("https://other.example.com/oauth/token")),
        json!(null),
    ] {
        let assertion = key.assertion(&fx, client.id(), json!({ "aud": aud.clone() }));
        assert!(
            fx.assertion_refused(&assertion)
                .await
                .description()
                .contains("aud"),
            "{aud}"
        );
    }
}

#[tokio::test]
async fn private_key_jwt_refuses_a_wrong_iss_or_sub() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let other = fx.jwt_client(&[&key]).await;

    let wrong_iss = key.assertion(&fx, client.id(), json!({"iss": other.id()}));
    assert!(
        fx.assertion_refused(&wrong_iss)
            .await
            .description()
            .contains("iss")
    );

    let no_sub = key.assertion(&fx, client.id(), json!({"sub": null}));
    assert!(
        fx.assertion_refused(&no_sub)
            .await
            .description()
            .contains("sub")
    );

    // sub names another client (with the same key): iss no longer matches.
    let wrong_sub = key.assertion(&fx, client.id(), json!({"sub": other.id()}));
    assert!(
        fx.assertion_refused(&wrong_sub)
            .await
            .description()
            .contains("iss")
    );

    // The body client_id must equal sub.
    let good = key.assertion(&fx, client.id(), json!({}));
    let error = fx
        .with_assertion(&good, &[("client_id", other.id())])
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidClient);
    assert!(error.description().contains("sub"));
}

#[tokio::test]
async fn private_key_jwt_refuses_unknown_kids_and_foreign_signatures() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let stranger = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let claims = ClientKey::claims(&fx, client.id(), json!({}));

    // A kid the client never registered.
    let unknown_kid = stranger.sign(stranger.header(), &claims);
    assert_auth_failed(&fx.assertion_refused(&unknown_kid).await);

    // Signed by another key but claiming the registered kid.
    let mut header = stranger.header();
    header.kid = Some(key.kid().to_owned());
    let forged = stranger.sign(header, &claims);
    let error = fx.assertion_refused(&forged).await;
    assert_auth_failed(&error);
    assert!(error.log_detail().unwrap().contains("signature"));

    // No kid: the only key is used, so the stranger's signature still fails...
    let mut header = stranger.header();
    header.kid = None;
    assert_auth_failed(&fx.assertion_refused(&stranger.sign(header, &claims)).await);
    // ...and the owner's succeeds.
    let mut header = key.header();
    header.kid = None;
    fx.with_assertion(&key.sign(header, &claims), &[])
        .await
        .unwrap();

    // An unknown client id in sub looks like any other failure.
    let unknown = ClientId::generate(fx.clock.as_ref(), &OsRandom);
    let error = fx
        .assertion_refused(&key.assertion(&fx, unknown.as_str(), json!({})))
        .await;
    assert_auth_failed(&error);
}

#[tokio::test]
async fn private_key_jwt_needs_the_jwt_bearer_assertion_type() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let assertion = key.assertion(&fx, client.id(), json!({}));
    let error = fx
        .refused(
            &[
                CC,
                (
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:saml2-bearer",
                ),
                ("client_assertion", &assertion),
            ],
            None,
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidClient);
    assert!(error.description().contains("client_assertion_type"));
}

struct StaticFetcher(String);

#[async_trait]
impl JwksFetcher for StaticFetcher {
    async fn fetch(&self, uri: &str) -> Result<String, String> {
        if uri == "https://client.example.com/jwks.json" {
            Ok(self.0.clone())
        } else {
            Err(format!("unexpected {uri}"))
        }
    }
}

#[tokio::test]
async fn private_key_jwt_with_jwks_uri_uses_the_fetcher_when_there_is_one() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx
        .client_with(TokenEndpointAuthMethod::PrivateKeyJwt, |app| {
            app.jwks_uri = Some("https://client.example.com/jwks.json".into());
        })
        .await;
    // Without a fetcher.
    let error = fx
        .assertion_refused(&key.assertion(&fx, client.id(), json!({})))
        .await;
    assert_eq!(error.description(), "jwks_uri not supported");

    // With one.
    let endpoint = TokenEndpoint::new(
        fx.ctx
            .clone()
            .with_jwks_fetcher(Arc::new(StaticFetcher(jwks_of(&[&key])))),
        TokenSettings::default(),
    );
    let assertion = key.assertion(&fx, client.id(), json!({}));
    endpoint
        .handle(
            &fx.tenant,
            &fx.issuer,
            &form(&[
                CC,
                ("client_assertion_type", ASSERTION_TYPE),
                ("client_assertion", &assertion),
            ]),
            None,
        )
        .await
        .unwrap();
}
