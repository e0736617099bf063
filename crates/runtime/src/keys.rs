//! Signing-key custody and rotation for this process: the svc-kms client behind the engine's
//! `KeyWrapper` seam, the key service and access-token algorithm from `[jwt]`, the startup load
//! of a single tenant's keys, its readiness check, and the rotation worker of the async plane.
//! It depends on nothing else in the runtime's assembly (`app` uses it, never the reverse).

use crate::RuntimeError;
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_crypto::rotation::RotationPolicy;
use svc_domain::{Clock, SigningAlg};
use svc_http::{ReadinessCheck, TenantRouting};
use svc_kms::KmsClient;
use svc_oauth::keys::{Custody, KeyService, KeyServiceSettings, KeyWrapper};
use svc_store::Store;
use tokio_util::sync::CancellationToken;

/// The svc-kms client as the engine's key wrapper.
struct KmsWrapper(KmsClient);

#[async_trait]
impl KeyWrapper for KmsWrapper {
    async fn wrap(&self, context: &str, plaintext: &[u8]) -> Result<Vec<u8>, String> {
        self.0
            .wrap(context, plaintext)
            .await
            .map_err(|e| e.to_string())
    }

    async fn unwrap(
        &self,
        context: &str,
        ciphertext: &[u8],
    ) -> Result<zeroize::Zeroizing<Vec<u8>>, String> {
        self.0
            .unwrap(context, ciphertext)
            .await
            .map_err(|e| e.to_string())
    }

    async fn ping(&self) -> Result<(), String> {
        self.0.ping().await.map_err(|e| e.to_string())
    }
}

/// `jwt.default_algorithm`: how access tokens are signed. Both the key service and the
/// discovery document announce it, so it lives here, beside the keys, for both to use.
pub(crate) fn access_token_alg(config: &Config) -> SigningAlg {
    match config.jwt.default_algorithm {
        svc_config::JwtAlgorithm::Es256 => SigningAlg::Es256,
        svc_config::JwtAlgorithm::EdDsa => SigningAlg::EdDsa,
    }
}

/// Rotation timing from `[jwt]` (CONTRACTS.md: retired keys stay published for the longest
/// token lifetime + 1 day).
pub(crate) fn rotation_policy(config: &Config) -> Result<RotationPolicy, RuntimeError> {
    let jwt = &config.jwt;
    let longest_token = [
        jwt.access_token_lifetime_human_secs,
        jwt.access_token_lifetime_agent_secs,
        jwt.id_token_lifetime_secs,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    RotationPolicy::for_lifetimes(
        time::Duration::days(i64::from(jwt.key_rotation_days)),
        time::Duration::seconds(i64::from(longest_token)),
    )
    .map_err(|e| RuntimeError::Keys(format!("jwt.key_rotation_days: {e}")))
}

/// Builds the key service: KMS custody when `[kms]` is configured (refusing to start when the
/// daemon is unreachable or refuses this client), ephemeral otherwise.
pub(crate) async fn key_service(
    config: &Config,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    refresh_after: Duration,
) -> Result<Arc<KeyService>, RuntimeError> {
    let custody = match &config.kms {
        Some(kms) => {
            let client = KmsClient::new(
                &kms.socket_path,
                &kms.server_public_key_path,
                &kms.client_private_key_path,
            )
            .map_err(|e| RuntimeError::Kms(e.to_string()))?;
            client
                .ping()
                .await
                .map_err(|e| RuntimeError::Kms(e.to_string()))?;
            Custody::Kms(Arc::new(KmsWrapper(client)))
        }
        None => {
            tracing::warn!(
                "no [kms] configured: signing keys are ephemeral, kept in memory only; every token \
                 dies with this process (development only)"
            );
            Custody::Ephemeral
        }
    };
    let settings = KeyServiceSettings {
        access_token_alg: access_token_alg(config),
        policy: rotation_policy(config)?,
        refresh_after,
    };
    Ok(Arc::new(KeyService::new(store, custody, clock, settings)))
}

/// Startup completes once signing keys are usable: the KMS answered (checked when the key
/// service was built) and, with a single tenant, its issuer's keys are loaded or created, so
/// the first token request does not pay for key creation nor find the KMS away.
pub(crate) async fn load_single_tenant(
    keys: &KeyService,
    store: &dyn Store,
    routing: &TenantRouting,
) -> Result<(), RuntimeError> {
    let TenantRouting::Single { slug, .. } = routing else {
        return Ok(());
    };
    let fail = |e: String| RuntimeError::Keys(e);
    let mut read = store.read().await.map_err(|e| fail(e.to_string()))?;
    let tenant = read
        .tenant_by_slug(slug)
        .await
        .map_err(|e| fail(e.to_string()))?;
    drop(read);
    if let Some(tenant) = tenant {
        keys.published_jwks(&tenant)
            .await
            .map_err(|e| fail(e.to_string()))?;
    }
    Ok(())
}

/// Readiness: the KMS answers (keys cannot be created or opened without it).
pub(crate) struct KmsReadiness(pub(crate) Arc<KeyService>);

#[async_trait]
impl ReadinessCheck for KmsReadiness {
    fn name(&self) -> &str {
        "kms"
    }

    async fn check(&self) -> Result<(), String> {
        self.0.check_custody().await.map_err(|e| e.to_string())
    }
}

/// The async plane's rotation loop: one pass per `interval` over every tenant.
pub(crate) async fn rotation_worker(
    keys: Arc<KeyService>,
    interval: Duration,
    cancel: CancellationToken,
) {
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        // A failed pass (database or KMS away) is retried on the next tick; readiness reports
        // the outage meanwhile.
        if let Err(e) = keys.rotate_all().await {
            tracing::warn!(error = %e, "key rotation pass failed; retrying on the next tick");
        }
    }
}

/// `svc-runtime keys rotate --tenant SLUG`: an immediate rotation of every algorithm's key.
pub async fn force_rotate(
    config: &Config,
    slug: &str,
    clock: Arc<dyn Clock>,
) -> Result<svc_oauth::keys::RotationReport, RuntimeError> {
    if config.kms.is_none() {
        return Err(RuntimeError::Keys(
            "signing keys are ephemeral without [kms]: there is nothing stored to rotate (restarting the \
             process replaces them); configure [kms] to keep and rotate keys"
                .into(),
        ));
    }
    let slug = svc_domain::TenantSlug::parse(slug)
        .map_err(|e| RuntimeError::Keys(format!("--tenant: {e}")))?;
    let plane = crate::Plane::from(config.deployment.runtime_plane);
    let stores = crate::stores::open_plane_stores(config, plane).await?;
    let store = stores
        .first()
        .map(|s| s.store.clone())
        .ok_or_else(|| RuntimeError::Keys("no database opened".into()))?;
    crate::stores::prepare_schema(&stores, true).await?;
    let mut read = store
        .read()
        .await
        .map_err(|e| RuntimeError::Keys(e.to_string()))?;
    let tenant = read
        .tenant_by_slug(&slug)
        .await
        .map_err(|e| RuntimeError::Keys(e.to_string()))?
        .ok_or_else(|| RuntimeError::Keys(format!("no tenant with slug `{slug}`")))?;
    drop(read);
    let keys = key_service(config, store.clone(), clock, Duration::from_secs(0)).await?;
    let report = keys
        .force_rotate(&tenant.id)
        .await
        .map_err(|e| RuntimeError::Keys(e.to_string()))?;
    for opened in &stores {
        opened.store.close().await;
    }
    Ok(report)
}
