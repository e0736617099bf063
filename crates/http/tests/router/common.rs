//! Test app, plane routes that exercise the stack, and request helpers.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::response::Response;
use axum::routing::{get, post};
use http::Request;
use http_body_util::BodyExt;
use serde_json::Value;
use svc_http::{ClientContext, Health, HttpSettings, HttpState, Metrics, Problem};
use tower::ServiceExt;

/// Routes standing in for a plane.
pub(crate) fn plane_routes() -> Router {
    Router::new()
        .route("/items/{id}", get(|| async { "item" }))
        .route(
            "/echo",
            post(|body: Bytes| async move { body.len().to_string() }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "late"
            }),
        )
        .route(
            "/panic",
            get(|| async {
                if true {
                    panic!("secret-panic-message");
                }
                "unreachable"
            }),
        )
        .route(
            "/boom",
            get(|| async {
                Problem::server_error().with_source("connection to db-internal.lan refused")
            }),
        )
        .route(
            "/ctx",
            get(|ctx: ClientContext| async move {
                format!(
                    "{}|{}|{}",
                    ctx.ip.map(|ip| ip.to_string()).unwrap_or_default(),
                    ctx.scheme,
                    ctx.host.unwrap_or_default()
                )
            }),
        )
}

/// Settings with a short timeout and a small body limit, so tests stay fast.
pub(crate) fn settings() -> HttpSettings {
    HttpSettings {
        request_timeout: Duration::from_millis(50),
        max_request_body_bytes: 64,
        ..HttpSettings::default()
    }
}

/// An app plus the state handles the runtime would keep.
pub(crate) struct TestApp {
    pub(crate) app: Router,
    pub(crate) state: HttpState,
}

impl TestApp {
    pub(crate) fn new(settings: HttpSettings) -> Self {
        Self::with_health(settings, Health::new(Vec::new()))
    }

    pub(crate) fn with_health(settings: HttpSettings, health: Health) -> Self {
        let state = HttpState::new(settings, health, Metrics::new("9.9.9", "deadbeef"));
        let app = svc_http::router(plane_routes(), state.clone());
        Self { app, state }
    }

    pub(crate) async fn send(&self, req: Request<Body>) -> Response {
        self.app.clone().oneshot(req).await.unwrap()
    }

    pub(crate) async fn get(&self, uri: &str) -> Response {
        self.send(Request::get(uri).body(Body::empty()).unwrap())
            .await
    }
}

/// Simulates `into_make_service_with_connect_info` for one request.
pub(crate) fn from_peer(mut req: Request<Body>, peer: &str) -> Request<Body> {
    let addr: SocketAddr = peer.parse().unwrap();
    req.extensions_mut().insert(ConnectInfo(addr));
    req
}

pub(crate) async fn text(res: Response) -> String {
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

pub(crate) async fn json(res: Response) -> Value {
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

/// Asserts the common problem shape and returns the body.
pub(crate) async fn problem(res: Response, status: u16, error: &str) -> Value {
    assert_eq!(res.status().as_u16(), status);
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    assert_eq!(res.headers()["cache-control"], "no-store");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    let request_id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body = json(res).await;
    assert_eq!(body["status"], status);
    assert_eq!(body["error"], error);
    assert_eq!(body["request_id"], request_id.as_str());
    let kebab = error.replace('_', "-");
    assert!(
        body["type"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/{kebab}")),
        "{body}"
    );
    for field in ["title", "detail", "error_description"] {
        assert!(body[field].is_string(), "{field} missing in {body}");
    }
    body
}
