//! Invitations to join, as a browser follows the mailed link (`/auth/join?token=…`), on SQLite
//! and PostgreSQL: a newcomer creates their account on the page and is signed in and a member
//! with the invited roles; a person with an account signs in first and accepts; someone signed
//! in with another address is refused (403) and nothing changes; a used, revoked or replaced
//! link is refused; and the page's defences (CSRF, escaping, security headers) hold.

use super::support::*;
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

/// An organization of the world's tenant; its id. The name is hostile, to show it is escaped.
async fn organization(world: &World, slug: &str) -> String {
    let response = world
        .api(M::POST, "/api/v1/organizations")
        .json(&json!({"name": format!("Globex {XSS}"), "slug": slug}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let org: Value = response.json().await.unwrap();
    org["id"].as_str().unwrap().to_owned()
}

/// Invites `email` with `body` merged in; the invitation.
async fn invite(world: &World, email: &str, extra: Value) -> Value {
    let mut body = json!({"email": email});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let response = world
        .api(M::POST, "/api/v1/invitations")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let invitation: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{invitation}");
    invitation
}

async fn get_json(world: &World, path: &str) -> Value {
    let response = world.api(M::GET, path).send().await.unwrap();
    assert_eq!(response.status(), 200, "{path}");
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_newcomer_creates_their_account_on_the_invitation_page_and_joins() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let org = organization(&world, "globex").await;
        let invitation = invite(
            &world,
            "newcomer@example.com",
            json!({"organization_id": org, "roles": ["admin"]}),
        )
        .await;
        let link = world
            .mailed_link("newcomer@example.com", "/auth/join?token=")
            .await;
        let browser = world.browser();
        let page = browser.get(&link).await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        page.assert_secure("invitation page");
        assert!(page.body.contains("newcomer@example.com"), "{}", page.body);
        assert!(page.body.contains("admin"), "{}", page.body);
        assert!(!page.body.contains("<img src=x"), "the name is escaped");
        assert!(page.body.contains("&#60;img src=x"), "{}", page.body);
        assert!(page.body.contains("name=\"password\""), "{}", page.body);

        // Without the CSRF token nothing happens.
        let token = param(&link, "token").unwrap();
        let forged = browser
            .post("/auth/join", &[("token", &token), ("password", PASSWORD)])
            .await;
        assert_eq!(forged.status, 403, "{}", forged.body);
        // A weak password shows the form again; the link stays usable.
        let weak = browser
            .submit(&link, "/auth/join", &[("password", "short")])
            .await;
        assert_eq!(weak.status, 400, "{}", weak.body);
        assert!(weak.body.contains("name=\"password\""));

        let joined = browser
            .submit(
                &link,
                "/auth/join",
                &[("name", "New Comer"), ("password", PASSWORD)],
            )
            .await;
        assert_eq!(joined.status, 303, "{backend:?}: {}", joined.body);
        assert_eq!(joined.location().as_deref(), Some("/auth/join?joined=1"));
        assert!(
            !joined.set_cookies().is_empty(),
            "the session cookie is set"
        );
        let account = browser.get("/auth/account").await;
        assert_eq!(account.status, 200, "signed in: {}", account.body);
        assert!(account.body.contains("newcomer@example.com"));

        // The API sees the membership with its roles and the invitation accepted.
        let members = get_json(&world, &format!("/api/v1/organizations/{org}/members")).await;
        let items = members["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{members}");
        assert_eq!(items[0]["roles"], json!(["admin"]));
        let user_id = items[0]["user_id"].as_str().unwrap().to_owned();
        let user = get_json(&world, &format!("/api/v1/tenant-users/{user_id}")).await;
        assert_eq!(user["status"], "active");
        assert_eq!(user["email_verified"], true);
        let id = invitation["id"].as_str().unwrap();
        let read = get_json(&world, &format!("/api/v1/invitations/{id}")).await;
        assert_eq!(read["status"], "accepted");
        assert_eq!(read["accepted_by"], user_id.as_str());

        // The link works once, in this browser and in any other.
        assert_eq!(browser.get(&link).await.status, 410);
        let again = world.browser().get(&link).await;
        assert_eq!(again.status, 410, "{}", again.body);
        assert!(!again.body.contains("name=\"password\""));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_person_with_an_account_signs_in_and_accepts_and_another_address_is_refused() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let org = organization(&world, "globex").await;
        world.create_user("eve@example.com", PASSWORD).await;
        invite(&world, &world.user, json!({"organization_id": org})).await;
        let link = world.mailed_link(&world.user, "/auth/join?token=").await;

        // Eve, signed in, opens Ada's invitation: refused, nothing changes.
        let eve = world.browser();
        let signed_in = eve.sign_in(None, "eve@example.com", PASSWORD).await;
        assert_eq!(signed_in.status, 303, "{}", signed_in.body);
        let refused = eve.get(&link).await;
        assert_eq!(refused.status, 403, "{backend:?}: {}", refused.body);
        assert!(refused.body.contains("another address"), "{}", refused.body);
        assert!(
            !refused.body.contains(&world.user),
            "no address shown to Eve"
        );
        let token = param(&link, "token").unwrap();
        let page = eve.get("/auth/account").await;
        assert_eq!(page.status, 200);
        // Eve's POST with a valid CSRF token (from her own page) is refused too.
        let csrf = eve.get("/auth/sign-out").await.field("csrf").unwrap();
        let posted = eve
            .post("/auth/join", &[("token", &token), ("csrf", &csrf)])
            .await;
        assert_eq!(posted.status, 403, "{}", posted.body);
        let members = get_json(&world, &format!("/api/v1/organizations/{org}/members")).await;
        assert_eq!(members["items"], json!([]), "no membership for Eve");

        // Ada, not signed in, is told to sign in first.
        let ada = world.browser();
        let first = ada.get(&link).await;
        assert_eq!(first.status, 200, "{}", first.body);
        assert!(first.body.contains("/auth/sign-in"), "{}", first.body);
        assert!(!first.body.contains("name=\"password\""));
        let signed_in = ada.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(signed_in.status, 303);
        // The sign-in brings her back to the invitation (once), not to her account page.
        assert_eq!(
            signed_in.location().as_deref(),
            Some(link.as_str()),
            "{backend:?}"
        );
        assert!(
            signed_in
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_join=;")),
            "the way back is forgotten: {:?}",
            signed_in.set_cookies()
        );
        let offer = ada.get(&link).await;
        assert_eq!(offer.status, 200, "{}", offer.body);
        assert!(!offer.body.contains("name=\"password\""), "no account form");
        let accepted = ada.submit(&link, "/auth/join", &[]).await;
        assert_eq!(accepted.status, 303, "{backend:?}: {}", accepted.body);
        let members = get_json(&world, &format!("/api/v1/organizations/{org}/members")).await;
        let items = members["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{members}");
        assert_eq!(items[0]["roles"], json!(["member"]));
        assert_eq!(ada.get(&link).await.status, 410);
        // A join cookie that is not an invitation's secret takes nobody anywhere else.
        let mallory = world.browser();
        mallory.set_cookie("svc_join=join_x/..//evil.example");
        let signed_in = mallory.sign_in(None, "eve@example.com", PASSWORD).await;
        assert_eq!(signed_in.location().as_deref(), Some("/auth/account"));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn revoked_and_replaced_links_are_refused_and_the_new_one_works() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let revoked = invite(&world, "rev@example.com", json!({})).await;
        let revoked_link = world
            .mailed_link("rev@example.com", "/auth/join?token=")
            .await;
        let id = revoked["id"].as_str().unwrap();
        let response = world
            .api(M::DELETE, &format!("/api/v1/invitations/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 204);
        let page = world.browser().get(&revoked_link).await;
        assert_eq!(page.status, 410, "{backend:?}: {}", page.body);
        assert!(page.body.contains("withdrawn"), "{}", page.body);

        let resent = invite(
            &world,
            "res@example.com",
            json!({"roles": ["tenant_admin"]}),
        )
        .await;
        let old = world
            .mailed_link("res@example.com", "/auth/join?token=")
            .await;
        let id = resent["id"].as_str().unwrap();
        let response = world
            .api(M::POST, &format!("/api/v1/invitations/{id}/resend"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(world.mails_to("res@example.com", 2).await.len(), 2);
        let new = world
            .mailed_link("res@example.com", "/auth/join?token=")
            .await;
        assert_ne!(old, new);
        let browser = world.browser();
        let dead = browser.get(&old).await;
        assert_eq!(dead.status, 404, "{}", dead.body);
        assert!(
            !dead.body.contains("res@example.com"),
            "an unknown link names nobody"
        );
        let joined = browser
            .submit(&new, "/auth/join", &[("password", PASSWORD)])
            .await;
        assert_eq!(joined.status, 303, "{backend:?}: {}", joined.body);
        let read = get_json(&world, &format!("/api/v1/invitations/{id}")).await;
        let user = read["accepted_by"].as_str().unwrap();
        let roles = get_json(&world, &format!("/api/v1/tenant-users/{user}/roles")).await;
        assert_eq!(roles["roles"], json!(["tenant_admin"]));
        // A token of nothing, or none at all.
        assert_eq!(
            browser.get("/auth/join?token=join_nothing").await.status,
            404
        );
        assert_eq!(browser.get("/auth/join").await.status, 400);
        world.shutdown().await;
    }
}
