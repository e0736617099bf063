//! People's own API keys (issue 19 item 5, "for people … when a tenant allows"), on SQLite and
//! PostgreSQL, end to end: the tenant's policy through `/api/v1/api-key-policy` (hostile
//! bodies refused, each naming the member at fault; self-service refused where the deployment
//! does not allow keys acting as a person), then a person on `/auth/account/api-keys` creating
//! a key for an API the policy names, with a permission their role grants — shown once, acting
//! as them at introspection — and refused for a permission they do not hold, an API the policy
//! does not name, a lifetime over the policy's, a missing CSRF token, a repeated field, and past
//! the per-person limit; revoking their own key (another person's id changes nothing); the
//! policy turned off hides the page and leaves existing keys working. Where the policy allows
//! (`agents`), keys for the active agents a person owns, within each agent's allowances, and
//! never for an agent they do not own.

use crate::agent_challenge::{BOOKINGS, HOTELS, introspect};
use crate::delegations::{ada_id, give_role, setup, signed_in};
use crate::hosted::support::{Browser, PASSWORD, Setup, World, XSS};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const PAGE: &str = "/auth/account/api-keys";
const SUBJECT_KEYS: (&str, &str) = ("SVC_API_KEYS__SUBJECT_KEYS", "true");

/// The hosted world in a deployment that allows keys acting as a person.
async fn subject_keys_world(backend: svc_testkit::Backend) -> World {
    World::new(
        backend,
        Setup {
            env: vec![SUBJECT_KEYS],
            ..Setup::default()
        },
    )
    .await
}

async fn put_policy(world: &World, body: Value) -> (u16, Value) {
    let answer = world
        .api(Method::PUT, "/api/v1/api-key-policy")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// The id (`res_…`) of the API `identifier`.
async fn resource_id(world: &World, identifier: &str) -> String {
    let listed: Value = world
        .api(Method::GET, "/api/v1/api-resources")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["identifier"] == identifier)
        .unwrap_or_else(|| panic!("no API {identifier}: {listed}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The page's form for creating a key at `resource` with `permissions`, `days` and `name`,
/// posted with the page's CSRF token.
async fn create(
    browser: &Browser,
    resource: &str,
    name: &str,
    permissions: &[&str],
    days: &str,
) -> crate::hosted::support::Page {
    let shown = browser.get(PAGE).await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    let csrf = shown.field("csrf").unwrap();
    let mut form = vec![
        ("csrf", csrf.as_str()),
        ("action", "create"),
        ("resource", resource),
        ("name", name),
        ("days", days),
    ];
    form.extend(permissions.iter().map(|p| ("permission", *p)));
    browser.post(PAGE, &form).await
}

/// The key on the page that shows a new one.
fn shown_key(body: &str) -> String {
    let at = body.find("value=\"svck_").expect("no key on the page") + "value=\"".len();
    let end = at + body[at..].find('"').unwrap();
    body[at..end].to_owned()
}

/// The id of the tenant's key named `name`, as the management API lists it.
async fn key_id_named(world: &World, name: &str) -> String {
    admin_keys(world)
        .await
        .into_iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no key named {name}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The tenant's keys as the management API lists them.
async fn admin_keys(world: &World) -> Vec<Value> {
    let listed: Value = world
        .api(Method::GET, "/api/v1/api-keys")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    listed["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_tenant_policy_is_checked_and_refused_where_the_deployment_does_not_allow_it() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        setup(&world).await;
        let (status, read) = {
            let answer = world
                .api(Method::GET, "/api/v1/api-key-policy")
                .send()
                .await
                .unwrap();
            (
                answer.status().as_u16(),
                answer.json::<Value>().await.unwrap(),
            )
        };
        assert_eq!(status, 200);
        assert_eq!(
            read,
            json!({"self_service": false, "resources": [], "max_per_person": 5,
                   "max_lifetime_days": 90, "agents": false})
        );
        let (status, refused) = put_policy(
            &world,
            json!({"self_service": true, "resources": [BOOKINGS]}),
        )
        .await;
        assert_eq!(status, 400, "{refused}");
        assert!(
            refused.to_string().contains("subject_keys"),
            "{backend:?}: {refused}"
        );
        // Off is fine to store; the page does not exist in this deployment.
        let (status, _) = put_policy(&world, json!({"self_service": false})).await;
        assert_eq!(status, 200);
        let browser = signed_in(&world, &world.user, PASSWORD).await;
        assert_eq!(browser.get(PAGE).await.status, 404);
        let account = browser.get("/auth/account").await;
        assert!(!account.body.contains(PAGE), "{}", account.body);
        world.shutdown().await;

        let world = subject_keys_world(backend).await;
        setup(&world).await;
        for (body, member) in [
            (json!({"self_service": true}), "resources"),
            (json!({"self_service": false, "agents": true}), "agents"),
            (
                json!({"self_service": true, "resources": ["https://nowhere.example"]}),
                "resources",
            ),
            (
                json!({"self_service": true, "resources": [BOOKINGS, BOOKINGS]}),
                "resources",
            ),
            (
                json!({"self_service": true, "resources": [BOOKINGS], "max_per_person": 0}),
                "max_per_person",
            ),
            (
                json!({"self_service": true, "resources": [BOOKINGS], "max_per_person": 21}),
                "max_per_person",
            ),
            (
                json!({"self_service": true, "resources": [BOOKINGS], "max_lifetime_days": 366}),
                "max_lifetime_days",
            ),
            (
                json!({"self_service": true, "resources": [BOOKINGS], "max_lifetime_days": 0}),
                "max_lifetime_days",
            ),
        ] {
            let (status, refused) = put_policy(&world, body.clone()).await;
            assert_eq!(status, 400, "{backend:?} {body}: {refused}");
            assert!(refused.to_string().contains(member), "{body}: {refused}");
        }
        for hostile in [
            json!({"self_service": true, "resources": [BOOKINGS], "admin": true}),
            json!({"self_service": "yes"}),
            json!([]),
        ] {
            let (status, _) = put_policy(&world, hostile.clone()).await;
            assert_eq!(status, 400, "{hostile}");
        }
        // Nothing of the refusals was stored.
        let unchanged: Value = world
            .api(Method::GET, "/api/v1/api-key-policy")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(unchanged["self_service"], false, "{unchanged}");
        let (status, set) = put_policy(
            &world,
            json!({"self_service": true, "resources": [BOOKINGS, HOTELS],
                   "max_per_person": 3, "max_lifetime_days": 30}),
        )
        .await;
        assert_eq!(status, 200, "{set}");
        assert_eq!(
            set,
            json!({"self_service": true, "resources": [BOOKINGS, HOTELS], "max_per_person": 3,
                   "max_lifetime_days": 30, "agents": false})
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_person_creates_uses_and_revokes_their_own_keys() {
    for backend in BACKENDS {
        let world = subject_keys_world(backend).await;
        let server = setup(&world).await;
        let ada = ada_id(&world).await;
        give_role(&world, &ada).await;
        let bookings = resource_id(&world, BOOKINGS).await;
        let hotels = resource_id(&world, HOTELS).await;
        let browser = signed_in(&world, &world.user, PASSWORD).await;

        // Off until the tenant turns it on.
        assert_eq!(browser.get(PAGE).await.status, 404, "{backend:?}");
        let (status, _) = put_policy(
            &world,
            json!({"self_service": true, "resources": [BOOKINGS], "max_per_person": 2,
                   "max_lifetime_days": 30}),
        )
        .await;
        assert_eq!(status, 200);
        let account = browser.get("/auth/account").await;
        assert!(account.body.contains(PAGE), "{}", account.body);
        let shown = browser.get(PAGE).await;
        assert_eq!(shown.status, 200, "{}", shown.body);
        shown.assert_secure(PAGE);
        // Only what ada holds, at the API the policy names.
        assert!(
            shown.body.contains("value=\"bookings:read\""),
            "{}",
            shown.body
        );
        assert!(
            !shown.body.contains("value=\"bookings:write\""),
            "{}",
            shown.body
        );
        assert!(!shown.body.contains(&hotels), "{}", shown.body);
        assert!(
            shown.body.contains("You have no API keys."),
            "{}",
            shown.body
        );

        // Created, shown once, acting as ada at the API.
        let created = create(
            &browser,
            &bookings,
            "laptop script",
            &["bookings:read"],
            "7",
        )
        .await;
        assert_eq!(created.status, 200, "{}", created.body);
        created.assert_secure("the new key");
        let key = shown_key(&created.body);
        let seen = introspect(&world, &server, &key).await;
        assert_eq!(seen["active"], true, "{seen}");
        assert_eq!(seen["sub"], ada, "{seen}");
        assert_eq!(seen["aud"], BOOKINGS, "{seen}");
        assert_eq!(seen["scope"], "bookings:read", "{seen}");
        let listed = browser.get(PAGE).await;
        assert!(listed.body.contains("laptop script"), "{}", listed.body);
        assert!(!listed.body.contains(&key), "the key is shown once only");
        let keys = admin_keys(&world).await;
        assert_eq!(keys.len(), 1, "{keys:?}");
        assert_eq!(keys[0]["created_by"], format!("user:{ada}"));
        assert_eq!(keys[0]["subject"], ada);
        let at = |member: &str| {
            time::OffsetDateTime::parse(
                keys[0][member].as_str().unwrap(),
                &time::format_description::well_known::Rfc3339,
            )
            .unwrap()
        };
        assert_eq!(at("expires_at") - at("created_at"), time::Duration::days(7));

        // Refused, each with the page again and nothing stored.
        for (resource, permissions, days, name, status, why) in [
            (
                &bookings,
                vec!["bookings:write"],
                "7",
                "more",
                400,
                "not a permission you hold",
            ),
            (
                &hotels,
                vec!["hotels:read"],
                "7",
                "hotels",
                400,
                "is not an API this tenant offers",
            ),
            (
                &bookings,
                vec!["bookings:read"],
                "31",
                "long",
                400,
                "must be 1 to 30 days",
            ),
            (
                &bookings,
                vec!["bookings:read"],
                "0",
                "zero",
                400,
                "must be 1 to 30 days",
            ),
            (
                &bookings,
                vec!["bookings:read"],
                "soon",
                "nan",
                400,
                "must be 1 to 30 days",
            ),
            (
                &bookings,
                vec![],
                "7",
                "none",
                400,
                "choose 1 to 50 permissions",
            ),
            (
                &bookings,
                vec!["bookings:read"],
                "7",
                "   ",
                400,
                "must be 1 to 100 characters",
            ),
        ] {
            let refused = create(&browser, resource, name, &permissions, days).await;
            assert_eq!(
                refused.status, status,
                "{backend:?} {why}: {}",
                refused.body
            );
            assert!(refused.body.contains(why), "{why}: {}", refused.body);
            assert!(!refused.body.contains("value=\"svck_"), "{why}");
        }
        let without_csrf = browser
            .post(
                PAGE,
                &[
                    ("action", "create"),
                    ("resource", &bookings),
                    ("name", "x"),
                    ("permission", "bookings:read"),
                    ("days", "7"),
                ],
            )
            .await;
        assert_eq!(without_csrf.status, 403);
        let csrf = browser.get(PAGE).await.field("csrf").unwrap();
        let repeated = browser
            .post(
                PAGE,
                &[
                    ("csrf", &csrf),
                    ("action", "create"),
                    ("resource", &bookings),
                    ("name", "x"),
                    ("name", "y"),
                    ("permission", "bookings:read"),
                    ("days", "7"),
                ],
            )
            .await;
        assert_eq!(repeated.status, 400);
        assert_eq!(admin_keys(&world).await.len(), 1, "a refusal stored a key");

        // A hostile name is shown escaped; the second key reaches the limit of two.
        let second = create(&browser, &bookings, XSS, &["bookings:read"], "30").await;
        assert_eq!(second.status, 200, "{}", second.body);
        let second_key = shown_key(&second.body);
        let listed = browser.get(PAGE).await;
        assert!(!listed.body.contains("<script>alert(2)"), "{}", listed.body);
        assert!(
            listed.body.contains("as many keys as this service allows"),
            "{}",
            listed.body
        );
        let over = create(&browser, &bookings, "third", &["bookings:read"], "7").await;
        assert_eq!(over.status, 409, "{}", over.body);

        // Another person's key (an administrator's for grace) is not ada's to revoke.
        world.create_user("grace@example.com", PASSWORD).await;
        let grace: Value = world
            .api(Method::GET, "/api/v1/tenant-users?email=grace@example.com")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let grace = grace["items"][0]["id"].as_str().unwrap().to_owned();
        give_role(&world, &grace).await;
        let graces: Value = world
            .api(Method::POST, "/api/v1/api-keys")
            .json(&json!({"name": "grace's", "scopes": ["bookings:read"],
                          "subject": grace, "resource": BOOKINGS}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let graces_id = graces["id"].as_str().unwrap().to_owned();
        let csrf = browser.get(PAGE).await.field("csrf").unwrap();
        let theirs = browser
            .post(
                PAGE,
                &[("csrf", &csrf), ("action", "revoke"), ("key", &graces_id)],
            )
            .await;
        assert_eq!(theirs.status, 303);
        assert_eq!(theirs.location().as_deref(), Some(PAGE));
        let still = introspect(&world, &server, graces["key"].as_str().unwrap()).await;
        assert_eq!(still["active"], true, "{still}");

        // Ada revokes her first key: at once inactive; the other still works.
        let first_id = key_id_named(&world, "laptop script").await;
        let revoked = browser
            .post(
                PAGE,
                &[("csrf", &csrf), ("action", "revoke"), ("key", &first_id)],
            )
            .await;
        assert_eq!(revoked.status, 303);
        assert_eq!(revoked.location().unwrap(), format!("{PAGE}?revoked=1"));
        assert_eq!(introspect(&world, &server, &key).await["active"], false);
        assert_eq!(
            introspect(&world, &server, &second_key).await["active"],
            true
        );
        let listed = browser.get(&format!("{PAGE}?revoked=1")).await;
        assert!(
            listed.body.contains("The key was revoked."),
            "{}",
            listed.body
        );
        assert!(
            listed.body.contains("Revoked or expired"),
            "{}",
            listed.body
        );

        // The policy off: no page, no link, and the key made under it still works.
        let (status, _) = put_policy(&world, json!({"self_service": false})).await;
        assert_eq!(status, 200);
        assert_eq!(browser.get(PAGE).await.status, 404);
        assert!(!browser.get("/auth/account").await.body.contains(PAGE));
        assert_eq!(
            introspect(&world, &server, &second_key).await["active"],
            true
        );

        // Signed out: the page sends to sign-in.
        let stranger = world.browser();
        let page = stranger.get(PAGE).await;
        assert_eq!(page.status, 303);
        world.shutdown().await;
    }
}

/// `interop/browser/api_keys.mjs`: the page in Chromium with JavaScript off at 375 px — labels,
/// layout, a key made and shown once, another made and revoked from its row — and what the
/// browser's keys grant, asked of introspection here.
async fn in_chromium(backend: svc_testkit::Backend) {
    use crate::interop::{
        Prerequisite, assert_checks, chromium_path, repo_root, require_prerequisites, run_script,
    };
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
    ]);
    let world = subject_keys_world(backend).await;
    let server = setup(&world).await;
    let ada = ada_id(&world).await;
    give_role(&world, &ada).await;
    let (status, _) = put_policy(
        &world,
        json!({"self_service": true, "resources": [BOOKINGS], "max_lifetime_days": 30}),
    )
    .await;
    assert_eq!(status, 200);
    let env: Vec<(String, String)> = [
        ("ISSUER", world.issuer()),
        ("USER_EMAIL", world.user.clone()),
        ("USER_PASSWORD", PASSWORD.to_owned()),
        ("PERMISSION", "bookings:read".to_owned()),
        ("CHROMIUM_PATH", chromium_path().display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let run = run_script(
        std::path::Path::new("node"),
        &repo_root().join("interop/browser/api_keys.mjs"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("API keys page in Chromium on {backend:?}"));
    assert_checks(
        &summary,
        &[
            "account_page_links_to_keys",
            "keys_page_labels_and_375px",
            "key_shown_once_labelled",
            "listed_without_secret",
            "only_held_permissions_offered",
            "revoked_from_its_row",
        ],
    );
    let kept = introspect(&world, &server, summary["kept_key"].as_str().unwrap()).await;
    assert_eq!(kept["active"], true, "{kept}");
    assert_eq!(kept["sub"], ada, "{kept}");
    assert_eq!(kept["scope"], "bookings:read", "{kept}");
    let revoked = introspect(&world, &server, summary["revoked_key"].as_str().unwrap()).await;
    assert_eq!(revoked, json!({"active": false}));
    world.shutdown().await;
}

#[tokio::test]
async fn interop_api_keys_page_in_chromium_sqlite() {
    in_chromium(svc_testkit::Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_api_keys_page_in_chromium_postgres() {
    in_chromium(svc_testkit::Backend::Postgres).await;
}

/// Registers an agent of `owner` allowed `bookings:read` and `bookings:write` at the bookings
/// API: its id.
async fn owned_agent(world: &World, owner: &str, name: &str) -> String {
    let key = svc_crypto::SigningKey::generate(svc_domain::SigningAlg::Es256).unwrap();
    let created = world
        .api(Method::POST, "/api/v1/agents")
        .json(&json!({
            "name": name, "owner": owner, "jwks": {"keys": [key.public_jwk()]},
            "allowed_scopes": ["bookings:read", "bookings:write"],
            "allowed_resources": [BOOKINGS],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    created.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_person_makes_keys_for_the_agents_they_own() {
    for backend in BACKENDS {
        let world = subject_keys_world(backend).await;
        let server = setup(&world).await;
        let ada = ada_id(&world).await;
        give_role(&world, &ada).await;
        let bookings = resource_id(&world, BOOKINGS).await;
        let hers = owned_agent(&world, &ada, "Ada's trip planner").await;
        let the_apps = owned_agent(&world, &world.client_id, "The shop's agent").await;
        let browser = signed_in(&world, &world.user, PASSWORD).await;

        // Without `agents` in the policy, her agent is not offered and cannot be named.
        let (status, _) = put_policy(
            &world,
            json!({"self_service": true, "resources": [BOOKINGS], "max_per_person": 1}),
        )
        .await;
        assert_eq!(status, 200);
        let shown = browser.get(PAGE).await;
        assert!(
            !shown.body.contains("Ada&#39;s trip planner"),
            "{}",
            shown.body
        );
        let csrf = shown.field("csrf").unwrap();
        let refused = browser
            .post(
                PAGE,
                &[
                    ("csrf", &csrf),
                    ("action", "create"),
                    ("resource", &bookings),
                    ("agent", &hers),
                    ("name", "x"),
                    ("permission", "bookings:write"),
                    ("days", "7"),
                ],
            )
            .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(
            refused
                .body
                .contains("does not let people make keys for their agents")
        );

        let (status, _) = put_policy(
            &world,
            json!({"self_service": true, "resources": [BOOKINGS], "max_per_person": 1,
                   "agents": true}),
        )
        .await;
        assert_eq!(status, 200);
        let shown = browser.get(PAGE).await;
        assert_eq!(shown.status, 200, "{}", shown.body);
        assert!(
            shown.body.contains("Ada&#39;s trip planner"),
            "{}",
            shown.body
        );
        assert!(
            !shown.body.contains("The shop&#39;s agent"),
            "{}",
            shown.body
        );
        // The agent's form offers what the agent is allowed, not what ada's roles grant.
        assert!(
            shown.body.contains("value=\"bookings:write\""),
            "{}",
            shown.body
        );
        let csrf = shown.field("csrf").unwrap();
        let create = |agent: String, name: &'static str| {
            let csrf = csrf.clone();
            let bookings = bookings.clone();
            let browser = &browser;
            async move {
                browser
                    .post(
                        PAGE,
                        &[
                            ("csrf", &csrf),
                            ("action", "create"),
                            ("resource", &bookings),
                            ("agent", &agent),
                            ("name", name),
                            ("permission", "bookings:write"),
                            ("days", "7"),
                        ],
                    )
                    .await
            }
        };
        let created = create(hers.clone(), "planner key").await;
        assert_eq!(created.status, 200, "{}", created.body);
        let key = shown_key(&created.body);
        let seen = introspect(&world, &server, &key).await;
        assert_eq!(seen["active"], true, "{seen}");
        assert_eq!(seen["sub"], hers, "{seen}");
        assert_eq!(seen["subject_type"], "agent", "{seen}");
        assert_eq!(seen["scope"], "bookings:write", "{seen}");

        // Not an agent she owns, not an agent at all; past the agent's limit of one.
        for (agent, why) in [
            (the_apps.clone(), "is not an active agent you own"),
            ("agt_nonsense".to_owned(), "is not an active agent you own"),
        ] {
            let refused = create(agent, "stolen").await;
            assert_eq!(refused.status, 400, "{}", refused.body);
            assert!(refused.body.contains(why), "{}", refused.body);
        }
        let over = create(hers.clone(), "second").await;
        assert_eq!(over.status, 409, "{}", over.body);
        assert!(
            over.body.contains("this agent already holds"),
            "{}",
            over.body
        );

        // Listed under the agent, revoked from the page.
        let listed = browser.get(PAGE).await;
        assert!(
            listed.body.contains("Agent Ada&#39;s trip planner"),
            "{}",
            listed.body
        );
        let id = key_id_named(&world, "planner key").await;
        let revoked = browser
            .post(PAGE, &[("csrf", &csrf), ("action", "revoke"), ("key", &id)])
            .await;
        assert_eq!(revoked.location().unwrap(), format!("{PAGE}?revoked=1"));
        assert_eq!(introspect(&world, &server, &key).await["active"], false);
        world.shutdown().await;
    }
}
