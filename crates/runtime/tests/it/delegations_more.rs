//! Delegations beyond the basics (issue 19 item 2) over HTTP, on SQLite and PostgreSQL.
//!
//! Per-use approval: a
//! person lets an agent act for them but asks to approve each use (the agent asks for it with
//! `approval=each_use`, or the person ticks it); the agent grant then refuses and points to
//! `/bc-authorize`; the agent starts a backchannel request authenticated by its key; the person
//! sees the agent, the API and the permissions on the CIBA API and page and approves or denies;
//! the agent polls with a fresh assertion each time and gets one token for the person, `act`
//! naming it and the delegation. Hostile cases: a spent challenge at the start and at a poll,
//! another agent's and an application's poll of the reference, a second redemption, a person
//! who delegated nothing, `openid` or RAR details in the start, an email as hint, a delegation
//! revoked after the approval. (`approval=each_use` where CIBA is off:
//! `delegations::consent_requests_beyond_the_agent_are_refused_and_forms_need_csrf`.)
//!
//! RAR details (RFC 9396) in delegations: an agent registered with detail types asks a person
//! for details on the consent page, which shows them in words; the delegation keeps them; the
//! agent's tokens for the person carry them whole or narrowed, never widened; a per-use approval
//! shows them again and its token carries them. Hostile: an unregistered type, malformed JSON,
//! a widening token request, details on an agent's own token of a type it did not register.

use crate::agent_challenge::{BOOKINGS, claims_of, introspect};
use crate::delegations::{
    ada_id, agent, assert_refused, consent_path, give_role, setup, signed_answer, signed_in,
    token_for,
};
use crate::hosted::support::{Browser, PASSWORD, Setup, World};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use svc_crypto::SigningKey;
use svc_domain::SigningAlg;
use svc_testkit::BACKENDS;

const CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const CIBA: &str = "urn:openid:params:grant-type:ciba";
const REQUESTS: &str = "/api/v1/identity/ciba/requests";

/// `agent`'s signed answer to a fresh challenge, naming itself as `iss` and `sub`.
async fn assertion(world: &World, key: &SigningKey, agent: &str) -> String {
    signed_answer(world, key, agent, agent).await
}

/// POSTs `form` to `path` with `assertion` as the client assertion: status and body.
async fn post(world: &World, path: &str, assertion: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let mut all = vec![
        ("client_assertion_type", CLIENT_ASSERTION),
        ("client_assertion", assertion),
    ];
    all.extend_from_slice(form);
    let response = world
        .app
        .request(Method::POST, path)
        .header("host", &world.host)
        .form(&all)
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

/// The agent starts a request for `person` with a fresh assertion and `extra`.
async fn start(
    world: &World,
    key: &SigningKey,
    agent: &str,
    person: &str,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    let signed = assertion(world, key, agent).await;
    let mut form = vec![("login_hint", person), ("resource", BOOKINGS)];
    form.extend_from_slice(extra);
    post(world, "/bc-authorize", &signed, &form).await
}

/// The agent polls `auth_req_id` with a fresh assertion.
async fn poll(world: &World, key: &SigningKey, agent: &str, auth_req_id: &str) -> (u16, Value) {
    let signed = assertion(world, key, agent).await;
    post(
        world,
        "/oauth/token",
        &signed,
        &[("grant_type", CIBA), ("auth_req_id", auth_req_id)],
    )
    .await
}

/// The person's pending requests through the identity API.
async fn pending(browser: &Browser) -> Vec<Value> {
    let response = browser.request(Method::GET, REQUESTS).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["requests"].as_array().unwrap().clone()
}

/// The person decides the request `id` through the identity API.
async fn decide(world: &World, browser: &Browser, id: &str, decision: &str) {
    let response = browser
        .request(Method::POST, &format!("{REQUESTS}/{id}/{decision}"))
        .header("origin", world.issuer())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{decision}");
}

/// The agent starts a request for `person`, who answers `decision` through the identity API
/// (as the first of their pending requests): its `auth_req_id`.
async fn answered(
    world: &World,
    browser: &Browser,
    key: &SigningKey,
    agent: &str,
    person: &str,
    decision: &str,
) -> String {
    let (status, started) = start(world, key, agent, person, &[]).await;
    assert_eq!(status, 200, "{started}");
    let listed = pending(browser).await;
    decide(world, browser, listed[0]["id"].as_str().unwrap(), decision).await;
    started["auth_req_id"].as_str().unwrap().to_owned()
}

/// The mail telling the default person an agent asks to act for them (waiting for it).
async fn agent_mail(world: &World) -> Value {
    for _ in 0..200 {
        let found = world
            .mails_to(&world.user, 1)
            .await
            .into_iter()
            .find(|m| m["subject"] == "Approve an agent acting for you");
        if let Some(mail) = found {
            return mail;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no mail about the agent's request");
}

/// The id of the delegation a consent page granted.
fn granted_id(page: &crate::hosted::support::Page) -> String {
    assert_eq!(page.status, 200, "{}", page.body);
    page.body
        .split("dlg_")
        .nth(1)
        .map(|rest| format!("dlg_{}", &rest[..26]))
        .expect("the delegation's id on the page")
}

async fn delegation(world: &World, id: &str) -> Value {
    world
        .api(Method::GET, &format!("/api/v1/delegations/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn world_setup() -> Setup {
    Setup {
        env: vec![
            ("SVC_CHALLENGE__ENABLED", "true"),
            ("SVC_CIBA__ENABLED", "true"),
            ("SVC_CIBA__INTERVAL_SECS", "1"),
            ("SVC_OIDC__AUTHORIZATION_DETAILS", "true"),
        ],
        ..Setup::default()
    }
}

#[tokio::test]
async fn each_use_of_a_delegation_is_approved_by_the_person_through_ciba() {
    for backend in BACKENDS {
        let world = World::new(backend, world_setup()).await;
        let server = setup(&world).await;
        let ada = ada_id(&world).await;
        give_role(&world, &ada).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let id = agent(&world, &key, "Trip planner").await;

        // The agent asks for approval of each use: the page says so and it binds.
        let browser = signed_in(&world, &world.user, PASSWORD).await;
        let path = format!(
            "{}&approval=each_use",
            consent_path(&id, "bookings:read", BOOKINGS)
        );
        let page = browser.get(&path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(
            page.body
                .contains("You will be asked to approve each time it acts for you."),
            "{}",
            page.body
        );
        let dlg = granted_id(
            &browser
                .submit(&path, "/auth/delegate", &[("decision", "allow")])
                .await,
        );
        assert_eq!(delegation(&world, &dlg).await["per_use_approval"], true);

        // The agent grant refuses and says where to go.
        let refused = token_for(&world, &key, &id, &ada, &[]).await;
        assert_refused(&refused, "invalid_grant", "a per-use delegation");
        assert!(
            refused.1["error_description"]
                .as_str()
                .unwrap()
                .contains("/bc-authorize"),
            "{}",
            refused.1
        );

        // Hostile starts: nothing is stored for any of them.
        let bob = world.create_user("bob@example.com", PASSWORD).await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        give_role(&world, &bob).await;
        let (status, body) = start(&world, &key, &id, &bob, &[]).await;
        assert_eq!(body["error"], "access_denied", "{status} {body}");
        let (status, body) = start(&world, &key, &id, "ada@example.com", &[]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request"))
        );
        let (status, body) = start(&world, &key, &id, &ada, &[("scope", "openid")]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_scope"))
        );
        let details = r#"[{"type":"booking"}]"#;
        let (status, body) = start(
            &world,
            &key,
            &id,
            &ada,
            &[("authorization_details", details)],
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request"))
        );
        let (status, body) = start(&world, &key, &id, &ada, &[("scope", "bookings:write")]).await;
        assert_eq!(
            body["error"], "access_denied",
            "beyond the delegation: {status} {body}"
        );

        // A start answered with a spent challenge is refused as client authentication.
        let signed = assertion(&world, &key, &id).await;
        let form = [
            ("login_hint", ada.as_str()),
            ("resource", BOOKINGS),
            ("binding_message", "TRIP-42"),
        ];
        let (status, started) = post(&world, "/bc-authorize", &signed, &form).await;
        assert_eq!(status, 200, "{started}");
        assert_eq!(started["interval"], 1);
        let auth_req_id = started["auth_req_id"].as_str().unwrap().to_owned();
        assert!(auth_req_id.starts_with("ar_"), "{auth_req_id}");
        let (status, body) = post(&world, "/bc-authorize", &signed, &form).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("invalid_client"))
        );

        // Pending; a replayed poll, another agent and an application find nothing.
        let (status, body) = poll(&world, &key, &id, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending"))
        );
        let other_key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let other = agent(&world, &other_key, "Someone else").await;
        let (status, body) = poll(&world, &other_key, &other, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );
        let app = crate::ciba::ciba_client(&world).await;
        let (status, body) = crate::ciba::poll(&world, &app, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );

        // Ada is mailed a link to the approval page, naming the agent.
        let mail = agent_mail(&world).await;
        let text = mail["text"].as_str().unwrap();
        assert!(
            text.contains("Trip planner") && text.contains("TRIP-42"),
            "{mail}"
        );
        assert!(text.contains("/auth/ciba"), "{mail}");

        // Ada sees the agent, the API and the permission in words, on the API and the page.
        let listed = pending(&browser).await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        let request = &listed[0];
        assert_eq!(request["client_name"], "Trip planner");
        assert_eq!(request["binding_message"], "TRIP-42");
        assert_eq!(request["scopes"], json!(["bookings:read"]));
        assert_eq!(request["agent"]["agent_id"], id.as_str());
        assert_eq!(request["agent"]["delegation_id"], dlg.as_str());
        assert_eq!(request["agent"]["resource"], BOOKINGS);
        assert_eq!(
            request["agent"]["permissions"],
            json!([{"name": "bookings:read", "description": "See your bookings"}])
        );
        let page = browser.get("/auth/ciba").await;
        for shown in [
            "Trip planner",
            "an agent you let act for you",
            "See your bookings",
            "TRIP-42",
        ] {
            assert!(page.body.contains(shown), "{shown}: {}", page.body);
        }
        // Bob does not see it.
        let bobs = signed_in(&world, "bob@example.com", PASSWORD).await;
        assert!(pending(&bobs).await.is_empty());

        decide(&world, &browser, request["id"].as_str().unwrap(), "approve").await;
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, tokens) = poll(&world, &key, &id, &auth_req_id).await;
        assert_eq!(status, 200, "{backend:?}: {tokens}");
        assert_eq!(tokens["scope"], "bookings:read");
        assert!(tokens.get("refresh_token").is_none(), "{tokens}");
        let access = tokens["access_token"].as_str().unwrap();
        let claims = claims_of(access);
        assert_eq!(claims["sub"], ada.as_str());
        assert_eq!(claims["subject_type"], "human");
        assert_eq!(claims["client_id"], id.as_str());
        assert_eq!(claims["aud"], BOOKINGS);
        assert_eq!(
            claims["act"],
            json!({"sub": id, "subject_type": "agent", "delegation_id": dlg})
        );
        assert_eq!(introspect(&world, &server, access).await["active"], true);
        // Once: the approval was for one use.
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, body) = poll(&world, &key, &id, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );

        // Denied: access_denied.
        let denied = answered(&world, &browser, &key, &id, &ada, "deny").await;
        let (status, body) = poll(&world, &key, &id, &denied).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("access_denied"))
        );

        // Approved, then the delegation is revoked before the agent polls: nothing.
        let late = answered(&world, &browser, &key, &id, &ada, "approve").await;
        let revoked = world
            .api(Method::DELETE, &format!("/api/v1/delegations/{dlg}"))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        let (status, body) = poll(&world, &key, &id, &late).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );

        // The person may choose approval of each use herself; a standing delegation beside it
        // is what the agent grant uses.
        let plain = consent_path(&id, "bookings:read", BOOKINGS);
        let page = browser.get(&plain).await;
        assert!(
            page.body
                .contains("Ask me to approve each time it acts for me"),
            "{}",
            page.body
        );
        let chosen = granted_id(
            &browser
                .submit(
                    &plain,
                    "/auth/delegate",
                    &[("decision", "allow"), ("each_use", "yes")],
                )
                .await,
        );
        assert_eq!(delegation(&world, &chosen).await["per_use_approval"], true);
        assert_refused(
            &token_for(&world, &key, &id, &ada, &[]).await,
            "invalid_grant",
            "only a per-use delegation",
        );
        let standing = granted_id(
            &browser
                .submit(&plain, "/auth/delegate", &[("decision", "allow")])
                .await,
        );
        assert_eq!(
            delegation(&world, &standing).await["per_use_approval"],
            false
        );
        let (status, tokens) = token_for(&world, &key, &id, &ada, &[]).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(
            claims_of(tokens["access_token"].as_str().unwrap())["act"]["delegation_id"],
            standing.as_str()
        );
        let list = browser.get("/auth/account/delegations").await;
        assert!(list.body.contains("approved each time"), "{}", list.body);
        world.shutdown().await;
    }
}

const TRIPS: &str = r#"[{"type":"trip_booking","max_price":500,"cities":["Paris","Rome"]}]"#;

/// An agent allowed bookings that registered the `trip_booking` detail type.
async fn agent_with_details(world: &World, key: &SigningKey) -> String {
    let created = world
        .api(Method::POST, "/api/v1/agents")
        .json(&json!({
            "name": "Trip planner",
            "owner": world.client_id,
            "jwks": {"keys": [key.public_jwk()]},
            "allowed_scopes": ["bookings:read", "bookings:write"],
            "allowed_resources": [BOOKINGS],
            "authorization_details_types": [{
                "type": "trip_booking",
                "description": "Book trips for you",
                "schema": {"type": "object", "required": ["type", "max_price"],
                    "properties": {"type": {"const": "trip_booking"},
                        "max_price": {"type": "number", "title": "Up to"},
                        "cities": {"type": "array", "items": {"type": "string"},
                                   "title": "Cities"}}}
            }],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let body: Value = created.json().await.unwrap();
    assert_eq!(
        body["authorization_details_types"][0]["type"], "trip_booking",
        "{body}"
    );
    body["id"].as_str().unwrap().to_owned()
}

fn with_details(path: &str, details: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(details.as_bytes()).collect();
    format!("{path}&authorization_details={encoded}")
}

#[tokio::test]
async fn delegations_carry_rar_details_into_the_agents_tokens() {
    for backend in BACKENDS {
        let world = World::new(backend, world_setup()).await;
        setup(&world).await;
        let ada = ada_id(&world).await;
        give_role(&world, &ada).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let id = agent_with_details(&world, &key).await;
        let browser = signed_in(&world, &world.user, PASSWORD).await;
        let plain = consent_path(&id, "bookings:read", BOOKINGS);

        // Hostile consent requests: an unregistered type, malformed JSON.
        for bad in [
            r#"[{"type":"wire_transfer"}]"#,
            "[{",
            r#"[{"type":"trip_booking"}]"#,
        ] {
            let page = browser.get(&with_details(&plain, bad)).await;
            assert_eq!(page.status, 400, "{bad}: {}", page.body);
            assert!(page.body.contains("not valid"), "{bad}: {}", page.body);
        }

        // The page shows the details in words; the delegation keeps them.
        let path = with_details(&plain, TRIPS);
        let page = browser.get(&path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        for shown in ["Book trips for you", "Up to", "500", "Paris, Rome"] {
            assert!(page.body.contains(shown), "{shown}: {}", page.body);
        }
        let dlg = granted_id(
            &browser
                .submit(&path, "/auth/delegate", &[("decision", "allow")])
                .await,
        );
        let trips: Value = serde_json::from_str(TRIPS).unwrap();
        assert_eq!(
            delegation(&world, &dlg).await["authorization_details"],
            trips
        );

        // The agent's token for Ada carries them, whole or narrowed, never widened.
        let (status, tokens) = token_for(&world, &key, &id, &ada, &[]).await;
        assert_eq!(status, 200, "{backend:?}: {tokens}");
        assert_eq!(tokens["authorization_details"], trips);
        let claims = claims_of(tokens["access_token"].as_str().unwrap());
        assert_eq!(claims["authorization_details"], trips);
        let paris = r#"[{"type":"trip_booking","max_price":500,"cities":["Paris"]}]"#;
        let (status, tokens) =
            token_for(&world, &key, &id, &ada, &[("authorization_details", paris)]).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(
            claims_of(tokens["access_token"].as_str().unwrap())["authorization_details"],
            serde_json::from_str::<Value>(paris).unwrap()
        );
        for wider in [
            r#"[{"type":"trip_booking","max_price":500,"cities":["Paris","Berlin"]}]"#,
            r#"[{"type":"trip_booking","max_price":900,"cities":["Paris"]}]"#,
        ] {
            assert_refused(
                &token_for(&world, &key, &id, &ada, &[("authorization_details", wider)]).await,
                "invalid_authorization_details",
                wider,
            );
        }

        // For itself, the agent asks for details of its own types only.
        let (status, own) =
            token_for(&world, &key, &id, &id, &[("authorization_details", paris)]).await;
        assert_eq!(status, 200, "{own}");
        assert_eq!(
            own["authorization_details"],
            serde_json::from_str::<Value>(paris).unwrap()
        );
        assert_refused(
            &token_for(
                &world,
                &key,
                &id,
                &id,
                &[("authorization_details", r#"[{"type":"wire_transfer"}]"#)],
            )
            .await,
            "invalid_authorization_details",
            "a type it did not register",
        );

        // Approved each use: the person sees the details again, and the token carries them.
        let per_use = with_details(&format!("{plain}&approval=each_use"), TRIPS);
        granted_id(
            &browser
                .submit(&per_use, "/auth/delegate", &[("decision", "allow")])
                .await,
        );
        let (status, started) = start(&world, &key, &id, &ada, &[]).await;
        assert_eq!(status, 200, "{started}");
        let listed = pending(&browser).await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["authorization_details"], trips);
        assert_eq!(listed[0]["details"][0]["description"], "Book trips for you");
        let page = browser.get("/auth/ciba").await;
        assert!(page.body.contains("Paris, Rome"), "{}", page.body);
        decide(
            &world,
            &browser,
            listed[0]["id"].as_str().unwrap(),
            "approve",
        )
        .await;
        let (status, tokens) =
            poll(&world, &key, &id, started["auth_req_id"].as_str().unwrap()).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["authorization_details"], trips);
        world.shutdown().await;
    }
}
