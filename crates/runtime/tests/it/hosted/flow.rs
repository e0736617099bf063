//! The authorization code flow through the hosted pages, as a browser runs it (OIDC Core
//! §3.1.2): authorize → sign-in → consent → redirect with `code`, `state` and `iss` (RFC 9207),
//! and the decisions around it: first-party applications, remembered consent, denial,
//! `prompt=login` and `prompt=none`.

use super::support::*;
use serde_json::Value;
use svc_testkit::BACKENDS;

/// The interaction id of a 303 to a hosted page.
fn interaction_of(page: &Page, path: &str) -> String {
    assert_eq!(page.status, 303, "{}", page.body);
    let location = page.location().unwrap();
    assert!(location.starts_with(path), "{location}");
    param(&location, "interaction").unwrap()
}

/// Asserts a redirect to the application and returns its query parameter `name`.
fn at_client(page: &Page, name: &str) -> String {
    assert_eq!(page.status, 303, "{}", page.body);
    let location = page.location().unwrap();
    assert!(location.starts_with(REDIRECT), "{location}");
    param(&location, name).unwrap_or_else(|| panic!("no {name} in {location}"))
}

#[tokio::test]
async fn oidcc_code_flow_runs_through_sign_in_and_consent_then_remembers_consent() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let browser = world.browser();
        let start = browser
            .get(&world.authorize_path("openid profile email", "st-1", &[("nonce", "n-1")]))
            .await;
        start.assert_secure("authorize redirect");
        let interaction = interaction_of(&start, "/auth/sign-in?");

        let sign_in = browser
            .get(&format!("/auth/sign-in?interaction={interaction}"))
            .await;
        assert_eq!(sign_in.status, 200);
        sign_in.assert_secure("sign-in page");
        assert!(sign_in.body.contains("<title>Sign in – Acme Corp</title>"));
        assert!(
            sign_in.body.contains("<strong>Shop</strong>"),
            "the client's name"
        );
        assert!(
            sign_in
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_csrf=") && c.contains("HttpOnly"))
        );

        let signed_in = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        assert_eq!(signed_in.status, 303, "RFC 9700 §4.12: 303 after POST");
        assert_eq!(
            interaction_of(&signed_in, "/oauth/authorize/resume?"),
            interaction
        );
        let session = signed_in
            .set_cookies()
            .into_iter()
            .find(|c| c.starts_with("svc_session="))
            .expect("session cookie");
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
            assert!(session.contains(attribute), "{session}");
        }
        assert!(
            !session.contains("Domain") && !session.contains("Secure"),
            "{session}"
        );

        let resumed = browser.get(&signed_in.location().unwrap()).await;
        let consent_path = resumed.location().unwrap();
        assert_eq!(interaction_of(&resumed, "/auth/consent?"), interaction);
        let consent = browser.get(&consent_path).await;
        assert_eq!(consent.status, 200);
        consent.assert_secure("consent page");
        assert!(consent.body.contains("<strong>Shop</strong>"));
        assert!(consent.body.contains("See your email address"));
        assert!(consent.body.contains("name=\"decision\" value=\"allow\""));
        assert!(consent.body.contains("name=\"decision\" value=\"deny\""));

        let allowed = browser
            .submit(&consent_path, "/auth/consent", &[("decision", "allow")])
            .await;
        let code = at_client(&allowed, "code");
        assert_eq!(at_client(&allowed, "state"), "st-1");
        assert_eq!(at_client(&allowed, "iss"), world.issuer());

        let tokens = world.redeem(&code).await;
        let status = tokens.status();
        let tokens: Value = tokens.json().await.unwrap();
        assert_eq!(status, 200, "{backend:?}: {tokens}");
        assert!(tokens["id_token"].is_string() && tokens["access_token"].is_string());

        // Consent is remembered: the next request goes straight back with a code.
        let again = browser
            .get(&world.authorize_path("openid profile", "st-2", &[]))
            .await;
        assert!(at_client(&again, "code").starts_with("ac_"));
        assert_eq!(at_client(&again, "state"), "st-2");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn first_party_applications_skip_consent_and_denial_returns_access_denied() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                first_party: true,
                ..Setup::default()
            },
        )
        .await;
        let browser = world.browser();
        // OIDC Core §3.1.2.1: the request may also be a form POST.
        let path = world.authorize_path("openid", "fp", &[]);
        let form: Vec<(String, String)> =
            url::form_urlencoded::parse(path.split_once('?').unwrap().1.as_bytes())
                .into_owned()
                .collect();
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let start = browser.post("/oauth/authorize", &form).await;
        let interaction = interaction_of(&start, "/auth/sign-in?");
        let signed_in = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let resumed = browser.get(&signed_in.location().unwrap()).await;
        assert!(
            at_client(&resumed, "code").starts_with("ac_"),
            "no consent page"
        );

        // A third-party application of the same tenant asks; the person declines.
        let (third, _) = world.register("Third party", false).await;
        let path = world
            .authorize_path("openid profile", "deny-me", &[])
            .replace(&world.client_id, &third);
        let asked = browser.get(&path).await;
        let consent_path = asked.location().unwrap();
        assert!(consent_path.starts_with("/auth/consent?"), "{consent_path}");
        let denied = browser
            .submit(&consent_path, "/auth/consent", &[("decision", "deny")])
            .await;
        assert_eq!(at_client(&denied, "error"), "access_denied");
        assert_eq!(at_client(&denied, "state"), "deny-me");
        assert_eq!(at_client(&denied, "iss"), world.issuer());
        world.shutdown().await;
    }
}

#[tokio::test]
async fn oidcc_prompt_login_forces_sign_in_and_prompt_none_without_session_is_login_required() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                first_party: true,
                ..Setup::default()
            },
        )
        .await;
        let browser = world.browser();

        // prompt=none without a session: back to the client with login_required, no page.
        let none = browser
            .get(&world.authorize_path("openid", "pn", &[("prompt", "none")]))
            .await;
        assert_eq!(at_client(&none, "error"), "login_required");
        assert_eq!(at_client(&none, "state"), "pn");
        assert_eq!(at_client(&none, "iss"), world.issuer());

        let start = browser
            .get(&world.authorize_path("openid", "s1", &[]))
            .await;
        let interaction = interaction_of(&start, "/auth/sign-in?");
        let signed_in = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let first_cookie = browser.cookie("svc_session").unwrap();
        at_client(&browser.get(&signed_in.location().unwrap()).await, "code");

        // With a session, prompt=none succeeds silently…
        let silent = browser
            .get(&world.authorize_path("openid", "pn2", &[("prompt", "none")]))
            .await;
        assert!(at_client(&silent, "code").starts_with("ac_"));
        // …and prompt=login shows the sign-in page again despite the session.
        let forced = browser
            .get(&world.authorize_path("openid", "pl", &[("prompt", "login")]))
            .await;
        let interaction = interaction_of(&forced, "/auth/sign-in?");
        let again = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        assert_ne!(
            browser.cookie("svc_session").unwrap(),
            first_cookie,
            "a new session id at every sign-in"
        );
        let done = browser.get(&again.location().unwrap()).await;
        assert_eq!(at_client(&done, "state"), "pl");

        // The previous session was ended when the new one began.
        let old = world.browser();
        old.set_cookie(&format!("svc_session={first_cookie}; Path=/"));
        let account = old.get("/auth/account").await;
        assert_eq!(account.status, 303);
        assert_eq!(account.location().as_deref(), Some("/auth/sign-in"));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn oidcc_max_age_0_prompt_consent_for_first_party_and_prompt_none_is_consent_required() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                first_party: true,
                ..Setup::default()
            },
        )
        .await;
        let browser = world.browser();
        // Signed in for a max_age=0 request: the resume accepts that very sign-in (it used to
        // send the browser back to the sign-in page forever). A first-party application gets
        // its code without a question.
        world
            .code_for(&browser, &world.client_id, "openid", &[("max_age", "0")])
            .await;
        let asked = browser
            .get(&world.authorize_path("openid", "pc", &[("prompt", "consent")]))
            .await;
        let interaction = interaction_of(&asked, "/auth/consent?");
        let consent_path = asked.location().unwrap();
        let consent = browser.get(&consent_path).await;
        assert_eq!(consent.status, 200, "{backend:?}: {}", consent.body);
        assert!(consent.body.contains("name=\"decision\" value=\"allow\""));
        assert_eq!(
            consent.field("interaction").as_deref(),
            Some(interaction.as_str())
        );
        let allowed = browser
            .submit(&consent_path, "/auth/consent", &[("decision", "allow")])
            .await;
        assert!(at_client(&allowed, "code").starts_with("ac_"));
        assert_eq!(at_client(&allowed, "state"), "pc");

        // A third-party application the person never consented to, asked silently.
        let (third, _) = world.register("Third party", false).await;
        let path = world
            .authorize_path("openid profile", "pn", &[("prompt", "none")])
            .replace(&world.client_id, &third);
        let silent = browser.get(&path).await;
        assert_eq!(at_client(&silent, "error"), "consent_required");
        assert_eq!(at_client(&silent, "state"), "pn");
        assert_eq!(at_client(&silent, "iss"), world.issuer());
        world.shutdown().await;
    }
}
