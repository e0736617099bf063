//! Passkeys end to end on the hosted pages, on SQLite and PostgreSQL, with a software
//! authenticator (`svc-webauthn-soft`) in place of the browser's: registering one from the
//! account page, signing in with it alone at `urn:svc:aal2` (`amr` `hwk`/`swk`, `user`,
//! `mfa` in the ID token), renaming and removing, and the attacks of issue 16: an answer for
//! another origin, RP ID or challenge, without user verification, for another person, from a
//! cloned authenticator (counter going back), a replayed ceremony, a registration ceremony
//! carried to another person's session, a stolen aal1 session planting a passkey, and CSRF on
//! every new form.

use super::support::{Browser, PASSWORD, REDIRECT, Setup, World, param};
use super::tokens::{tokens, verify_id_token};
use serde_json::Value;
use svc_testkit::{BACKENDS, Backend};
use svc_webauthn_soft::SoftAuthenticator;

async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            first_party: true,
            env: vec![("SVC_PASSKEY__ENABLED", "true")],
            ..Setup::default()
        },
    )
    .await
}

/// The options a page's glue would fetch (see [`Browser::webauthn_options`]).
async fn options(browser: &Browser, page: &str, path: &str) -> Value {
    browser.webauthn_options(page, path).await
}

/// Registers a passkey named `name` from `browser`'s (signed-in) account page.
async fn register(world: &World, browser: &Browser, soft: &mut SoftAuthenticator, name: &str) {
    let options = options(
        browser,
        "/auth/account/passkeys",
        "/auth/account/passkeys/options",
    )
    .await;
    let public_key = &options["publicKey"];
    assert_eq!(public_key["rp"]["id"], "acme.localhost", "{options}");
    let selection = &public_key["authenticatorSelection"];
    assert_eq!(selection["residentKey"], "required", "{options}");
    assert_eq!(selection["userVerification"], "required", "{options}");
    let credential = soft.register(&options, &world.issuer());
    let page = browser.get("/auth/account/passkeys").await;
    let csrf = page.field("csrf").unwrap();
    let done = browser
        .post(
            "/auth/account/passkeys",
            &[
                ("csrf", &csrf),
                ("action", "register"),
                ("name", name),
                ("credential", &credential.to_string()),
            ],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(
        done.location().as_deref(),
        Some("/auth/account/passkeys?done=added")
    );
}

/// Signs `browser` in with `soft` answering as a browser at `origin`: the final page.
async fn passkey_sign_in(
    browser: &Browser,
    soft: &mut SoftAuthenticator,
    origin: &str,
    interaction: Option<&str>,
) -> super::support::Page {
    let page = match interaction {
        Some(i) => format!("/auth/sign-in?interaction={i}"),
        None => "/auth/sign-in".to_owned(),
    };
    let options = options(browser, &page, "/auth/passkey/options").await;
    assert_eq!(options["publicKey"]["rpId"], "acme.localhost", "{options}");
    let credential = soft.assert(&options, origin);
    let csrf = browser.get(&page).await.field("csrf").unwrap();
    let mut form = vec![("csrf", csrf.as_str())];
    let credential = credential.to_string();
    form.push(("credential", &credential));
    if let Some(i) = interaction {
        form.push(("interaction", i));
    }
    browser.post("/auth/passkey", &form).await
}

#[tokio::test]
async fn a_passkey_is_registered_signs_in_alone_at_aal2_and_is_renamed_and_removed() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let browser = world.browser();
        let signed_in = browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(signed_in.status, 303, "{backend:?}: {}", signed_in.body);
        let account = browser.get("/auth/account").await;
        assert!(
            account.body.contains("/auth/account/passkeys"),
            "{backend:?}: {} {}",
            account.status,
            account.body
        );
        // Without a passkey (the first landing after sign-up), the account page offers one,
        // and its glue gets the registration options with the page's own CSRF token.
        assert!(
            account.body.contains("data-webauthn=\"create\""),
            "{backend:?}: {}",
            account.body
        );
        account.assert_secure("account page with the passkey offer");
        let offered = options(&browser, "/auth/account", "/auth/account/passkeys/options").await;
        assert_eq!(
            offered["publicKey"]["authenticatorSelection"]["residentKey"],
            "required"
        );

        // The page: no passkey yet, the form hidden until the glue shows it, allowed by hash.
        let page = browser.get("/auth/account/passkeys").await;
        assert_eq!(page.status, 200, "{}", page.body);
        page.assert_secure("passkeys page");
        assert!(
            page.body.contains("data-webauthn=\"create\""),
            "{}",
            page.body
        );
        assert!(page.body.contains("<noscript>"));
        let csp = page.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'sha256-"), "{csp}");
        assert!(csp.contains("connect-src 'self'"), "{csp}");

        let mut soft = SoftAuthenticator::from_seed(7);
        register(&world, &browser, &mut soft, "Laptop").await;
        let account = browser.get("/auth/account").await;
        assert!(
            !account.body.contains("data-webauthn=\"create\""),
            "{backend:?}: a person with a passkey is not offered another here"
        );
        let listed = browser.get("/auth/account/passkeys?done=added").await;
        assert!(listed.body.contains("value=\"Laptop\""), "{}", listed.body);
        assert!(listed.body.contains("This device only"), "{}", listed.body);

        // The sign-in page offers passkeys, in the address field's autofill too.
        let other = world.browser();
        let sign_in = other.get("/auth/sign-in").await;
        assert!(sign_in.body.contains("autocomplete=\"username webauthn\""));
        assert!(sign_in.body.contains("data-webauthn=\"get\""));

        // An application's request, answered with the passkey alone: aal2, hwk + user + mfa.
        let authorize = other
            .get(&world.authorize_path("openid", "st", &[("acr_values", "urn:svc:aal2")]))
            .await;
        let interaction = param(&authorize.location().unwrap(), "interaction").unwrap();
        let signed_in =
            passkey_sign_in(&other, &mut soft, &world.issuer(), Some(&interaction)).await;
        assert_eq!(signed_in.status, 303, "{backend:?}: {}", signed_in.body);
        assert!(
            signed_in
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_webauthn=;")),
            "the ceremony cookie is cleared"
        );
        let mut location = signed_in.location().unwrap();
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
        assert_eq!(claims["amr"], serde_json::json!(["hwk", "user", "mfa"]));

        // The passkey session may add another passkey (it is aal2); a password-only session
        // of a person who has one may not.
        let aal1 = world.browser();
        aal1.sign_in(None, &world.user, PASSWORD).await;
        let refused = aal1.get("/auth/account/passkeys").await;
        assert!(!refused.body.contains("data-webauthn"), "{}", refused.body);
        let csrf = refused.field("csrf").unwrap();
        let planted = aal1
            .post("/auth/account/passkeys/options", &[("csrf", &csrf)])
            .await;
        assert_eq!(planted.status, 403, "{}", planted.body);
        // That password session steps up with the passkey: an aal2 request is sent to the
        // step-up page, which offers it, and signing in with it continues the request.
        let step = aal1
            .get(&world.authorize_path("openid", "st", &[("acr_values", "urn:svc:aal2")]))
            .await;
        let location = step.location().unwrap();
        assert!(
            location.starts_with("/auth/second-factor"),
            "{backend:?}: {location}"
        );
        let offered = aal1.get(&location).await;
        assert!(
            offered.body.contains("data-webauthn=\"get\""),
            "{}",
            offered.body
        );
        let interaction = param(&location, "interaction").unwrap();
        let raised = passkey_sign_in(&aal1, &mut soft, &world.issuer(), Some(&interaction)).await;
        assert_eq!(raised.status, 303, "{backend:?}: {}", raised.body);
        assert!(
            raised
                .location()
                .unwrap()
                .starts_with("/oauth/authorize/resume"),
            "{:?}",
            raised.location()
        );

        // Rename, then remove: the removed passkey signs nobody in.
        let page = other.get("/auth/account/passkeys").await;
        let id = page.field("passkey").unwrap();
        let csrf = page.field("csrf").unwrap();
        let renamed = other
            .post(
                "/auth/account/passkeys",
                &[
                    ("csrf", &csrf),
                    ("action", "rename"),
                    ("passkey", &id),
                    ("name", "Work"),
                ],
            )
            .await;
        assert_eq!(renamed.status, 303, "{}", renamed.body);
        let bad_name = other
            .post(
                "/auth/account/passkeys",
                &[
                    ("csrf", &csrf),
                    ("action", "rename"),
                    ("passkey", &id),
                    ("name", " "),
                ],
            )
            .await;
        assert_eq!(bad_name.status, 400, "{}", bad_name.body);
        assert!(
            other
                .get("/auth/account/passkeys")
                .await
                .body
                .contains("value=\"Work\"")
        );
        let removed = other
            .post(
                "/auth/account/passkeys",
                &[("csrf", &csrf), ("action", "remove"), ("passkey", &id)],
            )
            .await;
        assert_eq!(removed.status, 303, "{}", removed.body);
        let gone = passkey_sign_in(&world.browser(), &mut soft, &world.issuer(), None).await;
        assert_eq!(gone.status, 401, "{backend:?}: {}", gone.body);
        assert!(gone.body.contains("could not be verified"), "{}", gone.body);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn foreign_forged_replayed_and_cloned_passkey_answers_are_refused() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let owner = world.browser();
        owner.sign_in(None, &world.user, PASSWORD).await;
        let mut soft = SoftAuthenticator::from_seed(11);
        register(&world, &owner, &mut soft, "Key").await;
        let issuer = world.issuer();
        let refused = |page: &super::support::Page, what: &str| {
            assert_eq!(page.status, 401, "{backend:?} {what}: {}", page.body);
            assert!(
                !page
                    .set_cookies()
                    .iter()
                    .any(|c| c.starts_with("svc_session=ses_")),
                "{what}: no session"
            );
        };

        // Another origin (a phishing site), another RP ID, another challenge.
        let evil = issuer.replace("acme.localhost", "evil.localhost");
        refused(
            &passkey_sign_in(&world.browser(), &mut soft, &evil, None).await,
            "origin",
        );
        let mut wrong_rp = soft.clone().with_rp_id_override("localhost");
        refused(
            &passkey_sign_in(&world.browser(), &mut wrong_rp, &issuer, None).await,
            "rp id",
        );
        let mut wrong_challenge = soft.clone().with_challenge_override(&[7; 32]);
        refused(
            &passkey_sign_in(&world.browser(), &mut wrong_challenge, &issuer, None).await,
            "challenge",
        );
        // No user verification; another person's user handle.
        let mut no_uv = soft.clone().with_user_verified(false);
        refused(
            &passkey_sign_in(&world.browser(), &mut no_uv, &issuer, None).await,
            "user verification",
        );
        let mut impostor = soft.clone().with_user_handle_override(&[1; 16]);
        refused(
            &passkey_sign_in(&world.browser(), &mut impostor, &issuer, None).await,
            "user handle",
        );

        // A genuine answer works; replaying it on its spent ceremony does not.
        let browser = world.browser();
        let asked = options(&browser, "/auth/sign-in", "/auth/passkey/options").await;
        let ceremony = browser.cookie("svc_webauthn").unwrap();
        let answer = soft.assert(&asked, &issuer).to_string();
        let csrf = browser.get("/auth/sign-in").await.field("csrf").unwrap();
        let form = [("csrf", csrf.as_str()), ("credential", answer.as_str())];
        let first = browser.post("/auth/passkey", &form).await;
        assert_eq!(first.status, 303, "{backend:?}: {}", first.body);
        let again = world.browser();
        again.set_cookie(&format!("svc_webauthn={ceremony}"));
        let csrf = again.get("/auth/sign-in").await.field("csrf").unwrap();
        let replay = again
            .post("/auth/passkey", &[("csrf", &csrf), ("credential", &answer)])
            .await;
        assert_eq!(replay.status, 400, "{backend:?} replay: {}", replay.body);

        // A clone of the authenticator, behind the original's counter: refused, and the
        // original still works (its counter was not moved by the clone).
        let mut clone = soft.clone();
        let ok = passkey_sign_in(&world.browser(), &mut soft, &issuer, None).await;
        assert_eq!(ok.status, 303, "{}", ok.body);
        refused(
            &passkey_sign_in(&world.browser(), &mut clone, &issuer, None).await,
            "clone",
        );
        let still = passkey_sign_in(&world.browser(), &mut soft, &issuer, None).await;
        assert_eq!(still.status, 303, "{backend:?}: {}", still.body);

        // A registration ceremony started by Ada, answered in Bob's session.
        world.create_user("bob@example.com", PASSWORD).await;
        let bob = world.browser();
        bob.sign_in(None, "bob@example.com", PASSWORD).await;
        let ada = owner_strong(&world, &mut soft).await;
        let ada_options = options(
            &ada,
            "/auth/account/passkeys",
            "/auth/account/passkeys/options",
        )
        .await;
        let ada_ceremony = ada.cookie("svc_webauthn").unwrap();
        let mut new_key = SoftAuthenticator::from_seed(12);
        let credential = new_key.register(&ada_options, &issuer).to_string();
        bob.set_cookie(&format!("svc_webauthn={ada_ceremony}"));
        let csrf = bob
            .get("/auth/account/passkeys")
            .await
            .field("csrf")
            .unwrap();
        let carried = bob
            .post(
                "/auth/account/passkeys",
                &[
                    ("csrf", &csrf),
                    ("action", "register"),
                    ("name", "Stolen"),
                    ("credential", &credential),
                ],
            )
            .await;
        assert_eq!(carried.status, 400, "{backend:?}: {}", carried.body);
        assert!(
            !bob.get("/auth/account/passkeys")
                .await
                .body
                .contains("Stolen")
        );

        // CSRF: the options endpoints and both forms refuse a missing or foreign token.
        let fresh = world.browser();
        fresh.get("/auth/sign-in").await;
        for path in [
            "/auth/passkey/options",
            "/auth/passkey",
            "/auth/account/passkeys/options",
            "/auth/account/passkeys",
        ] {
            let forged = fresh.post(path, &[("csrf", "forged")]).await;
            assert_eq!(forged.status, 403, "{path}: {}", forged.body);
        }
        world.shutdown().await;
    }
}

/// A browser of Ada's signed in with her passkey (an aal2 session, which may add passkeys).
async fn owner_strong(world: &World, soft: &mut SoftAuthenticator) -> Browser {
    let browser = world.browser();
    let signed_in = passkey_sign_in(&browser, soft, &world.issuer(), None).await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.body);
    browser
}
