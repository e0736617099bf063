//! The device grant's poll at the token endpoint (RFC 8628 §3.4–3.5): the client presents its
//! `device_code` and gets, in this order of checks:
//! 1. `invalid_grant` when no authorization of the tenant has this device code for this client
//!    (another client's device code is not even touched);
//! 2. `expired_token` once it expired (approved or not);
//! 3. `slow_down` with `Retry-After` when this poll came sooner than the interval after the
//!    previous one (the interval has then grown by 5 s, for every later poll);
//! 4. `authorization_pending` while nobody decided, `access_denied` once a person declined;
//! 5. once approved, the tokens: the code the approval stored under the device code is redeemed
//!    by the authorization-code path (once; a second redemption is `invalid_grant` and revokes
//!    what the first issued).
//!
//! The poll is recorded (and the interval grown) in its own committed transaction before the
//! answer, so an erroring poll still counts towards `slow_down`.

use super::{TokenEndpoint, TokenRequest, TokenResponse};
use crate::client_auth::AuthenticatedClient;
use crate::error::{ErrorCode, OAuthError};
use crate::grants::authorization_code::Via;
use svc_domain::{DevicePoll, DeviceStatus, SecretHash, Tenant};
use time::OffsetDateTime;

impl TokenEndpoint {
    /// `grant_type=urn:ietf:params:oauth:grant-type:device_code`.
    pub(super) async fn device_code(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
    ) -> Result<TokenResponse, OAuthError> {
        let app = &client.application;
        let device_code = request
            .param("device_code")
            .ok_or_else(|| OAuthError::invalid_request("device_code is required"))?;
        let hash = SecretHash::of(device_code);
        let now = self.ctx.clock.now();
        let mut tx = self.ctx.store.write().await?;
        let polled = tx
            .poll_device_authorization(&tenant.id, &hash, &app.id, now)
            .await?;
        tx.commit().await?;
        // 1.
        let poll = polled.ok_or_else(|| OAuthError::invalid_grant("the device code is invalid"))?;
        check_poll(&poll, now)?;
        // 5.
        self.redeem(tenant, issuer, client, request, &hash, Via::Device)
            .await
    }
}

/// Checks 2–4.
fn check_poll(poll: &DevicePoll, now: OffsetDateTime) -> Result<(), OAuthError> {
    let authorization = &poll.authorization;
    // 2.
    if now >= authorization.expires_at {
        return Err(OAuthError::new(
            ErrorCode::ExpiredToken,
            "the device code has expired; start again",
        ));
    }
    // 3.
    if poll.too_fast {
        let wait = authorization.interval_secs;
        return Err(OAuthError::new(
            ErrorCode::SlowDown,
            format!("polling too fast; wait {wait} seconds between polls"),
        )
        .with_retry_after(wait));
    }
    // 4.
    match authorization.status {
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
    use svc_domain::{
        ClientId, DeviceAuthorization, ManualClock, ScopeSet, SeededRandom, TenantId,
    };
    use time::Duration;

    fn poll(status: DeviceStatus, too_fast: bool) -> (DevicePoll, OffsetDateTime) {
        let at = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let clock = ManualClock::new(at);
        let rng = SeededRandom::new(1);
        let authorization = DeviceAuthorization {
            hash: SecretHash::of("dc_x"),
            tenant_id: TenantId::generate(&clock, &rng),
            client_id: ClientId::generate(&clock, &rng),
            user_code: SecretHash::of("BCDFGHJK"),
            scope: ScopeSet::default(),
            status,
            user_id: None,
            interval_secs: 10,
            last_polled_at: Some(at),
            created_at: at,
            expires_at: at + Duration::minutes(10),
        };
        (
            DevicePoll {
                authorization,
                too_fast,
            },
            at + Duration::seconds(1),
        )
    }

    #[test]
    fn each_state_has_its_rfc_8628_answer_in_order() {
        let code = |status, too_fast, late: bool| {
            let (p, now) = poll(status, too_fast);
            let now = if late {
                p.authorization.expires_at
            } else {
                now
            };
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
