//! Social recovery through the hosted pages, on SQLite and PostgreSQL: a person names
//! guardians, loses their authenticator, asks to recover from another browser; the guardians
//! approve through their mailed links (the owner's own session cannot), the waiting period
//! passes, the asking browser sets a new password, every old session is gone and the first
//! authorization request sends the person to set up a new second factor. The owner's cancel
//! link stops a recovery; forged, reused and cancelled links are refused; an unknown address
//! gets the same answer as a real one and nobody is mailed.

use super::support::{Browser, PASSWORD, Setup, World};
use super::two_factor::enrol;
use svc_testkit::{BACKENDS, Backend};

const NEW_PASSWORD: &str = "an entirely new passphrase";
const GRACE: &str = "grace@example.com";
const ALAN: &str = "alan@example.com";

async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            first_party: true,
            env: vec![
                ("SVC_TWO_FACTOR__ENABLED", "true"),
                ("SVC_RECOVERY__ENABLED", "true"),
                ("SVC_RECOVERY__APPROVALS_REQUIRED", "2"),
                ("SVC_RECOVERY__WAITING_PERIOD_SECS", "1"),
            ],
            ..Setup::default()
        },
    )
    .await
}

/// Ada, signed in on `browser` with an authenticator, names Grace and Alan as guardians.
async fn ada_with_guardians(world: &World, browser: &Browser) {
    enrol(browser, world).await;
    let page = browser.get("/auth/account/recovery").await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.assert_secure("recovery account page");
    for guardian in [GRACE, ALAN] {
        let added = browser
            .submit(
                "/auth/account/recovery",
                "/auth/account/recovery",
                &[("action", "add"), ("email", guardian)],
            )
            .await;
        assert_eq!(
            added.location().as_deref(),
            Some("/auth/account/recovery?done=added"),
            "{}",
            added.body
        );
    }
    let own = browser
        .submit(
            "/auth/account/recovery",
            "/auth/account/recovery",
            &[("action", "add"), ("email", &world.user)],
        )
        .await;
    assert_eq!(own.status, 400, "a person is not their own guardian");
    assert!(own.body.contains("aria-invalid=\"true\""), "{}", own.body);
    let page = browser.get("/auth/account/recovery").await;
    assert!(page.body.contains(GRACE) && page.body.contains(ALAN));
    assert_eq!(world.mails_to(GRACE, 1).await.len(), 1, "Grace is told");
}

/// A new browser asks to recover `email`: it holds the recovery cookie afterwards.
async fn ask(world: &World, email: &str) -> Browser {
    let asker = world.browser();
    let sign_in = asker.get("/auth/sign-in").await;
    assert!(sign_in.body.contains("/auth/recovery"), "{}", sign_in.body);
    let asked = asker
        .submit("/auth/recovery", "/auth/recovery", &[("email", email)])
        .await;
    assert_eq!(
        asked.location().as_deref(),
        Some("/auth/recovery/status"),
        "{}",
        asked.body
    );
    assert!(
        asked
            .set_cookies()
            .iter()
            .any(|c| c.starts_with("svc_recovery=") && c.contains("HttpOnly")),
        "{:?}",
        asked.set_cookies()
    );
    asker
}

#[tokio::test]
async fn guardians_help_recover_an_account_whose_factors_are_lost() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let ada = world.browser();
        ada_with_guardians(&world, &ada).await;
        let asker = ask(&world, &world.user).await;
        let status = asker.get("/auth/recovery/status").await;
        assert_eq!(status.status, 200);
        assert!(
            status.body.contains("0 of 2"),
            "{backend:?}: {}",
            status.body
        );
        let grace_link = world.mailed_link(GRACE, "/auth/recovery/approve").await;
        let alan_link = world.mailed_link(ALAN, "/auth/recovery/approve").await;
        world
            .mailed_link(&world.user, "/auth/recovery/cancel")
            .await;
        // The owner's own session cannot approve.
        let own = ada.submit(&grace_link, "/auth/recovery/approve", &[]).await;
        assert_eq!(own.status, 403, "{backend:?}: {}", own.body);
        // Grace approves from her own browser; her link works once.
        let grace = world.browser();
        let confirm = grace.get(&grace_link).await;
        assert_eq!(confirm.status, 200);
        confirm.assert_secure("approval page");
        assert!(confirm.body.contains(&world.user), "{}", confirm.body);
        let token = confirm.field("token").unwrap();
        let csrf = confirm.field("csrf").unwrap();
        let approved = grace
            .post(
                "/auth/recovery/approve",
                &[("csrf", &csrf), ("token", &token)],
            )
            .await;
        assert_eq!(approved.status, 200, "{backend:?}: {}", approved.body);
        let again = grace
            .post(
                "/auth/recovery/approve",
                &[("csrf", &csrf), ("token", &token)],
            )
            .await;
        assert_eq!(again.status, 400, "{backend:?}: a link works once");
        let status = asker.get("/auth/recovery/status").await;
        assert!(
            status.body.contains("1 of 2"),
            "{backend:?}: {}",
            status.body
        );
        // Not ready yet: setting the password is refused.
        let early = asker
            .post(
                "/auth/recovery/status",
                &[
                    ("csrf", &status.field("csrf").unwrap_or_default()),
                    ("password", NEW_PASSWORD),
                ],
            )
            .await;
        assert_ne!(early.status, 200);
        assert_ne!(
            early.location().as_deref(),
            Some("/auth/sign-in?recovered=1"),
            "{backend:?}"
        );
        let alan = world.browser();
        let approved = alan.submit(&alan_link, "/auth/recovery/approve", &[]).await;
        assert_eq!(approved.status, 200, "{backend:?}: {}", approved.body);
        let waiting = world.mails_to(&world.user, 3).await;
        assert!(
            waiting
                .iter()
                .any(|m| m["subject"].as_str().unwrap().contains("will be recovered")),
            "{waiting:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
        let ready = asker.get("/auth/recovery/status").await;
        assert_eq!(ready.status, 200);
        assert!(ready.field("password").is_some() || ready.body.contains("name=\"password\""));
        let weak = asker
            .submit(
                "/auth/recovery/status",
                "/auth/recovery/status",
                &[("password", "short")],
            )
            .await;
        assert_eq!(weak.status, 400, "{backend:?}: {}", weak.body);
        let done = asker
            .submit(
                "/auth/recovery/status",
                "/auth/recovery/status",
                &[("password", NEW_PASSWORD)],
            )
            .await;
        assert_eq!(
            done.location().as_deref(),
            Some("/auth/sign-in?recovered=1"),
            "{backend:?}: {}",
            done.body
        );
        // Every old session ended; the old password no longer works.
        let account = ada.get("/auth/account").await;
        assert_eq!(account.status, 303, "{backend:?}: the old session is gone");
        let old = world.browser().sign_in(None, &world.user, PASSWORD).await;
        assert_ne!(old.location().as_deref(), Some("/auth/account"));
        // The new password signs in without a second factor (it was lost), and the first
        // authorization request sends the person to set up a new one.
        let signed_in = asker.sign_in(None, &world.user, NEW_PASSWORD).await;
        assert_eq!(signed_in.location().as_deref(), Some("/auth/account"));
        let asked = asker.get(&world.authorize_path("openid", "st", &[])).await;
        let location = asked.location().unwrap();
        assert!(
            location.starts_with("/auth/account/two-factor?interaction="),
            "{backend:?}: {location}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn the_owner_cancels_and_forged_reused_or_cancelled_links_are_refused() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let ada = world.browser();
        ada_with_guardians(&world, &ada).await;
        let asker = ask(&world, &world.user).await;
        let grace_link = world.mailed_link(GRACE, "/auth/recovery/approve").await;
        let cancel_link = world
            .mailed_link(&world.user, "/auth/recovery/cancel")
            .await;
        // The cancel link's GET only asks; its POST cancels.
        let owner = world.browser();
        let confirm = owner.get(&cancel_link).await;
        assert_eq!(confirm.status, 200);
        let cancelled = owner
            .submit(&cancel_link, "/auth/recovery/cancel", &[])
            .await;
        assert_eq!(cancelled.status, 200, "{backend:?}: {}", cancelled.body);
        let twice = owner
            .submit(&cancel_link, "/auth/recovery/cancel", &[])
            .await;
        assert_eq!(twice.status, 400, "{backend:?}");
        // The guardians' links died with the recovery.
        assert_eq!(world.browser().get(&grace_link).await.status, 400);
        let status = asker.get("/auth/recovery/status").await;
        assert!(
            status.body.contains("href=\"/auth/recovery\""),
            "{backend:?}: {}",
            status.body
        );
        // Forged tokens and forms without their CSRF token.
        let guest = world.browser();
        assert_eq!(
            guest
                .get("/auth/recovery/approve?token=gda_forged")
                .await
                .status,
            400
        );
        let forged = guest
            .post("/auth/recovery/approve", &[("token", "gda_forged")])
            .await;
        assert_eq!(forged.status, 403, "{backend:?}: no CSRF token");
        // An unknown address gets the same answer, and nobody is mailed.
        let mailed = world.mail_count("nobody@example.com").await;
        let decoy = ask(&world, "nobody@example.com").await;
        let status = decoy.get("/auth/recovery/status").await;
        assert!(
            status.body.contains("0 of 2"),
            "{backend:?}: {}",
            status.body
        );
        assert_eq!(world.mail_count("nobody@example.com").await, mailed);
        // The account page needs a signed-in person.
        let stranger = world.browser();
        let page = stranger.get("/auth/account/recovery").await;
        assert_eq!(page.status, 303);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn without_recovery_its_pages_do_not_exist() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                env: vec![("SVC_TWO_FACTOR__ENABLED", "true")],
                ..Setup::default()
            },
        )
        .await;
        let browser = world.browser();
        for path in [
            "/auth/recovery",
            "/auth/recovery/status",
            "/auth/recovery/approve?token=gda_x",
            "/auth/recovery/cancel?token=rcc_x",
        ] {
            assert_eq!(browser.get(path).await.status, 404, "{backend:?} {path}");
        }
        browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(browser.get("/auth/account/recovery").await.status, 404);
        let sign_in = world.browser().get("/auth/sign-in").await;
        assert!(!sign_in.body.contains("/auth/recovery"));
        world.shutdown().await;
    }
}
