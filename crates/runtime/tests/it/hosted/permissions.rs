//! The consent page of a request naming an API resource (`resource=`), on SQLite and
//! PostgreSQL: each permission asked for is shown in the words its tenant gave it (escaped: the
//! description is tenant-written text), with its name; one without a description falls back to
//! the generic line naming it.

use super::support::*;
use serde_json::json;
use svc_testkit::BACKENDS;

const API: &str = "https://invoices.example.com";
const HOSTILE: &str = "<script>alert(1)</script>Read your invoices";

#[tokio::test]
async fn consent_describes_an_apis_permissions_in_the_tenants_words() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let created = world
            .api(reqwest::Method::POST, "/api/v1/api-resources")
            .json(&json!({
                "identifier": API,
                "name": "Invoices",
                "permissions": [
                    {"name": "invoices:read", "description": HOSTILE},
                    {"name": "invoices:void"},
                ],
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{}", created.text().await.unwrap());
        let browser = world.browser();
        let start = browser
            .get(&world.authorize_path(
                "openid invoices:read invoices:void",
                "st-1",
                &[("resource", API)],
            ))
            .await;
        assert_eq!(start.status, 303, "{}", start.body);
        let sign_in = start.location().unwrap();
        let interaction = param(&sign_in, "interaction").unwrap();
        let signed_in = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let resumed = browser.get(&signed_in.location().unwrap()).await;
        let consent_path = resumed.location().unwrap();
        assert!(consent_path.starts_with("/auth/consent?"), "{consent_path}");
        let consent = browser.get(&consent_path).await;
        assert_eq!(consent.status, 200);
        consent.assert_secure("consent page with permissions");
        assert!(
            consent.body.contains(
                "&#60;script&#62;alert(1)&#60;/script&#62;Read your invoices <code>invoices:read</code>"
            ),
            "{backend:?}: {}",
            consent.body
        );
        assert!(!consent.body.contains("<script>alert(1)"), "{backend:?}");
        assert!(
            consent
                .body
                .contains("Use the permission <code>invoices:void</code>"),
            "{backend:?}: {}",
            consent.body
        );
        world.shutdown().await;
    }
}
