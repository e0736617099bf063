//! The device authorization grant (RFC 8628): `POST /oauth/device/code` ([`DeviceEndpoint`]).
//!
//! The grant has three parts, each beside the endpoint it belongs to:
//! - here, the start (RFC 8628 §3.1–3.2): the client authenticates as at the token endpoint
//!   (a public client by `client_id` alone), must be registered for the grant, and asks for
//!   scopes it is allowed, and for RAR `authorization_details` (RFC 9396) of its registered
//!   types when the deployment takes them (`crate::details`); it gets a device code (256
//!   random bits, stored hashed), a user code ([`UserCode`]) and where the person enters it;
//! - the verification page's engine (`crate::authorize::device`): a person types the user code
//!   (attempts limited per address), and the request goes through the authorization endpoint's
//!   own decisions (sign-in, step-up, policies, organization) with consent always asked, since
//!   the device may not be the person's (RFC 8628 §5.4); approval stores an authorization code
//!   under the device code's hash;
//! - the poll at the token endpoint (`crate::token::device`): `authorization_pending`,
//!   `slow_down` (interval + 5 s, `Retry-After`), `access_denied`, `expired_token`, or the
//!   tokens, once.

use crate::authorize::request::check_scope;
use crate::client_auth;
use crate::context::ProtocolContext;
use crate::error::OAuthError;
use crate::token::request::ClientRequest;
use serde::Serialize;
use std::time::Duration;
use svc_domain::{
    Application, DEVICE_CODE_PREFIX, DeviceAuthorization, DeviceStatus, GeneratedSecret, GrantType,
    ScopeSet, Tenant, UserCode,
};
use svc_store::StoreError;

/// The path of the verification page, under the issuer (RFC 8628 §3.2 `verification_uri`).
pub const VERIFICATION_PATH: &str = "/oauth/device/verify";

/// `[device_authorization]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSettings {
    /// Whether the grant is served at all.
    pub enabled: bool,
    /// How long a device code and its user code live (CONTRACTS.md: 600 s).
    pub lifetime: Duration,
    /// The polling interval a device starts with (CONTRACTS.md: 5 s).
    pub interval_secs: u32,
    /// Wrong user codes one address may type per [`Self::attempt_window`] before the page
    /// refuses it (RFC 8628 §5.1).
    pub user_code_attempts: u32,
    /// The window the attempts are counted in.
    pub attempt_window: Duration,
}

impl Default for DeviceSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            lifetime: Duration::from_secs(600),
            interval_secs: 5,
            user_code_attempts: 10,
            attempt_window: Duration::from_secs(15 * 60),
        }
    }
}

/// The device authorization response (RFC 8628 §3.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceAuthorizationResponse {
    /// For the device's polls (`dc_…`).
    pub device_code: String,
    /// For the person to type (`XXXX-XXXX`).
    pub user_code: String,
    /// Where the person types it.
    pub verification_uri: String,
    /// The same with the code filled in (for a QR code or a link).
    pub verification_uri_complete: String,
    /// Seconds the codes live.
    pub expires_in: u64,
    /// Seconds between polls.
    pub interval: u32,
}

/// How many user codes are drawn before giving up on a tenant whose live codes collide (with
/// 2.6·10^10 codes, a second draw is already rare).
const USER_CODE_DRAWS: usize = 4;

/// `POST /oauth/device/code`.
pub struct DeviceEndpoint {
    ctx: ProtocolContext,
    settings: DeviceSettings,
}

impl DeviceEndpoint {
    /// The endpoint over `ctx` with `settings`.
    pub fn new(ctx: ProtocolContext, settings: DeviceSettings) -> Self {
        Self { ctx, settings }
    }

    /// Authenticates the client, checks it may use the grant for these scopes, and starts a
    /// device authorization (RFC 8628 §3.1–3.2).
    pub async fn start(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<DeviceAuthorizationResponse, OAuthError> {
        let client_request = ClientRequest::parse(form, authorization)?;
        let auth = self.ctx.client_auth(&tenant.id, issuer);
        let app = client_auth::authenticate(&auth, client_request.client())
            .await?
            .application;
        check_grant(&app)?;
        let details = crate::details::direct(
            &app,
            client_request.param("authorization_details"),
            self.ctx.authorization_details(),
        )?;
        let scope = check_scope(&app, client_request.param("scope"), None)
            .map_err(|e| OAuthError::invalid_scope(e.description))?;
        let scope = ScopeSet::parse(&scope).map_err(|_| OAuthError::invalid_scope("bad scope"))?;
        let secret = GeneratedSecret::generate(DEVICE_CODE_PREFIX, self.ctx.rng.as_ref());
        let now = crate::authorize::truncate_micros(self.ctx.clock.now());
        let mut draws = 0;
        let user_code = loop {
            draws += 1;
            let user_code = UserCode::generate(self.ctx.rng.as_ref());
            let authorization = DeviceAuthorization {
                hash: secret.hash.clone(),
                tenant_id: tenant.id.clone(),
                client_id: app.id.clone(),
                user_code: user_code.hash(),
                scope: scope.clone(),
                authorization_details: details.clone(),
                status: DeviceStatus::Pending,
                user_id: None,
                interval_secs: self.settings.interval_secs,
                last_polled_at: None,
                created_at: now,
                expires_at: now + self.settings.lifetime,
            };
            let mut tx = self.ctx.store.write().await?;
            match tx.insert_device_authorization(&authorization).await {
                Ok(()) => {
                    tx.commit().await?;
                    break user_code;
                }
                Err(StoreError::Conflict { constraint })
                    if constraint == "device_authorizations_user_code_key"
                        && draws < USER_CODE_DRAWS => {}
                Err(e) => return Err(e.into()),
            }
        };
        tracing::info!(tenant = %tenant.id, client_id = %app.id, "device authorization started");
        let verification_uri = format!("{issuer}{VERIFICATION_PATH}");
        let shown = user_code.display();
        Ok(DeviceAuthorizationResponse {
            device_code: secret.plaintext,
            verification_uri_complete: format!("{verification_uri}?user_code={shown}"),
            verification_uri,
            user_code: shown,
            expires_in: self.settings.lifetime.as_secs(),
            interval: self.settings.interval_secs,
        })
    }
}

/// RFC 8628 §3.1 / RFC 6749 §5.2: a client not registered for the grant is
/// `unauthorized_client`.
fn check_grant(app: &Application) -> Result<(), OAuthError> {
    if app.allows_grant(GrantType::DeviceCode) {
        Ok(())
    } else {
        Err(OAuthError::unauthorized_client(
            "this client may not use the device authorization grant",
        ))
    }
}
