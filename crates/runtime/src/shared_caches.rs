//! The process's in-memory caches kept correct across instances (issue 21 item 3): the
//! application cache of client authentication, the tenant directory, the browser origins, the
//! API-key cache and the signing keys.
//!
//! A committed change ([`svc_manage::ChangeHook`], or a key rotation) is applied here at once
//! and announced on the database's change feed ([`svc_store::ChangeFeed`]: PostgreSQL
//! `LISTEN/NOTIFY`); every other instance's [`listen`] worker applies it on arrival, so a
//! change is seen everywhere within the feed's delivery time (milliseconds) instead of the
//! caches' time to live.
//!
//! A notification can be lost (the listener's connection dropped, the database restarted), so:
//! - when the subscription reports a loss, or is (re)established, every cache is emptied: what
//!   was missed is read again from the store;
//! - while there is no subscription, every cache is emptied every [`UNHEARD_FLUSH`], so even
//!   then nothing stale is served for longer than that (at the price of more reads);
//! - the entries' own time to live stays as the last bound.
//!
//! Embedded SQLite serves one process and has no feed: changes apply locally only.

use crate::directory::CachedDirectory;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{ApiKeyId, ClientId, Rng, TenantId};
use svc_manage::ChangeHook;
use svc_manage::api_keys::ApiKeys;
use svc_oauth::browser_origins::BrowserOrigins;
use svc_oauth::client_auth::ClientCache;
use svc_oauth::keys::KeyService;
use svc_store::{ChangeFeed, FeedEvent};
use tokio_util::sync::CancellationToken;

/// How often every cache is emptied while no subscription hears the other instances.
pub(crate) const UNHEARD_FLUSH: Duration = Duration::from_millis(500);
/// How long to wait before subscribing again after a failure.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// One committed change that makes cached copies stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// An application was changed, had its secret rotated, or was deleted.
    Application(TenantId, ClientId),
    /// A tenant was changed, suspended, reactivated or deleted.
    Tenant(TenantId),
    /// An API key was revoked or rotated.
    ApiKey(TenantId, ApiKeyId),
    /// A rotation changed a tenant's signing keys.
    SigningKeys(TenantId),
}

impl Change {
    /// `"{instance} {kind} {tenant}[ {id}]"`: ids are validated newtypes without spaces.
    fn encode(&self, instance: &str) -> String {
        let mut out = String::with_capacity(96);
        let _ = match self {
            Self::Application(t, c) => write!(out, "{instance} app {t} {c}"),
            Self::Tenant(t) => write!(out, "{instance} tenant {t}"),
            Self::ApiKey(t, k) => write!(out, "{instance} key {t} {k}"),
            Self::SigningKeys(t) => write!(out, "{instance} keys {t}"),
        };
        out
    }

    /// The sender and the change, or `None` for a message this version does not understand
    /// (a newer instance during a rolling upgrade): its sender's TTL bound still holds.
    fn decode(message: &str) -> Option<(&str, Self)> {
        let mut parts = message.split(' ');
        let instance = parts.next()?;
        let kind = parts.next()?;
        let tenant = TenantId::parse(parts.next()?).ok()?;
        let change = match (kind, parts.next()) {
            ("app", Some(id)) => Self::Application(tenant, ClientId::parse(id).ok()?),
            ("tenant", None) => Self::Tenant(tenant),
            ("key", Some(id)) => Self::ApiKey(tenant, ApiKeyId::parse(id).ok()?),
            ("keys", None) => Self::SigningKeys(tenant),
            _ => return None,
        };
        parts.next().is_none().then_some((instance, change))
    }
}

/// Every cache of the process that another instance's change can make stale.
pub(crate) struct ProcessCaches {
    pub(crate) clients: Arc<ClientCache>,
    pub(crate) directory: Arc<CachedDirectory>,
    pub(crate) origins: Arc<BrowserOrigins>,
    pub(crate) api_keys: Option<Arc<ApiKeys>>,
    pub(crate) keys: Arc<KeyService>,
    /// The feed changes are announced on, and this instance's name on it.
    announce: Option<(Arc<dyn ChangeFeed>, String)>,
    metrics: FeedMetrics,
}

impl ProcessCaches {
    /// The caches, announcing on `feed` (when the database has one) under a random name.
    pub(crate) fn new(
        clients: Arc<ClientCache>,
        directory: Arc<CachedDirectory>,
        origins: Arc<BrowserOrigins>,
        api_keys: Option<Arc<ApiKeys>>,
        keys: Arc<KeyService>,
        feed: Option<Arc<dyn ChangeFeed>>,
        rng: &dyn Rng,
    ) -> Self {
        let mut name = [0u8; 9];
        rng.fill(&mut name);
        let instance = name.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        });
        Self {
            clients,
            directory,
            origins,
            api_keys,
            keys,
            announce: feed.map(|feed| (feed, instance)),
            metrics: FeedMetrics::default(),
        }
    }

    /// Registers the feed's gauges and counters.
    pub(crate) fn register_metrics(&self, metrics: &svc_http::Metrics) {
        metrics.with_registry(|registry| self.metrics.register(registry));
    }

    /// Forgets what `change` made stale, in this process.
    pub(crate) fn apply(&self, change: &Change) {
        match change {
            Change::Application(tenant, id) => {
                self.clients.invalidate(tenant, id);
                // Browser origins are the tenant's public applications' web origins.
                self.origins.forget(tenant);
            }
            Change::Tenant(tenant) => {
                self.clients.invalidate_tenant(tenant);
                self.directory.forget(tenant);
                self.origins.forget(tenant);
            }
            Change::ApiKey(tenant, id) => {
                if let Some(keys) = &self.api_keys {
                    keys.forget(tenant, id);
                }
            }
            Change::SigningKeys(tenant) => self.keys.forget(tenant),
        }
    }

    /// Empties every cache: changes may have been missed.
    pub(crate) fn forget_all(&self) {
        self.clients.clear();
        self.directory.clear();
        self.origins.forget_all();
        if let Some(keys) = &self.api_keys {
            keys.forget_all();
        }
        self.keys.forget_all();
    }

    /// Applies `change` here and tells the other instances. Publishing runs in the background:
    /// the change is committed already, and a failed announcement is bounded by the other
    /// instances' own loss handling and time to live.
    pub(crate) fn announce(&self, change: Change) {
        self.apply(&change);
        let Some((feed, instance)) = &self.announce else {
            return;
        };
        let (feed, message) = (feed.clone(), change.encode(instance));
        let sent = self.metrics.published.clone();
        tokio::spawn(async move {
            match feed.publish(&message).await {
                Ok(()) => {
                    sent.inc();
                }
                Err(e) => tracing::warn!(
                    error = %crate::stores::explain(&e),
                    "could not announce a change to the other instances; they see it when their caches expire"
                ),
            }
        });
    }

    /// Whether a received message came from this process (already applied).
    fn is_own(&self, sender: &str) -> bool {
        self.announce.as_ref().is_some_and(|(_, me)| me == sender)
    }
}

impl ChangeHook for ProcessCaches {
    fn application_changed(&self, tenant: &TenantId, id: &ClientId) {
        self.announce(Change::Application(tenant.clone(), id.clone()));
    }

    fn tenant_changed(&self, tenant: &TenantId) {
        self.announce(Change::Tenant(tenant.clone()));
    }

    fn api_key_changed(&self, tenant: &TenantId, id: &ApiKeyId) {
        self.announce(Change::ApiKey(tenant.clone(), id.clone()));
    }
}

/// Hears the other instances' changes until `cancel`, following the loss rules of the module.
pub(crate) async fn listen(
    caches: Arc<ProcessCaches>,
    feed: Arc<dyn ChangeFeed>,
    cancel: CancellationToken,
) {
    let listening = caches.metrics.listening.clone();
    // While nothing is heard, nothing cached may outlive UNHEARD_FLUSH.
    let flusher = {
        let (caches, listening, cancel) = (caches.clone(), listening.clone(), cancel.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(UNHEARD_FLUSH);
            loop {
                tokio::select! {
                    () = cancel.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if listening.get() == 0 {
                    caches.forget_all();
                }
            }
        })
    };
    let mut subscription = None;
    let mut logged_down = false;
    loop {
        let event = match subscription.as_mut() {
            None => {
                let subscribed = tokio::select! {
                    () = cancel.cancelled() => break,
                    s = feed.subscribe() => s,
                };
                match subscribed {
                    Ok(s) => {
                        subscription = Some(s);
                        Ok(FeedEvent::Lost)
                    }
                    Err(e) => Err(e),
                }
            }
            Some(s) => tokio::select! {
                () = cancel.cancelled() => break,
                e = s.next() => e,
            },
        };
        match event {
            Ok(FeedEvent::Message(message)) => match Change::decode(&message) {
                Some((sender, _)) if caches.is_own(sender) => {}
                Some((_, change)) => {
                    caches.metrics.received.inc();
                    caches.apply(&change);
                }
                None => tracing::debug!("ignored a change message this version does not know"),
            },
            Ok(FeedEvent::Lost) => {
                // Listening (again) from here on: what came before is read again.
                caches.forget_all();
                listening.set(1);
                if logged_down {
                    tracing::info!("hearing the other instances' changes again");
                    logged_down = false;
                }
            }
            Err(e) => {
                listening.set(0);
                caches.forget_all();
                if !logged_down {
                    tracing::warn!(
                        error = %crate::stores::explain(&e),
                        "not hearing the other instances' changes; caches are emptied every {} ms until the feed is back",
                        UNHEARD_FLUSH.as_millis()
                    );
                    logged_down = true;
                }
                tokio::select! {
                    () = cancel.cancelled() => break,
                    () = tokio::time::sleep(RETRY_AFTER) => {}
                }
            }
        }
    }
    listening.set(0);
    flusher.abort();
}

/// The feed's numbers on `/metrics`.
#[derive(Clone, Default)]
struct FeedMetrics {
    /// 1 while a subscription hears the other instances.
    listening: Gauge,
    /// Changes received from other instances and applied.
    received: Counter,
    /// Changes this instance announced.
    published: Counter,
}

impl FeedMetrics {
    fn register(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register(
            "svc_change_feed_listening",
            "1 while this instance hears the other instances' cache invalidations",
            self.listening.clone(),
        );
        registry.register(
            "svc_change_feed_received",
            "Cache invalidations received from other instances and applied",
            self.received.clone(),
        );
        registry.register(
            "svc_change_feed_published",
            "Cache invalidations this instance announced to the others",
            self.published.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant() -> TenantId {
        TenantId::parse("ten_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap()
    }

    #[test]
    fn every_change_survives_the_wire() {
        let changes = [
            Change::Application(
                tenant(),
                ClientId::parse("app_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            ),
            Change::Tenant(tenant()),
            Change::ApiKey(
                tenant(),
                ApiKeyId::parse("apik_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap(),
            ),
            Change::SigningKeys(tenant()),
        ];
        for change in changes {
            let message = change.encode("a1b2");
            assert_eq!(
                Change::decode(&message),
                Some(("a1b2", change)),
                "{message}"
            );
        }
    }

    #[test]
    fn unknown_or_malformed_messages_are_ignored() {
        let t = tenant();
        for message in [
            String::new(),
            "a1b2".into(),
            format!("a1b2 app {t}"),
            format!("a1b2 tenant {t} extra"),
            format!("a1b2 groups {t}"),
            "a1b2 tenant not-a-tenant".into(),
            format!("a1b2 key {t} app_01jd2n4k6m8p0r2t4v6x8z0b2d"),
        ] {
            assert_eq!(Change::decode(&message), None, "{message}");
        }
    }
}
