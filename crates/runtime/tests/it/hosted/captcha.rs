//! The CAPTCHA on the hosted pages, verified server-side against a local `siteverify` endpoint
//! (axum on 127.0.0.1:0, recording what it received): sign-up and forgotten-password forms
//! always carry it, sign-in only after repeated failures; missing, forged, replayed and
//! low-scoring tokens are refused with the form again and nothing written; an unreachable
//! provider refuses (fail-closed) or lets through with a warning (fail-open); the secret and
//! the tokens never reach the logs.

use super::support::*;
use crate::binary;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svc_testkit::{BACKENDS, Backend, Process};

const SECRET: &str = "captcha-secret-e2e-7d1f";
const SITE_KEY: &str = "site-key-e2e";

/// The forms a verifier received, in order.
type Received = Arc<Mutex<Vec<Vec<(String, String)>>>>;

/// A local `siteverify` endpoint. It is lax on purpose (it never refuses a replay), so replay
/// protection is shown to be the service's own. Answers by token: `good…` passes on host
/// `acme.localhost`, `elsewhere…` passes on another host, `rc-<score>-<action>` is a reCAPTCHA
/// v3 answer, anything else is refused; while `down`, every request gets 503.
struct Verifier {
    url: String,
    received: Received,
    down: Arc<AtomicBool>,
}

#[derive(Clone)]
struct VerifierState {
    received: Received,
    down: Arc<AtomicBool>,
}

async fn siteverify(
    State(state): State<VerifierState>,
    body: String,
) -> (axum::http::StatusCode, axum::Json<Value>) {
    let form: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let token = form
        .iter()
        .find(|(k, _)| k == "response")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    state.received.lock().unwrap().push(form);
    if state.down.load(Ordering::SeqCst) {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({})),
        );
    }
    let answer = if token.starts_with("good") {
        json!({"success": true, "hostname": "acme.localhost", "challenge_ts": "2026-01-01T00:00:00Z"})
    } else if token.starts_with("elsewhere") {
        json!({"success": true, "hostname": "evil.example"})
    } else if let Some(rest) = token.strip_prefix("rc-") {
        let (score, action) = rest.split_once('-').unwrap();
        json!({"success": true, "score": score.parse::<f64>().unwrap(), "action": action,
               "hostname": "acme.localhost"})
    } else {
        json!({"success": false, "error-codes": ["invalid-input-response"]})
    };
    (axum::http::StatusCode::OK, axum::Json(answer))
}

impl Verifier {
    async fn start() -> Self {
        let received = Arc::new(Mutex::new(Vec::new()));
        let down = Arc::new(AtomicBool::new(false));
        let state = VerifierState {
            received: received.clone(),
            down: down.clone(),
        };
        let app = axum::Router::new()
            .route("/siteverify", post(siteverify))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url: format!("http://{addr}/siteverify"),
            received,
            down,
        }
    }

    /// Every form received so far.
    fn received(&self) -> Vec<Vec<(String, String)>> {
        self.received.lock().unwrap().clone()
    }
}

/// The value of `name` in a received form.
fn member<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// An address nobody listens on.
async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/siteverify")
}

/// The environment turning the CAPTCHA on with `provider` against `verify_url`.
fn captcha_env(
    provider: &'static str,
    verify_url: &str,
    fail_mode: &'static str,
) -> Vec<(&'static str, &'static str)> {
    vec![
        ("SVC_CAPTCHA__ENABLED", "true"),
        ("SVC_CAPTCHA__PROVIDER", provider),
        ("SVC_CAPTCHA__SITE_KEY", SITE_KEY),
        ("SVC_CAPTCHA__SECRET_KEY", SECRET),
        // The World's environment holds `'static` values.
        ("SVC_CAPTCHA__VERIFY_URL", verify_url.to_owned().leak()),
        ("SVC_CAPTCHA__FAIL_MODE", fail_mode),
        ("SVC_CAPTCHA__TIMEOUT_MS", "2000"),
    ]
}

async fn world(backend: Backend, env: Vec<(&'static str, &'static str)>) -> World {
    World::new(
        backend,
        Setup {
            signup: true,
            env,
            ..Setup::default()
        },
    )
    .await
}

fn csp(page: &Page) -> String {
    page.headers["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The CAPTCHA error shown under the widget, accessibly.
fn assert_captcha_error(page: &Page, text: &str) {
    assert!(
        page.body.contains(&format!(
            "<p id=\"captcha-error\" class=\"error\" role=\"alert\">{text}"
        )),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("aria-describedby=\"captcha-error\""),
        "{}",
        page.body
    );
    page.assert_secure("captcha refusal");
}

const MISSING: &str = "Complete the security check, then send the form again.";
const FAILED: &str =
    "The security check could not be confirmed. Complete it again, then send the form.";

#[tokio::test]
async fn sign_up_and_forgotten_passwords_always_need_a_verified_captcha() {
    for backend in BACKENDS {
        let verifier = Verifier::start().await;
        let world = world(
            backend,
            captcha_env("turnstile", &verifier.url, "fail-closed"),
        )
        .await;
        let browser = world.browser();

        let page = browser.get("/auth/sign-up").await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(
            page.body.contains(
                "<div id=\"captcha\" class=\"cf-turnstile\" data-sitekey=\"site-key-e2e\" \
                 data-action=\"sign_up\"></div>"
            ),
            "{}",
            page.body
        );
        assert!(page.body.contains(
            "<script src=\"https://challenges.cloudflare.com/turnstile/v0/api.js\" async defer>"
        ));
        assert!(
            page.body
                .contains("role=\"group\" aria-labelledby=\"captcha-label\"")
        );
        let policy = csp(&page);
        for directive in [
            "script-src https://challenges.cloudflare.com",
            "frame-src https://challenges.cloudflare.com",
            "connect-src https://challenges.cloudflare.com",
            "default-src 'none'",
        ] {
            assert!(policy.contains(directive), "{policy}");
        }
        page.assert_secure("sign-up with captcha");

        // No token: the form again, nothing asked, nothing created.
        let new = "new@example.com";
        let fields = [("email", new), ("password", PASSWORD)];
        let missing = browser
            .submit("/auth/sign-up", "/auth/sign-up", &fields)
            .await;
        assert_eq!(missing.status, 400, "{}", missing.body);
        assert_captcha_error(&missing, MISSING);
        assert!(missing.body.contains("class=\"cf-turnstile\""));
        assert!(verifier.received().is_empty());

        // A forged token: the provider refuses it.
        let forged = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[
                    ("email", new),
                    ("password", PASSWORD),
                    ("cf-turnstile-response", "forged-token-1"),
                ],
            )
            .await;
        assert_eq!(forged.status, 400, "{}", forged.body);
        assert_captcha_error(&forged, FAILED);
        let asked = verifier.received();
        assert_eq!(asked.len(), 1);
        assert_eq!(member(&asked[0], "secret"), Some(SECRET));
        assert_eq!(member(&asked[0], "response"), Some("forged-token-1"));
        assert_eq!(member(&asked[0], "remoteip"), Some("127.0.0.1"));
        // A token solved on another site.
        let elsewhere = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[
                    ("email", new),
                    ("password", PASSWORD),
                    ("cf-turnstile-response", "elsewhere-1"),
                ],
            )
            .await;
        assert_eq!(elsewhere.status, 400, "{}", elsewhere.body);
        assert_eq!(world.mail_count(new).await, 0, "nothing written or mailed");

        // A solved one: the account is created only now (its first mail is the verification).
        let solved = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[
                    ("email", new),
                    ("password", PASSWORD),
                    ("cf-turnstile-response", "good-sign-up-1"),
                ],
            )
            .await;
        assert_eq!(solved.status, 303, "{}", solved.body);
        assert_eq!(solved.location().unwrap(), "/auth/sign-up?sent=1");
        world.mailed_link(new, "/auth/verify-email").await;
        assert_eq!(world.mails_to(new, 1).await.len(), 1);

        // The same token again, for another address: refused here, not asked again.
        let other = "other@example.com";
        let replayed = browser
            .submit(
                "/auth/sign-up",
                "/auth/sign-up",
                &[
                    ("email", other),
                    ("password", PASSWORD),
                    ("cf-turnstile-response", "good-sign-up-1"),
                ],
            )
            .await;
        assert_eq!(replayed.status, 400, "{}", replayed.body);
        assert_captcha_error(&replayed, FAILED);
        assert_eq!(verifier.received().len(), 3);
        assert_eq!(world.mail_count(other).await, 0);

        // Forgotten password: always asked, the same answer for known and unknown addresses.
        let forgot = browser.get("/auth/forgot-password").await;
        assert!(
            forgot.body.contains("data-action=\"forgot_password\""),
            "{}",
            forgot.body
        );
        for email in [world.user.as_str(), "nobody@example.com"] {
            let refused = browser
                .submit(
                    "/auth/forgot-password",
                    "/auth/forgot-password",
                    &[("email", email)],
                )
                .await;
            assert_eq!(refused.status, 400, "{}", refused.body);
            assert_captcha_error(&refused, MISSING);
        }
        assert_eq!(world.mail_count(&world.user).await, 0);
        let sent = browser
            .submit(
                "/auth/forgot-password",
                "/auth/forgot-password",
                &[
                    ("email", world.user.as_str()),
                    ("cf-turnstile-response", "good-reset-1"),
                ],
            )
            .await;
        assert_eq!(sent.status, 303, "{}", sent.body);
        world.mailed_link(&world.user, "/auth/reset-password").await;

        // Sign-in, with no failures yet, shows no widget and loads no script.
        let sign_in = browser.get("/auth/sign-in").await;
        assert!(!sign_in.body.contains("cf-turnstile"), "{}", sign_in.body);
        assert!(!sign_in.body.contains("<script"), "{}", sign_in.body);
        assert!(!csp(&sign_in).contains("script-src"), "{}", csp(&sign_in));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn sign_in_asks_for_the_captcha_only_after_repeated_failures() {
    for backend in BACKENDS {
        let verifier = Verifier::start().await;
        let world = world(
            backend,
            captcha_env("turnstile", &verifier.url, "fail-closed"),
        )
        .await;
        let browser = world.browser();
        for failure in 1..=3 {
            let page = browser
                .sign_in(None, &world.user, "not the password!")
                .await;
            assert_eq!(page.status, 401, "{}", page.body);
            assert_eq!(
                page.body.contains("class=\"cf-turnstile\""),
                failure == 3,
                "after {failure} failures: {}",
                page.body
            );
        }
        // The right password alone is no longer enough, and counts as nothing.
        let refused = browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_captcha_error(&refused, MISSING);
        assert_eq!(browser.cookie("svc_session"), None);
        assert!(verifier.received().is_empty());

        let signed_in = browser
            .submit(
                "/auth/sign-in",
                "/auth/sign-in",
                &[
                    ("email", world.user.as_str()),
                    ("password", PASSWORD),
                    ("cf-turnstile-response", "good-sign-in-1"),
                ],
            )
            .await;
        assert_eq!(signed_in.status, 303, "{}", signed_in.body);
        assert_eq!(signed_in.location().unwrap(), "/auth/account");
        assert!(browser.cookie("svc_session").is_some());
        assert_eq!(verifier.received().len(), 1);

        // The address keeps its failures: another browser there is asked at once.
        let other = world.browser();
        let page = other.get("/auth/sign-in").await;
        assert!(
            page.body.contains("class=\"cf-turnstile\""),
            "{}",
            page.body
        );
        assert!(
            csp(&page).contains("script-src https://challenges.cloudflare.com"),
            "{}",
            csp(&page)
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn recaptcha_v3_scores_below_the_minimum_and_other_actions_are_refused() {
    let verifier = Verifier::start().await;
    let mut env = captcha_env("recaptcha", &verifier.url, "fail-closed");
    env.push(("SVC_CAPTCHA__MIN_SCORE", "0.5"));
    let world = world(Backend::Sqlite, env).await;
    let browser = world.browser();
    let page = browser.get("/auth/sign-up").await;
    assert!(
        page.body
            .contains("<input type=\"hidden\" name=\"g-recaptcha-response\" value=\"\">"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(
            "<script src=\"https://www.google.com/recaptcha/api.js?render=site-key-e2e\"></script>"
        ),
        "{}",
        page.body
    );
    assert!(page.body.contains("grecaptcha.execute"), "{}", page.body);
    let policy = csp(&page);
    assert!(
        policy.contains(
            "https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/; frame-src"
        ),
        "{policy}"
    );
    assert!(policy.contains("script-src 'sha256-"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");

    let attempt = |email: &'static str, token: &'static str| {
        let browser = &browser;
        async move {
            browser
                .submit(
                    "/auth/sign-up",
                    "/auth/sign-up",
                    &[
                        ("email", email),
                        ("password", PASSWORD),
                        ("g-recaptcha-response", token),
                    ],
                )
                .await
        }
    };
    let low = attempt("low@example.com", "rc-0.3-sign_up").await;
    assert_eq!(low.status, 400, "{}", low.body);
    assert_captcha_error(&low, FAILED);
    let wrong_action = attempt("low@example.com", "rc-0.9-sign_in").await;
    assert_eq!(wrong_action.status, 400, "{}", wrong_action.body);
    assert_eq!(world.mail_count("low@example.com").await, 0);
    let at_threshold = attempt("low@example.com", "rc-0.5-sign_up").await;
    assert_eq!(at_threshold.status, 303, "{}", at_threshold.body);
    world
        .mailed_link("low@example.com", "/auth/verify-email")
        .await;
    world.shutdown().await;
}

#[tokio::test]
async fn hcaptcha_pages_embed_its_widget_and_send_the_site_key() {
    let verifier = Verifier::start().await;
    let world = world(
        Backend::Sqlite,
        captcha_env("hcaptcha", &verifier.url, "fail-closed"),
    )
    .await;
    let browser = world.browser();
    let page = browser.get("/auth/sign-up").await;
    assert!(
        page.body
            .contains("class=\"h-captcha\" data-sitekey=\"site-key-e2e\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("<script src=\"https://js.hcaptcha.com/1/api.js\" async defer>")
    );
    let policy = csp(&page);
    for directive in [
        "script-src https://hcaptcha.com https://*.hcaptcha.com",
        "frame-src https://hcaptcha.com https://*.hcaptcha.com",
        "connect-src https://hcaptcha.com https://*.hcaptcha.com",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    let solved = browser
        .submit(
            "/auth/sign-up",
            "/auth/sign-up",
            &[
                ("email", "h@example.com"),
                ("password", PASSWORD),
                ("h-captcha-response", "good-h-1"),
            ],
        )
        .await;
    assert_eq!(solved.status, 303, "{}", solved.body);
    let asked = verifier.received();
    assert_eq!(member(&asked[0], "sitekey"), Some(SITE_KEY));
    assert_eq!(member(&asked[0], "response"), Some("good-h-1"));
    world.shutdown().await;
}

#[tokio::test]
async fn an_unreachable_verifier_refuses_failing_closed_and_lets_through_failing_open() {
    let nowhere = closed_port_url().await;
    let closed = world(
        Backend::Sqlite,
        captcha_env("turnstile", &nowhere, "fail-closed"),
    )
    .await;
    let browser = closed.browser();
    let refused = browser
        .submit(
            "/auth/sign-up",
            "/auth/sign-up",
            &[
                ("email", "new@example.com"),
                ("password", PASSWORD),
                ("cf-turnstile-response", "good-1"),
            ],
        )
        .await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_captcha_error(
        &refused,
        "The security check cannot be confirmed right now. Try again in a moment.",
    );
    assert_eq!(closed.mail_count("new@example.com").await, 0);
    closed.shutdown().await;

    let open = world(
        Backend::Sqlite,
        captcha_env("turnstile", &nowhere, "fail-open"),
    )
    .await;
    let browser = open.browser();
    let allowed = browser
        .submit(
            "/auth/sign-up",
            "/auth/sign-up",
            &[
                ("email", "new@example.com"),
                ("password", PASSWORD),
                ("cf-turnstile-response", "good-1"),
            ],
        )
        .await;
    assert_eq!(allowed.status, 303, "{}", allowed.body);
    open.mailed_link("new@example.com", "/auth/verify-email")
        .await;
    open.shutdown().await;
}

/// The real binary, logging at `debug`: the secret and the tokens appear nowhere in its
/// output, and failing open leaves a warning.
#[tokio::test]
async fn the_secret_and_tokens_never_reach_the_logs_and_failing_open_warns() {
    let verifier = Verifier::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mail = dir.path().join("mail.jsonl");
    let sink = format!("file:{}", mail.display());
    let mut env = vec![
        ("SVC_SERVER__PORT", "0"),
        ("SVC_SERVER__BASE_DOMAIN", "localhost"),
        ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
        ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
        ("SVC_EMAIL__LOG__SINK", sink.as_str()),
        ("RUST_LOG", "debug"),
    ];
    env.extend(captcha_env("turnstile", &verifier.url, "fail-open"));
    let process = Process::spawn(binary(), dir.path(), &["--log-format", "json"], &env);
    let url = process.wait_for_url(Duration::from_secs(30)).await;

    let db = format!("sqlite://{}", dir.path().join("data/svc.db").display());
    let work = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        work.path(),
        &["operator", "create-token", "--name", "e2e"],
        &[("DATABASE_URL", db.as_str())],
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    let operator = exit
        .stdout
        .lines()
        .find(|l| l.starts_with("svcop_"))
        .unwrap()
        .trim()
        .to_owned();
    let created = reqwest::Client::new()
        .post(format!("{url}/api/v1/control-plane/tenants"))
        .bearer_auth(&operator)
        .json(&json!({"slug": "acme", "display_name": "Acme", "signup_enabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let port = url.rsplit(':').next().unwrap();
    let browser = Browser::at(&url, &format!("acme.localhost:{port}"));

    let tokens = ["good-log-1", "forged-log-2", "good-log-3"];
    let sign_up = |email: &'static str, token: &'static str| {
        let browser = &browser;
        async move {
            browser
                .submit(
                    "/auth/sign-up",
                    "/auth/sign-up",
                    &[
                        ("email", email),
                        ("password", PASSWORD),
                        ("cf-turnstile-response", token),
                    ],
                )
                .await
        }
    };
    assert_eq!(sign_up("a@example.com", tokens[0]).await.status, 303);
    assert_eq!(sign_up("b@example.com", tokens[1]).await.status, 400);
    // The provider goes away: failing open lets the form through, with a warning.
    verifier.down.store(true, Ordering::SeqCst);
    assert_eq!(sign_up("c@example.com", tokens[2]).await.status, 303);
    assert_eq!(verifier.received().len(), 3);

    process.terminate();
    let exit = process.wait(Duration::from_secs(30)).await;
    let logs = format!("{}\n{}", exit.stdout, exit.stderr);
    assert!(
        logs.contains("captcha verification unavailable; the form is let through unverified"),
        "{logs}"
    );
    assert!(logs.contains("captcha refused"), "{logs}");
    assert!(!logs.contains(SECRET), "the secret is in the logs");
    for token in tokens {
        assert!(!logs.contains(token), "token {token} is in the logs");
    }
}
