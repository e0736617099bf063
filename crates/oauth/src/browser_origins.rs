//! Which web origins a browser may call the token, revocation and UserInfo endpoints from
//! (CORS, for single-page applications such as `@svc/client`): the origins of the redirect URIs
//! the tenant's **public** applications (`token_endpoint_auth_method: none`) registered. A
//! single-page application is a public client whose redirect URI is a page of its own origin,
//! so registering the application is all it takes; no second list to keep in step.
//!
//! Rules:
//! - Only `http`/`https` redirect URIs count (custom schemes of native apps have no web
//!   origin), and only public applications: a confidential client's secret must not live in a
//!   browser, so its origins get no CORS answer and a browser cannot read its tokens.
//! - Origins are per tenant: another tenant's applications never open this tenant's endpoints.
//! - The set is read from the store and kept [`BrowserOrigins::ttl`]; an application
//!   registered, changed or deleted counts within that time.
//! - Origins are compared in their ASCII serialization (scheme, host, port), exactly: no
//!   wildcard, no `null` origin.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use svc_domain::{ClientId, TenantId, TokenEndpointAuthMethod};
use svc_store::{Order, Store, StoreError};

/// Applications read per page while collecting a tenant's origins.
const PAGE: u32 = 200;
/// Bound on the applications read per tenant (beyond it, the first ones count).
const MAX_APPLICATIONS: usize = 10_000;
/// Bound on the tenants cached; beyond it the cache is emptied and refills on demand.
const MAX_TENANTS: usize = 10_000;

/// The web origin (`scheme://host[:port]`) of an `http`/`https` URL.
pub fn web_origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let origin = parsed.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

type Entries = HashMap<TenantId, (Instant, Arc<BTreeSet<String>>)>;

/// The tenants' browser origins, cached.
pub struct BrowserOrigins {
    store: Arc<dyn Store>,
    ttl: Duration,
    cache: Mutex<Entries>,
}

impl BrowserOrigins {
    /// Origins read from `store`, each tenant's kept `ttl`.
    pub fn new(store: Arc<dyn Store>, ttl: Duration) -> Self {
        Self {
            store,
            ttl,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets `tenant`'s origins (one of its applications changed).
    pub fn forget(&self, tenant: &TenantId) {
        self.entries().remove(tenant);
    }

    /// Forgets every tenant's origins.
    pub fn forget_all(&self) {
        self.entries().clear();
    }

    /// How long a tenant's origins are kept.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Whether `origin` (the request's `Origin` header) may call from a browser in `tenant`.
    pub async fn allows(&self, tenant: &TenantId, origin: &str) -> Result<bool, StoreError> {
        Ok(self.of(tenant).await?.contains(origin))
    }

    async fn of(&self, tenant: &TenantId) -> Result<Arc<BTreeSet<String>>, StoreError> {
        if let Some((at, origins)) = self.entries().get(tenant)
            && at.elapsed() < self.ttl
        {
            return Ok(origins.clone());
        }
        let origins = Arc::new(self.read(tenant).await?);
        let mut entries = self.entries();
        if entries.len() >= MAX_TENANTS {
            entries.clear();
        }
        entries.insert(tenant.clone(), (Instant::now(), origins.clone()));
        Ok(origins)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn read(&self, tenant: &TenantId) -> Result<BTreeSet<String>, StoreError> {
        let mut origins = BTreeSet::new();
        let mut after: Option<ClientId> = None;
        let mut seen = 0;
        let mut tx = self.store.read_once().await?;
        loop {
            let page = tx
                .list_applications(tenant, after.as_ref(), Order::Ascending, PAGE)
                .await?;
            seen += page.len();
            for app in &page {
                if app.token_endpoint_auth_method == TokenEndpointAuthMethod::None {
                    origins.extend(
                        app.redirect_uris
                            .iter()
                            .filter_map(|uri| web_origin(uri.as_str())),
                    );
                }
            }
            match page.last() {
                Some(last) if page.len() == PAGE as usize && seen < MAX_APPLICATIONS => {
                    after = Some(last.id.clone());
                }
                _ => break,
            }
        }
        tx.finish().await?;
        Ok(origins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_urls_have_an_origin() {
        assert_eq!(
            web_origin("https://app.example.com/callback?x=1").as_deref(),
            Some("https://app.example.com")
        );
        assert_eq!(
            web_origin("http://127.0.0.1:9999/cb").as_deref(),
            Some("http://127.0.0.1:9999")
        );
        assert_eq!(
            web_origin("https://app.example.com:443/cb").as_deref(),
            Some("https://app.example.com"),
            "the default port is not part of the serialization"
        );
        assert_eq!(web_origin("com.example.app:/oauth2redirect"), None);
        assert_eq!(web_origin("javascript:alert(1)"), None);
        assert_eq!(web_origin("not a url"), None);
    }
}
