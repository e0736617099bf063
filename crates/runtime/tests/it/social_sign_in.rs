//! Social sign-in end to end (issue 20 item 3), on both backends, against the provider built
//! for the tests (`social_support`): an OpenID provider configured as a generic `oidc`
//! provider, and a GitHub-style OAuth 2.0 server configured through the `github` preset with a
//! GitHub Enterprise base URL (so the preset's own paths, client authentication and e-mail
//! list are what is exercised).
//!
//! Covered: the buttons on the sign-in page; just-in-time creation from GitHub's verified
//! primary address with an authorization request continued to the application (`amr` `fed`);
//! the same account signing in again; an existing person's address vouched for by a provider
//! waiting for that person to sign in and confirm (never linked silently); an unverified
//! address colliding with an account refused, and one making a new account refused too; connecting and disconnecting from the account
//! page, an upstream account already someone else's, the last way to sign in kept; a person
//! with an authenticator asked for it after the provider; a
//! `form_post` answer relayed so the cookie travels; the login history's method; and the
//! attacks: a `state` from another browser, a replayed callback, a mix-up `iss`, an upstream
//! error, an ID token for another audience, unknown providers.

use crate::enterprise_sso::{Side, json, refresh_target, userinfo};
use crate::hosted::support::{Browser, PASSWORD, Page, REDIRECT, param};
use crate::social_support::{Person, SECRET, SocialProvider};
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

/// A plain client without cookies or redirects: the provider's side of the browser, and a
/// cross-site POST (which carries no `SameSite=Lax` cookie).
fn bare() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Presses the button of `slug` on the sign-in page (of `interaction`): the page that moves
/// on to the provider.
async fn press(browser: &Browser, interaction: Option<&str>, slug: &str) -> Page {
    let path = match interaction {
        Some(i) => format!("/auth/sign-in?interaction={i}"),
        None => "/auth/sign-in".to_owned(),
    };
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body
            .contains(&format!("name=\"provider\" value=\"{slug}\"")),
        "{}",
        page.body
    );
    let csrf = page.field("csrf").unwrap();
    let mut form = vec![("csrf", csrf.as_str()), ("provider", slug)];
    if let Some(i) = interaction {
        form.push(("interaction", i));
    }
    browser.post("/auth/social/start", &form).await
}

/// Where the provider sends the browser back (its authorization endpoint approves at once).
async fn at_provider(started: &Page) -> String {
    let url = refresh_target(started);
    let answer = bare().get(&url).send().await.unwrap();
    assert_eq!(answer.status(), 303, "{url}");
    answer.headers()["location"].to_str().unwrap().to_owned()
}

/// The whole round from the sign-in page: the callback's answer and its URL.
async fn round(browser: &Browser, interaction: Option<&str>, slug: &str) -> (Page, String) {
    let callback = at_provider(&press(browser, interaction, slug).await).await;
    (browser.get(&callback).await, callback)
}

/// The tenant's users with `email`.
async fn users_with(side: &Side, email: &str) -> Vec<Value> {
    let (status, users) = json(
        side.api(M::GET, "/api/v1/tenant-users?limit=100")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{users}");
    users["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["email"] == email)
        .cloned()
        .collect()
}

/// Configures the provider `slug` with `body`.
async fn configure(side: &Side, slug: &str, body: Value) {
    let (status, view) = json(
        side.api(M::PUT, &format!("/api/v1/social-providers/{slug}"))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{view}");
    assert!(!view.to_string().contains(SECRET), "{view}");
}

/// The connected-accounts page of a signed-in browser, submitted with `field=value`.
async fn connections(browser: &Browser, field: &str, value: &str) -> Page {
    browser
        .submit(
            "/auth/account/connections",
            "/auth/account/connections",
            &[(field, value)],
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_sign_in_with_social_providers_and_attacks_are_refused() {
    for backend in BACKENDS {
        let side = Side::start(
            backend,
            &[
                ("SVC_SOCIAL__ENABLED", "true"),
                ("SVC_GENERIC_OAUTH__ENABLED", "true"),
                ("SVC_TWO_FACTOR__ENABLED", "true"),
            ],
            REDIRECT,
        )
        .await;
        let fake = SocialProvider::start().await;
        configure(
            &side,
            "corp",
            json!({"preset": "oidc", "issuer": fake.base, "display_name": "Corp ID",
                   "client_id": "svc-client", "client_secret": SECRET}),
        )
        .await;
        configure(
            &side,
            "github",
            json!({"preset": "github", "base_url": fake.base,
                   "client_id": "gh-client", "client_secret": SECRET}),
        )
        .await;

        // Just in time from GitHub, for an authorization request of the application.
        fake.sign_in_as(Person::new("583231", "ada@example.com", true));
        let ada = side.browser();
        let start = ada.get(&side.authorize_path("openid email")).await;
        let to_sign_in = start.location().unwrap();
        let interaction = param(&to_sign_in, "interaction").unwrap();
        let (page, callback) = round(&ada, Some(&interaction), "github").await;
        let next = refresh_target(&page);
        assert!(next.starts_with("/oauth/authorize/resume"), "{next}");
        let to_client = ada.get(&next).await;
        let location = to_client.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        let (status, tokens) = side.redeem(&param(&location, "code").unwrap()).await;
        assert_eq!(status, 200, "{tokens}");
        let id_token = crate::enterprise_sso::decode(tokens["id_token"].as_str().unwrap());
        assert_eq!(id_token["amr"], json!(["fed"]), "{id_token}");
        let created = users_with(&side, "ada@example.com").await;
        assert_eq!(created.len(), 1);
        assert_eq!(
            created[0]["email_verified"], true,
            "GitHub's verified primary"
        );
        let ada_id = created[0]["id"].as_str().unwrap().to_owned();
        // GitHub's habits: the secret in the body, never HTTP Basic.
        let github_requests: Vec<Value> = fake
            .token_requests()
            .into_iter()
            .filter(|r| r["kind"] == "github")
            .collect();
        assert_eq!(github_requests.len(), 1);
        assert_eq!(github_requests[0]["body_secret"], true);
        assert_eq!(github_requests[0]["basic"], false);
        // The callback once more: spent.
        assert_eq!(ada.get(&callback).await.status, 400);

        // The same GitHub account in another browser: the same person.
        let again = side.browser();
        let (page, _) = round(&again, None, "github").await;
        assert_eq!(refresh_target(&page), "/auth/account");
        assert!(again.cookie("svc_session").is_some());
        assert_eq!(userinfo(&side, &again).await["sub"], ada_id);
        assert_eq!(users_with(&side, "ada@example.com").await.len(), 1);
        let (status, history) = json(
            side.api(
                M::GET,
                &format!("/api/v1/tenant-users/{ada_id}/login-history"),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{history}");
        assert_eq!(history["items"][0]["method"], "social", "{history}");

        // An existing person's address, vouched for: a link waits for them to confirm.
        side.person("alice@example.com", true).await;
        fake.sign_in_as(Person::new("corp-alice", "alice@example.com", true));
        let alice = side.browser();
        let (page, _) = round(&alice, None, "corp").await;
        assert_eq!(refresh_target(&page), "/auth/social/link");
        assert!(
            alice.cookie("svc_session").is_none(),
            "never signed in silently"
        );
        assert!(alice.cookie("svc_social_link").is_some());
        let asked = alice.get("/auth/social/link").await;
        assert_eq!(asked.status, 200, "{}", asked.body);
        assert!(asked.body.contains("alice@example.com"), "{}", asked.body);
        assert!(!asked.body.contains("name=\"decision\""), "sign in first");
        let signed_in = alice.sign_in(None, "alice@example.com", PASSWORD).await;
        assert_eq!(signed_in.location().as_deref(), Some("/auth/social/link"));
        let confirmed = alice
            .submit(
                "/auth/social/link",
                "/auth/social/link",
                &[("decision", "connect")],
            )
            .await;
        assert_eq!(confirmed.status, 200, "{}", confirmed.body);
        assert!(confirmed.body.contains("Corp ID"), "{}", confirmed.body);
        // From now on the provider signs Alice in directly.
        let later = side.browser();
        let (page, _) = round(&later, None, "corp").await;
        assert_eq!(refresh_target(&page), "/auth/account");
        let alice_id = users_with(&side, "alice@example.com").await[0]["id"].clone();
        assert_eq!(userinfo(&side, &later).await["sub"], alice_id);
        assert!(
            fake.token_requests()
                .iter()
                .any(|r| r["kind"] == "oidc" && r["basic"] == true && r["body_secret"] == false)
        );

        // Alice adds an authenticator: the provider is then her first factor only.
        let setup = later
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "setup")],
            )
            .await;
        assert_eq!(setup.status, 200, "{}", setup.body);
        let marker = "<dt>Key</dt><dd>";
        let at = setup.body.find(marker).unwrap() + marker.len();
        let key = setup.body[at..at + setup.body[at..].find("</dd>").unwrap()].to_owned();
        let confirmed = later
            .post(
                "/auth/account/two-factor",
                &[
                    ("csrf", &setup.field("csrf").unwrap()),
                    ("factor", &setup.field("factor").unwrap()),
                    ("action", "confirm"),
                    ("code", &crate::hosted::two_factor::totp(&key, 0)),
                ],
            )
            .await;
        assert_eq!(confirmed.status, 200, "{}", confirmed.body);
        let second = side.browser();
        let (page, _) = round(&second, None, "corp").await;
        assert_eq!(refresh_target(&page), "/auth/second-factor");
        assert!(
            second.cookie("svc_session").is_none(),
            "not before the code"
        );
        let done = second
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                // The next step's code: the one confirming the authenticator is spent.
                &[("code", &crate::hosted::two_factor::totp(&key, 30))],
            )
            .await;
        assert_eq!(
            done.location().as_deref(),
            Some("/auth/account"),
            "{}",
            done.body
        );
        assert_eq!(userinfo(&side, &second).await["sub"], alice_id);
        // Her history says what she did: the provider, then the app's code (no password).
        let (status, history) = json(
            side.api(
                M::GET,
                &format!(
                    "/api/v1/tenant-users/{}/login-history",
                    alice_id.as_str().unwrap()
                ),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{history}");
        assert_eq!(history["items"][0]["method"], "social_totp", "{history}");

        // A link waiting for Alice is not confirmed by someone else signed in.
        side.person("mallory@example.com", true).await;
        fake.sign_in_as(Person::new("corp-alice-2", "alice@example.com", true));
        let mallory = side.browser();
        let (page, _) = round(&mallory, None, "corp").await;
        assert_eq!(refresh_target(&page), "/auth/social/link");
        mallory.sign_in(None, "mallory@example.com", PASSWORD).await;
        let refused = mallory.get("/auth/social/link").await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        let csrf = refused.field("csrf").unwrap_or_default();
        let forced = mallory
            .post(
                "/auth/social/link",
                &[("csrf", csrf.as_str()), ("decision", "connect")],
            )
            .await;
        assert_ne!(forced.status, 200, "{}", forced.body);

        // An address the provider does not vouch for, colliding with an account: refused.
        side.person("bob@example.com", true).await;
        fake.sign_in_as(Person::new("corp-bob", "bob@example.com", false));
        for _ in 0..2 {
            let b = side.browser();
            let (page, _) = round(&b, None, "corp").await;
            assert_eq!(page.status, 409, "{}", page.body);
            assert!(b.cookie("svc_session").is_none());
        }

        // A new address the provider does not vouch for makes no account either.
        fake.sign_in_as(Person::new("corp-zed", "zed@example.com", false));
        let (page, _) = round(&side.browser(), None, "corp").await;
        assert_eq!(page.status, 401, "{}", page.body);
        assert!(users_with(&side, "zed@example.com").await.is_empty());

        // The account page: Bob connects GitHub, not someone else's GitHub, disconnects it.
        let bob = side.browser();
        bob.sign_in(None, "bob@example.com", PASSWORD).await;
        let listed = bob.get("/auth/account/connections").await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        assert!(listed.body.contains("name=\"connect\" value=\"github\""));
        fake.sign_in_as(Person::new("583231", "ada@example.com", true));
        let started = connections(&bob, "connect", "github").await;
        let back = bob.get(&at_provider(&started).await).await;
        assert_eq!(back.status, 409, "Ada's GitHub account: {}", back.body);
        fake.sign_in_as(Person::new("9001", "bob-gh@example.com", true));
        let started = connections(&bob, "connect", "github").await;
        let back = bob.get(&at_provider(&started).await).await;
        assert_eq!(back.status, 200, "{}", back.body);
        let listed = bob.get("/auth/account/connections").await;
        assert!(
            listed.body.contains("name=\"disconnect\" value=\"github\""),
            "{}",
            listed.body
        );
        let (status, links) = json(
            side.api(
                M::GET,
                &format!(
                    "/api/v1/tenant-users/{}/social-links",
                    users_with(&side, "bob@example.com").await[0]["id"]
                        .as_str()
                        .unwrap()
                ),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{links}");
        assert_eq!(links["items"][0]["provider"], "github", "{links}");
        let gone = connections(&bob, "disconnect", "github").await;
        assert_eq!(gone.status, 200, "{}", gone.body);
        assert!(
            !bob.get("/auth/account/connections")
                .await
                .body
                .contains("name=\"disconnect\"")
        );
        // Ada has no password: GitHub is her only way in.
        let last = connections(&again, "disconnect", "github").await;
        assert_eq!(last.status, 409, "{}", last.body);

        // Attacks.
        fake.sign_in_as(Person::new("583231", "ada@example.com", true));
        let victim = side.browser();
        let callback = at_provider(&press(&victim, None, "github").await).await;
        let attacker = side.browser();
        assert_eq!(
            attacker.get(&callback).await.status,
            400,
            "another browser's state"
        );
        let corp = side.browser();
        let callback = at_provider(&press(&corp, None, "corp").await).await;
        let mixed = callback.replace(
            &format!(
                "iss={}",
                url::form_urlencoded::byte_serialize(fake.base.as_bytes()).collect::<String>()
            ),
            "iss=https%3A%2F%2Fevil.example",
        );
        assert_ne!(mixed, callback);
        assert_eq!(corp.get(&mixed).await.status, 401, "mix-up iss");
        let corp = side.browser();
        let callback = at_provider(&press(&corp, None, "corp").await).await;
        let state = param(&callback, "state").unwrap();
        let denied = corp
            .get(&format!(
                "/auth/social/callback?error=access_denied&state={state}"
            ))
            .await;
        assert_eq!(denied.status, 401, "{}", denied.body);
        fake.answer_for_audience(Some("someone-else"));
        let (page, _) = round(&side.browser(), None, "corp").await;
        assert_eq!(page.status, 401, "an ID token for another client");
        fake.answer_for_audience(None);
        let b = side.browser();
        let page = b.get("/auth/sign-in").await;
        let csrf = page.field("csrf").unwrap();
        for provider in ["nope", "../corp", "", "CORP"] {
            let refused = b
                .post(
                    "/auth/social/start",
                    &[("csrf", &csrf), ("provider", provider)],
                )
                .await;
            assert_eq!(refused.status, 404, "{provider}: {}", refused.body);
        }

        // A provider answering by form_post: the cross-site POST carries no cookie, so the
        // callback relays it from our origin once.
        configure(
            &side,
            "posty",
            json!({"preset": "oidc", "issuer": fake.base, "display_name": "Posty",
                   "response_mode": "form_post",
                   "client_id": "svc-client", "client_secret": SECRET}),
        )
        .await;
        fake.sign_in_as(Person::new("posty-1", "grace@example.com", true));
        let grace = side.browser();
        let started = press(&grace, None, "posty").await;
        assert!(refresh_target(&started).contains("response_mode=form_post"));
        let answer = at_provider(&started).await;
        let fields: Vec<(String, String)> = url::Url::parse(&answer)
            .unwrap()
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let cross_site = bare()
            .post(format!("{}/auth/social/callback", side.issuer()))
            .form(&fields)
            .send()
            .await
            .unwrap();
        assert_eq!(cross_site.status(), 200);
        let relay = cross_site.text().await.unwrap();
        assert!(relay.contains("name=\"relayed\" value=\"1\""), "{relay}");
        let hidden = crate::hosted::support::hidden_fields(&relay);
        let form: Vec<(&str, &str)> = hidden
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let done = grace.post("/auth/social/callback", &form).await;
        assert_eq!(done.status, 200, "{}", done.body);
        assert_eq!(refresh_target(&done), "/auth/account");
        assert!(grace.cookie("svc_session").is_some());

        side.app.shutdown().await;
    }
}
