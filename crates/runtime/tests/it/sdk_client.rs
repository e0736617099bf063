//! The client side of `svc-sdk` against the real service, on SQLite and PostgreSQL (issue 22
//! item 3): discovery of a tenant's issuer; the management API through a cached
//! client-credentials token (typed calls, problems as typed errors); the authorization code flow
//! through the hosted pages (PKCE, state, nonce, RFC 9207 `iss`), UserInfo, refresh rotation and
//! RP-initiated logout; and the hostile cases a relying party must refuse: a callback with a
//! wrong `state`, a mix-up (`iss` of another issuer), an ID token with a wrong `nonce`, for
//! another client, expired or with `alg: none`, and a discovery document naming another issuer.

use crate::common::{create_tenant, operator_token};
use crate::hosted::support::{Browser, PASSWORD, follow_to_client, param};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use svc_sdk::client::{
    ClientConfig, ClientError, IdTokenError, ManagementApi, NewTenantUser, OAuthClient,
    PendingAuthorization, TokenSource,
};
use svc_testkit::{BACKENDS, TestApp};

const REDIRECT: &str = "https://rp.example.com/callback";
const BYE: &str = "https://rp.example.com/bye";
const SCOPE: &str = "openid profile email offline_access";

/// An HTTP client that reaches `host` (`acme.localhost:<port>`) on the app's loopback address.
fn http_for(app: &TestApp, host: &str) -> reqwest::Client {
    let addr: std::net::SocketAddr = app.url.trim_start_matches("http://").parse().unwrap();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .resolve(host.split(':').next().unwrap(), addr)
        .build()
        .unwrap()
}

/// `callback` with its `name` parameter replaced by `value`.
fn with_param(callback: &str, name: &str, value: &str) -> String {
    let mut url = reqwest::Url::parse(callback).unwrap();
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .into_owned()
        .map(|(k, v)| {
            if k == name {
                (k, value.to_owned())
            } else {
                (k, v)
            }
        })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
    url.into()
}

#[tokio::test]
async fn the_rust_client_signs_people_in_and_calls_the_management_api() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(
            backend,
            &[
                ("SVC_SERVER__BASE_DOMAIN", "localhost"),
                ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
                ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ],
        )
        .await;
        let operator = operator_token(&app).await;
        let tenant = create_tenant(&app, &operator, "acme").await;
        let issuer = format!("http://{}", tenant.host);
        let http = http_for(&app, &tenant.host);

        // A discovery document must name the issuer it was asked for (Discovery §4.3).
        let wrong = OAuthClient::discover_with(
            &format!("{issuer}/"),
            ClientConfig::public("app_x"),
            http.clone(),
        )
        .await
        .unwrap_err();
        assert!(matches!(wrong, ClientError::Discovery(_)), "{wrong:?}");

        // The management API through a cached machine token.
        let machine = OAuthClient::discover_with(
            &issuer,
            ClientConfig::confidential(&tenant.client_id, &tenant.client_secret),
            http.clone(),
        )
        .await
        .unwrap();
        let tokens = Arc::new(TokenSource::new(
            Arc::new(machine),
            Some("applications:read applications:write users:read users:write organizations:read"),
            None,
        ));
        let first = tokens.access_token().await.unwrap();
        assert_eq!(tokens.access_token().await.unwrap(), first, "cached");
        tokens.invalidate().await;
        assert_ne!(tokens.access_token().await.unwrap(), first, "renewed");
        let api = ManagementApi::new(Arc::clone(&tokens));
        let created = api
            .call(
                Method::POST,
                "/applications",
                Some(&json!({
                    "name": "Rust RP",
                    "first_party": true,
                    "redirect_uris": [REDIRECT],
                    "post_logout_redirect_uris": [BYE],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "token_endpoint_auth_method": "client_secret_basic",
                    "allowed_scopes": ["openid", "profile", "email", "offline_access"],
                })),
            )
            .await
            .unwrap();
        let rp_id = created["client_id"].as_str().unwrap().to_owned();
        let rp_secret = created["client_secret"].as_str().unwrap().to_owned();
        let listed = api.applications().await.unwrap();
        assert!(
            listed
                .iter()
                .any(|a| a.client_id == rp_id && a.name == "Rust RP")
        );
        let ada = api
            .call(
                Method::POST,
                "/tenant-users",
                Some(&json!({"email": "ada@example.com", "password": PASSWORD,
                             "name": "Ada Lovelace"})),
            )
            .await
            .unwrap();
        let ada_id = ada["id"].as_str().unwrap().to_owned();
        let bob = api
            .create_user(&NewTenantUser {
                email: "bob@example.com",
                name: Some("Bob"),
            })
            .await
            .unwrap();
        assert_eq!(api.user(&bob.id).await.unwrap(), bob);
        assert_eq!(bob.email, "bob@example.com");
        let missing = api
            .call(
                Method::GET,
                "/organizations/org_01jd0000000000000000000000",
                None,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&missing, ClientError::Api { status: 404, error, .. } if error == "not_found"),
            "{missing:?}"
        );
        let refused = api.call(Method::GET, "/webhooks", None).await.unwrap_err();
        assert!(
            matches!(&refused, ClientError::Api { status: 403, error, .. } if error == "insufficient_scope"),
            "{refused:?}"
        );

        // The relying party.
        let rp = OAuthClient::discover_with(
            &issuer,
            ClientConfig::confidential(&rp_id, &rp_secret).with_redirect_uri(REDIRECT),
            http.clone(),
        )
        .await
        .unwrap();
        let browser = Browser::new(&app, &tenant.host);

        // Hostile callbacks are refused before the code is used…
        let (url, pending) = rp.authorization_request(SCOPE, &[]).unwrap();
        let callback = follow_to_client(&browser, &url, REDIRECT, "ada@example.com").await;
        let forged = PendingAuthorization {
            state: "not-the-state".into(),
            ..pending.clone()
        };
        assert_eq!(
            rp.handle_callback(&forged, &callback).await.unwrap_err(),
            ClientError::StateMismatch
        );
        let mixed_up = with_param(&callback, "iss", "https://evil.example");
        assert_eq!(
            rp.handle_callback(&pending, &mixed_up).await.unwrap_err(),
            ClientError::IssuerMismatch
        );
        // …so the same code still works.
        let signed_in = rp.handle_callback(&pending, &callback).await.unwrap();
        let claims = signed_in.id_token_claims.clone().unwrap();
        assert_eq!(
            claims.sub, ada_id,
            "{backend:?}: first party, public subject"
        );
        assert!(signed_in.scope.as_deref().unwrap().contains("openid"));

        // An ID token whose nonce is not the request's is refused (a second sign-in's code,
        // which that redemption spent: presenting it again is refused by svc).
        let (url, pending) = rp.authorization_request(SCOPE, &[]).unwrap();
        let callback = follow_to_client(&browser, &url, REDIRECT, "ada@example.com").await;
        let other_nonce = PendingAuthorization {
            nonce: Some("another-nonce".into()),
            ..pending.clone()
        };
        assert_eq!(
            rp.handle_callback(&other_nonce, &callback)
                .await
                .unwrap_err(),
            ClientError::InvalidIdToken(IdTokenError::NonceMismatch)
        );
        let spent = rp.handle_callback(&pending, &callback).await.unwrap_err();
        assert!(
            matches!(&spent, ClientError::Refused { endpoint: "token", error, .. } if error == "invalid_grant"),
            "{spent:?}"
        );

        // UserInfo, for the ID token's subject only.
        let info = rp
            .userinfo(&signed_in.access_token, &claims.sub)
            .await
            .unwrap();
        assert_eq!(info["email"], "ada@example.com");
        assert_eq!(
            rp.userinfo(&signed_in.access_token, "usr_someone_else")
                .await
                .unwrap_err(),
            ClientError::SubjectMismatch
        );

        // The ID token is this client's, valid now, and signed.
        let id_token = signed_in.id_token.clone().unwrap();
        let other_client = OAuthClient::discover_with(
            &issuer,
            ClientConfig::confidential(&tenant.client_id, "unused"),
            http.clone(),
        )
        .await
        .unwrap();
        assert_eq!(
            other_client
                .validate_id_token(&id_token, None)
                .await
                .unwrap_err(),
            ClientError::InvalidIdToken(IdTokenError::WrongAudience)
        );
        let exp = claims.all["exp"].as_i64().unwrap();
        assert_eq!(
            rp.validate_id_token_at(&id_token, None, exp + 3600)
                .await
                .unwrap_err(),
            ClientError::InvalidIdToken(IdTokenError::Expired)
        );
        let payload = id_token.split('.').nth(1).unwrap();
        let unsigned = format!(
            "{}.{payload}.",
            URL_SAFE_NO_PAD.encode(json!({"alg": "none"}).to_string())
        );
        assert_eq!(
            rp.validate_id_token(&unsigned, None).await.unwrap_err(),
            ClientError::InvalidIdToken(IdTokenError::DisallowedAlgorithm)
        );

        // Refresh rotates: the new set works, the old refresh token is spent.
        let old_refresh = signed_in.refresh_token.clone().unwrap();
        let refreshed = rp.refresh(&old_refresh, None).await.unwrap();
        assert_ne!(refreshed.access_token, signed_in.access_token);
        if let Some(claims) = &refreshed.id_token_claims {
            assert_eq!(claims.sub, ada_id);
        }
        let reused = rp.refresh(&old_refresh, None).await.unwrap_err();
        assert!(
            matches!(&reused, ClientError::Refused { error, .. } if error == "invalid_grant"),
            "{reused:?}"
        );

        // RP-initiated logout comes back to the registered address with the state.
        let logout = rp
            .end_session_url(&id_token, Some(BYE), Some("bye-1"))
            .unwrap();
        let page = browser.get(&logout).await;
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        assert!(location.starts_with(BYE), "{location}");
        assert_eq!(param(&location, "state").as_deref(), Some("bye-1"));

        // The management token works for the API, the person's for nothing there.
        let denied = app
            .request(Method::GET, "/api/v1/applications")
            .header("host", &tenant.host)
            .bearer_auth(&refreshed.access_token)
            .send()
            .await
            .unwrap();
        assert_eq!(
            denied.status(),
            401,
            "{backend:?}: {:?}",
            denied.text().await
        );
        let _: Value = api.call(Method::GET, "/applications", None).await.unwrap();
        app.shutdown().await;
    }
}
