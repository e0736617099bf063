//! The Memcached coordination backend (`deployment.coordination_backend = "memcached"`, issue 21
//! item 1): what instances share besides the database, kept in one Memcached server, over the
//! ASCII protocol.
//!
//! What it carries:
//!
//! - **Throttle counters** ([`SharedCounter`]): Memcached runs no scripts and tells no time, so
//!   the GCRA of the Redis backend cannot run there. Each bucket is counted instead in fixed
//!   windows of `burst / requests_per_second` seconds, one counter per window (`incr`, created
//!   by `add` with the window's lifetime), admitting `burst` requests a window (windows are at
//!   least 100 ms long; a burst smaller than a tenth of the rate admits the rate's share of
//!   100 ms instead).
//!   The sustained rate is the same as GCRA's, but a client may spend a window's budget at its
//!   very end and the next one's at once: up to **2 × burst** in a short span at a window edge,
//!   where GCRA admits `burst`. The window number comes from each instance's clock (the injected
//!   [`Clock`]), so the instances' clocks must agree (NTP): an instance whose clock is off by a
//!   window counts in another window than the rest. While Memcached cannot be reached the
//!   throttle follows `[memcached].throttle_fail_mode`.
//! - **DPoP proof `jti`s** ([`ProofReplay`], RFC 9449 §11.1): `add`, which stores only a key not
//!   yet there, kept until the proof's window ends; "not stored" is a replay. Always fail
//!   closed: a proof is refused (503 `temporarily_unavailable`) rather than risk accepting a
//!   replay. Memcached may evict a record before it expires when its memory is full: give it
//!   room (the records are small and short-lived).
//!
//! What it cannot carry: **cache announcements**. Memcached has no publish/subscribe, so with
//! this backend they stay on the database's own feed (PostgreSQL `LISTEN/NOTIFY`; embedded SQLite
//! serves one process and needs none).
//!
//! Every key starts with `[memcached].key_prefix`; values derived from requests (client ids,
//! addresses, `jti`s) enter keys only hashed (`super::hashed_key`), so a key is under
//! Memcached's 250 bytes and holds no space or control character. Commands (connecting
//! included) time out after `[memcached].command_timeout_ms`; a connection that failed or timed
//! out is dropped and opened again on next use, so the backend recovers without a restart.
//! `svc_coordination_up` (1/0) tells whether the last command succeeded.

use async_memcached::{AsciiProtocol as _, Client, Error, Status};
use async_trait::async_trait;
use prometheus_client::metrics::gauge::Gauge;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use svc_config::{Config, ThrottleFailMode};
use svc_domain::{Clock, TenantId};
use svc_http::throttle::{Outage, SharedCounter};
use svc_oauth::OAuthError;
use svc_oauth::dpop::ProofReplay;
use svc_store::StoreError;
use time::OffsetDateTime;
use tokio::sync::Mutex;

use super::hashed_key;
use crate::RuntimeError;

/// The shortest window: a bucket whose burst refills faster still is counted in windows this
/// long (admitting the rate's share of it), so a busy bucket creates at most ten keys a second.
const MIN_WINDOW_MS: u64 = 100;
/// Past 30 days Memcached reads an expiry as a Unix time; nothing here lives that long.
const MAX_TTL_SECS: u64 = 30 * 86_400 - 1;
/// Kept this much past its window, so instances whose clocks differ slightly still find it.
const WINDOW_SLACK_SECS: u64 = 2;

/// The Memcached backend of one process.
pub(crate) struct MemcachedBackend {
    /// `host:port`, for the logs.
    address: String,
    /// `tcp://host:port`: the client reads a bare `host:port` as a URL with `host` for scheme.
    dsn: String,
    /// Each client carries one command at a time; `None` until connected, and again after a
    /// failure.
    slots: Vec<Mutex<Option<Client>>>,
    next: AtomicUsize,
    prefix: String,
    timeout: Duration,
    clock: Arc<dyn Clock>,
    up: Gauge,
    outage: Outage,
}

impl std::fmt::Debug for MemcachedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemcachedBackend")
            .field("address", &self.address)
            .field("prefix", &self.prefix)
            .field("connections", &self.slots.len())
            .finish_non_exhaustive()
    }
}

/// The Memcached backend `[memcached]` describes. Connections open on first use, so the
/// process starts while Memcached is down.
pub(super) fn open(
    config: &Config,
    clock: Arc<dyn Clock>,
) -> Result<Arc<MemcachedBackend>, RuntimeError> {
    let c = &config.memcached;
    let address = match c.address() {
        Some(Ok(address)) => address,
        Some(Err(why)) => return Err(RuntimeError::Bootstrap(why)),
        None => return Err(RuntimeError::Bootstrap("memcached.url is required".into())),
    };
    tracing::info!(memcached = %address, prefix = %c.key_prefix, "coordinating through Memcached");
    Ok(Arc::new(MemcachedBackend {
        dsn: format!("tcp://{address}"),
        address,
        slots: (0..c.pool_size.max(1)).map(|_| Mutex::new(None)).collect(),
        next: AtomicUsize::new(0),
        prefix: c.key_prefix.clone(),
        timeout: Duration::from_millis(u64::from(c.command_timeout_ms)),
        clock,
        up: Gauge::default(),
        outage: match c.throttle_fail_mode {
            ThrottleFailMode::FailOpen => Outage::CountLocally,
            ThrottleFailMode::FailClosed => Outage::Refuse,
        },
    }))
}

/// One command.
#[derive(Clone, Copy)]
enum Command<'a> {
    /// Store `value` under `key` for `ttl_secs` unless the key is there.
    Add {
        key: &'a str,
        value: &'a str,
        ttl_secs: u64,
    },
    /// Add one to the counter at `key`.
    Incr { key: &'a str },
    /// A round trip.
    Version,
}

/// What a command answered (the protocol's refusals are answers, not failures).
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Stored,
    NotStored,
    NotFound,
    Count(u64),
    Done,
}

async fn execute(client: &mut Client, command: Command<'_>) -> Result<Reply, Error> {
    let answer = match command {
        Command::Add {
            key,
            value,
            ttl_secs,
        } => {
            let ttl = i64::try_from(ttl_secs.clamp(1, MAX_TTL_SECS)).unwrap_or(1);
            client
                .add(key, value, Some(ttl), None)
                .await
                .map(|()| Reply::Stored)
        }
        Command::Incr { key } => client.increment(key, 1).await.map(Reply::Count),
        Command::Version => client.version().await.map(|_| Reply::Done),
    };
    match answer {
        Err(Error::Protocol(Status::NotStored)) => Ok(Reply::NotStored),
        Err(Error::Protocol(Status::NotFound)) => Ok(Reply::NotFound),
        other => other,
    }
}

impl MemcachedBackend {
    /// What the throttle does while Memcached is away.
    pub(super) fn outage(&self) -> Outage {
        self.outage
    }

    /// 1 while the last command succeeded (`svc_coordination_up`).
    pub(super) fn up(&self) -> &Gauge {
        &self.up
    }

    /// Runs `command` on the next connection (opening it when needed) within the command
    /// timeout, recording the outcome in the gauge.
    async fn run(&self, command: Command<'_>) -> Result<Reply, String> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        let attempt = async {
            let mut slot = slot.lock().await;
            let client = match &mut *slot {
                // The client closes itself when an operation is cut short (a timeout).
                Some(client) if !client.is_closed() => client,
                other => other.insert(Client::new(&self.dsn).await?),
            };
            let answer = execute(client, command).await;
            // A broken or desynchronised connection is opened afresh next time; a refusal of
            // the server's own (`SERVER_ERROR`) leaves it usable.
            if matches!(answer, Err(ref e) if !matches!(e, Error::Protocol(_))) {
                *slot = None;
            }
            answer
        };
        let outcome = match tokio::time::timeout(self.timeout, attempt).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => Err(format!("memcached: {}", describe(&e))),
            Err(_) => Err(format!("memcached: no answer within {:?}", self.timeout)),
        };
        self.up.set(i64::from(outcome.is_ok()));
        outcome
    }

    /// A round trip (readiness under fail-closed throttling).
    pub(super) async fn ping(&self) -> Result<(), String> {
        self.run(Command::Version).await.map(|_| ())
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.clock.now().unix_timestamp_nanos() / 1_000_000).unwrap_or(0)
    }
}

/// The kind of failure, without echoing what the server said (it may quote our key).
fn describe(e: &Error) -> &'static str {
    match e {
        Error::Connect(_) => "cannot connect",
        Error::ConnectionClosed | Error::Io(_) => "the connection failed",
        Error::Protocol(_) | Error::ParseError(_) => "unexpected answer",
    }
}

/// How one bucket is counted: windows of `length_ms`, admitting `limit` requests each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Windows {
    length_ms: u64,
    limit: u64,
}

impl Windows {
    /// `burst` at once refilled at `per_second`: `burst` per `burst / per_second` seconds, the
    /// same sustained rate. Below [`MIN_WINDOW_MS`] the window is that long and admits the
    /// rate's share of it (more than `burst`).
    fn new(per_second: u32, burst: u32) -> Self {
        let (per_second, burst) = (u64::from(per_second.max(1)), u64::from(burst.max(1)));
        let length_ms = (burst * 1000).div_ceil(per_second).max(MIN_WINDOW_MS);
        let limit = burst.max(per_second * length_ms / 1000);
        Self { length_ms, limit }
    }

    /// The window `now_ms` falls in, and how long until the next one starts.
    fn at(self, now_ms: u64) -> (u64, Duration) {
        let left = self.length_ms - now_ms % self.length_ms;
        (now_ms / self.length_ms, Duration::from_millis(left))
    }

    /// How long a window's counter is kept: to its end, plus slack for clocks a little apart.
    fn ttl_secs(left: Duration) -> u64 {
        u64::try_from(left.as_millis().div_ceil(1000)).unwrap_or(MAX_TTL_SECS) + WINDOW_SLACK_SECS
    }
}

#[async_trait]
impl SharedCounter for MemcachedBackend {
    async fn take(
        &self,
        key: &str,
        per_second: u32,
        burst: u32,
    ) -> Result<Option<Duration>, String> {
        let windows = Windows::new(per_second, burst);
        let (number, left) = windows.at(self.now_ms());
        // The window's length is part of the key: instances configured differently (during a
        // rolling change) never add to each other's counters.
        let counter = format!(
            "{}:{}:{number}",
            hashed_key(&self.prefix, "throttle", &[key]),
            windows.length_ms
        );
        let incr = Command::Incr { key: &counter };
        // Usually one round trip: the counter is there after the window's first request.
        let count = match self.run(incr).await? {
            Reply::Count(n) => n,
            _ => {
                let add = Command::Add {
                    key: &counter,
                    value: "1",
                    ttl_secs: Windows::ttl_secs(left),
                };
                match self.run(add).await? {
                    Reply::Stored => 1,
                    // Another request created it meanwhile.
                    _ => match self.run(incr).await? {
                        Reply::Count(n) => n,
                        _ => return Err("memcached: the counter vanished (evicted?)".into()),
                    },
                }
            }
        };
        Ok((count > windows.limit).then_some(left.max(Duration::from_millis(1))))
    }
}

#[async_trait]
impl ProofReplay for MemcachedBackend {
    async fn first_use(
        &self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        until: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, OAuthError> {
        let key = hashed_key(&self.prefix, "dpop", &[tenant.as_str(), jkt, jti]);
        // Whole seconds, rounded up, plus one: Memcached's clock ticks in seconds, so a record
        // may go up to a second early; keeping it longer than the window costs nothing.
        let keep_ms = u64::try_from((until - now).whole_milliseconds().max(0)).unwrap_or(0);
        let add = Command::Add {
            key: &key,
            value: "1",
            ttl_secs: keep_ms.div_ceil(1000) + 1,
        };
        match self.run(add).await {
            Ok(Reply::Stored) => Ok(true),
            Ok(Reply::NotStored) => Ok(false),
            Ok(other) => Err(format!("memcached: unexpected answer {other:?} to add")),
            Err(reason) => Err(reason),
        }
        .map_err(|reason| {
            OAuthError::from(StoreError::Unavailable(reason.into()))
                .with_log_detail("DPoP replay record unreachable (fails closed)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_admits_the_burst_at_the_sustained_rate() {
        // 1 per second with a burst of 5: 5 per 5 seconds.
        assert_eq!(
            Windows::new(1, 5),
            Windows {
                length_ms: 5000,
                limit: 5
            }
        );
        // 200 per second with a burst of 400: 400 per 2 seconds.
        assert_eq!(
            Windows::new(200, 400),
            Windows {
                length_ms: 2000,
                limit: 400
            }
        );
        // Uneven: 3 per second, burst 2 → 667 ms windows of 2 (2.998 per second, not more).
        let w = Windows::new(3, 2);
        assert_eq!((w.length_ms, w.limit), (667, 2));
        assert!(w.limit * 1000 <= 3 * w.length_ms);
        // A burst refilled faster than the shortest window: 100 ms windows of the rate's share.
        assert_eq!(
            Windows::new(1000, 10),
            Windows {
                length_ms: 100,
                limit: 100
            }
        );
        // Zeros are read as one (the throttle passes burst ≥ 1; a rate of 0 is refused at load).
        assert_eq!(Windows::new(0, 0), Windows::new(1, 1));
    }

    #[test]
    fn windows_are_numbered_from_the_epoch_and_say_when_the_next_starts() {
        let w = Windows::new(1, 5);
        assert_eq!(w.at(0), (0, Duration::from_millis(5000)));
        assert_eq!(w.at(4_999), (0, Duration::from_millis(1)));
        assert_eq!(w.at(5_000), (1, Duration::from_millis(5000)));
        let now = 1_764_230_400_123;
        let (number, left) = w.at(now);
        assert_eq!(
            number * 5000 + 5000 - u64::try_from(left.as_millis()).unwrap(),
            now
        );
        // The counter outlives its window by the slack, rounded up to whole seconds.
        assert_eq!(
            Windows::ttl_secs(Duration::from_millis(1)),
            1 + WINDOW_SLACK_SECS
        );
        assert_eq!(
            Windows::ttl_secs(Duration::from_millis(5000)),
            5 + WINDOW_SLACK_SECS
        );
        assert_eq!(
            Windows::ttl_secs(Duration::from_millis(5001)),
            6 + WINDOW_SLACK_SECS
        );
    }

    #[test]
    fn counter_keys_stay_within_memcached_limits() {
        let prefix = "p".repeat(64);
        let w = Windows::new(1, u32::MAX);
        let (number, _) = w.at(u64::MAX);
        let key = format!(
            "{}:{}:{number}",
            hashed_key(&prefix, "throttle", &["k"]),
            w.length_ms
        );
        assert!(key.len() <= 250, "{}", key.len());
        assert!(key.bytes().all(|b| b.is_ascii_graphic()), "{key}");
    }
}
