//! The polled grants at the token endpoint: the device grant (RFC 8628 §3.4–3.5, `device_code`)
//! and CIBA in poll mode (OpenID CIBA Core §10–11, `auth_req_id`). The client presents its
//! reference and gets, in this order of checks:
//! 1. `invalid_grant` when no request of the tenant has this reference for this client
//!    (another client's reference is not even touched);
//! 2. `expired_token` once it expired (approved or not);
//! 3. `slow_down` with `Retry-After` when this poll came sooner than the interval after the
//!    previous one (the interval has then grown by 5 s, for every later poll);
//! 4. `authorization_pending` while nobody decided, `access_denied` once the person declined
//!    (a CIBA decoy stays pending until it expires);
//! 5. once approved, the tokens: the code the approval stored under the reference is redeemed
//!    by the authorization-code path (once; a second redemption is `invalid_grant` and revokes
//!    what the first issued).
//!
//! The poll is recorded (and the interval grown) in its own committed transaction before the
//! answer, so an erroring poll still counts towards `slow_down`.

use super::{TokenEndpoint, TokenRequest, TokenResponse};
use crate::client_auth::AuthenticatedClient;
use crate::error::{ErrorCode, OAuthError};
use crate::grants::authorization_code::Via;
use svc_domain::{DeviceStatus, SecretHash, Tenant};
use time::OffsetDateTime;

/// The two polled grants: which parameter carries the reference, which request it names, and
/// how its code is bound.
#[derive(Debug, Clone, Copy)]
pub(super) enum PolledGrant {
    /// RFC 8628 §3.4: `device_code`.
    Device,
    /// CIBA Core §10.1: `auth_req_id`.
    Backchannel,
}

impl PolledGrant {
    fn param(self) -> &'static str {
        match self {
            Self::Device => "device_code",
            Self::Backchannel => "auth_req_id",
        }
    }

    fn via(self) -> Via<'static> {
        match self {
            Self::Device => Via::Device,
            Self::Backchannel => Via::Backchannel,
        }
    }
}

impl TokenEndpoint {
    /// `grant_type=urn:ietf:params:oauth:grant-type:device_code` or
    /// `grant_type=urn:openid:params:grant-type:ciba` (poll mode): checks 1–5.
    pub(super) async fn polled(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
        grant: PolledGrant,
    ) -> Result<TokenResponse, OAuthError> {
        let app = &client.application;
        let name = grant.param();
        let reference = request
            .param(name)
            .ok_or_else(|| OAuthError::invalid_request(format!("{name} is required")))?;
        let hash = SecretHash::of(reference);
        let now = self.ctx.clock.now();
        let mut tx = self.ctx.store.write().await?;
        let polled = match grant {
            PolledGrant::Device => tx
                .poll_device_authorization(&tenant.id, &hash, &app.id, now)
                .await?
                .map(|p| {
                    let a = &p.authorization;
                    Polled::new(a.status, a.interval_secs, a.expires_at, p.too_fast)
                }),
            PolledGrant::Backchannel => tx
                .poll_backchannel_request(&tenant.id, &hash, app.id.as_str(), now)
                .await?
                .map(|p| {
                    let r = &p.request;
                    Polled::new(r.status, r.interval_secs, r.expires_at, p.too_fast)
                }),
        };
        tx.commit().await?;
        // 1.
        let poll =
            polled.ok_or_else(|| OAuthError::invalid_grant(format!("the {name} is invalid")))?;
        check_poll(&poll, now)?;
        // 5.
        self.redeem(tenant, issuer, client, request, &hash, grant.via())
            .await
    }
}

/// What checks 2–4 read of a device authorization or a backchannel request after a poll.
pub(super) struct Polled {
    status: DeviceStatus,
    interval_secs: u32,
    expires_at: OffsetDateTime,
    too_fast: bool,
}

impl Polled {
    pub(super) fn new(
        status: DeviceStatus,
        interval_secs: u32,
        expires_at: OffsetDateTime,
        too_fast: bool,
    ) -> Self {
        Self {
            status,
            interval_secs,
            expires_at,
            too_fast,
        }
    }
}

/// Checks 2–4.
pub(super) fn check_poll(poll: &Polled, now: OffsetDateTime) -> Result<(), OAuthError> {
    // 2.
    if now >= poll.expires_at {
        return Err(OAuthError::new(
            ErrorCode::ExpiredToken,
            "the request has expired; start again",
        ));
    }
    // 3.
    if poll.too_fast {
        let wait = poll.interval_secs;
        return Err(OAuthError::new(
            ErrorCode::SlowDown,
            format!("polling too fast; wait {wait} seconds between polls"),
        )
        .with_retry_after(wait));
    }
    // 4.
    match poll.status {
        DeviceStatus::Pending => Err(OAuthError::new(
            ErrorCode::AuthorizationPending,
            "the person has not answered yet",
        )),
        DeviceStatus::Denied => Err(OAuthError::new(
            ErrorCode::AccessDenied,
            "the person declined the request",
        )),
        DeviceStatus::Approved => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;

    fn poll(status: DeviceStatus, too_fast: bool) -> (Polled, OffsetDateTime) {
        let at = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let expires_at = at + Duration::minutes(10);
        (
            Polled::new(status, 10, expires_at, too_fast),
            at + Duration::seconds(1),
        )
    }

    #[test]
    fn each_state_has_its_rfc_8628_answer_in_order() {
        let code = |status, too_fast, late: bool| {
            let (p, now) = poll(status, too_fast);
            let now = if late { p.expires_at } else { now };
            check_poll(&p, now).err().map(|e| e.code())
        };
        assert_eq!(
            code(DeviceStatus::Pending, false, false),
            Some(ErrorCode::AuthorizationPending)
        );
        assert_eq!(
            code(DeviceStatus::Denied, false, false),
            Some(ErrorCode::AccessDenied)
        );
        assert_eq!(code(DeviceStatus::Approved, false, false), None);
        // Too fast wins over the state; expiry wins over everything.
        assert_eq!(
            code(DeviceStatus::Approved, true, false),
            Some(ErrorCode::SlowDown)
        );
        assert_eq!(
            code(DeviceStatus::Approved, true, true),
            Some(ErrorCode::ExpiredToken)
        );
        assert_eq!(
            code(DeviceStatus::Pending, false, true),
            Some(ErrorCode::ExpiredToken)
        );
    }

    #[test]
    fn slow_down_says_how_long_to_wait() {
        let (p, now) = poll(DeviceStatus::Pending, true);
        let error = check_poll(&p, now).unwrap_err();
        assert_eq!(error.retry_after(), Some(10));
        assert!(error.description().contains("10 seconds"));
    }
}
