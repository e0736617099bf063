//! The second-language receiver of the docs (`docs/examples/webhook_receiver.py`, Python with
//! its standard library only) against real deliveries, and against forged, stale and replayed
//! requests sent straight to it.

use super::support::{World, fast_delivery};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use svc_domain::{Clock, OsRandom, SystemClock, WebhookSecret};
use svc_testkit::{BACKENDS, Process};

pub(super) fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/webhook_receiver.py")
}

pub(super) fn accepted(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(super) async fn wait_for_lines(out: &Path, count: usize) -> Vec<Value> {
    for _ in 0..200 {
        let lines = accepted(out);
        if lines.len() >= count {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Python receiver accepted {:?}", accepted(out));
}

/// A request signed like the service signs, sent straight to the receiver.
async fn post(
    url: &str,
    secret: &str,
    delivery: &str,
    timestamp: i64,
    body: &str,
    suite: &str,
) -> u16 {
    let signature = svc_crypto::webhook_signature(secret, delivery, timestamp, body.as_bytes());
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("x-svc-signature-suite", suite)
        .header("x-svc-signature-256", signature)
        .header("x-svc-signature-max-age", "300")
        .header("x-svc-timestamp", timestamp.to_string())
        .header("x-svc-event", "webhook.test")
        .header("x-svc-delivery", delivery)
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn the_python_receiver_verifies_real_deliveries_and_refuses_forgeries() {
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("accepted.jsonl");
        let secret = WebhookSecret::generate(&OsRandom).expose().to_owned();
        let receiver = Process::spawn(
            Path::new("python3"),
            dir.path(),
            &[script().to_str().unwrap()],
            &[
                ("SVC_WEBHOOK_SECRET", secret.as_str()),
                ("OUT", out.to_str().unwrap()),
            ],
        );
        let url = receiver.wait_for_url(Duration::from_secs(20)).await;

        let response = world
            .api(reqwest::Method::POST, "/api/v1/webhooks")
            .json(&json!({"url": url, "event_types": ["webhook.test", "admin.webhook.updated"], "secret": secret}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let created: Value = response.json().await.unwrap();
        assert!(
            created.get("secret").is_none(),
            "a supplied secret is not echoed"
        );
        let id = created["id"].as_str().unwrap();
        let response = world
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/webhooks/{id}/test"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
        let response = world
            .api(reqwest::Method::PUT, &format!("/api/v1/webhooks/{id}"))
            .json(&json!({"description": "verified in Python"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);

        let lines = wait_for_lines(&out, 2).await;
        let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert!(
            events.contains(&"webhook.test") && events.contains(&"admin.webhook.updated"),
            "{events:?}"
        );
        for line in &lines {
            assert_eq!(line["body"]["tenant_id"], world.tenant.id);
            assert_eq!(line["body"]["type"], line["event"]);
        }
        let history = world
            .wait_for_deliveries(id, 2, |d| d["status"] == "succeeded")
            .await;
        let delivered: Vec<&str> = history.iter().map(|d| d["id"].as_str().unwrap()).collect();
        for line in &lines {
            assert!(delivered.contains(&line["delivery"].as_str().unwrap()));
        }

        // Straight to the receiver: what it must refuse, and a replay it must not act on twice.
        let now = SystemClock.now().unix_timestamp();
        let body = r#"{"id":"evt_manual","type":"webhook.test","data":{}}"#;
        assert_eq!(
            post(
                &url,
                "whsec_not_the_secret_at_all_0123456789abcdef",
                "dlv_a",
                now,
                body,
                "svc-webhook-v1"
            )
            .await,
            400
        );
        assert_eq!(
            post(&url, &secret, "dlv_b", now - 1_000, body, "svc-webhook-v1").await,
            400,
            "stale"
        );
        assert_eq!(
            post(&url, &secret, "dlv_c", now + 1_000, body, "svc-webhook-v1").await,
            400,
            "from the future"
        );
        assert_eq!(
            post(&url, &secret, "dlv_d", now, body, "svc-webhook-v0").await,
            400,
            "unsupported suite"
        );
        assert_eq!(
            post(&url, &secret, "dlv_e", now, body, "svc-webhook-v1").await,
            200
        );
        assert_eq!(
            post(&url, &secret, "dlv_e", now, body, "svc-webhook-v1").await,
            200,
            "a replay is acknowledged"
        );
        let tampered = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("x-svc-signature-suite", "svc-webhook-v1")
            .header(
                "x-svc-signature-256",
                svc_crypto::webhook_signature(&secret, "dlv_f", now, body.as_bytes()),
            )
            .header("x-svc-timestamp", now.to_string())
            .header("x-svc-delivery", "dlv_f")
            .body(body.replace("webhook.test", "auth.logout"))
            .send()
            .await
            .unwrap();
        assert_eq!(tampered.status(), 400, "a tampered body");
        let text = reqwest::Client::new()
            .post(&url)
            .header("content-type", "text/plain")
            .body("x")
            .send()
            .await
            .unwrap();
        assert_eq!(text.status(), 415);
        assert_eq!(reqwest::get(&url).await.unwrap().status(), 405);
        let lines = accepted(&out);
        assert_eq!(
            lines.len(),
            3,
            "two real deliveries and dlv_e once: {lines:?}"
        );
        assert_eq!(lines.iter().filter(|l| l["delivery"] == "dlv_e").count(), 1);

        drop(receiver);
        world.app.shutdown().await;
    }
}
