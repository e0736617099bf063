//! Token introspection (RFC 7662): active answers for this tenant's live tokens, a bare
//! `{"active": false}` for anything else, and client authentication required.

use super::support::{Tenant, access_token, create_tenant, env, operator_token};
use serde_json::Value;
use svc_testkit::{BACKENDS, TestApp};

/// `POST /oauth/introspect` on `tenant`'s host, with its management client's credentials when
/// `authenticated`.
async fn introspect(
    app: &TestApp,
    tenant: &Tenant,
    token: String,
    authenticated: bool,
) -> reqwest::Result<reqwest::Response> {
    let mut request = app
        .request(reqwest::Method::POST, "/oauth/introspect")
        .header("host", &tenant.host)
        .form(&[("token", token)]);
    if authenticated {
        request = request.basic_auth(&tenant.client_id, Some(&tenant.client_secret));
    }
    request.send().await
}

#[tokio::test]
async fn introspection_describes_live_tokens_and_reveals_nothing_else() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &env()).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let globex = create_tenant(&app, &operator, "globex").await;
        let token = access_token(&app, &acme, Some("applications:read")).await;
        let foreign = access_token(&app, &globex, None).await;

        let discovery: Value = app
            .request(reqwest::Method::GET, "/.well-known/openid-configuration")
            .header("host", &acme.host)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            discovery["introspection_endpoint"],
            format!("http://{}/oauth/introspect", acme.host)
        );

        let introspect =
            |token: String, authenticated: bool| introspect(&app, &acme, token, authenticated);
        let active = introspect(token.clone(), true).await.unwrap();
        assert_eq!(active.status(), 200, "{backend:?}");
        assert_eq!(active.headers()["cache-control"], "no-store");
        let active: Value = active.json().await.unwrap();
        assert_eq!(active["active"], true);
        assert_eq!(active["client_id"], acme.client_id);
        assert_eq!(active["scope"], "applications:read");
        assert_eq!(active["token_type"], "Bearer");
        assert!(active["exp"].as_i64().unwrap() > active["iat"].as_i64().unwrap());

        for (case, token) in [
            ("another tenant's token", foreign),
            ("garbage", "not.a.jwt".to_owned()),
            ("tampered", format!("{token}x")),
        ] {
            let inactive: Value = introspect(token, true).await.unwrap().json().await.unwrap();
            assert_eq!(inactive, serde_json::json!({"active": false}), "{case}");
        }
        let anonymous = introspect(token, false).await.unwrap();
        assert_eq!(anonymous.status(), 401);
        assert_eq!(
            anonymous.json::<Value>().await.unwrap()["error"],
            "invalid_client"
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn a_revoked_management_token_is_refused_everywhere_at_once() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &env()).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let revoked = access_token(&app, &acme, Some("applications:read")).await;
        let kept = access_token(&app, &acme, Some("applications:read")).await;
        let list = |token: &str| {
            app.request(reqwest::Method::GET, "/api/v1/applications")
                .header("host", &acme.host)
                .bearer_auth(token)
                .send()
        };
        assert_eq!(list(&revoked).await.unwrap().status(), 200, "{backend:?}");

        let revocation = app
            .request(reqwest::Method::POST, "/oauth/revoke")
            .header("host", &acme.host)
            .basic_auth(&acme.client_id, Some(&acme.client_secret))
            .form(&[("token", revoked.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(revocation.status(), 200, "{backend:?}");

        let refused = list(&revoked).await.unwrap();
        assert_eq!(refused.status(), 401, "{backend:?}");
        let challenge = refused.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\""),
            "{challenge}"
        );
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["detail"], "the access token has been revoked");
        let introspected: Value = introspect(&app, &acme, revoked.clone(), true)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(introspected, serde_json::json!({"active": false}));
        // Only that token: another one of the same client still works.
        assert_eq!(list(&kept).await.unwrap().status(), 200, "{backend:?}");
        app.shutdown().await;
    }
}
