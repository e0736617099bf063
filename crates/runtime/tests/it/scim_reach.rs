//! SCIM 2.0 provisioning, what a token reaches, on SQLite and PostgreSQL: deprovisioning
//! (`active: false`, DELETE) ends a live refresh token at once; an organization's token sees
//! and changes only its own members (another organization's are 404, a person it shares with
//! another organization is 403 to change and DELETE only ends its membership), a suspended
//! organization's token is refused, and the audit log names the token.

use crate::scim::{PATCH_OP, assert_error, issue, scim, urlencode, user, world};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_deprovisioning_ends_a_live_refresh_token_at_once() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let browser = world.browser();
        let code = world
            .code_for(&browser, &world.client_id, "openid offline_access", &[])
            .await;
        let issued: Value = world.redeem(&code).await.json().await.unwrap();
        let refresh = issued["refresh_token"].as_str().unwrap().to_owned();
        let rotate = |refresh: String| {
            let world = &world;
            async move {
                let response = world
                    .app
                    .request(Method::POST, "/oauth/token")
                    .header("host", &world.host)
                    .basic_auth(&world.client_id, Some(&world.client_secret))
                    .form(&[
                        ("grant_type", "refresh_token"),
                        ("refresh_token", refresh.as_str()),
                    ])
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                (status, response.json::<Value>().await.unwrap())
            }
        };
        let (status, rotated) = rotate(refresh).await;
        assert_eq!(status, 200, "{rotated}");
        let live = rotated["refresh_token"].as_str().unwrap().to_owned();

        // The directory finds Ada by userName (her email) and deactivates her.
        let (_, _, found) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(r#"userName eq "ada@example.com""#)
            ),
            &token,
            None,
        )
        .await;
        let id = found["Resources"][0]["id"].as_str().unwrap().to_owned();
        // As Entra ID sends it with its default mappings: attributes not stored here beside
        // the deactivation, which must still apply.
        let off = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "Replace", "path": "title", "value": "Countess"},
            {"op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Analytics"},
            {"op": "Replace", "path": "active", "value": "False"}]});
        let (status, _, body) = scim(
            &world,
            Method::PATCH,
            &format!("/Users/{id}"),
            &token,
            Some(&off),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let (status, refused) = rotate(live).await;
        assert_eq!(status, 400, "{refused}");
        assert_eq!(refused["error"], "invalid_grant");

        // Reactivated, she signs in again and gets a new refresh token; DELETE ends it too.
        let on = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "replace", "path": "active", "value": true}]});
        let (status, _, body) = scim(
            &world,
            Method::PATCH,
            &format!("/Users/{id}"),
            &token,
            Some(&on),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let browser = world.browser();
        let code = world
            .code_for(&browser, &world.client_id, "openid offline_access", &[])
            .await;
        let issued: Value = world.redeem(&code).await.json().await.unwrap();
        let refresh = issued["refresh_token"].as_str().unwrap().to_owned();
        let (status, _, _) = scim(
            &world,
            Method::DELETE,
            &format!("/Users/{id}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 204);
        let (status, refused) = rotate(refresh).await;
        assert_eq!(
            (status, refused["error"].clone()),
            (400, json!("invalid_grant"))
        );
        world.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organization_tokens_reach_only_their_members() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let mut orgs = Vec::new();
        for slug in ["north", "south"] {
            let created: Value = world
                .api(Method::POST, "/api/v1/organizations")
                .json(&json!({"name": slug, "slug": slug}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            orgs.push(created["id"].as_str().unwrap().to_owned());
        }
        let north = issue(&world, Some(&orgs[0])).await;
        assert_eq!(north["organization_id"], orgs[0].as_str());
        let north = north["token"].as_str().unwrap().to_owned();
        let south = issue(&world, Some(&orgs[1])).await["token"]
            .as_str()
            .unwrap()
            .to_owned();

        // Created through north's token: a member of north.
        let (status, _, nina) = scim(
            &world,
            Method::POST,
            "/Users",
            &north,
            Some(&user("nina", "nina@north.example")),
        )
        .await;
        assert_eq!(status, 201, "{nina}");
        let nina = nina["id"].as_str().unwrap().to_owned();
        let members: Value = world
            .api(
                Method::GET,
                &format!("/api/v1/organizations/{}/members", orgs[0]),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(members["items"][0]["user_id"], nina.as_str(), "{members}");

        // North sees Nina only (not Ada, a tenant user); south sees neither.
        let (_, _, listed) = scim(&world, Method::GET, "/Users", &north, None).await;
        assert_eq!(listed["totalResults"], 1, "{listed}");
        let (_, _, listed) = scim(&world, Method::GET, "/Users", &south, None).await;
        assert_eq!(listed["totalResults"], 0, "{listed}");
        let (_, _, ada) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(r#"userName eq "ada@example.com""#)
            ),
            &north,
            None,
        )
        .await;
        assert_eq!(ada["totalResults"], 0, "{ada}");

        // South's token touching north's member: 404 for every method, nothing changes.
        let path = format!("/Users/{nina}");
        let off = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "replace", "path": "active", "value": false}]});
        for (method, body) in [
            (Method::GET, None),
            (Method::PATCH, Some(&off)),
            (Method::PUT, Some(&user("nina", "nina@north.example"))),
            (Method::DELETE, None),
        ] {
            let (status, _, refused) = scim(&world, method, &path, &south, body).await;
            assert_error(status, &refused, 404, None);
        }
        let (status, _, still) = scim(&world, Method::GET, &path, &north, None).await;
        assert_eq!(
            (status, still["active"].clone()),
            (200, json!(true)),
            "{still}"
        );
        // A userName taken elsewhere in the tenant is still taken for an organization.
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Users",
            &south,
            Some(&user("NINA", "nina2@south.example")),
        )
        .await;
        assert_error(status, &body, 409, Some("uniqueness"));

        // The audit log names the token as the actor of what it provisioned.
        let audit: Value = world
            .api(Method::GET, &format!("/api/v1/audit-logs?target={nina}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let actor = audit["items"][0]["actor"].as_str().unwrap_or_default();
        assert!(actor.starts_with("scim:scimt_"), "{audit}");

        // Nina joins south too: north's DELETE only ends north's membership; south's then
        // deprovisions her.
        let joined = world
            .api(
                Method::POST,
                &format!("/api/v1/organizations/{}/members", orgs[1]),
            )
            .json(&json!({"user_id": nina}))
            .send()
            .await
            .unwrap();
        assert_eq!(joined.status(), 201);
        // Shared now: neither directory may rewrite her alone.
        for token in [&north, &south] {
            let (status, _, refused) = scim(&world, Method::PATCH, &path, token, Some(&off)).await;
            assert_error(status, &refused, 403, None);
        }
        let (status, _, _) = scim(&world, Method::DELETE, &path, &north, None).await;
        assert_eq!(status, 204);
        let (status, _, body) = scim(&world, Method::GET, &path, &north, None).await;
        assert_error(status, &body, 404, None);
        let (status, _, still) = scim(&world, Method::GET, &path, &south, None).await;
        assert_eq!(
            (status, still["active"].clone()),
            (200, json!(true)),
            "{still}"
        );
        // Hers alone again, south may change and deprovision her.
        let (status, _, body) = scim(&world, Method::PATCH, &path, &south, Some(&off)).await;
        assert_eq!(
            (status, body["active"].clone()),
            (200, json!(false)),
            "{body}"
        );
        let (status, _, _) = scim(&world, Method::DELETE, &path, &south, None).await;
        assert_eq!(status, 204);
        let person: Value = world
            .api(Method::GET, &format!("/api/v1/tenant-users/{nina}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(person["status"], "removed", "{person}");

        // A suspended organization's token is refused.
        let suspended = world
            .api(
                Method::POST,
                &format!("/api/v1/organizations/{}/suspend", orgs[0]),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(suspended.status(), 200);
        let (status, _, body) = scim(&world, Method::GET, "/Users", &north, None).await;
        assert_error(status, &body, 401, None);
        world.shutdown().await;
    }
}
