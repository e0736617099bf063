//! `svc-runtime operator create-token`: mints a control-plane operator token against the
//! configured database (migrating it first outside production, as a first start would).

use crate::{Plane, RuntimeError};
use std::sync::Arc;
use svc_config::Config;
use svc_domain::{OsRandom, SystemClock};

/// Creates an operator token named `name` and returns it (the only time it is visible).
pub async fn create_operator_token(config: &Config, name: &str) -> Result<String, RuntimeError> {
    let plane = Plane::from(config.deployment.runtime_plane);
    let stores = crate::stores::open_plane_stores(config, plane).await?;
    crate::stores::prepare_schema(&stores, config.is_production()).await?;
    let store = stores
        .first()
        .map(|s| s.store.clone())
        .ok_or_else(|| RuntimeError::Bootstrap("no database opened".into()))?;
    let ctx = svc_manage::ManageContext::new(store, Arc::new(SystemClock), Arc::new(OsRandom));
    let result = svc_manage::control_plane::create_operator_token(&ctx, name).await;
    for opened in &stores {
        opened.store.close().await;
    }
    let (_, plaintext) =
        result.map_err(|e| RuntimeError::Bootstrap(format!("operator token: {e}")))?;
    Ok(plaintext)
}
