//! `[social]` and `[generic_oauth]` wiring: the management API's [`SocialServices`] over the
//! same guarded egress as enterprise SSO (`crate::sso::GuardedSsoEgress`) and the one key
//! sealing upstream secrets (`crate::sso::secret_key`, built once per process), and the sign-in
//! engine's settings over those same services ([`engine_settings`]), so what the API seals the
//! engine opens.

use crate::sso::GuardedSsoEgress;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_crypto::SsoSecretKey;
use svc_manage::social::SocialServices;

/// `[social]` for the management API, when enabled, sealing with `secrets` (from
/// `crate::sso::secret_key`, which builds it whenever `[social]` is on).
pub(crate) fn services(
    config: &Config,
    secrets: Option<&Arc<SsoSecretKey>>,
) -> Option<SocialServices> {
    if !config.social.enabled {
        return None;
    }
    let production = config.is_production();
    Some(SocialServices {
        egress: Arc::new(GuardedSsoEgress::new(production)),
        secrets: secrets?.clone(),
        generic: config.generic_oauth.enabled,
        https_only: production,
    })
}

/// The sign-in engine's settings over the management API's `services`: the same egress and the
/// same sealing key, and `[social].attempt_lifetime_secs`.
pub(crate) fn engine_settings(
    config: &Config,
    services: &SocialServices,
) -> svc_authn::SocialSettings {
    svc_authn::SocialSettings {
        egress: services.egress.clone(),
        secrets: services.secrets.clone(),
        attempt_lifetime: Duration::from_secs(config.social.attempt_lifetime_secs.into()),
    }
}
