//! [`SqliteStore`]: opening the database file with the pool settings, and the [`Store`] port.

use crate::connection::ConnSettings;
use crate::dialect::SqliteDialect;
use crate::error::{config_error, map_err, map_migrate_err};
use crate::migrations::MIGRATOR;
use crate::pool::{ConnPool, SqliteLease};
use async_trait::async_trait;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::str::FromStr;
use svc_store::{
    Backend, MigrationStatus, PoolSettings, PoolStatus, ReadTx, Store, StoreError, WriteTx,
};
use svc_store_sql::SqlTx;

/// The SQLite store: a connection pool on one database file in WAL mode.
#[derive(Debug)]
pub struct SqliteStore {
    /// The connections every transaction runs on (`crate::pool`).
    conns: ConnPool,
    /// sqlx's pool on the same file, for the migrations (sqlx's migrator) and diagnostics.
    pool: SqlitePool,
    /// Keeps a test database's temporary directory alive exactly as long as the store.
    #[cfg(feature = "test-support")]
    pub(crate) temp_dir: Option<tempfile::TempDir>,
}

impl SqliteStore {
    /// Opens (creating the parent directory and the file if missing) the database at `path`.
    ///
    /// The journal is WAL with `synchronous=NORMAL`, foreign keys are enforced, and a connection
    /// waiting for the write lock waits up to `settings.connect_timeout` (`busy_timeout`), as
    /// long as a transaction waits for a free connection. Of the pool settings,
    /// `max_connections` and `statement_cache_capacity` apply too; the others are about server
    /// connections and are ignored (`crate::pool`): the PostgreSQL-only ones
    /// (`statement_timeout`, `idle_in_transaction_timeout`, `require_ssl`), and those that
    /// close or test idle connections (a file-backed connection does not go stale).
    /// One connection is opened before returning, so a path that cannot be used fails here.
    pub async fn open(path: &Path, settings: &PoolSettings) -> Result<Self, StoreError> {
        Self::open_with(SqliteConnectOptions::new().filename(path), settings).await
    }

    /// Opens the database named by a `sqlite://path` or `sqlite:path` URL, always with
    /// `mode=rwc` semantics (read-write, created if missing). In-memory and read-only URLs are
    /// refused: every pooled connection to `:memory:` would be its own empty database, and the
    /// service must be able to write.
    pub async fn open_url(url: &str, settings: &PoolSettings) -> Result<Self, StoreError> {
        let Some(rest) = url.strip_prefix("sqlite:") else {
            return Err(config_error(
                "invalid SQLite URL: expected `sqlite://PATH` or `sqlite:PATH`",
            ));
        };
        let (database, query) = rest.split_once('?').unwrap_or((rest, ""));
        if database.trim_start_matches("//").is_empty() {
            return Err(config_error("invalid SQLite URL: no database path"));
        }
        if database.contains(":memory:") {
            return Err(config_error(
                "invalid SQLite URL: in-memory databases are not supported; name a file",
            ));
        }
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            if key == "mode" && (value == "ro" || value == "memory") {
                return Err(config_error(format!(
                    "invalid SQLite URL: mode={value} is not supported; the store must be writable"
                )));
            }
        }
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| config_error(format!("invalid SQLite URL: {e}")))?;
        Self::open_with(options, settings).await
    }

    async fn open_with(
        options: SqliteConnectOptions,
        settings: &PoolSettings,
    ) -> Result<Self, StoreError> {
        if let Some(parent) = options
            .get_filename()
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|e| {
                config_error(format!(
                    "cannot create the database directory {}: {e}",
                    parent.display()
                ))
            })?;
        }
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // NORMAL is durable against application crashes in WAL mode and skips an fsync per
            // commit; only a power loss can drop the last transactions.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(settings.connect_timeout)
            .statement_cache_capacity(settings.statement_cache_capacity);
        let path = options.get_filename().to_path_buf();
        let pool = pool_options(settings)
            .connect_with(options)
            .await
            .map_err(map_err)?;
        let conns = ConnPool::new(
            path,
            ConnSettings {
                busy_timeout: settings.connect_timeout,
                statement_cache_capacity: settings.statement_cache_capacity,
            },
            settings.max_connections,
            settings.connect_timeout,
        )?;
        // Fails here, not on the first request, when the file cannot be used.
        drop(conns.acquire().await?);
        Ok(Self {
            conns,
            pool,
            #[cfg(feature = "test-support")]
            temp_dir: None,
        })
    }

    /// sqlx's pool on the database file, for diagnostics and this crate's tests; engines use
    /// [`Store`].
    #[doc(hidden)]
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// One of the connections transactions run on, for diagnostics and this crate's tests;
    /// engines use [`Store`].
    #[doc(hidden)]
    pub async fn connection(&self) -> Result<crate::PooledConn, StoreError> {
        self.conns.acquire().await
    }

    /// The writer connection, holding this process's turn to write, for this crate's tests;
    /// engines use [`Store`].
    #[doc(hidden)]
    pub async fn write_connection(&self) -> Result<crate::PooledConn, StoreError> {
        self.conns.write().await
    }
}

fn pool_options(settings: &PoolSettings) -> SqlitePoolOptions {
    // sqlx panics on a zero-sized pool or min > max; configuration validation should prevent
    // both, but a store must not bring the process down over them.
    let max = settings.max_connections.max(1);
    SqlitePoolOptions::new()
        .max_connections(max)
        .min_connections(settings.min_connections.min(max))
        .acquire_timeout(settings.connect_timeout)
        .idle_timeout(settings.idle_timeout)
        .max_lifetime(settings.max_lifetime)
        // An embedded file cannot drop a connection the way a server can: a ping before every
        // acquire would only add a round trip to the connection's thread.
        .test_before_acquire(false)
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conns.acquire().await?;
        conn.fetch_optional(svc_store_sql::Stmt::new("SELECT 1"))?;
        Ok(())
    }

    fn pool_status(&self) -> PoolStatus {
        let (size, idle, max) = self.conns.status();
        PoolStatus { size, idle, max }
    }

    async fn migration_status(&self) -> Result<MigrationStatus, StoreError> {
        let mut conn = self.conns.acquire().await?;
        svc_store_sql::migration_status::<SqliteDialect>(&mut conn, &MIGRATOR).await
    }

    /// Applies the pending migrations, then gives every index SQLite has never analysed its
    /// planner statistics (`planner`). Idle connections are closed, so every connection plans
    /// with them.
    async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATOR.run(&self.pool).await.map_err(map_migrate_err)?;
        crate::planner::seed(&self.pool).await?;
        self.conns.discard_idle();
        Ok(())
    }

    async fn read(&self) -> Result<Box<dyn ReadTx>, StoreError> {
        // A deferred BEGIN: in WAL mode the first read takes a snapshot and never blocks writers.
        let lease = SqliteLease::begin(self.conns.acquire().await?, "BEGIN")?;
        Ok(Box::new(SqlTx::<SqliteDialect>::new(lease)))
    }

    async fn read_once(&self) -> Result<Box<dyn ReadTx>, StoreError> {
        let lease = SqliteLease::autocommit(self.conns.acquire().await?);
        Ok(Box::new(SqlTx::<SqliteDialect>::new(lease)))
    }

    /// On the writer, under this process's turn (`crate::pool`).
    async fn write(&self) -> Result<Box<dyn WriteTx>, StoreError> {
        // IMMEDIATE takes the single write lock now, waiting up to busy_timeout for another
        // process's, so the transaction never has to upgrade later (which fails with
        // SQLITE_BUSY, no waiting).
        let lease = SqliteLease::begin(self.conns.write().await?, "BEGIN IMMEDIATE")?;
        Ok(Box::new(SqlTx::<SqliteDialect>::new(lease)))
    }

    /// Autocommit on the writer: the statement takes SQLite's write lock itself (waiting up to
    /// `busy_timeout` for another process), and a lone statement never has a lock to upgrade.
    async fn write_once(&self) -> Result<Box<dyn WriteTx>, StoreError> {
        let lease = SqliteLease::autocommit(self.conns.write().await?);
        Ok(Box::new(SqlTx::<SqliteDialect>::new(lease)))
    }

    async fn close(&self) {
        self.conns.close();
        self.pool.close().await;
    }
}
