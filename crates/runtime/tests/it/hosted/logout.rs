//! Logout propagation end to end (`[logout]`): an application registered with a
//! `backchannel_logout_uri` on a loopback receiver gets a logout token when a session that signed
//! into it ends by RP-initiated logout, by an administrator revoking it, or by the person being
//! suspended; an application of the same session without a URI gets nothing. Every token is
//! verified by jose (`interop/logout/verify.mjs`) as an RP must (§2.6), and its `sub` and `sid`
//! are the ones of the ID token the application received. A session that simply expires sends
//! its token once, on a clock the test moves. Registration refuses bad URIs, and
//! refuses any while the deployment does not run the channel, which discovery then does not
//! advertise. On SQLite and PostgreSQL.

use super::support::*;
use crate::agent_challenge::claims_of;
use crate::interop::{Prerequisite, repo_root, require_prerequisites, run_script};
use crate::webhooks::support::Receiver;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{Clock, ManualClock, SystemClock};
use svc_testkit::BACKENDS;

const ON: [(&str, &str); 1] = [("SVC_LOGOUT__BACKCHANNEL", "true")];

/// The logout tokens the receiver got, in order.
fn logout_tokens(receiver: &Receiver) -> Vec<String> {
    receiver
        .seen()
        .iter()
        .map(|r| {
            assert_eq!(
                r.header("content-type"),
                "application/x-www-form-urlencoded",
                "§2.5: a form POST"
            );
            let form: Vec<(String, String)> =
                url::form_urlencoded::parse(&r.body).into_owned().collect();
            assert_eq!(form.len(), 1, "only logout_token: {form:?}");
            assert_eq!(form[0].0, "logout_token");
            form[0].1.clone()
        })
        .collect()
}

/// A loopback receiver and a first-party application registered with it as its back-channel
/// logout URI (session required): the receiver, its URL and the application's credentials.
async fn listening_application(world: &World) -> (Receiver, String, (String, String)) {
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let listening = world
        .register_with(json!({
            "name": "Listening",
            "first_party": true,
            "backchannel_logout_uri": url,
            "backchannel_logout_session_required": true,
        }))
        .await;
    (receiver, url, listening)
}

/// Signs in through the hosted pages for `client` in `browser` and returns its ID token.
async fn id_token(world: &World, browser: &Browser, client: &(String, String)) -> String {
    let code = world.code_for(browser, &client.0, "openid", &[]).await;
    let tokens: Value = world
        .redeem_as(&code, &client.0, &client.1)
        .await
        .json()
        .await
        .unwrap();
    tokens["id_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn ended_sessions_send_logout_tokens_that_jose_verifies() {
    require_prerequisites(&[Prerequisite::NodeModules]);
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                first_party: true,
                env: [
                    ON.as_slice(),
                    &[("SVC_SERVER__METRICS_BEARER_TOKEN", "scrape-me")],
                ]
                .concat(),
                ..Setup::default()
            },
        )
        .await;
        let discovery = world.discovery().await;
        assert_eq!(discovery["backchannel_logout_supported"], true);
        assert_eq!(discovery["backchannel_logout_session_supported"], true);
        assert!(discovery.get("frontchannel_logout_supported").is_none());
        let (receiver, url, listening) = listening_application(&world).await;
        let shown: Value = world
            .api(
                Method::GET,
                &format!("/api/v1/applications/{}", listening.0),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(shown["backchannel_logout_uri"], url.as_str());
        assert_eq!(shown["backchannel_logout_session_required"], true);
        let quiet = (world.client_id.clone(), world.client_secret.clone());

        // 1. RP-initiated logout: one session signed into both applications.
        let browser = world.browser();
        let first = id_token(&world, &browser, &listening).await;
        let _ = id_token(&world, &browser, &quiet).await;
        let out = browser
            .get(&format!("/oauth/end-session?id_token_hint={first}"))
            .await;
        assert_eq!(out.status, 303, "{}", out.body);
        receiver
            .wait_for(Duration::from_secs(10), |seen| seen.len() == 1)
            .await;

        // 2. An administrator revokes a session.
        let browser = world.browser();
        let second = id_token(&world, &browser, &listening).await;
        let claims = claims_of(&second);
        let user = world
            .api(Method::GET, "/api/v1/tenant-users?email=ada%40example.com")
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        let user_id = user["items"][0]["id"].as_str().unwrap().to_owned();
        let revoked = world
            .api(
                Method::DELETE,
                &format!(
                    "/api/v1/tenant-users/{user_id}/sessions/{}",
                    claims["sid"].as_str().unwrap()
                ),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        receiver
            .wait_for(Duration::from_secs(10), |seen| seen.len() == 2)
            .await;

        // 3. The person is suspended: every live session ends, each notifies.
        let browser = world.browser();
        let third = id_token(&world, &browser, &listening).await;
        let suspended = world
            .api(
                Method::POST,
                &format!("/api/v1/tenant-users/{user_id}/suspend"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(suspended.status(), 200);
        receiver
            .wait_for(Duration::from_secs(10), |seen| seen.len() == 3)
            .await;

        // The application without a URI heard nothing; nothing more arrives.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let tokens = logout_tokens(&receiver);
        assert_eq!(tokens.len(), 3, "one per ended session, none twice");
        let metrics = world.app.metrics("scrape-me").await;
        for line in [
            r#"svc_backchannel_logout_attempts_total{outcome="delivered"} 3"#,
            "svc_backchannel_logout_attempt_duration_seconds_count 3",
        ] {
            assert!(metrics.contains(line), "{line}: {metrics}");
        }

        let jwks: Value = world
            .app
            .request(Method::GET, "/.well-known/jwks.json")
            .header("host", &world.host)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let input: Vec<Value> = tokens
            .iter()
            .map(|t| json!({"token": t, "audience": listening.0}))
            .collect();
        let run = run_script(
            Path::new("node"),
            &repo_root().join("interop/logout/verify.mjs"),
            &[
                ("JWKS".into(), jwks.to_string()),
                ("ISSUER".into(), world.issuer()),
                ("TOKENS".into(), Value::Array(input).to_string()),
            ],
        )
        .await;
        let summary = run.summary(&format!("jose on logout tokens, {backend:?}"));
        for (i, id) in [&first, &second, &third].into_iter().enumerate() {
            let id = claims_of(id);
            let logout = &summary["verified"][i]["claims"];
            assert_eq!(logout["sid"], id["sid"], "token {i}");
            assert_eq!(logout["sub"], id["sub"], "token {i}");
            assert_eq!(logout["aud"], listening.0.as_str());
            assert_eq!(summary["verified"][i]["typ"], "logout+jwt");
        }
        let sids: std::collections::BTreeSet<_> = (0..3)
            .map(|i| summary["verified"][i]["claims"]["sid"].to_string())
            .collect();
        assert_eq!(sids.len(), 3, "three different sessions");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_session_that_expires_sends_its_logout_token_once() {
    for backend in BACKENDS {
        let now = SystemClock.now();
        let clock = Arc::new(ManualClock::new(now.replace_nanosecond(0).unwrap_or(now)));
        let world = World::new(
            backend,
            Setup {
                first_party: true,
                env: ON.to_vec(),
                clock: Some(clock.clone()),
                ..Setup::default()
            },
        )
        .await;
        let (receiver, _, listening) = listening_application(&world).await;
        let browser = world.browser();
        let id = claims_of(&id_token(&world, &browser, &listening).await);

        // Sessions live fourteen days: a day before the end, nothing is sent.
        clock.advance(time::Duration::days(13));
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(
            receiver.seen().is_empty(),
            "{backend:?}: sent before expiry"
        );
        clock.advance(time::Duration::days(1) + time::Duration::seconds(1));
        receiver
            .wait_for(Duration::from_secs(10), |seen| seen.len() == 1)
            .await;
        let tokens = logout_tokens(&receiver);
        let logout = claims_of(&tokens[0]);
        assert_eq!(logout["sid"], id["sid"], "{backend:?}");
        assert_eq!(logout["sub"], id["sub"], "{backend:?}");
        assert_eq!(logout["aud"], listening.0.as_str());
        assert_eq!(logout["iat"], clock.now().unix_timestamp());
        // Later passes do not announce it again.
        clock.advance(time::Duration::minutes(1));
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(
            logout_tokens(&receiver).len(),
            1,
            "{backend:?}: announced twice"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn logout_uris_are_checked_and_refused_while_the_channel_is_off() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                env: ON.to_vec(),
                ..Setup::default()
            },
        )
        .await;
        for (body, field) in [
            (
                json!({"backchannel_logout_uri": "https://rp.example/logout#frag"}),
                "backchannel_logout_uri",
            ),
            (
                json!({"backchannel_logout_uri": "javascript:alert(1)"}),
                "backchannel_logout_uri",
            ),
            (
                json!({"backchannel_logout_session_required": true}),
                "backchannel_logout_session_required",
            ),
            (
                json!({"frontchannel_logout_uri": "https://rp.example/fc"}),
                "frontchannel_logout_uri",
            ),
            (
                json!({"backchannel_logout_uri": ["https://rp.example/a"]}),
                "",
            ),
        ] {
            let mut full = json!({
                "name": "Bad",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid"],
            });
            for (k, v) in body.as_object().unwrap() {
                full[k] = v.clone();
            }
            let answer = world
                .api(Method::POST, "/api/v1/applications")
                .json(&full)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 400, "{body}");
            let problem: Value = answer.json().await.unwrap();
            if !field.is_empty() {
                assert!(problem.to_string().contains(field), "{body}: {problem}");
            }
        }
        world.shutdown().await;

        let off = World::new(backend, Setup::default()).await;
        let discovery = off.discovery().await;
        for key in [
            "backchannel_logout_supported",
            "backchannel_logout_session_supported",
            "frontchannel_logout_supported",
        ] {
            assert!(discovery.get(key).is_none(), "{key} while off");
        }
        let answer = off
            .api(Method::POST, "/api/v1/applications")
            .json(&json!({
                "name": "Early",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid"],
                "backchannel_logout_uri": "https://rp.example/logout",
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400);
        let problem: Value = answer.json().await.unwrap();
        assert!(
            problem.to_string().contains("[logout].backchannel = false"),
            "{problem}"
        );
        off.shutdown().await;
    }
}

/// A world whose deployment runs front-channel logout, its application first-party.
async fn frontchannel_world(backend: svc_testkit::Backend) -> World {
    World::new(
        backend,
        Setup {
            first_party: true,
            env: vec![("SVC_LOGOUT__FRONTCHANNEL", "true")],
            ..Setup::default()
        },
    )
    .await
}

/// The `src` of every iframe of a page, unescaped.
fn frames(body: &str) -> Vec<String> {
    body.match_indices("<iframe src=\"")
        .map(|(at, lead)| {
            let rest = &body[at + lead.len()..];
            let src = &rest[..rest.find('"').unwrap()];
            src.replace("&#38;", "&").replace("&amp;", "&")
        })
        .collect()
}

#[tokio::test]
async fn the_signed_out_page_loads_each_front_channel_uri_then_moves_on() {
    for backend in BACKENDS {
        let world = frontchannel_world(backend).await;
        let discovery = world.discovery().await;
        assert_eq!(discovery["frontchannel_logout_supported"], true);
        assert_eq!(discovery["frontchannel_logout_session_supported"], true);
        assert!(discovery.get("backchannel_logout_supported").is_none());
        let with_sid = world
            .register_with(json!({
                "name": "With sid",
                "first_party": true,
                "frontchannel_logout_uri": "https://rp.example/fc",
                "frontchannel_logout_session_required": true,
            }))
            .await;
        let plain = world
            .register_with(json!({
                "name": "Plain",
                "first_party": true,
                "frontchannel_logout_uri": "https://other.example/fc?x=1",
            }))
            .await;
        let elsewhere = world
            .register_with(json!({
                "name": "Not signed into",
                "first_party": true,
                "frontchannel_logout_uri": "https://elsewhere.example/fc",
            }))
            .await;
        let _ = elsewhere;

        // RP-initiated logout of a session that signed into both, back to a registered URI.
        let browser = world.browser();
        let hint = id_token(&world, &browser, &with_sid).await;
        let _ = id_token(&world, &browser, &plain).await;
        let sid = claims_of(&hint)["sid"].as_str().unwrap().to_owned();
        let quiet = id_token(
            &world,
            &browser,
            &(world.client_id.clone(), world.client_secret.clone()),
        )
        .await;
        let bye = "https://app.example.com/bye";
        let out = browser
            .get(&format!(
                "/oauth/end-session?id_token_hint={quiet}&post_logout_redirect_uri={}&state=s1",
                url::form_urlencoded::byte_serialize(bye.as_bytes()).collect::<String>()
            ))
            .await;
        assert_eq!(out.status, 200, "{}", out.body);
        out.assert_secure("front-channel page");
        let issuer =
            url::form_urlencoded::byte_serialize(world.issuer().as_bytes()).collect::<String>();
        let mut seen = frames(&out.body);
        seen.sort();
        assert_eq!(
            seen,
            vec![
                "https://other.example/fc?x=1".to_owned(),
                format!("https://rp.example/fc?iss={issuer}&sid={sid}"),
            ],
            "one frame per application of the session with a URI, iss and sid where asked"
        );
        let csp = out.headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("frame-src https://rp.example https://other.example")
                || csp.contains("frame-src https://other.example https://rp.example"),
            "{csp}"
        );
        assert!(!csp.contains("elsewhere"), "{csp}");
        assert!(
            out.body.contains(
                "<meta http-equiv=\"refresh\" content=\"3;url=https://app.example.com/bye?state=s1\">"
            ),
            "{}",
            out.body
        );
        assert!(
            out.body
                .contains("href=\"https://app.example.com/bye?state=s1\""),
            "a link onwards for when the refresh does not run"
        );
        assert!(
            out.set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_session=;"))
        );
        assert_eq!(browser.get("/auth/account").await.status, 303, "signed out");

        // The account page's own sign-out shows the frames too, then the signed-out page.
        let browser = world.browser();
        let _ = id_token(&world, &browser, &plain).await;
        let out = browser
            .submit("/auth/sign-out", "/auth/sign-out", &[])
            .await;
        assert_eq!(out.status, 200, "{}", out.body);
        assert_eq!(frames(&out.body), vec!["https://other.example/fc?x=1"]);
        assert!(out.body.contains("content=\"3;url=/auth/sign-out\""));
        assert_eq!(browser.get("/auth/account").await.status, 303, "signed out");

        // Revoking this browser's own session on the sessions page does the same.
        let browser = world.browser();
        let own = id_token(&world, &browser, &plain).await;
        let own = claims_of(&own)["sid"].as_str().unwrap().to_owned();
        let out = browser
            .submit(
                "/auth/sessions",
                "/auth/sessions/revoke",
                &[("session_id", own.as_str())],
            )
            .await;
        assert_eq!(out.status, 200, "{}", out.body);
        assert_eq!(frames(&out.body), vec!["https://other.example/fc?x=1"]);
        assert_eq!(browser.get("/auth/account").await.status, 303, "signed out");

        // A session that signed into no listening application signs out with a plain 303.
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let out = browser
            .submit("/auth/sign-out", "/auth/sign-out", &[])
            .await;
        assert_eq!(out.status, 303);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn chromium_loads_the_front_channel_frame_and_moves_on() {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
    ]);
    for backend in BACKENDS {
        let world = frontchannel_world(backend).await;
        let fc = "https://rp.example/fc";
        let app = world
            .register_with(json!({
                "name": "Listening",
                "first_party": true,
                "frontchannel_logout_uri": fc,
                "frontchannel_logout_session_required": true,
            }))
            .await;
        let bye = "https://app.example.com/bye";
        let authorize = format!(
            "{}{}",
            world.issuer(),
            world
                .authorize_path("openid", "st", &[])
                .replace(&world.client_id, &app.0)
        );
        let end_session = format!(
            "{}/oauth/end-session?client_id={}&post_logout_redirect_uri={}&state=fc",
            world.issuer(),
            app.0,
            url::form_urlencoded::byte_serialize(bye.as_bytes()).collect::<String>()
        );
        let chromium = crate::interop::chromium_path();
        let run = run_script(
            Path::new("node"),
            &repo_root().join("interop/logout/frontchannel.mjs"),
            &[
                ("AUTHORIZE_URL".into(), authorize),
                ("END_SESSION_URL".into(), end_session),
                ("EMAIL".into(), world.user.clone()),
                ("PASSWORD".into(), PASSWORD.into()),
                ("REDIRECT_URI".into(), REDIRECT.into()),
                ("POST_LOGOUT_URI".into(), bye.into()),
                ("FRONTCHANNEL_URI".into(), fc.into()),
                ("ISSUER".into(), world.issuer()),
                ("CHROMIUM_PATH".into(), chromium.display().to_string()),
            ],
        )
        .await;
        let summary = run.summary(&format!("front-channel logout in Chromium, {backend:?}"));
        assert_eq!(summary["checks"]["frame_loaded_in_frame"], true);
        assert!(
            summary["landed"]
                .as_str()
                .unwrap()
                .starts_with("https://app.example.com/bye?state=fc")
        );
        world.shutdown().await;
    }
}
