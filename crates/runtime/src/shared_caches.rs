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
//!
//! The revoked access tokens ([`RevocationSet`], PostgreSQL's feed only) are held to a
//! stricter rule, since no time to live bounds them: the set is trusted only while this
//! process hears its own heartbeats ([`BEAT`]) come back over the feed, so a connection that
//! went silent without an error stops it answering within [`svc_store::REVOCATIONS_FRESH`].

use crate::directory::CachedDirectory;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_domain::{ApiKeyId, ClientId, Rng, TenantId};
use svc_manage::ChangeHook;
use svc_manage::api_keys::ApiKeys;
use svc_oauth::browser_origins::BrowserOrigins;
use svc_oauth::client_auth::ClientCache;
use svc_oauth::keys::KeyService;
use svc_store::{ChangeFeed, FeedEvent, REVOCATIONS_FRESH, RevocationSet};
use tokio_util::sync::CancellationToken;

/// How often every cache is emptied while no subscription hears the other instances.
pub(crate) const UNHEARD_FLUSH: Duration = Duration::from_millis(500);
/// How long to wait before subscribing again after a failure.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// How often a process that keeps a revocation set sends itself a heartbeat over the feed.
pub(crate) const BEAT: Duration = Duration::from_millis(250);

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
    /// The database committed the revocation of access token `jti` of a tenant, expiring at
    /// the Unix second given ([`svc_store::revocation_message`], sent by the statement itself).
    Revoked(TenantId, String, i64),
    /// A heartbeat its sender sent this many nanoseconds after it started listening.
    Beat(u64),
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
            Self::Revoked(t, jti, exp) => {
                return svc_store::revocation_message(t, jti, *exp);
            }
            Self::Beat(nanos) => write!(out, "{instance} beat {nanos}"),
        };
        out
    }

    /// The sender and the change, or `None` for a message this version does not understand
    /// (a newer instance during a rolling upgrade): its sender's TTL bound still holds.
    fn decode(message: &str) -> Option<(&str, Self)> {
        if let Some((tenant, jti, exp)) = svc_store::parse_revocation_message(message) {
            return Some(("-", Self::Revoked(tenant, jti, exp)));
        }
        let mut parts = message.split(' ');
        let instance = parts.next()?;
        let kind = parts.next()?;
        if kind == "beat" {
            let nanos = parts.next()?.parse().ok()?;
            return parts
                .next()
                .is_none()
                .then_some((instance, Self::Beat(nanos)));
        }
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
    /// The revoked access tokens, kept current by the store's own feed (whose writes announce
    /// revocations), whichever feed carries the other changes.
    revocations: Option<Arc<RevocationSet>>,
    /// The feed changes are announced on.
    announce: Option<Arc<dyn ChangeFeed>>,
    /// This instance's name on every feed.
    instance: String,
    /// What heartbeats count from.
    started: Instant,
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
            revocations: None,
            announce: feed,
            instance,
            started: Instant::now(),
            metrics: FeedMetrics::default(),
        }
    }

    /// The same caches, keeping `revocations` current too (the store's own feed must be heard
    /// for it: see [`Hears`]).
    #[must_use]
    pub(crate) fn with_revocations(mut self, revocations: Option<Arc<RevocationSet>>) -> Self {
        self.revocations = revocations;
        self
    }

    /// Registers the feed's gauges and counters.
    pub(crate) fn register_metrics(&self, metrics: &svc_http::Metrics) {
        metrics.with_registry(|registry| {
            self.metrics.register(registry);
            if let Some(set) = &self.revocations {
                registry.register_collector(Box::new(RevocationCollector(set.clone())));
            }
        });
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
            Change::Revoked(tenant, jti, exp) => {
                if let Some(set) = &self.revocations {
                    set.revoked(tenant, jti, *exp);
                }
            }
            Change::Beat(_) => {}
        }
    }

    /// This process's heartbeat sent `nanos` after [`ProcessCaches::started`] came back:
    /// everything announced before it was heard too.
    fn heard_beat(&self, nanos: u64) {
        if let Some(set) = &self.revocations {
            set.heard_through(self.started + Duration::from_nanos(nanos));
        }
    }

    /// Sends this process a heartbeat over `feed`.
    async fn beat(&self, feed: &dyn ChangeFeed) {
        let nanos = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // A beat that cannot be sent is a beat not heard: the set's trust lapses on its own.
        let _ = feed
            .publish(&Change::Beat(nanos).encode(&self.instance))
            .await;
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
        let Some(feed) = &self.announce else {
            return;
        };
        let (feed, message) = (feed.clone(), change.encode(&self.instance));
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
        self.instance == sender
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

/// What one [`listen`] loop keeps current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hears {
    /// The caches (applications, tenants, origins, API keys, signing keys).
    pub(crate) caches: bool,
    /// The revocation set: only on the store's own feed, where revocations are announced.
    pub(crate) revocations: bool,
}

/// Hears the other instances' changes on `feed` until `cancel`, keeping current what `hears`
/// names, following the loss rules of the module.
pub(crate) async fn listen(
    caches: Arc<ProcessCaches>,
    feed: Arc<dyn ChangeFeed>,
    hears: Hears,
    cancel: CancellationToken,
) {
    let revocations = caches.revocations.clone().filter(|_| hears.revocations);
    // The caches' loop reports on `/metrics`; a loop for the revocation set alone keeps its
    // own flag.
    let listening = if hears.caches {
        caches.metrics.listening.clone()
    } else {
        Gauge::default()
    };
    // While nothing is heard, nothing cached may outlive UNHEARD_FLUSH.
    let flusher = hears.caches.then(|| {
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
    });
    // While a revocation set is kept, heartbeats prove the feed still delivers.
    let beater = revocations.is_some().then(|| {
        let (caches, feed) = (caches.clone(), feed.clone());
        let (listening, cancel) = (listening.clone(), cancel.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(BEAT);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = cancel.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if listening.get() == 1 {
                    caches.beat(feed.as_ref()).await;
                }
            }
        })
    });
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
                Some((sender, Change::Beat(nanos))) => {
                    if revocations.is_some() && caches.is_own(sender) {
                        caches.heard_beat(nanos);
                    }
                }
                Some((_, change @ Change::Revoked(..))) => {
                    if revocations.is_some() {
                        caches.apply(&change);
                    }
                }
                Some((sender, _)) if !hears.caches || caches.is_own(sender) => {}
                Some((_, change)) => {
                    caches.metrics.received.inc();
                    caches.apply(&change);
                }
                None => tracing::debug!("ignored a change message this version does not know"),
            },
            Ok(FeedEvent::Lost) => {
                // Listening (again) from here on: what came before is read again.
                if hears.caches {
                    caches.forget_all();
                }
                if let Some(set) = &revocations {
                    set.listening(Instant::now() + REVOCATIONS_FRESH);
                }
                listening.set(1);
                if logged_down {
                    tracing::info!("hearing the other instances' changes again");
                    logged_down = false;
                }
            }
            Ok(FeedEvent::Interrupted) => {
                // Deaf until the next `Lost`, which the next call brings.
                listening.set(0);
                if hears.caches {
                    caches.forget_all();
                }
                if let Some(set) = &revocations {
                    set.unheard();
                }
                logged_down = true;
                tracing::warn!(
                    "lost the connection that hears the other instances' changes; listening again"
                );
            }
            Err(e) => {
                listening.set(0);
                if hears.caches {
                    caches.forget_all();
                }
                if let Some(set) = &revocations {
                    set.unheard();
                }
                if !logged_down {
                    tracing::warn!(
                        error = %crate::stores::explain(&e),
                        "not hearing the other instances' changes; caches are emptied every {} ms and revocations read from the database until the feed is back",
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
    if let Some(set) = &revocations {
        set.unheard();
    }
    for task in [flusher, beater].into_iter().flatten() {
        task.abort();
    }
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

/// The revocation set's state, read at scrape time.
#[derive(Debug)]
struct RevocationCollector(Arc<RevocationSet>);

impl prometheus_client::collector::Collector for RevocationCollector {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeMetric;
        let (tenants, revocations) = self.0.size();
        let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        for (name, help, value) in [
            (
                "svc_revocation_set_trusted",
                "1 while the in-memory revocation set answers (the feed is heard); 0 while every check reads the database",
                i64::from(self.0.trusted()),
            ),
            (
                "svc_revocation_set_tenants",
                "Tenants whose revoked access tokens are held in memory",
                count(tenants),
            ),
            (
                "svc_revocation_set_revocations",
                "Revoked access tokens held in memory",
                count(revocations),
            ),
        ] {
            let metric = encoder.encode_descriptor(
                name,
                help,
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            prometheus_client::metrics::gauge::ConstGauge::new(value).encode(metric)?;
        }
        Ok(())
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
            Change::Beat(123_456_789),
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
    fn a_revocation_sent_by_the_database_is_understood() {
        let message = svc_store::revocation_message(&tenant(), "j 1", 1_700_000_000);
        assert_eq!(
            Change::decode(&message),
            Some(("-", Change::Revoked(tenant(), "j 1".into(), 1_700_000_000)))
        );
        assert_eq!(
            Change::Revoked(tenant(), "j 1".into(), 1_700_000_000).encode("x"),
            message
        );
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
            "a1b2 beat".into(),
            "a1b2 beat soon".into(),
            "a1b2 beat 12 13".into(),
            format!("a1b2 revoked {t} 12 j1"),
        ] {
            assert_eq!(Change::decode(&message), None, "{message}");
        }
    }
}
