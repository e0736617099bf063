//! Discovery, JWKS and tenant hosts, as a relying party sees them (OpenID Connect Discovery 1.0,
//! RFC 8414, RFC 9728, RFC 7517).

use serde_json::Value;
use svc_testkit::{BACKENDS, Backend, TestApp};

async fn json(
    app: &TestApp,
    path: &str,
    host: Option<&str>,
) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Value) {
    let mut request = app.request(reqwest::Method::GET, path);
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (
        status,
        headers,
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn zero_config_discovery_names_the_host_as_issuer_and_serves_es256_and_rs256_keys() {
    for backend in BACKENDS {
        let app = TestApp::spawn(backend).await;
        let (status, headers, doc) = json(&app, "/.well-known/openid-configuration", None).await;
        assert_eq!(status, 200);
        assert_eq!(headers["access-control-allow-origin"], "*");
        assert_eq!(
            doc["issuer"], app.url,
            "{backend:?}: issuer equals the host the client used"
        );
        for key in [
            "authorization_endpoint",
            "token_endpoint",
            "userinfo_endpoint",
            "jwks_uri",
        ] {
            assert!(
                doc[key].as_str().unwrap().starts_with(&app.url),
                "{key} absolute under the issuer"
            );
        }
        assert!(
            doc["id_token_signing_alg_values_supported"]
                .as_array()
                .unwrap()
                .contains(&"RS256".into())
        );

        let jwks_uri = doc["jwks_uri"].as_str().unwrap().to_owned();
        let response = app.client.get(&jwks_uri).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let cache = response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(cache.contains("max-age="), "{cache}");
        let etag = response.headers()["etag"].clone();
        let jwks: Value = response.json().await.unwrap();
        let keys = jwks["keys"].as_array().unwrap();
        let algs: Vec<&str> = keys.iter().map(|k| k["alg"].as_str().unwrap()).collect();
        for alg in ["ES256", "RS256", "EdDSA"] {
            assert!(
                algs.contains(&alg),
                "{backend:?}: {alg} missing from {algs:?}"
            );
        }
        for key in keys {
            for member in ["kid", "alg", "kty"] {
                assert!(key[member].is_string(), "{member} missing in {key}");
            }
            assert_eq!(key["use"], "sig");
            for private in ["d", "p", "q", "dp", "dq", "qi"] {
                assert!(
                    key.get(private).is_none(),
                    "private member {private} published!"
                );
            }
        }
        // A conditional request with the entity tag answers 304 without a body.
        let again = app
            .client
            .get(&jwks_uri)
            .header("if-none-match", etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304);
        app.shutdown().await;
    }
}

#[tokio::test]
async fn rfc8414_and_protected_resource_metadata_agree_with_discovery() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let (_, _, oidc) = json(&app, "/.well-known/openid-configuration", None).await;
    let (status, _, oauth) = json(&app, "/.well-known/oauth-authorization-server", None).await;
    assert_eq!(status, 200);
    for (key, value) in oauth.as_object().unwrap() {
        assert_eq!(&oidc[key], value, "{key} differs between the two documents");
    }
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/api/v1",
    ] {
        let (status, _, resource) = json(&app, path, None).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(resource["resource"], format!("{}/api/v1", app.url));
        assert_eq!(resource["authorization_servers"][0], app.url.as_str());
    }
    app.shutdown().await;
}

#[tokio::test]
async fn each_tenant_host_is_its_own_issuer_and_unknown_or_suspended_hosts_are_refused() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &[("SVC_SERVER__BASE_DOMAIN", "localhost")]).await;
        let port = app.url.rsplit(':').next().unwrap().to_owned();
        let acme = app
            .insert_tenant("acme", svc_domain::TenantStatus::Active)
            .await;
        app.insert_tenant("frozen", svc_domain::TenantStatus::Suspended)
            .await;

        let host = format!("acme.localhost:{port}");
        let (status, _, doc) = json(&app, "/.well-known/openid-configuration", Some(&host)).await;
        assert_eq!(status, 200, "{backend:?}");
        assert_eq!(doc["issuer"], format!("http://acme.localhost:{port}"));
        assert_eq!(
            doc["jwks_uri"],
            format!("http://acme.localhost:{port}/.well-known/jwks.json")
        );

        let (status, _, problem) = json(
            &app,
            "/.well-known/jwks.json",
            Some(&format!("nobody.localhost:{port}")),
        )
        .await;
        assert_eq!(
            (status.as_u16(), problem["error"].as_str()),
            (404, Some("not_found"))
        );
        let (status, _, problem) = json(
            &app,
            "/.well-known/openid-configuration",
            Some(&format!("frozen.localhost:{port}")),
        )
        .await;
        assert_eq!(
            (status.as_u16(), problem["error"].as_str()),
            (403, Some("forbidden"))
        );
        let (status, _, _) = json(
            &app,
            "/.well-known/openid-configuration",
            Some(&format!("localhost:{port}")),
        )
        .await;
        assert_eq!(status, 404, "the bare base domain is no tenant");

        // Keys never cross tenants: acme's JWKS shares no kid with another tenant's.
        let other = app
            .insert_tenant("other", svc_domain::TenantStatus::Active)
            .await;
        let acme_signer = app.keys().access_token_signer(&acme.id).await.unwrap();
        let other_signer = app.keys().access_token_signer(&other.id).await.unwrap();
        assert_ne!(acme_signer.kid(), other_signer.kid());
        let (_, _, other_jwks) = json(
            &app,
            "/.well-known/jwks.json",
            Some(&format!("other.localhost:{port}")),
        )
        .await;
        assert!(!other_jwks.to_string().contains(acme_signer.kid()));
        app.shutdown().await;
    }
}

#[tokio::test]
async fn tokens_signed_by_the_service_verify_with_an_independent_jose_library() {
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
    let app = TestApp::spawn(Backend::Postgres).await;
    let tenant = app.tenant("default").await;
    let (_, _, jwks) = json(&app, "/.well-known/jwks.json", None).await;
    let set: jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks).unwrap();
    for (alg, jose_alg) in [
        (
            svc_domain::SigningAlg::Es256,
            jsonwebtoken::Algorithm::ES256,
        ),
        (
            svc_domain::SigningAlg::EdDsa,
            jsonwebtoken::Algorithm::EdDSA,
        ),
        (
            svc_domain::SigningAlg::Rs256,
            jsonwebtoken::Algorithm::RS256,
        ),
    ] {
        let signer = app.keys().signer(&tenant.id, alg).await.unwrap();
        let claims = serde_json::json!({"iss": app.url, "sub": "usr_test", "aud": "api", "exp": 4_102_444_800u64});
        let token = signer.sign_jwt("at+jwt", &claims).unwrap();
        let header = jsonwebtoken::decode_header(&token).unwrap();
        let jwk = set
            .find(header.kid.as_deref().unwrap())
            .expect("signing key is published");
        let mut validation = jsonwebtoken::Validation::new(jose_alg);
        validation.set_audience(&["api"]);
        let decoded = jsonwebtoken::decode::<Value>(
            &token,
            &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(),
            &validation,
        )
        .unwrap_or_else(|e| panic!("{alg:?}: {e}"));
        assert_eq!(decoded.claims["sub"], "usr_test");
        let mut forged = token.clone();
        forged.replace_range(forged.len() - 4.., "AAAA");
        assert!(
            jsonwebtoken::decode::<Value>(
                &forged,
                &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(),
                &validation
            )
            .is_err()
        );
    }
    app.shutdown().await;
}
