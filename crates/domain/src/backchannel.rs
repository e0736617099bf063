//! Backchannel authentication requests (OpenID CIBA Core, poll mode): a confidential client asks
//! for a person by `login_hint`, the person approves on their own device, the client polls.
//!
//! A request whose hint names nobody who can sign in is still stored, as a decoy: it answers
//! the start and every poll exactly like a real one, but has no person, so it is never listed
//! for anyone and never approved (spec "A CIBA request for an unknown or inactive login hint").
//!
//! An agent starts one too, to use a delegation whose person asked to approve each use
//! ([`BackchannelRequester::Agent`]): the same page, the same API and the same poll carry that approval,
//! and its grant is the agent's token for the person rather than an authorization code.

use crate::{
    AgentId, BackchannelRequestId, ClientId, DelegationId, DeviceStatus, ScopeSet, SecretHash,
    TenantId, UserId,
};
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
    /// Who started it, the only one that may poll.
    pub requester: BackchannelRequester,
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

/// Who started a backchannel request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackchannelRequester {
    /// A confidential application, through `/bc-authorize` (CIBA Core §7.1).
    Application(ClientId),
    /// An agent asking its person to approve one use of a delegation that asks for it.
    Agent(DelegatedUse),
}

/// The use of a delegation an agent asks its person to approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegatedUse {
    /// The agent asking (and polling).
    pub agent_id: AgentId,
    /// The delegation it would act on.
    pub delegation_id: DelegationId,
    /// The API (its identifier) the token would be for.
    pub resource: String,
}

impl BackchannelRequester {
    /// Its id as stored and compared at a poll: the `client_id` (`app_…`) or the agent's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Application(client) => client.as_str(),
            Self::Agent(using) => using.agent_id.as_str(),
        }
    }

    /// The application, for an application's request.
    pub fn application(&self) -> Option<&ClientId> {
        match self {
            Self::Application(client) => Some(client),
            Self::Agent(_) => None,
        }
    }
}

/// What a poll found, recorded as it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelPoll {
    /// The request after the poll.
    pub request: BackchannelRequest,
    /// Sooner than the interval after the previous poll: `slow_down`, interval grown by 5 s.
    pub too_fast: bool,
}
