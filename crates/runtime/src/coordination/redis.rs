//! The Redis coordination backend (`deployment.coordination_backend = "redis"`, issue 21 item 1):
//! what instances share besides the database, kept in Redis.
//!
//! - **Throttle counters** ([`SharedCounter`]): one GCRA bucket per key for every instance, run
//!   as one Lua script on Redis's own clock (instances' clocks never disagree about it). While
//!   Redis cannot be reached the throttle follows `[redis].throttle_fail_mode`.
//! - **DPoP proof `jti`s** ([`ProofReplay`], RFC 9449 §11.1): `SET NX` until the proof's window
//!   ends. Always fail closed: a proof is refused (503 `temporarily_unavailable`) rather than
//!   risk accepting a replay.
//! - **Cache announcements** ([`ChangeFeed`]): `PUBLISH`/`SUBSCRIBE` on one channel, in place of
//!   PostgreSQL's `LISTEN/NOTIFY` (`crate::shared_caches` handles losses the same way).
//!
//! Every key and the channel start with `[redis].key_prefix`; values derived from requests
//! (client ids, addresses, `jti`s) enter keys only hashed, so their length and bytes are
//! bounded. Commands time out after `[redis].command_timeout_ms`. `svc_coordination_up` (1/0)
//! tells whether the last command succeeded.

use async_trait::async_trait;
use prometheus_client::metrics::gauge::Gauge;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use svc_config::{Config, ThrottleFailMode};
use svc_domain::TenantId;
use svc_http::throttle::{Outage, SharedCounter};
use svc_oauth::OAuthError;
use svc_oauth::dpop::ProofReplay;
use svc_store::{ChangeFeed, ChangeSubscription, FeedEvent, StoreError};
use time::OffsetDateTime;

use super::hashed_key;
use crate::RuntimeError;

/// One GCRA step: `KEYS[1]` the bucket, `ARGV[1]` the emission interval in milliseconds,
/// `ARGV[2]` the burst. Returns 0 when admitted, else the milliseconds until it would be.
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local tolerance = interval * tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next_tat = tat + interval
local wait = next_tat - tolerance - now
if wait > 0 then return math.ceil(wait) end
redis.call('SET', KEYS[1], tostring(next_tat), 'PX', math.ceil(next_tat - now) + 1000)
return 0
";

/// The Redis backend of one process.
pub(crate) struct RedisBackend {
    client: redis::Client,
    connections: Vec<ConnectionManager>,
    next: AtomicUsize,
    prefix: String,
    timeout: Duration,
    gcra: redis::Script,
    up: Gauge,
    outage: Outage,
}

impl std::fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBackend")
            .field("prefix", &self.prefix)
            .field("connections", &self.connections.len())
            .finish_non_exhaustive()
    }
}

/// The Redis backend `[redis]` describes. Connections are lazy: the process starts while Redis
/// is down, and the failure modes apply until it is back.
pub(super) fn open(config: &Config) -> Result<Arc<RedisBackend>, RuntimeError> {
    let c = &config.redis;
    let url = c
        .url
        .as_ref()
        .ok_or_else(|| RuntimeError::Bootstrap("redis.url is required".into()))?;
    let fail = |e: redis::RedisError| {
        RuntimeError::Bootstrap(format!(
            "redis.url = \"{}\": {}",
            url.redacted(),
            e.category()
        ))
    };
    let client = redis::Client::open(url.as_str()).map_err(fail)?;
    let timeout = Duration::from_millis(u64::from(c.command_timeout_ms));
    let settings = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_secs(2));
    let connections = (0..c.pool_size.max(1))
        .map(|_| ConnectionManager::new_lazy_with_config(client.clone(), settings.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    tracing::info!(redis = %url.redacted(), prefix = %c.key_prefix, "coordinating through Redis");
    Ok(Arc::new(RedisBackend {
        client,
        connections,
        next: AtomicUsize::new(0),
        prefix: c.key_prefix.clone(),
        timeout,
        gcra: redis::Script::new(GCRA),
        up: Gauge::default(),
        outage: match c.throttle_fail_mode {
            ThrottleFailMode::FailOpen => Outage::CountLocally,
            ThrottleFailMode::FailClosed => Outage::Refuse,
        },
    }))
}

impl RedisBackend {
    /// What the throttle does while Redis is away.
    pub(super) fn outage(&self) -> Outage {
        self.outage
    }

    /// 1 while the last command succeeded (`svc_coordination_up`).
    pub(super) fn up(&self) -> &Gauge {
        &self.up
    }

    fn connection(&self) -> ConnectionManager {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.connections.len();
        self.connections[i].clone()
    }

    /// Runs `command` within the command timeout, recording the outcome in the gauge.
    async fn run<T, F>(&self, command: F) -> Result<T, String>
    where
        F: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let outcome = match tokio::time::timeout(self.timeout, command).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(format!("redis: {}", e.category())),
            Err(_) => Err(format!("redis: no answer within {:?}", self.timeout)),
        };
        self.up.set(i64::from(outcome.is_ok()));
        outcome
    }

    /// A round trip (readiness under fail-closed throttling).
    pub(super) async fn ping(&self) -> Result<(), String> {
        let mut connection = self.connection();
        self.run(async move { redis::cmd("PING").query_async::<()>(&mut connection).await })
            .await
    }

    fn channel(&self) -> String {
        format!("{}changes", self.prefix)
    }
}

#[async_trait]
impl SharedCounter for RedisBackend {
    async fn take(
        &self,
        key: &str,
        per_second: u32,
        burst: u32,
    ) -> Result<Option<Duration>, String> {
        let bucket = hashed_key(&self.prefix, "throttle", &[key]);
        let interval_ms = 1000.0 / f64::from(per_second.max(1));
        let mut connection = self.connection();
        let mut invocation = self.gcra.key(bucket);
        invocation.arg(interval_ms).arg(burst.max(1));
        let wait_ms: u64 = self
            .run(async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok((wait_ms > 0).then(|| Duration::from_millis(wait_ms)))
    }
}

#[async_trait]
impl ProofReplay for RedisBackend {
    async fn first_use(
        &self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        until: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, OAuthError> {
        let key = hashed_key(&self.prefix, "dpop", &[tenant.as_str(), jkt, jti]);
        // Kept at least a second, so a proof at the very end of its window is still recorded.
        let keep_ms = (until - now).whole_milliseconds().max(1000);
        let keep_ms = u64::try_from(keep_ms).unwrap_or(u64::MAX);
        let mut connection = self.connection();
        let set: Option<String> = self
            .run(async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(1)
                    .arg("NX")
                    .arg("PX")
                    .arg(keep_ms)
                    .query_async(&mut connection)
                    .await
            })
            .await
            .map_err(|reason| {
                OAuthError::from(StoreError::Unavailable(reason.into()))
                    .with_log_detail("DPoP replay record unreachable (fails closed)")
            })?;
        Ok(set.is_some())
    }
}

#[async_trait]
impl ChangeFeed for RedisBackend {
    async fn publish(&self, message: &str) -> Result<(), StoreError> {
        let mut connection = self.connection();
        let (channel, message) = (self.channel(), message.to_owned());
        self.run(async move {
            redis::cmd("PUBLISH")
                .arg(channel)
                .arg(message)
                .query_async::<i64>(&mut connection)
                .await
        })
        .await
        .map(|_| ())
        .map_err(|reason| StoreError::Unavailable(reason.into()))
    }

    async fn subscribe(&self) -> Result<Box<dyn ChangeSubscription>, StoreError> {
        let mut subscription = RedisSubscription {
            client: self.client.clone(),
            channel: self.channel(),
            timeout: self.timeout.max(Duration::from_secs(2)),
            messages: None,
        };
        subscription.listen().await?;
        Ok(Box::new(subscription))
    }
}

/// A `SUBSCRIBE` on the change channel, over a connection of its own, rebuilt when lost.
struct RedisSubscription {
    client: redis::Client,
    channel: String,
    timeout: Duration,
    messages: Option<redis::aio::PubSubStream>,
}

impl RedisSubscription {
    async fn listen(&mut self) -> Result<(), StoreError> {
        let unavailable = |reason: String| StoreError::Unavailable(reason.into());
        let connect = async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.subscribe(&self.channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        let pubsub = tokio::time::timeout(self.timeout, connect)
            .await
            .map_err(|_| unavailable("redis: subscribing timed out".into()))?
            .map_err(|e| unavailable(format!("redis: {}", e.category())))?;
        self.messages = Some(pubsub.into_on_message());
        Ok(())
    }
}

#[async_trait]
impl ChangeSubscription for RedisSubscription {
    async fn next(&mut self) -> Result<FeedEvent, StoreError> {
        use futures_util::StreamExt as _;
        let Some(messages) = self.messages.as_mut() else {
            self.listen().await?;
            return Ok(FeedEvent::Lost);
        };
        match messages.next().await {
            Some(message) => match message.get_payload::<String>() {
                Ok(payload) => Ok(FeedEvent::Message(payload)),
                // Not ours (binary junk on our channel): nothing to apply.
                Err(_) => Ok(FeedEvent::Message(String::new())),
            },
            None => {
                self.messages = None;
                Err(StoreError::Unavailable(
                    "redis: the subscription connection closed".into(),
                ))
            }
        }
    }
}
