//! Port of pushed authorization requests (RFC 9126): stored by `/oauth/par`, taken once by the
//! authorization endpoint.
//!
//! Single use is the store's rule ([`PushedRequestWrites::take_pushed_request`] is one
//! conditional `DELETE ... RETURNING`), so two instances on one PostgreSQL, or two browsers
//! racing with one `request_uri`, get the request at most once between them (RFC 9126 §4: "SHOULD
//! make the request_uri one-time use"). Expired ones are left to
//! [`crate::GrantWrites::purge_expired_grants`].

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{ClientId, PushedRequest, SecretHash, TenantId};
use time::OffsetDateTime;

/// Writes of pushed authorization requests (there is no read: a pushed request is only ever
/// taken, which deletes it).
#[async_trait]
pub trait PushedRequestWrites {
    /// Stores a pushed request.
    async fn insert_pushed_request(&mut self, request: &PushedRequest) -> Result<(), StoreError>;

    /// Deletes and returns the pushed request of `tenant` with `hash` when it belongs to
    /// `client` and has not expired at `now`; `None` otherwise (unknown, already taken, expired,
    /// or pushed by another client, which leaves it in place for its own client).
    async fn take_pushed_request(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PushedRequest>, StoreError>;
}
