//! [`ConnPool`]: this process's [`SqliteConn`]s to the database file, lent one per transaction;
//! [`SqliteLease`]: a lent connection inside a transaction (or in autocommit for one statement);
//! and the checkpoint thread.
//!
//! A connection is opened when none is idle and fewer than `max_connections` are open, and is
//! never closed while the pool lives: an embedded file connection does not go stale, so the
//! server-oriented settings (idle timeout, lifetime, health checks) have nothing to act on.
//!
//! Checkpoints: the connections do not checkpoint on their own (`wal_autocheckpoint = 0`), as
//! the commit that crosses SQLite's threshold would copy the WAL into the database and `fsync`
//! on the task that committed. A thread of the pool's own checkpoints after every
//! [`CHECKPOINT_EVERY`] commits and at least every [`CHECKPOINT_PERIOD`], in two passes:
//! - `PRAGMA wal_checkpoint(PASSIVE)` while writers go on: it copies most of the WAL and never
//!   waits for, nor blocks, readers and writers;
//! - then `PRAGMA wal_checkpoint(RESTART)` holding this process's turn to write: it copies the
//!   few frames appended meanwhile and waits until the readers that began before have ended,
//!   so the next writer starts the WAL again from its beginning. Under steady writes neither a
//!   pass beside the writers nor one that leaves older readers on the WAL ever lets it start
//!   again: it grew by the whole write rate (1.2 GB in 25 s of refresh rotations, measured),
//!   and with a passive second pass still to about 1 GB between the rare restarts.
//!
//! `journal_size_limit` truncates a WAL that grew in a burst when it starts again.

use crate::connection::{ConnSettings, SqliteConn};
use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use svc_store::StoreError;
use svc_store_sql::Lease;
use tokio::sync::{Mutex as AsyncMutex, OwnedSemaphorePermit, Semaphore};

/// Commits between two checkpoint requests.
const CHECKPOINT_EVERY: u64 = 256;

/// The longest time between two checkpoints while the pool lives.
const CHECKPOINT_PERIOD: Duration = Duration::from_secs(1);

/// How long a checkpoint waits for readers that began before it, holding the write turn.
const READER_WAIT: Duration = Duration::from_millis(50);

/// The connections of one database file.
#[derive(Debug, Clone)]
pub(crate) struct ConnPool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    settings: ConnSettings,
    idle: Mutex<Vec<SqliteConn>>,
    /// One permit per connection that may be open.
    permits: Arc<Semaphore>,
    max: u32,
    /// Connections open now, idle or lent.
    open: AtomicU32,
    acquire_timeout: Duration,
    closed: AtomicBool,
    commits: AtomicU64,
    /// Wakes the checkpoint thread; the thread ends when this is dropped with the pool.
    checkpoint: SyncSender<()>,
}

impl ConnPool {
    /// A pool of at most `max` connections to `path` (at least one), none opened yet; its
    /// checkpoints take `writer`, the process's turn to write, to finish.
    pub(crate) fn new(
        path: PathBuf,
        settings: ConnSettings,
        max: u32,
        acquire_timeout: Duration,
        writer: Arc<AsyncMutex<()>>,
    ) -> Result<Self, StoreError> {
        let max = max.max(1);
        let (checkpoint, wake) = sync_channel(1);
        let (thread_path, thread_settings) = (path.clone(), settings.clone());
        std::thread::Builder::new()
            .name("svc-sqlite-checkpoint".into())
            .spawn(move || checkpoint_loop(&thread_path, &thread_settings, &wake, &writer))
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                settings,
                idle: Mutex::new(Vec::new()),
                permits: Arc::new(Semaphore::new(max as usize)),
                max,
                open: AtomicU32::new(0),
                acquire_timeout,
                closed: AtomicBool::new(false),
                commits: AtomicU64::new(0),
                checkpoint,
            }),
        })
    }

    /// An idle connection, or a new one; waits up to the acquire timeout while all are lent.
    pub(crate) async fn acquire(&self) -> Result<PooledConn, StoreError> {
        let inner = &self.inner;
        let permit = tokio::time::timeout(
            inner.acquire_timeout,
            Arc::clone(&inner.permits).acquire_owned(),
        )
        .await
        .map_err(|_| {
            StoreError::Unavailable(
                format!(
                    "timed out waiting for one of the {} SQLite connections",
                    inner.max
                )
                .into(),
            )
        })?
        .map_err(|_| StoreError::Unavailable("the SQLite store is closed".into()))?;
        let idle = inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = SqliteConn::open(&inner.path, &inner.settings)?;
                inner.open.fetch_add(1, Ordering::Relaxed);
                conn
            }
        };
        Ok(PooledConn {
            conn: Some(conn),
            pool: Arc::clone(inner),
            _permit: permit,
        })
    }

    /// Closes the idle connections, so the next ones open with the schema and planner
    /// statistics as they are now.
    pub(crate) fn discard_idle(&self) {
        let dropped = std::mem::take(
            &mut *self
                .inner
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.inner.forget(dropped.len());
    }

    /// Closes the idle connections and refuses new loans; lent ones close when returned.
    pub(crate) fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.permits.close();
        self.discard_idle();
    }

    /// Connections open now, idle now, and the most there may be.
    pub(crate) fn status(&self) -> (u32, u32, u32) {
        let idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        (
            self.inner.open.load(Ordering::Relaxed),
            u32::try_from(idle).unwrap_or(u32::MAX),
            self.inner.max,
        )
    }
}

impl Inner {
    fn forget(&self, closed: usize) {
        let closed = u32::try_from(closed).unwrap_or(u32::MAX);
        self.open.fetch_sub(closed, Ordering::Relaxed);
    }

    /// Counts a commit, and asks for a checkpoint every [`CHECKPOINT_EVERY`] of them.
    fn committed(&self) {
        if self.commits.fetch_add(1, Ordering::Relaxed) % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1 {
            // Full: a request is pending already, which is as good.
            match self.checkpoint.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
            }
        }
    }
}

/// The checkpoint thread: one connection of its own, a checkpoint per request or period, until
/// the pool is dropped.
fn checkpoint_loop(
    path: &std::path::Path,
    settings: &ConnSettings,
    wake: &Receiver<()>,
    writer: &AsyncMutex<()>,
) {
    let mut conn = None;
    loop {
        match wake.recv_timeout(CHECKPOINT_PERIOD) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if conn.is_none() {
            conn = SqliteConn::open(path, settings)
                .and_then(|open| {
                    // The restart waits for old readers while this process's writers wait for
                    // it: give up soon and try again next round, rather than stall the writers.
                    open.batch(&format!(
                        "PRAGMA busy_timeout = {}",
                        READER_WAIT.as_millis()
                    ))?;
                    Ok(open)
                })
                .ok();
        }
        if let Some(Err(e)) = conn.as_ref().map(|open| checkpoint(open, writer)) {
            tracing::warn!(error = %e, "SQLite checkpoint failed; retrying with a new connection");
            conn = None;
        }
    }
}

/// The two passes (module docs). The turn is waited for without a timeout: writers hold it
/// for one transaction each, and this is a thread of its own.
fn checkpoint(conn: &SqliteConn, writer: &AsyncMutex<()>) -> Result<(), StoreError> {
    if conn.checkpoint_passive()?.wal_is_empty() {
        return Ok(());
    }
    let _turn = writer.blocking_lock();
    let restarted = conn.checkpoint_restart()?;
    if !restarted.complete() {
        // A reader outlasted READER_WAIT: the next round tries again.
        tracing::debug!("SQLite checkpoint left frames in the WAL");
    }
    Ok(())
}

/// A connection lent by the pool; back to the pool when dropped, rolled back first if a
/// transaction is still open on it.
#[derive(Debug)]
pub struct PooledConn {
    conn: Option<SqliteConn>,
    pool: Arc<Inner>,
    _permit: OwnedSemaphorePermit,
}

impl Deref for PooledConn {
    type Target = SqliteConn;
    fn deref(&self) -> &SqliteConn {
        self.conn
            .as_ref()
            .unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut SqliteConn {
        self.conn
            .as_mut()
            .unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl Drop for PooledConn {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        // A transaction left open (a dropped lease, a failed COMMIT) ends here, before anyone
        // else can use the connection; one that cannot be ended closes with the connection.
        let clean =
            conn.is_autocommit() || (conn.batch("ROLLBACK").is_ok() && conn.is_autocommit());
        if clean && !self.pool.closed.load(Ordering::Acquire) {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(conn);
        } else {
            drop(conn);
            self.pool.forget(1);
        }
    }
}

/// What an SQLite [`svc_store_sql::SqlTx`] holds.
#[derive(Debug)]
pub struct SqliteLease {
    conn: PooledConn,
    /// `BEGIN` was run and neither `COMMIT` nor `ROLLBACK` yet.
    open: bool,
}

impl SqliteLease {
    /// Runs `begin` (`BEGIN`, `BEGIN IMMEDIATE`) on `conn`.
    pub(crate) fn begin(conn: PooledConn, begin: &str) -> Result<Self, StoreError> {
        conn.batch(begin)?;
        Ok(Self { conn, open: true })
    }

    /// `conn` in autocommit: each statement commits itself.
    pub(crate) fn autocommit(conn: PooledConn) -> Self {
        Self { conn, open: false }
    }
}

impl Lease for SqliteLease {
    type Conn = SqliteConn;

    fn conn(&mut self) -> &mut SqliteConn {
        &mut self.conn
    }

    async fn commit(mut self) -> Result<(), StoreError> {
        if self.open {
            self.conn.batch("COMMIT")?;
            self.open = false;
        }
        self.conn.pool.committed();
        Ok(())
    }

    async fn finish(mut self) -> Result<(), StoreError> {
        if self.open {
            self.conn.batch("ROLLBACK")?;
            self.open = false;
        }
        Ok(())
    }
}
