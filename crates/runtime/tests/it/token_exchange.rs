//! Token exchange (RFC 8693) through the real token endpoint, on SQLite and PostgreSQL: a
//! person's token for a gateway's API exchanged by the gateway for another API, with an `act`
//! chain that `svc-sdk` verifies (rule 9 with the route's policy); a second hop nesting the
//! newest actor outermost; and every refusal of the issue's list — another tenant's, revoked or
//! garbage subject tokens, widened scopes and audiences, an actor the token was not for, loops,
//! a chain over the cap, public clients, the switch off.

use crate::hosted::support::{PASSWORD, REDIRECT, Setup, World, follow_to_client, param};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Method;
use serde_json::{Value, json};
use svc_domain::{Clock, SystemClock, TOKEN_EXCHANGE_GRANT};
use svc_sdk::{Requirements, SubjectType, ValidationError};
use svc_testkit::BACKENDS;

pub(crate) const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
pub(crate) const GATEWAY_API: &str = "https://gateway.example";
pub(crate) const ORDERS_API: &str = "https://orders.example";

pub(crate) fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// A registered API resource with `permissions`.
pub(crate) async fn api_resource(world: &World, identifier: &str, permissions: &[&str]) {
    let permissions: Vec<Value> = permissions.iter().map(|p| json!({"name": p})).collect();
    let created = world
        .api(Method::POST, "/api/v1/api-resources")
        .json(&json!({"identifier": identifier, "name": identifier, "permissions": permissions}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201, "{}", created.text().await.unwrap());
}

/// A service registered for token exchange, serving `api_audience`: `(client_id, secret)`.
pub(crate) async fn service(
    world: &World,
    name: &str,
    api_audience: Option<&str>,
) -> (String, String) {
    world
        .register_with(json!({
            "name": name,
            "grant_types": [TOKEN_EXCHANGE_GRANT, "client_credentials"],
            "redirect_uris": [],
            "post_logout_redirect_uris": [],
            "allowed_scopes": [],
            "first_party": true,
            "api_audience": api_audience,
        }))
        .await
}

/// The person who holds the gateway API's permissions through a tenant role.
pub(crate) const CLERK: &str = "clerk@example.com";

/// A person holding `permissions` (API, permission) through a tenant role of their own.
pub(crate) async fn clerk(world: &World, permissions: &[(&str, &str)]) -> String {
    let person = world.create_user(CLERK, PASSWORD).await;
    let permissions: Vec<Value> = permissions
        .iter()
        .map(|(api, p)| json!({"resource": api, "name": p}))
        .collect();
    let role = world
        .api(Method::POST, "/api/v1/roles")
        .json(&json!({"key": "orders_clerk", "kind": "tenant", "permissions": permissions}))
        .send()
        .await
        .unwrap();
    assert_eq!(role.status(), 201, "{}", role.text().await.unwrap());
    let held = world
        .api(
            Method::PUT,
            &format!(
                "/api/v1/tenant-users/{}/roles",
                person["id"].as_str().unwrap()
            ),
        )
        .json(&json!({"roles": ["orders_clerk"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(held.status(), 200, "{}", held.text().await.unwrap());
    person["id"].as_str().unwrap().to_owned()
}

/// The clerk's token, issued to the world's (first-party) application for `resource`.
pub(crate) async fn person_token(
    world: &World,
    resource: &str,
    scope: &str,
    extra: &[(&str, &str)],
) -> String {
    let browser = world.browser();
    let mut params = vec![("resource", resource)];
    params.extend_from_slice(extra);
    let path = world.authorize_path(scope, "st", &params);
    let location = follow_to_client(&browser, &path, REDIRECT, CLERK).await;
    let code = param(&location, "code").unwrap_or_else(|| panic!("no code: {location}"));
    let redeemed = world.redeem(&code).await;
    let status = redeemed.status();
    let body: Value = redeemed.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

/// A client_credentials token of `client`.
async fn client_token(world: &World, client: &(String, String)) -> String {
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .basic_auth(&client.0, Some(&client.1))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

/// `POST /oauth/token` with the exchange grant, as `client`, with `form`.
pub(crate) async fn exchange(
    world: &World,
    client: &(String, String),
    form: &[(&str, &str)],
) -> (u16, Value) {
    let mut all = vec![("grant_type", TOKEN_EXCHANGE_GRANT)];
    all.extend_from_slice(form);
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .basic_auth(&client.0, Some(&client.1))
        .form(&all)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

pub(crate) fn subject(token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("subject_token", token.to_owned()),
        ("subject_token_type", ACCESS_TOKEN.to_owned()),
    ]
}

pub(crate) fn form<'a>(pairs: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    pairs.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The tenant's published keys, for `svc-sdk`.
pub(crate) async fn jwks(world: &World) -> jsonwebtoken::jwk::JwkSet {
    world
        .app
        .request(Method::GET, "/.well-known/jwks.json")
        .header("host", &world.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub(crate) struct Fixture {
    pub(crate) world: World,
    /// The gateway service (`api_audience` the gateway API), registered for the exchange grant.
    pub(crate) gateway: (String, String),
    /// The clerk's token for the gateway API (`openid orders:read orders:write`).
    pub(crate) person: String,
    /// The clerk's user id.
    pub(crate) clerk: String,
}

pub(crate) async fn fixture(
    backend: svc_testkit::Backend,
    env: Vec<(&'static str, &'static str)>,
) -> Fixture {
    let world = World::new(
        backend,
        Setup {
            first_party: true,
            env,
            ..Setup::default()
        },
    )
    .await;
    api_resource(&world, GATEWAY_API, &["orders:read", "orders:write"]).await;
    api_resource(&world, ORDERS_API, &["orders:read", "orders:write"]).await;
    // Both permissions at the gateway's API, only reading at the orders API.
    let clerk = clerk(
        &world,
        &[
            (GATEWAY_API, "orders:read"),
            (GATEWAY_API, "orders:write"),
            (ORDERS_API, "orders:read"),
        ],
    )
    .await;
    let gateway = service(&world, "Gateway", Some(GATEWAY_API)).await;
    let person = person_token(&world, GATEWAY_API, "openid orders:read orders:write", &[]).await;
    assert_eq!(
        claims_of(&person)["scope"],
        "openid orders:read orders:write",
        "the clerk's role holds both permissions"
    );
    Fixture {
        world,
        gateway,
        person,
        clerk,
    }
}

#[tokio::test]
async fn a_gateway_exchanges_a_persons_token_and_the_sdk_checks_the_chain() {
    for backend in BACKENDS {
        let Fixture {
            world,
            gateway,
            person,
            ..
        } = fixture(backend, vec![]).await;
        let original = claims_of(&person);
        assert_eq!(original["aud"], GATEWAY_API, "{original}");
        let mut pairs = subject(&person);
        pairs.push(("audience", ORDERS_API.to_owned()));
        pairs.push(("scope", "orders:read".to_owned()));
        let (status, body) = exchange(&world, &gateway, &form(&pairs)).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        assert_eq!(body["issued_token_type"], ACCESS_TOKEN);
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["scope"], "orders:read");
        assert!(body.get("refresh_token").is_none(), "{body}");
        let token = body["access_token"].as_str().unwrap();
        let claims = claims_of(token);
        assert_eq!(
            claims["sub"], original["sub"],
            "the subject stays the person"
        );
        assert_eq!(claims["subject_type"], "human");
        assert_eq!(claims["client_id"], gateway.0.as_str());
        assert_eq!(claims["aud"], ORDERS_API);
        assert_eq!(
            claims["act"],
            json!({"sub": gateway.0, "client_id": gateway.0})
        );
        assert!(
            claims["exp"].as_i64() <= original["exp"].as_i64(),
            "{claims}"
        );
        assert_eq!(claims["auth_time"], original["auth_time"]);
        // Moving to another API keeps only what the person holds there: orders:write is theirs
        // at the gateway's API, not at the orders API.
        let mut everything = subject(&person);
        everything.push(("audience", ORDERS_API.to_owned()));
        let (status, body) = exchange(&world, &gateway, &form(&everything)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["scope"], "openid orders:read", "{body}");

        // svc-sdk at the orders API: rule 9 refuses delegation unless the route allows it,
        // then applies the route's policy.
        let keys = jwks(&world).await;
        let now = SystemClock.now().unix_timestamp();
        let requirements = Requirements::new(
            world.issuer(),
            ORDERS_API,
            original["tenant_id"].as_str().unwrap(),
        )
        .with_scope("orders:read");
        assert_eq!(
            svc_sdk::validate_with_jwks(token, &keys, &requirements, now).unwrap_err(),
            ValidationError::DelegationNotAllowed
        );
        let delegated = requirements
            .clone()
            .with_delegation(true)
            .with_trusted_actors([gateway.0.clone()]);
        let verified = svc_sdk::validate_with_jwks(token, &keys, &delegated, now).unwrap();
        assert_eq!(verified.subject_type, SubjectType::Human);
        assert_eq!(verified.act.as_ref().unwrap().sub, gateway.0);
        let untrusted = requirements
            .with_delegation(true)
            .with_trusted_actors(["app_other"]);
        assert_eq!(
            svc_sdk::validate_with_jwks(token, &keys, &untrusted, now).unwrap_err(),
            ValidationError::ActorNotTrusted
        );

        // A second hop by the orders service: newest actor outermost.
        let orders = service(&world, "Orders", Some(ORDERS_API)).await;
        let (status, body) = exchange(&world, &orders, &form(&subject(token))).await;
        assert_eq!(status, 200, "{body}");
        let hop = claims_of(body["access_token"].as_str().unwrap());
        assert_eq!(
            hop["act"],
            json!({"sub": orders.0, "client_id": orders.0,
                   "act": {"sub": gateway.0, "client_id": gateway.0}})
        );
        assert_eq!(
            hop["scope"], "orders:read",
            "never wider than the token it came from"
        );
        // The orders service presenting its own token with itself as actor: already in the
        // chain, a loop.
        let hop_token = body["access_token"].as_str().unwrap().to_owned();
        let mut again = subject(&hop_token);
        again.push(("actor_token", client_token(&world, &orders).await));
        again.push(("actor_token_type", ACCESS_TOKEN.to_owned()));
        let (status, body) = exchange(&world, &orders, &form(&again)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        assert!(
            body["error_description"].as_str().unwrap().contains("loop"),
            "{body}"
        );
        // Presenting its own token without an actor token is down-scoping: nobody new acts.
        let mut narrower = subject(&hop_token);
        narrower.push(("scope", "orders:read".to_owned()));
        let (status, body) = exchange(&world, &orders, &form(&narrower)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            claims_of(body["access_token"].as_str().unwrap())["act"],
            hop["act"],
            "the chain is kept as it was"
        );

        // The gateway's own client_credentials token as actor token: the same actor.
        let mut with_actor = subject(&person);
        with_actor.push(("actor_token", client_token(&world, &gateway).await));
        with_actor.push(("actor_token_type", ACCESS_TOKEN.to_owned()));
        let (status, body) = exchange(&world, &gateway, &form(&with_actor)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            claims_of(body["access_token"].as_str().unwrap())["act"]["sub"],
            gateway.0.as_str()
        );
        // ... which another client may not present as its own.
        let (status, body) = exchange(&world, &orders, &form(&with_actor)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_exchanges_are_refused_and_issue_nothing() {
    for backend in BACKENDS {
        let Fixture {
            world,
            gateway,
            person,
            ..
        } = fixture(backend, vec![]).await;
        let refused = |status: u16, body: &Value, error: &str| {
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some(error)),
                "{backend:?}: {body}"
            );
            assert!(body.get("access_token").is_none());
        };
        // Widening the scope or the audience.
        let mut wider = subject(&person);
        wider.push(("scope", "orders:read orders:delete".to_owned()));
        let (status, body) = exchange(&world, &gateway, &form(&wider)).await;
        refused(status, &body, "invalid_scope");
        let management_api = format!("{}/api/v1", world.issuer());
        for target in ["https://evil.example", management_api.as_str()] {
            let mut elsewhere = subject(&person);
            elsewhere.push(("audience", target.to_owned()));
            let (status, body) = exchange(&world, &gateway, &form(&elsewhere)).await;
            refused(status, &body, "invalid_target");
        }
        // A client the token was neither issued to nor meant for.
        let stranger = service(&world, "Stranger", None).await;
        let (status, body) = exchange(&world, &stranger, &form(&subject(&person))).await;
        refused(status, &body, "invalid_request");
        // Garbage, and another tenant's token.
        let (status, body) = exchange(&world, &gateway, &form(&subject("not.a.token"))).await;
        refused(status, &body, "invalid_request");
        let other = world.other_tenant("globex").await;
        let foreign = crate::common::management_token(&world.app, &other, None).await;
        let (status, body) = exchange(&world, &gateway, &form(&subject(&foreign))).await;
        refused(status, &body, "invalid_request");
        // Wrong token types, missing parameters.
        let (status, body) = exchange(
            &world,
            &gateway,
            &[
                ("subject_token", person.as_str()),
                (
                    "subject_token_type",
                    "urn:ietf:params:oauth:token-type:id_token",
                ),
            ],
        )
        .await;
        refused(status, &body, "invalid_request");
        let (status, body) =
            exchange(&world, &gateway, &[("subject_token_type", ACCESS_TOKEN)]).await;
        refused(status, &body, "invalid_request");
        // An application not registered for the grant.
        let shop = (world.client_id.clone(), world.client_secret.clone());
        let (status, body) = exchange(&world, &shop, &form(&subject(&person))).await;
        refused(status, &body, "unauthorized_client");
        // A revoked subject token.
        let revoked = world
            .app
            .request(Method::POST, "/oauth/revoke")
            .header("host", &world.host)
            .basic_auth(&world.client_id, Some(&world.client_secret))
            .form(&[("token", person.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 200);
        let (status, body) = exchange(&world, &gateway, &form(&subject(&person))).await;
        refused(status, &body, "invalid_request");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn public_clients_the_chain_cap_and_the_switch() {
    for backend in BACKENDS {
        // A public client may not register for the grant.
        let Fixture {
            world,
            gateway,
            person,
            ..
        } = fixture(backend, vec![("SVC_DELEGATION__MAX_CHAIN_DEPTH", "1")]).await;
        let public = world
            .api(Method::POST, "/api/v1/applications")
            .json(&json!({
                "name": "Spa", "grant_types": [TOKEN_EXCHANGE_GRANT], "redirect_uris": [],
                "token_endpoint_auth_method": "none",
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(public.status(), 400);
        let problem: Value = public.json().await.unwrap();
        assert!(
            problem["error_description"]
                .as_str()
                .unwrap()
                .contains("confidential"),
            "{problem}"
        );
        assert!(
            world.discovery().await["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!(TOKEN_EXCHANGE_GRANT))
        );
        // One actor allowed: the gateway's hop passes, a second one is over the cap.
        let mut pairs = subject(&person);
        pairs.push(("audience", ORDERS_API.to_owned()));
        let (status, body) = exchange(&world, &gateway, &form(&pairs)).await;
        assert_eq!(status, 200, "{body}");
        let orders = service(&world, "Orders", Some(ORDERS_API)).await;
        let hop = subject(body["access_token"].as_str().unwrap());
        let (status, body) = exchange(&world, &orders, &form(&hop)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .contains("at most 1"),
            "{body}"
        );
        // Without challenge-response there are no agent assertions to stand as actor tokens.
        let mut asserted = subject(&person);
        asserted.push(("actor_token", "eyJhbGciOiJFZERTQSJ9.e30.c2ln".to_owned()));
        asserted.push((
            "actor_token_type",
            "urn:ietf:params:oauth:token-type:jwt".to_owned(),
        ));
        let (status, body) = exchange(&world, &gateway, &form(&asserted)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        assert!(
            body["error_description"]
                .as_str()
                .is_some_and(|d| d.contains("[challenge]")),
            "{body}"
        );
        world.shutdown().await;

        // Switched off: neither served nor advertised.
        let Fixture {
            world,
            gateway,
            person,
            ..
        } = fixture(backend, vec![("SVC_DELEGATION__ENABLED", "false")]).await;
        let (status, body) = exchange(&world, &gateway, &form(&subject(&person))).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("unsupported_grant_type")),
            "{body}"
        );
        assert!(
            !world.discovery().await["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!(TOKEN_EXCHANGE_GRANT))
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_token_acting_in_a_suspended_organization_is_not_exchanged() {
    for backend in BACKENDS {
        let Fixture {
            world,
            gateway,
            clerk,
            ..
        } = fixture(backend, vec![]).await;
        let created = world
            .api(Method::POST, "/api/v1/organizations")
            .json(&json!({"name": "Globex", "slug": "globex"}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
        let org: Value = created.json().await.unwrap();
        let org_id = org["id"].as_str().unwrap().to_owned();
        let joined = world
            .api(
                Method::POST,
                &format!("/api/v1/organizations/{org_id}/members"),
            )
            .json(&json!({"user_id": clerk}))
            .send()
            .await
            .unwrap();
        assert_eq!(joined.status(), 201, "{}", joined.text().await.unwrap());
        let token = person_token(
            &world,
            GATEWAY_API,
            "openid orders:read",
            &[("organization", org_id.as_str())],
        )
        .await;
        assert_eq!(claims_of(&token)["org_id"], org_id.as_str());
        let (status, body) = exchange(&world, &gateway, &form(&subject(&token))).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        assert_eq!(
            claims_of(body["access_token"].as_str().unwrap())["org_id"],
            org_id.as_str(),
            "the organization goes with the subject"
        );
        let suspended = world
            .api(
                Method::POST,
                &format!("/api/v1/organizations/{org_id}/suspend"),
            )
            .send()
            .await
            .unwrap();
        assert!(suspended.status().is_success(), "{}", suspended.status());
        let (status, body) = exchange(&world, &gateway, &form(&subject(&token))).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        world.shutdown().await;
    }
}
