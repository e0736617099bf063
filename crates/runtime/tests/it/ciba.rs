//! Client-initiated backchannel authentication (OpenID CIBA, poll mode) over HTTP, on SQLite and
//! PostgreSQL: a confidential client names the person, who is mailed a link to the approval
//! page, signs in there (and comes back), sees the binding message and approves; the client's
//! polls get `authorization_pending`, then the tokens once. Then the refusals: deny, another
//! person's request, approval after expiry, the rejected parameters each named, public clients,
//! bad scopes and binding messages; the decoy for an unknown hint (same answer, never listed,
//! never mailed, pending until it expires, and the same timing, measured over interleaved
//! samples with a rank test); and the `[ciba].enabled` switch (off by default).

use crate::hosted::support::{Browser, PASSWORD, Setup, World};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use svc_testkit::{BACKENDS, Backend};

const GRANT: &str = "urn:openid:params:grant-type:ciba";

/// A world with CIBA on and clients polling every second.
pub(crate) async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            env: vec![
                ("SVC_CIBA__ENABLED", "true"),
                ("SVC_CIBA__INTERVAL_SECS", "1"),
            ],
            ..Setup::default()
        },
    )
    .await
}

/// A confidential client of the CIBA grant (and refresh tokens): `(client_id, secret)`.
pub(crate) async fn ciba_client(world: &World) -> (String, String) {
    world
        .register_with(json!({
            "name": "Bank terminal",
            "redirect_uris": [],
            "post_logout_redirect_uris": [],
            "grant_types": [GRANT, "refresh_token"],
        }))
        .await
}

/// `POST /bc-authorize` as `client` with `form`.
pub(crate) async fn start(
    world: &World,
    client: &(String, String),
    form: &[(&str, &str)],
) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, "/bc-authorize")
        .header("host", &world.host)
        .basic_auth(&client.0, Some(&client.1))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    assert_eq!(response.headers()["cache-control"], "no-store");
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Starts a request for `hint` (`openid profile offline_access`, binding message `W4SCT`): its
/// `auth_req_id`.
pub(crate) async fn started(world: &World, client: &(String, String), hint: &str) -> String {
    let form = [
        ("scope", "openid profile offline_access"),
        ("login_hint", hint),
        ("binding_message", "W4SCT"),
    ];
    let (status, body) = start(world, client, &form).await;
    assert_eq!(status, 200, "{body}");
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["auth_req_id", "expires_in", "interval"], "{body}");
    assert_eq!(body["expires_in"], 300);
    assert_eq!(body["interval"], 1);
    body["auth_req_id"].as_str().unwrap().to_owned()
}

/// One poll as `client`: status and body.
pub(crate) async fn poll(
    world: &World,
    client: &(String, String),
    auth_req_id: &str,
) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .basic_auth(&client.0, Some(&client.1))
        .form(&[("grant_type", GRANT), ("auth_req_id", auth_req_id)])
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// A browser signed in as `email`, through the approval page (which sends the sign-in back).
pub(crate) async fn signed_in(world: &World, email: &str, password: &str) -> Browser {
    let browser = world.browser();
    let page = browser.get("/auth/ciba").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Sign in to see"), "{}", page.body);
    let signed = browser.sign_in(None, email, password).await;
    assert_eq!(signed.status, 303, "{}", signed.body);
    assert_eq!(
        signed.location().as_deref(),
        Some("/auth/ciba"),
        "back to the page"
    );
    browser
}

/// Answers `decision` for the request the page shows first: where it leads.
async fn decide(browser: &Browser, decision: &str) -> String {
    let page = browser
        .submit("/auth/ciba", "/auth/ciba", &[("decision", decision)])
        .await;
    assert_eq!(page.status, 303, "{}", page.body);
    page.location().unwrap()
}

#[tokio::test]
async fn the_person_approves_on_the_hosted_page_and_the_client_polls_its_tokens_once() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = ciba_client(&world).await;
        let auth_req_id = started(&world, &client, &world.user).await;
        assert!(auth_req_id.starts_with("ar_"), "{auth_req_id}");
        let (status, body) = poll(&world, &client, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending"))
        );

        // The mail points to the approval page.
        let link = world.mailed_link(&world.user, "/auth/ciba").await;
        assert_eq!(link, "/auth/ciba");
        let mail = &world.mails_to(&world.user, 1).await[0];
        assert!(mail["text"].as_str().unwrap().contains("W4SCT"), "{mail}");

        let browser = signed_in(&world, &world.user, PASSWORD).await;
        let page = browser.get("/auth/ciba").await;
        assert_eq!(page.status, 200);
        page.assert_secure("CIBA approval page");
        for shown in ["Bank terminal", "W4SCT", "Approve", "Deny"] {
            assert!(page.body.contains(shown), "{shown}: {}", page.body);
        }
        assert_eq!(
            decide(&browser, "approve").await,
            "/auth/ciba?result=approved"
        );
        let after = browser.get("/auth/ciba?result=approved").await;
        assert!(after.body.contains("Approved"), "{}", after.body);
        assert!(
            after.body.contains("No request is waiting"),
            "{}",
            after.body
        );

        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, tokens) = poll(&world, &client, &auth_req_id).await;
        assert_eq!(status, 200, "{tokens}");
        assert!(tokens["id_token"].is_string(), "{tokens}");
        assert!(tokens["refresh_token"].is_string(), "{tokens}");
        assert_eq!(tokens["scope"], "offline_access openid profile");
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, body) = poll(&world, &client, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn denied_expired_and_other_peoples_requests_yield_nothing() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = ciba_client(&world).await;
        world.create_user("bob@example.com", PASSWORD).await;
        let ada = signed_in(&world, &world.user, PASSWORD).await;

        // Denied.
        let denied = started(&world, &client, &world.user).await;
        assert_eq!(decide(&ada, "deny").await, "/auth/ciba?result=denied");
        let (status, body) = poll(&world, &client, &denied).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("access_denied"))
        );

        // Bob's request, by its id, from Ada's browser: gone, and still Bob's to answer.
        let bobs = started(&world, &client, "bob@example.com").await;
        let bob = signed_in(&world, "bob@example.com", PASSWORD).await;
        let shown = bob.get("/auth/ciba").await;
        let id = crate::hosted::support::hidden_fields(&shown.body)
            .into_iter()
            .find(|(name, _)| name == "request")
            .map(|(_, value)| value)
            .unwrap_or_else(|| panic!("bob's page: {}", shown.body));
        // Ada's own pending request gives her page a form (and her browser a CSRF token).
        started(&world, &client, &world.user).await;
        let form = ada.get("/auth/ciba").await;
        let csrf = crate::hosted::support::hidden_fields(&form.body)
            .into_iter()
            .find(|(name, _)| name == "csrf")
            .map(|(_, value)| value)
            .unwrap();
        let stolen = ada
            .post(
                "/auth/ciba",
                &[("csrf", &csrf), ("request", &id), ("decision", "approve")],
            )
            .await;
        assert_eq!(stolen.location().as_deref(), Some("/auth/ciba?result=gone"));
        let (_, body) = poll(&world, &client, &bobs).await;
        assert_eq!(body["error"], "authorization_pending");
        assert!(bob.get("/auth/ciba").await.body.contains(&id));

        // Expired before the answer.
        let form = [
            ("scope", "openid"),
            ("login_hint", "bob@example.com"),
            ("requested_expiry", "1"),
        ];
        let (status, short) = start(&world, &client, &form).await;
        assert_eq!((status, &short["expires_in"]), (200, &json!(1)));
        tokio::time::sleep(Duration::from_millis(1_200)).await;
        // Bob answers his other request first, then nothing is left.
        assert_eq!(decide(&bob, "deny").await, "/auth/ciba?result=denied");
        assert!(
            bob.get("/auth/ciba")
                .await
                .body
                .contains("No request is waiting")
        );
        let (status, body) = poll(&world, &client, short["auth_req_id"].as_str().unwrap()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("expired_token"))
        );
        // Another client's auth_req_id is invalid.
        let other = ciba_client(&world).await;
        let (status, body) = poll(&world, &other, &bobs).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn rejected_parameters_public_clients_and_bad_values_are_refused() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = ciba_client(&world).await;
        let hint = world.user.clone();
        let base = |extra: &[(&'static str, &'static str)]| {
            let mut form: Vec<(&str, &str)> =
                vec![("scope", "openid"), ("login_hint", hint.as_str())];
            form.extend_from_slice(extra);
            form
        };
        for name in [
            "login_hint_token",
            "id_token_hint",
            "client_notification_token",
            "user_code",
            "acr_values",
            "request",
        ] {
            let (status, body) = start(&world, &client, &base(&[(name, "x")])).await;
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some("invalid_request")),
                "{name}"
            );
            assert!(
                body["error_description"].as_str().unwrap().contains(name),
                "{name}: {body}"
            );
        }
        let long = "x".repeat(65);
        for (form, error) in [
            (vec![("login_hint", hint.as_str())], "invalid_scope"),
            (
                vec![("scope", "profile"), ("login_hint", hint.as_str())],
                "invalid_scope",
            ),
            (vec![("scope", "openid")], "invalid_request"),
            (base(&[("requested_expiry", "soon")]), "invalid_request"),
            (base(&[("requested_expiry", "0")]), "invalid_request"),
            (
                {
                    let mut f = base(&[]);
                    f.push(("binding_message", long.as_str()));
                    f
                },
                "invalid_binding_message",
            ),
        ] {
            let (status, body) = start(&world, &client, &form).await;
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some(error)),
                "{form:?}: {body}"
            );
        }
        // A requested_expiry beyond the deployment's ceiling is capped, not refused.
        let (status, body) = start(&world, &client, &base(&[("requested_expiry", "99999")])).await;
        assert_eq!((status, &body["expires_in"]), (200, &json!(600)));

        // The world's application is confidential but not registered for the grant.
        let (status, body) = start(
            &world,
            &(world.client_id.clone(), world.client_secret.clone()),
            &base(&[]),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("unauthorized_client"))
        );
        // A public client may not be registered for it at all.
        let refused = world
            .api(Method::POST, "/api/v1/applications")
            .json(
                &json!({"name": "Kiosk", "redirect_uris": [], "grant_types": [GRANT],
                          "token_endpoint_auth_method": "none", "allowed_scopes": ["openid"]}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400);
        world.shutdown().await;
    }
}

/// Mann–Whitney U statistic of `a` against `b`, as a z-score (normal approximation, ties
/// averaged): |z| beyond ~3.3 would mean the two samples are unlikely to share a distribution.
fn rank_test_z(a: &[f64], b: &[f64]) -> f64 {
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|v| (*v, true))
        .chain(b.iter().map(|v| (*v, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut ranks = vec![0.0; all.len()];
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for r in ranks.iter_mut().take(j + 1).skip(i) {
            *r = rank;
        }
        i = j + 1;
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let r1: f64 = all
        .iter()
        .zip(&ranks)
        .filter(|((_, first), _)| *first)
        .map(|(_, r)| r)
        .sum();
    let u = r1 - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let sd = (n1 * n2 * (n1 + n2 + 1.0) / 12.0).sqrt();
    (u - mean) / sd
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::test]
async fn an_unknown_hint_gets_a_decoy_that_looks_and_times_the_same_and_yields_nothing() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = ciba_client(&world).await;
        let ada = signed_in(&world, &world.user, PASSWORD).await;
        let decoy = started(&world, &client, "nobody@example.com").await;
        assert!(decoy.starts_with("ar_"));
        assert_eq!(
            world.mail_count("nobody@example.com").await,
            0,
            "never mailed"
        );
        assert!(
            ada.get("/auth/ciba")
                .await
                .body
                .contains("No request is waiting"),
            "never listed"
        );
        let (status, body) = poll(&world, &client, &decoy).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending"))
        );

        // Timing: interleaved starts for the real person and for nobody, compared by rank.
        let form = |hint: &'static str| [("scope", "openid"), ("login_hint", hint)];
        let known: &'static str = Box::leak(world.user.clone().into_boxed_str());
        let (mut real, mut fake) = (Vec::new(), Vec::new());
        for round in 0..128 {
            let hint = if round % 2 == 0 {
                known
            } else {
                "nobody@example.com"
            };
            let t0 = Instant::now();
            let (status, _) = start(&world, &client, &form(hint)).await;
            let took = t0.elapsed().as_secs_f64() * 1e6;
            assert_eq!(status, 200);
            if round < 8 {
                continue; // warm-up: connection, caches
            }
            if hint == known {
                real.push(took);
            } else {
                fake.push(took);
            }
        }
        let z = rank_test_z(&real, &fake);
        let (m_real, m_fake) = (median(&mut real), median(&mut fake));
        eprintln!(
            "{backend:?}: CIBA start timing, real median {m_real:.0} µs, decoy median \
             {m_fake:.0} µs, Mann–Whitney z = {z:.2}"
        );
        assert!(
            z.abs() < 4.0,
            "{backend:?}: real and decoy starts are told apart by timing (z = {z:.2}; medians \
             {m_real:.0} / {m_fake:.0} µs)"
        );
        world.shutdown().await;
    }
}

#[test]
fn the_rank_test_tells_shifted_samples_apart_and_not_equal_ones() {
    let a: Vec<f64> = (0..40).map(|i| 1000.0 + f64::from(i % 7) * 10.0).collect();
    let same: Vec<f64> = (0..40)
        .map(|i| 1000.0 + f64::from((i + 3) % 7) * 10.0)
        .collect();
    let shifted: Vec<f64> = a.iter().map(|v| v + 200.0).collect();
    assert!(rank_test_z(&a, &same).abs() < 1.0);
    assert!(rank_test_z(&a, &shifted) < -5.0);
}

#[tokio::test]
async fn ciba_is_off_unless_enabled() {
    let world = World::new(
        Backend::Sqlite,
        Setup {
            env: vec![("SVC_OPENAPI__ENABLED", "true")],
            ..Setup::default()
        },
    )
    .await;
    let client = world.register("Bank terminal", false).await;
    let (status, _) = start(&world, &client, &[("scope", "openid"), ("login_hint", "x")]).await;
    assert_eq!(status, 404);
    assert_eq!(world.browser().get("/auth/ciba").await.status, 404);
    let api = world.browser().get("/api/v1/identity/ciba/requests").await;
    assert_eq!(api.status, 404, "{}", api.body);
    let (status, body) = poll(&world, &client, "ar_x").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let metadata: Value = world
        .app
        .request(Method::GET, "/.well-known/openid-configuration")
        .header("host", &world.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        metadata
            .get("backchannel_authentication_endpoint")
            .is_none()
    );
    // Nor does the API reference describe what is not served.
    let reference: Value = world.app.get("/openapi.json").await.json().await.unwrap();
    assert!(reference["paths"].get("/bc-authorize").is_none());
    assert!(
        reference["paths"]
            .get("/api/v1/identity/ciba/requests")
            .is_none()
    );
    assert!(reference["paths"].get("/oauth/register").is_none());
    assert!(
        reference["paths"]
            .get("/oauth/register/{client_id}")
            .is_none()
    );
    assert!(reference["paths"].get("/oauth/device/code").is_some());
    world.shutdown().await;
}
