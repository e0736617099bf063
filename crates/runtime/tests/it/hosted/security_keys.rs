//! WebAuthn security keys as a second factor, end to end on the hosted pages, on SQLite and
//! PostgreSQL, with a software authenticator (`svc-webauthn-soft`): registering one on the
//! two-step page (the session is raised, backup codes shown once), the second step of a
//! sign-in answered with the key (`amr` `pwd`, `hwk`, `user`, `mfa` in the ID token), step-up
//! of a password session with it, and the attacks: a key nobody registered, a replayed answer,
//! a cloned key whose counter went back, and removal.

use super::support::{Browser, PASSWORD, Page, REDIRECT, Setup, World, param};
use super::tokens::{tokens, verify_id_token};
use serde_json::Value;
use svc_testkit::{BACKENDS, Backend};
use svc_webauthn_soft::SoftAuthenticator;

async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            first_party: true,
            env: vec![("SVC_TWO_FACTOR__ENABLED", "true")],
            ..Setup::default()
        },
    )
    .await
}

/// The options a page's glue would fetch (see [`Browser::webauthn_options`]).
async fn options(browser: &Browser, page: &str, path: &str) -> Value {
    browser.webauthn_options(page, path).await
}

/// Answers the second step of `browser` (after the password, or a step-up) with `soft`.
async fn answer_with_key(
    browser: &Browser,
    soft: &mut SoftAuthenticator,
    origin: &str,
    interaction: Option<&str>,
) -> Page {
    let page = match interaction {
        Some(i) => format!("/auth/second-factor?interaction={i}"),
        None => "/auth/second-factor".to_owned(),
    };
    let asked = options(browser, &page, "/auth/second-factor/key-options").await;
    let credential = soft.assert(&asked, origin).to_string();
    let csrf = browser.get(&page).await.field("csrf").unwrap();
    let mut form = vec![("csrf", csrf.as_str()), ("credential", credential.as_str())];
    if let Some(i) = interaction {
        form.push(("interaction", i));
    }
    browser.post("/auth/second-factor", &form).await
}

#[tokio::test]
async fn a_security_key_is_registered_then_answers_the_second_step_and_is_removed() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let issuer = world.issuer();
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;

        // Register: the page offers it (hidden without script), the answer raises the session
        // and brings the backup codes.
        let page = browser.get("/auth/account/two-factor").await;
        assert!(
            page.body
                .contains("data-options=\"/auth/account/two-factor/key-options\""),
            "{}",
            page.body
        );
        let asked = options(
            &browser,
            "/auth/account/two-factor",
            "/auth/account/two-factor/key-options",
        )
        .await;
        assert_eq!(asked["publicKey"]["rp"]["id"], "acme.localhost", "{asked}");
        let mut key = SoftAuthenticator::from_seed(21);
        let credential = key.register(&asked, &issuer).to_string();
        let csrf = browser
            .get("/auth/account/two-factor")
            .await
            .field("csrf")
            .unwrap();
        let added = browser
            .post(
                "/auth/account/two-factor",
                &[
                    ("csrf", &csrf),
                    ("action", "add_key"),
                    ("name", "Blue key"),
                    ("credential", &credential),
                ],
            )
            .await;
        assert_eq!(added.status, 200, "{backend:?}: {}", added.body);
        assert_eq!(added.body.matches("<code>").count(), 10, "backup codes");
        assert!(
            added
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_session=ses_")),
            "the session is raised"
        );
        let listed = browser.get("/auth/account/two-factor").await;
        assert!(listed.body.contains("Blue key"), "{}", listed.body);

        // A password sign-in now owes the second step; the key answers it.
        let other = world.browser();
        let authorize = other.get(&world.authorize_path("openid", "st", &[])).await;
        let interaction = param(&authorize.location().unwrap(), "interaction").unwrap();
        let password = other
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        assert!(
            password
                .location()
                .unwrap()
                .starts_with("/auth/second-factor"),
            "{backend:?}"
        );
        let step = other
            .get(&format!("/auth/second-factor?interaction={interaction}"))
            .await;
        assert!(step.body.contains("data-webauthn=\"get\""), "{}", step.body);
        // A key nobody registered is a wrong answer.
        let mut stranger = SoftAuthenticator::from_seed(99);
        stranger.register(&asked, &issuer);
        let refused = answer_with_key(&other, &mut stranger, &issuer, Some(&interaction)).await;
        assert_eq!(refused.status, 401, "{backend:?}: {}", refused.body);
        let done = answer_with_key(&other, &mut key, &issuer, Some(&interaction)).await;
        assert_eq!(done.status, 303, "{backend:?}: {}", done.body);
        let mut location = done.location().unwrap();
        for _ in 0..4 {
            if location.starts_with(REDIRECT) {
                break;
            }
            location = other.get(&location).await.location().unwrap();
        }
        let issued = tokens(&world, &param(&location, "code").unwrap(), &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal2", "{backend:?}: {claims}");
        assert_eq!(
            claims["amr"],
            serde_json::json!(["pwd", "hwk", "user", "mfa"])
        );

        // A replayed answer finds its ceremony spent; a clone behind the counter is refused.
        let third = world.browser();
        third.sign_in(None, &world.user, PASSWORD).await;
        let asked = options(
            &third,
            "/auth/second-factor",
            "/auth/second-factor/key-options",
        )
        .await;
        let ceremony = third.cookie("svc_webauthn").unwrap();
        let answer = key.assert(&asked, &issuer).to_string();
        let csrf = third
            .get("/auth/second-factor")
            .await
            .field("csrf")
            .unwrap();
        let ok = third
            .post(
                "/auth/second-factor",
                &[("csrf", &csrf), ("credential", &answer)],
            )
            .await;
        assert_eq!(ok.status, 303, "{backend:?}: {}", ok.body);
        let fourth = world.browser();
        fourth.sign_in(None, &world.user, PASSWORD).await;
        fourth.set_cookie(&format!("svc_webauthn={ceremony}"));
        let csrf = fourth
            .get("/auth/second-factor")
            .await
            .field("csrf")
            .unwrap();
        let replay = fourth
            .post(
                "/auth/second-factor",
                &[("csrf", &csrf), ("credential", &answer)],
            )
            .await;
        assert_eq!(replay.status, 400, "{backend:?}: {}", replay.body);
        let mut clone = key.clone().with_counter(0);
        let fifth = world.browser();
        fifth.sign_in(None, &world.user, PASSWORD).await;
        let cloned = answer_with_key(&fifth, &mut clone, &issuer, None).await;
        assert_eq!(cloned.status, 401, "{backend:?}: {}", cloned.body);

        // Removal, confirmed on its own page, needs the aal2 session; then the password alone
        // signs in again.
        let page = browser.get("/auth/account/two-factor").await;
        let start = page.body.find("remove_key=").unwrap() + "remove_key=".len();
        let id: String = page.body[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let confirm = browser
            .get(&format!("/auth/account/two-factor?remove_key={id}"))
            .await;
        assert!(confirm.body.contains("Blue key"), "{}", confirm.body);
        let removed = browser
            .submit(
                &format!("/auth/account/two-factor?remove_key={id}"),
                "/auth/account/two-factor",
                &[("action", "remove")],
            )
            .await;
        assert_eq!(removed.status, 303, "{backend:?}: {}", removed.body);
        assert_eq!(
            removed.location().as_deref(),
            Some("/auth/account/two-factor?removed=key")
        );
        let again = world.browser().sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(
            again.location().as_deref(),
            Some("/auth/account"),
            "{backend:?}"
        );
        world.shutdown().await;
    }
}
