//! An organization's directory groups mapped to organization roles (issue 20: "Groups mapped to
//! roles or organization membership"), on SQLite and PostgreSQL. The organization's own
//! directory (an organization SCIM token) pushes a group holding a member; mapped at
//! `/api/v1/organizations/{id}/scim/groups/{group_id}/roles`, it makes that member an `admin`
//! of the organization wherever the organization's roles decide: the `org_roles` claim, the
//! console sign-in's organization scopes and the management API's reach — never a tenant role,
//! never a membership of its own (the membership view keeps its own roles). The directory
//! taking the person out of the group takes the reach away at once. Refused, with nothing
//! written: an `admin` (through the group) mapping to `owner`, another organization's or the
//! tenant's groups through this path, tenant or unknown roles, junk bodies.

use super::administrators::ada_id;
use super::organization_administrators::{
    ORGANIZATION_SCOPE, console, expect, join, machine, organization, person, sign_in_to,
};
use super::support::*;
use crate::scim::{PATCH_OP, issue, scim};
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

/// A world with SCIM provisioning on.
async fn world(backend: svc_testkit::Backend) -> World {
    World::new(
        backend,
        Setup {
            env: vec![("SVC_SCIM__ENABLED", "true")],
            ..Setup::default()
        },
    )
    .await
}

/// The SCIM id of the person `email` as the directory behind `token` sees them.
async fn scim_id(world: &World, token: &str, email: &str) -> String {
    let filter = crate::scim::urlencode(&format!("userName eq \"{email}\""));
    let (status, _, found) = scim(
        world,
        M::GET,
        &format!("/Users?filter={filter}"),
        token,
        None,
    )
    .await;
    assert_eq!(status, 200, "{found}");
    found["Resources"][0]["id"].as_str().unwrap().to_owned()
}

/// A group `name` the directory behind `token` pushes with `members`; its id.
async fn push_group(world: &World, token: &str, name: &str, members: &[&str]) -> String {
    let members: Vec<Value> = members.iter().map(|m| json!({"value": m})).collect();
    let (status, _, group) = scim(
        world,
        M::POST,
        "/Groups",
        token,
        Some(&json!({"schemas": [GROUP], "displayName": name, "members": members})),
    )
    .await;
    assert_eq!(status, 201, "{group}");
    group["id"].as_str().unwrap().to_owned()
}

/// `roles` and `org_roles` of the person signing in with `organization` to an application
/// asking for `roles`, read at UserInfo.
async fn claims_in(world: &World, organization: &str) -> (Value, Value) {
    let (client, secret) = world
        .register_with(json!({"allowed_scopes": ["openid", "roles"]}))
        .await;
    let browser = world.browser();
    let code = world
        .code_for(
            &browser,
            &client,
            "openid roles",
            &[("organization", organization)],
        )
        .await;
    let issued: Value = world
        .redeem_as(&code, &client, &secret)
        .await
        .json()
        .await
        .unwrap();
    let access = issued["access_token"].as_str().expect("a token");
    let userinfo = crate::scim_group_roles::userinfo(world, access).await;
    (userinfo["roles"].clone(), userinfo["org_roles"].clone())
}

#[tokio::test]
async fn an_organization_group_makes_its_members_admins_there_and_nowhere_else() {
    for backend in BACKENDS {
        let mut world = world(backend).await;
        let console = console(&world).await;
        let acme = organization(&world, "acme").await;
        let globex = organization(&world, "globex").await;
        let ada = ada_id(&world).await;
        let bob = person(&world, "bob@example.com").await;
        join(&world, &acme, &ada, &["member"]).await;
        join(&world, &acme, &bob, &["member"]).await;
        let directory = issue(&world, Some(&acme)).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let ada_scim = scim_id(&world, &directory, "ada@example.com").await;
        let leads = push_group(&world, &directory, "Acme leads", &[&ada_scim]).await;
        let org = |rest: &str| format!("/api/v1/organizations/{acme}{rest}");
        let roles_path = org(&format!("/scim/groups/{leads}/roles"));

        // Listed for the organization, granting nothing yet: Ada is a plain member.
        let listed = machine(&world, M::GET, &org("/scim/groups"), Value::Null, 200).await;
        assert_eq!(listed["items"][0]["id"], leads.as_str(), "{listed}");
        assert_eq!(listed["items"][0]["member_count"], 1);
        assert_eq!(listed["items"][0]["roles"], json!([]));
        assert_eq!(
            claims_in(&world, "acme").await,
            (json!([]), json!(["member"])),
            "{backend:?}"
        );
        let plain = sign_in_to(&mut world, "ada@example.com", "acme", &console).await;
        assert_eq!(plain["scope"], "offline_access openid", "{plain}");

        // Mapped to admin: an admin of acme in her claims and in the console's scopes, never a
        // tenant role; her membership keeps its own roles.
        let mapped = machine(
            &world,
            M::PUT,
            &roles_path,
            json!({"roles": ["admin", "admin"]}),
            200,
        )
        .await;
        assert_eq!(mapped["roles"], json!(["admin"]), "{mapped}");
        assert_eq!(
            claims_in(&world, "acme").await,
            (json!([]), json!(["admin", "member"])),
            "{backend:?}"
        );
        let member = machine(
            &world,
            M::GET,
            &org(&format!("/members/{ada}")),
            Value::Null,
            200,
        )
        .await;
        assert_eq!(member["roles"], json!(["member"]), "{member}");
        let issued = sign_in_to(&mut world, "ada@example.com", "acme", &console).await;
        assert_eq!(issued["scope"], ORGANIZATION_SCOPE, "{issued}");
        let token = issued["access_token"].as_str().unwrap().to_owned();
        let (w, t) = (&world, token.as_str());

        // With it she manages acme: its members and its groups.
        let members = expect(w, t, (M::GET, &org("/members"), None), 200, "").await;
        assert_eq!(members["items"].as_array().unwrap().len(), 2, "{members}");
        let seen = expect(
            w,
            t,
            (M::GET, &org(&format!("/scim/groups/{leads}")), None),
            200,
            "",
        )
        .await;
        assert_eq!(seen["roles"], json!(["admin"]));
        // An admin cannot make owners through a group, nor see another organization's groups.
        expect(
            w,
            t,
            (M::PUT, &roles_path, Some(json!({"roles": ["owner"]}))),
            403,
            "",
        )
        .await;
        expect(
            w,
            t,
            (
                M::GET,
                &format!("/api/v1/organizations/{globex}/scim/groups"),
                None,
            ),
            404,
            "not_found",
        )
        .await;
        let unchanged = machine(
            w,
            M::GET,
            &org(&format!("/scim/groups/{leads}")),
            Value::Null,
            200,
        )
        .await;
        assert_eq!(unchanged["roles"], json!(["admin"]), "nothing written");

        // The directory takes her out of the group: the reach goes at once.
        let (status, _, _) = scim(
            w,
            M::PATCH,
            &format!("/Groups/{leads}"),
            &directory,
            Some(&json!({"schemas": [PATCH_OP], "Operations": [
                {"op": "remove", "path": format!("members[value eq \"{ada_scim}\"]")}]})),
        )
        .await;
        assert_eq!(status, 200);
        expect(
            w,
            t,
            (M::GET, &org("/members"), None),
            403,
            "insufficient_scope",
        )
        .await;
        assert_eq!(
            claims_in(w, "acme").await,
            (json!([]), json!(["member"])),
            "{backend:?}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_organization_group_mappings_are_refused_and_write_nothing() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let acme = organization(&world, "acme").await;
        let globex = organization(&world, "globex").await;
        let acme_directory = issue(&world, Some(&acme)).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let globex_directory = issue(&world, Some(&globex)).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let tenant_directory = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let ops = push_group(&world, &acme_directory, "Ops", &[]).await;
        let theirs = push_group(&world, &globex_directory, "Theirs", &[]).await;
        let tenants = push_group(&world, &tenant_directory, "Everyone", &[]).await;
        let path = format!("/api/v1/organizations/{acme}/scim/groups/{ops}/roles");

        let too_many: Vec<String> = (0..17).map(|i| format!("r{i}")).collect();
        for (body, what) in [
            (json!({"roles": ["tenant_admin"]}), "a tenant role"),
            (json!({"roles": ["no_such_role"]}), "unknown role"),
            (json!({"roles": too_many}), "17 roles"),
            (json!({"roles": ["Not A Key"]}), "not a key"),
            (json!({"roles": "admin"}), "not a list"),
            (json!({"roles": [], "extra": 1}), "unknown field"),
        ] {
            let answer = world.api(M::PUT, &path).json(&body).send().await.unwrap();
            assert_eq!(answer.status(), 400, "{backend:?} {what}");
        }
        let junk = world
            .api(M::PUT, &path)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(junk.status(), 400);

        // Groups of another scope, unknown and malformed ids, unknown organizations.
        for (org, group) in [
            (acme.as_str(), theirs.as_str()),
            (acme.as_str(), tenants.as_str()),
            (globex.as_str(), ops.as_str()),
            (acme.as_str(), "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d"),
            (acme.as_str(), "nonsense"),
            ("org_01jd2n4k6m8p0r2t4v6x8z0b2d", ops.as_str()),
            ("nonsense", ops.as_str()),
        ] {
            let answer = world
                .api(
                    M::PUT,
                    &format!("/api/v1/organizations/{org}/scim/groups/{group}/roles"),
                )
                .json(&json!({"roles": ["admin"]}))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 404, "{backend:?} {org} {group}");
        }
        // An organization's group is not the tenant's to map, nor listed with the tenant's.
        let answer = world
            .api(M::PUT, &format!("/api/v1/scim/groups/{ops}/roles"))
            .json(&json!({"roles": ["tenant_admin"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 404);

        for (org, group) in [(&acme, &ops), (&globex, &theirs)] {
            let read = machine(
                &world,
                M::GET,
                &format!("/api/v1/organizations/{org}/scim/groups/{group}"),
                Value::Null,
                200,
            )
            .await;
            assert_eq!(read["roles"], json!([]), "nothing written: {read}");
        }
        let tenant_view = machine(
            &world,
            M::GET,
            &format!("/api/v1/scim/groups/{tenants}"),
            Value::Null,
            200,
        )
        .await;
        assert_eq!(tenant_view["roles"], json!([]), "nothing written");
        world.shutdown().await;
    }
}
