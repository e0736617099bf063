//! The "done when", as a new user would try it: subscribe a local receiver, sign a
//! person in on the hosted pages, and receive `auth.login.success` signed so that both the Rust
//! SDK and the Python standard-library receiver verify it; the history shows the attempts.
//! Failed sign-ins and a suspension arrive the same way.

use super::python::{script, wait_for_lines};
use super::support::{Receiver, fast_delivery};
use crate::hosted::support::{PASSWORD, Setup, World};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use svc_domain::{OsRandom, WebhookSecret};
use svc_testkit::{BACKENDS, Process};

async fn subscribe(world: &World, body: Value) -> Value {
    let response = world
        .api(reqwest::Method::POST, "/api/v1/webhooks")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

async fn history(world: &World, webhook: &str) -> Vec<Value> {
    let page: Value = world
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/webhooks/{webhook}/deliveries"),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    page["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_sign_in_reaches_a_rust_and_a_python_receiver_verified_and_recorded() {
    for backend in BACKENDS {
        let env: Vec<_> = fast_delivery()
            .into_iter()
            .filter(|(k, _)| *k != "SVC_SERVER__BASE_DOMAIN")
            .collect();
        let world = World::new(
            backend,
            Setup {
                env,
                ..Setup::default()
            },
        )
        .await;
        let types = [
            "auth.login.success",
            "auth.login.failure",
            "tenant_user.suspended",
        ];

        let rust = Receiver::default();
        let rust_url = rust.start().await;
        let rust_sub = subscribe(&world, json!({"url": rust_url, "event_types": types})).await;
        rust.verify_with(rust_sub["secret"].as_str().unwrap());

        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("accepted.jsonl");
        let secret = WebhookSecret::generate(&OsRandom).expose().to_owned();
        let python = Process::spawn(
            Path::new("python3"),
            dir.path(),
            &[script().to_str().unwrap()],
            &[
                ("SVC_WEBHOOK_SECRET", secret.as_str()),
                ("OUT", out.to_str().unwrap()),
            ],
        );
        let python_url = python.wait_for_url(Duration::from_secs(20)).await;
        let python_sub = subscribe(
            &world,
            json!({"url": python_url, "event_types": types, "secret": secret}),
        )
        .await;

        // A wrong password, then the right one, on the hosted sign-in page.
        let browser = world.browser();
        let refused = browser
            .sign_in(None, &world.user, "not the password at all")
            .await;
        assert_eq!(refused.status, 401, "{}", refused.body);
        let page = browser.sign_in(None, &world.user, PASSWORD).await;
        assert_eq!(page.status, 303, "{}", page.body);

        let seen = rust
            .wait_for(Duration::from_secs(15), |s| {
                s.iter()
                    .any(|r| r.header("x-svc-event") == "auth.login.success")
            })
            .await;
        let success = seen
            .iter()
            .find(|r| r.header("x-svc-event") == "auth.login.success")
            .unwrap();
        assert_eq!(success.verdict, Some(Ok(())), "the Rust SDK verifies it");
        let envelope = success.json();
        assert_eq!(envelope["data"]["method"], "password");
        assert!(
            envelope["data"]["user_id"]
                .as_str()
                .unwrap()
                .starts_with("usr_")
        );
        assert!(
            envelope["data"]["session_id"]
                .as_str()
                .unwrap()
                .starts_with("ses_")
        );
        let failure = seen
            .iter()
            .find(|r| r.header("x-svc-event") == "auth.login.failure")
            .unwrap();
        assert_eq!(failure.json()["data"]["reason"], "invalid_credentials");
        assert_eq!(
            failure.json()["data"]["user_id"],
            envelope["data"]["user_id"]
        );

        let lines = wait_for_lines(&out, 2).await;
        let python_success = lines
            .iter()
            .find(|l| l["event"] == "auth.login.success")
            .expect("Python verified the sign-in");
        assert_eq!(
            python_success["body"]["data"]["user_id"],
            envelope["data"]["user_id"]
        );
        assert_eq!(
            python_success["body"]["id"], envelope["id"],
            "the same event, delivered to each"
        );

        // A suspension by the administrator arrives too.
        let user_id = envelope["data"]["user_id"].as_str().unwrap();
        let response = world
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/tenant-users/{user_id}/suspend"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let seen = rust
            .wait_for(Duration::from_secs(15), |s| {
                s.iter()
                    .any(|r| r.header("x-svc-event") == "tenant_user.suspended")
            })
            .await;
        let suspended = seen
            .iter()
            .find(|r| r.header("x-svc-event") == "tenant_user.suspended")
            .unwrap();
        assert_eq!(suspended.json()["data"]["status"], "suspended");
        assert_eq!(suspended.verdict, Some(Ok(())));
        wait_for_lines(&out, 3).await;

        for webhook in [&rust_sub["id"], &python_sub["id"]] {
            let webhook = webhook.as_str().unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(15);
            let list = loop {
                let list = history(&world, webhook).await;
                if list.len() == 3 && list.iter().all(|d| d["status"] == "succeeded") {
                    break list;
                }
                assert!(std::time::Instant::now() < deadline, "{list:#?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            for delivery in &list {
                assert_eq!(delivery["history"][0]["status_code"], 200);
            }
        }
        drop(python);
        world.shutdown().await;
    }
}
