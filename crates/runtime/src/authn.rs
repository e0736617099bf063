//! Builds the one sign-in engine ([`svc_authn::Authn`]) of a process from the configuration:
//! `[auth]` becomes its settings and the process's password hasher, `[email]` its mailer (the
//! `log` provider's sink, or an SMTP relay), `[hibp]` its breached-password check when enabled,
//! `[captcha]` its CAPTCHA (the HTTP verifier of `crate::captcha`) when enabled, `[two_factor]`
//! its second factors with the data key of [`factor_key`] when enabled.
//! `svc-authn` never sees `svc-config`; this is the only translation between them.
//!
//! The password hasher ([`hasher::BoundedHasher`]) and the breach check are built here, not in
//! an engine, and handed as one [`Passwords`] to both engines that handle passwords: the sign-in
//! engine, and (through [`sign_in_services`]) the management API, which must apply the same
//! rules with the same hasher without depending on the sign-in engine.

mod factor_key;
pub(crate) use factor_key::{api_key_hasher, sso_secret_key};
mod hasher;

use crate::RuntimeError;
use async_trait::async_trait;
use hasher::{Argon2Settings, BoundedHasher};
use std::sync::Arc;
use std::time::Duration;
use svc_authn::{
    Authn, AuthnSettings, FailMode, HibpClient, HibpSettings, LogMailer, LogSink, Mailer,
    SmtpMailer, SmtpSettings,
};
use svc_config::{Config, EmailProvider};
use svc_domain::{BreachedPasswords, Clock, Passwords, Rng, User, UserTokenPurpose};
use svc_manage::{Invitations, PendingMail, SignInServices};
use svc_store::{Store, StoreError, WriteTx};

/// The engine for `config` over `store`, shared by the management API and the hosted pages.
/// Builds the Argon2 hasher, dummy hash included, before the service accepts requests.
pub(crate) async fn build(
    config: &Config,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
    sso: Option<(
        &svc_manage::sso::SsoServices,
        &Arc<svc_oauth::keys::KeyService>,
    )>,
    social: Option<&svc_manage::social::SocialServices>,
) -> Result<Arc<Authn>, RuntimeError> {
    let hasher = BoundedHasher::new(&argon2_settings(config), rng.clone())
        .map_err(|e| RuntimeError::Authn(format!("auth.argon2_*: {e}")))?;
    let passwords = Passwords::new(Arc::new(hasher), breach_check(config)?);
    let mailer = mailer(config, clock.clone())?;
    let two_factor = two_factor(config, &store, &clock, &rng).await?;
    let mut authn = Authn::new(store, clock, rng, passwords, mailer, settings(config));
    if let Some((settings, verifier)) = crate::captcha::build(&config.captcha)? {
        authn = authn.with_captcha(settings, verifier);
    }
    if let Some(settings) = two_factor {
        authn = authn.with_two_factor(settings);
    }
    if config.passkey.enabled {
        authn = authn.with_passkeys(svc_authn::PasskeySettings {
            rp: svc_authn::RpSettings {
                rp_id: config.passkey.rp_id.clone(),
                extra_origins: config.passkey.origins.clone(),
            },
            ceremony_lifetime: Duration::from_secs(config.passkey.ceremony_lifetime_secs.into()),
        });
    }
    let recovery = &config.recovery;
    if recovery.enabled && config.two_factor.enabled {
        authn = authn.with_recovery(svc_authn::RecoverySettings {
            approvals_required: recovery.approvals_required,
            max_guardians: recovery.max_guardians,
            waiting_period: Duration::from_secs(recovery.waiting_period_secs.into()),
            request_lifetime: Duration::from_secs(recovery.request_lifetime_secs.into()),
        });
    }
    if let Some((sso, keys)) = sso {
        authn = authn.with_sso(crate::sso::engine_settings(config, sso, keys));
    }
    if let Some(social) = social {
        authn = authn.with_social(crate::social::engine_settings(config, social));
    }
    Ok(Arc::new(authn))
}

/// `[two_factor]` in the engine's terms, when enabled, with the deployment's data key.
async fn two_factor(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<Option<svc_authn::TwoFactorSettings>, RuntimeError> {
    let two_factor = &config.two_factor;
    if !two_factor.enabled {
        return Ok(None);
    }
    let key = factor_key::load(config, store, clock, rng).await?;
    Ok(Some(svc_authn::TwoFactorSettings {
        key: Arc::new(key),
        challenge_lifetime: std::time::Duration::from_secs(u64::from(
            two_factor.challenge_lifetime_secs,
        )),
        backup_codes_warn_below: two_factor.backup_codes_warn_below,
        trusted_device_lifetime: (two_factor.trusted_device_days > 0).then(|| {
            std::time::Duration::from_secs(u64::from(two_factor.trusted_device_days) * 86_400)
        }),
        notify_new_device: two_factor.notify_new_device,
        adaptive: config
            .adaptive_mfa
            .enabled
            .then_some(svc_authn::AdaptiveSettings {
                threshold: config.adaptive_mfa.threshold,
                new_ip_score: config.adaptive_mfa.new_ip_score,
                failure_burst_score: config.adaptive_mfa.failure_burst_score,
                failure_burst: config.adaptive_mfa.failure_burst,
            }),
    }))
}

/// What the management API needs of the sign-in side: the engine's own [`Passwords`] (one
/// hasher, one semaphore per process) and its invitation links.
pub(crate) fn sign_in_services(authn: &Arc<Authn>) -> SignInServices {
    SignInServices {
        passwords: authn.passwords().clone(),
        invitations: Arc::new(EngineInvitations(authn.clone())),
        notices: Arc::new(EngineInvitations(authn.clone())),
    }
}

/// The sign-in engine mailing notices of administrators' changes, in its texts.
impl svc_manage::AccountNotices for EngineInvitations {
    fn factors_reset(&self, user: &User, tenant_name: &str, issuer: &str) {
        self.0.notify_factors_reset(user, tenant_name, issuer);
    }

    fn invitation(&self, mail: &svc_manage::InvitationMail<'_>) {
        self.0.notify_invitation(
            mail.to,
            (mail.tenant_name, mail.organization_name),
            mail.link.clone(),
            mail.valid_for,
        );
    }
}

/// The sign-in engine issuing and mailing the management API's invitations, so an invitation
/// is exactly the link and mail the hosted pages accept.
struct EngineInvitations(Arc<Authn>);

#[async_trait]
impl Invitations for EngineInvitations {
    async fn prepare(
        &self,
        tx: &mut dyn WriteTx,
        issuer: &str,
        user: &User,
        tenant_name: &str,
    ) -> Result<PendingMail, StoreError> {
        let mail = self
            .0
            .prepare_link(tx, issuer, user, UserTokenPurpose::Invitation, tenant_name)
            .await?;
        let authn = self.0.clone();
        Ok(PendingMail::new(move || authn.deliver(mail)))
    }
}

/// `[auth].argon2_*`: the hasher's costs and how many hashes run at once.
fn argon2_settings(config: &Config) -> Argon2Settings {
    let auth = &config.auth;
    Argon2Settings {
        memory_kib: auth.argon2_memory_kib,
        iterations: auth.argon2_iterations,
        parallelism: auth.argon2_parallelism,
        max_concurrent: auth.argon2_max_concurrent,
    }
}

/// `[auth]` in the engine's terms; session and link lifetimes keep the engine's defaults.
fn settings(config: &Config) -> AuthnSettings {
    let auth = &config.auth;
    let secs = |s: u32| Duration::from_secs(u64::from(s));
    AuthnSettings {
        brute_force_max_attempts: auth.brute_force_max_attempts,
        brute_force_lockout: secs(auth.brute_force_lockout_secs),
        password_verify_ip_max_attempts: auth.password_verify_ip_max_attempts,
        password_verify_ip_window: secs(auth.password_verify_ip_window_secs),
        registration_max: auth.registration_rate_limit_max,
        registration_window: secs(auth.registration_rate_limit_window_secs),
        ..AuthnSettings::default()
    }
}

/// `[email]`: the log provider's sink, or the SMTP relay.
fn mailer(config: &Config, clock: Arc<dyn Clock>) -> Result<Arc<dyn Mailer>, RuntimeError> {
    let email = &config.email;
    match email.provider {
        EmailProvider::Log => {
            let sink = match &email.log.sink {
                svc_config::LogSink::Stdout => LogSink::Stdout,
                svc_config::LogSink::Stderr => LogSink::Stderr,
                svc_config::LogSink::File(path) => LogSink::File(path.clone()),
            };
            Ok(Arc::new(LogMailer::new(sink, clock)))
        }
        EmailProvider::Smtp => {
            let missing = |key: &str| {
                RuntimeError::Authn(format!("{key} is required with email.provider = \"smtp\""))
            };
            let smtp = &email.smtp;
            let settings = SmtpSettings {
                host: smtp
                    .host
                    .clone()
                    .ok_or_else(|| missing("email.smtp.host"))?,
                port: smtp.port,
                username: smtp.username.clone(),
                password: smtp.password.as_ref().map(|p| p.expose_secret().to_owned()),
                starttls: smtp.starttls,
                from: email.from.clone().ok_or_else(|| missing("email.from"))?,
            };
            let mailer =
                SmtpMailer::new(&settings).map_err(|e| RuntimeError::Authn(e.to_string()))?;
            Ok(Arc::new(mailer))
        }
    }
}

/// `[hibp]`: the range-API client when enabled.
fn breach_check(config: &Config) -> Result<Option<Arc<dyn BreachedPasswords>>, RuntimeError> {
    let hibp = &config.hibp;
    if !hibp.enabled {
        return Ok(None);
    }
    let fail_mode = match hibp.fail_mode {
        svc_config::FailMode::FailOpen => FailMode::Open,
        svc_config::FailMode::FailClosed => FailMode::Closed,
    };
    let client = HibpClient::new(&HibpSettings::new(hibp.base_url.clone(), fail_mode))
        .map_err(|e| RuntimeError::Authn(e.to_string()))?;
    Ok(Some(Arc::new(client)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn auth_keys_become_engine_settings() {
        let mut config = Config::default();
        config.auth.brute_force_max_attempts = 7;
        config.auth.brute_force_lockout_secs = 120;
        config.auth.argon2_memory_kib = 8192;
        config.auth.argon2_max_concurrent = 3;
        let s = settings(&config);
        assert_eq!(s.brute_force_max_attempts, 7);
        assert_eq!(s.brute_force_lockout, Duration::from_secs(120));
        assert_eq!(s.session_lifetime, Duration::from_secs(14 * 24 * 3600));
        let argon2 = argon2_settings(&config);
        assert_eq!((argon2.memory_kib, argon2.max_concurrent), (8192, 3));
    }

    #[test]
    fn smtp_without_a_host_is_refused_naming_the_key() {
        let mut config = Config::default();
        config.email.provider = EmailProvider::Smtp;
        config.email.from = Some("no-reply@example.com".to_owned());
        let err = mailer(&config, Arc::new(svc_domain::SystemClock))
            .err()
            .unwrap();
        assert!(err.to_string().contains("email.smtp.host"), "{err}");
    }
}
