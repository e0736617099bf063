//! [`ConnPool`]: this process's [`SqliteConn`]s to the database file, lent one per transaction;
//! [`SqliteLease`]: a lent connection inside a transaction (or in autocommit for one statement);
//! and the checkpoint thread.
//!
//! Two kinds of connection:
//! - **The writer**, one per process, held with this process's turn to write: every write
//!   transaction runs on it. SQLite admits one writer at a time anyway, and queueing here (FIFO,
//!   woken at once) instead of in SQLite's busy handler (which sleeps and retries with back-off)
//!   keeps write latency flat under load. Being the only connection that writes also keeps its
//!   page cache: in WAL mode a connection empties its cache at the start of a transaction
//!   whenever another connection has committed since its last one, which with writes spread
//!   over the pool meant nearly every write transaction read its pages again from the
//!   operating system (measured in `bench/results/2026-11-27-sqlite-one-writer.md`).
//! - **Readers**, up to `max_connections`, opened when none is idle.
//!
//! No connection is closed while the pool lives: an embedded file connection does not go
//! stale, so the server-oriented settings (idle timeout, lifetime, health checks) have nothing
//! to act on. Other processes on the same file still meet SQLite's busy handler.
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
//! Between the two, the thread flushes the database's file system to disk (`syncfs(2)` on
//! Linux) while writers go on. SQLite syncs the database file only at the end of a pass that
//! copied the whole WAL as it stands when the pass ends, which under steady writes the passive
//! pass hardly ever does (frames appended during the copy, or a reader still on an older
//! frame, leave it short, even when its own counts say it copied all it saw: 1,247 of 1,290
//! passes in a bench run). The restart's sync, under the turn, then wrote out all the passive
//! pass had copied, and held every writer 100-380 ms at a time, 93 times in 5 minutes of the
//! bench's write-heavy flows on a VM with a slow disk
//! (`bench/results/2026-11-28-sqlite-stalls-repro.md`). The thread cannot `fsync` the database
//! file itself: closing its own descriptor of that file would drop every POSIX lock SQLite
//! holds on it in this process.
//!
//! `journal_size_limit` truncates a WAL that grew in a burst when it starts again.

use crate::connection::{ConnSettings, SqliteConn};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use svc_store::StoreError;
use svc_store_sql::Lease;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

/// Commits between two checkpoint requests.
const CHECKPOINT_EVERY: u64 = 256;

/// The longest time between two checkpoints while the pool lives.
const CHECKPOINT_PERIOD: Duration = Duration::from_secs(1);

/// How long a checkpoint waits for readers that began before it, holding the write turn.
const READER_WAIT: Duration = Duration::from_millis(50);

/// A checkpoint holding the write turn longer than this is logged as a warning.
const SLOW_TURN: Duration = Duration::from_millis(250);

/// This process's turn to write, holding the writer connection (`None` until first used, or
/// after a connection that could not be cleaned up was closed).
type Writer = Arc<AsyncMutex<Option<SqliteConn>>>;

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
    /// One permit per reader that may be open.
    permits: Arc<Semaphore>,
    /// Readers that may be open.
    max: u32,
    /// The turn to write and its connection.
    writer: Writer,
    /// Connections open now (readers and the writer), idle or lent.
    open: AtomicU32,
    acquire_timeout: Duration,
    closed: AtomicBool,
    commits: AtomicU64,
    /// Wakes the checkpoint thread; the thread ends when this is dropped with the pool.
    checkpoint: SyncSender<()>,
}

impl ConnPool {
    /// A pool of at most `max` readers (at least one) and one writer on `path`, none opened
    /// yet. A loan waits at most `acquire_timeout` for a reader or for the turn to write.
    pub(crate) fn new(
        path: PathBuf,
        settings: ConnSettings,
        max: u32,
        acquire_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let max = max.max(1);
        let writer: Writer = Arc::new(AsyncMutex::new(None));
        let (checkpoint, wake) = sync_channel(1);
        let (thread_path, thread_settings) = (path.clone(), settings.clone());
        let thread_writer = Arc::clone(&writer);
        std::thread::Builder::new()
            .name("svc-sqlite-checkpoint".into())
            .spawn(move || checkpoint_loop(&thread_path, &thread_settings, &wake, &thread_writer))
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                settings,
                idle: Mutex::new(Vec::new()),
                permits: Arc::new(Semaphore::new(max as usize)),
                max,
                writer,
                open: AtomicU32::new(0),
                acquire_timeout,
                closed: AtomicBool::new(false),
                commits: AtomicU64::new(0),
                checkpoint,
            }),
        })
    }

    /// An idle reader, or a new one; waits up to the acquire timeout while all are lent.
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
        Inner::lend(inner, idle, Home::Readers { _permit: permit })
    }

    /// The writer, with this process's turn to write; waits up to the acquire timeout for the
    /// previous write transaction to end.
    pub(crate) async fn write(&self) -> Result<PooledConn, StoreError> {
        let inner = &self.inner;
        let mut turn = tokio::time::timeout(
            inner.acquire_timeout,
            Arc::clone(&inner.writer).lock_owned(),
        )
        .await
        .map_err(|_| {
            StoreError::Unavailable(
                "timed out waiting for this process's previous write transaction".into(),
            )
        })?;
        if inner.closed.load(Ordering::Acquire) {
            return Err(StoreError::Unavailable("the SQLite store is closed".into()));
        }
        // The writer keeps SQLite's default page cache (2,000 KiB): a larger one costs at every
        // commit, which scans the cache's hash table (32 MiB made a rotation ~15 % dearer as it
        // filled, measured with `perf`).
        let conn = turn.take();
        Inner::lend(inner, conn, Home::Writer(turn))
    }

    /// Closes the idle connections (the writer too, unless a write is under way), so the next
    /// ones open with the schema and planner statistics as they are now.
    pub(crate) fn discard_idle(&self) {
        let dropped = std::mem::take(
            &mut *self
                .inner
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.inner.forget(dropped.len());
        if let Ok(mut writer) = self.inner.writer.try_lock()
            && writer.take().is_some()
        {
            self.inner.forget(1);
        }
    }

    /// Closes the idle connections and refuses new loans; lent ones close when returned.
    pub(crate) fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.permits.close();
        self.discard_idle();
    }

    /// Connections open now, idle now, and the most there may be: readers and the writer.
    pub(crate) fn status(&self) -> (u32, u32, u32) {
        let readers = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        let writer = self
            .inner
            .writer
            .try_lock()
            .is_ok_and(|writer| writer.is_some());
        let idle = u32::try_from(readers)
            .unwrap_or(u32::MAX)
            .saturating_add(u32::from(writer));
        (
            self.inner.open.load(Ordering::Relaxed),
            idle,
            self.inner.max.saturating_add(1),
        )
    }
}

impl Inner {
    /// `conn`, or a new connection when there is none, lent until it goes back to `home`.
    fn lend(
        pool: &Arc<Self>,
        conn: Option<SqliteConn>,
        home: Home,
    ) -> Result<PooledConn, StoreError> {
        let conn = match conn {
            Some(conn) => conn,
            None => {
                let conn = SqliteConn::open(&pool.path, &pool.settings)?;
                pool.open.fetch_add(1, Ordering::Relaxed);
                conn
            }
        };
        Ok(PooledConn {
            conn: Some(conn),
            pool: Arc::clone(pool),
            home,
        })
    }

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
    path: &Path,
    settings: &ConnSettings,
    wake: &Receiver<()>,
    writer: &AsyncMutex<Option<SqliteConn>>,
) {
    let flush = Flush::new(path);
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
        if let Some(Err(e)) = conn
            .as_ref()
            .map(|open| checkpoint(open, writer, || flush.run()))
        {
            tracing::warn!(error = %e, "SQLite checkpoint failed; retrying with a new connection");
            conn = None;
        }
    }
}

/// The two passes, with `flush` between them (module docs). The turn is waited for without a
/// timeout: writers hold it for one transaction each, and this is a thread of its own.
fn checkpoint(
    conn: &SqliteConn,
    writer: &AsyncMutex<Option<SqliteConn>>,
    flush: impl FnOnce() -> std::io::Result<()>,
) -> Result<(), StoreError> {
    let passive = conn.checkpoint_passive()?;
    if passive.wal_is_empty() {
        return Ok(());
    }
    if let Err(e) = flush() {
        // The restart's own sync still makes the copy durable, only under the turn.
        tracing::debug!(error = %e, "flushing the SQLite database's file system failed");
    }
    let turn = writer.blocking_lock();
    let taken = Instant::now();
    let restarted = conn.checkpoint_restart();
    drop(turn);
    let held = taken.elapsed();
    if held > SLOW_TURN {
        tracing::warn!(
            held_ms = held.as_millis(),
            "an SQLite checkpoint held this process's writes; is the disk slow?"
        );
    }
    if !restarted?.complete() {
        // A reader outlasted READER_WAIT: the next round tries again.
        tracing::debug!("SQLite checkpoint left frames in the WAL");
    }
    Ok(())
}

/// Flushes the file system holding the database, through a descriptor of its directory: never
/// one of the database file itself (module docs). Does nothing where `syncfs` is missing, or
/// when the directory cannot be opened (the restart's sync then does it all).
#[derive(Debug)]
struct Flush {
    dir: Option<std::fs::File>,
}

impl Flush {
    fn new(database: &Path) -> Self {
        let dir = match database.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        Self {
            dir: std::fs::File::open(dir).ok(),
        }
    }

    fn run(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(dir) = &self.dir {
            rustix::fs::syncfs(dir)?;
        }
        Ok(())
    }
}

/// A connection lent by the pool; back where it came from when dropped, rolled back first if
/// a transaction is still open on it.
#[derive(Debug)]
pub struct PooledConn {
    conn: Option<SqliteConn>,
    pool: Arc<Inner>,
    home: Home,
}

/// Where a lent connection goes back to.
#[derive(Debug)]
enum Home {
    /// The idle readers, holding one of the `max` permits.
    Readers { _permit: OwnedSemaphorePermit },
    /// The writer's place, whose guard is the turn to write: released once the connection is
    /// back in it.
    Writer(OwnedMutexGuard<Option<SqliteConn>>),
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
        if !clean || self.pool.closed.load(Ordering::Acquire) {
            drop(conn);
            self.pool.forget(1);
            return;
        }
        match &mut self.home {
            Home::Readers { .. } => self
                .pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(conn),
            Home::Writer(place) => **place = Some(conn),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> SqliteConn {
        let settings = ConnSettings {
            busy_timeout: READER_WAIT,
            statement_cache_capacity: 8,
        };
        SqliteConn::open(path, &settings).expect("open")
    }

    /// The WAL's last frame, as a checkpoint that copies nothing reports it.
    fn wal_frames(conn: &SqliteConn) -> i64 {
        conn.raw()
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
            .expect("passive checkpoint")
    }

    /// A reader on an older snapshot stops the passive pass short; the flush runs with the turn
    /// free (writers go on during it), and the restart after it starts the WAL again.
    #[test]
    fn a_short_passive_pass_is_flushed_before_the_turn_is_taken() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("flush.db");
        let writer = open(&path);
        writer
            .batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
            .expect("first write");
        let reader = open(&path);
        reader.batch("BEGIN").expect("begin");
        let seen: i64 = reader
            .raw()
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .expect("read");
        assert_eq!(seen, 1);
        for n in 2..50 {
            writer
                .batch(&format!("INSERT INTO t VALUES ({n})"))
                .expect("write");
        }
        let before = wal_frames(&writer);
        let turn = AsyncMutex::new(Some(writer));
        let checkpointer = open(&path);
        let mut turn_free_during_flush = None;
        checkpoint(&checkpointer, &turn, || {
            turn_free_during_flush = Some(turn.try_lock().is_ok());
            // The old reader ends meanwhile, so the restart need not wait for it.
            reader.batch("COMMIT").map_err(std::io::Error::other)
        })
        .expect("checkpoint");
        assert_eq!(
            turn_free_during_flush,
            Some(true),
            "flushed, outside the turn"
        );
        let writer = turn.into_inner().expect("writer");
        writer
            .batch("INSERT INTO t VALUES (50)")
            .expect("write after");
        let after = wal_frames(&writer);
        assert!(
            after < before,
            "the next write started the WAL again ({after} frames, {before} before)"
        );
        let rows: i64 = checkpointer
            .raw()
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .expect("read after");
        assert_eq!(rows, 50, "nothing lost");
    }

    /// A new database, its WAL never written: no second pass, no flush.
    #[test]
    fn an_empty_wal_is_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("empty.db");
        let turn = AsyncMutex::new(Some(open(&path)));
        let mut flushed = false;
        checkpoint(&open(&path), &turn, || {
            flushed = true;
            Ok(())
        })
        .expect("checkpoint");
        assert!(!flushed);
    }

    /// The real flush works where the database lives (a relative path's directory is `.`).
    #[test]
    fn the_flush_runs_on_the_database_directory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let flush = Flush::new(&dir.path().join("svc.db"));
        assert!(flush.dir.is_some());
        flush.run().expect("syncfs");
        assert!(
            Flush::new(Path::new("svc.db")).dir.is_some(),
            "the working directory"
        );
    }
}
