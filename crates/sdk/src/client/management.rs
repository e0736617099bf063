//! A client of one tenant's management API (`{issuer}/api/v1`): every call carries a machine
//! token from a [`TokenSource`] (the tenant is the issuer's, so calls are tenant-aware by
//! construction), and every refusal is a [`ClientError::Api`] with the problem's `error` code
//! (RFC 9457 body). A token the API refuses as invalid (`401`, e.g. revoked) is dropped and the
//! call tried once more with a fresh one.
//!
//! The typed calls cover what a backend most often needs; [`ManagementApi::call`] reaches every
//! other operation of the OpenAPI document (`/openapi.json` on the control plane) with JSON.

use super::error::{ClientError, network};
use super::{TokenSource, read_json};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// The management API of the token source's issuer.
#[derive(Debug)]
pub struct ManagementApi {
    base: String,
    tokens: Arc<TokenSource>,
}

/// An application, as listed (the fields most callers use; [`ManagementApi::call`] has all).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ApplicationSummary {
    /// `app_…`.
    pub client_id: String,
    /// Display name.
    pub name: String,
    /// Grant types it may use.
    #[serde(default)]
    pub grant_types: Vec<String>,
}

/// A person of the tenant, as created or read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TenantUser {
    /// `usr_…`.
    pub id: String,
    /// Their email address.
    pub email: String,
    /// `active`, `suspended`, …
    pub status: String,
}

/// A person to create (`POST /api/v1/tenant-users`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewTenantUser<'a> {
    /// Their email address.
    pub email: &'a str,
    /// Their display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
}

#[derive(Deserialize)]
struct Page<T> {
    items: Vec<T>,
    next_cursor: Option<String>,
}

impl ManagementApi {
    /// The management API of the issuer `tokens` gets its tokens from (they must be for the
    /// management audience, i.e. a client of the tenant whose `api_audience` is it — the
    /// tenant's management application is).
    pub fn new(tokens: Arc<TokenSource>) -> Self {
        let issuer = tokens.client().metadata().issuer.trim_end_matches('/');
        Self {
            base: format!("{issuer}/api/v1"),
            tokens,
        }
    }

    /// Every application of the tenant (all pages).
    pub async fn applications(&self) -> Result<Vec<ApplicationSummary>, ClientError> {
        let mut all = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let path = match &after {
                Some(cursor) => format!("/applications?limit=200&after={cursor}"),
                None => "/applications?limit=200".to_owned(),
            };
            let page: Page<ApplicationSummary> = typed(self.call(Method::GET, &path, None).await?)?;
            all.extend(page.items);
            match page.next_cursor {
                Some(cursor) => after = Some(cursor),
                None => return Ok(all),
            }
        }
    }

    /// Creates a person (pre-provisioned: they set a password through recovery or sign-up).
    pub async fn create_user(&self, user: &NewTenantUser<'_>) -> Result<TenantUser, ClientError> {
        let body = serde_json::to_value(user)
            .map_err(|_| ClientError::InvalidResponse("the user cannot be encoded"))?;
        typed(
            self.call(Method::POST, "/tenant-users", Some(&body))
                .await?,
        )
    }

    /// Reads a person.
    pub async fn user(&self, id: &str) -> Result<TenantUser, ClientError> {
        let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        typed(
            self.call(Method::GET, &format!("/tenant-users/{id}"), None)
                .await?,
        )
    }

    /// Any operation: `method` on `path` (relative to `/api/v1`, e.g. `/organizations`) with an
    /// optional JSON `body`; the JSON answer (`Null` for `204`).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        match self.send(method.clone(), path, body).await {
            // A token revoked or expired early: once more with a fresh one.
            Err(ClientError::Api { status: 401, .. }) => {
                self.tokens.invalidate().await;
                self.send(method, path, body).await
            }
            other => other,
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let token = self.tokens.access_token().await?;
        let url = format!("{}{path}", self.base);
        let mut request = self
            .tokens
            .client()
            .http
            .request(method, &url)
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(network)?;
        let status = response.status().as_u16();
        if status == 204 {
            return Ok(Value::Null);
        }
        let answer = read_json(response).await.unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(answer);
        }
        let text = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
        Err(ClientError::Api {
            status,
            error: text("error").unwrap_or_else(|| "server_error".to_owned()),
            detail: text("detail"),
        })
    }
}

fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value)
        .map_err(|_| ClientError::InvalidResponse("the answer does not have the documented shape"))
}
