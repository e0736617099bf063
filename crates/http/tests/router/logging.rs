//! What reaches the logs: one access-log event without the query, internal causes with the
//! request id, never credentials.

use std::io;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use http::Request;

use crate::common::{TestApp, settings};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<serde_json::Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn capture() -> (Captured, tracing::subscriber::DefaultGuard) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::DEBUG)
        .with_current_span(true)
        .with_writer(move || writer.clone())
        .finish();
    (captured, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn one_access_log_event_without_query_or_credentials() {
    let (logs, _guard) = capture();
    let app = TestApp::new(settings());
    let req = Request::get("/items/42?code=SECRET-CODE&state=xyz")
        .header("authorization", "Bearer SECRET-TOKEN")
        .header("cookie", "session=SECRET-COOKIE")
        .header("x-request-id", "req-1")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.send(req).await.status(), 200);

    let all = logs.lines();
    let raw = serde_json::to_string(&all).unwrap();
    for secret in ["SECRET-CODE", "SECRET-TOKEN", "SECRET-COOKIE"] {
        assert!(!raw.contains(secret), "{secret} leaked: {raw}");
    }
    let access: Vec<_> = all
        .iter()
        .filter(|l| l["target"] == "svc_http::access")
        .collect();
    assert_eq!(access.len(), 1, "{raw}");
    let fields = &access[0]["fields"];
    assert_eq!(fields["request_id"], "req-1");
    assert_eq!(fields["method"], "GET");
    assert_eq!(fields["route"], "/items/{id}");
    assert_eq!(fields["path"], "/items/42");
    assert_eq!(fields["status"], 200);
    assert!(fields["latency_ms"].is_number());
    assert_eq!(access[0]["level"], "INFO");
}

#[tokio::test]
async fn internal_cause_is_logged_with_the_request_id() {
    let (logs, _guard) = capture();
    let app = TestApp::new(settings());
    let req = Request::get("/boom")
        .header("x-request-id", "req-boom")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.send(req).await.status(), 500);

    let all = logs.lines();
    let failure = all
        .iter()
        .find(|l| l["level"] == "ERROR")
        .unwrap_or_else(|| panic!("no error event: {all:?}"));
    assert_eq!(failure["fields"]["request_id"], "req-boom");
    assert!(
        failure["fields"]["cause"]
            .as_str()
            .unwrap()
            .contains("db-internal.lan")
    );
}
