//! Assembly: from a validated configuration to a bound, serving process, and back down.

use crate::bootstrap::{ensure_default_tenant, implied_default_tenant};
use crate::directory::{CachedDirectory, ProcessCaches};
use crate::stores::{
    OpenedStore, StorePoolStats, StoreReadiness, open_plane_stores, prepare_schema,
};
use crate::tls::{TlsFiles, server_config};
use crate::workers::Workers;
use crate::{Plane, RuntimeError, serve};
use axum::Router;
use axum_server::Handle;
use secrecy::SecretString;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use svc_config::{Config, Loaded, Transport};
use svc_domain::{Clock, OsRandom, Rng, SystemClock};
use svc_domain::{SigningAlg, TenantSlug};
use svc_http::api::{ApiState, MetricsReadAuthorizer};
use svc_http::hosted::{self, HostedState};
use svc_http::routes::token::{self, TokenState};
use svc_http::routes::well_known::{self, WellKnownState};
use svc_http::routes::{applications, control_plane, users, webhooks};
use svc_http::throttle::{Throttle, ThrottleSettings};
use svc_http::{
    Health, HttpSettings, HttpState, Metrics, ReadinessCheck, TenantResolver, TenantRouting,
};
use svc_manage::ManageContext;
use svc_oauth::TokenSettings;
use svc_oauth::authorize::{AuthorizeEndpoint, AuthorizeSettings};
use svc_oauth::client_auth::ClientCache;
use svc_oauth::discovery::{DiscoverySettings, OptionalFeatures};
use svc_oauth::end_session::EndSession;
use svc_oauth::introspect::Introspector;
use svc_oauth::keys::KeyService;
use svc_oauth::revoke::Revoker;
use svc_oauth::token::TokenEndpoint;
use svc_oauth::userinfo::UserInfo;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Seams for tests; production uses the defaults.
pub struct BuildOptions {
    /// Source of time for bootstrap records and workers.
    pub clock: Arc<dyn Clock>,
    /// Source of randomness for ids.
    pub rng: Arc<dyn Rng>,
    /// How often the database watchdog pings each store.
    pub watchdog_interval: Duration,
    /// How often the async plane runs a key-rotation pass.
    pub rotation_interval: Duration,
    /// How long a tenant's cached signing keys are served before the store is read again.
    pub key_refresh: Duration,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            rng: Arc::new(OsRandom),
            watchdog_interval: Duration::from_secs(5),
            rotation_interval: Duration::from_secs(60),
            key_refresh: Duration::from_secs(30),
        }
    }
}

/// A fully assembled service, not yet listening.
pub struct App {
    config: Config,
    plane: Plane,
    stores: Vec<OpenedStore>,
    health: Health,
    router: Router,
    tls: Option<Arc<rustls::ServerConfig>>,
    workers: Workers,
    cancel: CancellationToken,
    keys: Arc<KeyService>,
    authn: Arc<svc_authn::Authn>,
}

/// A service that is listening; dropping it does not stop it, [`RunningApp::shutdown`] does.
pub struct RunningApp {
    local_addr: SocketAddr,
    scheme: &'static str,
    cancel: CancellationToken,
    server: JoinHandle<Result<(), RuntimeError>>,
    keys: Arc<KeyService>,
}

impl App {
    /// Opens and prepares the databases, builds routes, health, metrics and workers.
    pub async fn build(loaded: &Loaded, options: BuildOptions) -> Result<Self, RuntimeError> {
        let config = loaded.config.clone();
        let plane = Plane::from(config.deployment.runtime_plane);
        let production = config.is_production();

        let tls = match config.server.transport {
            Transport::PlainHttp => None,
            Transport::TlsH2Only => {
                let tls = &config.server.tls;
                let missing = |key: &'static str| RuntimeError::Tls {
                    key,
                    path: String::new(),
                    detail: "required with server.transport = tls_h2_only".into(),
                };
                let cert = tls
                    .cert_pem_path
                    .as_deref()
                    .ok_or_else(|| missing("server.tls.cert_pem_path"))?;
                let key = tls
                    .key_pem_path
                    .as_deref()
                    .ok_or_else(|| missing("server.tls.key_pem_path"))?;
                Some(server_config(&TlsFiles {
                    cert,
                    key,
                    ca: tls.ca_pem_path.as_deref(),
                })?)
            }
        };

        let stores = open_plane_stores(&config, plane).await?;
        prepare_schema(&stores, production).await?;
        let bootstrap = implied_default_tenant(&config).filter(|_| !production);
        if let (Some(slug), Some(first)) = (bootstrap, stores.first()) {
            let (clock, rng) = (options.clock.clone(), options.rng.clone());
            if let Some(id) = ensure_default_tenant(first.store.clone(), &slug, clock, rng).await? {
                tracing::info!(
                    tenant = %slug,
                    tenant_id = %id,
                    "created the default tenant; for management credentials run `svc-runtime operator create-token \
                     --name admin`, then POST /api/v1/control-plane/tenants/{id}/management-credentials with that token"
                );
            }
        }

        let key_store = stores
            .first()
            .map(|s| s.store.clone())
            .ok_or_else(|| RuntimeError::Keys("no database opened".into()))?;
        let keys = crate::keys::key_service(
            &config,
            key_store.clone(),
            options.clock.clone(),
            options.key_refresh,
        )
        .await?;
        let routing = tenant_routing(&config)?;

        let metrics = Metrics::new(env!("CARGO_PKG_VERSION"), env!("SVC_BUILD_COMMIT"));
        let cancel = CancellationToken::new();
        let mut workers = Workers::new(cancel.clone());
        if plane.runs(Plane::Async) && config.deployment.background_tasks_enabled {
            let (keys, interval) = (keys.clone(), options.rotation_interval);
            workers.spawn("key-rotation", move |cancel| {
                crate::keys::rotation_worker(keys, interval, cancel)
            });
            let (store, clock) = (key_store.clone(), options.clock.clone());
            let retention = time::Duration::days(i64::from(config.webhooks.history_retention_days));
            workers.spawn("janitor", move |cancel| {
                janitor(store, clock, retention, cancel)
            });
            crate::webhooks::spawn(
                &mut workers,
                &config,
                key_store.clone(),
                options.clock.clone(),
                options.rng.clone(),
                &metrics,
            )?;
        }
        for opened in &stores {
            let opened = opened.clone();
            let interval = options.watchdog_interval;
            workers.spawn("database-watchdog", move |cancel| {
                database_watchdog(opened, interval, cancel)
            });
        }

        let mut checks: Vec<Arc<dyn ReadinessCheck>> = stores
            .iter()
            .map(|s| Arc::new(StoreReadiness::new(s.clone())) as Arc<dyn ReadinessCheck>)
            .collect();
        checks.push(workers.readiness());
        if !keys.is_ephemeral() {
            checks.push(Arc::new(crate::keys::KmsReadiness(keys.clone())));
        }
        let health = Health::new(checks);
        for opened in &stores {
            metrics.register_pool(opened.label, Arc::new(StorePoolStats(opened.store.clone())));
        }

        let settings = HttpSettings {
            allowed_hosts: config.server.allowed_hosts.clone(),
            trusted_proxies: config
                .server
                .trusted_proxies
                .iter()
                .map(|p| p.net())
                .collect(),
            direct_client_exposure: config.server.direct_client_exposure,
            metrics_bearer_token: config
                .server
                .metrics_bearer_token
                .as_ref()
                .map(|t| SecretString::from(t.expose_secret().to_owned())),
            request_timeout: Duration::from_secs(u64::from(config.server.request_timeout_secs)),
            max_request_body_bytes: usize::try_from(config.server.max_request_body_bytes)
                .unwrap_or(usize::MAX),
            error_type_base: config.server.error_type_base.clone(),
            tls: tls.is_some(),
        };
        let directory = Arc::new(CachedDirectory::new(key_store.clone()));
        let tenants = TenantResolver::new(routing.clone(), directory.clone());
        let clients = Arc::new(ClientCache::new(Duration::from_secs(u64::from(
            config.oidc.client_cache_secs,
        ))));
        let manage = ManageContext::new(
            key_store.clone(),
            options.clock.clone(),
            options.rng.clone(),
        )
        .with_change_hook(Arc::new(ProcessCaches {
            clients: clients.clone(),
            directory: directory.clone(),
        }));
        // One sign-in engine per process: its Argon2 semaphore bounds hashing across every
        // surface that uses it (management API, hosted pages).
        let authn = crate::authn::build(
            &config,
            key_store.clone(),
            options.clock.clone(),
            options.rng.clone(),
        )
        .await?;
        let api = ApiState {
            tenants: tenants.clone(),
            keys: keys.clone(),
            manage,
            clock: options.clock.clone(),
            authn: authn.clone(),
            webhook_rules: crate::webhooks::rules(&config),
        };
        let mut plane_routes = Router::new();
        if plane.runs(Plane::Auth) {
            plane_routes = plane_routes.merge(well_known::router(WellKnownState {
                tenants: tenants.clone(),
                keys: keys.clone(),
                discovery: Arc::new(DiscoverySettings {
                    access_token_alg: keys_alg(&config),
                    features: OptionalFeatures {
                        introspection: true,
                        revocation: true,
                        end_session: true,
                        ..OptionalFeatures::default()
                    },
                }),
            }));
            let settings = TokenSettings {
                access_token_lifetime_human: Duration::from_secs(u64::from(
                    config.jwt.access_token_lifetime_human_secs,
                )),
                access_token_lifetime_agent: Duration::from_secs(u64::from(
                    config.jwt.access_token_lifetime_agent_secs,
                )),
                refresh_token_lifetime_human: Duration::from_secs(u64::from(
                    config.jwt.refresh_token_lifetime_human_secs,
                )),
                refresh_token_idle: Duration::from_secs(u64::from(
                    config.jwt.refresh_token_idle_secs,
                )),
                id_token_lifetime: Duration::from_secs(u64::from(
                    config.jwt.id_token_lifetime_secs,
                )),
            };
            let fetcher = Arc::new(crate::jwks_fetch::GuardedJwksFetcher::new(production));
            let endpoint = TokenEndpoint::new(
                key_store.clone(),
                keys.clone(),
                options.clock.clone(),
                options.rng.clone(),
                settings,
            )
            .with_jwks_fetcher(fetcher.clone())
            .with_client_cache(clients.clone());
            let introspector =
                Introspector::new(key_store.clone(), keys.clone(), options.clock.clone())
                    .with_jwks_fetcher(fetcher.clone())
                    .with_client_cache(clients.clone());
            let revoker = Revoker::new(
                key_store.clone(),
                keys.clone(),
                options.clock.clone(),
                options.rng.clone(),
            )
            .with_jwks_fetcher(fetcher)
            .with_client_cache(clients.clone());
            let userinfo = UserInfo::new(key_store.clone(), keys.clone(), options.clock.clone());
            let authorize = AuthorizeEndpoint::new(
                key_store.clone(),
                options.clock.clone(),
                options.rng.clone(),
                AuthorizeSettings {
                    code_lifetime: Duration::from_secs(u64::from(
                        config.oidc.authorization_code_lifetime_secs,
                    )),
                    ..AuthorizeSettings::default()
                },
            )
            .with_client_cache(clients.clone());
            plane_routes = plane_routes.merge(hosted::router(HostedState {
                tenants: tenants.clone(),
                authn: authn.clone(),
                authorize: Arc::new(authorize),
                end_session: Arc::new(EndSession::new(key_store.clone(), keys.clone())),
                rng: options.rng.clone(),
            }));
            let throttle = &config.server.endpoint_throttle;
            plane_routes = plane_routes.merge(token::router(TokenState {
                tenants: tenants.clone(),
                endpoint: Arc::new(endpoint),
                introspector: Arc::new(introspector),
                revoker: Arc::new(revoker),
                userinfo: Arc::new(userinfo),
                throttle: Arc::new(Throttle::new(ThrottleSettings {
                    enabled: throttle.enabled,
                    requests_per_second: throttle.requests_per_second,
                    burst: throttle.burst,
                })),
            }));
        }
        if plane.runs(Plane::Control) {
            plane_routes = plane_routes
                .merge(control_plane::router(api.clone()))
                .merge(applications::router(api.clone()))
                .merge(users::router(api.clone()))
                .merge(webhooks::router(api.clone()));
        }
        if config.server.metrics_bearer_token.is_none() {
            metrics.set_authorizer(Arc::new(MetricsReadAuthorizer(api.clone())));
        }
        let state = HttpState {
            settings: Arc::new(settings),
            health: health.clone(),
            metrics,
        };
        let router = svc_http::router(plane_routes, state);

        // Startup completes once signing keys are usable: the KMS answered (checked when the
        // key service was built) and the single-tenant issuer's keys are loaded or created.
        if (plane.runs(Plane::Auth) || plane.runs(Plane::Async))
            && let TenantRouting::Single { slug, .. } = &routing
        {
            let fail = |e: String| RuntimeError::Keys(e);
            let mut read = key_store.read().await.map_err(|e| fail(e.to_string()))?;
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
        }
        health.mark_started();

        Ok(Self {
            config,
            plane,
            stores,
            health,
            router,
            tls,
            workers,
            cancel,
            keys,
            authn,
        })
    }

    /// The signing-key service of this process.
    pub fn keys(&self) -> Arc<KeyService> {
        self.keys.clone()
    }

    /// The sign-in engine of this process, shared by every surface that signs people in or
    /// manages them.
    pub fn authn(&self) -> Arc<svc_authn::Authn> {
        self.authn.clone()
    }

    /// The plane this app runs.
    pub fn plane(&self) -> Plane {
        self.plane
    }

    /// Human-readable locations of the opened databases (passwords redacted).
    pub fn database_locations(&self) -> Vec<String> {
        self.stores
            .iter()
            .map(|s| format!("{} = {}", s.label, s.location))
            .collect()
    }

    /// Binds `server.host:server.port` and starts serving in the background.
    pub async fn start(self) -> Result<RunningApp, RuntimeError> {
        let listener = serve::bind(&self.config.server.host, self.config.server.port)?;
        let local_addr = listener.local_addr().map_err(RuntimeError::Serve)?;
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let handle = Handle::new();
        let deadline = Duration::from_secs(u64::from(self.config.server.shutdown_deadline_secs));
        let cancel = self.cancel.clone();
        let Self {
            router,
            tls,
            health,
            workers,
            stores,
            keys,
            authn,
            ..
        } = self;

        let server = tokio::spawn({
            let handle = handle.clone();
            let cancel = cancel.clone();
            async move {
                let serving = serve::serve(listener, router, tls, handle.clone());
                tokio::pin!(serving);
                let result = tokio::select! {
                    result = &mut serving => result,
                    () = cancel.cancelled() => {
                        // Readiness turns 503 first so load balancers stop sending new work
                        // while in-flight requests finish.
                        health.start_draining();
                        serve::drain(&handle, deadline);
                        serving.await
                    }
                };
                workers.join().await;
                // Mail leaves from background tasks; let those in flight finish (bounded).
                if tokio::time::timeout(deadline, authn.mail_settled())
                    .await
                    .is_err()
                {
                    tracing::warn!("mail still being sent at shutdown was abandoned");
                }
                for opened in &stores {
                    opened.store.close().await;
                }
                result
            }
        });
        Ok(RunningApp {
            local_addr,
            scheme,
            cancel,
            server,
            keys,
        })
    }
}

impl RunningApp {
    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The signing-key service of this process.
    pub fn keys(&self) -> Arc<KeyService> {
        self.keys.clone()
    }

    /// The base URL clients on this machine can use.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.local_addr)
    }

    /// Drains and stops the server, the workers and the pools.
    pub async fn shutdown(self) -> Result<(), RuntimeError> {
        self.cancel.cancel();
        self.wait().await
    }

    /// A token that starts the shutdown when cancelled (e.g. from a signal handler).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Waits until the server has stopped.
    pub async fn wait(self) -> Result<(), RuntimeError> {
        match self.server.await {
            Ok(result) => result,
            Err(e) => Err(RuntimeError::Serve(std::io::Error::other(e))),
        }
    }
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

pub(crate) fn keys_alg(config: &Config) -> SigningAlg {
    match config.jwt.default_algorithm {
        svc_config::JwtAlgorithm::Es256 => SigningAlg::Es256,
        svc_config::JwtAlgorithm::EdDsa => SigningAlg::EdDsa,
    }
}

/// The async plane's housekeeping, every ten minutes: forgets expired idempotency keys and
/// client-assertion ids (kept only to refuse replays within their lifetime), dead codes,
/// sessions and tokens, and webhook history older than `retention`.
async fn janitor(
    store: Arc<dyn svc_store::Store>,
    clock: Arc<dyn Clock>,
    retention: time::Duration,
    cancel: CancellationToken,
) {
    let mut ticker = tokio::time::interval(Duration::from_secs(600));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let purge = async {
            let mut tx = store.write().await?;
            let now = clock.now();
            let purged = tx.purge_expired(now).await?
                + tx.purge_expired_grants(now).await?
                + tx.purge_webhook_history(now - retention).await?;
            tx.commit().await.map(|()| purged)
        };
        match purge.await {
            Ok(0) => {}
            Ok(purged) => {
                tracing::info!(
                    purged,
                    "expired idempotency keys, assertion ids, codes, sessions, tokens and webhook history removed"
                )
            }
            Err(e) => tracing::warn!(error = %e, "housekeeping failed; retrying on the next tick"),
        }
    }
}

/// Pings a store periodically and logs when it goes down or comes back, once per transition
/// rather than on every probe. Readiness itself always checks live.
async fn database_watchdog(opened: OpenedStore, interval: Duration, cancel: CancellationToken) {
    let mut reachable = true;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        match opened.store.ping().await {
            Ok(()) if !reachable => {
                reachable = true;
                tracing::info!(database = opened.label, "database reachable again");
            }
            Err(e) if reachable => {
                reachable = false;
                tracing::error!(database = opened.label, error = %crate::stores::explain(&e), "database unreachable");
            }
            _ => {}
        }
    }
}
