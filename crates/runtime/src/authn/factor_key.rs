//! Custody of the deployment's data keys: the one that seals TOTP secrets (and keys backup-code
//! hashes), the one keying API-key hashes (`svc_crypto::ApiKeyHasher`), and the one sealing
//! upstream single sign-on secrets (`svc_crypto::SsoSecretKey`). Each is one 32-byte
//! key per deployment and purpose, generated once, wrapped by `svc-kms` and stored only wrapped
//! (`factor_data_keys`), unwrapped at start into memory. Every instance reads the same wrapped
//! key; two instances starting at once race on one insert and both use the winner.
//!
//! Without `[kms]` (refused in production) the key is random and in memory only, like the
//! signing keys: what is enrolled then dies with the process, and the start says so.

use crate::RuntimeError;
use std::sync::Arc;
use svc_config::Config;
use svc_crypto::FactorKey;
use svc_domain::{Clock, Rng};
use svc_kms::KmsClient;
use svc_store::Store;
use zeroize::Zeroizing;

/// One use of a deployment data key: its row, its KMS wrapping context, and what to call it.
pub(crate) struct DataKeyUse {
    /// `factor_data_keys.purpose`.
    pub(crate) purpose: &'static str,
    /// The KMS wrapping context: a key wrapped for one use never unwraps for another.
    pub(crate) context: &'static str,
    /// How errors and the development warning name it.
    pub(crate) what: &'static str,
    /// What is lost on restart without `[kms]`.
    pub(crate) ephemeral: &'static str,
}

/// The key sealing TOTP secrets and keying backup-code hashes.
const TOTP_SEAL: DataKeyUse = DataKeyUse {
    purpose: "totp_seal",
    context: "svc:two_factor:totp_seal:v1",
    what: "two-factor data key",
    ephemeral: "authenticators enrolled now stop working when this process restarts",
};

/// The key of API-key hashes: the same stored, KMS-wrapped deployment key as the second
/// factors' (one row, `totp_seal`, whose purpose constraint needs no migration), from which
/// `svc_crypto::ApiKeyHasher` derives its own key under its own label, so no key serves two
/// algorithms directly. Without `[kms]` it is a separate ephemeral key.
const API_KEY_HASH: DataKeyUse = DataKeyUse {
    purpose: TOTP_SEAL.purpose,
    context: TOTP_SEAL.context,
    what: "API-key hashing key",
    ephemeral: "API keys created now stop working when this process restarts",
};

/// The key sealing upstream single sign-on client secrets: the same stored deployment key
/// again, from which `svc_crypto::SsoSecretKey` derives its own key under its own label.
const SSO_SEAL: DataKeyUse = DataKeyUse {
    purpose: TOTP_SEAL.purpose,
    context: TOTP_SEAL.context,
    what: "single sign-on secret key",
    ephemeral: "single sign-on connections configured now stop working when this process restarts",
};

/// The deployment's key sealing upstream client secrets for `config`.
pub(crate) async fn sso_secret_key(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<svc_crypto::SsoSecretKey, RuntimeError> {
    let bytes = load_data_key(config, store, clock, rng, &SSO_SEAL).await?;
    svc_crypto::SsoSecretKey::new(bytes.as_slice())
        .map_err(|e| RuntimeError::Authn(format!("{}: {e}", SSO_SEAL.what)))
}

/// The deployment's API-key hasher for `config`.
pub(crate) async fn api_key_hasher(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<svc_crypto::ApiKeyHasher, RuntimeError> {
    let bytes = load_data_key(config, store, clock, rng, &API_KEY_HASH).await?;
    svc_crypto::ApiKeyHasher::new(bytes.as_slice())
        .map_err(|e| RuntimeError::Authn(format!("{}: {e}", API_KEY_HASH.what)))
}

/// The deployment's second-factor key for `config`.
pub(crate) async fn load(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<FactorKey, RuntimeError> {
    let bytes = load_data_key(config, store, clock, rng, &TOTP_SEAL).await?;
    FactorKey::new(bytes.as_slice())
        .map_err(|e| RuntimeError::Authn(format!("{}: {e}", TOTP_SEAL.what)))
}

/// The deployment's data key for `key_use`: unwrapped from its stored, KMS-wrapped form
/// (generated, wrapped and stored by the first instance), or ephemeral without `[kms]`.
pub(crate) async fn load_data_key(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
    key_use: &DataKeyUse,
) -> Result<Zeroizing<[u8; 32]>, RuntimeError> {
    let fail = |e: String| RuntimeError::Authn(format!("{}: {e}", key_use.what));
    let Some(kms) = &config.kms else {
        tracing::warn!(
            "no [kms] configured: the {} is ephemeral, kept in memory only; {} (development \
             only)",
            key_use.what,
            key_use.ephemeral
        );
        return Ok(fresh(rng.as_ref()));
    };
    let client = KmsClient::new(
        &kms.socket_path,
        &kms.server_public_key_path,
        &kms.client_private_key_path,
    )
    .map_err(|e| RuntimeError::Kms(e.to_string()))?;
    let wrapped = match stored(store.as_ref(), key_use.purpose)
        .await
        .map_err(fail)?
    {
        Some(wrapped) => wrapped,
        None => {
            let bytes = fresh(rng.as_ref());
            let wrapped = client
                .wrap(key_use.context, bytes.as_slice())
                .await
                .map_err(|e| RuntimeError::Kms(e.to_string()))?;
            let mut tx = store.write().await.map_err(|e| fail(e.to_string()))?;
            let now = clock.now();
            let now = now.replace_nanosecond(0).unwrap_or(now);
            tx.insert_factor_data_key(key_use.purpose, &wrapped, now)
                .await
                .map_err(|e| fail(e.to_string()))?;
            tx.commit().await.map_err(|e| fail(e.to_string()))?;
            // Another instance may have stored its key first: everyone uses the stored one.
            stored(store.as_ref(), key_use.purpose)
                .await
                .map_err(fail)?
                .ok_or_else(|| fail("stored, then not found".into()))?
        }
    };
    let bytes = client
        .unwrap(key_use.context, &wrapped)
        .await
        .map_err(|e| RuntimeError::Kms(e.to_string()))?;
    let mut key = Zeroizing::new([0u8; 32]);
    if bytes.len() != key.len() {
        return Err(fail(format!("unwrapped {} bytes, not 32", bytes.len())));
    }
    key.copy_from_slice(&bytes);
    Ok(key)
}

async fn stored(store: &dyn Store, purpose: &str) -> Result<Option<Vec<u8>>, String> {
    let mut tx = store.read().await.map_err(|e| e.to_string())?;
    let wrapped = tx
        .factor_data_key(purpose)
        .await
        .map_err(|e| e.to_string())?;
    tx.finish().await.map_err(|e| e.to_string())?;
    Ok(wrapped)
}

fn fresh(rng: &dyn Rng) -> Zeroizing<[u8; 32]> {
    let mut bytes = Zeroizing::new([0u8; 32]);
    rng.fill(bytes.as_mut());
    bytes
}
