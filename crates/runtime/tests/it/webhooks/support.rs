//! A webhook receiver on loopback that verifies every delivery with the Rust SDK and can be
//! told what to answer, and a world of an app, a tenant and a management token.

use crate::common::{CreatedTenant, create_tenant, management_token, operator_token};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svc_sdk::{WebhookError, WebhookVerifier};
use svc_testkit::{Backend, TestApp};

/// What the receiver answers next: status, extra headers, delay.
pub(crate) type Reply = (u16, Vec<(&'static str, String)>, Duration);

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    /// Its headers.
    pub(crate) headers: HeaderMap,
    /// Its raw body.
    pub(crate) body: Bytes,
    /// What the SDK's verifier said (`None` while no secret was set).
    pub(crate) verdict: Option<Result<(), WebhookError>>,
    /// When it arrived.
    pub(crate) at: std::time::Instant,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// A receiver: records everything, verifies with [`WebhookVerifier`] once it knows the secret,
/// answers per its script (200 when the script is empty).
#[derive(Clone, Default)]
pub(crate) struct Receiver {
    script: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Received>>>,
    verifier: Arc<Mutex<Option<Arc<WebhookVerifier>>>>,
    /// Delay before every answer (to keep attempts in flight).
    pub(crate) delay: Arc<Mutex<Duration>>,
}

impl Receiver {
    /// Serves on a loopback port; returns `http://127.0.0.1:{port}/hook`.
    pub(crate) async fn start(&self) -> String {
        let this = self.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let this = this.clone();
                async move { this.handle(headers, body).await }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/hook")
    }

    async fn handle(&self, headers: HeaderMap, body: Bytes) -> axum::response::Response {
        let delivery_id = headers
            .get("x-svc-delivery")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let verifier = self.verifier.lock().unwrap().clone();
        let verdict = verifier
            .as_ref()
            .map(|v| v.verify(&headers, &body).map(|_| ()));
        let (status, extra, delay) =
            self.script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or((200, vec![], Duration::ZERO));
        // A replay of an accepted delivery is acknowledged without acting again (rule 6);
        // anything else that fails verification is a permanent 400.
        let replayed = matches!(verdict, Some(Err(WebhookError::Replayed(_))));
        let rejected = matches!(verdict, Some(Err(_))) && !replayed;
        self.seen.lock().unwrap().push(Received {
            headers,
            body,
            verdict,
            at: std::time::Instant::now(),
        });
        let pause = delay.max(*self.delay.lock().unwrap());
        tokio::time::sleep(pause).await;
        if rejected {
            return StatusCode::BAD_REQUEST.into_response();
        }
        if replayed {
            return StatusCode::OK.into_response();
        }
        // Accepted only when answered 2xx: a retry after a failure is not a replay.
        if let (Some(verifier), true) = (verifier, (200..300).contains(&status)) {
            verifier.accepted(&delivery_id);
        }
        let mut response = StatusCode::from_u16(status).unwrap().into_response();
        for (name, value) in extra {
            response.headers_mut().insert(name, value.parse().unwrap());
        }
        response
    }

    /// From now on, verify deliveries with `secret`.
    pub(crate) fn verify_with(&self, secret: &str) {
        *self.verifier.lock().unwrap() = Some(Arc::new(WebhookVerifier::new(
            secret,
            Duration::from_secs(300),
        )));
    }

    /// Queues the next answers.
    pub(crate) fn answer(&self, reply: Reply) {
        self.script.lock().unwrap().push_back(reply);
    }

    /// Everything received so far.
    pub(crate) fn seen(&self) -> Vec<Received> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until `done` holds for what was received (at most `within`).
    pub(crate) async fn wait_for(
        &self,
        within: Duration,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let deadline = std::time::Instant::now() + within;
        loop {
            let seen = self.seen();
            if done(&seen) {
                return seen;
            }
            if std::time::Instant::now() > deadline {
                panic!(
                    "the receiver did not get what was expected in {within:?}; got {} requests: {:#?}",
                    seen.len(),
                    seen.iter()
                        .map(|r| (r.header("x-svc-event").to_owned(), r.verdict.clone()))
                        .collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// An app with tenant `acme` and a management token for it.
pub(crate) struct World {
    pub(crate) app: TestApp,
    pub(crate) tenant: CreatedTenant,
    pub(crate) token: String,
}

/// Settings that make delivery quick in tests: short polls and a one-second retry.
pub(crate) fn fast_delivery() -> Vec<(&'static str, &'static str)> {
    vec![
        ("SVC_SERVER__BASE_DOMAIN", "localhost"),
        ("SVC_WEBHOOKS__POLL_INTERVAL_MS", "25"),
        ("SVC_WEBHOOKS__RETRY_SCHEDULE_SECS", "[1, 1]"),
        ("SVC_WEBHOOKS__REQUEST_TIMEOUT_SECS", "2"),
        ("SVC_WEBHOOKS__LEASE_SECS", "5"),
    ]
}

impl World {
    pub(crate) async fn new(backend: Backend, env: &[(&str, &str)]) -> Self {
        let app = TestApp::spawn_with(backend, env).await;
        let operator = operator_token(&app).await;
        let tenant = create_tenant(&app, &operator, "acme").await;
        let token = management_token(&app, &tenant, None).await;
        Self { app, tenant, token }
    }

    /// A request on the tenant's host with the management token.
    pub(crate) fn api(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.app
            .request(method, path)
            .header("host", &self.tenant.host)
            .bearer_auth(&self.token)
    }

    /// Subscribes `url` to `types`; returns the created view (with the generated secret).
    pub(crate) async fn subscribe(&self, url: &str, types: &[&str]) -> Value {
        let response = self
            .api(reqwest::Method::POST, "/api/v1/webhooks")
            .json(&json!({"url": url, "event_types": types, "description": "e2e"}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, 201, "{body}");
        body
    }

    /// The subscription's deliveries, newest first.
    pub(crate) async fn deliveries(&self, webhook: &str) -> Vec<Value> {
        let response = self
            .api(
                reqwest::Method::GET,
                &format!("/api/v1/webhooks/{webhook}/deliveries?limit=100"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        body["items"].as_array().unwrap().clone()
    }

    /// Waits until every delivery of `webhook` satisfies `done` and there are `count` of them.
    pub(crate) async fn wait_for_deliveries(
        &self,
        webhook: &str,
        count: usize,
        done: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let list = self.deliveries(webhook).await;
            if list.len() == count && list.iter().all(&done) {
                return list;
            }
            if std::time::Instant::now() > deadline {
                panic!("deliveries never settled: {list:#?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
