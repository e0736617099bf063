//! Backchannel authentication requests (OpenID CIBA Core, poll mode): a confidential client asks
//! for a person by `login_hint`, the person approves on their own device, the client polls.
//!
//! A request whose hint names nobody who can sign in is still stored, as a decoy: it answers
//! the start and every poll exactly like a real one, but has no person, so it is never listed
//! for anyone and never approved (spec "A CIBA request for an unknown or inactive login hint").

use crate::{BackchannelRequestId, ClientId, DeviceStatus, ScopeSet, SecretHash, TenantId, UserId};
use time::OffsetDateTime;

/// Prefix of `auth_req_id`s (CIBA Core §7.3): a leaked string says what it is.
pub const AUTH_REQ_ID_PREFIX: &str = "ar_";

/// Longest `binding_message` accepted (CIBA Core §7.1: "relatively small"; it is shown on the
/// client's screen and the person's, and must fit both).
pub const MAX_BINDING_MESSAGE_CHARS: usize = 64;

/// A backchannel authentication request, from its start until it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelRequest {
    /// Its id on the approval page.
    pub id: BackchannelRequestId,
    /// Hash of the `auth_req_id`.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The client that started it, the only one that may poll.
    pub client_id: ClientId,
    /// The person asked; `None` for a decoy.
    pub user_id: Option<UserId>,
    /// The scopes asked for.
    pub scope: ScopeSet,
    /// What the client shows, for the person to compare (CIBA Core §7.1).
    pub binding_message: Option<String>,
    /// The RAR details asked for (RFC 9396), validated against the client's types when asked.
    pub authorization_details: Option<crate::AuthorizationDetails>,
    /// Where it stands (pending, approved, denied).
    pub status: DeviceStatus,
    /// Seconds the client must wait between polls; grows by 5 at each `slow_down`.
    pub interval_secs: u32,
    /// The last poll.
    pub last_polled_at: Option<OffsetDateTime>,
    /// Start.
    pub created_at: OffsetDateTime,
    /// After this the request is `expired_token`.
    pub expires_at: OffsetDateTime,
}

/// What a poll found, recorded as it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelPoll {
    /// The request after the poll.
    pub request: BackchannelRequest,
    /// Sooner than the interval after the previous poll: `slow_down`, interval grown by 5 s.
    pub too_fast: bool,
}
