//! Port of device authorizations (RFC 8628): started by `/oauth/device/code`, found by their user
//! code on the verification page, decided once by a person, polled by the device.
//!
//! The rules that must hold across instances are the store's: a decision is one conditional
//! `UPDATE` (only a pending, unexpired authorization can be approved or denied, once), and a poll
//! records itself in the same statement that checks it came after the interval, so two racing
//! polls cannot both pass as "on time". The approved grant itself is an authorization code
//! stored under the device code's hash ([`svc_domain::CodeBinding::Device`]), redeemed once by
//! [`crate::GrantWrites::redeem_code`]. Expired authorizations are left to
//! [`crate::GrantWrites::purge_expired_grants`].

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    ClientId, DeviceAuthorization, DevicePoll, DeviceStatus, SecretHash, TenantId, UserId,
};
use time::OffsetDateTime;

/// Reads of device authorizations.
#[async_trait]
pub trait DeviceReads {
    /// The pending authorization of `tenant` whose user code hashes to `user_code`, if it has
    /// not expired at `now` (what the verification page may show).
    async fn pending_device_authorization(
        &mut self,
        tenant: &TenantId,
        user_code: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<DeviceAuthorization>, StoreError>;
}

/// Writes of device authorizations.
#[async_trait]
pub trait DeviceWrites {
    /// Stores a new authorization. A user code already used by another live authorization of
    /// the tenant is a [`StoreError::Conflict`] on `device_authorizations_user_code_key` (draw
    /// another).
    async fn insert_device_authorization(
        &mut self,
        authorization: &DeviceAuthorization,
    ) -> Result<(), StoreError>;

    /// Records `user`'s decision (`Approved` or `Denied`) on the authorization with device
    /// code hash `hash`, if it is still pending and unexpired at `now`; returns it as decided,
    /// or `None` (unknown, expired, or decided before).
    async fn decide_device_authorization(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        decision: DeviceStatus,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Option<DeviceAuthorization>, StoreError>;

    /// One poll by `client` at `now` (RFC 8628 §3.4–3.5): stores the poll time and, when it
    /// came sooner than the interval after the previous poll, grows the interval by 5 s.
    /// `None` when no authorization of `tenant` has this hash for this client (another
    /// client's device code is left untouched). Expiry is the caller's check.
    async fn poll_device_authorization(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        client: &ClientId,
        now: OffsetDateTime,
    ) -> Result<Option<DevicePoll>, StoreError>;
}
