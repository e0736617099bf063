//! [`TestApp`]: the whole service in-process on port 0 with its own database.

use std::time::Duration;
use svc_runtime::{App, BuildOptions, RunningApp};
use svc_store_postgres::testing::{TestDbGuard, migrated_database};

/// Which database a test app runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded default, a temporary file.
    Sqlite,
    /// A fresh PostgreSQL database on the test server, dropped afterwards.
    Postgres,
}

/// A running service for one test.
pub struct TestApp {
    /// Base URL, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    /// A client without redirects or cookies.
    pub client: reqwest::Client,
    running: Option<RunningApp>,
    /// The fresh PostgreSQL database URL, when on PostgreSQL.
    pub database_url: Option<String>,
    _cwd: tempfile::TempDir,
    db: Option<TestDbGuard>,
}

impl TestApp {
    /// A zero-configuration app (development mode) on `backend`.
    pub async fn spawn(backend: Backend) -> Self {
        Self::spawn_with(backend, &[]).await
    }

    /// An app on `backend` with extra environment variables, exactly as a user would set them.
    pub async fn spawn_with(backend: Backend, env: &[(&str, &str)]) -> Self {
        Self::try_spawn_with(backend, env)
            .await
            .unwrap_or_else(|e| panic!("test app failed to start: {e}"))
    }

    /// The build options of every test app: the defaults, with a database watchdog that pings
    /// every 200 ms so outages are noticed quickly. Tests change what they need from here.
    pub fn options() -> BuildOptions {
        BuildOptions {
            watchdog_interval: Duration::from_millis(200),
            ..BuildOptions::default()
        }
    }

    /// Like [`TestApp::spawn_with`], returning the startup error instead of panicking.
    pub async fn try_spawn_with(backend: Backend, env: &[(&str, &str)]) -> Result<Self, String> {
        Self::try_spawn_with_options(backend, env, Self::options()).await
    }

    /// Like [`TestApp::try_spawn_with`] with explicit seams (clock, worker intervals).
    pub async fn try_spawn_with_options(
        backend: Backend,
        env: &[(&str, &str)],
        options: BuildOptions,
    ) -> Result<Self, String> {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let cwd = tempfile::tempdir().expect("tempdir");
        // A DATABASE_URL among the test's own variables (a shared database) wins.
        let explicit = env
            .iter()
            .find(|(k, _)| *k == "DATABASE_URL")
            .map(|(_, v)| (*v).to_owned());
        let (database_url, db) = match backend {
            _ if explicit.is_some() => (explicit, None),
            Backend::Sqlite => (None, None),
            Backend::Postgres => {
                let (url, guard) = migrated_database()
                    .await
                    .expect("migrated PostgreSQL database");
                (Some(url), Some(guard))
            }
        };
        let mut vars: Vec<(String, String)> = vec![("SVC_SERVER__PORT".into(), "0".into())];
        if let Some(url) = &database_url {
            vars.push(("DATABASE_URL".into(), url.clone()));
        }
        vars.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let sources = svc_config::Sources {
            explicit_file: None,
            cwd: cwd.path().to_path_buf(),
            env: vars,
        };
        let loaded = svc_config::load(&sources).map_err(|e| e.to_string())?;
        let app = App::build(&loaded, options)
            .await
            .map_err(|e| e.to_string())?;
        let running = app.start().await.map_err(|e| e.to_string())?;
        let url = running.url();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Ok(Self {
            url,
            client,
            running: Some(running),
            database_url,
            _cwd: cwd,
            db,
        })
    }

    /// The service's signing keys (to sign test tokens the way later grants will).
    pub fn keys(&self) -> std::sync::Arc<svc_oauth::keys::KeyService> {
        self.running.as_ref().expect("running").keys()
    }

    /// The embedded SQLite file of a SQLite app.
    pub fn sqlite_path(&self) -> std::path::PathBuf {
        self._cwd.path().join("data/svc.db")
    }

    /// A store on the app's database, for tests that arrange or inspect records directly.
    pub async fn store(&self) -> std::sync::Arc<dyn svc_store::Store> {
        let settings = svc_store::PoolSettings {
            max_connections: 2,
            ..Default::default()
        };
        match &self.database_url {
            Some(url) => std::sync::Arc::new(
                svc_store_postgres::PgStore::connect(url, &settings)
                    .await
                    .expect("pg store"),
            ),
            None => std::sync::Arc::new(
                svc_store_sqlite::SqliteStore::open(
                    &self._cwd.path().join("data/svc.db"),
                    &settings,
                )
                .await
                .expect("sqlite store"),
            ),
        }
    }

    /// The tenant with `slug` (panics when absent).
    pub async fn tenant(&self, slug: &str) -> svc_domain::Tenant {
        let store = self.store().await;
        let mut read = store.read().await.expect("read");
        let slug = svc_domain::TenantSlug::parse(slug).expect("slug");
        let tenant = read
            .tenant_by_slug(&slug)
            .await
            .expect("lookup")
            .expect("tenant exists");
        drop(read);
        store.close().await;
        tenant
    }

    /// Inserts a tenant directly (until the control plane creates them over HTTP).
    pub async fn insert_tenant(
        &self,
        slug: &str,
        status: svc_domain::TenantStatus,
    ) -> svc_domain::Tenant {
        use svc_domain::{Clock, OsRandom, SystemClock};
        let now = SystemClock.now();
        let tenant = svc_domain::Tenant {
            id: svc_domain::TenantId::generate(&SystemClock, &OsRandom),
            slug: svc_domain::TenantSlug::parse(slug).expect("slug"),
            display_name: slug.to_owned(),
            status,
            signup_enabled: false,
            mfa_policy: svc_domain::MfaPolicy::Default,
            pairwise_secret: svc_domain::PairwiseSecret::generate(&OsRandom),
            created_at: now,
            updated_at: now,
        };
        let store = self.store().await;
        let mut tx = store.write().await.expect("write");
        tx.insert_tenant(&tenant).await.expect("insert tenant");
        tx.commit().await.expect("commit");
        store.close().await;
        tenant
    }

    /// `GET {url}{path}`.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .expect("request")
    }

    /// The text of `GET /metrics` with the scrape token `bearer`
    /// (`server.metrics_bearer_token`); panics unless it is served (200).
    pub async fn metrics(&self, bearer: &str) -> String {
        let response = self
            .request(reqwest::Method::GET, "/metrics")
            .bearer_auth(bearer)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 200, "/metrics with the scrape token");
        response.text().await.expect("metrics text")
    }

    /// A request builder for `{url}{path}`.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{path}", self.url))
    }

    /// Drains and stops the app, then drops its database.
    pub async fn shutdown(mut self) {
        if let Some(running) = self.running.take() {
            running.shutdown().await.expect("clean shutdown");
        }
        if let Some(db) = self.db.take() {
            db.drop_database().await.expect("drop test database");
        }
    }
}
