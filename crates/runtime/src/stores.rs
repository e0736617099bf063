//! Opening the stores a plane needs (per `deployment.database_topology`), running or checking
//! migrations, and exposing each store to health and metrics.

use crate::{Plane, RuntimeError};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use svc_config::{Config, DatabaseTarget, DatabaseTopology, DatabaseUrl};
use svc_http::{PoolStats, PoolStatsSource, ReadinessCheck};
use svc_store::{PoolSettings, Store, StoreError};
use svc_store_postgres::PgStore;
use svc_store_sqlite::SqliteStore;

/// A store opened for this process, with the label it carries in logs, health and metrics.
#[derive(Clone)]
pub(crate) struct OpenedStore {
    /// `main` with a shared database, else the plane name (`auth`, `control`, `async`).
    pub(crate) label: &'static str,
    /// Where it points, with any password redacted.
    pub(crate) location: String,
    /// The store itself.
    pub(crate) store: Arc<dyn Store>,
}

/// Pool settings from `[database]`, with the plane's `max`/`min` connection counts.
fn pool_settings(config: &Config, sizing: (u32, u32), statement_timeout_secs: u32) -> PoolSettings {
    let db = &config.database;
    let secs = |s: u32| (s > 0).then(|| Duration::from_secs(u64::from(s)));
    PoolSettings {
        max_connections: sizing.0,
        min_connections: sizing.1,
        connect_timeout: Duration::from_secs(u64::from(db.connect_timeout_secs.max(1))),
        idle_timeout: secs(db.idle_timeout_secs),
        max_lifetime: secs(db.max_lifetime_secs),
        statement_cache_capacity: db.statement_cache_capacity as usize,
        test_before_acquire: db.test_before_acquire,
        statement_timeout: secs(statement_timeout_secs),
        idle_in_transaction_timeout: secs(db.idle_in_transaction_timeout_secs),
        require_ssl: db.require_ssl,
    }
}

/// Human-readable, password-free location of a target.
pub(crate) fn describe(target: &DatabaseTarget) -> String {
    match target {
        DatabaseTarget::Url(url) => url.redacted(),
        DatabaseTarget::EmbeddedSqlite(path) => format!("embedded SQLite at {}", path.display()),
    }
}

/// Opens the store for one target. PostgreSQL pools connect lazily, so a database that is down
/// right now surfaces as a failing ping (readiness 503), not as a failed open.
pub async fn open_store(
    target: &DatabaseTarget,
    settings: &PoolSettings,
) -> Result<Arc<dyn Store>, RuntimeError> {
    open_store_listening(target, settings, None).await
}

/// [`open_store`], a PostgreSQL store's change feed listening on `listen` when set
/// (`database.listen_url`; validation refuses it with SQLite).
async fn open_store_listening(
    target: &DatabaseTarget,
    settings: &PoolSettings,
    listen: Option<&DatabaseUrl>,
) -> Result<Arc<dyn Store>, RuntimeError> {
    let fail = |e: StoreError| RuntimeError::Database {
        what: describe(target),
        detail: explain(&e),
    };
    let store: Arc<dyn Store> = match target {
        DatabaseTarget::EmbeddedSqlite(path) => {
            Arc::new(SqliteStore::open(path, settings).await.map_err(fail)?)
        }
        DatabaseTarget::Url(url) if url.is_sqlite() => Arc::new(
            SqliteStore::open_url(url.as_str(), settings)
                .await
                .map_err(fail)?,
        ),
        DatabaseTarget::Url(url) => {
            let store = PgStore::connect(url.as_str(), settings)
                .await
                .map_err(fail)?;
            match listen {
                Some(listen) => {
                    Arc::new(store.listening_on(listen.as_str(), settings).map_err(|e| {
                        RuntimeError::Database {
                            what: listen.redacted(),
                            detail: explain(&e),
                        }
                    })?)
                }
                None => Arc::new(store),
            }
        }
    };
    Ok(store)
}

/// One line on what a store error means for an operator.
pub(crate) fn explain(e: &StoreError) -> String {
    match e {
        StoreError::Unavailable(source) => format!(
            "cannot reach the database: {source} (is it running, and do the URL, credentials and TLS settings match?)"
        ),
        other => other.to_string(),
    }
}

/// Opens every store `plane` needs: one shared store, or one per member plane with
/// `database_topology = split_by_plane`, each sized by its `[database.*_pool]`.
pub(crate) async fn open_plane_stores(
    config: &Config,
    plane: Plane,
) -> Result<Vec<OpenedStore>, RuntimeError> {
    let statement_timeout = config.database.statement_timeout_secs;
    let listen = config.database.listen_url.as_ref();
    let mut opened = Vec::new();
    match config.deployment.database_topology {
        DatabaseTopology::Shared => {
            let target = config.database_url_for(plane.to_config());
            let settings = pool_settings(
                config,
                config.pool_sizing_for(plane.to_config()),
                statement_timeout,
            );
            let store = open_store_listening(&target, &settings, listen).await?;
            opened.push(OpenedStore {
                label: "main",
                location: describe(&target),
                store,
            });
        }
        DatabaseTopology::SplitByPlane => {
            for member in plane.members() {
                let target = config.database_url_for(member.to_config());
                let settings = pool_settings(
                    config,
                    config.pool_sizing_for(member.to_config()),
                    statement_timeout,
                );
                let store = open_store_listening(&target, &settings, listen).await?;
                opened.push(OpenedStore {
                    label: member.as_str(),
                    location: describe(&target),
                    store,
                });
            }
        }
    }
    Ok(opened)
}

/// Applies migrations (development) or refuses a schema that is behind (production).
pub(crate) async fn prepare_schema(
    stores: &[OpenedStore],
    production: bool,
) -> Result<(), RuntimeError> {
    for opened in stores {
        let fail = |e: StoreError| RuntimeError::Database {
            what: opened.location.clone(),
            detail: explain(&e),
        };
        if production {
            let status = opened.store.migration_status().await.map_err(fail)?;
            if !status.is_current() {
                return Err(RuntimeError::MigrationsBehind {
                    what: opened.location.clone(),
                    pending: status.pending.len(),
                });
            }
            if !status.unknown_applied.is_empty() {
                tracing::warn!(
                    database = %opened.label,
                    versions = ?status.unknown_applied,
                    "the database has migrations this binary does not know (a newer version migrated it); \
                     serving, since migrations are expand/contract"
                );
            }
        } else {
            opened.store.migrate().await.map_err(fail)?;
        }
    }
    Ok(())
}

/// `svc-runtime --migrate-only`: migrates `database.migration_url`, or every runtime database
/// when it is unset, then returns. Uses `maintenance_statement_timeout_secs` (0 = none) because
/// a migration may legitimately run longer than any request.
pub async fn migrate_only(config: &Config) -> Result<Vec<String>, RuntimeError> {
    let mut done = Vec::new();
    let settings = pool_settings(
        config,
        (2, 0),
        config.database.maintenance_statement_timeout_secs,
    );
    for target in config.migration_targets() {
        let what = describe(&target);
        let store = open_store(&target, &settings).await?;
        let result = store.migrate().await;
        store.close().await;
        result.map_err(|e| RuntimeError::Database {
            what: what.clone(),
            detail: explain(&e),
        })?;
        done.push(what);
    }
    Ok(done)
}

/// Readiness: the database answers a round trip.
pub(crate) struct StoreReadiness(pub(crate) OpenedStore, pub(crate) String);

impl StoreReadiness {
    pub(crate) fn new(opened: OpenedStore) -> Self {
        let name = format!("database:{}", opened.label);
        Self(opened, name)
    }
}

#[async_trait]
impl ReadinessCheck for StoreReadiness {
    fn name(&self) -> &str {
        &self.1
    }

    async fn check(&self) -> Result<(), String> {
        self.0.store.ping().await.map_err(|e| explain(&e))
    }
}

/// Metrics: pool occupancy sampled at scrape time.
pub(crate) struct StorePoolStats(pub(crate) Arc<dyn Store>);

impl PoolStatsSource for StorePoolStats {
    fn pool_stats(&self) -> PoolStats {
        let status = self.0.pool_status();
        PoolStats {
            size: status.size,
            idle: status.idle,
            max: status.max,
        }
    }
}
