//! An agent as the actor of a token exchange (RFC 8693; issue 19 item 4 with items 1–3), on
//! SQLite and PostgreSQL: the gateway, which owns the agent, presents the clerk's token as the
//! subject and the agent's own token (from challenge-response) as the actor token; the clerk
//! delegated `orders:read` at the orders API to the agent on the hosted consent page. The
//! agent's signed assertion answering a challenge may stand in for its token. The
//! exchanged token is the clerk's at the orders API with the delegation's permissions only,
//! `act` naming the agent and the delegation; `svc-sdk` accepts it where the route trusts the
//! agent, introspection describes it until the delegation is revoked. Refused, each named: an
//! agent the gateway does not own, a permission the delegation does not cover, an API the
//! agent may not reach, and any exchange once the delegation is gone. With RAR on, the
//! exchanged token carries the delegation's details, or fewer when the request narrows them;
//! wider details, and details on an exchange that is not through a delegation, are refused.

use crate::agent_challenge::{JWT_BEARER, challenge, introspect, now};
use crate::hosted::support::{PASSWORD, World};
use crate::token_exchange::{
    ACCESS_TOKEN, CLERK, Fixture, GATEWAY_API, ORDERS_API, claims_of, exchange, fixture, form,
    jwks, service, subject,
};
use reqwest::Method;
use serde_json::{Value, json};
use svc_crypto::SigningKey;
use svc_domain::SigningAlg;
use svc_testkit::BACKENDS;

/// `actor_token_type` of an agent's signed assertion (RFC 8693 §3).
const JWT: &str = "urn:ietf:params:oauth:token-type:jwt";

/// An agent owned by `owner`, allowed the orders API's two permissions there.
async fn agent(world: &World, key: &SigningKey, owner: &str) -> String {
    typed_agent(world, key, owner, json!([])).await
}

/// The same, registering the RAR detail `types`.
async fn typed_agent(world: &World, key: &SigningKey, owner: &str, types: Value) -> String {
    let created = world
        .api(Method::POST, "/api/v1/agents")
        .json(&json!({
            "name": "Order assistant", "owner": owner, "jwks": {"keys": [key.public_jwk()]},
            "allowed_scopes": ["orders:read", "orders:write"], "allowed_resources": [ORDERS_API],
            "authorization_details_types": types,
        }))
        .send()
        .await
        .unwrap();
    let body: Value = created.json().await.unwrap();
    body["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned()
}

/// The agent's signed answer to a fresh challenge, naming `sub`.
async fn assertion(world: &World, key: &SigningKey, agent: &str, sub: &str) -> String {
    let nonce = challenge(world, agent).await;
    key.sign_jwt(
        "JWT",
        &json!({"iss": agent, "sub": sub, "aud": world.issuer(), "exp": now() + 60,
                "iat": now(), "nonce": nonce}),
    )
    .unwrap()
}

/// The agent's own access token, answering a challenge.
async fn agent_token(world: &World, key: &SigningKey, agent: &str) -> String {
    let assertion = assertion(world, key, agent, agent).await;
    let answer: Value = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .form(&[
            ("grant_type", JWT_BEARER),
            ("assertion", assertion.as_str()),
            ("resource", ORDERS_API),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_owned()
}

/// The clerk allows `agent` `scope` at the orders API on the consent page; the delegation's id.
async fn delegate(world: &World, agent: &str, scope: &str) -> String {
    delegate_with(world, agent, scope, None).await
}

/// The same, with RAR `details` when given.
async fn delegate_with(world: &World, agent: &str, scope: &str, details: Option<&str>) -> String {
    let browser = world.browser();
    let signed = browser.sign_in(None, CLERK, PASSWORD).await;
    assert_eq!(signed.status, 303, "{}", signed.body);
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("agent_id", agent)
        .append_pair("resource", ORDERS_API)
        .append_pair("scope", scope)
        .append_pair("expires_in_days", "7");
    if let Some(details) = details {
        query.append_pair("authorization_details", details);
    }
    let query = query.finish();
    let path = format!("/auth/delegate?{query}");
    let granted = browser
        .submit(&path, "/auth/delegate", &[("decision", "allow")])
        .await;
    assert_eq!(granted.status, 200, "{}", granted.body);
    granted
        .body
        .split("dlg_")
        .nth(1)
        .map(|rest| format!("dlg_{}", &rest[..26]))
        .expect("the delegation's id on the page")
}

fn assert_refused(answer: &(u16, Value), error: &str, what: &str) {
    assert_eq!(answer.0, 400, "{what}: {}", answer.1);
    assert_eq!(answer.1["error"], error, "{what}: {}", answer.1);
}

#[tokio::test]
async fn a_gateway_lets_its_agent_act_for_a_person_on_their_delegation() {
    for backend in BACKENDS {
        let Fixture {
            world,
            gateway,
            person,
            clerk,
        } = fixture(backend, vec![("SVC_CHALLENGE__ENABLED", "true")]).await;
        let orders = service(&world, "Orders", Some(ORDERS_API)).await;
        // The clerk may also write orders there: what bounds the agent is the delegation.
        let writer = world
            .api(Method::POST, "/api/v1/roles")
            .json(&json!({"key": "orders_writer", "kind": "tenant",
                          "permissions": [{"resource": ORDERS_API, "name": "orders:write"}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(writer.status(), 201);
        let roles = world
            .api(Method::PUT, &format!("/api/v1/tenant-users/{clerk}/roles"))
            .json(&json!({"roles": ["orders_clerk", "orders_writer"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(roles.status(), 200);
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let assistant = agent(&world, &key, &gateway.0).await;
        let actor = agent_token(&world, &key, &assistant).await;
        let with_actor = |actor: &str, extra: &[(&'static str, &str)]| {
            let mut pairs = subject(&person);
            pairs.push(("actor_token", actor.to_owned()));
            pairs.push(("actor_token_type", ACCESS_TOKEN.to_owned()));
            pairs.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
            pairs
        };

        // No delegation yet: the agent acts for nobody.
        let pairs = with_actor(&actor, &[("audience", ORDERS_API)]);
        let answer = exchange(&world, &gateway, &form(&pairs)).await;
        assert_refused(&answer, "invalid_request", "before any delegation");
        assert!(
            answer.1["error_description"]
                .as_str()
                .is_some_and(|d| d.contains("delegation")),
            "{}",
            answer.1
        );

        let delegation = delegate(&world, &assistant, "orders:read").await;
        let (status, body) = exchange(&world, &gateway, &form(&pairs)).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        let token = body["access_token"].as_str().unwrap().to_owned();
        let claims = claims_of(&token);
        assert_eq!(claims["sub"], clerk.as_str());
        assert_eq!(claims["subject_type"], "human");
        assert_eq!(claims["client_id"], gateway.0.as_str());
        assert_eq!(claims["aud"], ORDERS_API);
        assert_eq!(
            claims["scope"], "orders:read",
            "the delegation's permissions only, though the clerk holds orders:write there too"
        );
        assert_eq!(
            claims["act"],
            json!({"sub": assistant, "subject_type": "agent", "client_id": gateway.0,
                   "delegation_id": delegation}),
            "{claims}"
        );

        // The agent's signed assertion instead of its token: the same result, once per
        // challenge; an assertion naming the person is no actor token.
        let signed = assertion(&world, &key, &assistant, &assistant).await;
        let mut by_assertion = subject(&person);
        by_assertion.push(("actor_token", signed.clone()));
        by_assertion.push(("actor_token_type", JWT.to_owned()));
        by_assertion.push(("audience", ORDERS_API.to_owned()));
        let (status, body) = exchange(&world, &gateway, &form(&by_assertion)).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        let asserted = claims_of(body["access_token"].as_str().unwrap());
        assert_eq!(asserted["act"], claims["act"], "{asserted}");
        assert_eq!(asserted["scope"], "orders:read");
        assert_refused(
            &exchange(&world, &gateway, &form(&by_assertion)).await,
            "invalid_request",
            "the same assertion again: its challenge is spent",
        );
        let for_person = assertion(&world, &key, &assistant, &clerk).await;
        let mut naming_person = subject(&person);
        naming_person.push(("actor_token", for_person));
        naming_person.push(("actor_token_type", JWT.to_owned()));
        assert_refused(
            &exchange(&world, &gateway, &form(&naming_person)).await,
            "invalid_request",
            "an assertion for the person",
        );

        // A resource server trusting the agent accepts it; one that does not, refuses.
        let keys = jwks(&world).await;
        let route = svc_sdk::Requirements::new(
            world.issuer(),
            ORDERS_API,
            claims["tenant_id"].as_str().unwrap(),
        )
        .with_scope("orders:read")
        .with_delegation(true);
        let checked = svc_sdk::validate_with_jwks(
            &token,
            &keys,
            &route.clone().with_trusted_actors([assistant.clone()]),
            now(),
        )
        .unwrap();
        assert_eq!(checked.act.map(|a| a.sub), Some(assistant.clone()));
        assert_eq!(
            svc_sdk::validate_with_jwks(
                &token,
                &keys,
                &route.with_trusted_actors([gateway.0.clone()]),
                now()
            )
            .unwrap_err(),
            svc_sdk::ValidationError::ActorNotTrusted
        );
        assert_eq!(introspect(&world, &orders, &token).await["active"], true);

        // Beyond the delegation, at an API the agent may not reach, through an agent the
        // gateway does not own: refused, each saying why.
        let wider = with_actor(
            &actor,
            &[("audience", ORDERS_API), ("scope", "orders:write")],
        );
        assert_refused(
            &exchange(&world, &gateway, &form(&wider)).await,
            "invalid_request",
            "orders:write is not delegated",
        );
        let elsewhere = with_actor(&actor, &[("audience", GATEWAY_API)]);
        assert_refused(
            &exchange(&world, &gateway, &form(&elsewhere)).await,
            "invalid_target",
            "the gateway API is not the agent's",
        );
        let stranger_key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let stranger = agent(&world, &stranger_key, &world.client_id).await;
        let stranger_token = agent_token(&world, &stranger_key, &stranger).await;
        let foreign = with_actor(&stranger_token, &[("audience", ORDERS_API)]);
        let answer = exchange(&world, &gateway, &form(&foreign)).await;
        assert_refused(&answer, "invalid_request", "an agent of another client");
        assert!(
            answer.1["error_description"]
                .as_str()
                .is_some_and(|d| d.contains("does not own")),
            "{}",
            answer.1
        );

        // Revoked: the token is inactive at once and the agent gets no new one.
        let revoked = world
            .api(Method::DELETE, &format!("/api/v1/delegations/{delegation}"))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        assert_eq!(
            introspect(&world, &orders, &token).await,
            json!({"active": false})
        );
        assert_refused(
            &exchange(&world, &gateway, &form(&pairs)).await,
            "invalid_request",
            "after the revocation",
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn an_exchange_through_a_delegation_carries_its_rar_details() {
    const REFUNDS: &str = r#"[{"type":"refund","max_amount":50,"reasons":["damaged","late"]}]"#;
    for backend in BACKENDS {
        let Fixture {
            world,
            gateway,
            person,
            ..
        } = fixture(
            backend,
            vec![
                ("SVC_CHALLENGE__ENABLED", "true"),
                ("SVC_OIDC__AUTHORIZATION_DETAILS", "true"),
            ],
        )
        .await;
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let types = json!([{"type": "refund", "description": "Refund orders",
            "schema": {"type": "object", "properties": {
                "max_amount": {"type": "number"},
                "reasons": {"type": "array", "items": {"type": "string"}}}}}]);
        let assistant = typed_agent(&world, &key, &gateway.0, types).await;
        let actor = agent_token(&world, &key, &assistant).await;
        delegate_with(&world, &assistant, "orders:read", Some(REFUNDS)).await;
        let ask = |details: Option<&str>| {
            let mut pairs = subject(&person);
            pairs.push(("actor_token", actor.clone()));
            pairs.push(("actor_token_type", ACCESS_TOKEN.to_owned()));
            pairs.push(("audience", ORDERS_API.to_owned()));
            if let Some(details) = details {
                pairs.push(("authorization_details", details.to_owned()));
            }
            pairs
        };
        let refunds: Value = serde_json::from_str(REFUNDS).unwrap();
        let (status, body) = exchange(&world, &gateway, &form(&ask(None))).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        assert_eq!(body["authorization_details"], refunds);
        let token = body["access_token"].as_str().unwrap().to_owned();
        assert_eq!(claims_of(&token)["authorization_details"], refunds);

        let late = r#"[{"type":"refund","max_amount":50,"reasons":["late"]}]"#;
        let (status, body) = exchange(&world, &gateway, &form(&ask(Some(late)))).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            claims_of(body["access_token"].as_str().unwrap())["authorization_details"],
            serde_json::from_str::<Value>(late).unwrap()
        );
        let wider = r#"[{"type":"refund","max_amount":500,"reasons":["late"]}]"#;
        assert_refused(
            &exchange(&world, &gateway, &form(&ask(Some(wider)))).await,
            "invalid_authorization_details",
            "wider than the delegation",
        );
        // Without an actor there is no delegation and nothing to narrow.
        let mut plain = subject(&person);
        plain.push(("audience", ORDERS_API.to_owned()));
        plain.push(("authorization_details", late.to_owned()));
        assert_refused(
            &exchange(&world, &gateway, &form(&plain)).await,
            "invalid_authorization_details",
            "details on an exchange not through a delegation",
        );
        world.shutdown().await;
    }
}
