//! [`PgStore`]: a lazy connection pool on a PostgreSQL database, and the [`Store`] port.

use crate::dialect::{PgDialect, PgLease};
use crate::error::{map_err, map_migrate_err};
use crate::feed::PgFeed;
use crate::migrations::MIGRATOR;
use crate::options::{connect_options, pool_options};
use async_trait::async_trait;
use sqlx::PgPool;
use std::sync::Arc;
use svc_store::{
    Backend, ChangeFeed, MigrationStatus, PoolSettings, PoolStatus, ReadTx, RevocationSet, Store,
    StoreError, WriteTx,
};
use svc_store_sql::SqlTx;

/// The PostgreSQL store: a connection pool whose connections are opened on demand.
#[derive(Debug)]
pub struct PgStore {
    pool: PgPool,
    /// `LISTEN/NOTIFY` between the processes on this database.
    feed: Arc<PgFeed>,
    /// The revoked access tokens in memory, kept current through `feed` by the runtime.
    revocations: Arc<RevocationSet>,
    /// A test database to drop when the store is closed or dropped.
    #[cfg(feature = "test-support")]
    pub(crate) test_db: std::sync::Mutex<Option<crate::testing::TestDbGuard>>,
}

impl PgStore {
    /// Prepares a pool for `url` with `settings` without connecting, so the service can start
    /// while PostgreSQL is down (readiness reports it) and recovers when it comes back.
    ///
    /// Every key of `settings` takes effect: pool size, acquire timeout (`connect_timeout`),
    /// idle timeout, lifetime, statement cache, `test_before_acquire`, and `statement_timeout`
    /// and `idle_in_transaction_session_timeout` as startup parameters of every connection
    /// (`None` sends `0`, no cap). With `require_ssl`, a URL without `sslmode` gets
    /// `sslmode=require` and one saying `disable`, `allow` or `prefer` is refused. Errors here
    /// are configuration errors (reported as [`StoreError::Unavailable`] with the reason as the
    /// source) and never contain the URL's password.
    pub async fn connect(url: &str, settings: &PoolSettings) -> Result<Self, StoreError> {
        let options = connect_options(url, settings)?;
        Ok(Self::from_pool(
            pool_options(settings).connect_lazy_with(options),
        ))
    }

    /// The same store, its change feed listening on a connection to `listen_url` instead of
    /// the pool's URL: the `LISTEN` needs a session of its own, which a pooler in transaction
    /// mode (PgBouncer) does not give, so a deployment behind one points this at PostgreSQL
    /// itself or at a session-mode pool. Publishing stays on the pool. The URL is checked like
    /// the pool's (`require_ssl`, redacted errors); `settings` are the pool's.
    pub fn listening_on(
        self,
        listen_url: &str,
        settings: &PoolSettings,
    ) -> Result<Self, StoreError> {
        let options = connect_options(listen_url, settings)?;
        Ok(Self {
            feed: Arc::new(PgFeed::with_listener(self.pool.clone(), options)),
            ..self
        })
    }

    pub(crate) fn from_pool(pool: PgPool) -> Self {
        Self {
            feed: Arc::new(PgFeed::new(pool.clone())),
            revocations: RevocationSet::new(),
            pool,
            #[cfg(feature = "test-support")]
            test_db: std::sync::Mutex::new(None),
        }
    }

    /// The underlying pool, for diagnostics and this crate's tests; engines use [`Store`].
    #[doc(hidden)]
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The current value of a server setting as a pooled connection sees it (`SHOW name`), to
    /// check what the pool's connections run with. `name` must be a plain setting name.
    pub async fn show_setting(&self, name: &str) -> Result<String, StoreError> {
        // current_setting takes the name as a bound value, so no SQL is built from input.
        sqlx::query_scalar("SELECT current_setting($1)")
            .bind(name)
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)
    }
}

#[async_trait]
impl Store for PgStore {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn change_feed(&self) -> Option<Arc<dyn ChangeFeed>> {
        Some(self.feed.clone())
    }

    fn revocation_set(&self) -> Option<Arc<RevocationSet>> {
        Some(self.revocations.clone())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    fn pool_status(&self) -> PoolStatus {
        PoolStatus {
            size: self.pool.size(),
            idle: u32::try_from(self.pool.num_idle()).unwrap_or(u32::MAX),
            max: self.pool.options().get_max_connections(),
        }
    }

    async fn migration_status(&self) -> Result<MigrationStatus, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(map_err)?;
        svc_store_sql::migration_status::<PgDialect>(&mut conn, &MIGRATOR).await
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await.map_err(map_err)?;
        // A migration may build an index for minutes, or wait on another replica's advisory
        // lock; the pool's statement_timeout is for requests, not for this connection.
        let result = async {
            sqlx::query("SET statement_timeout = 0")
                .execute(&mut *conn)
                .await
                .map_err(map_err)?;
            // `run_direct` is what `run` calls; taking the connection directly avoids the
            // "Acquire is not general enough" error of `run(&mut *conn)` in a Send future.
            MIGRATOR
                .run_direct(None, &mut *conn, false)
                .await
                .map_err(map_migrate_err)?;
            // Back to the startup parameter's value before the connection rejoins the pool.
            sqlx::query("RESET statement_timeout")
                .execute(&mut *conn)
                .await
                .map_err(map_err)
        }
        .await;
        if result.is_err() {
            // The connection may still hold the migrator's session-level advisory lock (which
            // would block every other replica) or lack its statement_timeout: never reuse it.
            conn.close_on_drop();
        }
        result.map(|_| ())
    }

    async fn read(&self) -> Result<Box<dyn ReadTx>, StoreError> {
        // Enforced by the server: a read transaction cannot write even by mistake.
        let tx = begin_detached(&self.pool, "BEGIN TRANSACTION READ ONLY").await?;
        Ok(Box::new(SqlTx::<PgDialect>::new(PgLease::Tx(tx))))
    }

    async fn read_once(&self) -> Result<Box<dyn ReadTx>, StoreError> {
        let conn = self.pool.acquire().await.map_err(map_err)?;
        Ok(Box::new(SqlTx::<PgDialect>::new(PgLease::Plain(conn))))
    }

    async fn write(&self) -> Result<Box<dyn WriteTx>, StoreError> {
        let tx = begin_detached(&self.pool, "BEGIN").await?;
        Ok(Box::new(
            SqlTx::<PgDialect>::new(PgLease::Tx(tx)).revoking_into(self.revocations.clone()),
        ))
    }

    async fn write_once(&self) -> Result<Box<dyn WriteTx>, StoreError> {
        let conn = self.pool.acquire().await.map_err(map_err)?;
        Ok(Box::new(
            SqlTx::<PgDialect>::new(PgLease::Plain(conn)).revoking_into(self.revocations.clone()),
        ))
    }

    async fn close(&self) {
        self.pool.close().await;
        #[cfg(feature = "test-support")]
        {
            let guard = self
                .test_db
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            if let Some(guard) = guard {
                // Best effort: failing to drop a test database must not fail the test closing it.
                let _ = guard.drop_database().await;
            }
        }
    }
}

/// Opens a transaction on a task of its own, so a caller that goes away mid-`BEGIN` (a client
/// that disconnects, a timeout) cannot cancel it halfway. sqlx 0.9.0's `begin` is not
/// cancel-safe on PostgreSQL: dropped between sending `BEGIN` and reading its answer, it returns
/// the connection to the pool inside a transaction nobody rolls back, and the next borrower's
/// statements run in it (a read-only one refuses every write) — transact-rs/sqlx#4393, fixed
/// upstream after 0.9.0. Completed here, a transaction whose caller is gone is simply dropped,
/// which rolls it back.
async fn begin_detached(
    pool: &sqlx::PgPool,
    statement: &'static str,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
    let pool = pool.clone();
    let task = tokio::spawn(async move { pool.begin_with(statement).await });
    match task.await {
        Ok(begun) => begun.map_err(map_err),
        Err(e) => Err(StoreError::Unavailable(Box::new(e))),
    }
}
