//! The change feed: how one process tells the other processes on the same database that a
//! change it committed makes their in-memory copies stale (applications, tenants, API keys,
//! signing keys), so they forget them at once instead of when their entries expire (issue 21
//! item 3). A backend that can carry messages between processes offers one through
//! [`crate::Store::change_feed`] (PostgreSQL: `LISTEN/NOTIFY`); one that serves a single
//! process (embedded SQLite) offers none, and has nobody to tell.
//!
//! Delivery is best effort by nature (a notification sent while a listener is reconnecting is
//! gone), so the feed says when that may have happened ([`FeedEvent::Lost`]) and the subscriber
//! must then forget everything it holds.

use crate::StoreError;
use async_trait::async_trait;

/// Publishes and subscribes to the messages of every process on one database.
#[async_trait]
pub trait ChangeFeed: Send + Sync {
    /// Sends `message` (short: PostgreSQL refuses payloads of 8000 bytes or more) to every
    /// subscription on the database, this process's included. Call it after the change it
    /// describes committed.
    async fn publish(&self, message: &str) -> Result<(), StoreError>;

    /// A new subscription, listening when this returns; earlier messages are not delivered.
    async fn subscribe(&self) -> Result<Box<dyn ChangeSubscription>, StoreError>;
}

/// What a subscription received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedEvent {
    /// One published message.
    Message(String),
    /// The connection was lost and is listening again now: messages published meanwhile may
    /// never arrive.
    Lost,
    /// The connection was just lost, and nothing is heard until the next [`FeedEvent::Lost`]
    /// (the next call listens again). Reported as soon as the loss is seen, so a subscriber
    /// that must not trust stale state stops at once rather than after the reconnection.
    Interrupted,
}

/// One process's subscription to the feed.
#[async_trait]
pub trait ChangeSubscription: Send {
    /// The next event. An error means the subscription is not listening (the database is
    /// away); calling again tries to listen again and answers [`FeedEvent::Lost`] once it does.
    async fn next(&mut self) -> Result<FeedEvent, StoreError>;
}
