//! Browser-facing defences of the hosted pages (RFC 9700 §4.2.4, §4.11, §4.16 and the
//! security-testing checklist): CSRF and login CSRF, escaping of every reflected value,
//! security headers, form size and shape limits, and error pages that never redirect.

use super::support::*;
use svc_testkit::{BACKENDS, Backend};

#[tokio::test]
async fn csrf_missing_wrong_or_cookieless_is_403_and_signs_nobody_in() {
    for backend in BACKENDS {
        // Sign-up open, so its form is reachable and must be guarded too.
        let world = World::new(
            backend,
            Setup {
                signup: true,
                ..Setup::default()
            },
        )
        .await;
        let victim = world.browser();
        let page = victim.get("/auth/sign-in").await;
        let token = page.field("csrf").unwrap();
        assert_eq!(victim.cookie("svc_csrf").as_deref(), Some(token.as_str()));

        let credentials = [("email", world.user.as_str()), ("password", PASSWORD)];
        let missing = victim.post("/auth/sign-in", &credentials).await;
        let wrong_token = "A".repeat(43);
        let wrong = victim
            .post(
                "/auth/sign-in",
                &[
                    credentials[0],
                    credentials[1],
                    ("csrf", wrong_token.as_str()),
                ],
            )
            .await;
        // Login CSRF: the attacker's page posts a token it saw, but the browser has no
        // matching cookie.
        let attacker = world.browser();
        let cookieless = attacker
            .post(
                "/auth/sign-in",
                &[credentials[0], credentials[1], ("csrf", token.as_str())],
            )
            .await;
        for (what, refused) in [
            ("missing", &missing),
            ("wrong", &wrong),
            ("cookieless", &cookieless),
        ] {
            assert_eq!(refused.status, 403, "{what}: {}", refused.body);
            refused.assert_secure(what);
            assert!(
                !refused
                    .set_cookies()
                    .iter()
                    .any(|c| c.contains("svc_session")),
                "{what}: no session"
            );
        }
        assert_eq!(victim.cookie("svc_session"), None);
        assert_eq!(attacker.cookie("svc_session"), None);
        assert_eq!(
            victim.get("/auth/account").await.status,
            303,
            "not signed in"
        );

        // Every other form is guarded the same way.
        for action in [
            "/auth/sign-up",
            "/auth/consent",
            "/auth/sign-out",
            "/auth/sessions/revoke",
            "/auth/forgot-password",
            "/auth/reset-password",
            "/auth/verify-email",
            "/auth/accept-invitation",
        ] {
            let refused = victim
                .post(action, &[("csrf", wrong_token.as_str()), ("token", "x")])
                .await;
            assert_eq!(refused.status, 403, "{action}: {}", refused.body);
        }
        assert_eq!(world.mail_count(&world.user).await, 0, "nothing was sent");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn reflected_values_come_back_escaped_everywhere() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                client_name: Some(format!("Shop {XSS}")),
                signup: true,
                ..Setup::default()
            },
        )
        .await;
        let browser = world.browser();
        let assert_clean = |what: &str, page: &Page| {
            assert!(
                !page.body.contains("<script>alert"),
                "{what}: {}",
                page.body
            );
            assert!(!page.body.contains("<img src=x"), "{what}: {}", page.body);
        };

        // Client name and login_hint on the sign-in page, state carried along.
        let start = browser
            .get(&world.authorize_path("openid", XSS, &[("login_hint", XSS)]))
            .await;
        assert_eq!(start.status, 303, "{}", start.body);
        let interaction = param(&start.location().unwrap(), "interaction").unwrap();
        let sign_in = browser
            .get(&format!("/auth/sign-in?interaction={interaction}"))
            .await;
        assert_eq!(sign_in.status, 200);
        assert_clean("sign-in page", &sign_in);
        assert!(sign_in.body.contains("&#60;script&#62;"), "shown, escaped");
        assert_eq!(
            sign_in.field("email").as_deref(),
            Some(XSS),
            "hint round-trips"
        );

        // The email field on a failed sign-in.
        let failed = browser
            .sign_in(Some(&interaction), XSS, "not the password")
            .await;
        assert_eq!(failed.status, 401);
        assert_clean("failed sign-in", &failed);

        // Consent page (client name) and the state in the final redirect.
        let ok = browser
            .sign_in(Some(&interaction), &world.user, PASSWORD)
            .await;
        let consent_path = browser
            .get(&ok.location().unwrap())
            .await
            .location()
            .unwrap();
        let consent = browser.get(&consent_path).await;
        assert_eq!(consent.status, 200);
        assert_clean("consent page", &consent);
        let done = browser
            .submit(&consent_path, "/auth/consent", &[("decision", "allow")])
            .await;
        assert_eq!(
            param(&done.location().unwrap(), "state").as_deref(),
            Some(XSS)
        );

        let encoded: String = url::form_urlencoded::byte_serialize(XSS.as_bytes()).collect();

        // Sign-up re-shows the name and address it refused (a hostile address is invalid).
        let refused = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[("name", XSS), ("email", XSS), ("password", PASSWORD)],
            )
            .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_clean("sign-up refused", &refused);
        assert_eq!(refused.field("name").as_deref(), Some(XSS), "re-shown");
        assert_eq!(refused.field("email").as_deref(), Some(XSS), "re-shown");

        // Forgot-password re-shows the address it refused.
        let refused = browser
            .submit(
                "/auth/forgot-password",
                "/auth/forgot-password",
                &[("email", XSS)],
            )
            .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_clean("forgot-password refused", &refused);
        assert_eq!(refused.field("email").as_deref(), Some(XSS));

        // The invitation form re-shows the name when the password is refused.
        let invited = world
            .api(reqwest::Method::POST, "/api/v1/tenant-users")
            .json(&serde_json::json!({"email": "ivy@example.com", "invite": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(invited.status(), 201);
        let link = world
            .mailed_link("ivy@example.com", "/auth/accept-invitation")
            .await;
        let refused = browser
            .submit(
                &link,
                "/auth/accept-invitation",
                &[("name", XSS), ("password", "short")],
            )
            .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_clean("invitation refused", &refused);
        assert_eq!(refused.field("name").as_deref(), Some(XSS));

        // The end-session confirmation (a registered client, so it renders) carries every
        // parameter back as hidden fields: hostile values and hostile names alike.
        let confirm = world.browser();
        let path = format!(
            "/oauth/end-session?client_id={}&state={encoded}&{encoded}={encoded}",
            world.client_id
        );
        let page = confirm.get(&path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("name=\"confirm\" value=\"yes\""));
        assert_clean("end-session confirmation", &page);
        let hidden = hidden_fields(&page.body);
        assert!(
            hidden.contains(&("state".to_owned(), XSS.to_owned())),
            "{hidden:?}"
        );
        assert!(
            hidden.contains(&(XSS.to_owned(), XSS.to_owned())),
            "a hostile parameter name round-trips escaped: {hidden:?}"
        );

        // The interaction parameter itself, the authorize error page and link pages.
        for path in [
            format!("/auth/sign-in?interaction={encoded}"),
            format!("/auth/consent?interaction={encoded}"),
            format!("/oauth/authorize/resume?interaction={encoded}"),
            format!("/oauth/authorize?client_id={encoded}&redirect_uri={encoded}"),
            format!("/auth/reset-password?token={encoded}"),
            format!("/auth/verify-email?token={encoded}"),
            format!("/auth/accept-invitation?token={encoded}"),
            format!("/oauth/end-session?client_id={encoded}&state={encoded}"),
        ] {
            let page = browser.get(&path).await;
            assert!(page.status < 500, "{path}: {}", page.status);
            assert_clean(&path, &page);
        }
        world.shutdown().await;
    }
}

#[tokio::test]
async fn every_hosted_page_and_the_authorize_error_page_carry_the_security_headers() {
    let world = World::new(Backend::Sqlite, Setup::default()).await;
    let browser = world.browser();
    let paths = [
        "/auth/sign-in",
        "/auth/sign-up",
        "/auth/forgot-password",
        "/auth/forgot-password?sent=1",
        "/auth/reset-password?token=x",
        "/auth/verify-email?token=x",
        "/auth/accept-invitation?token=x",
        "/auth/consent?interaction=int_01jd0000000000000000000000",
        "/auth/account",
        "/auth/sessions",
        "/auth/sign-out",
        "/oauth/authorize",
        "/oauth/authorize/resume?interaction=bad",
        "/oauth/end-session",
    ];
    for path in paths {
        let page = browser.get(path).await;
        assert!(page.status < 500, "{path}: {}", page.status);
        page.assert_secure(path);
        if page.status != 303 {
            assert_eq!(
                page.headers["content-type"], "text/html; charset=utf-8",
                "{path}"
            );
            assert!(page.body.contains("<html lang=\"en\">"), "{path}");
            assert!(page.body.contains("Acme Corp"), "{path}: the tenant's name");
        }
    }
    let signed_in = browser.sign_in(None, &world.user, PASSWORD).await;
    for path in ["/auth/account", "/auth/sessions", "/auth/sign-out"] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 200, "{path}");
        page.assert_secure(path);
    }
    signed_in.assert_secure("sign-in POST");
    world.shutdown().await;
}

#[tokio::test]
async fn oversized_forms_are_413_and_repeated_fields_400() {
    let world = World::new(Backend::Sqlite, Setup::default()).await;
    let browser = world.browser();
    let page = browser.get("/auth/sign-in").await;
    let token = page.field("csrf").unwrap();
    let big = format!(
        "csrf={token}&email=a%40b.c&password={}",
        "x".repeat(20 * 1024)
    );
    let refused = browser.post_raw("/auth/sign-in", big).await;
    assert_eq!(refused.status, 413, "{}", refused.body);
    assert!(
        refused.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    refused.assert_secure("413");

    let twice = format!("csrf={token}&email=a%40b.c&password=one&password=two");
    let refused = browser.post_raw("/auth/sign-in", twice).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    refused.assert_secure("400");
    let twice = format!("csrf={token}&csrf={token}&email=a%40b.c&password=x");
    assert_eq!(browser.post_raw("/auth/sign-in", twice).await.status, 400);
    assert_eq!(browser.cookie("svc_session"), None);

    // Unknown parameters are ignored.
    let page = browser.get("/auth/sign-in?utm_source=mail&foo=bar").await;
    assert_eq!(page.status, 200);
    world.shutdown().await;
}

#[tokio::test]
async fn unknown_clients_and_unregistered_redirect_uris_get_an_error_page_never_a_redirect() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let browser = world.browser();
        let unknown_client = world
            .authorize_path("openid", "s", &[])
            .replace(&world.client_id, "app_01jd0000000000000000000000");
        let evil: String =
            url::form_urlencoded::byte_serialize(b"https://evil.example/cb").collect();
        let registered: String =
            url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect();
        let wrong_redirect = world
            .authorize_path("openid", "s", &[])
            .replace(&registered, &evil);
        for path in [unknown_client, wrong_redirect] {
            let page = browser.get(&path).await;
            assert_eq!(page.status, 400, "{path}: {}", page.body);
            assert!(page.location().is_none(), "{path}: never a redirect");
            page.assert_secure(&path);
            assert!(page.body.contains("role=\"alert\""));
        }
        world.shutdown().await;
    }
}

/// `/oauth/authorize` for the public client `client` with `redirect`, PKCE S256.
fn native_authorize(client: &str, redirect: &str) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", client)
        .append_pair("redirect_uri", redirect)
        .append_pair("scope", "openid")
        .append_pair("state", "s")
        .append_pair("code_challenge", CHALLENGE)
        .append_pair("code_challenge_method", "S256");
    format!("/oauth/authorize?{}", query.finish())
}

#[tokio::test]
async fn a_native_apps_loopback_ip_redirect_is_accepted_on_any_port_and_nothing_else() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        // RFC 8252 §7.3: registered without (or with) a port, presented with the one the OS gave.
        let created: serde_json::Value = world
            .api(reqwest::Method::POST, "/api/v1/applications")
            .json(&serde_json::json!({
                "name": "Desktop app",
                "redirect_uris": ["http://127.0.0.1/callback", "http://localhost:4000/callback"],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "none",
                "allowed_scopes": ["openid"],
                "first_party": true,
            }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let client = created["client_id"].as_str().expect("created").to_owned();
        let browser = world.browser();
        let presented = "http://127.0.0.1:49321/callback";
        let code = || async {
            let location = follow_to_client(
                &browser,
                &native_authorize(&client, presented),
                presented,
                &world.user,
            )
            .await;
            param(&location, "code").expect("a code")
        };
        let redeem = |code: String, redirect: &'static str| {
            world
                .app
                .request(reqwest::Method::POST, "/oauth/token")
                .header("host", &world.host)
                .form(&[
                    ("grant_type", "authorization_code"),
                    ("code", code.as_str()),
                    ("client_id", client.as_str()),
                    ("redirect_uri", redirect),
                    ("code_verifier", VERIFIER),
                ])
                .send()
        };
        let issued = redeem(code().await, presented).await.unwrap();
        assert_eq!(
            issued.status(),
            200,
            "{backend:?}: {}",
            issued.text().await.unwrap()
        );
        // The code is bound to the URI as presented: another port is another URI at the token
        // endpoint (RFC 6749 §4.1.3).
        let other_port = redeem(code().await, "http://127.0.0.1:49322/callback")
            .await
            .unwrap();
        assert_eq!(other_port.status(), 400);
        let body: serde_json::Value = other_port.json().await.unwrap();
        assert_eq!(body["error"], "invalid_grant", "{body}");

        // Only the port may differ; localhost stays exact (RFC 8252 §8.3).
        for refused in [
            "http://127.0.0.1:49321/callback/",
            "http://127.0.0.1:49321/other",
            "http://127.0.0.1:49321/callback?x=1",
            "http://127.0.0.2:49321/callback",
            "http://127.0.0.1.evil.example:49321/callback",
            "http://127.0.0.1:0/callback",
            "https://127.0.0.1:49321/callback",
            "http://localhost:4001/callback",
        ] {
            let page = browser.get(&native_authorize(&client, refused)).await;
            assert_eq!(page.status, 400, "{refused}: {}", page.body);
            assert!(page.location().is_none(), "{refused}: never a redirect");
        }
        world.shutdown().await;
    }
}
