//! The device verification page's engine (RFC 8628 §3.3): a person types a device's user code,
//! and the device's request goes through this endpoint's own decisions.
//!
//! Rules, each below:
//! - Wrong codes are counted per tenant and client address in the shared counters; past
//!   [`DeviceSettings::user_code_attempts`] in [`DeviceSettings::attempt_window`] the address is
//!   refused even a right code (RFC 8628 §5.1). A right code costs nothing.
//! - A code finds only a pending, unexpired authorization of the tenant; its client must still
//!   exist. What the person types is never logged.
//! - The request is the device's scopes for the device's client, with consent always asked
//!   (`prompt=consent`, even for a first-party client: RFC 8628 §5.4, the device in front of
//!   the person may be an attacker's) and the user code shown beside it to compare. Sign-in,
//!   step-up, access policies and organizations are decided exactly as for a browser request.
//! - Approval is one transaction: the authorization moves from pending to approved (once, and
//!   only before it expires) and an authorization code bound to the device
//!   ([`CodeBinding::Device`]) is stored under the device code's hash, living as long as the
//!   device code. "Deny" on the consent page marks it denied (the device's poll gets
//!   `access_denied`). Any other refusal (a policy, an organization the person is not in) is
//!   shown on the page and leaves the request pending: the person may sign in as someone else
//!   and type the code again.
//!
//! [`DeviceSettings::user_code_attempts`]: crate::device::DeviceSettings::user_code_attempts
//! [`DeviceSettings::attempt_window`]: crate::device::DeviceSettings::attempt_window

use super::request::{AuthorizationRequest, DeviceRef, Prompt};
use super::{AuthorizeEndpoint, AuthorizeOutcome, grant, truncate_micros, unavailable};
use crate::device::{DeviceSettings, VERIFICATION_PATH};
use crate::error::ErrorPageKind;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use svc_domain::{
    Application, CodeBinding, DeviceStatus, Interaction, Origin, SecretHash, Session, Tenant,
    UserCode,
};
use svc_store::StoreError;

/// What typing a user code led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceEntry {
    /// The code is a device's: continue as the authorization endpoint says.
    Continue(AuthorizeOutcome),
    /// No pending request has this code (or it cannot be a code).
    Unknown,
    /// This address typed too many wrong codes; it must wait.
    TooManyAttempts,
}

/// Where the page says the device was approved.
const APPROVED_PATH: &str = "/oauth/device/verify?result=approved";

impl AuthorizeEndpoint {
    /// The person typed `typed` on the verification page of `tenant`.
    pub async fn enter_user_code(
        &self,
        tenant: &Tenant,
        issuer: &str,
        typed: &str,
        (session, origin): (Option<&Session>, Origin),
        settings: &DeviceSettings,
    ) -> DeviceEntry {
        let key = attempts_key(tenant, origin);
        let now = self.clock.now();
        let window = time::Duration::try_from(settings.attempt_window)
            .unwrap_or(time::Duration::minutes(15));
        let found = async {
            let mut tx = self.store.write().await?;
            let spent = tx
                .counter(&key, now)
                .await?
                .is_some_and(|c| c.count >= settings.user_code_attempts);
            if spent {
                tx.commit().await?;
                return Ok::<_, StoreError>(Err(DeviceEntry::TooManyAttempts));
            }
            let pending = match UserCode::parse(typed) {
                Some(code) => tx
                    .pending_device_authorization(&tenant.id, &code.hash(), now)
                    .await?
                    .map(|a| (a, code)),
                None => None,
            };
            if pending.is_none() {
                tx.hit_counter(&key, now, window).await?;
            }
            tx.commit().await?;
            Ok(pending.ok_or(DeviceEntry::Unknown))
        };
        let (authorization, code) = match found.await {
            Ok(Ok(found)) => found,
            Ok(Err(entry)) => {
                if entry == DeviceEntry::TooManyAttempts {
                    tracing::warn!(tenant = %tenant.id, "device user codes: too many wrong attempts");
                }
                return entry;
            }
            Err(e) => return DeviceEntry::Continue(unavailable(e)),
        };
        let app = match self
            .application(tenant, authorization.client_id.as_str())
            .await
        {
            Ok(Some(app)) => app,
            Ok(None) => return DeviceEntry::Unknown,
            Err(e) => return DeviceEntry::Continue(unavailable(e)),
        };
        let req = AuthorizationRequest {
            client_id: app.id.as_str().to_owned(),
            redirect_uri: format!("{issuer}{VERIFICATION_PATH}"),
            scope: authorization.scope.to_string(),
            state: None,
            nonce: None,
            code_challenge: None,
            prompt: Prompt {
                consent: true,
                ..Prompt::default()
            },
            max_age: None,
            acr_values: None,
            claims: None,
            login_hint: None,
            organization: None,
            resource: None,
            device: Some(DeviceRef {
                hash: URL_SAFE_NO_PAD.encode(authorization.hash.as_bytes()),
                user_code: code.display(),
            }),
            dpop_jkt: None,
            // Shown on the consent page, which is always asked here; the code carries them.
            authorization_details: authorization.authorization_details.clone(),
            details_approved: false,
        };
        DeviceEntry::Continue(
            self.decide(tenant, issuer, &app, &req, (session, origin), None)
                .await,
        )
    }

    /// Step 4 for a device's request: approve it and store its code, in one transaction.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn approve_device(
        &self,
        (tenant, issuer): (&Tenant, &str),
        app: &Application,
        req: &AuthorizationRequest,
        device: &DeviceRef,
        session: &Session,
        pending: Option<&Interaction>,
        context: grant::CodeContext,
    ) -> AuthorizeOutcome {
        let Some(hash) = device_hash(device) else {
            return gone();
        };
        let now = truncate_micros(self.clock.now());
        let approved = async {
            let mut tx = self.store.write().await?;
            let Some(approved) = tx
                .decide_device_authorization(
                    &tenant.id,
                    &hash,
                    DeviceStatus::Approved,
                    &session.user_id,
                    now,
                )
                .await?
            else {
                return Ok(false);
            };
            let code = self.new_code(
                tenant,
                app,
                req,
                session,
                context,
                (hash.clone(), CodeBinding::Device),
                (now, approved.expires_at),
            );
            tx.insert_code(&code).await?;
            self.join_session(tx.as_mut(), &code, issuer).await?;
            if let Some(p) = pending {
                tx.delete_interaction(&tenant.id, &p.id).await?;
            }
            tx.commit().await?;
            Ok::<_, StoreError>(true)
        };
        match approved.await {
            Ok(true) => {
                tracing::info!(tenant = %tenant.id, client_id = %app.id, session = %session.id,
                    "device authorization approved");
                AuthorizeOutcome::RedirectToClient(format!("{issuer}{APPROVED_PATH}"))
            }
            Ok(false) => gone(),
            Err(e) => unavailable(e),
        }
    }

    /// "Deny" on a device's consent page: the device's next poll gets `access_denied`. A
    /// request that meanwhile expired or was answered stays as it is.
    pub(super) async fn deny_device(
        &self,
        tenant: &Tenant,
        device: &DeviceRef,
        session: &Session,
    ) -> Result<(), StoreError> {
        let Some(hash) = device_hash(device) else {
            return Ok(());
        };
        let mut tx = self.store.write().await?;
        let denied = tx
            .decide_device_authorization(
                &tenant.id,
                &hash,
                DeviceStatus::Denied,
                &session.user_id,
                self.clock.now(),
            )
            .await?;
        tx.commit().await?;
        if denied.is_some() {
            tracing::info!(tenant = %tenant.id, session = %session.id,
                "device authorization denied");
        }
        Ok(())
    }
}

/// The counter of wrong codes typed from `origin` in `tenant` (an address nobody could tell
/// shares one counter: failing closed rather than uncounted).
fn attempts_key(tenant: &Tenant, origin: Origin) -> String {
    match origin {
        Origin::Person(ip) => format!("device_user_code:{}:{ip}", tenant.id),
        _ => format!("device_user_code:{}:unknown", tenant.id),
    }
}

fn device_hash(device: &DeviceRef) -> Option<SecretHash> {
    let bytes = URL_SAFE_NO_PAD.decode(&device.hash).ok()?;
    SecretHash::from_bytes(&bytes)
}

/// The device request expired, or was answered from another browser, while the person was on
/// the pages.
fn gone() -> AuthorizeOutcome {
    AuthorizeOutcome::ErrorPage {
        kind: ErrorPageKind::Refused,
        error: "expired_token".into(),
        description: "This device request has expired or was already answered. Start again \
                      on the device."
            .into(),
    }
}
