//! The pure domain model of svc: typed identifiers, values that parse instead of validate,
//! entities, and the `Clock`/`Rng` seams through which time and randomness enter (and the
//! `PasswordHasher`/`BreachedPasswords` seams through which passwords are hashed and checked).
//!
//! This crate performs no IO and knows no async runtime, database or HTTP framework; every other
//! crate depends on it, never the other way round.

mod access;
mod agent;
mod api_key;
mod application;
mod audit;
mod authorization_details;
mod backchannel;
mod client_id_url;
mod clock;
mod delegation;
mod device;
mod event;
mod factor;
mod id;
mod invitation;
mod keys;
mod login;
mod logout;
mod organization;
mod passkey;
mod password;
mod policy;
mod recovery;
mod redirect_uri;
mod registration;
mod rng;
mod scim;
mod scope;
mod secret;
mod session;
mod social;
mod sso;
mod tenant;
mod user;
mod verified_domain;
mod webhook;

pub use access::{
    ApiResource, MAX_ACCESS_DESCRIPTION_CHARS, MAX_RESOURCE_PERMISSIONS, Permission,
    PermissionError, PermissionName, RESERVED_SCOPES, Role, RoleGrant, RoleKind, permissions_for,
};
pub use agent::{
    Agent, AgentOwner, AgentStatus, AgentValueError, MAX_AGENT_JWKS_BYTES, MAX_AGENT_METADATA_BYTES,
};
pub use api_key::{
    API_KEY_PREFIX, ApiKey, ApiKeyPolicy, KeyReach, KeySubject, MAX_API_KEY_CHARS,
    MAX_API_KEY_NAME_CHARS, MAX_API_KEY_SCOPES, MAX_KEYS_PER_PERSON, MAX_PERSON_KEY_DAYS,
    looks_like_api_key,
};
pub use application::{
    Application, CIBA_GRANT, DEVICE_CODE_GRANT, GrantType, MetadataDocument, OperatorToken,
    OrganizationUsage, TOKEN_EXCHANGE_GRANT, TokenEndpointAuthMethod,
};
pub use audit::{AuditEntry, AuditOutcome};
pub use authorization_details::{
    AuthorizationDetails, DetailType, DetailTypeError, DetailsError, MAX_DETAIL_DESCRIPTION_CHARS,
    MAX_DETAIL_SCHEMA_BYTES, MAX_DETAIL_TYPE_CHARS, MAX_DETAIL_TYPES, MAX_DETAILS,
    MAX_DETAILS_BYTES, MAX_DETAILS_DEPTH, check_detail_types,
};
pub use backchannel::{
    AUTH_REQ_ID_PREFIX, BackchannelPoll, BackchannelRequest, BackchannelRequester, DelegatedUse,
    MAX_BINDING_MESSAGE_CHARS,
};
pub use client_id_url::{ClientIdUrl, ClientIdUrlError, MAX_CLIENT_ID_URL_LEN};
pub use clock::{Clock, ManualClock, SystemClock};
pub use delegation::{Delegation, MAX_DELEGATION_LIFETIME_DAYS};
pub use device::{
    DEVICE_CODE_PREFIX, DeviceAuthorization, DevicePoll, DeviceStatus, USER_CODE_ALPHABET,
    USER_CODE_LENGTH, UserCode,
};
pub use event::{
    BruteForceScope, Event, EventData, EventType, LoginFailureReason, LogoutReason,
    RevocationReason, RevokedTokenKind,
};
pub use factor::{
    ACR_AAL1, ACR_AAL2, ACR_LEVELS, AMR_MFA, AMR_OTP, AMR_PASSWORD, BACKUP_CODE_CHARS,
    BACKUP_CODES_PER_SET, BackupCode, FactorChallenge, FactorKind, KnownDevice,
    MAX_FACTOR_LABEL_CHARS, SecondFactor, acr_rank, amr_with_otp, normalize_backup_code,
    normalize_totp_code,
};
pub use id::{
    AgentId, ApiKeyId, ApiResourceId, AuditEntryId, BackchannelRequestId, ClientId, DelegationId,
    DeliveryId, DomainId, EventId, FactorId, GuardianId, IdError, InitialAccessTokenId,
    InteractionId, InvitationId, LoginRecordId, OperatorTokenId, OrganizationId, PasskeyId,
    PolicyId, RecoveryId, RefreshFamilyId, ScimGroupId, ScimTokenId, SessionId, TenantId, UserId,
    WebhookId,
};
pub use invitation::{INVITATION_TOKEN_PREFIX, Invitation, InvitationState, InvitationStatus};
pub use keys::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord};
pub use login::{
    LoginMethod, LoginRecord, LoginResult, MAX_LOGIN_USER_AGENT_CHARS, UnknownLoginValue,
    login_user_agent,
};
pub use logout::{
    LogoutAttempt, LogoutChannels, LogoutNotice, LogoutNoticeState, LogoutOutcome, SessionClient,
};
pub use organization::{
    MAX_MEMBERSHIPS_PER_USER, Membership, ORG_ADMIN, ORG_MEMBER, ORG_OWNER, ORG_ROLES, OrgSlug,
    OrgStatus, OrgValueError, Organization, RoleKey, TENANT_ADMIN, TENANT_ROLES,
};
pub use passkey::{
    AMR_HWK, AMR_SWK, AMR_USER, CeremonyPurpose, MAX_CREDENTIAL_ID_BYTES, MAX_PASSKEY_NAME_CHARS,
    Passkey, WebauthnCeremony, clean_passkey_name,
};
pub use password::{
    BreachCheckUnavailable, BreachedPasswords, HasherError, MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS,
    NewPasswordError, Password, PasswordError, PasswordHasher, Passwords,
};
pub use policy::{
    AccessPolicy, MAX_POLICIES_PER_TENANT, MAX_POLICY_DESCRIPTION_CHARS, MAX_POLICY_LIST_ENTRIES,
    MAX_POLICY_NAME_CHARS, MAX_SESSION_AGE_SECS, MIN_SESSION_AGE_SECS, Origin,
    POLICY_SIGN_IN_METHODS, PolicyDenial, PolicyRule, PolicyRules, PolicyRulesError, PolicyScope,
    PolicyTargets, SignInFacts, denial_among, first_denial, governing, unmet_rule,
};
pub use recovery::{Guardian, RecoveryApproval, RecoveryRequest, RecoveryStatus};
pub use redirect_uri::{RedirectUri, RedirectUriError};
pub use registration::{
    INITIAL_ACCESS_TOKEN_PREFIX, InitialAccessToken, MAX_TENANT_STATEMENT_ISSUERS,
    REGISTRATION_TOKEN_PREFIX, RegistrationPolicy, StatementIssuer,
};
pub use rng::{OsRandom, Rng, SeededRandom};
pub use scim::{
    EnterpriseUser, MAX_SCIM_GROUP_NAME_CHARS, SCIM_TOKEN_PREFIX, ScimGroup, ScimProfile,
    ScimToken, generate_scim_token,
};
pub use scope::{CIBA_APPROVE_SCOPE, MANAGEMENT_API_SCOPES, Scope, ScopeError, ScopeSet};
pub use secret::{GeneratedSecret, SecretHash, base32_secret};
pub use session::{
    ACR_PASSWORD, AuthorizationCode, CodeBinding, Consent, Interaction, PushedRequest,
    RefreshFamily, RefreshToken, Session, UserToken, UserTokenPurpose,
};
pub use social::{
    MAX_SOCIAL_DISPLAY_NAME_CHARS, MAX_SOCIAL_PRIVATE_KEY_BYTES, MAX_SOCIAL_PROVIDERS,
    PendingSocialLink, ProfileEndpoints, ProviderSlug, ProviderSlugError, SOCIAL_CALLBACK_PATH,
    SocialAttempt, SocialClientAuth, SocialLink, SocialPreset, SocialProtocol, SocialProvider,
    social_redirect_uri,
};
pub use sso::{
    AssertionSigner, EgressAnswer, MAX_SSO_SCOPES, MAX_SSO_SECRET_BYTES, MAX_SSO_SUBJECT_BYTES,
    MAX_SSO_URL_BYTES, SSO_CALLBACK_PATH, SsoAttempt, SsoClientAuth, SsoConnection, SsoEgress,
    SsoLink, UpstreamMetadata, sso_redirect_uri,
};
pub use tenant::{MfaPolicy, PairwiseSecret, Tenant, TenantSlug, TenantSlugError, TenantStatus};
pub use user::{Email, EmailError, PasswordHash, User, UserStatus};
pub use verified_domain::{
    DNS_TXT_LABEL, DomainName, DomainNameError, DomainStatus, MAX_DOMAIN_NAME_LEN,
    MAX_DOMAINS_PER_ORGANIZATION, PROOF_PREFIX, VerificationMethod, VerifiedDomain,
    WELL_KNOWN_PATH,
};
pub use webhook::{
    Delivery, DeliveryAttempt, DeliveryStatus, SecretError, Subscription, TargetError,
    TargetPolicy, WebhookSecret, WebhookUrl, WebhookUrlError, is_public_ip,
};
