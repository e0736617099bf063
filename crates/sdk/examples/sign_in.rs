//! A Rust web backend that signs people in with svc (the authorization code flow with PKCE) and
//! calls the tenant's management API with its own machine token, using `svc_sdk::client`.
//!
//! ```sh
//! SVC_ISSUER=http://acme.localhost:8080 CLIENT_ID=app_… CLIENT_SECRET=… \
//!   MANAGEMENT_CLIENT_ID=app_… MANAGEMENT_CLIENT_SECRET=… \
//!   cargo run -p svc-sdk --example sign_in
//! # then open http://127.0.0.1:3000/login
//! ```
//!
//! The application must be registered with `redirect_uris: ["http://127.0.0.1:3000/callback"]`.
//! The pending request is kept server-side under a random cookie; a real application keeps it
//! in its session store.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use svc_sdk::client::{
    ClientConfig, ManagementApi, OAuthClient, PendingAuthorization, TokenSource,
};

const REDIRECT_URI: &str = "http://127.0.0.1:3000/callback";

struct App {
    rp: OAuthClient,
    api: ManagementApi,
    pending: Mutex<HashMap<String, PendingAuthorization>>,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        eprintln!("set {name}");
        std::process::exit(2)
    })
}

async fn login(State(app): State<Arc<App>>) -> Response {
    match app.rp.authorization_request("openid profile email", &[]) {
        Ok((url, pending)) => {
            // The state doubles as the key of the pending request in this example.
            let key = pending.state.clone();
            if let Ok(mut all) = app.pending.lock() {
                all.insert(key.clone(), pending);
            }
            let cookie = format!("rp_pending={key}; HttpOnly; SameSite=Lax; Path=/");
            ([(header::SET_COOKIE, cookie)], Redirect::to(&url)).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

async fn callback(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let key = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split("; ").find_map(|kv| kv.strip_prefix("rp_pending=")))
        .unwrap_or_default()
        .to_owned();
    let pending = app.pending.lock().ok().and_then(|mut all| all.remove(&key));
    let Some(pending) = pending else {
        return (StatusCode::BAD_REQUEST, "no sign-in in progress").into_response();
    };
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query.iter())
        .finish();
    match app.rp.handle_callback(&pending, &query).await {
        Ok(tokens) => {
            let Some(claims) = tokens.id_token_claims else {
                return (StatusCode::BAD_GATEWAY, "no ID token").into_response();
            };
            let profile = app.rp.userinfo(&tokens.access_token, &claims.sub).await;
            let person = app.api.user(&claims.sub).await.ok();
            Json(json!({
                "sub": claims.sub,
                "userinfo": profile.ok(),
                "status_in_tenant": person.map(|p| p.status),
            }))
            .into_response()
        }
        Err(e) => (StatusCode::UNAUTHORIZED, e.to_string()).into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let issuer = env("SVC_ISSUER");
    let config = ClientConfig::confidential(&env("CLIENT_ID"), &env("CLIENT_SECRET"))
        .with_redirect_uri(REDIRECT_URI);
    let rp = OAuthClient::discover(&issuer, config).await?;
    let machine = OAuthClient::discover(
        &issuer,
        ClientConfig::confidential(
            &env("MANAGEMENT_CLIENT_ID"),
            &env("MANAGEMENT_CLIENT_SECRET"),
        ),
    )
    .await?;
    let tokens = TokenSource::new(Arc::new(machine), Some("users:read"), None);
    let app = Arc::new(App {
        rp,
        api: ManagementApi::new(Arc::new(tokens)),
        pending: Mutex::new(HashMap::new()),
    });
    let router = Router::new()
        .route("/login", get(login))
        .route("/callback", get(callback))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    axum::serve(listener, router).await?;
    Ok(())
}
