//! Auto-join through verified domains, as people sign up on the hosted pages, on SQLite and
//! PostgreSQL, against a real DNS server on the loopback: an organization verifies
//! `acme.example` with auto-join on; a person signing up as `grace@acme.example` is a member
//! (with the chosen roles) only once the mailed link verified the address; sign-ups at a
//! verified domain with auto-join off, at a subdomain, or at another domain join nothing.

use super::support::{PASSWORD, Setup, World};
use crate::dns::LocalDns;
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

async fn call(world: &World, method: M, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = world.api(method, path);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Creates an organization with a verified claim of `name` (auto-join as asked); its id.
async fn verified_org(
    world: &World,
    dns: &LocalDns,
    slug: &str,
    name: &str,
    auto_join: bool,
) -> String {
    let (status, org) = call(
        world,
        M::POST,
        "/api/v1/organizations",
        Some(json!({"name": slug, "slug": slug})),
    )
    .await;
    assert_eq!(status, 201, "{org}");
    let org = org["id"].as_str().unwrap().to_owned();
    let (status, d) = call(
        world,
        M::POST,
        &format!("/api/v1/organizations/{org}/domains"),
        Some(json!({"name": name, "auto_join": auto_join, "auto_join_roles": ["member", "admin"]})),
    )
    .await;
    assert_eq!(status, 201, "{d}");
    let txt = &d["verification"]["dns_txt"];
    dns.set_txt(
        txt["name"].as_str().unwrap(),
        &[txt["value"].as_str().unwrap()],
    );
    let path = format!(
        "/api/v1/organizations/{org}/domains/{}/verify",
        d["id"].as_str().unwrap()
    );
    let (status, verified) = call(world, M::POST, &path, None).await;
    assert_eq!(status, 200, "{verified}");
    org
}

/// Signs `email` up on the hosted page; the new person's id.
async fn sign_up(world: &World, email: &str) -> String {
    let created = world
        .browser()
        .submit(
            "/auth/sign-up",
            "/auth/sign-up",
            &[("email", email), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let (_, users) = call(world, M::GET, "/api/v1/tenant-users?limit=200", None).await;
    users["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == email)
        .map(|u| u["id"].as_str().unwrap().to_owned())
        .unwrap()
}

/// Follows the verification link mailed to `email`.
async fn verify_email(world: &World, email: &str) {
    let link = world.mailed_link(email, "/auth/verify-email").await;
    let verified = world
        .browser()
        .submit(&link, "/auth/verify-email", &[])
        .await;
    assert_eq!(verified.status, 303, "{}", verified.body);
}

/// The organizations `user` belongs to, with the roles held.
async fn memberships(world: &World, user: &str) -> Vec<(String, Value)> {
    let (status, list) = call(
        world,
        M::GET,
        &format!("/api/v1/tenant-users/{user}/organizations"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["organization_id"].as_str().unwrap().to_owned(),
                m["roles"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_sign_ups_at_an_auto_join_domain_become_members() {
    for backend in BACKENDS {
        let dns = LocalDns::start().await;
        // The world's environment lives as long as the process; one small string per run.
        let servers: &'static str = Box::leak(dns.servers_setting().into_boxed_str());
        let world = World::new(
            backend,
            Setup {
                signup: true,
                env: vec![("SVC_VERIFIED_DOMAINS__DNS_SERVERS", servers)],
                ..Setup::default()
            },
        )
        .await;
        let joining = verified_org(&world, &dns, "acme-corp", "acme.example", true).await;
        verified_org(&world, &dns, "closed-corp", "closed.example", false).await;

        let grace = sign_up(&world, "grace@acme.example").await;
        assert!(
            memberships(&world, &grace).await.is_empty(),
            "not before the address is verified"
        );
        verify_email(&world, "grace@acme.example").await;
        assert_eq!(
            memberships(&world, &grace).await,
            [(joining.clone(), json!(["admin", "member"]))]
        );
        // The organization's history shows the join, by the service itself.
        let (_, audit) = call(
            &world,
            M::GET,
            &format!("/api/v1/audit-logs?action=organization.member_added&target={joining}"),
            None,
        )
        .await;
        let entries = audit["items"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{audit}");
        assert_eq!(entries[0]["actor"], "system", "{audit}");

        for email in [
            "ann@closed.example",
            "sub@eu.acme.example",
            "bob@elsewhere.example",
        ] {
            let user = sign_up(&world, email).await;
            verify_email(&world, email).await;
            assert!(memberships(&world, &user).await.is_empty(), "{email}");
        }
        // Removing the claim stops auto-join; members stay.
        let (_, claims) = call(
            &world,
            M::GET,
            &format!("/api/v1/organizations/{joining}/domains"),
            None,
        )
        .await;
        let claim = claims["items"][0]["id"].as_str().unwrap();
        let (status, _) = call(
            &world,
            M::DELETE,
            &format!("/api/v1/organizations/{joining}/domains/{claim}"),
            None,
        )
        .await;
        assert_eq!(status, 204);
        let late = sign_up(&world, "late@acme.example").await;
        verify_email(&world, "late@acme.example").await;
        assert!(memberships(&world, &late).await.is_empty());
        assert_eq!(memberships(&world, &grace).await.len(), 1);
        world.shutdown().await;
    }
}
