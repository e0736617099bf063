//! Clients identified by a URL (draft-ietf-oauth-client-id-metadata-document-03): a `client_id`
//! that names a scheme is the address of the client's metadata document, not the id of a
//! registered application. The engine only asks this port for the application such an id names;
//! the runtime fetches the document through the outbound guard, reads it with registration's
//! rules and stores it (`svc_manage::registration::adopt`).
//!
//! How fresh the answer must be depends on who asks ([`Reading`]): the authorization endpoint
//! begins something new on the client's behalf and wants the document as published now (within
//! its cache lifetime); client authentication at the token, PAR, revocation and introspection
//! endpoints only needs to know the client, so a stored reading serves even when stale (a
//! refresh token keeps working while the client's web server is down). RP-initiated logout and
//! tokens' `client_id` claims read the stored application only (`subject::client_of_claim`).

use async_trait::async_trait;
use svc_domain::{Application, ClientIdUrl, TenantId};

/// How stale a stored reading may be for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// What is stored, however old; fetch only when nothing is.
    WhenAbsent,
    /// What is stored while fresh; fetch when absent or stale.
    WhenStale,
}

/// Why a URL `client_id` names no usable client.
#[derive(Debug)]
pub enum DocumentError {
    /// The URL or its document breaks a rule, or could not be fetched: a sentence naming what,
    /// safe to show (it is about the client's own publication).
    Refused(String),
    /// The store failed.
    Store(svc_store::StoreError),
}

impl From<svc_store::StoreError> for DocumentError {
    fn from(error: svc_store::StoreError) -> Self {
        Self::Store(error)
    }
}

/// Finds (and, as [`Reading`] allows, fetches) the application a URL `client_id` names.
#[async_trait]
pub trait ClientDocuments: Send + Sync {
    /// The application of `tenant` read from the document at `client_id`; `None` when the
    /// tenant does not accept metadata documents.
    async fn application(
        &self,
        tenant: &TenantId,
        client_id: &str,
        reading: Reading,
    ) -> Result<Option<Application>, DocumentError>;
}

/// Whether `client_id` is to be resolved as a metadata document URL rather than looked up as a
/// registered application's id.
pub(crate) fn is_document_id(client_id: &str) -> bool {
    ClientIdUrl::is_url_shaped(client_id)
}
