//! The metrics endpoint: only a service token with the `metrics:read` scope may scrape it.

use super::support::*;
use serde_json::{Value, json};
use svc_testkit::{Backend, TestApp};

#[tokio::test]
async fn metrics_accept_a_metrics_read_service_token_and_nothing_less() {
    let app = TestApp::spawn_with(Backend::Sqlite, &env()).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let admin = access_token(&app, &acme, None).await;
    let scraper: Value = app
        .request(reqwest::Method::POST, "/api/v1/applications")
        .header("host", &acme.host)
        .bearer_auth(&admin)
        .json(&json!({
            "name": "Prometheus",
            "redirect_uris": [],
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["metrics:read"],
            "first_party": true,
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let scraper = Tenant {
        host: acme.host.clone(),
        client_id: scraper["client_id"].as_str().unwrap().to_owned(),
        client_secret: scraper["client_secret"].as_str().unwrap().to_owned(),
    };
    let metrics_token = access_token(&app, &scraper, Some("metrics:read")).await;
    let scrape = |token: Option<String>| {
        let mut request = app
            .request(reqwest::Method::GET, "/metrics")
            .header("host", &acme.host);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(scrape(None).await.unwrap().status(), 401);
    assert_eq!(
        scrape(Some(admin)).await.unwrap().status(),
        403,
        "no metrics:read scope"
    );
    let ok = scrape(Some(metrics_token)).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok.text().await.unwrap().contains("svc_http_requests_total"));
    app.shutdown().await;
}
