//! The runtime side of client ID metadata documents (`svc_oauth::client_documents`): a URL
//! `client_id` is parsed with the draft's rules (`svc_domain::ClientIdUrl`; `http` only outside
//! production), its stored application used while the caller's [`Reading`] allows, and otherwise
//! the document fetched through the deployment's guarded fetcher (`crate::guarded_fetch`: no
//! redirects, 5 s, 16 KiB, a JSON content type; `https` and public addresses only in
//! production) and read into the application by `svc_manage::registration::adopt`.
//!
//! Budget: each tenant may fetch `[dynamic_registration].max_document_fetches_per_hour`
//! documents an hour, counted in the shared fixed-window counters (so across instances); stored
//! readings cost nothing. Strangers choose the URLs, so without it the service would fetch for
//! anyone as fast as they ask. Past it, a client already stored keeps its (stale) reading, so
//! spending the budget cannot lock known clients out.
//!
//! Freshness: the answer's `Cache-Control` (`max-age`; `no-store`/`no-cache` as zero), clamped
//! to [`MIN_FRESH`]..[`MAX_FRESH`], [`DEFAULT_FRESH`] when it says nothing. The floor keeps a
//! document that forbids caching from costing a fetch per request; the ceiling makes a
//! published change (a removed redirect URI) count within a day at the latest.

use crate::guarded_fetch::{GuardedFetcher, Kind};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{Application, ClientIdUrl, Clock, TenantId};
use svc_manage::{ManageContext, ManageError};
use svc_oauth::client_documents::{ClientDocuments, DocumentError, Reading};
use svc_store::Store;

/// The shortest time a reading stands, whatever the document's server says.
pub(crate) const MIN_FRESH: Duration = Duration::from_secs(30);
/// The longest.
pub(crate) const MAX_FRESH: Duration = Duration::from_secs(24 * 60 * 60);
/// When the answer does not say.
pub(crate) const DEFAULT_FRESH: Duration = Duration::from_secs(5 * 60);

const DOCUMENT: Kind = Kind {
    name: "client_id",
    max_bytes: svc_manage::registration::MAX_METADATA_DOCUMENT_BYTES,
    json_only: true,
};

/// Resolves URL `client_id`s for the protocol engines.
pub(crate) struct DocumentClients {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    manage: ManageContext,
    fetcher: GuardedFetcher,
    allow_http: bool,
    fetches_per_hour: u32,
}

impl DocumentClients {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        manage: ManageContext,
        production: bool,
        fetches_per_hour: u32,
        roots: &[Vec<u8>],
    ) -> Self {
        Self {
            store,
            clock,
            manage,
            fetcher: GuardedFetcher::trusting(production, roots),
            allow_http: !production,
            fetches_per_hour,
        }
    }

    /// Counts one fetch for `tenant`; refused past the hour's budget.
    async fn spend_fetch(&self, tenant: &TenantId) -> Result<(), DocumentError> {
        let mut tx = self.store.write().await?;
        let count = tx
            .hit_counter(
                &format!("cimd:{tenant}"),
                self.clock.now(),
                time::Duration::hours(1),
            )
            .await?;
        tx.commit().await?;
        if count.count > self.fetches_per_hour {
            return Err(DocumentError::Refused(
                "this tenant fetched as many client metadata documents as it may this hour"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// Whether `tenant` accepts documents, and the application stored for `url`.
    async fn stored(
        &self,
        tenant: &TenantId,
        url: &ClientIdUrl,
    ) -> Result<(bool, Option<Application>), DocumentError> {
        let mut tx = self.store.read().await?;
        let accepted = tx.metadata_documents_accepted(tenant).await?;
        let app = tx.application_by_metadata_url(tenant, url.as_str()).await?;
        tx.finish().await?;
        Ok((accepted, app))
    }
}

/// How long a reading stands after an answer that said `max_age`.
pub(crate) fn freshness(max_age: Option<Duration>) -> Duration {
    max_age.unwrap_or(DEFAULT_FRESH).clamp(MIN_FRESH, MAX_FRESH)
}

fn refused(error: ManageError) -> DocumentError {
    match error {
        ManageError::Invalid { field, message } => {
            DocumentError::Refused(format!("{message} ({field})"))
        }
        ManageError::Unavailable(e) | ManageError::Internal(e) => DocumentError::Store(e),
        other => DocumentError::Refused(other.to_string()),
    }
}

#[async_trait]
impl ClientDocuments for DocumentClients {
    async fn application(
        &self,
        tenant: &TenantId,
        client_id: &str,
        reading: Reading,
    ) -> Result<Option<Application>, DocumentError> {
        let url = ClientIdUrl::parse(client_id, self.allow_http)
            .map_err(|e| DocumentError::Refused(e.0.to_owned()))?;
        let (accepted, stored) = self.stored(tenant, &url).await?;
        if !accepted {
            return Ok(None);
        }
        let now = self.clock.now();
        let usable = match (&stored, reading) {
            (Some(_), Reading::WhenAbsent) => true,
            (Some(app), Reading::WhenStale) => app
                .metadata_document
                .as_ref()
                .is_some_and(|d| d.fresh_until > now),
            (None, _) => false,
        };
        if usable {
            return Ok(stored);
        }
        if let Err(spent) = self.spend_fetch(tenant).await {
            // Strangers can spend the budget: a client already known keeps its stale reading
            // rather than being locked out by them.
            return match (spent, stored) {
                (DocumentError::Refused(_), Some(app)) => Ok(Some(app)),
                (spent, _) => Err(spent),
            };
        }
        let fetched = self
            .fetcher
            .get(url.as_str(), DOCUMENT)
            .await
            .map_err(DocumentError::Refused)?;
        let fresh_until = now + freshness(fetched.max_age);
        match svc_manage::registration::adopt(
            &self.manage,
            tenant,
            &url,
            &fetched.body,
            fresh_until,
        )
        .await
        {
            Ok(app) => Ok(app),
            // Another request (or instance) adopted the same document a moment ago: theirs is
            // as fresh as ours would be.
            Err(ManageError::PreconditionFailed | ManageError::Conflict(_)) => {
                Ok(self.stored(tenant, &url).await?.1)
            }
            Err(e) => Err(refused(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::guarded_fetch::tests::serve;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use svc_domain::{ManualClock, OperatorTokenId, SeededRandom};
    use svc_manage::control_plane::{NewTenant, create_tenant};

    /// A tenant accepting documents on a fresh SQLite store, resolved with `budget` fetches an
    /// hour by a clock the test moves; the document server counts its answers and serves the
    /// client name `name` reads at each request.
    async fn setup(
        budget: u32,
        name: Arc<std::sync::Mutex<&'static str>>,
    ) -> (
        DocumentClients,
        Arc<ManualClock>,
        TenantId,
        String,
        Arc<AtomicUsize>,
    ) {
        let store: Arc<dyn Store> =
            Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
        let clock = Arc::new(ManualClock::new(
            time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap(),
        ));
        let manage =
            ManageContext::new(store.clone(), clock.clone(), Arc::new(SeededRandom::new(7)))
                .with_metadata_documents(true);
        let operator = svc_manage::Actor::Operator(OperatorTokenId::generate(
            clock.as_ref(),
            &SeededRandom::new(8),
        ));
        let created = create_tenant(
            &manage,
            &operator,
            &Default::default(),
            NewTenant {
                slug: "acme".into(),
                display_name: "Acme".into(),
                signup_enabled: false,
                mfa_policy: svc_domain::MfaPolicy::Default,
            },
        )
        .await
        .unwrap();
        let tenant = created.tenant.id.clone();
        let mut tx = store.write().await.unwrap();
        tx.set_metadata_documents_accepted(&tenant, true, clock.now())
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let url_cell = Arc::new(std::sync::Mutex::new(String::new()));
        let url_of = url_cell.clone();
        let base = serve(axum::Router::new().route(
            "/client.json",
            axum::routing::get(move || {
                let counted = counted.clone();
                let url = url_of.lock().unwrap().clone();
                let name = *name.lock().unwrap();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    (
                        [
                            ("content-type", "application/json"),
                            ("cache-control", "max-age=60"),
                        ],
                        serde_json::json!({
                            "client_id": url, "client_name": name,
                            "redirect_uris": ["https://client.example/cb"],
                        })
                        .to_string(),
                    )
                }
            }),
        ))
        .await;
        let url = format!("{base}/client.json");
        *url_cell.lock().unwrap() = url.clone();
        let documents = DocumentClients::new(store, clock.clone(), manage, false, budget, &[]);
        (documents, clock, tenant, url, hits)
    }

    #[tokio::test]
    async fn a_stale_reading_is_fetched_again_only_where_freshness_matters() {
        let name = Arc::new(std::sync::Mutex::new("First"));
        let (documents, clock, tenant, url, hits) = setup(100, name.clone()).await;
        let read = |reading| documents.application(&tenant, &url, reading);
        let first = read(Reading::WhenStale).await.unwrap().unwrap();
        assert_eq!(
            (first.name.as_str(), hits.load(Ordering::SeqCst)),
            ("First", 1)
        );
        *name.lock().unwrap() = "Second";
        // Fresh for its max-age (60 s): nobody fetches.
        clock.advance(time::Duration::seconds(30));
        assert_eq!(
            read(Reading::WhenStale).await.unwrap().unwrap().name,
            "First"
        );
        // Stale: client authentication keeps the stored reading, the authorization endpoint
        // reads the document again, into the same application.
        clock.advance(time::Duration::seconds(31));
        assert_eq!(
            read(Reading::WhenAbsent).await.unwrap().unwrap().name,
            "First"
        );
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        let second = read(Reading::WhenStale).await.unwrap().unwrap();
        assert_eq!(
            (second.name.as_str(), hits.load(Ordering::SeqCst)),
            ("Second", 2)
        );
        assert_eq!(second.id, first.id);
    }

    #[tokio::test]
    async fn past_the_budget_a_known_client_keeps_its_stale_reading() {
        let name = Arc::new(std::sync::Mutex::new("Known"));
        let (documents, clock, tenant, url, hits) = setup(1, name.clone()).await;
        let known = documents
            .application(&tenant, &url, Reading::WhenStale)
            .await
            .unwrap()
            .unwrap();
        *name.lock().unwrap() = "Changed";
        clock.advance(time::Duration::seconds(61));
        let kept = documents
            .application(&tenant, &url, Reading::WhenStale)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((kept.name.as_str(), kept.id), ("Known", known.id));
        assert_eq!(hits.load(Ordering::SeqCst), 1, "the budget of one is spent");
        let other = format!("{}/other.json", url.trim_end_matches("/client.json"));
        match documents
            .application(&tenant, &other, Reading::WhenStale)
            .await
        {
            Err(DocumentError::Refused(why)) => assert!(why.contains("this hour"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn freshness_follows_the_answer_within_bounds() {
        assert_eq!(freshness(None), DEFAULT_FRESH);
        assert_eq!(freshness(Some(Duration::ZERO)), MIN_FRESH);
        assert_eq!(
            freshness(Some(Duration::from_secs(600))),
            Duration::from_secs(600)
        );
        assert_eq!(freshness(Some(Duration::from_secs(10 * 86_400))), MAX_FRESH);
    }
}
