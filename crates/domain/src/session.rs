//! Records of a person's sign-in and what it granted: browser sessions, pending authorization
//! requests (interactions), consents, authorization codes, refresh-token families and one-time
//! links (email verification, password reset, invitation).
//!
//! Every bearer value among them (session cookie, code, refresh token, link token) is opaque, has
//! 256 random bits and is stored only as its [`SecretHash`] (CONTRACTS.md "Tokens").

use crate::{
    ApiResourceId, ClientId, InteractionId, OrganizationId, RedirectUri, RefreshFamilyId, ScopeSet,
    SecretHash, SessionId, TenantId, UserId,
};
use time::OffsetDateTime;

/// The `acr` (authentication context class, OIDC Core §2) of a sign-in with a password alone:
/// NIST SP 800-63B Authenticator Assurance Level 1, in the service's own URN namespace
/// ([`crate::ACR_AAL1`]; a second factor reaches [`crate::ACR_AAL2`]).
pub const ACR_PASSWORD: &str = crate::factor::ACR_AAL1;

/// A browser sign-in session on a tenant's hosted pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Public id (`sid` claim of ID tokens).
    pub id: SessionId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Who signed in.
    pub user_id: UserId,
    /// Hash of the cookie value.
    pub secret_hash: SecretHash,
    /// When the session was created.
    pub created_at: OffsetDateTime,
    /// When the person last proved who they are (`auth_time`; `max_age` and `prompt=login`).
    pub auth_time: OffsetDateTime,
    /// Authentication methods of the last sign-in (`amr`, RFC 8176: `pwd`, then `otp` and
    /// `mfa` once a second factor was verified).
    pub amr: Vec<String>,
    /// Assurance level reached (`acr`), when any was asked for or reached.
    pub acr: Option<String>,
    /// Absolute end.
    pub expires_at: OffsetDateTime,
    /// Last time the session was used.
    pub last_seen_at: OffsetDateTime,
    /// Set when signed out or revoked.
    pub revoked_at: Option<OffsetDateTime>,
    /// Browser description at sign-in, for the active-sessions list (truncated).
    pub user_agent: Option<String>,
    /// Client address at sign-in, for the active-sessions list.
    pub ip: Option<String>,
}

impl Session {
    /// Whether the session still signs its person in at `now`.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && now < self.expires_at
    }
}

/// An authorization request waiting for the person to sign in or consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interaction {
    /// Carried in the hosted pages' URLs.
    pub id: InteractionId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The application that asked.
    pub client_id: ClientId,
    /// The validated request, serialised by the OAuth engine (opaque to storage).
    pub request: String,
    /// When it was received (`prompt=login` needs a sign-in after this instant).
    pub created_at: OffsetDateTime,
    /// After this it is forgotten; the person must start again from the application.
    pub expires_at: OffsetDateTime,
}

/// A pushed authorization request (RFC 9126 §2): the validated parameters a client sent to
/// `/oauth/par`, waiting to be used once at the authorization endpoint by its `request_uri`.
///
/// Only the SHA-256 of the `request_uri`'s random part is kept, like every other bearer value:
/// a database reader cannot replay a pending request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRequest {
    /// Hash of the random part of the `request_uri`.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The client that pushed it; only it can use it (RFC 9126 §4).
    pub client_id: ClientId,
    /// The authorization parameters, serialised by the OAuth engine (opaque to storage).
    pub request: String,
    /// When it was pushed.
    pub created_at: OffsetDateTime,
    /// After this it cannot be used (RFC 9126 §2.2 `expires_in`).
    pub expires_at: OffsetDateTime,
}

/// What a person allowed an application: remembered per user, application and scope set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consent {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Who consented.
    pub user_id: UserId,
    /// To which application.
    pub client_id: ClientId,
    /// Every scope consented so far.
    pub scope: ScopeSet,
    /// The person's `sub` as this application sees it (pairwise for third parties), so a
    /// bearer of the application's token can be mapped back to the person (UserInfo).
    pub subject: String,
    /// Last time consent was given (`prompt=consent` needs one after the request).
    pub granted_at: OffsetDateTime,
}

/// How an authorization code reached its client, which decides the grant that may redeem it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeBinding {
    /// Sent to this redirect URI, which must be presented again, identical (RFC 6749 §4.1.3),
    /// with `grant_type=authorization_code`.
    Redirect(RedirectUri),
    /// Never sent anywhere: a person approved a device authorization (RFC 8628), and the code
    /// is stored under the device code's hash for the device's next poll
    /// (`grant_type=urn:ietf:params:oauth:grant-type:device_code`) to redeem, once.
    Device,
    /// Never sent anywhere: a person approved a backchannel authentication request (OpenID
    /// CIBA), and the code is stored under the `auth_req_id`'s hash for the client's next poll
    /// (`grant_type=urn:openid:params:grant-type:ciba`) to redeem, once.
    Backchannel,
}

impl CodeBinding {
    /// The redirect URI of a code sent to one.
    pub fn redirect_uri(&self) -> Option<&RedirectUri> {
        match self {
            Self::Redirect(uri) => Some(uri),
            Self::Device | Self::Backchannel => None,
        }
    }
}

/// An authorization code (RFC 6749 §4.1.2) and everything its redemption must check or carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationCode {
    /// Hash of the code.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The only client that may redeem it.
    pub client_id: ClientId,
    /// Who signed in.
    pub user_id: UserId,
    /// The session it came from (`sid`).
    pub session_id: SessionId,
    /// How the code reached its client, hence which grant redeems it.
    pub binding: CodeBinding,
    /// Granted scopes.
    pub scope: ScopeSet,
    /// `code_challenge` (S256) when PKCE was used (RFC 7636 §4.4.1).
    pub code_challenge: Option<String>,
    /// `nonce` for the ID token.
    pub nonce: Option<String>,
    /// When the person last authenticated.
    pub auth_time: OffsetDateTime,
    /// `acr` of that authentication.
    pub acr: Option<String>,
    /// `amr` of that authentication.
    pub amr: Vec<String>,
    /// The OIDC `claims` request (JSON text), when one was made.
    pub claims: Option<String>,
    /// The subject the application sees.
    pub subject: String,
    /// The organization the person acts in (the `organization` authorization parameter),
    /// re-checked at redemption: the tokens carry `org_id` and `org_slug`.
    pub organization_id: Option<OrganizationId>,
    /// The API resource (RFC 8707 `resource`) the tokens are for: their audience, and the
    /// resource whose permissions the person's roles add as scopes. `None`: the application's
    /// registered audience, or UserInfo only.
    pub resource_id: Option<ApiResourceId>,
    /// The DPoP key the code is bound to (RFC 9449 §10: `dpop_jkt` at the authorization
    /// endpoint, or the proof at PAR): redemption needs a proof of this key.
    pub dpop_jkt: Option<String>,
    /// The RAR details (RFC 9396) the person approved; the token request may narrow them.
    pub authorization_details: Option<crate::AuthorizationDetails>,
    /// Issue time.
    pub created_at: OffsetDateTime,
    /// Redemption deadline.
    pub expires_at: OffsetDateTime,
    /// Set on first redemption; a second redemption is refused and revokes what the first issued.
    pub redeemed_at: Option<OffsetDateTime>,
    /// The refresh family the redemption started, if any.
    pub issued_family: Option<RefreshFamilyId>,
    /// The `jti` of the access token the redemption issued.
    pub issued_access_jti: Option<String>,
    /// When that access token expires (how long its revocation must be remembered).
    pub issued_access_expires_at: Option<OffsetDateTime>,
}

/// Every refresh token rotated from one grant (RFC 9700 §4.14.2): reuse of a rotated member
/// revokes them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshFamily {
    /// Id.
    pub id: RefreshFamilyId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The only client that may use it.
    pub client_id: ClientId,
    /// Whose grant it is.
    pub user_id: UserId,
    /// The session it was issued in (`sid` of refreshed ID tokens).
    pub session_id: Option<SessionId>,
    /// Scopes originally granted; a refresh may ask for fewer, never more.
    pub scope: ScopeSet,
    /// The subject the application sees.
    pub subject: String,
    /// `auth_time` of the original sign-in.
    pub auth_time: OffsetDateTime,
    /// `acr` of the original sign-in.
    pub acr: Option<String>,
    /// `amr` of the original sign-in.
    pub amr: Vec<String>,
    /// The organization the grant acts in; every refresh re-checks that it is active and the
    /// person still a member, and revokes the family when not.
    pub organization_id: Option<OrganizationId>,
    /// The API resource (RFC 8707 `resource`) the tokens are for: their audience, and the
    /// resource whose permissions the person's roles add as scopes. `None`: the application's
    /// registered audience, or UserInfo only.
    pub resource_id: Option<ApiResourceId>,
    /// The DPoP key the family is bound to (RFC 9449 §5: public clients' refresh tokens): every
    /// refresh needs a proof of this key.
    pub dpop_jkt: Option<String>,
    /// The RAR details (RFC 9396) granted: each refresh carries them, or a narrowing of them.
    pub authorization_details: Option<crate::AuthorizationDetails>,
    /// Creation.
    pub created_at: OffsetDateTime,
    /// Absolute expiry (`jwt.refresh_token_lifetime_*` from creation).
    pub expires_at: OffsetDateTime,
    /// Set when the family is revoked (reuse, revocation, logout, user suspended).
    pub revoked_at: Option<OffsetDateTime>,
    /// Why, for the audit trail (`reuse`, `revoked`, `code_reuse`, `user_suspended`, …).
    pub revoke_reason: Option<String>,
}

/// One refresh token of a family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshToken {
    /// Hash of the token.
    pub hash: SecretHash,
    /// Its family.
    pub family_id: RefreshFamilyId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Scopes of the tokens it yields (a subset of the family's).
    pub scope: ScopeSet,
    /// Issue time.
    pub created_at: OffsetDateTime,
    /// Idle expiry: unused past this, it is dead even if the family lives.
    pub expires_at: OffsetDateTime,
    /// Set when it was exchanged for its successor; presenting it again is reuse.
    pub rotated_at: Option<OffsetDateTime>,
}

/// What a one-time link proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UserTokenPurpose {
    /// The person receives mail at their address.
    VerifyEmail,
    /// The person may choose a new password.
    ResetPassword,
    /// The person accepts an invitation and chooses a password.
    Invitation,
}

impl UserTokenPurpose {
    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::VerifyEmail => "verify_email",
            Self::ResetPassword => "reset_password",
            Self::Invitation => "invitation",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "verify_email" => Some(Self::VerifyEmail),
            "reset_password" => Some(Self::ResetPassword),
            "invitation" => Some(Self::Invitation),
            _ => None,
        }
    }
}

/// A one-time link token sent by email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserToken {
    /// Hash of the token.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// For whom.
    pub user_id: UserId,
    /// What it proves.
    pub purpose: UserTokenPurpose,
    /// Issue time.
    pub created_at: OffsetDateTime,
    /// Deadline.
    pub expires_at: OffsetDateTime,
    /// Set when used (single use).
    pub used_at: Option<OffsetDateTime>,
}
