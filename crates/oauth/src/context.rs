//! The one set of collaborators every protocol endpoint shares: the store, the tenant signing
//! keys, the injected clock and randomness (ARCHITECTURE.md rule 6), and the optional
//! `jwks_uri` fetcher and application cache.
//!
//! It is built once by the composition root and cloned (a handful of `Arc` bumps) into each
//! engine, so an endpoint is constructed as `Engine::new(ctx.clone(), settings)` and a new one
//! (device grant, PAR, CIBA) needs no new constructor plumbing. Endpoint-specific lifetimes
//! stay in each engine's own settings struct, not here.

use crate::client_auth::{ClientAuthContext, ClientCache, JwksFetcher};
use crate::client_documents::ClientDocuments;
use crate::dpop::Dpop;
use crate::keys::KeyService;
use std::sync::Arc;
use svc_domain::{Clock, Rng, TenantId};
use svc_store::Store;

/// What every protocol engine is built from; cheap to clone.
#[derive(Clone)]
pub struct ProtocolContext {
    /// Where tenants, applications, grants and tokens live.
    pub(crate) store: Arc<dyn Store>,
    /// The signing keys of each tenant issuer.
    pub(crate) keys: Arc<KeyService>,
    /// The source of time for expiry and issuance.
    pub(crate) clock: Arc<dyn Clock>,
    /// The source of randomness for ids, codes and secrets.
    pub(crate) rng: Arc<dyn Rng>,
    /// Fetches registered `jwks_uri` documents; `None` refuses `private_key_jwt` clients that
    /// registered one.
    pub(crate) jwks_fetcher: Option<Arc<dyn JwksFetcher>>,
    /// Applications already read; `None` reads the store on every request.
    pub(crate) clients: Option<Arc<ClientCache>>,
    /// DPoP proofs (RFC 9449); `None` ignores them, like `[dpop].enabled = false`.
    pub(crate) dpop: Option<Arc<Dpop>>,
    /// Resolves URL `client_id`s (client ID metadata documents); `None`: such an id is unknown.
    pub(crate) documents: Option<Arc<dyn ClientDocuments>>,
    /// `[oidc].authorization_details` (RFC 9396): whether requests may carry RAR details, read
    /// by every endpoint that takes them (the one place the switch lives; see `crate::details`).
    pub(crate) authorization_details: bool,
}

impl ProtocolContext {
    /// A context without `jwks_uri` support and without an application cache (see
    /// [`ProtocolContext::with_jwks_fetcher`] and [`ProtocolContext::with_client_cache`]).
    pub fn new(
        store: Arc<dyn Store>,
        keys: Arc<KeyService>,
        clock: Arc<dyn Clock>,
        rng: Arc<dyn Rng>,
    ) -> Self {
        Self {
            store,
            keys,
            clock,
            rng,
            jwks_fetcher: None,
            dpop: None,
            clients: None,
            documents: None,
            authorization_details: false,
        }
    }

    /// Takes RAR `authorization_details` (RFC 9396) where `on`.
    #[must_use]
    pub fn with_authorization_details(mut self, on: bool) -> Self {
        self.authorization_details = on;
        self
    }

    /// Whether RAR `authorization_details` are taken.
    pub fn authorization_details(&self) -> bool {
        self.authorization_details
    }

    /// Lets `private_key_jwt` clients register a `jwks_uri`, fetched through `fetcher`.
    #[must_use]
    pub fn with_jwks_fetcher(mut self, fetcher: Arc<dyn JwksFetcher>) -> Self {
        self.jwks_fetcher = Some(fetcher);
        self
    }

    /// Checks DPoP proofs with `dpop` (see [`Dpop`]).
    #[must_use]
    pub fn with_dpop(mut self, dpop: Arc<Dpop>) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// The DPoP checker, when proofs are accepted.
    pub fn dpop(&self) -> Option<&Arc<Dpop>> {
        self.dpop.as_ref().filter(|d| d.settings().enabled)
    }

    /// Resolves URL `client_id`s through `documents` (see [`crate::client_documents`]).
    #[must_use]
    pub fn with_client_documents(mut self, documents: Arc<dyn ClientDocuments>) -> Self {
        self.documents = Some(documents);
        self
    }

    /// Reads applications through `cache` (see [`ClientCache`]).
    #[must_use]
    pub fn with_client_cache(mut self, cache: Arc<ClientCache>) -> Self {
        self.clients = Some(cache);
        self
    }

    /// What client authentication needs for a request to `tenant`'s endpoint at `issuer`:
    /// every client-authenticating endpoint (token, introspection, revocation) asks the same
    /// way, so the fetcher and cache can never be forgotten on one of them.
    pub(crate) fn client_auth<'a>(
        &'a self,
        tenant: &'a TenantId,
        issuer: &'a str,
    ) -> ClientAuthContext<'a> {
        ClientAuthContext {
            store: self.store.as_ref(),
            clock: self.clock.as_ref(),
            tenant,
            issuer,
            jwks_fetcher: self.jwks_fetcher.as_deref(),
            clients: self.clients.as_deref(),
            documents: self.documents.as_deref(),
        }
    }
}
