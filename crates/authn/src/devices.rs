//! The browsers a person signs in from (known devices), trusted devices, and risk-based
//! step-up (`[adaptive_mfa]`).
//!
//! A browser carries a device cookie (`dvc_…`, 256 random bits, set by the hosted pages); the
//! service keeps only its SHA-256 per person. After a successful sign-in:
//! - a browser never seen for the person is recorded, and — unless this is the person's very
//!   first sign-in — announced by mail and `auth.device.new` (the mail leaves after the commit);
//! - when the person ticked "don't ask again on this device" on the second step, the browser is
//!   trusted for `trusted_device_days`.
//!
//! At a correct password of a person with a second factor, a trusted browser skips the code
//! (the session reaches aal2 with `amr` `["pwd","mfa"]`: the possession of the trusted browser
//! stands in for the code) — unless adaptive step-up scores the sign-in at or above its
//! threshold: then the code is asked for anyway and `auth.adaptive_mfa.triggered` records the
//! score and its signals. Signals are what the service knows: an address no earlier successful
//! sign-in of the person came from, and a burst of failed sign-ins on the account. A new browser
//! is never trusted, so it needs no score; impossible travel needs geolocation the service does
//! not have.

use crate::engine::Authn;
use crate::error::AuthnError;
use crate::mail::Mail;
use crate::settings::ClientInfo;
use std::time::Duration;
use svc_domain::{EventData, EventType, KnownDevice, Tenant, User, login_user_agent};
use svc_store::WriteTx;
use time::OffsetDateTime;

/// Prefix of device cookie values (`dvc_…`).
pub const DEVICE_COOKIE_PREFIX: &str = "dvc_";

/// What the runtime hands in from `[adaptive_mfa]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdaptiveSettings {
    /// Score at or above which the second factor is asked for on a trusted browser.
    pub threshold: u32,
    /// Score of an address no earlier successful sign-in of the person came from.
    pub new_ip_score: u32,
    /// Score of a burst of failed sign-ins on the account.
    pub failure_burst_score: u32,
    /// Failed sign-ins within the lockout window that make a burst.
    pub failure_burst: u32,
}

/// The browser behind a sign-in, as known for its person (`None`: never seen, or it sent no
/// device cookie of ours).
pub(crate) type Browser = Option<KnownDevice>;

impl Authn {
    /// The browser of `client` as known for `user`.
    pub(crate) async fn browser(
        &self,
        tx: &mut dyn WriteTx,
        user: &User,
        client: &ClientInfo,
    ) -> Result<Browser, AuthnError> {
        Ok(match client.device_hash() {
            Some(hash) => tx.known_device(&user.tenant_id, &user.id, &hash).await?,
            None => None,
        })
    }

    /// Whether a correct password on `browser` may skip the second factor: the browser is
    /// trusted and adaptive step-up (when on) does not find the sign-in risky. A risky one is
    /// recorded as `auth.adaptive_mfa.triggered`. `failures` is the account's count of failed
    /// sign-ins in the current window, read before this success cleared it.
    pub(crate) async fn trusted_skip(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &User,
        browser: &Browser,
        (client, failures): (&ClientInfo, u32),
        now: OffsetDateTime,
    ) -> Result<bool, AuthnError> {
        let trusted = browser.as_ref().is_some_and(|d| d.is_trusted(now));
        if !trusted {
            return Ok(false);
        }
        let Some(adaptive) = self.two_factor.as_ref().and_then(|t| t.adaptive.as_ref()) else {
            return Ok(true);
        };
        let mut score = 0;
        let mut signals = Vec::new();
        if let Some(ip) = client.ip
            && !tx
                .signed_in_from(&tenant.id, &user.id, &ip.to_string())
                .await?
        {
            score += adaptive.new_ip_score;
            signals.push("new_ip".to_owned());
        }
        if failures >= adaptive.failure_burst {
            score += adaptive.failure_burst_score;
            signals.push("failure_burst".to_owned());
        }
        if score < adaptive.threshold {
            return Ok(true);
        }
        let data = EventData::AdaptiveMfaTriggered {
            user_id: user.id.clone(),
            score,
            signals,
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(tx, &tenant.id, EventType::AdaptiveMfaTriggered, data)
            .await?;
        Ok(false)
    }

    /// Records the sign-in's browser for `user` (first seen, or seen again) and, when `trust`,
    /// trusts it for the configured days. A browser new to a person who signed in before is
    /// announced: `auth.device.new` now, and the returned mail once the transaction commits.
    pub(crate) async fn remember_browser(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        (user, first_sign_in): (&User, bool),
        client: &ClientInfo,
        trust: bool,
        now: OffsetDateTime,
    ) -> Result<Option<Mail>, AuthnError> {
        let Some(settings) = &self.two_factor else {
            return Ok(None);
        };
        let Some(hash) = client.device_hash() else {
            return Ok(None);
        };
        let user_agent = login_user_agent(client.user_agent.as_deref());
        let device = KnownDevice {
            tenant_id: tenant.id.clone(),
            user_id: user.id.clone(),
            secret_hash: hash.clone(),
            user_agent: user_agent.clone(),
            first_seen_at: now,
            last_seen_at: now,
            trusted_until: None,
        };
        let mut mail = None;
        if tx.insert_known_device(&device).await? {
            if settings.notify_new_device && !first_sign_in {
                let data = EventData::NewDevice {
                    user_id: user.id.clone(),
                    user_agent: user_agent.clone(),
                    client_ip: client.ip.map(|ip| ip.to_string()),
                };
                self.record_event(tx, &tenant.id, EventType::DeviceNew, data)
                    .await?;
                mail = Some(self.settings.mail_texts.new_device_notice(
                    &user.email,
                    &tenant.display_name,
                    user_agent.as_deref(),
                    client.ip.map(|ip| ip.to_string()).as_deref(),
                    now,
                ));
            }
        } else {
            tx.touch_known_device(&tenant.id, &user.id, &hash, now)
                .await?;
        }
        if trust && let Some(days) = settings.trusted_device_lifetime {
            let until = now + crate::settings::span(days);
            tx.set_device_trust(&tenant.id, &user.id, &hash, Some(until))
                .await?;
        }
        Ok(mail)
    }

    /// Whether adaptive step-up is on.
    pub(crate) fn adaptive_on(&self) -> bool {
        self.two_factor
            .as_ref()
            .is_some_and(|t| t.adaptive.is_some())
    }

    /// How long "don't ask again on this device" lasts, when the choice is offered.
    pub fn trusted_device_lifetime(&self) -> Option<Duration> {
        self.two_factor
            .as_ref()
            .and_then(|t| t.trusted_device_lifetime)
    }

    /// Stops trusting every browser of `user` (they must give a code again everywhere).
    pub async fn forget_trusted_devices(
        &self,
        tenant: &Tenant,
        user: &User,
    ) -> Result<u64, AuthnError> {
        let mut tx = self.store.write().await?;
        let forgotten = tx.forget_trusted_devices(&tenant.id, &user.id).await?;
        tx.commit().await?;
        Ok(forgotten)
    }
}
