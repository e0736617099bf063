//! Directory groups mapped to roles (issue 20), on SQLite and PostgreSQL: a group the directory
//! pushes through `/scim/v2/Groups` is mapped to a custom tenant role at
//! `/api/v1/scim/groups/{id}/roles`; its member holds the role (the `roles` claim at UserInfo,
//! read at each call) while the directory keeps them in the group, and loses it when the
//! directory removes them or deletes the group; a mapped role cannot be deleted; the change is
//! audited. Refused: unknown, organization and too many roles, junk bodies, another tenant's,
//! an organization's and malformed group ids.

use crate::common::management_token;
use crate::hosted::support::World;
use crate::scim::{PATCH_OP, issue, scim, world};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

/// `method path` on the management API with `body`: status and JSON.
async fn api(world: &World, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = world.api(method, path);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// What UserInfo answers for `access` now.
pub(crate) async fn userinfo(world: &World, access: &str) -> Value {
    world
        .app
        .request(Method::GET, "/userinfo")
        .header("host", &world.host)
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The `roles` claim Ada's `access` token reads at UserInfo now.
async fn roles_now(world: &World, access: &str) -> Value {
    userinfo(world, access).await["roles"].clone()
}

#[tokio::test]
async fn a_directory_groups_roles_reach_its_members_while_they_belong() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, role) = api(
            &world,
            Method::POST,
            "/api/v1/roles",
            Some(json!({"key": "developer", "kind": "tenant",
                        "description": "Ships code.", "permissions": []})),
        )
        .await;
        assert_eq!(status, 201, "{backend:?}: {role}");

        // Ada (a person of the tenant) in a group the directory pushes.
        let filter = crate::scim::urlencode(&format!("userName eq \"{}\"", world.user));
        let (status, _, found) = scim(
            &world,
            Method::GET,
            &format!("/Users?filter={filter}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 200, "{found}");
        let ada = found["Resources"][0]["id"].as_str().unwrap().to_owned();
        let (status, _, group) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&json!({"schemas": [GROUP], "displayName": "Engineering",
                         "members": [{"value": ada}]})),
        )
        .await;
        assert_eq!(status, 201, "{group}");
        let group = group["id"].as_str().unwrap().to_owned();
        let roles_path = format!("/api/v1/scim/groups/{group}/roles");

        let (status, listed) = api(&world, Method::GET, "/api/v1/scim/groups", None).await;
        assert_eq!(status, 200, "{listed}");
        assert_eq!(listed["items"][0]["id"], group.as_str(), "{listed}");
        assert_eq!(listed["items"][0]["member_count"], 1);
        assert_eq!(listed["items"][0]["roles"], json!([]));

        // Ada signs in to an application asking for her roles: none yet.
        let (client, secret) = world
            .register_with(json!({"allowed_scopes": ["openid", "roles"]}))
            .await;
        let browser = world.browser();
        let code = world.code_for(&browser, &client, "openid roles", &[]).await;
        let issued: Value = world
            .redeem_as(&code, &client, &secret)
            .await
            .json()
            .await
            .unwrap();
        let access = issued["access_token"].as_str().expect("a token").to_owned();
        assert_eq!(roles_now(&world, &access).await, json!([]));

        // Mapped: she holds the role; the same roles again change nothing (one audit entry).
        let (status, mapped) = api(
            &world,
            Method::PUT,
            &roles_path,
            Some(json!({"roles": ["developer", "developer"]})),
        )
        .await;
        assert_eq!(status, 200, "{mapped}");
        assert_eq!(mapped["roles"], json!(["developer"]));
        let (status, _) = api(
            &world,
            Method::PUT,
            &roles_path,
            Some(json!({"roles": ["developer"]})),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(roles_now(&world, &access).await, json!(["developer"]));
        let (_, audit) = api(
            &world,
            Method::GET,
            "/api/v1/audit-logs?action=directory_group.roles_changed",
            None,
        )
        .await;
        let entries = audit["items"].as_array().expect("audit entries");
        assert_eq!(entries.len(), 1, "{audit}");
        assert_eq!(entries[0]["target"], group.as_str());

        // A mapped role is held: it cannot be deleted.
        let (status, refused) = api(&world, Method::DELETE, "/api/v1/roles/developer", None).await;
        assert_eq!(status, 409, "{refused}");

        // The directory removes her: the role goes; adds her back: it returns.
        let membership = |op: &str| {
            json!({"schemas": [PATCH_OP], "Operations": [
                {"op": op, "path": "members", "value": [{"value": ada}]}]})
        };
        let (status, _, _) = scim(
            &world,
            Method::PATCH,
            &format!("/Groups/{group}"),
            &token,
            Some(&json!({"schemas": [PATCH_OP], "Operations": [
                {"op": "remove", "path": format!("members[value eq \"{ada}\"]")}]})),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(roles_now(&world, &access).await, json!([]));
        let (status, _, _) = scim(
            &world,
            Method::PATCH,
            &format!("/Groups/{group}"),
            &token,
            Some(&membership("add")),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(roles_now(&world, &access).await, json!(["developer"]));

        // The directory deletes the group: the role goes, and can be deleted now.
        let (status, _, _) = scim(
            &world,
            Method::DELETE,
            &format!("/Groups/{group}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 204);
        assert_eq!(roles_now(&world, &access).await, json!([]));
        let (status, _) = api(
            &world,
            Method::GET,
            &format!("/api/v1/scim/groups/{group}"),
            None,
        )
        .await;
        assert_eq!(status, 404);
        let (status, deleted) = api(&world, Method::DELETE, "/api/v1/roles/developer", None).await;
        assert!(
            (200..300).contains(&status),
            "nobody holds it now: {deleted}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_group_role_mappings_are_refused_and_write_nothing() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, _, group) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&json!({"schemas": [GROUP], "displayName": "Ops"})),
        )
        .await;
        assert_eq!(status, 201, "{group}");
        let group = group["id"].as_str().unwrap().to_owned();
        let path = format!("/api/v1/scim/groups/{group}/roles");

        let too_many: Vec<String> = (0..17).map(|i| format!("r{i}")).collect();
        for (body, what) in [
            (json!({"roles": ["no_such_role"]}), "unknown role"),
            (json!({"roles": ["member"]}), "an organization role"),
            (json!({"roles": too_many}), "17 roles"),
            (json!({"roles": ["Not A Key"]}), "not a key"),
            (json!({"roles": "tenant_admin"}), "not a list"),
            (json!({"roles": [], "extra": 1}), "unknown field"),
        ] {
            let (status, problem) = api(&world, Method::PUT, &path, Some(body)).await;
            assert_eq!(status, 400, "{backend:?} {what}: {problem}");
        }
        let junk = world
            .api(Method::PUT, &path)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(junk.status(), 400);
        let (_, unchanged) = api(
            &world,
            Method::GET,
            &format!("/api/v1/scim/groups/{group}"),
            None,
        )
        .await;
        assert_eq!(
            unchanged["roles"],
            json!([]),
            "nothing written: {unchanged}"
        );

        // Ids that are not one of the tenant's own groups.
        for id in [
            "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d",
            "nonsense",
            "..%2F..%2Fusers",
        ] {
            let (status, _) = api(
                &world,
                Method::PUT,
                &format!("/api/v1/scim/groups/{id}/roles"),
                Some(json!({"roles": []})),
            )
            .await;
            assert_eq!(status, 404, "{id}");
        }
        // An organization's group is not the tenant's to map.
        let (_, org) = api(
            &world,
            Method::POST,
            "/api/v1/organizations",
            Some(json!({"name": "North", "slug": "north"})),
        )
        .await;
        let north = issue(&world, org["id"].as_str()).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, _, org_group) = scim(
            &world,
            Method::POST,
            "/Groups",
            &north,
            Some(&json!({"schemas": [GROUP], "displayName": "North ops"})),
        )
        .await;
        assert_eq!(status, 201);
        let org_group = org_group["id"].as_str().unwrap();
        let (status, _) = api(
            &world,
            Method::PUT,
            &format!("/api/v1/scim/groups/{org_group}/roles"),
            Some(json!({"roles": ["tenant_admin"]})),
        )
        .await;
        assert_eq!(status, 404, "an organization's group");
        let (_, listed) = api(&world, Method::GET, "/api/v1/scim/groups", None).await;
        assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");

        // Another tenant's administrator cannot see or map it.
        let other = world.other_tenant("other").await;
        let foreign = management_token(&world.app, &other, None).await;
        let answer = world
            .app
            .request(Method::PUT, &path)
            .header("host", &other.host)
            .bearer_auth(&foreign)
            .json(&json!({"roles": ["tenant_admin"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 404);
        let (_, unchanged) = api(
            &world,
            Method::GET,
            &format!("/api/v1/scim/groups/{group}"),
            None,
        )
        .await;
        assert_eq!(
            unchanged["roles"],
            json!([]),
            "nothing written: {unchanged}"
        );
        world.shutdown().await;
    }
}
