//! The shared services of one process, built once and handed to every plane's builder: the
//! primary store, the signing keys, the injected clock and randomness, the tenant routing and
//! its cached directory, the application cache, the one sign-in engine and the management API
//! state. Planes take what they need from here; nothing here starts a worker or binds a route.

use crate::RuntimeError;
use crate::coordination::Coordination;
use crate::directory::CachedDirectory;
use crate::shared_caches::{Change, ProcessCaches};
use crate::stores::OpenedStore;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_domain::{Clock, Rng, TenantSlug};
use svc_http::api::ApiState;
use svc_http::{TenantResolver, TenantRouting};
use svc_manage::ManageContext;
use svc_oauth::browser_origins::BrowserOrigins;
use svc_oauth::client_auth::ClientCache;
use svc_oauth::dpop::{Dpop, DpopSettings, InstanceReplay, ProofReplay, StoreReplay};
use svc_oauth::keys::KeyService;
use svc_store::{ChangeFeed, Store};

use super::BuildOptions;

/// What every plane of this process shares.
pub(super) struct Services {
    /// The first opened store (the shared one, or the first member plane's with
    /// `split_by_plane`): keys, tenants, applications, and everything the engines persist.
    pub(super) store: Arc<dyn Store>,
    /// The signing-key service.
    pub(super) keys: Arc<KeyService>,
    /// Source of time.
    pub(super) clock: Arc<dyn Clock>,
    /// Source of randomness.
    pub(super) rng: Arc<dyn Rng>,
    /// How hosts map to tenants.
    pub(super) routing: TenantRouting,
    /// Host → tenant, through the cached directory.
    pub(super) tenants: TenantResolver,
    /// Applications already read; invalidated by management changes (`shared_caches`).
    pub(super) clients: Arc<ClientCache>,
    /// The tenants' browser origins (CORS), invalidated the same way.
    pub(super) origins: Arc<BrowserOrigins>,
    /// Every cache above, and the change feed that keeps them correct across instances.
    pub(super) caches: Arc<ProcessCaches>,
    /// Where changes are announced to the other instances: Redis with that backend, else the
    /// database's own feed (PostgreSQL, also with Memcached, which has no publish/subscribe),
    /// else none (embedded SQLite serves one process).
    pub(super) feed: Option<Arc<dyn ChangeFeed>>,
    /// The database's own feed when `feed` is another one: it alone announces revocations, so
    /// the revocation set listens to it on a loop of its own.
    pub(super) revocation_feed: Option<Arc<dyn ChangeFeed>>,
    /// The coordination backend besides the database (Redis or Memcached), when configured.
    pub(super) coordination: Option<Coordination>,
    /// The one sign-in engine of the process.
    pub(super) authn: Arc<svc_authn::Authn>,
    /// The management API's state; also authorises `/metrics` reads on every plane.
    pub(super) api: ApiState,
    /// DPoP proofs (RFC 9449): one replay record for every plane of the process.
    pub(super) dpop: Arc<Dpop>,
    /// Extra CA certificates (PEM) outbound document fetches trust ([`BuildOptions`]).
    pub(super) outbound_roots: Vec<Vec<u8>>,
}

impl Services {
    /// Builds the shared services over the first of the opened `stores`.
    pub(super) async fn build(
        config: &Config,
        stores: &[OpenedStore],
        options: &BuildOptions,
    ) -> Result<Self, RuntimeError> {
        let (clock, rng) = (options.clock.clone(), options.rng.clone());
        let store = stores
            .first()
            .map(|s| s.store.clone())
            .ok_or_else(|| RuntimeError::Keys("no database opened".into()))?;
        let keys =
            crate::keys::key_service(config, store.clone(), clock.clone(), options.key_refresh)
                .await?;
        let routing = tenant_routing(config)?;
        let directory = Arc::new(CachedDirectory::new(store.clone()));
        let tenants = TenantResolver::new(routing.clone(), directory.clone());
        let cache_ttl = Duration::from_secs(u64::from(config.oidc.client_cache_secs));
        let clients = Arc::new(ClientCache::new(cache_ttl));
        let origins = Arc::new(BrowserOrigins::new(store.clone(), cache_ttl));
        let api_keys = api_keys(config, &store, &clock, &rng).await?;
        let coordination = crate::coordination::open(config, clock.clone())?;
        let coordination_feed = coordination.as_ref().and_then(Coordination::feed);
        let store_feed = store.change_feed();
        // The store announces revocations on its own feed only (in the statement that writes
        // them): when another feed carries the other changes, a second loop hears the store's
        // for the revocation set.
        let revocations = store_feed
            .is_some()
            .then(|| store.revocation_set())
            .flatten();
        let revocation_feed = coordination_feed
            .is_some()
            .then(|| store_feed.clone())
            .flatten()
            .filter(|_| revocations.is_some());
        let feed = coordination_feed.or(store_feed);
        let caches = Arc::new(
            ProcessCaches::new(
                clients.clone(),
                directory,
                origins.clone(),
                api_keys.clone(),
                keys.clone(),
                feed.clone(),
                rng.as_ref(),
            )
            .with_revocations(revocations),
        );
        // A weak link: the caches hold the key service, which must not keep them alive.
        let announcer = Arc::downgrade(&caches);
        keys.on_rotation(Arc::new(move |tenant| {
            if let Some(caches) = announcer.upgrade() {
                caches.announce(Change::SigningKeys(tenant.clone()));
            }
        }));
        let manage = ManageContext::new(store.clone(), clock.clone(), rng.clone())
            .with_change_hook(caches.clone());
        // One sign-in engine per process: its Argon2 semaphore bounds hashing across every
        // surface that uses it (management API, hosted pages).
        // One sealing key for every upstream secret (enterprise SSO, social providers): the
        // management API seals with it and the sign-in engine opens with the same instance.
        let upstream_secrets = crate::sso::secret_key(config, &store, &clock, &rng).await?;
        let sso = crate::sso::services(config, upstream_secrets.as_ref());
        let social = crate::social::services(config, upstream_secrets.as_ref());
        let authn = crate::authn::build(
            config,
            store.clone(),
            clock.clone(),
            rng.clone(),
            sso.as_ref().map(|sso| (sso, &keys)),
            social.as_ref(),
        )
        .await?;
        // The management API checks, hashes and invites through the same passwords and links,
        // as ports: svc-manage never depends on svc-authn.
        let manage = manage
            .with_sign_in(crate::authn::sign_in_services(&authn))
            .with_second_factors(config.two_factor.enabled)
            .with_dpop(config.dpop.enabled)
            .with_logout(crate::logout::offer(config))
            .with_authorization_details(config.oidc.authorization_details)
            .with_metadata_documents(config.dynamic_registration.client_id_metadata_documents)
            // Domain verification looks up DNS and fetches HTTPS files through the runtime's
            // resolver and SSRF guard, as a port: svc-manage depends on neither.
            .with_domain_probe(Arc::new(crate::domain_probe::RuntimeDomainProbe::new(
                &config.verified_domains,
            )?));
        let mut manage =
            manage.with_software_statements(crate::software_statements::verifier(config)?);
        if let Some(sso) = sso {
            manage = manage.with_sso(sso);
        }
        if let Some(social) = social {
            manage = manage.with_social(social);
        }
        let dpop = Arc::new(dpop(
            config,
            store.clone(),
            clock.clone(),
            coordination.as_ref(),
        ));
        let api = ApiState {
            tenants: tenants.clone(),
            keys: keys.clone(),
            manage,
            clock: clock.clone(),
            authn: authn.clone(),
            webhook_rules: crate::webhooks::rules(config),
            dpop: dpop.settings().enabled.then(|| dpop.clone()),
            api_keys,
        };
        Ok(Self {
            store,
            keys,
            clock,
            rng,
            routing,
            tenants,
            clients,
            origins,
            caches,
            feed,
            revocation_feed,
            coordination,
            authn,
            api,
            dpop,
            outbound_roots: options.outbound_roots.clone(),
        })
    }
}

/// `[api_keys]` in the use cases' terms, with the deployment's hasher; `None` when off.
async fn api_keys(
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn Clock>,
    rng: &Arc<dyn Rng>,
) -> Result<Option<Arc<svc_manage::api_keys::ApiKeys>>, RuntimeError> {
    let c = &config.api_keys;
    if !c.enabled {
        return Ok(None);
    }
    let hasher = crate::authn::api_key_hasher(config, store, clock, rng).await?;
    let settings = svc_manage::api_keys::ApiKeySettings {
        max_per_tenant: c.max_per_tenant,
        max_lifetime: c
            .max_lifetime_days
            .map(|days| Duration::from_secs(u64::from(days) * 86_400)),
        subject_keys: c.subject_keys,
    };
    Ok(Some(Arc::new(svc_manage::api_keys::ApiKeys::new(
        Arc::new(hasher),
        settings,
    ))))
}

/// `[dpop]` in the engine's terms. Proof `jti`s are remembered in Redis or Memcached with those
/// coordination backends; otherwise in this process while it is the only instance serving the
/// database (no `[kms]`: the instance lease guarantees it), and in the database when several
/// instances may serve it (RFC 9449 §11.1 across instances).
fn dpop(
    config: &Config,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    coordination: Option<&Coordination>,
) -> Dpop {
    let c = &config.dpop;
    let settings = DpopSettings {
        enabled: c.enabled,
        require_nonce: c.require_nonce,
        proof_window: Duration::from_secs(u64::from(c.proof_window_secs)),
        nonce_lifetime: Duration::from_secs(u64::from(c.nonce_lifetime_secs)),
    };
    let replay: Arc<dyn ProofReplay> = if let Some(coordination) = coordination {
        coordination.replay()
    } else if config.kms.is_some() {
        Arc::new(StoreReplay(store))
    } else {
        Arc::new(InstanceReplay::default())
    };
    Dpop::new(settings, replay, clock)
}

/// How hosts map to tenants (CONTRACTS.md "Tenancy and issuers").
fn tenant_routing(config: &Config) -> Result<TenantRouting, RuntimeError> {
    let issuer = config.oidc.issuer_url.clone();
    let single = |slug: &str| {
        TenantSlug::parse(slug)
            .map(|slug| TenantRouting::Single {
                slug,
                issuer: issuer.clone(),
            })
            .map_err(|e| RuntimeError::Bootstrap(format!("tenant.default_tenant_slug: {e}")))
    };
    match (
        &config.tenant.default_tenant_slug,
        &config.server.base_domain,
    ) {
        (Some(slug), _) => single(slug),
        (None, Some(base)) => Ok(TenantRouting::Subdomain {
            base_domain: base.trim_end_matches('.').to_ascii_lowercase(),
        }),
        (None, None) => single(crate::bootstrap::ZERO_CONFIG_TENANT),
    }
}
