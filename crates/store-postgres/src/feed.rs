//! The change feed on PostgreSQL: `pg_notify` on one channel to publish, `LISTEN` on a
//! connection of its own to subscribe.
//!
//! Rules:
//! - Publishing goes through the store's pool (`SELECT pg_notify($1, $2)`, the payload bound,
//!   never spliced into SQL); PostgreSQL delivers it to every listening session, in commit
//!   order, only once the publishing statement commits.
//! - A subscription holds one connection outside the store's pool (its own pool of one, with
//!   the same connection options, or those of `database.listen_url` when set), so listening
//!   never takes a connection from requests and the pool's size stays what the configuration
//!   says.
//! - A lost connection (the server restarted, the backend was terminated, the network cut)
//!   yields [`FeedEvent::Interrupted`] as soon as it is seen, and the next call listens on a
//!   new connection and yields [`FeedEvent::Lost`] once listening again, so a subscriber that
//!   forgets its caches on `Lost` cannot miss a message sent after it forgot. Any other error
//!   drops the listener; the next call builds a new one and also answers `Lost`.

use crate::error::map_err;
use async_trait::async_trait;
use sqlx::PgPool;
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgListener, Postgres};
use std::time::Duration;
use svc_store::{ChangeFeed, ChangeSubscription, FeedEvent, StoreError};

/// The one channel every svc process of a database listens on.
pub const CHANNEL: &str = svc_store_sql::CHANGE_CHANNEL;
/// How long connecting the listener may wait before the attempt counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Publishes through the store's pool; subscribes on connections of its own.
#[derive(Debug)]
pub(crate) struct PgFeed {
    pool: PgPool,
    options: PgConnectOptions,
}

impl PgFeed {
    /// Publishes and listens with `pool`'s connection options.
    pub(crate) fn new(pool: PgPool) -> Self {
        let options = (*pool.connect_options()).clone();
        Self { pool, options }
    }

    /// Publishes through `pool`, listens with `listener`.
    pub(crate) fn with_listener(pool: PgPool, listener: PgConnectOptions) -> Self {
        Self {
            pool,
            options: listener,
        }
    }
}

#[async_trait]
impl ChangeFeed for PgFeed {
    async fn publish(&self, message: &str) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(message)
            .execute(&self.pool)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn subscribe(&self) -> Result<Box<dyn ChangeSubscription>, StoreError> {
        let mut subscription = PgSubscription {
            options: self.options.clone(),
            listener: None,
        };
        subscription.listen().await?;
        Ok(Box::new(subscription))
    }
}

/// A `LISTEN` on [`CHANNEL`], rebuilt after errors.
struct PgSubscription {
    options: PgConnectOptions,
    listener: Option<PgListener>,
}

impl PgSubscription {
    async fn listen(&mut self) -> Result<(), StoreError> {
        // A pool of one, used by the listener only to reconnect.
        let pool = PoolOptions::<Postgres>::new()
            .max_connections(1)
            .min_connections(0)
            .max_lifetime(None)
            .idle_timeout(None)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(self.options.clone().application_name("svc-change-feed"));
        let mut listener = PgListener::connect_with(&pool).await.map_err(map_err)?;
        // Report a loss at once (`Interrupted`); the next call listens on a new listener and
        // answers `Lost`, so `Lost` means "listening again".
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await.map_err(map_err)?;
        self.listener = Some(listener);
        Ok(())
    }
}

#[async_trait]
impl ChangeSubscription for PgSubscription {
    async fn next(&mut self) -> Result<FeedEvent, StoreError> {
        let Some(listener) = self.listener.as_mut() else {
            self.listen().await?;
            return Ok(FeedEvent::Lost);
        };
        match listener.try_recv().await {
            Ok(Some(notification)) => Ok(FeedEvent::Message(notification.payload().to_owned())),
            Ok(None) => {
                self.listener = None;
                Ok(FeedEvent::Interrupted)
            }
            Err(e) => {
                // A terminated backend reports an error first and only then closes: start
                // over on a fresh connection rather than trust this one.
                self.listener = None;
                Err(map_err(e))
            }
        }
    }
}
