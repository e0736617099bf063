//! Client authentication at the token endpoint: which application is calling, proven by the
//! method it registered. One function per method, each citing its RFC.
//!
//! Rules enforced here:
//! - The application is looked up in THIS tenant only; another tenant's `client_id` (or a
//!   malformed one) is simply unknown: `invalid_client`.
//! - The registered method must be used exactly; it is never inferred (spec "Client
//!   authentication at the token endpoint"). A Basic attempt by a `client_secret_post` client,
//!   a secret sent by a `none` client, a secret sent by a `private_key_jwt` client: all
//!   `invalid_client`.
//! - Secrets are compared in constant time ([`svc_domain::SecretHash::verify`]), and an
//!   unknown client costs the same comparison as a known one.
//! - Unknown client, wrong secret and wrong method give the SAME response ("client
//!   authentication failed"); what really happened is kept in the error's log detail.
//! - `client_assertion` handling lives in [`private_key_jwt`].

mod cache;
mod private_key_jwt;

pub use cache::ClientCache;
pub use private_key_jwt::{ASSERTION_CLOCK_SKEW, MAX_ASSERTION_LIFETIME, SUPPORTED_ASSERTION_ALGS};

use crate::client_documents::{ClientDocuments, DocumentError, Reading, is_document_id};
use crate::error::OAuthError;
use crate::token::request::{ClientCredentials, Credential};
use async_trait::async_trait;
use std::sync::LazyLock;
use svc_domain::{Application, ClientId, Clock, SecretHash, TenantId, TokenEndpointAuthMethod};
use svc_store::Store;

/// The one description of every authentication failure that depends on the registered
/// application, so that unknown and known clients cannot be told apart (RFC 6749 §5.2).
pub const AUTH_FAILED: &str = "client authentication failed";

/// Fetches a client's JWKS from its registered `jwks_uri`. The runtime implements it (with
/// SSRF protection: public addresses only, no redirects, small bodies, short timeouts, a cache);
/// the engine only asks.
#[async_trait]
pub trait JwksFetcher: Send + Sync {
    /// The JWKS document at `uri`, as JSON text; `Err` with a reason for the logs.
    async fn fetch(&self, uri: &str) -> Result<String, String>;
}

/// An application that proved its identity.
#[derive(Debug, Clone)]
pub struct AuthenticatedClient {
    /// The registered application.
    pub application: Application,
    /// The method it authenticated with (always its registered one).
    pub method: TokenEndpointAuthMethod,
}

/// What client authentication needs from its surroundings.
#[derive(Clone, Copy)]
pub struct ClientAuthContext<'a> {
    /// Where applications are registered.
    pub store: &'a dyn Store,
    /// The injected clock (assertion expiry).
    pub clock: &'a dyn Clock,
    /// The tenant whose token endpoint was called.
    pub tenant: &'a TenantId,
    /// The tenant's issuer: the audience of client assertions.
    pub issuer: &'a str,
    /// Fetches `jwks_uri` documents; `None` when the deployment does not support them.
    pub jwks_fetcher: Option<&'a dyn JwksFetcher>,
    /// Applications already read; `None` reads the store every time.
    pub clients: Option<&'a ClientCache>,
    /// Resolves URL `client_id`s; `None`: such an id is unknown.
    pub documents: Option<&'a dyn ClientDocuments>,
}

/// Authenticates the client of a token request by the method its application registered.
pub async fn authenticate(
    ctx: &ClientAuthContext<'_>,
    credentials: &ClientCredentials,
) -> Result<AuthenticatedClient, OAuthError> {
    let result = match credentials {
        // RFC 6749 §5.2 invalid_client: "no client authentication included".
        ClientCredentials::Absent => Err(OAuthError::invalid_client(
            "client authentication is required",
        )),
        ClientCredentials::ClientId { client_id } => none(ctx, client_id).await,
        ClientCredentials::Basic { client_id, secret } => {
            client_secret_basic(ctx, client_id, secret).await
        }
        ClientCredentials::Post { client_id, secret } => {
            client_secret_post(ctx, client_id, secret).await
        }
        ClientCredentials::Assertion {
            client_id,
            assertion_type,
            assertion,
        } => {
            private_key_jwt::private_key_jwt(ctx, client_id.as_deref(), assertion_type, assertion)
                .await
        }
    };
    result.map_err(|e| e.with_basic_attempt(credentials.used_basic()))
}

/// `none` (RFC 7591 §2, OIDC Core §9): a public client identifies itself by `client_id` alone.
async fn none(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
) -> Result<AuthenticatedClient, OAuthError> {
    let app = registered(ctx, client_id)
        .await?
        .ok_or_else(|| failed("unknown client"))?;
    expect_method(app, TokenEndpointAuthMethod::None)
}

/// `client_secret_basic` (RFC 6749 §2.3.1): id and secret in the HTTP Basic header.
async fn client_secret_basic(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
    secret: &Credential,
) -> Result<AuthenticatedClient, OAuthError> {
    with_secret(
        ctx,
        client_id,
        secret,
        TokenEndpointAuthMethod::ClientSecretBasic,
    )
    .await
}

/// `client_secret_post` (RFC 6749 §2.3.1): `client_id` and `client_secret` in the form body.
async fn client_secret_post(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
    secret: &Credential,
) -> Result<AuthenticatedClient, OAuthError> {
    with_secret(
        ctx,
        client_id,
        secret,
        TokenEndpointAuthMethod::ClientSecretPost,
    )
    .await
}

/// Compared against when the client is unknown or has no secret, so every path hashes once.
static DUMMY_SECRET: LazyLock<SecretHash> =
    LazyLock::new(|| SecretHash::of("svc: no such client secret"));

async fn with_secret(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
    secret: &Credential,
    used: TokenEndpointAuthMethod,
) -> Result<AuthenticatedClient, OAuthError> {
    let mut app = registered(ctx, client_id).await?;
    // A mismatch against a cached record is checked again against the store: the secret may
    // have been rotated by another instance a moment ago.
    let cached_mismatch = ctx.clients.is_some()
        && app
            .as_ref()
            .and_then(|a| a.secret_hash.as_ref())
            .is_some_and(|h| !h.verify(secret.expose()));
    if cached_mismatch {
        app = stored(ctx, client_id).await?;
    }
    let registered_hash = app.as_ref().and_then(|a| a.secret_hash.as_ref());
    let has_secret = registered_hash.is_some();
    let secret_matches = registered_hash
        .unwrap_or(&DUMMY_SECRET)
        .verify(secret.expose())
        && has_secret;
    let app = app.ok_or_else(|| failed("unknown client"))?;
    let client = expect_method(app, used)?;
    if !secret_matches {
        return Err(failed(if has_secret {
            "wrong client secret"
        } else {
            "no client secret registered"
        }));
    }
    Ok(client)
}

/// The registered method must be the one used (spec: "it is not inferred").
fn expect_method(
    application: Application,
    used: TokenEndpointAuthMethod,
) -> Result<AuthenticatedClient, OAuthError> {
    let registered = application.token_endpoint_auth_method;
    if registered != used {
        return Err(failed(format!(
            "registered method {} but the request used {}",
            registered.as_str(),
            used.as_str()
        )));
    }
    Ok(AuthenticatedClient {
        application,
        method: used,
    })
}

/// The application `client_id` of this tenant (from the cache when fresh); `None` when unknown
/// here or malformed.
async fn registered(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
) -> Result<Option<Application>, OAuthError> {
    if is_document_id(client_id) {
        return by_document(ctx, client_id).await;
    }
    let Ok(id) = ClientId::parse(client_id) else {
        return Ok(None);
    };
    if let Some(app) = ctx.clients.and_then(|c| c.get(ctx.tenant, &id)) {
        return Ok(Some(app.as_ref().clone()));
    }
    stored(ctx, client_id).await
}

/// The application a URL `client_id` names: a stored reading however old serves (only the
/// authorization endpoint needs the document as published now), fetched only when none is.
/// A document that cannot be used is an authentication failure like any other, its reason kept
/// for the logs.
async fn by_document(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
) -> Result<Option<Application>, OAuthError> {
    let Some(documents) = ctx.documents else {
        return Ok(None);
    };
    match documents
        .application(ctx.tenant, client_id, Reading::WhenAbsent)
        .await
    {
        Ok(app) => Ok(app.filter(|a| a.tenant_id == *ctx.tenant)),
        Err(DocumentError::Refused(why)) => Err(failed(why)),
        Err(DocumentError::Store(e)) => Err(e.into()),
    }
}

/// The application `client_id` of this tenant as the store has it now (and cached).
async fn stored(
    ctx: &ClientAuthContext<'_>,
    client_id: &str,
) -> Result<Option<Application>, OAuthError> {
    if is_document_id(client_id) {
        return by_document(ctx, client_id).await;
    }
    let Ok(id) = ClientId::parse(client_id) else {
        return Ok(None);
    };
    let mut read = ctx.store.read_once().await?;
    let app = read.application(ctx.tenant, &id).await?;
    read.finish().await?;
    // Defence in depth: the port already scopes the read to the tenant.
    let app = app.filter(|a| a.tenant_id == *ctx.tenant);
    if let (Some(cache), Some(app)) = (ctx.clients, &app) {
        cache.put(std::sync::Arc::new(app.clone()));
    }
    Ok(app)
}

/// `invalid_client` with the uniform description and the real reason for the logs.
fn failed(detail: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_client(AUTH_FAILED).with_log_detail(detail)
}
