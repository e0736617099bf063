//! The tenant directory the HTTP layer resolves hosts with: the store, behind a short-lived
//! in-memory cache so protocol hot paths (discovery, JWKS, token) do not pay a database round
//! trip per request. A suspension or deletion takes effect at once when made through this
//! process or announced by another (`crate::shared_caches`); [`TTL`] bounds what a lost
//! announcement can leave behind.

use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use svc_domain::{Tenant, TenantId, TenantSlug};
use svc_http::TenantDirectory;
use svc_store::Store;

/// How long a lookup (found or not) is reused.
const TTL: Duration = Duration::from_secs(5);
/// Bound on cached slugs, so a scan of random hosts cannot grow memory without limit.
const MAX_ENTRIES: usize = 10_000;

/// Store-backed, cached tenant lookups.
pub(crate) struct CachedDirectory {
    store: Arc<dyn Store>,
    cache: Mutex<HashMap<TenantSlug, (Instant, Option<Tenant>)>>,
}

impl CachedDirectory {
    pub(crate) fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets the tenant `id` (and every negative lookup, which might now name it).
    pub(crate) fn forget(&self, id: &TenantId) {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, (_, hit)| hit.as_ref().is_some_and(|t| t.id != *id));
    }

    /// Forgets every lookup.
    pub(crate) fn clear(&self) {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[async_trait]
impl TenantDirectory for CachedDirectory {
    async fn tenant_by_slug(&self, slug: &TenantSlug) -> Result<Option<Tenant>, String> {
        let now = Instant::now();
        if let Some((at, hit)) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(slug)
            && now.duration_since(*at) < TTL
        {
            return Ok(hit.clone());
        }
        let mut read = self.store.read_once().await.map_err(|e| e.to_string())?;
        let found = read.tenant_by_slug(slug).await.map_err(|e| e.to_string())?;
        let _ = read.finish().await;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= MAX_ENTRIES {
            cache.retain(|_, (at, _)| now.duration_since(*at) < TTL);
            if cache.len() >= MAX_ENTRIES {
                cache.clear();
            }
        }
        cache.insert(slug.clone(), (now, found.clone()));
        Ok(found)
    }
}
