//! `[enterprise_sso]` wiring: the [`SsoEgress`] port over the deployment's guarded fetcher
//! (`crate::guarded_fetch`: the webhooks' SSRF guard, no redirects, a 5 s timeout, 64 KiB per
//! answer) and the key sealing upstream client secrets (derived from the deployment data key of
//! `crate::authn`, so one KMS-wrapped key serves every instance), and the signer of
//! `private_key_jwt` client assertions (the tenant's own signing key). Both are built once per
//! process and shared by the management API (configuring) and the sign-in engine (signing in):
//! without `[kms]` the key is ephemeral, and two copies would not open each other's seals, so
//! [`secret_key`] builds it once for enterprise SSO and social sign-in (`crate::social`) alike.

use crate::RuntimeError;
use crate::guarded_fetch::{GuardedFetcher, Kind};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_crypto::SsoSecretKey;
use svc_domain::{AssertionSigner, Clock, EgressAnswer, Rng, SsoEgress, TenantId};
use svc_manage::sso::SsoServices;
use svc_store::Store;

/// Largest answer read from a provider (discovery document, key set, token answer).
const MAX_BYTES: usize = 64 * 1024;

/// The runtime's way out to upstream providers.
pub(crate) struct GuardedSsoEgress {
    fetcher: GuardedFetcher,
}

impl GuardedSsoEgress {
    pub(crate) fn new(production: bool) -> Self {
        Self {
            fetcher: GuardedFetcher::new(production),
        }
    }
}

#[async_trait]
impl SsoEgress for GuardedSsoEgress {
    async fn get(
        &self,
        url: &str,
        what: &'static str,
        bearer: Option<&str>,
    ) -> Result<Vec<u8>, String> {
        let kind = Kind {
            name: what,
            max_bytes: MAX_BYTES,
            // Providers serve key sets as `application/jwk-set+json`, JSON or even text: the
            // parsers decide.
            json_only: false,
        };
        Ok(self.fetcher.get_authorized(url, kind, bearer).await?.body)
    }

    async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<EgressAnswer, String> {
        let kind = Kind {
            name: "token endpoint",
            max_bytes: MAX_BYTES,
            json_only: false,
        };
        let (status, body) = self.fetcher.post_form(url, kind, form, basic).await?;
        Ok(EgressAnswer { status, body })
    }
}

/// The one key sealing upstream client secrets, when `[enterprise_sso]` or `[social]` needs
/// it: built once per process and handed to both (and through them to the sign-in engine),
/// since without `[kms]` two copies would be two random keys.
pub(crate) async fn secret_key(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<Option<Arc<SsoSecretKey>>, RuntimeError> {
    if !config.enterprise_sso.enabled && !config.social.enabled {
        return Ok(None);
    }
    let key = crate::authn::sso_secret_key(config, store, clock, rng).await?;
    Ok(Some(Arc::new(key)))
}

/// `[enterprise_sso]` for the management API, when enabled, sealing with `secrets` (from
/// [`secret_key`]).
pub(crate) fn services(
    config: &Config,
    secrets: Option<&Arc<SsoSecretKey>>,
) -> Option<SsoServices> {
    if !config.enterprise_sso.enabled {
        return None;
    }
    Some(SsoServices {
        egress: Arc::new(GuardedSsoEgress::new(config.is_production())),
        secrets: secrets?.clone(),
    })
}

/// Client assertions signed by the tenant's current key of the deployment's default algorithm
/// (the key its `/.well-known/jwks.json` publishes).
pub(crate) struct KeyServiceSigner(pub(crate) Arc<svc_oauth::keys::KeyService>);

#[async_trait]
impl AssertionSigner for KeyServiceSigner {
    async fn sign(&self, tenant: &TenantId, claims: &serde_json::Value) -> Result<String, String> {
        let key = self
            .0
            .access_token_signer(tenant)
            .await
            .map_err(|e| e.to_string())?;
        key.sign_jwt("JWT", claims).map_err(|e| e.to_string())
    }
}

/// The sign-in engine's settings over the same services, signing assertions with `keys`.
pub(crate) fn engine_settings(
    config: &Config,
    services: &SsoServices,
    keys: &Arc<svc_oauth::keys::KeyService>,
) -> svc_authn::SsoSettings {
    svc_authn::SsoSettings {
        egress: services.egress.clone(),
        secrets: services.secrets.clone(),
        signer: Arc::new(KeyServiceSigner(keys.clone())),
        attempt_lifetime: Duration::from_secs(config.enterprise_sso.attempt_lifetime_secs.into()),
    }
}
