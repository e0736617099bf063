//! The hosted organization picker, on SQLite and PostgreSQL: an application registered with
//! `organization_usage: require` sends a person in several organizations to a page listing
//! theirs (names escaped: they are tenant-written), and the pick continues the request, whose
//! tokens carry it; a forged pick is refused; CSRF is checked.

use super::support::payload as claims;
use super::support::*;
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

async fn json(world: &World, method: M, path: &str, body: Value) -> Value {
    let response = world.api(method, path).json(&body).send().await.unwrap();
    let status = response.status();
    let value: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {value}");
    value
}

#[tokio::test]
async fn a_person_picks_one_of_their_organizations_for_an_application_that_requires_one() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let (client_id, secret) = world
            .register_with(json!({
                "name": "Books",
                "first_party": true,
                "organization_usage": "require"
            }))
            .await;
        let app: Value = world
            .api(M::GET, &format!("/api/v1/applications/{client_id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(app["organization_usage"], "require", "{backend:?}: {app}");
        let refused = world
            .api(M::POST, "/api/v1/applications")
            .json(&json!({
                "name": "Odd", "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid"], "organization_usage": "sometimes"
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400);

        let users: Value = world
            .api(M::GET, "/api/v1/tenant-users?email=ada@example.com")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ada = users["items"][0]["id"].as_str().unwrap().to_owned();
        let mut orgs = Vec::new();
        for (name, slug) in [(XSS, "hostile"), ("Globex", "globex")] {
            let org = json(
                &world,
                M::POST,
                "/api/v1/organizations",
                json!({"name": name, "slug": slug}),
            )
            .await;
            let id = org["id"].as_str().unwrap().to_owned();
            json(
                &world,
                M::POST,
                &format!("/api/v1/organizations/{id}/members"),
                json!({"user_id": ada}),
            )
            .await;
            orgs.push(id);
        }
        let stranger = json(
            &world,
            M::POST,
            "/api/v1/organizations",
            json!({"name": "Initech", "slug": "initech"}),
        )
        .await;

        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let path = world
            .authorize_path("openid", "st", &[])
            .replace(&world.client_id, &client_id);
        let asked = browser.get(&path).await;
        let location = asked.location().unwrap();
        assert!(
            location.starts_with("/auth/organization?interaction="),
            "{location}"
        );
        let page = browser.get(&location).await;
        assert_eq!(page.status, 200, "{}", page.body);
        page.assert_secure("organization picker");
        assert!(
            !page.body.contains("<img src=x"),
            "{backend:?}: names are escaped"
        );
        assert!(page.body.contains("Globex"), "{}", page.body);
        for id in &orgs {
            assert!(page.body.contains(id.as_str()), "{id}");
        }
        assert!(
            !page.body.contains("Initech"),
            "only the person's organizations"
        );

        // CSRF, then a forged pick, are refused.
        let interaction = param(&location, "interaction").unwrap();
        let forged_csrf = browser
            .post(
                "/auth/organization",
                &[
                    ("csrf", "nope"),
                    ("interaction", &interaction),
                    ("organization", &orgs[1]),
                ],
            )
            .await;
        assert_eq!(forged_csrf.status, 403, "{}", forged_csrf.body);
        let forged = browser
            .submit(
                &location,
                "/auth/organization",
                &[("organization", stranger["id"].as_str().unwrap())],
            )
            .await;
        let refused = forged.location().unwrap();
        assert_eq!(
            param(&refused, "error").as_deref(),
            Some("access_denied"),
            "{refused}"
        );

        // A real pick reaches the application, and the tokens carry the organization.
        let location = browser.get(&path).await.location().unwrap();
        let picked = browser
            .submit(
                &location,
                "/auth/organization",
                &[("organization", &orgs[1])],
            )
            .await;
        let answer = picked.location().unwrap();
        assert!(answer.starts_with(REDIRECT), "{answer}");
        let code = param(&answer, "code").unwrap();
        let response = world.redeem_as(&code, &client_id, &secret).await;
        assert_eq!(response.status(), 200);
        let tokens: Value = response.json().await.unwrap();
        let access = claims(tokens["access_token"].as_str().unwrap());
        assert_eq!(access["org_id"], orgs[1].as_str(), "{access}");
        assert_eq!(access["org_slug"], "globex");
        world.shutdown().await;
    }
}
