//! Delegations (issue 19 item 2) over HTTP, on SQLite and PostgreSQL: a person sees what an
//! agent asks on `/auth/delegate` (signing in first when needed, and coming back to the same
//! request), allows it, and the agent then answers a challenge with `sub` = the person and gets
//! a token for them — `act` naming it and the delegation, only the permissions the person holds,
//! never outliving the delegation — verified by `svc-sdk` with its delegation policy and by
//! introspection; revoking on the account page ends it at once. Hostile requests: a person who
//! delegated nothing, another agent, more than was delegated, a suspended person, a consent
//! request beyond the agent's allowances, a POST without CSRF.

use crate::agent_challenge::{BOOKINGS, HOTELS, JWT_BEARER, claims_of, introspect, now};
use crate::hosted::support::{Browser, PASSWORD, Setup, World};
use reqwest::Method;
use serde_json::{Value, json};
use svc_crypto::SigningKey;
use svc_domain::SigningAlg;
use svc_testkit::BACKENDS;

/// The APIs, a resource server for bookings, and a role giving `bookings:read` to people who
/// hold it: `(resource server, role key)`.
pub(crate) async fn setup(world: &World) -> (String, String) {
    for (identifier, permissions) in [
        (
            BOOKINGS,
            json!([{"name": "bookings:read", "description": "See your bookings"},
                   {"name": "bookings:write", "description": "Book and cancel trips"}]),
        ),
        (
            HOTELS,
            json!([{"name": "hotels:read", "description": "See hotels"}]),
        ),
    ] {
        let created = world
            .api(Method::POST, "/api/v1/api-resources")
            .json(
                &json!({"identifier": identifier, "name": identifier, "permissions": permissions}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
    }
    let role = world
        .api(Method::POST, "/api/v1/roles")
        .json(&json!({"key": "traveller", "kind": "tenant",
                      "permissions": [{"resource": BOOKINGS, "name": "bookings:read"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(role.status(), 201);
    world
        .register_with(json!({
            "name": "Bookings API",
            "grant_types": ["client_credentials"],
            "redirect_uris": [],
            "post_logout_redirect_uris": [],
            "allowed_scopes": [],
            "api_audience": BOOKINGS,
        }))
        .await
}

/// The id of the tenant's default person (`world.user`, ada@example.com).
pub(crate) async fn ada_id(world: &World) -> String {
    world
        .api(Method::GET, "/api/v1/tenant-users?email=ada@example.com")
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub(crate) async fn give_role(world: &World, user: &str) {
    let held = world
        .api(Method::PUT, &format!("/api/v1/tenant-users/{user}/roles"))
        .json(&json!({"roles": ["traveller"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(held.status(), 200);
}

pub(crate) async fn agent(world: &World, key: &SigningKey, name: &str) -> String {
    let created = world
        .api(Method::POST, "/api/v1/agents")
        .json(&json!({
            "name": name,
            "owner": world.client_id,
            "jwks": {"keys": [key.public_jwk()]},
            "allowed_scopes": ["bookings:read", "bookings:write"],
            "allowed_resources": [BOOKINGS],
        }))
        .send()
        .await
        .unwrap();
    let body: Value = created.json().await.unwrap();
    body["id"].as_str().expect("agent").to_owned()
}

pub(crate) fn consent_path(agent: &str, scope: &str, resource: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("agent_id", agent)
        .append_pair("resource", resource)
        .append_pair("scope", scope)
        .append_pair("expires_in_days", "7")
        .finish();
    format!("/auth/delegate?{query}")
}

/// `agent`'s signed answer to a fresh challenge, naming `sub` as its subject.
pub(crate) async fn signed_answer(
    world: &World,
    key: &SigningKey,
    agent: &str,
    sub: &str,
) -> String {
    let challenge: Value = world
        .app
        .request(Method::POST, "/oauth/agent/challenge")
        .header("host", &world.host)
        .form(&[("agent_id", agent)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    key.sign_jwt(
        "JWT",
        &json!({"iss": agent, "sub": sub, "aud": world.issuer(), "exp": now() + 60,
                "iat": now(), "nonce": challenge["challenge"]}),
    )
    .unwrap()
}

/// The agent's token for `sub`, answering a fresh challenge: status and body.
pub(crate) async fn token_for(
    world: &World,
    key: &SigningKey,
    agent: &str,
    sub: &str,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    let assertion = signed_answer(world, key, agent, sub).await;
    let mut form = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion.as_str()),
    ];
    form.extend_from_slice(extra);
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .form(&form)
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

/// The token verified as a resource server would with `svc-sdk`: the published keys, the API's
/// audience, and a delegation policy trusting `agent` (rule 9).
async fn sdk_accepts(world: &World, token: &str, agent: &str, allow_delegation: bool) -> bool {
    let jwks: Value = world
        .app
        .request(Method::GET, "/.well-known/jwks.json")
        .header("host", &world.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let jwks: svc_sdk::jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks).unwrap();
    let claims = claims_of(token);
    let requirements = svc_sdk::Requirements {
        issuer: world.issuer(),
        audience: BOOKINGS.into(),
        tenant_id: claims["tenant_id"].as_str().unwrap().to_owned(),
        organization: None,
        required_scope: Some("bookings:read".into()),
        subject_types: vec![svc_sdk::SubjectType::Human],
        allow_delegation,
        max_delegation_depth: 1,
        trusted_actors: vec![agent.to_owned()],
        dpop_jkt: None,
        leeway_secs: 0,
    };
    svc_sdk::validate_with_jwks(token, &jwks, &requirements, now()).is_ok()
}

/// A browser signed in as `email`.
pub(crate) async fn signed_in(world: &World, email: &str, password: &str) -> Browser {
    let browser = world.browser();
    let signed = browser.sign_in(None, email, password).await;
    assert_eq!(signed.status, 303, "{}", signed.body);
    browser
}

pub(crate) fn assert_refused(answer: &(u16, Value), error: &str, what: &str) {
    assert_eq!(answer.0, 400, "{what}: {}", answer.1);
    assert_eq!(answer.1["error"], error, "{what}: {}", answer.1);
}

#[tokio::test]
async fn a_person_delegates_to_an_agent_which_acts_for_them_until_revoked() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                env: vec![("SVC_CHALLENGE__ENABLED", "true")],
                ..Setup::default()
            },
        )
        .await;
        let server = setup(&world).await;
        let ada = ada_id(&world).await;
        give_role(&world, &ada).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let id = agent(&world, &key, "Trip planner").await;

        // Before any delegation the agent gets nothing for Ada.
        assert_refused(
            &token_for(&world, &key, &id, &ada, &[]).await,
            "invalid_grant",
            "no delegation yet",
        );

        // Not signed in: asked to sign in, and the sign-in comes back to the same request.
        let browser = world.browser();
        let path = consent_path(&id, "bookings:read bookings:write", BOOKINGS);
        let first = browser.get(&path).await;
        assert_eq!(first.status, 200);
        assert!(first.body.contains("Sign in to decide"), "{}", first.body);
        let signed = browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(signed.status, 303, "{}", signed.body);
        assert_eq!(signed.location().as_deref(), Some(path.as_str()));

        // The consent page says who asks, what, where and until when.
        let page = browser.get(&path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        page.assert_secure("consent page");
        for shown in [
            "Trip planner",
            "See your bookings",
            "Book and cancel trips",
            BOOKINGS,
        ] {
            assert!(page.body.contains(shown), "{shown}: {}", page.body);
        }
        let granted = browser
            .submit(&path, "/auth/delegate", &[("decision", "allow")])
            .await;
        assert_eq!(granted.status, 200, "{}", granted.body);
        let delegation = granted
            .body
            .split("dlg_")
            .nth(1)
            .map(|rest| format!("dlg_{}", &rest[..26]))
            .expect("the delegation's id on the page");

        // The agent acts for Ada: her id as `sub`, itself in `act`, what she holds only.
        let (status, tokens) = token_for(&world, &key, &id, &ada, &[]).await;
        assert_eq!(status, 200, "{backend:?}: {tokens}");
        assert_eq!(
            tokens["scope"], "bookings:read",
            "bookings:write is not hers"
        );
        assert!(tokens.get("refresh_token").is_none());
        let access = tokens["access_token"].as_str().unwrap().to_owned();
        let claims = claims_of(&access);
        assert_eq!(claims["sub"], ada.as_str());
        assert_eq!(claims["subject_type"], "human");
        assert_eq!(claims["client_id"], id.as_str());
        assert_eq!(claims["aud"], BOOKINGS);
        assert_eq!(
            claims["act"],
            json!({"sub": id, "subject_type": "agent", "delegation_id": delegation})
        );
        assert!(claims["exp"].as_i64().unwrap() <= now() + 7 * 86_400);
        assert!(sdk_accepts(&world, &access, &id, true).await);
        assert!(
            !sdk_accepts(&world, &access, &id, false).await,
            "a route that allows no delegation refuses it (svc-sdk rule 9)"
        );
        let seen = introspect(&world, &server, &access).await;
        assert_eq!(seen["active"], true, "{seen}");
        assert_eq!(seen["act"]["sub"], id.as_str());

        // More than she holds, another API, another agent, another person: nothing.
        assert_refused(
            &token_for(&world, &key, &id, &ada, &[("scope", "bookings:write")]).await,
            "invalid_scope",
            "a delegated permission she does not hold",
        );
        let other_key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let other = agent(&world, &other_key, "Someone else").await;
        assert_refused(
            &token_for(&world, &other_key, &other, &ada, &[]).await,
            "invalid_grant",
            "an agent she never delegated to",
        );
        let bob = world.create_user("bob@example.com", PASSWORD).await;
        let bob = bob["id"].as_str().unwrap();
        give_role(&world, bob).await;
        assert_refused(
            &token_for(&world, &key, &id, bob, &[]).await,
            "invalid_grant",
            "a person who delegated nothing",
        );

        // Her account page lists it; revoking ends the token and the next grant at once.
        let list = browser.get("/auth/account/delegations").await;
        assert_eq!(list.status, 200);
        assert!(list.body.contains("Trip planner") && list.body.contains(&delegation));
        let revoked = browser
            .submit(
                "/auth/account/delegations",
                "/auth/account/delegations",
                &[("delegation", &delegation)],
            )
            .await;
        assert_eq!(revoked.status, 303);
        assert_eq!(
            revoked.location().as_deref(),
            Some("/auth/account/delegations?revoked=1")
        );
        assert_eq!(
            introspect(&world, &server, &access).await,
            json!({"active": false})
        );
        assert_refused(
            &token_for(&world, &key, &id, &ada, &[]).await,
            "invalid_grant",
            "revoked delegation",
        );
        // Bob cannot revoke (or see) Ada's: the same list without the alert.
        let bobs = signed_in(&world, "bob@example.com", PASSWORD).await;
        let other_revoke = bobs
            .submit(
                "/auth/account/delegations",
                "/auth/account/delegations",
                &[("delegation", &delegation)],
            )
            .await;
        assert_eq!(
            other_revoke.location().as_deref(),
            Some("/auth/account/delegations")
        );

        // Granted again.
        let again = browser
            .submit(
                &consent_path(&id, "bookings:read", BOOKINGS),
                "/auth/delegate",
                &[("decision", "allow")],
            )
            .await;
        assert_eq!(again.status, 200);
        let (status, tokens) = token_for(&world, &key, &id, &ada, &[("resource", BOOKINGS)]).await;
        assert_eq!(status, 200, "{tokens}");
        let second = claims_of(tokens["access_token"].as_str().unwrap())["act"]["delegation_id"]
            .as_str()
            .unwrap()
            .to_owned();

        // Administrators see a person's delegations and revoke them (agents:read|write).
        let listed: Value = world
            .api(
                Method::GET,
                &format!("/api/v1/delegations?user_id={ada}&agent_id={id}"),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let items = listed["items"].as_array().unwrap();
        assert_eq!(items.len(), 2, "{listed}");
        assert_eq!(items[0]["id"], second.as_str(), "newest first");
        assert_eq!(
            (items[0]["live"].as_bool(), items[1]["live"].as_bool()),
            (Some(true), Some(false))
        );
        assert_eq!(items[1]["id"], delegation.as_str());
        assert_eq!(items[0]["scopes"], json!(["bookings:read"]));
        let path = format!("/api/v1/delegations/{second}");
        for _ in 0..2 {
            let revoked = world.api(Method::DELETE, &path).send().await.unwrap();
            assert_eq!(revoked.status(), 204, "revoking again changes nothing");
        }
        let read: Value = world
            .api(Method::GET, &path)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(read["live"], false);
        assert!(read["revoked_at"].is_string());
        assert_eq!(
            introspect(&world, &server, tokens["access_token"].as_str().unwrap()).await,
            json!({"active": false})
        );
        for (method, bad) in [
            (
                Method::GET,
                "/api/v1/delegations/dlg_01jd0000000000000000000000",
            ),
            (Method::DELETE, "/api/v1/delegations/not-an-id"),
        ] {
            assert_eq!(
                world.api(method, bad).send().await.unwrap().status(),
                404,
                "{bad}"
            );
        }
        // Every person's delegations to the agent: Ada's two, nobody else's.
        let of_agent: Value = world
            .api(Method::GET, &format!("/api/v1/delegations?agent_id={id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ids: Vec<&str> = of_agent["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["id"].as_str())
            .collect();
        assert_eq!(ids, [second.as_str(), delegation.as_str()], "{of_agent}");
        for bad in [
            "/api/v1/delegations",
            "/api/v1/delegations?user_id=agt_x",
            "/api/v1/delegations?agent_id=usr_x",
        ] {
            assert_eq!(
                world.api(Method::GET, bad).send().await.unwrap().status(),
                400,
                "{bad}"
            );
        }
        let audit: Value = world
            .api(Method::GET, &format!("/api/v1/audit-logs?target={second}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["action"].as_str())
            .collect();
        assert!(
            actions.contains(&"delegation.granted") && actions.contains(&"delegation.revoked"),
            "{audit}"
        );

        // Granted a third time, then Ada suspended: her agent's token dies with her.
        let third = browser
            .submit(
                &consent_path(&id, "bookings:read", BOOKINGS),
                "/auth/delegate",
                &[("decision", "allow")],
            )
            .await;
        assert_eq!(third.status, 200);
        let (status, tokens) = token_for(&world, &key, &id, &ada, &[]).await;
        assert_eq!(status, 200, "{tokens}");
        let access = tokens["access_token"].as_str().unwrap().to_owned();
        let suspended = world
            .api(Method::POST, &format!("/api/v1/tenant-users/{ada}/suspend"))
            .send()
            .await
            .unwrap();
        assert_eq!(suspended.status(), 200);
        assert_eq!(introspect(&world, &server, &access).await["active"], false);
        assert_refused(
            &token_for(&world, &key, &id, &ada, &[]).await,
            "invalid_grant",
            "a suspended person",
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn consent_requests_beyond_the_agent_are_refused_and_forms_need_csrf() {
    let world = World::new(
        svc_testkit::Backend::Sqlite,
        Setup {
            env: vec![("SVC_CHALLENGE__ENABLED", "true")],
            ..Setup::default()
        },
    )
    .await;
    setup(&world).await;
    let key = SigningKey::generate(SigningAlg::Es256).unwrap();
    let id = agent(&world, &key, "Trip planner").await;
    let browser = signed_in(&world, &world.user, PASSWORD).await;
    let management = format!("{}/api/v1", world.issuer());
    for (path, why) in [
        (consent_path(&id, "hotels:read", HOTELS), "may not act at"),
        (
            consent_path(&id, "bookings:read", "https://unknown.example"),
            "may not act at",
        ),
        (
            consent_path(&id, "users:write", &management),
            "may not act at",
        ),
        (
            consent_path(&id, "bookings:delete", BOOKINGS),
            "permission bookings:delete",
        ),
        (
            consent_path("agt_01jd0000000000000000000000", "bookings:read", BOOKINGS),
            "does not exist",
        ),
        (
            "/auth/delegate?agent_id=nope&scope=a&resource=b".into(),
            "agent_id",
        ),
        (
            format!(
                "{}&expires_in_days=999",
                consent_path(&id, "bookings:read", BOOKINGS)
            )
            .replace("expires_in_days=7&", ""),
            "expires_in_days",
        ),
        // Approval of each use rides on CIBA, which is off here (ADR 0011).
        (
            format!(
                "{}&approval=each_use",
                consent_path(&id, "bookings:read", BOOKINGS)
            ),
            "does not offer",
        ),
        (
            format!(
                "{}&approval=sometimes",
                consent_path(&id, "bookings:read", BOOKINGS)
            ),
            "approval",
        ),
    ] {
        let page = browser.get(&path).await;
        assert_eq!(page.status, 400, "{path}: {}", page.body);
        assert!(page.body.contains(why), "{path}: {}", page.body);
        assert!(!page.body.contains("name=\"decision\""), "{path}: no form");
    }
    // A POST without the page's CSRF token grants nothing.
    let forged = browser
        .post(
            "/auth/delegate",
            &[
                ("agent_id", id.as_str()),
                ("resource", BOOKINGS),
                ("scope", "bookings:read"),
                ("decision", "allow"),
            ],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    let plain = browser
        .get(&consent_path(&id, "bookings:read", BOOKINGS))
        .await;
    assert_eq!(plain.status, 200);
    assert!(!plain.body.contains("each time"), "no choice without CIBA");
    // RAR is off here: no details in a consent request, no detail types on an agent.
    let details = url::form_urlencoded::byte_serialize(br#"[{"type":"trip"}]"#).collect::<String>();
    let page = browser
        .get(&format!(
            "{}&authorization_details={details}",
            consent_path(&id, "bookings:read", BOOKINGS)
        ))
        .await;
    assert_eq!(page.status, 400);
    assert!(page.body.contains("switched off"), "{}", page.body);
    let refused = world
        .api(Method::POST, "/api/v1/agents")
        .json(&json!({"name": "Typed", "owner": world.client_id,
            "jwks": {"keys": [key.public_jwk()]},
            "authorization_details_types": [{"type": "trip", "description": "Trips",
                                             "schema": {"type": "object"}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body.to_string().contains("authorization_details_types"),
        "{body}"
    );
    let list = browser.get("/auth/account/delegations").await;
    assert!(list.body.contains("not let any agent"), "{}", list.body);
    world.shutdown().await;
}

#[tokio::test]
async fn without_challenge_response_the_pages_do_not_exist() {
    let world = World::new(svc_testkit::Backend::Sqlite, Setup::default()).await;
    let browser = signed_in(&world, &world.user, PASSWORD).await;
    for path in ["/auth/delegate?agent_id=x", "/auth/account/delegations"] {
        assert_eq!(browser.get(path).await.status, 404, "{path}");
    }
    let account = browser.get("/auth/account").await;
    assert!(!account.body.contains("/auth/account/delegations"));
    world.shutdown().await;
}
