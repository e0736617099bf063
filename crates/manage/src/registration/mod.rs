//! Dynamic client registration (RFC 7591) and its management protocol (RFC 7592): what
//! `/oauth/register` and `/oauth/register/{client_id}` do, in domain terms, and each tenant's
//! registration policy.
//!
//! One rule set: registration metadata ([`ClientMetadata`]) is translated into the management
//! API's [`ApplicationInput`](crate::applications::ApplicationInput) and validated, created,
//! replaced and deleted by the same code as `/api/v1/applications`, with the same audit entries
//! and events (the actor is the registered client itself). What registration adds:
//!
//! - the tenant's policy: `disabled` (the default) refuses every registration, `open` takes
//!   anyone's, `protected` only those presenting one of the tenant's initial access tokens
//!   (created, listed and deleted through the management API, stored as SHA-256, each
//!   registration spending one use in the transaction that creates the application);
//! - a registration access token per registered application (`rat_…`, shown once, stored as its
//!   SHA-256, compared in constant time), the only credential of RFC 7592 reads and changes; an
//!   application created through the management API has none;
//! - registered applications are third-party (`first_party: false`) and can never hold a
//!   management scope;
//! - registrations are counted per client address per tenant, refused past the deployment's
//!   hourly limit;
//! - software statements (RFC 7591 §2.3) of the deployment's trusted issuers are verified
//!   through a port ([`SoftwareStatementVerifier`]) and their metadata take precedence; others
//!   are refused (`unapproved_software_statement`, `invalid_software_statement`), never ignored.

mod client;
mod initial_tokens;
mod metadata;
mod metadata_document;
mod policy;
mod register;
mod statement;

pub use client::{delete, read, replace};
pub use initial_tokens::{
    CreatedInitialAccessTokenView, InitialAccessTokenInput, InitialAccessTokenView,
    MAX_INITIAL_ACCESS_TOKENS, create_initial_token, delete_initial_token, list_initial_tokens,
};
pub use metadata::{ClientInformation, ClientMetadata};
pub use metadata_document::{MAX_METADATA_DOCUMENT_BYTES, adopt, document_input};
pub use policy::{RegistrationPolicyInput, RegistrationPolicyView, get_policy, set_policy};
pub use register::{Registered, register};
pub use statement::{
    SoftwareStatementVerifier, StatementIssuerInput, StatementIssuerView, StatementRefusal,
    UNAPPROVED_FIELD,
};

use crate::ManageError;
use svc_domain::{ClientId, SecretHash, TenantId};
use svc_store::RegistrationReads;

/// The deployment's registration settings (`[dynamic_registration]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistrationSettings {
    /// Most registrations per client address per tenant in an hour.
    pub max_registrations_per_hour: u32,
}

impl Default for RegistrationSettings {
    fn default() -> Self {
        Self {
            max_registrations_per_hour: 20,
        }
    }
}

/// The words of every refused registration access token: the same whatever the reason, so a
/// caller learns nothing about which applications exist or have a token.
const INVALID_TOKEN: &str = "the registration access token is missing or not valid for this client";

/// Rule (RFC 7592 §2.1, RFC 6750 §3.1): the presented registration access token is the one
/// issued to the application `client_id` of `tenant`. Returns the application's id.
///
/// A malformed id, an unknown application, one without a token (created through the management
/// API) and another application's token are all [`ManageError::Unauthenticated`], after the same
/// constant-time comparison.
async fn authenticate<T: RegistrationReads + Send + ?Sized>(
    tx: &mut T,
    tenant: &TenantId,
    client_id: &str,
    token: Option<&str>,
) -> Result<ClientId, ManageError> {
    let token = token.ok_or_else(|| ManageError::Unauthenticated(INVALID_TOKEN.to_owned()))?;
    let id = ClientId::parse(client_id).ok();
    let stored = match &id {
        Some(id) => tx.registration_token(tenant, id).await?,
        None => None,
    };
    // Compare against something even when nothing is stored, so every refusal costs the same.
    let expected = stored.unwrap_or_else(|| SecretHash::of(""));
    match id {
        Some(id) if expected.verify(token) && !token.is_empty() => Ok(id),
        _ => Err(ManageError::Unauthenticated(INVALID_TOKEN.to_owned())),
    }
}
