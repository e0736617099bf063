//! Deliveries end to end: the async plane relays and sends to a real receiver on loopback, which
//! verifies each one with the Rust SDK; the history shows every attempt; failures are retried
//! on schedule, `Retry-After` is honoured, hung receivers time out, 410 switches the
//! subscription off, and exhausted deliveries can be sent again.

use super::support::{Receiver, World, fast_delivery};
use serde_json::json;
use std::time::Duration;
use svc_testkit::BACKENDS;

#[tokio::test]
async fn a_local_receiver_gets_signed_deliveries_and_the_history_shows_each_attempt() {
    for backend in BACKENDS {
        let mut env = fast_delivery();
        env.push(("SVC_SERVER__METRICS_BEARER_TOKEN", "scrape-me"));
        let world = World::new(backend, &env).await;
        let receiver = Receiver::default();
        let url = receiver.start().await;
        let created = world
            .subscribe(&url, &["webhook.test", "admin.webhook.updated"])
            .await;
        let id = created["id"].as_str().unwrap().to_owned();
        receiver.verify_with(created["secret"].as_str().unwrap());

        let response = world
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/webhooks/{id}/test"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
        let queued: serde_json::Value = response.json().await.unwrap();
        assert_eq!(queued["status"], "pending");
        let seen = receiver
            .wait_for(Duration::from_secs(10), |s| !s.is_empty())
            .await;
        let test = &seen[0];
        assert_eq!(test.verdict, Some(Ok(())), "the SDK verifies the delivery");
        assert_eq!(test.header("x-svc-event"), "webhook.test");
        assert_eq!(
            test.header("x-svc-delivery"),
            queued["id"].as_str().unwrap()
        );
        assert_eq!(test.header("x-svc-signature-suite"), "svc-webhook-v1");
        assert_eq!(test.header("x-svc-signature-max-age"), "300");
        assert_eq!(test.header("content-type"), "application/json");
        let envelope = test.json();
        assert!(envelope["id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!(envelope["type"], "webhook.test");
        assert_eq!(envelope["tenant_id"], world.tenant.id);
        assert_eq!(envelope["data"]["webhook_id"], id);
        assert!(envelope["occurred_at"].as_str().unwrap().ends_with('Z'));

        // A change to the subscription is itself an event it receives.
        let response = world
            .api(reqwest::Method::PUT, &format!("/api/v1/webhooks/{id}"))
            .json(&json!({"description": "renamed"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let seen = receiver
            .wait_for(Duration::from_secs(10), |s| s.len() >= 2)
            .await;
        assert_eq!(seen[1].header("x-svc-event"), "admin.webhook.updated");
        assert_eq!(seen[1].verdict, Some(Ok(())));
        assert_eq!(
            seen[1].json()["data"]["actor"],
            format!("client:{}", world.tenant.client_id)
        );

        let history = world
            .wait_for_deliveries(&id, 2, |d| d["status"] == "succeeded")
            .await;
        for delivery in &history {
            assert_eq!(delivery["attempts"], 1);
            assert_eq!(delivery["last_status_code"], 200);
            assert_eq!(delivery["next_attempt_at"], serde_json::Value::Null);
            let attempts = delivery["history"].as_array().unwrap();
            assert_eq!(attempts.len(), 1);
            assert_eq!(attempts[0]["status_code"], 200);
            assert_eq!(attempts[0]["number"], 1);
        }
        let one = history[0]["id"].as_str().unwrap();
        let response = world
            .api(
                reqwest::Method::GET,
                &format!("/api/v1/webhooks/{id}/deliveries/{one}"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let filtered = world
            .api(
                reqwest::Method::GET,
                &format!("/api/v1/webhooks/{id}/deliveries?status=failed"),
            )
            .send()
            .await
            .unwrap();
        let filtered: serde_json::Value = filtered.json().await.unwrap();
        assert_eq!(filtered["items"], json!([]));

        let metrics = world.app.metrics("scrape-me").await;
        assert!(
            metrics.contains(r#"svc_webhook_attempts_total{outcome="succeeded"} 2"#),
            "{metrics}"
        );
        assert!(
            metrics.contains("svc_webhook_attempt_duration_seconds_count 2"),
            "{metrics}"
        );
        assert!(metrics.contains("svc_webhook_queue_depth"), "{metrics}");
        assert!(
            metrics.contains("svc_webhook_oldest_pending_age_seconds"),
            "{metrics}"
        );
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn failing_receivers_are_retried_honoured_timed_out_switched_off_and_redelivered() {
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let receiver = Receiver::default();
        let url = receiver.start().await;
        let created = world.subscribe(&url, &["webhook.test"]).await;
        let id = created["id"].as_str().unwrap().to_owned();
        receiver.verify_with(created["secret"].as_str().unwrap());
        let send_test = || async {
            let response = world
                .api(
                    reqwest::Method::POST,
                    &format!("/api/v1/webhooks/{id}/test"),
                )
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 202);
            let body: serde_json::Value = response.json().await.unwrap();
            body["id"].as_str().unwrap().to_owned()
        };

        // 500, then 200 on the retry a second later, with the same delivery id.
        receiver.answer((500, vec![], Duration::ZERO));
        let first = send_test().await;
        let seen = receiver
            .wait_for(Duration::from_secs(10), |s| s.len() >= 2)
            .await;
        assert_eq!(seen[0].header("x-svc-delivery"), first);
        assert_eq!(seen[1].header("x-svc-delivery"), first);
        assert_eq!(seen[0].body, seen[1].body);
        let history = world
            .wait_for_deliveries(&id, 1, |d| d["status"] == "succeeded")
            .await;
        let attempts = history[0]["history"].as_array().unwrap();
        assert_eq!(
            attempts
                .iter()
                .map(|a| a["status_code"].clone())
                .collect::<Vec<_>>(),
            vec![json!(500), json!(200)]
        );
        assert_eq!(attempts[0]["error"], "receiver answered 500");

        // 429 with Retry-After: 3 is waited out even though the schedule says 1 s.
        receiver.answer((429, vec![("retry-after", "3".into())], Duration::ZERO));
        let throttled = send_test().await;
        let seen = receiver
            .wait_for(Duration::from_secs(15), |s| s.len() >= 4)
            .await;
        let times: Vec<_> = seen
            .iter()
            .filter(|r| r.header("x-svc-delivery") == throttled)
            .map(|r| r.header("x-svc-timestamp").parse::<i64>().unwrap())
            .collect();
        assert_eq!(times.len(), 2);
        assert!(
            times[1] - times[0] >= 3,
            "retried after {} s",
            times[1] - times[0]
        );

        // A receiver that hangs past the 2 s timeout: the attempt fails as a timeout.
        receiver.answer((200, vec![], Duration::from_secs(4)));
        let hung = send_test().await;
        receiver
            .wait_for(Duration::from_secs(15), |s| {
                s.iter()
                    .filter(|r| r.header("x-svc-delivery") == hung)
                    .count()
                    >= 2
            })
            .await;
        let list = world
            .wait_for_deliveries(&id, 3, |d| d["status"] == "succeeded")
            .await;
        let timed_out = list.iter().find(|d| d["id"] == hung.as_str()).unwrap();
        assert_eq!(timed_out["history"][0]["error"], "no answer within 2 s");
        assert_eq!(
            timed_out["history"][0]["status_code"],
            serde_json::Value::Null
        );

        // 410 Gone: exhausted at once and the subscription is switched off with the reason.
        receiver.answer((410, vec![], Duration::ZERO));
        let gone = send_test().await;
        let list = world
            .wait_for_deliveries(&id, 4, |d| d["status"] != "pending")
            .await;
        let exhausted = list.iter().find(|d| d["id"] == gone.as_str()).unwrap();
        assert_eq!(exhausted["status"], "exhausted");
        assert_eq!(exhausted["attempts"], 1);
        let read: serde_json::Value = world
            .api(reqwest::Method::GET, &format!("/api/v1/webhooks/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(read["active"], false);
        assert!(
            read["disabled_reason"]
                .as_str()
                .unwrap()
                .contains("410 Gone")
        );
        let response = world
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/webhooks/{id}/deliveries/{gone}/redeliver"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 409, "switched off: nothing is queued");

        // Switched on again, the exhausted delivery is sent again under a new id.
        let response = world
            .api(reqwest::Method::PUT, &format!("/api/v1/webhooks/{id}"))
            .json(&json!({"active": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let response = world
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/webhooks/{id}/deliveries/{gone}/redeliver"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
        let again: serde_json::Value = response.json().await.unwrap();
        assert_eq!(again["redelivery_of"], gone.as_str());
        let again_id = again["id"].as_str().unwrap().to_owned();
        let seen = receiver
            .wait_for(Duration::from_secs(10), |s| {
                s.iter().any(|r| r.header("x-svc-delivery") == again_id)
            })
            .await;
        let resent = seen
            .iter()
            .find(|r| r.header("x-svc-delivery") == again_id)
            .unwrap();
        let original = seen
            .iter()
            .find(|r| r.header("x-svc-delivery") == gone)
            .unwrap();
        assert_eq!(resent.json()["id"], original.json()["id"], "the same event");
        assert!(
            seen.iter().all(|r| r.verdict == Some(Ok(()))),
            "every delivery verified"
        );
        world.app.shutdown().await;
    }
}
