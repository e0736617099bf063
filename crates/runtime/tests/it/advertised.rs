//! Nothing advertised that is not served. The metadata documents a relying party reads
//! (OpenID Connect Discovery 1.0, RFC 8414, and the RFC 9728 protected-resource metadata of the
//! management API) are fetched from a running server, and every value they advertise is used
//! against that same server: each endpoint answers (not the router's 404 or 405 fallback), each
//! grant type, response type, response mode, PKCE method, prompt, claim, scope, client
//! authentication method and signing algorithm works, and the values they leave out are refused.
//!
//! Each check is driven by what the documents say, with a probe per known value: a value the
//! documents start advertising without a probe here fails the test until one is written.

use crate::common::{create_tenant, management_token, operator_token};
use crate::hosted::support::{CHALLENGE, REDIRECT, Setup, VERIFIER, World, param};
use base64::Engine as _;
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::{Backend, TestApp};

/// The three documents of the world's tenant: OpenID configuration, RFC 8414, RFC 9728.
async fn documents(world: &World) -> (Value, Value, Value) {
    let get = |path: &'static str| async move {
        let response = world
            .app
            .request(Method::GET, path)
            .header("host", &world.host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        response.json::<Value>().await.unwrap()
    };
    (
        get("/.well-known/openid-configuration").await,
        get("/.well-known/oauth-authorization-server").await,
        get("/.well-known/oauth-protected-resource").await,
    )
}

/// The strings of the array member `key` (empty when absent).
fn list(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// How each endpoint a document may advertise is called.
const ENDPOINT_METHODS: &[(&str, &str)] = &[
    ("authorization_endpoint", "GET"),
    ("token_endpoint", "POST"),
    ("userinfo_endpoint", "GET"),
    ("jwks_uri", "GET"),
    ("revocation_endpoint", "POST"),
    ("introspection_endpoint", "POST"),
    ("end_session_endpoint", "GET"),
    ("registration_endpoint", "POST"),
    ("pushed_authorization_request_endpoint", "POST"),
    ("device_authorization_endpoint", "POST"),
    ("backchannel_authentication_endpoint", "POST"),
];

/// Where the optional endpoints live when served, to check that what is not advertised is not
/// served either (the router's 404 for the path).
const OPTIONAL_PATHS: &[(&str, &str)] = &[
    ("revocation_endpoint", "/oauth/revoke"),
    ("introspection_endpoint", "/oauth/introspect"),
    ("end_session_endpoint", "/oauth/end-session"),
    ("registration_endpoint", "/oauth/register"),
    ("pushed_authorization_request_endpoint", "/oauth/par"),
    ("device_authorization_endpoint", "/oauth/device/code"),
    ("backchannel_authentication_endpoint", "/bc-authorize"),
];

/// Sends `method` to the absolute `url` on the test server, keeping its host as `Host`.
async fn call(app: &TestApp, method: Method, url: &str) -> (u16, String) {
    let parsed = url::Url::parse(url).unwrap();
    let host = match parsed.port() {
        Some(port) => format!("{}:{port}", parsed.host_str().unwrap()),
        None => parsed.host_str().unwrap().to_owned(),
    };
    let path = match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_owned(),
    };
    let response = app
        .request(method, &path)
        .header("host", host)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn every_advertised_endpoint_is_served_and_no_unadvertised_one_is() {
    let world = World::new(Backend::Sqlite, Setup::default()).await;
    let (oidc, oauth, resource) = documents(&world).await;
    let issuer = world.issuer();
    assert_eq!(oidc["issuer"], issuer.as_str());
    assert_eq!(oauth["issuer"], issuer.as_str());

    let mut probed = 0;
    for (name, doc) in [
        ("openid-configuration", &oidc),
        ("oauth-authorization-server", &oauth),
        ("oauth-protected-resource", &resource),
    ] {
        for (key, value) in doc.as_object().unwrap() {
            if !(key.ends_with("_endpoint") || key.ends_with("_uri")) {
                continue;
            }
            let url = value.as_str().unwrap();
            let method = ENDPOINT_METHODS
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, m)| Method::from_bytes(m.as_bytes()).unwrap())
                .unwrap_or_else(|| {
                    panic!("{name} advertises {key}: add how it is called to ENDPOINT_METHODS")
                });
            assert!(
                url.starts_with(&format!("{issuer}/")),
                "{name}: {key} = {url} is not under the issuer"
            );
            let (status, body) = call(&world.app, method.clone(), url).await;
            assert!(
                status != 404 && status != 405,
                "{name} advertises {key} = {url}, but {method} answers {status}: {body}"
            );
            probed += 1;
        }
    }
    assert!(
        probed >= 6,
        "the documents advertise the endpoints that exist"
    );

    // RFC 9728 §2: each authorization server is found through its own RFC 8414 document, and
    // the resource is the management API that the scopes below are checked against.
    for server in list(&resource, "authorization_servers") {
        let (status, body) = call(
            &world.app,
            Method::GET,
            &format!("{server}/.well-known/oauth-authorization-server"),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let metadata: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(metadata["issuer"], server.as_str());
    }
    assert_eq!(resource["resource"], format!("{issuer}/api/v1"));

    // The optional endpoints the documents leave out are not served either.
    for (key, path) in OPTIONAL_PATHS {
        if oidc.get(*key).is_some() {
            continue;
        }
        let (status, body) = call(&world.app, Method::POST, &format!("{issuer}{path}")).await;
        assert_eq!(
            status, 404,
            "{key} is not advertised but {path} answers: {body}"
        );
    }
    world.shutdown().await;
}

/// A token request as the world's application (client_secret_basic).
async fn token_request(world: &World, form: &[(&str, &str)]) -> (u16, Value) {
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

/// The ID token's claims and header (its signature is checked by the discovery tests).
fn jwt_parts(token: &str) -> (Value, Value) {
    let mut parts = token.split('.');
    let mut decode = || {
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts.next().unwrap())
            .unwrap();
        serde_json::from_slice::<Value>(&raw).unwrap()
    };
    let header = decode();
    (header, decode())
}

/// The id of the world's person.
async fn user_id(world: &World) -> String {
    let found: Value = world
        .api(
            Method::GET,
            &format!("/api/v1/tenant-users?email={}", world.user),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    found["items"][0]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn advertised_scopes_claims_and_grants_work_and_other_grants_are_refused() {
    let mut world = World::new(Backend::Postgres, Setup::default()).await;
    let (oidc, _, _) = documents(&world).await;
    let ada = user_id(&world).await;
    // Give the person every profile claim, so each advertised claim can be seen.
    let patched = world
        .api(Method::PATCH, &format!("/api/v1/tenant-users/{ada}"))
        .json(&json!({"given_name": "Ada", "family_name": "Lovelace"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);

    // Every advertised scope at once, with every request feature that releases a claim: the
    // application may ask for all of them, and Ada signs in to an organization of hers.
    let scopes = list(&oidc, "scopes_supported");
    assert!(scopes.contains(&"openid".to_owned()));
    let scope = scopes.join(" ");
    let (client_id, client_secret) = world
        .register_with(json!({ "allowed_scopes": scopes }))
        .await;
    world.client_id = client_id;
    world.client_secret = client_secret;
    let org = world
        .api(Method::POST, "/api/v1/organizations")
        .json(&json!({"name": "Acme EU", "slug": "acme-eu"}))
        .send()
        .await
        .unwrap();
    assert_eq!(org.status(), 201);
    let org: Value = org.json().await.unwrap();
    let member = world
        .api(
            Method::POST,
            &format!(
                "/api/v1/organizations/{}/members",
                org["id"].as_str().unwrap()
            ),
        )
        .json(&json!({"user_id": ada}))
        .send()
        .await
        .unwrap();
    assert_eq!(member.status(), 201);
    let claims_request = json!({"id_token": {"acr": null}}).to_string();
    let browser = world.browser();
    let code = world
        .code_for(
            &browser,
            &world.client_id,
            &scope,
            &[
                ("nonce", "n-1"),
                ("claims", &claims_request),
                ("organization", "acme-eu"),
            ],
        )
        .await;
    let (status, issued) = token_request(
        &world,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(status, 200, "{issued}");
    let granted: Vec<&str> = issued["scope"].as_str().unwrap().split(' ').collect();
    let access = issued["access_token"].as_str().unwrap().to_owned();
    let userinfo: Value = world
        .app
        .request(Method::GET, "/userinfo")
        .header("host", &world.host)
        .bearer_auth(&access)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for scope in &scopes {
        assert!(
            granted.contains(&scope.as_str()),
            "{scope} advertised but not granted: {issued}"
        );
        match scope.as_str() {
            "openid" => assert!(issued["id_token"].is_string(), "{issued}"),
            "offline_access" => assert!(issued["refresh_token"].is_string(), "{issued}"),
            "profile" => assert_eq!(userinfo["name"], "Ada Lovelace", "{userinfo}"),
            "email" => assert_eq!(userinfo["email"], world.user.as_str(), "{userinfo}"),
            "roles" => assert_eq!(userinfo["org_roles"], json!(["member"]), "{userinfo}"),
            other => panic!("scopes_supported lists {other}: add what it delivers here"),
        }
    }

    // Every advertised claim reaches the ID token or UserInfo.
    let (_, id_token) = jwt_parts(issued["id_token"].as_str().unwrap());
    for claim in list(&oidc, "claims_supported") {
        assert!(
            id_token.get(&claim).is_some() || userinfo.get(&claim).is_some(),
            "claims_supported lists {claim}, but neither the ID token {id_token} nor UserInfo \
             {userinfo} carries it"
        );
    }
    for acr in list(&oidc, "acr_values_supported") {
        assert_eq!(
            id_token["acr"],
            acr.as_str(),
            "a password sign-in reaches {acr}"
        );
    }

    // Every advertised grant type is accepted; the code and refresh grants are used for real.
    let machine = world
        .register_with(json!({
            "name": "Reports",
            "redirect_uris": [],
            "post_logout_redirect_uris": [],
            "grant_types": ["client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"],
            "allowed_scopes": ["reports:read"],
            "api_audience": "https://reports.example.com",
        }))
        .await;
    for grant in list(&oidc, "grant_types_supported") {
        let response = match grant.as_str() {
            "authorization_code" => (status, issued.clone()),
            "refresh_token" => {
                token_request(
                    &world,
                    &[
                        ("grant_type", "refresh_token"),
                        ("refresh_token", issued["refresh_token"].as_str().unwrap()),
                    ],
                )
                .await
            }
            "client_credentials" => {
                let response = world
                    .app
                    .request(Method::POST, "/oauth/token")
                    .header("host", &world.host)
                    .basic_auth(&machine.0, Some(&machine.1))
                    .form(&[("grant_type", "client_credentials")])
                    .send()
                    .await
                    .unwrap();
                (response.status().as_u16(), response.json().await.unwrap())
            }
            "urn:ietf:params:oauth:grant-type:device_code" => {
                crate::device::approved_device_tokens(&world).await
            }
            "urn:ietf:params:oauth:grant-type:token-exchange" => {
                // The machine exchanges its own token (down-scoping, nobody new acts).
                let machine_token = |form: Vec<(&'static str, String)>| {
                    world
                        .app
                        .request(Method::POST, "/oauth/token")
                        .header("host", &world.host)
                        .basic_auth(&machine.0, Some(&machine.1))
                        .form(&form)
                        .send()
                };
                let own: Value = machine_token(vec![("grant_type", "client_credentials".into())])
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let response = machine_token(vec![
                    ("grant_type", grant.clone()),
                    (
                        "subject_token",
                        own["access_token"].as_str().unwrap().to_owned(),
                    ),
                    (
                        "subject_token_type",
                        "urn:ietf:params:oauth:token-type:access_token".into(),
                    ),
                ])
                .await
                .unwrap();
                (response.status().as_u16(), response.json().await.unwrap())
            }
            other => panic!("grant_types_supported lists {other}: add its request here"),
        };
        assert_eq!(response.0, 200, "{grant}: {}", response.1);
        assert!(response.1["access_token"].is_string(), "{grant}");
    }
    // Grants that are not advertised are refused as unsupported, not half-handled.
    let advertised = list(&oidc, "grant_types_supported");
    for grant in [
        "password",
        "implicit",
        "urn:ietf:params:oauth:grant-type:device_code",
        "urn:ietf:params:oauth:grant-type:token-exchange",
        "urn:openid:params:grant-type:ciba",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "urn:ietf:params:oauth:grant-type:saml2-bearer",
    ] {
        if advertised.iter().any(|g| g == grant) {
            continue;
        }
        let (status, body) = token_request(&world, &[("grant_type", grant)]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("unsupported_grant_type")),
            "{grant} is not advertised: {body}"
        );
    }
    world.shutdown().await;
}

/// Opens the authorization endpoint in a fresh browser with the world's application and
/// `params` (which override the defaults: code, S256, `openid`); the `Location` it answers.
async fn authorize(world: &World, params: &[(&str, &str)]) -> String {
    let mut query = vec![
        ("response_type", "code"),
        ("client_id", world.client_id.as_str()),
        ("redirect_uri", REDIRECT),
        ("scope", "openid"),
        ("state", "st"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    for (name, value) in params {
        query.retain(|(n, _)| n != name);
        query.push((name, value));
    }
    let mut encoded = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in &query {
        encoded.append_pair(name, value);
    }
    let page = world
        .browser()
        .get(&format!("/oauth/authorize?{}", encoded.finish()))
        .await;
    assert_eq!(page.status, 303, "{params:?}: {}", page.body);
    page.location().unwrap()
}

/// Accepted: the request goes on to sign-in (nobody is signed in in a fresh browser).
fn accepted(location: &str, what: &str) {
    assert!(
        location.starts_with("/auth/sign-in?"),
        "{what} is advertised but refused: {location}"
    );
}

/// Refused with `error` at the application's redirect URI.
fn refused(location: &str, error: &str, what: &str) {
    assert!(location.starts_with(REDIRECT), "{what}: {location}");
    assert_eq!(
        param(location, "error").as_deref(),
        Some(error),
        "{what}: {location}"
    );
}

#[tokio::test]
async fn advertised_authorization_request_values_are_accepted_and_the_others_refused() {
    let world = World::new(Backend::Sqlite, Setup::default()).await;
    let (oidc, _, _) = documents(&world).await;

    let types = list(&oidc, "response_types_supported");
    for value in &types {
        accepted(&authorize(&world, &[("response_type", value)]).await, value);
    }
    for value in ["token", "id_token", "code id_token", "code token", "none"] {
        if !types.iter().any(|t| t == value) {
            let location = authorize(&world, &[("response_type", value)]).await;
            refused(&location, "unsupported_response_type", value);
        }
    }

    let modes = list(&oidc, "response_modes_supported");
    for value in &modes {
        accepted(&authorize(&world, &[("response_mode", value)]).await, value);
    }
    for value in ["fragment", "form_post"] {
        if !modes.iter().any(|m| m == value) {
            let location = authorize(&world, &[("response_mode", value)]).await;
            refused(&location, "invalid_request", value);
        }
    }

    let methods = list(&oidc, "code_challenge_methods_supported");
    for value in &methods {
        let location = authorize(&world, &[("code_challenge_method", value)]).await;
        accepted(&location, value);
    }
    if !methods.iter().any(|m| m == "plain") {
        let location = authorize(
            &world,
            &[
                ("code_challenge_method", "plain"),
                ("code_challenge", VERIFIER),
            ],
        )
        .await;
        refused(&location, "invalid_request", "plain");
    }

    for prompt in list(&oidc, "prompt_values_supported") {
        let location = authorize(&world, &[("prompt", &prompt)]).await;
        if prompt == "none" {
            // Accepted, and answered as OIDC Core §3.1.2.6 says when nobody is signed in.
            refused(&location, "login_required", "prompt=none without a session");
        } else {
            accepted(&location, &prompt);
        }
    }
    for acr in list(&oidc, "acr_values_supported") {
        accepted(&authorize(&world, &[("acr_values", &acr)]).await, &acr);
    }
    if oidc["claims_parameter_supported"] == true {
        let claims = json!({"userinfo": {"email": null}}).to_string();
        accepted(&authorize(&world, &[("claims", &claims)]).await, "claims");
    }
    // What the documents say is not supported is refused with the matching error.
    if oidc["request_parameter_supported"] == false {
        let location = authorize(&world, &[("request", "eyJhbGciOiJub25lIn0.e30.")]).await;
        refused(&location, "request_not_supported", "request");
    }
    if oidc["request_parameter_supported"] == true {
        // RFC 9101: every advertised algorithm signs a request object the endpoint takes, and
        // an unsigned one is refused on a page (its redirect_uri cannot be trusted).
        for alg in list(&oidc, "request_object_signing_alg_values_supported") {
            let (jwk, sign) = client_signer(&alg, "oauth-authz-req+jwt");
            let (client_id, _) = world
                .register_with(json!({"name": format!("JAR {alg}"), "jwks": {"keys": [jwk]}}))
                .await;
            let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
            let token = sign(&json!({
                "iss": client_id, "aud": world.issuer(), "exp": now + 60,
                "response_type": "code", "redirect_uri": REDIRECT, "scope": "openid",
                "state": "st", "code_challenge": CHALLENGE, "code_challenge_method": "S256",
            }));
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            query
                .append_pair("client_id", &client_id)
                .append_pair("request", &token);
            let page = world
                .browser()
                .get(&format!("/oauth/authorize?{}", query.finish()))
                .await;
            assert_eq!(page.status, 303, "{alg}: {}", page.body);
            accepted(&page.location().unwrap(), &alg);
        }
        let path = format!(
            "/oauth/authorize?client_id={}&request=eyJhbGciOiJub25lIn0.e30.",
            world.client_id
        );
        let page = world.browser().get(&path).await;
        assert_eq!(page.status, 400, "{}", page.body);
        assert!(
            page.body.contains("invalid_request_object"),
            "{}",
            page.body
        );
    }
    if oidc["request_uri_parameter_supported"] == false {
        // OIDC Core §6.2 request_uri (fetched by URL) is refused even while PAR is served: it is
        // not PAR's (RFC 9126 §5).
        let location = authorize(&world, &[("request_uri", "urn:example:x")]).await;
        refused(&location, "request_uri_not_supported", "request_uri");
    }
    // RFC 9126: a PAR request_uri that was never pushed is an error page, never a redirect; and
    // the plain requests accepted above are accepted only where pushed ones are not required.
    if oidc.get("pushed_authorization_request_endpoint").is_some() {
        assert_eq!(oidc["require_pushed_authorization_requests"], false);
        let path = format!(
            "/oauth/authorize?client_id={}&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Apr_none",
            world.client_id
        );
        let page = world.browser().get(&path).await;
        assert_eq!(page.status, 400, "{}", page.body);
        assert!(page.body.contains("invalid_request_uri"), "{}", page.body);
    }
    world.shutdown().await;
}

/// Registers an application through the management API and returns its answer (201 asserted).
/// Signs claims as a compact JWS.
type Signer = Box<dyn Fn(&Value) -> String>;

/// A public JWK and a signer of client JWTs with header `typ` for `alg`: our own keys for the
/// algorithms svc signs with, jsonwebtoken's RSA-PSS over an RSA key for PS256.
fn client_signer(alg: &str, typ: &'static str) -> (Value, Signer) {
    use svc_crypto::SigningKey;
    use svc_domain::SigningAlg;
    let ours = |alg: SigningAlg| {
        let key = SigningKey::generate(alg).unwrap();
        let jwk = key.public_jwk();
        let sign: Signer = Box::new(move |claims| key.sign_jwt(typ, claims).unwrap());
        (jwk, sign)
    };
    match alg {
        "ES256" => ours(SigningAlg::Es256),
        "EdDSA" => ours(SigningAlg::EdDsa),
        "RS256" => ours(SigningAlg::Rs256),
        "PS256" => {
            let key = SigningKey::generate(SigningAlg::Rs256).unwrap();
            let mut jwk = key.public_jwk();
            // The same RSA key, declared for no algorithm in particular.
            jwk.as_object_mut().unwrap().remove("alg");
            let der = key.to_pkcs8().unwrap();
            let pem = format!(
                "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                base64::engine::general_purpose::STANDARD.encode(der.as_slice())
            );
            let encoding = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap();
            let kid = key.kid().to_owned();
            let sign: Signer = Box::new(move |claims| {
                let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::PS256);
                header.kid = Some(kid.clone());
                header.typ = Some(typ.into());
                jsonwebtoken::encode(&header, claims, &encoding).unwrap()
            });
            (jwk, sign)
        }
        other => panic!("{other} is advertised for client signatures: add a signer for it here"),
    }
}

async fn register(world: &World, body: Value) -> Value {
    let response = world
        .api(Method::POST, "/api/v1/applications")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let created: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{body}: {created}");
    created
}

fn machine_app(method: &str) -> Value {
    json!({
        "name": format!("Machine ({method})"),
        "redirect_uris": [],
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": method,
        "allowed_scopes": ["reports:read"],
        "api_audience": "https://reports.example.com",
        "first_party": false,
    })
}

#[tokio::test]
async fn advertised_client_authentication_methods_signing_algorithms_and_subject_types_work() {
    let world = World::new(Backend::Sqlite, Setup::default()).await;
    let (oidc, _, _) = documents(&world).await;
    let issuer = world.issuer();
    let token = |form: Vec<(String, String)>, basic: Option<(String, String)>| {
        let mut request = world
            .app
            .request(Method::POST, "/oauth/token")
            .header("host", &world.host)
            .form(&form);
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    let cc = || vec![("grant_type".to_owned(), "client_credentials".to_owned())];

    let signing_algs = list(&oidc, "token_endpoint_auth_signing_alg_values_supported");
    for method in list(&oidc, "token_endpoint_auth_methods_supported") {
        match method.as_str() {
            "client_secret_basic" => {
                let created = register(&world, machine_app(&method)).await;
                let id = created["client_id"].as_str().unwrap().to_owned();
                let secret = created["client_secret"].as_str().unwrap().to_owned();
                let (status, body) = token(cc(), Some((id, secret))).await;
                assert_eq!(status, 200, "{method}: {body}");
            }
            "client_secret_post" => {
                let created = register(&world, machine_app(&method)).await;
                let mut form = cc();
                for field in ["client_id", "client_secret"] {
                    form.push((
                        field.to_owned(),
                        created[field].as_str().unwrap().to_owned(),
                    ));
                }
                let (status, body) = token(form, None).await;
                assert_eq!(status, 200, "{method}: {body}");
            }
            "private_key_jwt" => {
                assert!(
                    !signing_algs.is_empty(),
                    "private_key_jwt needs its algorithms"
                );
                for alg in &signing_algs {
                    let (jwk, sign) = client_signer(alg, "JWT");
                    let mut body = machine_app(&method);
                    body["jwks"] = json!({"keys": [jwk]});
                    let created = register(&world, body).await;
                    let id = created["client_id"].as_str().unwrap();
                    let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
                    let assertion = sign(
                        &json!({"iss": id, "sub": id, "aud": issuer, "jti": format!("jti-{alg}"), "iat": now, "exp": now + 60}),
                    );
                    let mut form = cc();
                    form.push((
                        "client_assertion_type".to_owned(),
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                    ));
                    form.push(("client_assertion".to_owned(), assertion));
                    let (status, body) = token(form, None).await;
                    assert_eq!(status, 200, "{method} with {alg}: {body}");
                }
            }
            "none" => {
                let created = register(
                    &world,
                    json!({
                        "name": "Public",
                        "redirect_uris": [REDIRECT],
                        "grant_types": ["authorization_code"],
                        "token_endpoint_auth_method": "none",
                        "allowed_scopes": ["openid"],
                        "first_party": false,
                    }),
                )
                .await;
                let form = [
                    ("grant_type", "authorization_code"),
                    ("client_id", created["client_id"].as_str().unwrap()),
                    ("code", "ac_unknown"),
                    ("redirect_uri", REDIRECT),
                    ("code_verifier", VERIFIER),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .to_vec();
                let (status, body) = token(form, None).await;
                // Past client authentication: the made-up code is what is refused.
                assert_eq!(
                    (status, body["error"].as_str()),
                    (400, Some("invalid_grant")),
                    "{method}: {body}"
                );
            }
            other => panic!("token_endpoint_auth_methods_supported lists {other}: probe it here"),
        }
    }
    for (key, methods) in [
        (
            "revocation_endpoint_auth_methods_supported",
            list(&oidc, "revocation_endpoint_auth_methods_supported"),
        ),
        (
            "introspection_endpoint_auth_methods_supported",
            list(&oidc, "introspection_endpoint_auth_methods_supported"),
        ),
    ] {
        let token_methods = list(&oidc, "token_endpoint_auth_methods_supported");
        for method in methods {
            assert!(
                token_methods.contains(&method),
                "{key} lists {method}, which the token endpoint (whose authentication these \
                 endpoints share) does not offer"
            );
        }
    }

    // ID tokens are signed with every advertised algorithm, and subjects are public for
    // first-party applications and pairwise for third-party ones.
    let ada = user_id(&world).await;
    let browser = world.browser();
    let subject_types = list(&oidc, "subject_types_supported");
    for alg in list(&oidc, "id_token_signing_alg_values_supported") {
        for subject_type in &subject_types {
            let first_party = match subject_type.as_str() {
                "public" => true,
                "pairwise" => false,
                other => panic!("subject_types_supported lists {other}: probe it here"),
            };
            let (id, secret) = world
                .register_with(json!({
                    "name": format!("{alg} {subject_type}"),
                    "first_party": first_party,
                    "id_token_signed_response_alg": alg,
                }))
                .await;
            let code = world.code_for(&browser, &id, "openid", &[]).await;
            let response = world.redeem_as(&code, &id, &secret).await;
            let issued: Value = response.json().await.unwrap();
            let (header, claims) = jwt_parts(issued["id_token"].as_str().unwrap());
            assert_eq!(header["alg"], alg.as_str(), "{issued}");
            let sub = claims["sub"].as_str().unwrap();
            assert_eq!(
                sub == ada,
                first_party,
                "{subject_type}: sub {sub}, person {ada}"
            );
        }
    }
    world.shutdown().await;
}

/// A route that needs each management scope: the scope alone gets past the permission check
/// (whatever the route then says about the empty or minimal request), any other scope is
/// refused with `insufficient_scope`.
const SCOPE_PROBES: &[(&str, &str, &str)] = &[
    ("applications:read", "GET", "/api/v1/applications"),
    ("applications:write", "POST", "/api/v1/applications"),
    ("users:read", "GET", "/api/v1/tenant-users"),
    ("users:write", "POST", "/api/v1/tenant-users"),
    ("organizations:read", "GET", "/api/v1/organizations"),
    ("organizations:write", "POST", "/api/v1/organizations"),
    ("policies:read", "GET", "/api/v1/roles"),
    ("policies:write", "POST", "/api/v1/roles"),
    ("agents:read", "GET", "/api/v1/agents"),
    ("agents:write", "POST", "/api/v1/agents"),
    ("audit:read", "GET", "/api/v1/audit-logs"),
    ("webhooks:read", "GET", "/api/v1/webhooks"),
    ("webhooks:write", "POST", "/api/v1/webhooks"),
];

#[tokio::test]
async fn every_scope_bearer_method_and_algorithm_of_the_protected_resource_metadata_is_served() {
    let app =
        TestApp::spawn_with(Backend::Sqlite, &[("SVC_SERVER__BASE_DOMAIN", "localhost")]).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let resource: Value = app
        .request(Method::GET, "/.well-known/oauth-protected-resource")
        .header("host", &acme.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let scopes = list(&resource, "scopes_supported");
    assert!(!scopes.is_empty());
    for scope in &scopes {
        let (_, method, path) = SCOPE_PROBES
            .iter()
            .find(|(s, _, _)| s == scope)
            .unwrap_or_else(|| {
                panic!(
                    "scopes_supported lists {scope}, but no route of the management API requires it"
                )
            });
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let send = |token: String| {
            let mut request = app
                .request(method.clone(), path)
                .header("host", &acme.host)
                .bearer_auth(token);
            if method == Method::POST {
                request = request.json(&json!({}));
            }
            async move {
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                (status, response.text().await.unwrap())
            }
        };
        let with = management_token(&app, &acme, Some(scope)).await;
        let (status, body) = send(with).await;
        assert!(
            status != 403 && status != 404 && status != 405 && status != 401,
            "{scope}: {method} {path} answers {status} to a token with the scope: {body}"
        );
        let other = scopes.iter().find(|s| *s != scope).unwrap();
        let without = management_token(&app, &acme, Some(other)).await;
        let (status, body) = send(without).await;
        assert_eq!(status, 403, "{scope}: {body}");
        assert!(body.contains("insufficient_scope"), "{scope}: {body}");
    }

    // bearer_methods_supported: the header works (above); a token anywhere else is no token.
    let methods = list(&resource, "bearer_methods_supported");
    assert_eq!(methods, ["header"], "probe the other methods here");
    let token = management_token(&app, &acme, None).await;
    let in_query = app
        .request(
            Method::GET,
            &format!("/api/v1/applications?access_token={token}"),
        )
        .header("host", &acme.host)
        .send()
        .await
        .unwrap();
    assert_eq!(in_query.status(), 401);
    let algs = list(&resource, "resource_signing_alg_values_supported");
    app.shutdown().await;

    // resource_signing_alg_values_supported: a deployment signing its access tokens with each
    // listed algorithm is served by the resource.
    for alg in algs {
        let app = TestApp::spawn_with(
            Backend::Sqlite,
            &[
                ("SVC_SERVER__BASE_DOMAIN", "localhost"),
                ("SVC_JWT__DEFAULT_ALGORITHM", &alg),
            ],
        )
        .await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let token = management_token(&app, &acme, Some("applications:read")).await;
        let (header, _) = jwt_parts(&token);
        assert_eq!(header["alg"], alg.as_str());
        let response = app
            .request(Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{alg}");
        app.shutdown().await;
    }
}

/// A DPoP proof signer for `alg` (RFC 9449 §4.2: the public key rides in the header): our own
/// keys for the algorithms svc signs with, jsonwebtoken's RSA-PSS over an RSA key for PS256.
fn proof_signer(alg: &str) -> Signer {
    use svc_crypto::SigningKey;
    use svc_domain::SigningAlg;
    let public = |key: &SigningKey| {
        let mut jwk = key.public_jwk();
        for member in ["kid", "alg", "use"] {
            jwk.as_object_mut().unwrap().remove(member);
        }
        jwk
    };
    let ours = |alg: SigningAlg| {
        let key = SigningKey::generate(alg).unwrap();
        let jwk = public(&key);
        let sign: Signer = Box::new(move |claims| {
            let mut header = serde_json::Map::new();
            header.insert("typ".into(), json!("dpop+jwt"));
            header.insert("jwk".into(), jwk.clone());
            key.sign_jws(header, claims).unwrap()
        });
        sign
    };
    match alg {
        "ES256" => ours(SigningAlg::Es256),
        "EdDSA" => ours(SigningAlg::EdDsa),
        "RS256" => ours(SigningAlg::Rs256),
        "PS256" => {
            let key = SigningKey::generate(SigningAlg::Rs256).unwrap();
            let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(public(&key)).unwrap();
            let der = key.to_pkcs8().unwrap();
            let pem = format!(
                "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                base64::engine::general_purpose::STANDARD.encode(der.as_slice())
            );
            let encoding = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap();
            Box::new(move |claims| {
                let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::PS256);
                header.typ = Some("dpop+jwt".into());
                header.jwk = Some(jwk.clone());
                jsonwebtoken::encode(&header, claims, &encoding).unwrap()
            })
        }
        other => panic!("{other} is advertised for DPoP proofs: add a signer for it here"),
    }
}

#[tokio::test]
async fn every_advertised_dpop_algorithm_binds_tokens_at_both_the_server_and_the_resource() {
    let app =
        TestApp::spawn_with(Backend::Sqlite, &[("SVC_SERVER__BASE_DOMAIN", "localhost")]).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let get = |path: &'static str| {
        app.request(Method::GET, path)
            .header("host", &acme.host)
            .send()
    };
    let oidc: Value = get("/.well-known/openid-configuration")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let resource: Value = get("/.well-known/oauth-protected-resource")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let algs = list(&oidc, "dpop_signing_alg_values_supported");
    assert!(!algs.is_empty(), "DPoP is on by default");
    assert_eq!(
        list(&resource, "dpop_signing_alg_values_supported"),
        algs,
        "the management API takes the proofs the token endpoint takes"
    );
    let token_endpoint = oidc["token_endpoint"].as_str().unwrap().to_owned();
    let api = format!("{}/applications", resource["resource"].as_str().unwrap());
    for alg in &algs {
        let sign = proof_signer(alg);
        let proof = |method: &str, url: &str, token: Option<&str>| {
            let mut claims = json!({
                "jti": format!("{alg}-{method}-{}", url.len()),
                "htm": method,
                "htu": url,
                "iat": svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp(),
            });
            if let Some(token) = token {
                claims["ath"] = json!(svc_sdk::dpop::access_token_hash(token));
            }
            sign(&claims)
        };
        let response = app
            .request(Method::POST, "/oauth/token")
            .header("host", &acme.host)
            .header("dpop", proof("POST", &token_endpoint, None))
            .basic_auth(&acme.client_id, Some(&acme.client_secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["token_type"], "DPoP", "{alg}: {body}");
        let token = body["access_token"].as_str().unwrap();
        let read = app
            .request(Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .header("authorization", format!("DPoP {token}"))
            .header("dpop", proof("GET", &api, Some(token)))
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200, "{alg}");
    }
    // Nothing weaker is advertised (the verifier refuses these: `svc-sdk` `dpop` tests).
    for alg in ["HS256", "ES384", "none"] {
        assert!(!algs.iter().any(|a| a == alg), "{alg} advertised");
    }
    app.shutdown().await;
}
