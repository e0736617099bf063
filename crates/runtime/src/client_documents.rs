//! The runtime side of client ID metadata documents (`svc_oauth::client_documents`): a URL
//! `client_id` is parsed with the draft's rules (`svc_domain::ClientIdUrl`; `http` only outside
//! production), its stored application used while the caller's [`Reading`] allows, and otherwise
//! the document fetched through the deployment's guarded fetcher (`crate::guarded_fetch`: no
//! redirects, 5 s, 16 KiB, a JSON content type; `https` and public addresses only in
//! production) and read into the application by `svc_manage::registration::adopt`.
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
}

impl DocumentClients {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        manage: ManageContext,
        production: bool,
    ) -> Self {
        Self {
            store,
            clock,
            manage,
            fetcher: GuardedFetcher::new(production),
            allow_http: !production,
        }
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
    use super::*;

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
