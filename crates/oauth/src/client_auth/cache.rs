//! An in-memory cache of registered applications for client authentication, so the token,
//! introspection and revocation endpoints do not pay a database round trip per request
//! (ARCHITECTURE.md "Performance principles": cache application configuration with explicit
//! invalidation).
//!
//! Consistency:
//! - this process's own changes (update, delete, secret rotation) invalidate the entry at once
//!   (the runtime wires [`ClientCache::invalidate`] to the management use cases);
//! - another process's changes are seen within the TTL;
//! - a presented secret that does not match the cached one is checked again against the store
//!   before it is refused, so a secret that was just rotated in works at once everywhere (only
//!   the retired secret may keep working for up to the TTL on other instances).
//!
//! Unknown client ids are not cached: a spray of random ids cannot fill the memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use svc_domain::{Application, ClientId, TenantId};

/// Bound on cached applications; beyond it the cache is emptied and refills on demand.
const MAX_ENTRIES: usize = 50_000;

/// Entries by (tenant, client id), with when they were read.
type Entries = HashMap<(TenantId, ClientId), (Instant, Arc<Application>)>;

/// Cached applications by (tenant, client id).
#[derive(Debug)]
pub struct ClientCache {
    ttl: Duration,
    entries: Mutex<Entries>,
}

impl ClientCache {
    /// A cache whose entries live `ttl`.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached application, if fresh.
    pub fn get(&self, tenant: &TenantId, id: &ClientId) -> Option<Arc<Application>> {
        let entries = self.entries();
        let (at, app) = entries.get(&(tenant.clone(), id.clone()))?;
        (at.elapsed() < self.ttl).then(|| app.clone())
    }

    /// Remembers `app` as just read.
    pub fn put(&self, app: Arc<Application>) {
        let mut entries = self.entries();
        if entries.len() >= MAX_ENTRIES {
            let ttl = self.ttl;
            entries.retain(|_, (at, _)| at.elapsed() < ttl);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(
            (app.tenant_id.clone(), app.id.clone()),
            (Instant::now(), app),
        );
    }

    /// Forgets one application (it changed or is gone).
    pub fn invalidate(&self, tenant: &TenantId, id: &ClientId) {
        self.entries().remove(&(tenant.clone(), id.clone()));
    }

    /// Forgets every application.
    pub fn clear(&self) {
        self.entries().clear();
    }

    /// Forgets every application of a tenant (the tenant changed or is gone).
    pub fn invalidate_tenant(&self, tenant: &TenantId) {
        self.entries().retain(|(t, _), _| t != tenant);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{GrantType, ManualClock, ScopeSet, SeededRandom, TokenEndpointAuthMethod};

    fn app(tenant: &TenantId, seed: u64) -> Arc<Application> {
        let at = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
        let clock = ManualClock::new(at);
        Arc::new(Application {
            id: ClientId::generate(&clock, &SeededRandom::new(seed)),
            tenant_id: tenant.clone(),
            name: format!("app {seed}"),
            redirect_uris: vec![],
            post_logout_redirect_uris: vec![],
            grant_types: vec![GrantType::ClientCredentials],
            token_endpoint_auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
            allowed_scopes: ScopeSet::parse("a:read").unwrap(),
            secret_hash: None,
            api_audience: None,
            first_party: false,
            id_token_signed_response_alg: svc_domain::SigningAlg::Rs256,
            jwks: None,
            jwks_uri: None,
            is_management: false,
            minimum_acr: None,
            organization_usage: svc_domain::OrganizationUsage::Allow,
            require_pushed_authorization_requests: false,
            dpop_bound_access_tokens: false,
            logout: Default::default(),
            authorization_details_types: Vec::new(),
            metadata_document: None,
            created_at: at,
            updated_at: at,
        })
    }

    #[test]
    fn entries_are_per_tenant_expire_and_can_be_invalidated() {
        let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
        let acme = TenantId::generate(&clock, &SeededRandom::new(1));
        let other = TenantId::generate(&clock, &SeededRandom::new(2));
        let cache = ClientCache::new(Duration::from_secs(60));
        let a = app(&acme, 1);
        let b = app(&acme, 2);
        cache.put(a.clone());
        cache.put(b.clone());
        assert_eq!(cache.get(&acme, &a.id), Some(a.clone()));
        assert_eq!(cache.get(&other, &a.id), None, "never across tenants");
        cache.invalidate(&acme, &a.id);
        assert_eq!(cache.get(&acme, &a.id), None);
        assert!(cache.get(&acme, &b.id).is_some());
        cache.invalidate_tenant(&acme);
        assert_eq!(cache.get(&acme, &b.id), None);

        let expired = ClientCache::new(Duration::ZERO);
        expired.put(a.clone());
        assert_eq!(expired.get(&acme, &a.id), None, "a zero TTL caches nothing");
    }
}
