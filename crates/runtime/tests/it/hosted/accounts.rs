//! People's own account flows on the hosted pages: failed sign-ins that reveal nothing,
//! lockout, sign-up (closed and open) with email verification, forgotten passwords,
//! invitations, sign-out, the sessions page and RP-initiated logout.

use super::support::*;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, Backend};

#[tokio::test]
async fn wrong_passwords_and_unknown_accounts_get_the_same_401_page_then_lockout_429() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let browser = world.browser();
        let wrong = browser
            .sign_in(None, &world.user, "not the password at all")
            .await;
        let unknown = browser
            .sign_in(None, "nobody@example.com", "not the password at all")
            .await;
        for page in [&wrong, &unknown] {
            assert_eq!(page.status, 401, "{}", page.body);
            page.assert_secure("failed sign-in");
            assert!(page.body.contains("The email or password is incorrect"));
            assert!(page.body.contains("role=\"alert\""));
            assert!(page.body.contains("aria-invalid=\"true\""));
        }
        assert_eq!(
            wrong.body.replace(&world.user, "EMAIL"),
            unknown.body.replace("nobody@example.com", "EMAIL"),
            "identical pages apart from the typed address"
        );

        // The account locks after five failures; even the right password is refused then.
        for _ in 0..4 {
            let page = browser.sign_in(None, &world.user, "still wrong!!").await;
            assert_eq!(page.status, 401);
        }
        let locked = browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(locked.status, 429, "{}", locked.body);
        let retry: u64 = locked.headers["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(retry >= 1);
        locked.assert_secure("locked");
        assert_eq!(browser.cookie("svc_session"), None);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn closed_sign_up_is_404_and_open_sign_up_creates_a_verifiable_account() {
    let closed = World::new(Backend::Sqlite, Setup::default()).await;
    let browser = closed.browser();
    let page = browser.get("/auth/sign-up").await;
    assert_eq!(page.status, 404);
    page.assert_secure("sign-up closed");
    let sign_in = browser.get("/auth/sign-in").await;
    assert!(
        !sign_in.body.contains("/auth/sign-up"),
        "no link to a closed page"
    );
    let token = sign_in.field("csrf").unwrap();
    let posted = browser
        .post(
            "/auth/sign-up",
            &[
                ("csrf", token.as_str()),
                ("email", "new@example.com"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(posted.status, 404);
    closed.shutdown().await;

    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                signup: true,
                ..Setup::default()
            },
        )
        .await;
        let browser = world.browser();
        assert!(
            browser
                .get("/auth/sign-in")
                .await
                .body
                .contains("/auth/sign-up")
        );
        let weak = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[("email", "grace@example.com"), ("password", "short")],
            )
            .await;
        assert_eq!(weak.status, 400, "{}", weak.body);
        assert!(
            weak.body
                .contains("aria-describedby=\"password-error password-hint\"")
        );
        let created = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[
                    ("name", "Grace Hopper"),
                    ("email", "grace@example.com"),
                    ("password", PASSWORD),
                ],
            )
            .await;
        assert_eq!(created.status, 303, "{}", created.body);
        assert_eq!(created.location().as_deref(), Some("/auth/sign-up?sent=1"));
        let inbox = browser.get("/auth/sign-up?sent=1").await;
        assert!(inbox.body.contains("Check your inbox"), "{}", inbox.body);
        assert_eq!(browser.cookie("svc_session"), None, "nobody is signed in");
        assert_eq!(
            browser
                .sign_in(None, "grace@example.com", PASSWORD)
                .await
                .status,
            303
        );
        let account = browser.get("/auth/account").await;
        assert_eq!(account.status, 200);
        assert!(account.body.contains("grace@example.com"));
        assert!(account.body.contains("not confirmed yet"));

        // The mailed link shows a button; only its POST spends the token.
        let link = world
            .mailed_link("grace@example.com", "/auth/verify-email")
            .await;
        let scanner = world.browser();
        assert_eq!(scanner.get(&link).await.status, 200);
        assert_eq!(
            scanner.get(&link).await.status,
            200,
            "a GET consumes nothing"
        );
        let verified = browser.submit(&link, "/auth/verify-email", &[]).await;
        assert_eq!(verified.status, 303, "{}", verified.body);
        let done = browser.get(&verified.location().unwrap()).await;
        assert!(done.body.contains("Your email address is confirmed"));
        let account = browser.get("/auth/account").await;
        assert!(!account.body.contains("not confirmed yet"));
        let users: Value = world
            .api(reqwest::Method::GET, "/api/v1/tenant-users")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let grace = users["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["email"] == "grace@example.com")
            .unwrap();
        assert_eq!(grace["email_verified"], true, "{users}");
        let reused = scanner.submit(&link, "/auth/verify-email", &[]).await;
        assert_eq!(reused.status, 400, "single use");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn sign_up_with_a_taken_address_answers_exactly_like_a_new_one_and_mails_the_owner() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                signup: true,
                ..Setup::default()
            },
        )
        .await;
        let sign_up = |email: &'static str| {
            let browser = world.browser();
            async move {
                let answer = browser
                    .submit(
                        "/auth/sign-up",
                        "/auth/sign-up",
                        &[
                            ("name", "Someone"),
                            ("email", email),
                            ("password", PASSWORD),
                        ],
                    )
                    .await;
                let next = browser.get(&answer.location().unwrap()).await;
                (answer, next, browser.cookie("svc_session"))
            }
        };
        let (fresh, fresh_page, fresh_session) = sign_up("grace@example.com").await;
        let (taken, taken_page, taken_session) = sign_up("ada@example.com").await;
        assert_eq!(fresh.status, 303, "{}", fresh.body);
        assert_eq!(taken.status, fresh.status, "{backend:?}");
        assert_eq!(taken.location(), fresh.location());
        assert_eq!(taken.body, fresh.body);
        assert_eq!(taken.set_cookies(), fresh.set_cookies());
        assert_eq!(
            (taken_session, fresh_session),
            (None, None),
            "nobody signed in"
        );
        assert_eq!(taken_page.status, 200);
        assert_eq!(
            taken_page.body, fresh_page.body,
            "the same page, word for word"
        );

        // The owner hears about it; the new address gets its verification link.
        let owner = world.mails_to(&world.user, 1).await;
        assert_eq!(owner.len(), 1, "{owner:?}");
        assert!(
            owner[0]["subject"]
                .as_str()
                .unwrap()
                .contains("Someone tried to sign up"),
            "{owner:?}"
        );
        assert!(owner[0]["link"].is_null());
        world
            .mailed_link("grace@example.com", "/auth/verify-email")
            .await;
        // The owner's password is unchanged.
        assert_eq!(
            world
                .browser()
                .sign_in(None, &world.user, PASSWORD)
                .await
                .status,
            303
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn forgot_and_reset_password_ends_old_sessions() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let old_device = world.browser();
        assert_eq!(
            old_device.sign_in(None, &world.user, PASSWORD).await.status,
            303
        );

        let browser = world.browser();
        let known = browser
            .submit(
                "/auth/forgot-password",
                "/auth/forgot-password",
                &[("email", world.user.as_str())],
            )
            .await;
        let unknown = browser
            .submit(
                "/auth/forgot-password",
                "/auth/forgot-password",
                &[("email", "nobody@example.com")],
            )
            .await;
        assert_eq!(known.status, 303);
        assert_eq!(known.location(), unknown.location(), "the same answer");
        let sent = browser.get(&known.location().unwrap()).await;
        assert!(sent.body.contains("If an account exists"));
        assert_eq!(world.mail_count("nobody@example.com").await, 0);

        let link = world.mailed_link(&world.user, "/auth/reset-password").await;
        let new_password = "an entirely new passphrase";
        let reset = browser
            .submit(&link, "/auth/reset-password", &[("password", new_password)])
            .await;
        assert_eq!(reset.status, 303, "{}", reset.body);
        let old = old_device.get("/auth/account").await;
        assert_eq!(old.status, 303, "the old session died");
        assert_eq!(
            browser.sign_in(None, &world.user, PASSWORD).await.status,
            401
        );
        assert_eq!(
            browser
                .sign_in(None, &world.user, new_password)
                .await
                .status,
            303
        );
        let again = browser
            .submit(
                &link,
                "/auth/reset-password",
                &[("password", "yet another passphrase")],
            )
            .await;
        assert_eq!(again.status, 400, "a reset link works once");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn an_invited_person_accepts_and_is_signed_in() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let invited = world
            .api(reqwest::Method::POST, "/api/v1/tenant-users")
            .json(&json!({"email": "linus@example.com", "invite": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(invited.status(), 201);
        let link = world
            .mailed_link("linus@example.com", "/auth/accept-invitation")
            .await;
        let browser = world.browser();
        let form = browser.get(&link).await;
        assert_eq!(form.status, 200);
        assert!(form.body.contains("autocomplete=\"new-password\""));
        assert!(form.body.contains("autocomplete=\"name\""));
        let accepted = browser
            .submit(
                &link,
                "/auth/accept-invitation",
                &[("name", "Linus"), ("password", PASSWORD)],
            )
            .await;
        assert_eq!(accepted.status, 303, "{}", accepted.body);
        assert_eq!(accepted.location().as_deref(), Some("/auth/account"));
        let account = browser.get("/auth/account").await;
        assert!(account.body.contains("linus@example.com"));
        let fresh = world.browser();
        assert_eq!(
            fresh
                .sign_in(None, "linus@example.com", PASSWORD)
                .await
                .status,
            303
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn sign_out_clears_the_cookie_and_the_session_stops_working() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let cookie = browser.cookie("svc_session").unwrap();
        let confirm = browser.get("/auth/sign-out").await;
        assert_eq!(confirm.status, 200);
        assert!(confirm.body.contains("action=\"/auth/sign-out\""));
        assert_eq!(
            browser.get("/auth/account").await.status,
            200,
            "a GET signs nobody out"
        );

        let out = browser
            .submit("/auth/sign-out", "/auth/sign-out", &[])
            .await;
        assert_eq!(out.status, 303);
        assert!(
            out.set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_session=;") && c.contains("Max-Age=0")),
            "{:?}",
            out.set_cookies()
        );
        let page = browser.get(&out.location().unwrap()).await;
        assert!(page.body.contains("You are signed out"));
        let replay = world.browser();
        replay.set_cookie(&format!("svc_session={cookie}; Path=/"));
        assert_eq!(
            replay.get("/auth/account").await.status,
            303,
            "the session is dead"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn the_sessions_page_lists_own_sessions_and_revokes_them() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let laptop = world.browser();
        let phone = world.browser();
        laptop.sign_in(None, &world.user, PASSWORD).await;
        phone.sign_in(None, &world.user, PASSWORD).await;
        let other = "grace@example.com";
        world.create_user(other, PASSWORD).await;
        let stranger = world.browser();
        stranger.sign_in(None, other, PASSWORD).await;

        let list = laptop.get("/auth/sessions").await;
        assert_eq!(list.status, 200);
        assert_eq!(
            list.body.matches("name=\"session_id\"").count(),
            2,
            "{}",
            list.body
        );
        assert_eq!(list.body.matches("This device").count(), 1);
        assert!(list.body.contains("hosted-e2e/1.0"), "user agent shown");
        assert!(list.body.contains("127.0.0.1"), "address shown");

        // Another person's session cannot be revoked from here.
        let strangers = stranger.get("/auth/sessions").await;
        let their_id = hidden_fields(&strangers.body)
            .into_iter()
            .find(|(n, _)| n == "session_id")
            .unwrap()
            .1;
        let csrf = list.field("csrf").unwrap();
        let refused = laptop
            .post(
                "/auth/sessions/revoke",
                &[("csrf", csrf.as_str()), ("session_id", their_id.as_str())],
            )
            .await;
        assert_eq!(refused.status, 404);
        assert_eq!(stranger.get("/auth/account").await.status, 200);

        // Revoke the phone's session from the laptop (the row that is not this device).
        let phone_id = list
            .body
            .split("<tr")
            .filter(|row| !row.contains("This device"))
            .find_map(|row| {
                hidden_fields(row)
                    .into_iter()
                    .find(|(n, _)| n == "session_id")
                    .map(|(_, v)| v)
            })
            .unwrap();
        let revoked = laptop
            .post(
                "/auth/sessions/revoke",
                &[("csrf", csrf.as_str()), ("session_id", phone_id.as_str())],
            )
            .await;
        assert_eq!(revoked.status, 303);
        assert_eq!(
            phone.get("/auth/account").await.status,
            303,
            "phone signed out"
        );
        assert_eq!(
            laptop.get("/auth/account").await.status,
            200,
            "laptop still in"
        );
        let list = laptop.get("/auth/sessions").await;
        assert_eq!(list.body.matches("name=\"session_id\"").count(), 1);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn rp_initiated_logout_with_and_without_id_token_hint() {
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
        let start = browser.get(&world.authorize_path("openid", "s", &[])).await;
        let interaction = param(&start.location().unwrap(), "interaction").unwrap();
        let signed_in = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let done = browser.get(&signed_in.location().unwrap()).await;
        let code = param(&done.location().unwrap(), "code").unwrap();
        let tokens: Value = world.redeem(&code).await.json().await.unwrap();
        let id_token = tokens["id_token"].as_str().unwrap().to_owned();

        // Without a hint the person must confirm; the confirmation re-posts the parameters.
        let bye = "https://app.example.com/bye";
        let path = format!(
            "/oauth/end-session?client_id={}&post_logout_redirect_uri={}&state=out-1",
            world.client_id,
            url::form_urlencoded::byte_serialize(bye.as_bytes()).collect::<String>()
        );
        let confirm = browser.get(&path).await;
        assert_eq!(confirm.status, 200, "{}", confirm.body);
        confirm.assert_secure("end-session confirmation");
        assert!(confirm.body.contains("name=\"confirm\" value=\"yes\""));
        assert_eq!(
            browser.get("/auth/account").await.status,
            200,
            "still signed in"
        );
        let forged = browser
            .post(
                "/oauth/end-session",
                &[("client_id", world.client_id.as_str()), ("confirm", "yes")],
            )
            .await;
        assert_eq!(forged.status, 403, "confirmation needs the CSRF token");
        let out = browser.submit(&path, "/oauth/end-session", &[]).await;
        assert_eq!(out.status, 303, "{}", out.body);
        assert_eq!(
            out.location().as_deref(),
            Some("https://app.example.com/bye?state=out-1")
        );
        assert!(
            out.set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_session=;"))
        );
        assert_eq!(browser.get("/auth/account").await.status, 303);

        // With the hint of the current session, no question is asked.
        let start = browser
            .get(&world.authorize_path("openid", "s2", &[]))
            .await;
        let interaction = param(&start.location().unwrap(), "interaction").unwrap();
        let signed_in = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let done = browser.get(&signed_in.location().unwrap()).await;
        let code = param(&done.location().unwrap(), "code").unwrap();
        let tokens: Value = world.redeem(&code).await.json().await.unwrap();
        let hint = tokens["id_token"].as_str().unwrap();
        let out = browser
            .get(&format!("/oauth/end-session?id_token_hint={hint}"))
            .await;
        assert_eq!(out.status, 303, "{}", out.body);
        assert_eq!(out.location().as_deref(), Some("/auth/sign-out"));
        assert_eq!(browser.get("/auth/account").await.status, 303);
        assert_ne!(id_token, hint);

        // An unregistered post-logout URI is an error page, never a redirect.
        let evil = browser
            .get(&format!(
                "/oauth/end-session?client_id={}&post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F",
                world.client_id
            ))
            .await;
        assert_eq!(evil.status, 400);
        assert!(evil.location().is_none());
        world.shutdown().await;
    }
}

#[tokio::test]
async fn logout_to_a_registered_non_ascii_uri_without_state_is_a_percent_encoded_redirect() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let bye = "https://app.example.com/au-revoir-\u{e9}t\u{e9}";
        let (client, _) = world
            .register_with(json!({"post_logout_redirect_uris": [bye]}))
            .await;
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let path = format!(
            "/oauth/end-session?client_id={client}&post_logout_redirect_uri={}",
            url::form_urlencoded::byte_serialize(bye.as_bytes()).collect::<String>()
        );
        let out = browser.submit(&path, "/oauth/end-session", &[]).await;
        assert_eq!(out.status, 303, "{backend:?}: {}", out.body);
        assert_eq!(
            out.location().as_deref(),
            Some("https://app.example.com/au-revoir-%C3%A9t%C3%A9")
        );
        assert_eq!(browser.get("/auth/account").await.status, 303, "signed out");
        world.shutdown().await;
    }
}
