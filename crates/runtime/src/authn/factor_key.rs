//! Custody of the data key that seals TOTP secrets (and keys backup-code hashes): one 32-byte
//! key per deployment, generated once, wrapped by `svc-kms` and stored only wrapped
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

/// The purpose of the stored key (`factor_data_keys.purpose`).
const PURPOSE: &str = "totp_seal";
/// The KMS wrapping context: a key wrapped for one use never unwraps for another.
const CONTEXT: &str = "svc:two_factor:totp_seal:v1";

/// The deployment's second-factor key for `config`.
pub(crate) async fn load(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<FactorKey, RuntimeError> {
    let fail = |e: String| RuntimeError::Authn(format!("two-factor data key: {e}"));
    let Some(kms) = &config.kms else {
        tracing::warn!(
            "no [kms] configured: the key sealing TOTP secrets is ephemeral, kept in memory \
             only; authenticators enrolled now stop working when this process restarts \
             (development only)"
        );
        let bytes = fresh(rng.as_ref());
        return FactorKey::new(bytes.as_slice()).map_err(|e| fail(e.to_string()));
    };
    let client = KmsClient::new(
        &kms.socket_path,
        &kms.server_public_key_path,
        &kms.client_private_key_path,
    )
    .map_err(|e| RuntimeError::Kms(e.to_string()))?;
    let wrapped = match stored(store.as_ref()).await.map_err(fail)? {
        Some(wrapped) => wrapped,
        None => {
            let bytes = fresh(rng.as_ref());
            let wrapped = client
                .wrap(CONTEXT, bytes.as_slice())
                .await
                .map_err(|e| RuntimeError::Kms(e.to_string()))?;
            let mut tx = store.write().await.map_err(|e| fail(e.to_string()))?;
            let now = clock.now();
            let now = now.replace_nanosecond(0).unwrap_or(now);
            tx.insert_factor_data_key(PURPOSE, &wrapped, now)
                .await
                .map_err(|e| fail(e.to_string()))?;
            tx.commit().await.map_err(|e| fail(e.to_string()))?;
            // Another instance may have stored its key first: everyone uses the stored one.
            stored(store.as_ref())
                .await
                .map_err(fail)?
                .ok_or_else(|| fail("stored, then not found".into()))?
        }
    };
    let bytes = client
        .unwrap(CONTEXT, &wrapped)
        .await
        .map_err(|e| RuntimeError::Kms(e.to_string()))?;
    FactorKey::new(bytes.as_slice()).map_err(|e| fail(e.to_string()))
}

async fn stored(store: &dyn Store) -> Result<Option<Vec<u8>>, String> {
    let mut tx = store.read().await.map_err(|e| e.to_string())?;
    let wrapped = tx
        .factor_data_key(PURPOSE)
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
