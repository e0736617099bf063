//! Second factors end to end on the hosted pages, on SQLite and PostgreSQL: enrolling a TOTP
//! authenticator (QR code and key, confirmed with a code computed by `totp-rs` from the key
//! the page shows), backup codes shown once, the second step of a sign-in, step-up of an aal1
//! session for `acr_values` / an essential `acr`, `acr`/`amr` in ID tokens, access tokens and
//! introspection, and the attacks of issue 16: replayed TOTP codes, brute force (locks, same
//! answer for right and wrong codes), backup-code reuse, step-up bypass by an old session
//! cookie or `prompt=none`, forged challenge cookies, CSRF on every new form, and removing a
//! factor from an aal1 session.

use super::support::{Browser, PASSWORD, Page, REDIRECT, Setup, World, param, payload};
use super::tokens::{tokens, verify_id_token};
use reqwest::Method;
use serde_json::Value;
use svc_testkit::{BACKENDS, Backend};

async fn world(backend: Backend, extra: &[(&'static str, &'static str)]) -> World {
    let mut env = vec![("SVC_TWO_FACTOR__ENABLED", "true")];
    env.extend_from_slice(extra);
    World::new(
        backend,
        Setup {
            first_party: true,
            env,
            ..Setup::default()
        },
    )
    .await
}

/// The code of `key` (base32) for the step containing now + `offset` seconds.
#[allow(clippy::disallowed_methods)] // the authenticator app reads the wall clock, like the server
pub(crate) fn totp(key: &str, offset: i64) -> String {
    let secret = totp_rs::Secret::try_from_base32(key.replace(' ', "")).unwrap();
    let totp = totp_rs::Builder::new()
        .with_secret(secret)
        .build_noncompliant();
    let now = time::OffsetDateTime::now_utc().unix_timestamp() + offset;
    totp.generate(u64::try_from(now).unwrap()).to_string()
}

/// The text of the `<dd>` after `<dt>{label}</dt>`.
fn detail(page: &Page, label: &str) -> String {
    let start = page.body.find(&format!("<dt>{label}</dt><dd>")).unwrap() + label.len() + 13;
    let end = start + page.body[start..].find("</dd>").unwrap();
    page.body[start..end].to_owned()
}

/// Every `<code>` of a page.
fn codes(page: &Page) -> Vec<String> {
    page.body
        .split("<code>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</code>").map(|(c, _)| c.to_owned()))
        .collect()
}

/// Signs `browser` in with the password (no second factor yet) and enrols an authenticator:
/// returns the key and the backup codes shown once.
pub(super) async fn enrol(browser: &Browser, world: &World) -> (String, Vec<String>) {
    let signed_in = browser.sign_in(None, &world.user, PASSWORD).await;
    assert_eq!(signed_in.location().as_deref(), Some("/auth/account"));
    let account = browser.get("/auth/account").await;
    assert!(
        account.body.contains("/auth/account/two-factor"),
        "{}",
        account.body
    );
    let setup = browser
        .submit(
            "/auth/account/two-factor",
            "/auth/account/two-factor",
            &[("action", "setup")],
        )
        .await;
    assert_eq!(setup.status, 200, "{}", setup.body);
    setup.assert_secure("setup page");
    assert!(setup.body.contains("<svg"), "QR code inline");
    assert!(
        !setup.body.contains("<script"),
        "no script on the setup page"
    );
    let key = detail(&setup, "Key");
    let factor = setup.field("factor").unwrap();
    let csrf = setup.field("csrf").unwrap();
    // A wrong first code shows the same key again, and turns nothing on.
    let wrong = browser
        .post(
            "/auth/account/two-factor",
            &[
                ("csrf", &csrf),
                ("factor", &factor),
                ("action", "confirm"),
                ("code", "000000"),
            ],
        )
        .await;
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    assert_eq!(detail(&wrong, "Key"), key);
    assert!(wrong.body.contains("aria-invalid=\"true\""));
    let confirmed = browser
        .post(
            "/auth/account/two-factor",
            &[
                ("csrf", &csrf),
                ("factor", &factor),
                ("action", "confirm"),
                ("code", &totp(&key, 0)),
            ],
        )
        .await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let backup = codes(&confirmed);
    assert_eq!(backup.len(), 10, "{}", confirmed.body);
    assert!(
        backup
            .iter()
            .all(|c| c.len() == 11 && c.as_bytes()[5] == b'-')
    );
    (key, backup)
}

/// Follows an authorization request in `browser` until the application gets its answer,
/// giving `code` on the second-factor page if it is asked; returns the final redirect.
async fn authorize(
    world: &World,
    browser: &Browser,
    extra: &[(&str, &str)],
    code: Option<&str>,
) -> String {
    let mut page = browser
        .get(&world.authorize_path("openid", "st", extra))
        .await;
    for _ in 0..6 {
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        if location.starts_with(REDIRECT) {
            return location;
        }
        page = if location.starts_with("/auth/second-factor?") {
            let code = code.expect("a second factor was asked for");
            // After the code the browser follows 303s to the client: a browser checks each
            // against the form's CSP `form-action`, which must allow the client's origin.
            let form = browser.get(&location).await;
            let csp = form.headers["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("https://app.example.com"), "{csp}");
            browser
                .submit(&location, "/auth/second-factor", &[("code", code)])
                .await
        } else {
            browser.get(&location).await
        };
    }
    panic!("the authorization request did not reach the application");
}

#[tokio::test]
async fn enrol_then_step_up_then_sign_in_with_totp_and_backup_codes() {
    for backend in BACKENDS {
        let world = world(backend, &[]).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let browser = world.browser();

        // Without a factor, a voluntary aal2 request goes on at aal1 (and says so).
        browser.sign_in(None, &world.user, PASSWORD).await;
        let done = authorize(&world, &browser, &[("acr_values", "urn:svc:aal2")], None).await;
        let issued = tokens(&world, &param(&done, "code").unwrap(), &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal1", "{backend:?}: {claims}");
        assert_eq!(claims["amr"], serde_json::json!(["pwd"]));

        // A second browser signs in before the authenticator exists: an aal1 session.
        let early = world.browser();
        early.sign_in(None, &world.user, PASSWORD).await;
        let (key, backup) = enrol(&browser, &world).await;
        let aal1_cookie = early.cookie("svc_session").unwrap();

        // The enrolling browser proved the authenticator: its session is aal2 already.
        let enrolled = authorize(&world, &browser, &[("acr_values", "urn:svc:aal2")], None).await;
        let issued = tokens(&world, &param(&enrolled, "code").unwrap(), &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal2", "{backend:?}: {claims}");

        // The aal1 session must step up: prompt=none cannot, an interactive request can.
        let none = authorize(
            &world,
            &early,
            &[("acr_values", "urn:svc:aal2"), ("prompt", "none")],
            None,
        )
        .await;
        assert_eq!(
            param(&none, "error").as_deref(),
            Some("interaction_required"),
            "{none}"
        );
        // The enrolment spent the current step: the next one is within the ±1 step window.
        let step_code = totp(&key, 30);
        let stepped = authorize(
            &world,
            &early,
            &[("acr_values", "urn:svc:aal2")],
            Some(&step_code),
        )
        .await;
        let issued = tokens(&world, &param(&stepped, "code").unwrap(), &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal2", "{backend:?}: {claims}");
        assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
        let access = issued["access_token"].as_str().unwrap();
        let at = payload(access);
        assert_eq!(at["acr"], "urn:svc:aal2", "{at}");
        assert_eq!(at["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
        assert!(at["auth_time"].is_i64());
        let described = world.introspect(access).await;
        assert_eq!(described["active"], true, "{described}");
        assert_eq!(described["acr"], "urn:svc:aal2");
        assert_eq!(described["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
        // An essential aal2 request is now met without asking again.
        let essential = authorize(
            &world,
            &early,
            &[(
                "claims",
                r#"{"id_token":{"acr":{"essential":true,"values":["urn:svc:aal2"]}}}"#,
            )],
            None,
        )
        .await;
        assert!(param(&essential, "code").is_some(), "{essential}");

        // Step-up replaced the session: the old aal1 cookie signs nobody in any more.
        assert_ne!(early.cookie("svc_session").unwrap(), aal1_cookie);
        let old_tab = world.browser();
        old_tab.set_cookie(&format!("svc_session={aal1_cookie}; Path=/"));
        let replay = old_tab.get("/auth/account").await;
        assert_eq!(
            replay.location().as_deref(),
            Some("/auth/sign-in"),
            "{backend:?}"
        );
        let replay = authorize(
            &world,
            &old_tab,
            &[("acr_values", "urn:svc:aal2"), ("prompt", "none")],
            None,
        )
        .await;
        assert_eq!(param(&replay, "error").as_deref(), Some("login_required"));

        // Sign in again: the password alone creates no session, the second step does.
        let fresh = world.browser();
        let first = fresh.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(
            first.location().as_deref(),
            Some("/auth/second-factor"),
            "{backend:?}"
        );
        assert!(
            fresh.cookie("svc_session").is_none(),
            "no session before the second factor"
        );
        assert!(fresh.cookie("svc_mfa").is_some());
        let step = fresh.get("/auth/second-factor").await;
        assert_eq!(step.status, 200);
        step.assert_secure("second-factor page");
        assert!(step.body.contains("autocomplete=\"one-time-code\""));
        // The code used for the step-up is spent (RFC 6238 §5.2).
        let replayed = fresh
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &step_code)],
            )
            .await;
        assert_eq!(
            replayed.status, 401,
            "{backend:?}: replayed TOTP code: {}",
            replayed.body
        );
        assert!(replayed.body.contains("role=\"alert\""));
        // A backup code works, once, typed in any case.
        let with_backup = fresh
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &backup[0].to_lowercase())],
            )
            .await;
        assert_eq!(
            with_backup.location().as_deref(),
            Some("/auth/account"),
            "{}",
            with_backup.body
        );
        assert!(fresh.cookie("svc_session").is_some());
        let status = fresh.get("/auth/account/two-factor").await;
        assert!(
            status.body.contains("<dd>9</dd>"),
            "nine backup codes left: {}",
            status.body
        );

        let again = world.browser();
        again.sign_in(None, &world.user, PASSWORD).await;
        let reused = again
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &backup[0])],
            )
            .await;
        assert_eq!(reused.status, 401, "{backend:?}: backup code reuse");
        let with_totp = again
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &totp(&key, 120))],
            )
            .await;
        // Four steps ahead is outside ±1 step; the challenge still stands after a wrong code.
        assert_eq!(with_totp.status, 401);
        let challenge = again.cookie("svc_mfa").unwrap();
        let with_backup = again
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &backup[1])],
            )
            .await;
        assert_eq!(with_backup.status, 303, "{}", with_backup.body);
        assert!(
            with_backup
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_mfa=;"))
        );
        // The challenge was single use: replaying its cookie gets the expired page.
        let replayer = world.browser();
        replayer.set_cookie(&format!("svc_mfa={challenge}; Path=/"));
        let stale = replayer.get("/auth/second-factor").await;
        assert_eq!(stale.status, 400, "{backend:?}: a used challenge");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn wrong_codes_lock_the_second_step_with_one_answer_for_right_and_wrong_codes() {
    for backend in BACKENDS {
        let world = world(backend, &[("SVC_AUTH__BRUTE_FORCE_MAX_ATTEMPTS", "3")]).await;
        let (key, _) = enrol(&world.browser(), &world).await;
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        for attempt in 0..3 {
            let wrong = browser
                .submit(
                    "/auth/second-factor",
                    "/auth/second-factor",
                    &[("code", "123456")],
                )
                .await;
            assert_eq!(wrong.status, 401, "{backend:?}: attempt {attempt}");
        }
        let right = browser
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &totp(&key, 30))],
            )
            .await;
        let wrong = browser
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", "654321")],
            )
            .await;
        assert_eq!(
            right.status, 429,
            "{backend:?}: locked even for the right code"
        );
        assert_eq!(wrong.status, 429);
        assert_eq!(
            right.body, wrong.body,
            "locked answers do not tell codes apart"
        );
        assert!(right.headers.get("retry-after").is_some());
        assert!(browser.cookie("svc_session").is_none());
        world.shutdown().await;
    }
}

#[tokio::test]
async fn forged_challenges_csrf_and_factor_changes_from_an_aal1_session_are_refused() {
    for backend in BACKENDS {
        let world = world(backend, &[("SVC_AUTH__BRUTE_FORCE_MAX_ATTEMPTS", "20")]).await;
        // Signed in before the authenticator exists: an aal1 session.
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let (key, _) = enrol(&world.browser(), &world).await;

        // A forged or unknown challenge cookie: the expired page, and the cookie is dropped.
        let forger = world.browser();
        forger.set_cookie("svc_mfa=mfa_c_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA; Path=/");
        let forged = forger.get("/auth/second-factor").await;
        assert_eq!(forged.status, 400, "{backend:?}: {}", forged.body);
        assert!(
            forged
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_mfa=;"))
        );
        // Without a challenge or a session there is nothing to verify.
        let nobody = world.browser().get("/auth/second-factor").await;
        assert_eq!(nobody.location().as_deref(), Some("/auth/sign-in"));

        // CSRF on every new form.
        let victim = world.browser();
        victim.sign_in(None, &world.user, PASSWORD).await;
        for (path, fields) in [
            ("/auth/second-factor", vec![("code", totp(&key, 30))]),
            (
                "/auth/account/two-factor",
                vec![("action", "backup_codes".to_owned())],
            ),
        ] {
            let mut form: Vec<(&str, &str)> =
                fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
            form.push(("csrf", "forged"));
            let refused = victim.post(path, &form).await;
            assert_eq!(refused.status, 403, "{backend:?}: {path}");
        }
        assert!(victim.cookie("svc_session").is_none(), "nothing verified");

        // Hostile code values: refused as wrong codes, never a 500.
        for hostile in [
            "",
            "' OR 1=1 --",
            "\u{0}\u{0}",
            &"9".repeat(5000),
            "１２３４５６",
        ] {
            let page = victim
                .submit(
                    "/auth/second-factor",
                    "/auth/second-factor",
                    &[("code", hostile)],
                )
                .await;
            assert!(
                page.status == 401 || page.status == 413,
                "{backend:?}: {}",
                page.status
            );
        }

        // The older session is aal1: it may not strip the factor or get new codes without
        // stepping up.
        let overview = browser.get("/auth/account/two-factor").await;
        let factor = overview.field("factor").unwrap();
        let removed = browser
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "remove"), ("factor", &factor)],
            )
            .await;
        assert_eq!(
            removed.location().as_deref(),
            Some("/auth/second-factor"),
            "{backend:?}"
        );
        let codes_page = browser
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "backup_codes")],
            )
            .await;
        assert_eq!(
            codes_page.location().as_deref(),
            Some("/auth/second-factor")
        );
        // Stepping up (no pending request) returns to the account, then removal works.
        let stepped = browser
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &totp(&key, 30))],
            )
            .await;
        assert_eq!(
            stepped.location().as_deref(),
            Some("/auth/account"),
            "{}",
            stepped.body
        );
        let regenerated = browser
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "backup_codes")],
            )
            .await;
        assert_eq!(codes(&regenerated).len(), 10, "{}", regenerated.body);
        let removed = browser
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "remove"), ("factor", &factor)],
            )
            .await;
        assert_eq!(
            removed.location().as_deref(),
            Some("/auth/account/two-factor?removed=1")
        );
        // With the factor gone, the password alone signs in again.
        let later = world.browser().sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(
            later.location().as_deref(),
            Some("/auth/account"),
            "{backend:?}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn without_two_factor_the_pages_do_not_exist_and_discovery_offers_aal1_only() {
    for backend in BACKENDS {
        let off = World::new(backend, Setup::default()).await;
        let browser = off.browser();
        browser.sign_in(None, &off.user, PASSWORD).await;
        assert_eq!(browser.get("/auth/second-factor").await.status, 404);
        assert_eq!(browser.get("/auth/account/two-factor").await.status, 404);
        assert!(
            !browser
                .get("/auth/account")
                .await
                .body
                .contains("two-factor")
        );
        let discovery = |world: &World| {
            world
                .app
                .request(Method::GET, "/.well-known/openid-configuration")
                .header("host", &world.host)
                .send()
        };
        let doc: Value = discovery(&off).await.unwrap().json().await.unwrap();
        assert_eq!(
            doc["acr_values_supported"],
            serde_json::json!(["urn:svc:aal1"])
        );
        off.shutdown().await;
        let on = world(backend, &[]).await;
        let doc: Value = discovery(&on).await.unwrap().json().await.unwrap();
        assert_eq!(
            doc["acr_values_supported"],
            serde_json::json!(["urn:svc:aal1", "urn:svc:aal2"])
        );
        on.shutdown().await;
    }
}

#[tokio::test]
async fn administrators_list_and_reset_a_persons_second_factors() {
    for backend in BACKENDS {
        let world = world(backend, &[]).await;
        let users: Value = world
            .api(Method::GET, "/api/v1/tenant-users")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ada = users["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["email"] == world.user.as_str())
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let path = format!("/api/v1/tenant-users/{ada}/second-factors");
        let listed: Value = world
            .api(Method::GET, &path)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            listed["items"],
            serde_json::json!([]),
            "{backend:?}: {listed}"
        );
        assert_eq!(listed["backup_codes_remaining"], 0);

        enrol(&world.browser(), &world).await;
        let listed: Value = world
            .api(Method::GET, &path)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let items = listed["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{listed}");
        assert_eq!(items[0]["kind"], "totp");
        assert!(items[0]["id"].as_str().unwrap().starts_with("mfa_"));
        assert_eq!(listed["backup_codes_remaining"], 10);
        let text = listed.to_string();
        assert!(
            !text.contains("secret") && !text.contains("sealed"),
            "{text}"
        );

        // Unknown or malformed users are not found; a read token may not reset.
        for missing in ["usr_01jd2m8q3v7x9k4n6p0r5t2w8y", "not-an-id"] {
            let response = world
                .api(
                    Method::DELETE,
                    &format!("/api/v1/tenant-users/{missing}/second-factors"),
                )
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 404, "{backend:?}: {missing}");
        }
        let before = world.mail_count(&world.user).await;
        let reset = world.api(Method::DELETE, &path).send().await.unwrap();
        assert_eq!(reset.status(), 204, "{backend:?}");
        // The person is told, with no link to click, only where to set it up again.
        let mails = world.mails_to(&world.user, before + 1).await;
        let notice = mails.last().unwrap();
        assert_eq!(
            notice["subject"], "Your two-step verification on Acme Corp was reset",
            "{notice}"
        );
        assert!(notice["link"].is_null(), "{notice}");
        let text = notice["text"].as_str().unwrap();
        assert!(text.contains("/auth/account/two-factor"), "{text}");
        let listed: Value = world
            .api(Method::GET, &path)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(listed["items"], serde_json::json!([]));
        assert_eq!(listed["backup_codes_remaining"], 0);
        // The person signs in with the password alone again.
        let again = world.browser().sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(
            again.location().as_deref(),
            Some("/auth/account"),
            "{backend:?}"
        );
        // Idempotent, and a person without factors is not mailed again.
        let mailed = world.mail_count(&world.user).await;
        assert_eq!(
            world
                .api(Method::DELETE, &path)
                .send()
                .await
                .unwrap()
                .status(),
            204
        );
        assert_eq!(world.mail_count(&world.user).await, mailed, "{backend:?}");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_required_second_factor_is_set_up_before_any_application_gets_a_code() {
    for backend in BACKENDS {
        let world = world(backend, &[("SVC_TWO_FACTOR__POLICY", "required")]).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let browser = world.browser();
        let signed_in = browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(signed_in.location().as_deref(), Some("/auth/account"));
        let none = authorize(&world, &browser, &[("prompt", "none")], None).await;
        assert_eq!(
            param(&none, "error").as_deref(),
            Some("interaction_required"),
            "{backend:?}: {none}"
        );
        let asked = browser
            .get(&world.authorize_path("openid", "st", &[]))
            .await;
        let location = asked.location().unwrap();
        assert!(
            location.starts_with("/auth/account/two-factor?interaction="),
            "{backend:?}: {location}"
        );
        let overview = browser.get(&location).await;
        assert_eq!(overview.status, 200);
        assert!(overview.field("interaction").is_some());
        let setup = browser
            .submit(
                &location,
                "/auth/account/two-factor",
                &[("action", "setup")],
            )
            .await;
        assert_eq!(setup.status, 200, "{}", setup.body);
        assert!(
            setup.field("interaction").is_some(),
            "the setup carries the request"
        );
        let key = detail(&setup, "Key");
        let csp = setup.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("https://app.example.com"), "{csp}");
        let confirmed = browser
            .post(
                "/auth/account/two-factor",
                &[
                    ("csrf", &setup.field("csrf").unwrap()),
                    ("interaction", &setup.field("interaction").unwrap()),
                    ("factor", &setup.field("factor").unwrap()),
                    ("action", "confirm"),
                    ("code", &totp(&key, 0)),
                ],
            )
            .await;
        assert_eq!(confirmed.status, 200, "{}", confirmed.body);
        assert_eq!(codes(&confirmed).len(), 10);
        let resume = confirmed
            .body
            .split("href=\"")
            .map(|rest| {
                rest.split('"')
                    .next()
                    .unwrap_or_default()
                    .replace("&amp;", "&")
            })
            .find(|href| href.starts_with("/oauth/authorize/resume?interaction="))
            .expect("the backup codes page continues the request");
        let mut page = browser.get(&resume).await;
        for _ in 0..4 {
            let location = page.location().unwrap();
            if location.starts_with(REDIRECT) {
                break;
            }
            page = browser.get(&location).await;
        }
        let location = page.location().unwrap();
        let issued = tokens(&world, &param(&location, "code").unwrap(), &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal2", "{backend:?}: {claims}");
        assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_new_browser_is_mailed_about_and_a_trusted_one_skips_the_code_until_forgotten() {
    for backend in BACKENDS {
        let world = world(backend, &[]).await;
        let first = world.browser();
        let (key, _) = enrol(&first, &world).await;
        assert!(
            first
                .cookie("svc_device")
                .is_some_and(|d| d.starts_with("dvc_")),
            "{backend:?}: a browser that signs in keeps a device cookie"
        );
        let laptop = world.browser();
        laptop.sign_in(None, &world.user, PASSWORD).await;
        let step = laptop.get("/auth/second-factor").await;
        assert!(step.body.contains("name=\"trust\""), "{}", step.body);
        let trusted = laptop
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &totp(&key, 30)), ("trust", "yes")],
            )
            .await;
        assert_eq!(
            trusted.location().as_deref(),
            Some("/auth/account"),
            "{}",
            trusted.body
        );
        let mails = world.mails_to(&world.user, 1).await;
        assert!(
            mails
                .iter()
                .any(|m| m["subject"] == "New sign-in to Acme Corp"),
            "{backend:?}: {mails:?}"
        );
        // The trusted browser: the password alone, and the tokens still say aal2.
        let again = laptop.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(
            again.location().as_deref(),
            Some("/auth/account"),
            "{backend:?}"
        );
        let done = authorize(&world, &laptop, &[("acr_values", "urn:svc:aal2")], None).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let issued = tokens(&world, &param(&done, "code").unwrap(), &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal2");
        assert_eq!(claims["amr"], serde_json::json!(["pwd", "mfa"]));
        // A copied device cookie belongs to that browser only for this person; another
        // person's browser is not trusted by it (here: a fresh browser is asked).
        let stranger = world.browser();
        let asked = stranger.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(asked.location().as_deref(), Some("/auth/second-factor"));
        // Forgetting trusted devices asks for the code again.
        let forgot = laptop
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "forget_devices")],
            )
            .await;
        assert_eq!(
            forgot.location().as_deref(),
            Some("/auth/account/two-factor?forgotten=1"),
            "{}",
            forgot.body
        );
        let asked = laptop.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(
            asked.location().as_deref(),
            Some("/auth/second-factor"),
            "{backend:?}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn the_second_step_is_in_the_login_history_for_the_person_and_the_administrators() {
    for backend in BACKENDS {
        let world = world(backend, &[]).await;
        let (key, _) = enrol(&world.browser(), &world).await;
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let wrong = browser
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", "000000")],
            )
            .await;
        assert_eq!(wrong.status, 401);
        let right = browser
            .submit(
                "/auth/second-factor",
                "/auth/second-factor",
                &[("code", &totp(&key, 30))],
            )
            .await;
        assert_eq!(right.status, 303);
        let users: Value = world
            .api(Method::GET, "/api/v1/tenant-users")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ada = users["items"][0]["id"].as_str().unwrap().to_owned();
        let history: Value = world
            .api(
                Method::GET,
                &format!("/api/v1/tenant-users/{ada}/login-history?limit=2"),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let seen: Vec<(&str, &str)> = history["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["method"].as_str().unwrap(), r["result"].as_str().unwrap()))
            .collect();
        assert_eq!(
            seen,
            [
                ("password_totp", "success"),
                ("password_totp", "invalid_second_factor")
            ],
            "{backend:?}: {history}"
        );
        let page = browser.get("/auth/account/history").await;
        assert_eq!(page.status, 200);
        page.assert_secure("history page");
        assert!(page.body.contains("Password and app code"), "{}", page.body);
        assert!(page.body.contains("Wrong code"));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn an_application_with_a_minimum_acr_gets_aal2_or_nothing() {
    for backend in BACKENDS {
        let world = world(backend, &[]).await;
        let (strict_id, strict_secret) = world
            .register_with(serde_json::json!({
                "name": "Bank",
                "first_party": true,
                "minimum_acr": "urn:svc:aal2"
            }))
            .await;
        let app: Value = world
            .api(Method::GET, &format!("/api/v1/applications/{strict_id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(app["minimum_acr"], "urn:svc:aal2", "{backend:?}: {app}");
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        // The ordinary application is fine with the password alone.
        let plain = authorize(&world, &browser, &[], None).await;
        assert!(param(&plain, "code").is_some(), "{plain}");
        // The strict one sends a person without a factor to set one up first.
        let path = world
            .authorize_path("openid", "st", &[])
            .replace(&world.client_id, &strict_id);
        let asked = browser.get(&path).await;
        let location = asked.location().unwrap();
        assert!(
            location.starts_with("/auth/account/two-factor?interaction="),
            "{backend:?}: {location}"
        );
        // A bad value is refused at registration.
        let refused = world
            .api(Method::POST, "/api/v1/applications")
            .json(&serde_json::json!({
                "name": "Odd",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid"],
                "minimum_acr": "urn:svc:aal9"
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{backend:?}");
        // With a factor (enrolled elsewhere), the password-only session steps up.
        let (key, _) = enrol(&world.browser(), &world).await;
        let mut page = browser.get(&path).await;
        let mut stepped_up = false;
        for _ in 0..6 {
            let location = page.location().unwrap();
            if location.starts_with(REDIRECT) {
                break;
            }
            page = if location.starts_with("/auth/second-factor?") {
                stepped_up = true;
                browser
                    .submit(
                        &location,
                        "/auth/second-factor",
                        &[("code", &totp(&key, 30))],
                    )
                    .await
            } else {
                browser.get(&location).await
            };
        }
        assert!(
            stepped_up,
            "{backend:?}: the strict application needed a step-up"
        );
        let code = param(&page.location().unwrap(), "code").unwrap();
        let issued = tokens(&world, &code, &(strict_id.clone(), strict_secret)).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &strict_id).await;
        assert_eq!(claims["acr"], "urn:svc:aal2");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_tenant_sets_its_own_policy_through_the_control_plane() {
    for backend in BACKENDS {
        let world = world(backend, &[]).await;
        // Required for this tenant: a person without a factor sets one up first.
        let changed = world
            .patch_tenant(serde_json::json!({"mfa_policy": "required"}))
            .await;
        assert_eq!(changed.status(), 200, "{backend:?}");
        let changed: Value = changed.json().await.unwrap();
        assert_eq!(changed["mfa_policy"], "required");
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let asked = browser
            .get(&world.authorize_path("openid", "st", &[]))
            .await;
        let location = asked.location().unwrap();
        assert!(
            location.starts_with("/auth/account/two-factor?interaction="),
            "{backend:?}: {location}"
        );
        // Off: nothing new is offered and nothing is stepped up.
        let off = world
            .patch_tenant(serde_json::json!({"mfa_policy": "off"}))
            .await;
        assert_eq!(off.status(), 200, "{backend:?}");
        let code = authorize(&world, &browser, &[("acr_values", "urn:svc:aal2")], None).await;
        assert!(param(&code, "code").is_some(), "{backend:?}: {code}");
        let essential = r#"{"id_token":{"acr":{"essential":true,"values":["urn:svc:aal2"]}}}"#;
        let refused = authorize(&world, &browser, &[("claims", essential)], None).await;
        assert_eq!(
            param(&refused, "error").as_deref(),
            Some("unmet_authentication_requirements"),
            "{backend:?}: {refused}"
        );
        let overview = browser.get("/auth/account/two-factor").await;
        assert_eq!(overview.status, 200);
        assert!(
            !overview.body.contains("value=\"setup\""),
            "{backend:?}: no setup offered"
        );
        let setup = browser
            .submit(
                "/auth/account/two-factor",
                "/auth/account/two-factor",
                &[("action", "setup")],
            )
            .await;
        assert_eq!(setup.status, 404, "{backend:?}: {}", setup.body);
        // A factor set up before the policy went off is still asked for.
        world
            .patch_tenant(serde_json::json!({"mfa_policy": "default"}))
            .await;
        let (key, _) = enrol(&world.browser(), &world).await;
        world
            .patch_tenant(serde_json::json!({"mfa_policy": "off"}))
            .await;
        let later = world.browser();
        let second = later.sign_in(None, &world.user, PASSWORD).await;
        let location = second.location().unwrap();
        assert!(
            location.starts_with("/auth/second-factor"),
            "{backend:?}: {location}"
        );
        let done = later
            .submit(
                &location,
                "/auth/second-factor",
                &[("code", &totp(&key, 30))],
            )
            .await;
        assert_eq!(done.status, 303, "{backend:?}: {}", done.body);
        // Unknown policies are refused, naming the field.
        let bad = world
            .patch_tenant(serde_json::json!({"mfa_policy": "admins"}))
            .await;
        assert_eq!(bad.status(), 400, "{backend:?}");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_policy_that_needs_second_factors_is_refused_where_the_deployment_has_none() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        for policy in ["optional", "required"] {
            let refused = world
                .patch_tenant(serde_json::json!({"mfa_policy": policy}))
                .await;
            assert_eq!(refused.status(), 400, "{backend:?} {policy}");
            let body = refused.text().await.unwrap();
            assert!(body.contains("mfa_policy"), "{body}");
            assert!(body.contains("[two_factor].enabled"), "{body}");
        }
        let off = world
            .patch_tenant(serde_json::json!({"mfa_policy": "off"}))
            .await;
        assert_eq!(off.status(), 200, "{backend:?}");
        world.shutdown().await;
    }
}
