//! A sample MCP tool server protected by svc (issue 19 item 7): JSON-RPC 2.0 over HTTP `POST`
//! at `/mcp` with two tools, each needing its own permission — `tools:search` and `tools:book`.
//! The tenant registers the server as an API resource whose identifier is `MCP_RESOURCE` (this
//! server's `/mcp` URL) with those permissions; a client asks for `resource=MCP_RESOURCE` and
//! gets an audience-bound token carrying the tools it may call.
//!
//! What an MCP client meets, in order (the MCP authorization spec on RFC 9728 and RFC 8414):
//! 1. `POST /mcp` without a token: `401` with `WWW-Authenticate: Bearer …,
//!    resource_metadata="<base>/.well-known/oauth-protected-resource/mcp"` (RFC 9728 §5.1);
//! 2. that metadata (also at the host-wide `/.well-known/oauth-protected-resource`): `resource`,
//!    `authorization_servers` (the svc issuer), the tool permissions in `scopes_supported`;
//! 3. the issuer's own metadata, then a token from svc (a person's code flow, an agent's
//!    challenge-response, or an agent acting on a person's delegation: `act` is accepted, one
//!    actor deep);
//! 4. `initialize` and `tools/list` with any valid token of the tenant for this resource (the
//!    list shows only the tools the token may call), `tools/call` with `tools:<name>` — else
//!    `403` `insufficient_scope` whose `scope` is what the token holds plus `tools:<name>`, so
//!    the client can ask for more without losing what it had (MCP step-up authorization).
//!    Notifications get `202 Accepted`; a `GET` (no server-initiated stream here) `405`.
//!
//! Run with `SVC_ISSUER=… SVC_TENANT_ID=ten_… MCP_RESOURCE=http://127.0.0.1:3001/mcp cargo run
//! -p svc-sdk --example mcp_server` (listens on `LISTEN`, default `127.0.0.1:3001`); with
//! `SVC_CLIENT_ID`/`SVC_CLIENT_SECRET` (an application whose `api_audience` is `MCP_RESOURCE`)
//! it also accepts API keys acting as a person or an agent, via introspection. The
//! runtime's `it::mcp_tools` test compiles this file into its test binary and serves it.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;
use svc_sdk::{AccessTokenClaims, Requirements, ValidationError, Validator};

/// The tools, each with the permission it needs.
const TOOLS: [(&str, &str); 2] = [
    ("search", "Search trips by destination"),
    ("book", "Book a trip"),
];

/// Who this server trusts and what it is called.
#[derive(Debug, Clone)]
pub(crate) struct McpConfig {
    /// The svc issuer (`iss`), also the one authorization server of the metadata.
    pub(crate) issuer: String,
    /// The tenant owning the server (`tenant_id`).
    pub(crate) tenant_id: String,
    /// The resource identifier registered in svc (this server's `/mcp` URL): the tokens' `aud`.
    pub(crate) resource: String,
}

struct Mcp {
    validator: Validator,
    config: McpConfig,
}

/// The permission a tool needs.
fn permission(tool: &str) -> String {
    format!("tools:{tool}")
}

impl Mcp {
    /// RFC 9728 metadata of this resource.
    fn metadata(&self) -> Value {
        json!({
            "resource": self.config.resource,
            "authorization_servers": [self.config.issuer],
            "scopes_supported": TOOLS.iter().map(|(t, _)| permission(t)).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "resource_name": "Trips (sample MCP server)",
        })
    }

    /// Where the metadata is (RFC 9728 §3.1: the well-known prefix before the resource's path).
    fn metadata_url(&self) -> String {
        match url::Url::parse(&self.config.resource) {
            Ok(mut url) => {
                let path = url.path().trim_end_matches('/').to_owned();
                url.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
                url.set_query(None);
                url.to_string()
            }
            Err(_) => String::new(),
        }
    }

    /// The request's token, valid for this resource and, when `permission` is given, holding it.
    async fn caller(
        &self,
        headers: &HeaderMap,
        permission: Option<&str>,
    ) -> Result<AccessTokenClaims, Response> {
        let authorization = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or(""));
        let c = &self.config;
        // An agent acting for a person on a delegation is one actor deep.
        let req = Requirements::new(&c.issuer, &c.resource, &c.tenant_id)
            .with_delegation(true)
            .with_max_delegation_depth(1);
        let claims = self
            .validator
            .validate(authorization, &req)
            .await
            .map_err(|e| self.refuse(&e))?;
        match permission {
            Some(needed) if !claims.scope.iter().any(|s| s == needed) => {
                // The challenge names what the token holds here plus what this call needs, so
                // a client that re-authorizes with it (MCP step-up) keeps the tools it had.
                let mut required = claims.scope.clone();
                required.push(needed.to_owned());
                Err(self.refuse(&ValidationError::InsufficientScope {
                    required: required.join(" "),
                }))
            }
            _ => Ok(claims),
        }
    }

    /// Status and `WWW-Authenticate` decided by the SDK (RFC 6750 §3), pointing to the metadata
    /// (RFC 9728 §5.1) so a client can find the authorization server.
    fn refuse(&self, e: &ValidationError) -> Response {
        let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::UNAUTHORIZED);
        let challenge = format!(
            "{}, resource_metadata=\"{}\"",
            e.www_authenticate(),
            self.metadata_url()
        );
        let body = json!({ "error": e.error_code(), "error_description": e.to_string() });
        (
            status,
            [
                (header::WWW_AUTHENTICATE, challenge),
                (header::CONTENT_TYPE, "application/json".into()),
            ],
            body.to_string(),
        )
            .into_response()
    }
}

/// A JSON-RPC 2.0 result.
fn result(id: &Value, result: Value) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// A JSON-RPC 2.0 error.
fn rpc_error(id: &Value, code: i64, message: &str) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
        .into_response()
}

async fn metadata(State(mcp): State<Arc<Mcp>>) -> Response {
    Json(mcp.metadata()).into_response()
}

/// The protocol versions this server speaks, newest first (MCP lifecycle: the server answers
/// the client's version when it knows it, else its own newest).
const PROTOCOL_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

async fn rpc(State(mcp): State<Arc<Mcp>>, headers: HeaderMap, Json(call): Json<Value>) -> Response {
    let Some(id) = call.get("id").cloned() else {
        // A notification (`notifications/initialized`, …) has no id and gets no answer but
        // `202 Accepted` (MCP Streamable HTTP transport); it needs a valid token all the same.
        return match mcp.caller(&headers, None).await {
            Ok(_) => StatusCode::ACCEPTED.into_response(),
            Err(refused) => refused,
        };
    };
    let method = call.get("method").and_then(Value::as_str).unwrap_or("");
    match method {
        "initialize" => match mcp.caller(&headers, None).await {
            Ok(_) => result(
                &id,
                json!({
                    "protocolVersion": call["params"]["protocolVersion"]
                        .as_str()
                        .filter(|v| PROTOCOL_VERSIONS.contains(v))
                        .unwrap_or(PROTOCOL_VERSIONS[0]),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "trips", "version": "1.0.0"},
                }),
            ),
            Err(refused) => refused,
        },
        "tools/list" => match mcp.caller(&headers, None).await {
            Ok(claims) => {
                let tools: Vec<Value> = TOOLS
                    .iter()
                    .filter(|(name, _)| claims.scope.contains(&permission(name)))
                    .map(|(name, description)| {
                        json!({"name": name, "description": description,
                               "inputSchema": {"type": "object"}})
                    })
                    .collect();
                result(&id, json!({ "tools": tools }))
            }
            Err(refused) => refused,
        },
        "tools/call" => {
            let name = call["params"]["name"].as_str().unwrap_or("");
            if !TOOLS.iter().any(|(t, _)| *t == name) {
                return rpc_error(&id, -32602, "unknown tool");
            }
            match mcp.caller(&headers, Some(&permission(name))).await {
                Ok(claims) => {
                    let acting = claims.act.as_ref().map(|a| a.sub.clone());
                    let text = match acting {
                        Some(agent) => format!("{name} done by {agent} for {}", claims.sub),
                        None => format!("{name} done for {}", claims.sub),
                    };
                    result(&id, json!({"content": [{"type": "text", "text": text}]}))
                }
                Err(refused) => refused,
            }
        }
        _ => rpc_error(&id, -32601, "method not found"),
    }
}

/// The server's routes, validating tokens with `validator` (keys found through the issuer's
/// discovery and cached).
pub(crate) fn router(validator: Validator, config: McpConfig) -> Router {
    let mcp = Arc::new(Mcp { validator, config });
    let suffixed = url::Url::parse(&mcp.config.resource)
        .map(|u| {
            format!(
                "/.well-known/oauth-protected-resource{}",
                u.path().trim_end_matches('/')
            )
        })
        .unwrap_or_else(|_| "/.well-known/oauth-protected-resource/mcp".into());
    let mut router = Router::new()
        .route("/mcp", post(rpc))
        .route("/.well-known/oauth-protected-resource", get(metadata));
    if suffixed != "/.well-known/oauth-protected-resource" {
        router = router.route(&suffixed, get(metadata));
    }
    router.with_state(mcp)
}

#[allow(dead_code)] // Not called where the runtime's test includes this file as a module.
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let config = McpConfig {
        issuer: var("SVC_ISSUER", "https://acme.id.example"),
        tenant_id: var("SVC_TENANT_ID", "ten_01jd000000000000000000acme"),
        resource: var("MCP_RESOURCE", "http://127.0.0.1:3001/mcp"),
    };
    let mut validator = Validator::new(&config.issuer);
    // API keys acting as a person or an agent at this API, through introspection as the
    // confidential application whose `api_audience` is this API.
    if let (Ok(id), Ok(secret)) = (
        std::env::var("SVC_CLIENT_ID"),
        std::env::var("SVC_CLIENT_SECRET"),
    ) {
        validator = validator.with_introspection(&id, &secret);
    }
    let listener = tokio::net::TcpListener::bind(var("LISTEN", "127.0.0.1:3001")).await?;
    axum::serve(listener, router(validator, config)).await
}
