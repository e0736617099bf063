//! Rich Authorization Requests (RFC 9396) over HTTP, on SQLite and PostgreSQL: an application
//! registers a detail type with its schema; `authorization_details` at the authorization endpoint
//! are validated, shown on the consent page in the schema's words (even to a first-party
//! application, and under `prompt=none` never taken as consented), carried into the code, the
//! token response, the access token and introspection; the token request narrows them; a refresh
//! carries the grant's details, narrows them, and is refused (without rotating) when it widens
//! them; discovery names the tenant's types. With `[oidc].authorization_details` off, types
//! cannot be registered and the parameter is refused at both endpoints.

use crate::hosted::support::{
    PASSWORD, REDIRECT, Setup, VERIFIER, World, follow_to_client, param, payload,
};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

pub(crate) fn payment_type() -> Value {
    json!({
        "type": "payment_initiation",
        "description": "Make a payment from your account",
        "schema": {
            "type": "object",
            "required": ["type", "instructedAmount", "creditorName"],
            "properties": {
                "type": {"const": "payment_initiation"},
                "actions": {"type": "array", "items": {"enum": ["initiate", "status", "cancel"]}},
                "instructedAmount": {
                    "title": "Amount",
                    "type": "object",
                    "required": ["currency", "amount"],
                    "properties": {
                        "currency": {"title": "Currency", "type": "string", "pattern": "^[A-Z]{3}$"},
                        "amount": {"title": "Sum", "type": "string"}
                    },
                    "additionalProperties": false
                },
                "creditorName": {"title": "Payee", "type": "string", "maxLength": 70}
            },
            "additionalProperties": false
        }
    })
}

pub(crate) fn payment(actions: &[&str], payee: &str) -> Value {
    json!([{
        "type": "payment_initiation",
        "actions": actions,
        "instructedAmount": {"currency": "EUR", "amount": "123.50"},
        "creditorName": payee
    }])
}

async fn token(world: &World, form: &[(&str, &str)]) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .basic_auth(&world.client_id, Some(&world.client_secret))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn details_reach_consent_code_tokens_refresh_and_introspection() {
    for backend in BACKENDS {
        let setup = Setup {
            first_party: true,
            env: vec![("SVC_OIDC__AUTHORIZATION_DETAILS", "true")],
            ..Setup::default()
        };
        let mut world = World::new(backend, setup).await;
        let (id, secret) = world
            .register_with(json!({
                "first_party": true,
                "authorization_details_types": [payment_type()]
            }))
            .await;
        world.client_id = id;
        world.client_secret = secret;
        let app: Value = world
            .api(
                Method::GET,
                &format!("/api/v1/applications/{}", world.client_id),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            app["authorization_details_types"][0]["type"], "payment_initiation",
            "{app}"
        );
        let discovery = world.discovery().await;
        assert_eq!(
            discovery["authorization_details_types_supported"],
            json!(["payment_initiation"]),
            "RFC 9396 §10.1"
        );

        // Consent shows the details in the schema's words, escaped, even to a first-party
        // application that skips scope consent.
        let granted = payment(&["initiate", "status"], "Merchant <A>").to_string();
        let browser = world.browser();
        let path = world.authorize_path(
            "openid offline_access",
            "st",
            &[("authorization_details", &granted)],
        );
        let page = browser.get(&path).await;
        let interaction = param(&page.location().unwrap(), "interaction").unwrap();
        let signed = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let resumed = browser.get(&signed.location().unwrap()).await;
        let consent = resumed.location().unwrap();
        assert!(
            consent.starts_with("/auth/consent?"),
            "details need consent: {consent}"
        );
        let shown = browser.get(&consent).await;
        assert_eq!(shown.status, 200);
        assert!(
            shown.body.contains("Make a payment from your account"),
            "{}",
            shown.body
        );
        assert!(
            shown.body.contains("Payee: Merchant &#60;A&#62;"),
            "{}",
            shown.body
        );
        assert!(
            !shown.body.contains("Merchant <A>"),
            "client text is escaped"
        );
        assert!(shown.body.contains("Currency: EUR"), "{}", shown.body);
        let answered = browser
            .submit(&consent, "/auth/consent", &[("decision", "allow")])
            .await;
        let location = answered.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        let code = param(&location, "code").unwrap();

        // The token request narrows them (an action dropped).
        let narrowed = payment(&["initiate"], "Merchant <A>");
        let narrowed_text = narrowed.to_string();
        let (status, tokens) = token(
            &world,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
                ("authorization_details", &narrowed_text),
            ],
        )
        .await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["authorization_details"], narrowed, "RFC 9396 §7");
        let access = tokens["access_token"].as_str().unwrap();
        assert_eq!(payload(access)["authorization_details"], narrowed);
        let seen = world.introspect(access).await;
        assert_eq!(seen["active"], true);
        assert_eq!(seen["authorization_details"], narrowed, "RFC 9396 §9.2");

        // A refresh without the parameter carries what was granted, not the narrowing.
        let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
        let (status, refreshed) = token(
            &world,
            &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
        )
        .await;
        assert_eq!(status, 200, "{refreshed}");
        let granted_value: Value = serde_json::from_str(&granted).unwrap();
        assert_eq!(refreshed["authorization_details"], granted_value);

        // Widening on refresh is refused and does not rotate the token.
        let refresh = refreshed["refresh_token"].as_str().unwrap().to_owned();
        let widened = payment(&["initiate", "status", "cancel"], "Merchant <A>").to_string();
        let (status, refused) = token(
            &world,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("authorization_details", &widened),
            ],
        )
        .await;
        assert_eq!(status, 400);
        assert_eq!(
            refused["error"], "invalid_authorization_details",
            "{refused}"
        );
        let other_payee = payment(&["initiate"], "Someone else").to_string();
        let (status, refused) = token(
            &world,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("authorization_details", &other_payee),
            ],
        )
        .await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (400, Some("invalid_authorization_details"))
        );
        let (status, again) = token(
            &world,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("authorization_details", &narrowed_text),
            ],
        )
        .await;
        assert_eq!(
            status, 200,
            "the refused attempts did not spend the token: {again}"
        );
        assert_eq!(again["authorization_details"], narrowed);

        // prompt=none never takes details as consented, however often they were approved.
        let silent = browser
            .get(&world.authorize_path(
                "openid",
                "st",
                &[("authorization_details", &granted), ("prompt", "none")],
            ))
            .await;
        let location = silent.location().unwrap();
        assert_eq!(
            param(&location, "error").as_deref(),
            Some("consent_required"),
            "{location}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_or_unknown_details_are_refused_with_invalid_authorization_details() {
    for backend in BACKENDS {
        let setup = Setup {
            env: vec![("SVC_OIDC__AUTHORIZATION_DETAILS", "true")],
            ..Setup::default()
        };
        let mut world = World::new(backend, setup).await;
        let (id, secret) = world
            .register_with(json!({"authorization_details_types": [payment_type()]}))
            .await;
        world.client_id = id;
        world.client_secret = secret;
        let browser = world.browser();
        let deep = format!(
            r#"[{{"type":"payment_initiation","x":{}1{}}}]"#,
            "[".repeat(40),
            "]".repeat(40)
        );
        let cases = [
            (
                r#"[{"type":"account_information"}]"#.to_owned(),
                "unknown type",
            ),
            (
                payment(&["initiate"], &"x".repeat(71)).to_string(),
                "schema: maxLength",
            ),
            (
                payment(&["initiate"], "A")
                    .to_string()
                    .replace("EUR", "euro"),
                "schema: pattern",
            ),
            (payment(&["transfer_all"], "A").to_string(), "schema: enum"),
            (
                r#"{"type":"payment_initiation"}"#.to_owned(),
                "not an array",
            ),
            ("not json".to_owned(), "malformed"),
            (
                r#"[{"type":"payment_initiation","actions":"initiate"}]"#.to_owned(),
                "§2.2 shape",
            ),
            (deep, "nested too deep"),
            (
                format!("[{}]", "{\"type\":\"x\"},".repeat(700) + "{}"),
                "oversized",
            ),
        ];
        for (details, what) in cases {
            let path = world.authorize_path("openid", "st", &[("authorization_details", &details)]);
            let page = browser.get(&path).await;
            assert_eq!(page.status, 303, "{what}: {}", page.body);
            let location = page.location().unwrap();
            assert!(location.starts_with(REDIRECT), "{what}: {location}");
            assert_eq!(
                param(&location, "error").as_deref(),
                Some("invalid_authorization_details"),
                "{what}: {location}"
            );
            assert_eq!(param(&location, "state").as_deref(), Some("st"));
        }
        // An authorization made without details cannot gain some at the token endpoint.
        let code = world
            .code_for(&browser, &world.client_id, "openid", &[])
            .await;
        let (status, refused) = token(
            &world,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
                (
                    "authorization_details",
                    &payment(&["initiate"], "A").to_string(),
                ),
            ],
        )
        .await;
        assert_eq!(status, 400);
        assert_eq!(refused["error"], "invalid_authorization_details");
        // A registration whose schema reaches outside itself, or does not compile, is refused.
        for (schema, what) in [
            (
                json!({"$ref": "https://schemas.example/payment.json"}),
                "remote $ref",
            ),
            (json!({"type": "not-a-type"}), "invalid schema"),
            (
                json!({"properties": {"x": {"pattern": "(a)\\1"}}}),
                "back-reference",
            ),
        ] {
            let response = world
                .api(Method::POST, "/api/v1/applications")
                .json(&json!({
                    "name": "Bad",
                    "redirect_uris": [REDIRECT],
                    "grant_types": ["authorization_code"],
                    "token_endpoint_auth_method": "client_secret_basic",
                    "allowed_scopes": ["openid"],
                    "authorization_details_types": [{
                        "type": "t", "description": "d", "schema": schema
                    }]
                }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{what}");
            let body: Value = response.json().await.unwrap();
            assert!(
                body.to_string().contains("authorization_details_types"),
                "{what}: {body}"
            );
        }
        world.shutdown().await;
    }
}

#[tokio::test]
async fn switched_off_types_cannot_be_registered_and_the_parameter_is_refused() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let response = world
            .api(Method::POST, "/api/v1/applications")
            .json(&json!({
                "name": "Bank",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid"],
                "authorization_details_types": [payment_type()]
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert!(
            body.to_string().contains("[oidc].authorization_details"),
            "the refusal names the key: {body}"
        );
        assert!(
            world
                .discovery()
                .await
                .get("authorization_details_types_supported")
                .is_none()
        );
        let details = payment(&["initiate"], "A").to_string();
        let page = world
            .browser()
            .get(&world.authorize_path("openid", "st", &[("authorization_details", &details)]))
            .await;
        let location = page.location().unwrap();
        assert_eq!(
            param(&location, "error").as_deref(),
            Some("invalid_request"),
            "{location}"
        );
        let browser = world.browser();
        let location = follow_to_client(
            &browser,
            &world.authorize_path("openid", "st", &[]),
            REDIRECT,
            &world.user,
        )
        .await;
        let code = param(&location, "code").unwrap();
        let (status, refused) = token(
            &world,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
                ("authorization_details", &details),
            ],
        )
        .await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (400, Some("invalid_request"))
        );
        world.shutdown().await;
    }
}
