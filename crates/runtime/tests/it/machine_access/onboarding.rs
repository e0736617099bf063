//! Onboarding as a new user tries it: an operator creates a tenant (or issues management
//! credentials for the zero-config default tenant), whose management application obtains a
//! token and manages applications on the tenant's host.

use super::support::*;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, TestApp};

#[tokio::test]
async fn a_new_user_creates_a_tenant_gets_a_token_and_manages_applications() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &env()).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let globex = create_tenant(&app, &operator, "globex").await;
        let token = access_token(&app, &acme, None).await;

        // Create and list an application on acme's host.
        let created = app
            .request(reqwest::Method::POST, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&token)
            .json(&json!({
                "name": "Billing backend",
                "redirect_uris": [],
                "grant_types": ["client_credentials"],
                "token_endpoint_auth_method": "client_secret_post",
                "allowed_scopes": ["invoices:read"],
                "api_audience": "https://billing.example.com",
                "first_party": true,
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let created: Value = created.json().await.unwrap();
        assert!(
            created["client_secret"]
                .as_str()
                .unwrap()
                .starts_with("cs_")
        );
        let listed: Value = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ids: Vec<&str> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["client_id"].as_str().unwrap())
            .collect();
        assert!(
            ids.contains(&created["client_id"].as_str().unwrap()),
            "{listed}"
        );
        assert!(
            !listed.to_string().contains("secret_hash"),
            "never the stored hash"
        );

        // The new application gets its own token, with its own audience and scopes.
        let billing = Tenant {
            host: acme.host.clone(),
            client_id: created["client_id"].as_str().unwrap().to_owned(),
            client_secret: created["client_secret"].as_str().unwrap().to_owned(),
        };
        let post_token = app
            .request(reqwest::Method::POST, "/oauth/token")
            .header("host", &billing.host)
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", &billing.client_id),
                ("client_secret", &billing.client_secret),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(post_token.status(), 200);
        // A token for another audience (the billing API) is refused by the management API.
        let billing_token: Value = post_token.json().await.unwrap();
        let wrong_audience = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(billing_token["access_token"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(wrong_audience.status(), 401, "aud is checked before scope");

        // The same management token is refused on another tenant's host.
        let foreign = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &globex.host)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status(), 401, "signed by acme's keys, not globex's");
        // Another tenant's application id is simply not found.
        let globex_token = access_token(&app, &globex, None).await;
        let probe = app
            .request(
                reqwest::Method::GET,
                &format!("/api/v1/applications/{}", billing.client_id),
            )
            .header("host", &globex.host)
            .bearer_auth(&globex_token)
            .send()
            .await
            .unwrap();
        assert_eq!(probe.status(), 404);

        // Without a token: 401 with a Bearer challenge; without the scope: 403 insufficient_scope.
        let anonymous = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
        assert!(
            anonymous.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
        let read_only = access_token(&app, &acme, Some("applications:read")).await;
        let refused = app
            .request(reqwest::Method::POST, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&read_only)
            .json(&json!({"name": "x", "grant_types": ["client_credentials"], "token_endpoint_auth_method": "client_secret_basic", "allowed_scopes": [], "redirect_uris": [], "first_party": false}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"], "insufficient_scope");

        // The audit log recorded the creation, attributed to the management client.
        let audit_token = access_token(&app, &acme, Some("audit:read")).await;
        let audit: Value = app
            .request(
                reqwest::Method::GET,
                "/api/v1/audit-logs?action=application.created",
            )
            .header("host", &acme.host)
            .bearer_auth(&audit_token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let entry = &audit["items"][0];
        assert_eq!(entry["actor"], format!("client:{}", acme.client_id));
        assert_eq!(entry["target"], billing.client_id);
        assert!(
            entry["request_id"].is_string() && entry["client_ip"] == "127.0.0.1",
            "{entry}"
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn the_zero_config_default_tenant_gets_management_credentials_from_an_operator() {
    for backend in BACKENDS {
        let app = TestApp::spawn(backend).await;
        let operator = operator_token(&app).await;
        let tenants: Value = app
            .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let default = tenants["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == "default")
            .expect("default tenant");
        let id = default["id"].as_str().unwrap();
        let issued = app
            .request(
                reqwest::Method::POST,
                &format!("/api/v1/control-plane/tenants/{id}/management-credentials"),
            )
            .bearer_auth(&operator)
            .send()
            .await
            .unwrap();
        assert_eq!(issued.status(), 200);
        let issued: Value = issued.json().await.unwrap();
        let host = app.url.trim_start_matches("http://").to_owned();
        let tenant = Tenant {
            host,
            client_id: issued["client_id"].as_str().unwrap().to_owned(),
            client_secret: issued["client_secret"].as_str().unwrap().to_owned(),
        };
        let token = access_token(&app, &tenant, Some("applications:read")).await;
        let apps: Value = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(apps["items"][0]["is_management"], true, "{apps}");
        // Issuing again invalidates the previous secret at once.
        app.request(
            reqwest::Method::POST,
            &format!("/api/v1/control-plane/tenants/{id}/management-credentials"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
        assert_eq!(token_status(&app, &tenant).await, 401);
        app.shutdown().await;
    }
}
