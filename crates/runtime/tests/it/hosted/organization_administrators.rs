//! Organization administrators end to end (issue 17 item 7: "an org admin, limited to that
//! organization"), on SQLite and PostgreSQL: a person who is `admin` of one organization signs
//! in to it through a first-party console whose audience is the management API and gets the
//! organization scopes only; with that token they manage that organization's profile, members,
//! domains and invitations, and nothing else: another organization is not found, tenant-wide
//! routes answer 403 `insufficient_scope`, another tenant refuses the token, an `admin` can
//! neither make nor touch an owner, and tenant roles cannot be given at all. An owner can make
//! owners. Demoted or removed, the person loses the API at once and the refresh loses the
//! scopes (removed: the family dies).

use super::administrators::{ada_id, call, refresh};
use super::support::*;
use super::tokens::tokens;
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

pub(super) const CONSOLE_SCOPE: &str = "openid offline_access applications:read organizations:read \
                             organizations:write users:read users:write";
/// What an organization administrator's sign-in keeps of [`CONSOLE_SCOPE`].
pub(super) const ORGANIZATION_SCOPE: &str =
    "offline_access openid organizations:read organizations:write users:read users:write";

/// A first-party console for the management API.
pub(super) async fn console(world: &World) -> (String, String) {
    world
        .register_with(json!({
            "name": "Admin console",
            "first_party": true,
            "api_audience": format!("{}/api/v1", world.issuer()),
            "allowed_scopes": ["openid", "offline_access", "applications:read",
                               "organizations:read", "organizations:write", "users:read",
                               "users:write"],
        }))
        .await
}

/// `POST` (or another method) with the machine token; asserts `expected` and returns the body.
pub(super) async fn machine(
    world: &World,
    method: M,
    path: &str,
    body: Value,
    expected: u16,
) -> Value {
    let response = world.api(method, path).json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, expected, "{path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// An organization; its id.
pub(super) async fn organization(world: &World, slug: &str) -> String {
    let org = machine(
        world,
        M::POST,
        "/api/v1/organizations",
        json!({"name": slug.to_uppercase(), "slug": slug}),
        201,
    )
    .await;
    org["id"].as_str().unwrap().to_owned()
}

/// A person who can sign in with [`PASSWORD`]; their id.
pub(super) async fn person(world: &World, email: &str) -> String {
    world.create_user(email, PASSWORD).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub(super) async fn join(world: &World, org: &str, user: &str, roles: &[&str]) {
    machine(
        world,
        M::POST,
        &format!("/api/v1/organizations/{org}/members"),
        json!({"user_id": user, "roles": roles}),
        201,
    )
    .await;
}

/// The token response of `email` signing in to the organization `slug` through `console`.
pub(super) async fn sign_in_to(
    world: &mut World,
    email: &str,
    slug: &str,
    console: &(String, String),
) -> Value {
    world.user = email.to_owned();
    let browser = world.browser();
    let code = world
        .code_for(
            &browser,
            &console.0,
            CONSOLE_SCOPE,
            &[("organization", slug)],
        )
        .await;
    tokens(world, &code, console).await
}

/// Asserts the status and problem code of a call.
pub(super) async fn expect(
    world: &World,
    token: &str,
    (method, path, body): (M, &str, Option<Value>),
    status: u16,
    error: &str,
) -> Value {
    let (got, answer) = call(world, token, method.clone(), path, body).await;
    assert_eq!(got, status, "{method} {path}: {answer}");
    if !error.is_empty() {
        assert_eq!(answer["error"], error, "{method} {path}: {answer}");
    }
    answer
}

#[tokio::test]
async fn an_organization_admin_manages_their_organization_and_nothing_else() {
    for backend in BACKENDS {
        let mut world = World::new(backend, Setup::default()).await;
        let console = console(&world).await;
        let acme = organization(&world, "acme").await;
        let globex = organization(&world, "globex").await;
        let ada = ada_id(&world).await;
        let bob = person(&world, "bob@example.com").await;
        let cy = person(&world, "cy@example.com").await;
        let dan = person(&world, "dan@example.com").await;
        join(&world, &acme, &ada, &["admin", "member"]).await;
        join(&world, &acme, &bob, &["member"]).await;
        join(&world, &acme, &cy, &["owner"]).await;
        join(&world, &globex, &bob, &["member"]).await;

        let issued = sign_in_to(&mut world, "ada@example.com", "acme", &console).await;
        assert_eq!(issued["scope"], ORGANIZATION_SCOPE, "{backend:?}");
        let token = issued["access_token"].as_str().unwrap().to_owned();
        let t = token.as_str();
        let w = &world;
        let org = |rest: &str| format!("/api/v1/organizations/{acme}{rest}");
        let other = |rest: &str| format!("/api/v1/organizations/{globex}{rest}");

        // Their organization: read and change it.
        let read = expect(w, t, (M::GET, &org(""), None), 200, "").await;
        assert_eq!(read["id"], acme.as_str());
        let patched = expect(
            w,
            t,
            (M::PATCH, &org(""), Some(json!({"name": "Acme Europe"}))),
            200,
            "",
        )
        .await;
        assert_eq!(patched["name"], "Acme Europe");
        // Another organization does not exist for them, nor do its members, domains or
        // invitations: the answer an unknown id gets.
        for (method, path, body) in [
            (M::GET, other(""), None),
            (M::PATCH, other(""), Some(json!({"name": "Mine"}))),
            (M::GET, other("/members"), None),
            (M::GET, other(&format!("/members/{bob}")), None),
            (
                M::POST,
                other("/members"),
                Some(json!({"user_id": dan, "roles": ["member"]})),
            ),
            (
                M::PATCH,
                other(&format!("/members/{bob}")),
                Some(json!({"roles": ["admin"]})),
            ),
            (M::DELETE, other(&format!("/members/{bob}")), None),
            (M::GET, other("/domains"), None),
            (
                M::POST,
                other("/domains"),
                Some(json!({"name": "globex.example"})),
            ),
        ] {
            expect(w, t, (method, &path, body), 404, "not_found").await;
        }
        // The tenant's own decisions stay the tenant's.
        for (method, path, body) in [
            (M::GET, "/api/v1/organizations".to_owned(), None),
            (
                M::POST,
                "/api/v1/organizations".to_owned(),
                Some(json!({"name": "Mine", "slug": "mine"})),
            ),
            (M::POST, org("/suspend"), None),
            (M::DELETE, org(""), None),
            (M::GET, "/api/v1/tenant-users".to_owned(), None),
            (
                M::PUT,
                format!("/api/v1/tenant-users/{ada}/roles"),
                Some(json!({"roles": ["tenant_admin"]})),
            ),
            (
                M::GET,
                format!("/api/v1/tenant-users/{bob}/organizations"),
                None,
            ),
            (M::GET, "/api/v1/applications".to_owned(), None),
        ] {
            expect(w, t, (method, &path, body), 403, "insufficient_scope").await;
        }

        // Members: add, re-role, but tenant roles are no organization's to give, and only an
        // owner makes or touches owners.
        let added = expect(
            w,
            t,
            (
                M::POST,
                &org("/members"),
                Some(json!({"user_id": dan, "roles": ["member"]})),
            ),
            201,
            "",
        )
        .await;
        assert_eq!(added["roles"], json!(["member"]));
        let listed = expect(w, t, (M::GET, &org("/members"), None), 200, "").await;
        assert_eq!(listed["items"].as_array().unwrap().len(), 4, "{listed}");
        expect(
            w,
            t,
            (
                M::PATCH,
                &org(&format!("/members/{bob}")),
                Some(json!({"roles": ["admin", "member"]})),
            ),
            200,
            "",
        )
        .await;
        expect(
            w,
            t,
            (
                M::PATCH,
                &org(&format!("/members/{dan}")),
                Some(json!({"roles": ["tenant_admin"]})),
            ),
            400,
            "bad_request",
        )
        .await;
        for (method, path, body) in [
            (
                M::PATCH,
                org(&format!("/members/{dan}")),
                Some(json!({"roles": ["owner"]})),
            ),
            (
                M::PATCH,
                org(&format!("/members/{cy}")),
                Some(json!({"roles": ["member"]})),
            ),
            (M::DELETE, org(&format!("/members/{cy}")), None),
            (
                M::POST,
                org("/domains"),
                Some(json!({"name": "owners.example", "auto_join": true,
                            "auto_join_roles": ["owner"]})),
            ),
        ] {
            expect(w, t, (method, &path, body), 403, "forbidden").await;
        }
        let cy_now = machine(w, M::GET, &org(&format!("/members/{cy}")), json!(null), 200).await;
        assert_eq!(cy_now["roles"], json!(["owner"]), "the owner is untouched");
        expect(
            w,
            t,
            (
                M::POST,
                &org("/domains"),
                Some(json!({"name": "acme.example", "auto_join": true})),
            ),
            201,
            "",
        )
        .await;

        // Invitations: into their organization only, never as owner; they see only theirs.
        let theirs = expect(
            w,
            t,
            (
                M::POST,
                "/api/v1/invitations",
                Some(json!({"email": "eve@example.com", "organization_id": acme,
                            "roles": ["member"]})),
            ),
            201,
            "",
        )
        .await;
        for (body, status, error) in [
            (json!({"email": "eve@example.com"}), 400, "bad_request"),
            (
                json!({"email": "eve@example.com", "organization_id": globex}),
                400,
                "bad_request",
            ),
            (
                json!({"email": "fay@example.com", "organization_id": acme, "roles": ["owner"]}),
                403,
                "forbidden",
            ),
        ] {
            expect(
                w,
                t,
                (M::POST, "/api/v1/invitations", Some(body)),
                status,
                error,
            )
            .await;
        }
        let foreign = machine(
            w,
            M::POST,
            "/api/v1/invitations",
            json!({"email": "gus@example.com", "organization_id": globex}),
            201,
        )
        .await;
        let foreign = foreign["id"].as_str().unwrap();
        let listed = expect(w, t, (M::GET, "/api/v1/invitations", None), 200, "").await;
        let ids: Vec<&str> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [theirs["id"].as_str().unwrap()], "{listed}");
        for (method, path) in [
            (
                M::GET,
                format!("/api/v1/invitations?organization_id={globex}"),
            ),
            (M::GET, format!("/api/v1/invitations/{foreign}")),
            (M::POST, format!("/api/v1/invitations/{foreign}/resend")),
            (M::DELETE, format!("/api/v1/invitations/{foreign}")),
        ] {
            expect(w, t, (method, &path, None), 404, "not_found").await;
        }

        // Every action names the person.
        let audit = machine(
            w,
            M::GET,
            &format!("/api/v1/audit-logs?action=organization.member_added&target={acme}"),
            json!(null),
            200,
        )
        .await;
        assert_eq!(audit["items"][0]["actor"], format!("user:{ada}"), "{audit}");

        // Another tenant does not take the token.
        let initech = world.other_tenant("initech").await;
        let refused = world
            .app
            .request(M::POST, "/api/v1/invitations")
            .header("host", &initech.host)
            .bearer_auth(t)
            .json(&json!({"email": "eve@example.com"}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 401, "{backend:?}");

        // Demoted to member: the token stops at once, the refresh carries no management scope.
        machine(
            w,
            M::PATCH,
            &org(&format!("/members/{ada}")),
            json!({"roles": ["member"]}),
            200,
        )
        .await;
        expect(w, t, (M::GET, &org(""), None), 403, "insufficient_scope").await;
        let refreshed = refresh(w, &console, issued["refresh_token"].as_str().unwrap()).await;
        assert_eq!(refreshed["scope"], "offline_access openid", "{refreshed}");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn an_owner_makes_owners_and_loses_everything_when_removed() {
    for backend in BACKENDS {
        let mut world = World::new(backend, Setup::default()).await;
        let console = console(&world).await;
        let acme = organization(&world, "acme").await;
        let cy = person(&world, "cy@example.com").await;
        let bob = person(&world, "bob@example.com").await;
        join(&world, &acme, &cy, &["owner"]).await;
        join(&world, &acme, &bob, &["member"]).await;
        // Signed in without an organization, an owner holds nothing of the management API.
        world.user = "cy@example.com".into();
        let browser = world.browser();
        let code = world
            .code_for(&browser, &console.0, CONSOLE_SCOPE, &[])
            .await;
        assert_eq!(
            tokens(&world, &code, &console).await["scope"],
            "offline_access openid",
            "{backend:?}"
        );

        let issued = sign_in_to(&mut world, "cy@example.com", "acme", &console).await;
        assert_eq!(issued["scope"], ORGANIZATION_SCOPE, "{backend:?}");
        let t = issued["access_token"].as_str().unwrap().to_owned();
        let members = format!("/api/v1/organizations/{acme}/members");
        let promoted = expect(
            &world,
            &t,
            (
                M::PATCH,
                &format!("{members}/{bob}"),
                Some(json!({"roles": ["owner", "member"]})),
            ),
            200,
            "",
        )
        .await;
        assert_eq!(promoted["roles"], json!(["member", "owner"]));
        expect(
            &world,
            &t,
            (
                M::POST,
                "/api/v1/invitations",
                Some(json!({"email": "eve@example.com", "organization_id": acme,
                            "roles": ["owner"]})),
            ),
            201,
            "",
        )
        .await;

        // Removed from the organization: the token stops, the family dies.
        machine(
            &world,
            M::DELETE,
            &format!("{members}/{cy}"),
            json!(null),
            204,
        )
        .await;
        expect(
            &world,
            &t,
            (M::GET, &members, None),
            403,
            "insufficient_scope",
        )
        .await;
        let refused = world
            .app
            .request(M::POST, "/oauth/token")
            .header("host", &world.host)
            .basic_auth(&console.0, Some(&console.1))
            .form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", issued["refresh_token"].as_str().unwrap()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{backend:?}");
        let problem: Value = refused.json().await.unwrap();
        assert_eq!(problem["error"], "invalid_grant", "{problem}");
        world.shutdown().await;
    }
}
