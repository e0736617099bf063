//! Client ID metadata documents over HTTP, on SQLite and PostgreSQL: a client whose
//! `client_id` is the URL of its document (served here on loopback, which a development
//! deployment may fetch) signs a person in through the code flow once the deployment and the
//! tenant accept documents, and what each switch decides (discovery, the registration-policy
//! API, the authorization and token endpoints); the document is fetched once while fresh, shown
//! by host on the consent page, and its URL is the client's id in every token; the management
//! API lists the application and refuses to change it. Then every way a document or URL is
//! refused, with nothing stored, and the tenant's hourly fetch budget.

use crate::hosted::support::{Browser, PASSWORD, REDIRECT, Setup, World, param, payload};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use svc_testkit::{BACKENDS, Backend};

/// One served answer: status, content type, `Cache-Control`, body.
#[derive(Clone)]
struct Answer {
    status: u16,
    content_type: &'static str,
    cache: &'static str,
    body: String,
}

/// A loopback web server publishing documents by path, counting requests.
#[derive(Clone, Default)]
struct Documents {
    answers: Arc<Mutex<HashMap<String, Answer>>>,
    hits: Arc<AtomicUsize>,
}

impl Documents {
    /// Serves on a fresh loopback port; returns the base URL.
    async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router = axum::Router::new()
            .fallback(answer)
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        base
    }

    fn publish(&self, path: &str, answer: Answer) {
        self.answers.lock().unwrap().insert(path.to_owned(), answer);
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn answer(State(docs): State<Documents>, request: Request) -> Response {
    docs.hits.fetch_add(1, Ordering::SeqCst);
    let found = docs
        .answers
        .lock()
        .unwrap()
        .get(request.uri().path())
        .cloned();
    let Some(a) = found else {
        return (axum::http::StatusCode::NOT_FOUND, "no such document").into_response();
    };
    let mut response = (
        axum::http::StatusCode::from_u16(a.status).unwrap(),
        [("content-type", a.content_type), ("cache-control", a.cache)],
        a.body,
    )
        .into_response();
    if a.status == 307 {
        response
            .headers_mut()
            .insert("location", "/client.json".parse().unwrap());
    }
    response
}

/// A JSON document, fresh for an hour.
fn json_answer(document: Value) -> Answer {
    Answer {
        status: 200,
        content_type: "application/json",
        cache: "max-age=3600",
        body: document.to_string(),
    }
}

/// The well-formed document of the client at `url`.
fn document(url: &str) -> Value {
    json!({
        "client_id": url,
        "client_name": "Docs Client",
        "client_uri": "https://docs-client.example",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": "openid profile offline_access",
    })
}

/// A world whose deployment accepts documents when `accepted`.
async fn world(backend: Backend, accepted: bool) -> World {
    world_with(backend, accepted, &[]).await
}

/// The same with more of the deployment's environment.
async fn world_with(
    backend: Backend,
    accepted: bool,
    more: &[(&'static str, &'static str)],
) -> World {
    let mut env = if accepted {
        vec![(
            "SVC_DYNAMIC_REGISTRATION__CLIENT_ID_METADATA_DOCUMENTS",
            "true",
        )]
    } else {
        Vec::new()
    };
    env.extend_from_slice(more);
    World::new(
        backend,
        Setup {
            env,
            ..Setup::default()
        },
    )
    .await
}

/// Sets the tenant's acceptance of documents: status and body.
async fn accept_documents(world: &World, on: bool) -> (u16, Value) {
    let response = world
        .api(Method::PUT, "/api/v1/registration-policy")
        .json(&json!({"policy": "disabled", "client_id_metadata_documents": on}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// The authorization request of the client `url` (PKCE, `state`), as a path.
fn authorize_path(world: &World, url: &str, scope: &str) -> String {
    world
        .authorize_path(scope, "st", &[])
        .replace(&world.client_id, &urlencode(url))
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// `POST /oauth/token` as the public client `url` with `form`: status and body.
async fn token(world: &World, url: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let mut form = form.to_vec();
    form.push(("client_id", url));
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .form(&form)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Signs the world's person in from `start` and allows consent: the consent page's body, and
/// where the browser is sent in the end.
async fn consent(world: &World, browser: &Browser, start: &str) -> (String, String) {
    let mut page = browser.get(start).await;
    let mut shown = None;
    for _ in 0..6 {
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        if location.starts_with(REDIRECT) {
            return (shown.expect("a consent page"), location);
        }
        page = if location.starts_with("/auth/sign-in?") {
            let interaction = param(&location, "interaction").unwrap();
            browser
                .sign_in(Some(&interaction), &world.user, PASSWORD)
                .await
        } else if location.starts_with("/auth/consent?") {
            let consent = browser.get(&location).await;
            assert_eq!(consent.status, 200);
            shown = Some(consent.body);
            browser
                .submit(&location, "/auth/consent", &[("decision", "allow")])
                .await
        } else {
            browser.get(&location).await
        };
    }
    panic!("the authorization request did not reach the application");
}

/// Asserts that the authorization request of the client `url` ends on the error page with
/// `invalid_client`, never redirected. (The reason goes to the log with the request id: the page
/// shows the code, and each reason is proved by name in svc-manage's, svc-domain's and
/// guarded_fetch's unit tests.)
async fn assert_refused(world: &World, url: &str) {
    let page = world
        .browser()
        .get(&authorize_path(world, url, "openid"))
        .await;
    assert_eq!(page.status, 400, "{url}: {}", page.body);
    assert!(
        page.body.contains("<dd>invalid_client</dd>"),
        "{url}: {}",
        page.body
    );
    assert!(page.location().is_none(), "{url}: never redirected");
}

/// The tenant's applications, by `client_id_metadata_document`.
async fn applications(world: &World) -> Vec<Value> {
    let body: Value = world
        .api(Method::GET, "/api/v1/applications?limit=100")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["items"].as_array().unwrap().clone()
}

async fn advertised(world: &World) -> Option<Value> {
    world
        .discovery()
        .await
        .get("client_id_metadata_document_supported")
        .cloned()
}

#[tokio::test]
async fn a_client_known_by_its_document_signs_a_person_in_once_both_switches_are_on() {
    for backend in BACKENDS {
        let world = world(backend, true).await;
        let docs = Documents::default();
        let base = docs.serve().await;
        let url = format!("{base}/client.json");
        docs.publish("/client.json", json_answer(document(&url)));

        // The deployment accepts documents; the tenant has not turned them on: unknown, and
        // nothing fetched.
        assert_eq!(advertised(&world).await, None, "{backend:?}");
        let browser = world.browser();
        let refused = browser.get(&authorize_path(&world, &url, "openid")).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(
            refused.body.contains("<dd>invalid_client</dd>"),
            "{}",
            refused.body
        );
        assert_eq!(
            docs.hits(),
            0,
            "a tenant that does not accept documents fetches none"
        );

        let (status, policy) = accept_documents(&world, true).await;
        assert_eq!(status, 200, "{policy}");
        assert_eq!(
            policy,
            json!({"policy": "disabled", "client_id_metadata_documents": true,
                "software_statement_issuers": []})
        );
        assert_eq!(advertised(&world).await, Some(json!(true)));
        let openid = world.discovery().await;
        assert!(
            openid.get("registration_endpoint").is_none(),
            "documents open no registration"
        );

        // The code flow: the consent page names the client and the host that published it.
        let start = authorize_path(&world, &url, "openid profile offline_access");
        let (consent_page, location) = consent(&world, &browser, &start).await;
        assert!(consent_page.contains("Docs Client"), "{consent_page}");
        let host = base.trim_start_matches("http://");
        assert!(consent_page.contains(host), "{consent_page}");
        assert!(location.starts_with(REDIRECT), "{location}");
        let code = param(&location, "code").unwrap();
        let (status, tokens) = token(
            &world,
            &url,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", crate::hosted::support::VERIFIER),
            ],
        )
        .await;
        assert_eq!(status, 200, "{tokens}");
        let id_token = payload(tokens["id_token"].as_str().unwrap());
        assert_eq!(id_token["aud"], url.as_str(), "{id_token}");
        let access = payload(tokens["access_token"].as_str().unwrap());
        assert_eq!(access["client_id"], url.as_str(), "{access}");

        // UserInfo finds the person behind the URL client's token.
        let userinfo = world
            .app
            .request(Method::GET, "/userinfo")
            .header("host", &world.host)
            .bearer_auth(tokens["access_token"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(userinfo.status(), 200);
        let claims: Value = userinfo.json().await.unwrap();
        assert_eq!(claims["sub"], id_token["sub"]);

        // Refresh as the same public client; then revoke the new refresh token.
        let refresh = tokens["refresh_token"].as_str().unwrap();
        let (status, refreshed) = token(
            &world,
            &url,
            &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        )
        .await;
        assert_eq!(status, 200, "{refreshed}");
        assert_eq!(
            payload(refreshed["access_token"].as_str().unwrap())["client_id"],
            url.as_str()
        );
        let revoked = world
            .app
            .request(Method::POST, "/oauth/revoke")
            .header("host", &world.host)
            .form(&[
                ("client_id", url.as_str()),
                ("token", refreshed["refresh_token"].as_str().unwrap()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 200);

        // A second authorization within the document's freshness fetches nothing.
        let again = browser.get(&authorize_path(&world, &url, "openid")).await;
        assert_eq!(again.status, 303, "{}", again.body);
        assert_eq!(docs.hits(), 1, "fetched once while fresh");

        // The management API lists it (its id is its own, the URL beside it), third-party,
        // created by the client itself, and refuses to change it.
        let apps = applications(&world).await;
        let app = apps
            .iter()
            .find(|a| a["client_id_metadata_document"] == url.as_str())
            .unwrap_or_else(|| panic!("{apps:?}"));
        assert_eq!(app["name"], "Docs Client");
        assert_eq!(app["first_party"], false);
        assert_eq!(app["token_endpoint_auth_method"], "none");
        let id = app["client_id"].as_str().unwrap();
        assert!(id.starts_with("app_"), "{id}");
        let audit: Value = world
            .api(Method::GET, &format!("/api/v1/audit-logs?target={id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            audit["items"][0]["action"], "application.created",
            "{audit}"
        );
        assert_eq!(audit["items"][0]["actor"], format!("client:{id}"));
        let changed = world
            .api(Method::PUT, &format!("/api/v1/applications/{id}"))
            .json(&json!({
                "name": "Renamed",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "none",
                "allowed_scopes": ["openid"],
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), 403);

        // The tenant turns documents off: the client is unknown again, at every endpoint.
        let (status, _) = accept_documents(&world, false).await;
        assert_eq!(status, 200);
        assert_eq!(advertised(&world).await, None);
        let unknown = browser.get(&authorize_path(&world, &url, "openid")).await;
        assert_eq!(unknown.status, 400);
        let (status, body) = token(
            &world,
            &url,
            &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("invalid_client")),
            "{body}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn every_unusable_document_is_refused_by_name_and_nothing_is_stored() {
    for backend in BACKENDS {
        let world = world(backend, true).await;
        let (status, _) = accept_documents(&world, true).await;
        assert_eq!(status, 200);
        let docs = Documents::default();
        let base = docs.serve().await;
        let before = applications(&world).await.len();
        let with = |path: &str, change: &dyn Fn(&mut Value)| {
            let mut doc = document(&format!("{base}{path}"));
            change(&mut doc);
            json_answer(doc)
        };
        // Each broken the way its path says (the reason each gives is in the comment).
        let cases: Vec<(&str, Answer)> = vec![
            // "…client_id is not the URL it was fetched from"
            (
                "/other-id.json",
                with("/other-id.json", &|d| {
                    d["client_id"] = json!("https://elsewhere.example/c")
                }),
            ),
            (
                "/secret.json",
                with("/secret.json", &|d| d["client_secret"] = json!("s3cret")),
            ),
            (
                "/grant.json",
                with("/grant.json", &|d| {
                    d["grant_types"] = json!(["client_credentials"])
                }),
            ),
            (
                "/no-redirects.json",
                with("/no-redirects.json", &|d| {
                    d.as_object_mut().unwrap().remove("redirect_uris");
                }),
            ),
            (
                "/management.json",
                with("/management.json", &|d| {
                    d["scope"] = json!("openid users:write")
                }),
            ),
            // "client_id did not answer with a JSON content type"
            (
                "/html.json",
                Answer {
                    content_type: "text/html",
                    ..with("/html.json", &|_| {})
                },
            ),
            // "client_id document is larger than 16 KiB"
            (
                "/huge.json",
                with("/huge.json", &|d| {
                    d["client_uri"] = json!("x".repeat(20_000))
                }),
            ),
            // "client_id answered 307": redirects are not followed.
            (
                "/moved.json",
                Answer {
                    status: 307,
                    ..with("/moved.json", &|_| {})
                },
            ),
        ];
        for (path, answer) in cases {
            docs.publish(path, answer);
            assert_refused(&world, &format!("{base}{path}")).await;
        }
        // "client_id answered 404"
        assert_refused(&world, &format!("{base}/missing.json")).await;
        // A URL that breaks the draft's rules (fragment, query, dot segments, scheme) is
        // refused before any fetch.
        let hits = docs.hits();
        for bad in [
            format!("{base}/client.json#frag"),
            format!("{base}/client.json?x=1"),
            format!("{base}/a/../client.json"),
            "ftp://127.0.0.1/client.json".to_owned(),
        ] {
            assert_refused(&world, &bad).await;
        }
        assert_eq!(docs.hits(), hits, "refused URLs are not fetched");

        // A good document and a redirect URI it does not list: refused on the page.
        let url = format!("{base}/client.json");
        docs.publish("/client.json", json_answer(document(&url)));
        let wrong = world
            .browser()
            .get(&authorize_path(&world, &url, "openid").replace(
                &urlencode(REDIRECT),
                &urlencode("https://attacker.example/cb"),
            ))
            .await;
        assert_eq!(wrong.status, 400, "{}", wrong.body);
        assert!(wrong.location().is_none());
        assert_eq!(
            applications(&world).await.len(),
            before + 1,
            "only the good document became an application"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_deployment_that_does_not_accept_documents_lets_no_tenant_turn_them_on() {
    let world = world(svc_testkit::Backend::Sqlite, false).await;
    let (status, body) = accept_documents(&world, true).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.to_string().contains("client_id_metadata_documents"),
        "{body}"
    );
    let read: Value = world
        .api(Method::GET, "/api/v1/registration-policy")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(read["client_id_metadata_documents"], false);
    assert_eq!(advertised(&world).await, None);
    assert_refused(&world, "http://127.0.0.1:9/client.json").await;
    world.shutdown().await;
}

#[tokio::test]
async fn past_the_hourly_fetch_budget_new_documents_are_refused_unfetched() {
    for backend in BACKENDS {
        let world = world_with(
            backend,
            true,
            &[(
                "SVC_DYNAMIC_REGISTRATION__MAX_DOCUMENT_FETCHES_PER_HOUR",
                "2",
            )],
        )
        .await;
        let (status, _) = accept_documents(&world, true).await;
        assert_eq!(status, 200);
        let docs = Documents::default();
        let base = docs.serve().await;
        let urls: Vec<String> = (1..=3).map(|n| format!("{base}/client-{n}.json")).collect();
        for (n, url) in urls.iter().enumerate() {
            let doc = document(url);
            docs.publish(&format!("/client-{}.json", n + 1), json_answer(doc));
        }
        // The first two spend the budget; the third is refused without a fetch.
        for url in &urls[..2] {
            let page = world
                .browser()
                .get(&authorize_path(&world, url, "openid"))
                .await;
            assert_eq!(page.status, 303, "{backend:?} {url}: {}", page.body);
        }
        assert_eq!(docs.hits(), 2);
        assert_refused(&world, &urls[2]).await;
        assert_eq!(docs.hits(), 2, "nothing fetched past the budget");
        let known = applications(&world)
            .await
            .iter()
            .filter(|a| a["client_id_metadata_document"].is_string())
            .count();
        assert_eq!(known, 2, "{backend:?}");
        world.shutdown().await;
    }
}
