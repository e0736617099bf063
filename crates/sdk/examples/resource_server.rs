//! A resource server protecting `GET /users` with svc access tokens: the code shown in the
//! crate's README. Run with `cargo run -p svc-sdk --example resource_server`.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing::get};
use serde_json::json;
use std::sync::Arc;
use svc_sdk::{Requirements, ValidationError, Validator};

const ISSUER: &str = "https://acme.id.example";
const TENANT: &str = "ten_01jd000000000000000000acme";

async fn list_users(State(validator): State<Arc<Validator>>, headers: HeaderMap) -> Response {
    // A header that is not visible ASCII becomes "" and is refused as malformed.
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or(""));
    let req =
        Requirements::new(ISSUER, format!("{ISSUER}/api/v1"), TENANT).with_scope("users:read");
    match validator.validate(authorization, &req).await {
        Ok(claims) => {
            Json(json!({ "caller": claims.sub, "tenant": claims.tenant_id })).into_response()
        }
        Err(e) => refuse(&e),
    }
}

/// Status, `WWW-Authenticate` and a problem body, all decided by the SDK (RFC 6750 §3).
fn refuse(e: &ValidationError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::UNAUTHORIZED);
    let body = json!({ "status": e.status(), "error": e.error_code(), "error_description": e.to_string() });
    let headers = [
        (header::WWW_AUTHENTICATE, e.www_authenticate()),
        (header::CONTENT_TYPE, "application/problem+json".into()),
    ];
    (status, headers, body.to_string()).into_response()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let validator = Arc::new(Validator::new(ISSUER));
    let app = Router::new()
        .route("/users", get(list_users))
        .with_state(validator);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    axum::serve(listener, app).await
}
