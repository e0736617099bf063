//! Assembly: from a validated configuration to a bound, serving process, and back down.
//!
//! [`App::build`] is the composition root's one procedure, kept short: open the databases,
//! build the shared [`services::Services`] once, then let each plane the process runs add its
//! part: [`auth_plane`] and [`control_plane`] their routes, [`async_plane`] its workers, and
//! [`every_plane`] health, metrics and database watchdogs. Which plane runs what is decided
//! here and nowhere else.

mod async_plane;
mod auth_plane;
mod ciba_mail;
mod control_plane;
mod every_plane;
mod services;

use crate::bootstrap::{ensure_default_tenant, implied_default_tenant};
use crate::shared_caches::Hears;
use crate::stores::{OpenedStore, open_plane_stores, prepare_schema};
use crate::workers::Workers;
use crate::{Plane, RuntimeError, serve};
use axum::Router;
use axum_server::Handle;
use secrecy::SecretString;
use services::Services;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use svc_config::{Config, Loaded};
use svc_domain::{Clock, OsRandom, Rng, SystemClock};
use svc_http::api::MetricsReadAuthorizer;
use svc_http::{Health, HttpSettings, HttpState, Metrics};
use svc_oauth::keys::KeyService;
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
    /// CA certificates (PEM) the client ID metadata document fetcher trusts besides the
    /// platform's (which a deployment extends through `SSL_CERT_FILE`): a seam for tests that
    /// serve documents over TLS on loopback with a throw-away CA, in process. Empty by default.
    pub outbound_roots: Vec<Vec<u8>>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            rng: Arc::new(OsRandom),
            watchdog_interval: Duration::from_secs(5),
            rotation_interval: Duration::from_secs(60),
            key_refresh: Duration::from_secs(30),
            outbound_roots: Vec::new(),
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
        let tls = crate::tls::from_config(&config)?;
        let stores = open_databases(&config, plane, &options).await?;
        let services = Services::build(&config, &stores, &options).await?;

        let metrics = Metrics::new(env!("CARGO_PKG_VERSION"), env!("SVC_BUILD_COMMIT"));
        let cancel = CancellationToken::new();
        let mut workers = Workers::new(cancel.clone());
        // Ephemeral signing keys serve one instance per database (`crate::instance_lease`).
        if config.kms.is_none() && crate::instance_lease::signs(&config, plane) {
            let lease = crate::instance_lease::acquire(
                services.store.clone(),
                options.clock.clone(),
                options.rng.as_ref(),
            )
            .await?;
            workers.spawn("instance-lease", |cancel| lease.keep(cancel));
        }
        // Other instances' changes reach this process's caches (`crate::shared_caches`).
        services.caches.register_metrics(&metrics);
        if let Some(coordination) = &services.coordination {
            coordination.register_metrics(&metrics);
        }
        if let Some(feed) = services.feed.clone() {
            let caches = services.caches.clone();
            let hears = Hears {
                caches: true,
                revocations: services.revocation_feed.is_none(),
            };
            workers.spawn("change-feed", move |cancel| {
                crate::shared_caches::listen(caches, feed, hears, cancel)
            });
        }
        if let Some(feed) = services.revocation_feed.clone() {
            let caches = services.caches.clone();
            let hears = Hears {
                caches: false,
                revocations: true,
            };
            workers.spawn("revocation-feed", move |cancel| {
                crate::shared_caches::listen(caches, feed, hears, cancel)
            });
        }
        if plane.runs(Plane::Async) && config.deployment.background_tasks_enabled {
            let interval = options.rotation_interval;
            async_plane::spawn(&mut workers, &config, &services, &metrics, interval)?;
        }
        let health = every_plane::health(
            &stores,
            &mut workers,
            &services.keys,
            services.coordination.as_ref(),
            &metrics,
            options.watchdog_interval,
        );

        let mut plane_routes = Router::new();
        if plane.runs(Plane::Auth) {
            plane_routes = plane_routes.merge(auth_plane::routes(&config, &services));
        }
        if plane.runs(Plane::Control) {
            plane_routes = plane_routes.merge(control_plane::routes(&config, &services));
            if config.openapi.enabled {
                plane_routes = plane_routes.merge(control_plane::reference(&config));
            }
        }
        if config.server.metrics_bearer_token.is_none() {
            metrics.set_authorizer(Arc::new(MetricsReadAuthorizer(services.api.clone())));
        }
        let state = HttpState {
            settings: Arc::new(http_settings(&config, tls.is_some())),
            health: health.clone(),
            metrics,
        };
        let router = svc_http::router(plane_routes, state);

        // Startup completes once the signing keys the plane uses are loaded (or created).
        if plane.runs(Plane::Auth) || plane.runs(Plane::Async) {
            let store = services.store.as_ref();
            crate::keys::load_single_tenant(&services.keys, store, &services.routing).await?;
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
            keys: services.keys,
            authn: services.authn,
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

    /// The assembled router, exactly as [`App::start`] serves it (the API reference's parity
    /// test reads its paths from its `Debug` output; axum has no route listing).
    #[doc(hidden)]
    pub fn router(&self) -> &Router {
        &self.router
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

/// Opens the stores of `plane`'s database topology, applies or checks migrations, and outside
/// production creates the default tenant a zero-configuration start implies.
async fn open_databases(
    config: &Config,
    plane: Plane,
    options: &BuildOptions,
) -> Result<Vec<OpenedStore>, RuntimeError> {
    let production = config.is_production();
    let stores = open_plane_stores(config, plane).await?;
    prepare_schema(&stores, production).await?;
    let bootstrap = implied_default_tenant(config).filter(|_| !production);
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
    Ok(stores)
}

/// `[server]` in the HTTP layer's terms.
fn http_settings(config: &Config, tls: bool) -> HttpSettings {
    HttpSettings {
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
        tls,
    }
}
