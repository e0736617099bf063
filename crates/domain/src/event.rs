//! Events: the catalog of event types (dotted strings, spec "Events"), a typed payload for every
//! type this version emits, and the envelope every webhook body carries (CONTRACTS.md
//! "Webhooks": `{"id", "type", "tenant_id", "occurred_at", "data"}`).
//!
//! An event is built where the state change happens and written to the outbox in the same
//! transaction; its envelope is serialised once, then delivered byte for byte on every attempt,
//! so signatures over retries cover the same body.

use crate::{
    ApiResourceId, ClientId, Clock, DeliveryId, DomainId, EventId, FactorId, GuardianId,
    InvitationId, OrganizationId, PasskeyId, PolicyId, RecoveryId, RefreshFamilyId, Rng, SessionId,
    TenantId, UserId, WebhookId,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use time::OffsetDateTime;

macro_rules! catalog {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, emitted: $emitted:literal; )*) => {
        /// Every event type the spec names or we add. Only the types this version emits
        /// ([`EventType::emitted`]) are advertised and may be subscribed to; the others wait for
        /// their feature, so nothing is offered that would never be delivered.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventType {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl EventType {
            /// The whole catalog, in declaration order.
            pub const ALL: &'static [EventType] = &[ $( Self::$variant, )* ];

            /// The dotted wire name (`auth.login.success`).
            pub fn as_str(self) -> &'static str {
                match self { $( Self::$variant => $name, )* }
            }

            /// Whether this version records events of this type.
            pub fn is_emitted(self) -> bool {
                match self { $( Self::$variant => $emitted, )* }
            }

            /// The types this version records, in declaration order: the advertised catalog.
            pub fn emitted() -> impl Iterator<Item = EventType> {
                Self::ALL.iter().copied().filter(|t| t.is_emitted())
            }

            /// One line on when the event is recorded.
            pub fn description(self) -> &'static str {
                match self { $( Self::$variant => concat!($($doc),*).trim_ascii(), )* }
            }

            /// Parses a wire name; `None` for anything outside the catalog (exact match only).
            pub fn parse(s: &str) -> Option<Self> {
                match s { $( $name => Some(Self::$variant), )* _ => None }
            }
        }
    };
}

catalog! {
    /// A person signed in on the hosted pages.
    LoginSuccess = "auth.login.success", emitted: true;
    /// A sign-in attempt was refused (wrong credentials, locked account, rate limit).
    LoginFailure = "auth.login.failure", emitted: true;
    /// A browser session ended (sign-out, RP-initiated logout, revocation).
    Logout = "auth.logout", emitted: true;
    /// Tokens were issued for a person (authorization code or refresh grant).
    TokenIssued = "auth.token.issued", emitted: true;
    /// An access token or a refresh-token family was revoked.
    TokenRevoked = "auth.token.revoked", emitted: true;
    /// A person consented to an application's scopes.
    ConsentGranted = "auth.consent.granted", emitted: true;
    /// A second factor was asked for: after a correct password, or to step up a session.
    MfaChallenge = "auth.mfa.challenge", emitted: true;
    /// A second factor (a TOTP code or a backup code) was verified.
    MfaVerify = "auth.mfa.verify", emitted: true;
    /// A person confirmed a new second factor (a TOTP authenticator).
    MfaEnrolled = "auth.mfa.enrolled", emitted: true;
    /// A second factor was removed, by its person or by an administrator.
    MfaRemoved = "auth.mfa.removed", emitted: true;
    /// A new set of backup codes was generated (the previous set stopped working).
    MfaBackupCodesGenerated = "auth.mfa.backup_codes.generated", emitted: true;
    /// A sign-in on a trusted browser was found risky: the second factor was asked for anyway.
    AdaptiveMfaTriggered = "auth.adaptive_mfa.triggered", emitted: true;
    /// A person signed in from a browser never seen for them (they were mailed).
    DeviceNew = "auth.device.new", emitted: true;
    /// A person registered a passkey.
    PasskeyRegistered = "auth.passkey.registered", emitted: true;
    /// A passkey was removed by its person.
    PasskeyRemoved = "auth.passkey.removed", emitted: true;
    /// A person named a recovery guardian.
    RecoveryGuardianAdded = "auth.recovery.guardian_added", emitted: true;
    /// A person removed a recovery guardian.
    RecoveryGuardianRemoved = "auth.recovery.guardian_removed", emitted: true;
    /// Someone asked to recover an account with its guardians (the guardians and the owner
    /// were mailed).
    RecoveryRequested = "auth.recovery.requested", emitted: true;
    /// A guardian approved a recovery.
    RecoveryApproved = "auth.recovery.approved", emitted: true;
    /// A recovery has all the approvals it needs; its waiting period started.
    RecoveryWaiting = "auth.recovery.waiting", emitted: true;
    /// The owner cancelled a recovery.
    RecoveryCancelled = "auth.recovery.cancelled", emitted: true;
    /// A recovery ended with a new password: the lost factors were removed and every session
    /// ended.
    RecoveryCompleted = "auth.recovery.completed", emitted: true;
    /// A person was invited (an invitation link was mailed).
    TenantUserInvited = "tenant_user.invited", emitted: true;
    /// A person became able to sign in (created with a password, signed up, accepted an
    /// invitation, or claimed a pre-provisioned account).
    TenantUserActivated = "tenant_user.activated", emitted: true;
    /// A person was created without a password or invitation, to be claimed later.
    TenantUserPreProvisioned = "tenant_user.pre_provisioned", emitted: true;
    /// A person's address, names, verification flag or password changed.
    TenantUserUpdated = "tenant_user.updated", emitted: true;
    /// A person was suspended (sessions and refresh tokens revoked).
    TenantUserSuspended = "tenant_user.suspended", emitted: true;
    /// A suspended person was reactivated.
    TenantUserReactivated = "tenant_user.reactivated", emitted: true;
    /// A person was removed.
    TenantUserRemoved = "tenant_user.removed", emitted: true;
    /// A person's tenant roles changed (e.g. `tenant_admin` granted or taken away).
    TenantUserRolesChanged = "tenant_user.roles_changed", emitted: true;
    /// An administrator created a person through the tenant API.
    AdminUserCreated = "admin.user.created", emitted: true;
    /// An application was registered.
    AdminApplicationCreated = "admin.application.created", emitted: true;
    /// An application's configuration changed.
    AdminApplicationUpdated = "admin.application.updated", emitted: true;
    /// An application was deleted.
    AdminApplicationDeleted = "admin.application.deleted", emitted: true;
    /// An application's client secret was replaced.
    AdminApplicationSecretRotated = "admin.application.secret_rotated", emitted: true;
    /// An application's tenant roles (its machine access to API resources) changed.
    AdminApplicationRolesChanged = "admin.application.roles_changed", emitted: true;
    /// An API resource was registered.
    AdminApiResourceCreated = "admin.api_resource.created", emitted: true;
    /// An API resource's name or permissions changed (a removed permission leaves every role).
    AdminApiResourceUpdated = "admin.api_resource.updated", emitted: true;
    /// An API resource was deleted, and its permissions left every role.
    AdminApiResourceDeleted = "admin.api_resource.deleted", emitted: true;
    /// A custom role was created.
    AdminRoleCreated = "admin.role.created", emitted: true;
    /// A role's description or permissions changed (built-in roles' permissions included).
    AdminRoleUpdated = "admin.role.updated", emitted: true;
    /// A custom role was deleted.
    AdminRoleDeleted = "admin.role.deleted", emitted: true;
    /// An access-control policy was created.
    AdminPolicyCreated = "admin.policy.created", emitted: true;
    /// An access-control policy changed (targets, rules, name, enabled).
    AdminPolicyUpdated = "admin.policy.updated", emitted: true;
    /// An access-control policy was deleted.
    AdminPolicyDeleted = "admin.policy.deleted", emitted: true;
    /// A webhook subscription was created.
    AdminWebhookCreated = "admin.webhook.created", emitted: true;
    /// A webhook subscription changed (URL, event types, description, active flag).
    AdminWebhookUpdated = "admin.webhook.updated", emitted: true;
    /// A webhook subscription was deleted.
    AdminWebhookDeleted = "admin.webhook.deleted", emitted: true;
    /// A webhook subscription's secret was rotated.
    AdminWebhookSecretRotated = "admin.webhook.secret_rotated", emitted: true;
    /// A webhook subscription was switched off because its receiver answered 410 Gone.
    AdminWebhookDisabled = "admin.webhook.disabled", emitted: true;
    /// An agent was registered.
    AdminAgentRegistered = "admin.agent.registered", emitted: false;
    /// A delegation was revoked.
    AdminDelegationRevoked = "admin.delegation.revoked", emitted: false;
    /// A vault credential was created.
    VaultCredentialCreated = "vault.credential.created", emitted: false;
    /// A vault grant was revoked.
    VaultGrantRevoked = "vault.grant.revoked", emitted: false;
    /// A vault credential was read.
    VaultCredentialAccessed = "vault.credential.accessed", emitted: false;
    /// A wallet transaction was signed.
    WalletTxSigned = "wallet.tx.signed", emitted: false;
    /// A wallet transaction was refused.
    WalletTxRejected = "wallet.tx.rejected", emitted: false;
    /// A wallet budget was exceeded.
    WalletBudgetExceeded = "wallet.budget.exceeded", emitted: false;
    /// On-chain ownership changed.
    ChainOwnershipChanged = "chain.ownership.changed", emitted: false;
    /// On-chain reputation changed.
    ChainReputationUpdated = "chain.reputation.updated", emitted: false;
    /// On-chain metadata changed.
    ChainMetadataChanged = "chain.metadata.changed", emitted: false;
    /// Enterprise SSO was configured for an organization.
    SsoConfigured = "sso.configured", emitted: false;
    /// A person signed in through enterprise SSO.
    SsoLoginSuccess = "sso.login.success", emitted: false;
    /// An enterprise SSO sign-in failed.
    SsoLoginFailed = "sso.login.failed", emitted: false;
    /// Enterprise SSO provisioned a person.
    SsoUserProvisioned = "sso.user.provisioned", emitted: false;
    /// An organization was created.
    OrgCreated = "org.created", emitted: true;
    /// An organization's name, slug or metadata changed.
    OrgUpdated = "org.updated", emitted: true;
    /// An organization was suspended: nobody obtains tokens for it until it is reactivated.
    OrgSuspended = "org.suspended", emitted: true;
    /// A suspended organization was reactivated.
    OrgReactivated = "org.reactivated", emitted: true;
    /// An organization was deleted with its memberships.
    OrgDeleted = "org.deleted", emitted: true;
    /// A member joined an organization.
    OrgMemberAdded = "org.member.added", emitted: true;
    /// A member's roles in an organization changed.
    OrgMemberRoleChanged = "org.member.role_changed", emitted: true;
    /// A member left an organization (or was removed from it).
    OrgMemberRemoved = "org.member.removed", emitted: true;
    /// An organization claimed a domain (pending until verified).
    OrgDomainAdded = "org.domain.added", emitted: true;
    /// An organization proved it controls a domain it claimed.
    OrgDomainVerified = "org.domain.verified", emitted: true;
    /// A domain claim of an organization was removed (verified or not).
    OrgDomainRemoved = "org.domain.removed", emitted: true;
    /// An invitation to join the tenant or one of its organizations was created and mailed.
    InvitationCreated = "invitation.created", emitted: true;
    /// A pending or expired invitation was mailed again with a new link and deadline (the
    /// older link stopped working).
    InvitationResent = "invitation.resent", emitted: true;
    /// A person accepted an invitation and joined (the membership or the roles have their own
    /// event).
    InvitationAccepted = "invitation.accepted", emitted: true;
    /// An administrator revoked a pending invitation: its link stopped working.
    InvitationRevoked = "invitation.revoked", emitted: true;
    /// A payment is pending.
    CommercePaymentPending = "commerce.payment.pending", emitted: false;
    /// A payment succeeded.
    CommercePaymentSucceeded = "commerce.payment.succeeded", emitted: false;
    /// A payment failed.
    CommercePaymentFailed = "commerce.payment.failed", emitted: false;
    /// A payment was refunded.
    CommercePaymentRefunded = "commerce.payment.refunded", emitted: false;
    /// A settlement was created.
    CommerceSettlementCreated = "commerce.settlement.created", emitted: false;
    /// A settlement was held.
    CommerceSettlementHeld = "commerce.settlement.held", emitted: false;
    /// A settlement was released.
    CommerceSettlementReleased = "commerce.settlement.released", emitted: false;
    /// A dispute was opened.
    CommerceDisputeOpened = "commerce.dispute.opened", emitted: false;
    /// A dispute was closed.
    CommerceDisputeClosed = "commerce.dispute.closed", emitted: false;
    /// A payout was submitted.
    CommercePayoutSubmitted = "commerce.payout.submitted", emitted: false;
    /// A payout was paid.
    CommercePayoutPaid = "commerce.payout.paid", emitted: false;
    /// A payout failed.
    CommercePayoutFailed = "commerce.payout.failed", emitted: false;
    /// A statement was created.
    CommerceStatementCreated = "commerce.statement.created", emitted: false;
    /// An account was locked after repeated failed sign-ins.
    SecurityBruteForceDetected = "security.brute_force.detected", emitted: true;
    /// A rotated refresh token was presented again; its whole family was revoked.
    SecurityRefreshTokenReuse = "security.refresh_token.reuse", emitted: true;
    /// Activity judged suspicious: a WebAuthn credential whose signature counter went back
    /// (a cloned authenticator); the sign-in was refused.
    SecuritySuspiciousActivity = "security.suspicious_activity", emitted: true;
    /// A test delivery requested through `POST /api/v1/webhooks/{id}/test`.
    WebhookTest = "webhook.test", emitted: true;
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown event type {s:?}")))
    }
}

/// Why a sign-in was refused, as the tenant's receivers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoginFailureReason {
    /// Unknown address, wrong password, or an account that may not sign in.
    InvalidCredentials,
    /// The account is locked after repeated failures.
    Locked,
    /// The client address made too many attempts.
    RateLimited,
    /// The password was right but the second factor (TOTP or backup code) was wrong.
    InvalidSecondFactor,
}

/// Why a browser session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogoutReason {
    /// The person signed out on the hosted pages.
    SignOut,
    /// An application sent the person to `/oauth/end-session`.
    EndSession,
    /// The person revoked the session from their session list.
    RevokedByUser,
    /// An administrator revoked the session.
    RevokedByAdmin,
}

/// Which kind of token an `auth.token.revoked` event concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevokedTokenKind {
    /// One access token, by its `jti`.
    AccessToken,
    /// A refresh-token family (every token rotated from one grant).
    RefreshToken,
}

/// Why tokens were revoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevocationReason {
    /// The client asked at `/oauth/revoke` (RFC 7009).
    ClientRequest,
    /// An authorization code was presented twice; what its first redemption issued is revoked.
    CodeReuse,
    /// A rotated refresh token was presented again.
    RefreshTokenReuse,
    /// The grant acted in an organization that is suspended or gone, or that the person is no
    /// longer a member of.
    OrganizationAccessEnded,
    /// An access-control policy no longer admits how the grant's person signed in (a policy
    /// added or tightened since).
    PolicyDenied,
}

/// Which limit a brute-force detection concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BruteForceScope {
    /// Failures against one account (known or not) locked it.
    Account,
    /// Wrong second-factor codes locked the account's second factors.
    SecondFactor,
}

/// The typed payload (`data`) of each event this version emits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum EventData {
    /// `auth.login.success`
    LoginSucceeded {
        /// Who signed in.
        user_id: UserId,
        /// The session created.
        session_id: SessionId,
        /// How (`password`).
        method: String,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `auth.login.failure`
    LoginFailed {
        /// The account the address names, when one exists.
        user_id: Option<UserId>,
        /// Why it was refused.
        reason: LoginFailureReason,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `auth.logout`
    LoggedOut {
        /// Whose session ended.
        user_id: UserId,
        /// The session.
        session_id: SessionId,
        /// How it ended.
        reason: LogoutReason,
    },
    /// `auth.token.issued`
    TokensIssued {
        /// The application that received the tokens.
        client_id: ClientId,
        /// The person they act for.
        user_id: UserId,
        /// `authorization_code` or `refresh_token`.
        grant_type: String,
        /// The granted scopes, space-delimited.
        scope: String,
        /// The access token's `jti`.
        access_token_id: String,
        /// The refresh-token family, when a refresh token was issued.
        refresh_family_id: Option<RefreshFamilyId>,
        /// Whether an ID token was issued.
        id_token: bool,
    },
    /// `auth.token.revoked`
    TokensRevoked {
        /// The application the tokens belong to.
        client_id: ClientId,
        /// What was revoked.
        token_kind: RevokedTokenKind,
        /// The access token's `jti` (access tokens).
        access_token_id: Option<String>,
        /// The family (refresh tokens).
        refresh_family_id: Option<RefreshFamilyId>,
        /// Why.
        reason: RevocationReason,
    },
    /// `auth.consent.granted`
    ConsentGranted {
        /// Who consented.
        user_id: UserId,
        /// To which application.
        client_id: ClientId,
        /// The scopes consented to, space-delimited.
        scope: String,
    },
    /// `security.refresh_token.reuse`
    RefreshTokenReused {
        /// The application the family belongs to.
        client_id: ClientId,
        /// The person the family acts for.
        user_id: UserId,
        /// The revoked family.
        refresh_family_id: RefreshFamilyId,
    },
    /// `security.brute_force.detected`
    BruteForceDetected {
        /// The account, when the address names one.
        user_id: Option<UserId>,
        /// Which limit tripped.
        scope: BruteForceScope,
        /// How long the account stays locked, in seconds.
        locked_for_secs: u64,
        /// The client address of the attempt that tripped it.
        client_ip: Option<String>,
    },
    /// `auth.mfa.challenge`
    MfaChallenged {
        /// Who is asked.
        user_id: UserId,
        /// `sign_in` (after the password) or `step_up` (an existing session needs more).
        reason: String,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `auth.mfa.verify`
    MfaVerified {
        /// Who.
        user_id: UserId,
        /// The session the verification created or raised.
        session_id: SessionId,
        /// `totp` or `backup_code`.
        method: String,
        /// Unused backup codes left, after a backup code was used.
        backup_codes_remaining: Option<u32>,
    },
    /// `auth.mfa.enrolled`, `auth.mfa.removed`
    FactorChanged {
        /// Whose factor.
        user_id: UserId,
        /// The factor.
        factor_id: FactorId,
        /// `totp`.
        kind: String,
        /// Who made the change: `user:usr_…` or `client:app_…`.
        actor: String,
    },
    /// `auth.adaptive_mfa.triggered`
    AdaptiveMfaTriggered {
        /// Who was signing in.
        user_id: UserId,
        /// The risk score reached.
        score: u32,
        /// The signals that scored: `new_ip`, `failure_burst`.
        signals: Vec<String>,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `auth.device.new`
    NewDevice {
        /// Who signed in.
        user_id: UserId,
        /// The browser (`User-Agent`, at most 256 characters).
        user_agent: Option<String>,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `auth.passkey.registered`, `auth.passkey.removed`
    PasskeyChanged {
        /// Whose passkey.
        user_id: UserId,
        /// The passkey.
        passkey_id: PasskeyId,
        /// Its name when the change happened.
        name: String,
        /// `hwk` (device-bound) or `swk` (synced).
        binding: String,
        /// Who made the change: `user:usr_…`.
        actor: String,
    },
    /// `auth.recovery.*`
    Recovery {
        /// Whose account.
        user_id: UserId,
        /// The recovery (absent for guardian changes).
        #[serde(skip_serializing_if = "Option::is_none")]
        recovery_id: Option<RecoveryId>,
        /// The guardian added, removed or approving.
        #[serde(skip_serializing_if = "Option::is_none")]
        guardian_id: Option<GuardianId>,
        /// Approvals so far and approvals needed (recovery steps only).
        #[serde(skip_serializing_if = "Option::is_none")]
        approvals: Option<u32>,
        /// Approvals the recovery needs.
        #[serde(skip_serializing_if = "Option::is_none")]
        approvals_needed: Option<u32>,
        /// When the new password can be set (`auth.recovery.waiting`), RFC 3339.
        #[serde(
            skip_serializing_if = "Option::is_none",
            with = "time::serde::rfc3339::option"
        )]
        ready_at: Option<OffsetDateTime>,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `security.suspicious_activity`
    SuspiciousActivity {
        /// The person concerned.
        user_id: UserId,
        /// What was seen: `webauthn_counter_regressed`.
        signal: String,
        /// The credential concerned (a passkey or second factor id), when one is.
        credential: Option<String>,
        /// The client address, through trusted proxies only.
        client_ip: Option<String>,
    },
    /// `auth.mfa.backup_codes.generated`
    BackupCodesGenerated {
        /// Whose codes.
        user_id: UserId,
        /// How many the new set holds.
        count: u32,
    },
    /// `tenant_user.*` and `admin.user.created`
    TenantUser {
        /// The person.
        user_id: UserId,
        /// Their address at the time of the event.
        email: String,
        /// Their status after the change.
        status: String,
        /// Who made the change: `client:app_…`, `operator:opt_…`, `user:usr_…` or `system`.
        actor: String,
    },
    /// `tenant_user.roles_changed`
    TenantUserRoles {
        /// The person.
        user_id: UserId,
        /// The tenant roles held after the change, sorted (empty once all are taken away).
        roles: Vec<String>,
        /// The tenant roles held before the change, sorted.
        previous_roles: Vec<String>,
        /// Who made the change: `client:app_…`, `operator:opt_…`, `user:usr_…` or `system`.
        actor: String,
    },
    /// `admin.application.*`
    Application {
        /// The application.
        client_id: ClientId,
        /// Its name.
        name: String,
        /// Who made the change.
        actor: String,
    },
    /// `admin.webhook.*`
    Webhook {
        /// The subscription.
        webhook_id: WebhookId,
        /// Its receiver URL.
        url: String,
        /// Who made the change (`system` when a 410 disabled it).
        actor: String,
    },
    /// `admin.api_resource.*`
    ApiResource {
        /// The resource.
        resource_id: ApiResourceId,
        /// Its identifier (the audience of its tokens).
        identifier: String,
        /// Its permissions after the change (empty once deleted).
        permissions: Vec<String>,
        /// Who made the change.
        actor: String,
    },
    /// `admin.policy.*`
    Policy {
        /// The policy.
        policy_id: PolicyId,
        /// Its name.
        name: String,
        /// Whether it applies (after the change; `false` once deleted).
        enabled: bool,
        /// Who made the change.
        actor: String,
    },
    /// `admin.role.*`
    Role {
        /// The role's key.
        role: String,
        /// `tenant` or `organization`.
        kind: String,
        /// Its permissions after the change, as `<resource identifier> <permission>` pairs
        /// (empty once deleted).
        permissions: Vec<String>,
        /// Who made the change.
        actor: String,
    },
    /// `admin.application.roles_changed`
    ApplicationRoles {
        /// The application.
        client_id: ClientId,
        /// The roles held after the change.
        roles: Vec<String>,
        /// The roles held before.
        previous_roles: Vec<String>,
        /// Who made the change.
        actor: String,
    },
    /// `org.created`, `org.updated`, `org.suspended`, `org.reactivated`, `org.deleted`
    Organization {
        /// The organization.
        organization_id: OrganizationId,
        /// Its slug after the change.
        slug: String,
        /// Its name after the change.
        name: String,
        /// Its status after the change.
        status: String,
        /// Who made the change.
        actor: String,
    },
    /// `org.member.added`, `org.member.role_changed`, `org.member.removed`
    OrgMember {
        /// The organization.
        organization_id: OrganizationId,
        /// The member.
        user_id: UserId,
        /// The roles held after the change (empty once removed).
        roles: Vec<String>,
        /// The roles held before the change (role changes and removals).
        #[serde(skip_serializing_if = "Option::is_none")]
        previous_roles: Option<Vec<String>>,
        /// Who made the change.
        actor: String,
    },
    /// `invitation.*`
    Invitation {
        /// The invitation.
        invitation_id: InvitationId,
        /// The address invited.
        email: String,
        /// The organization to join; `null` for the tenant itself.
        organization_id: Option<OrganizationId>,
        /// The roles given on acceptance.
        roles: Vec<String>,
        /// Where it stands after the change: `pending`, `accepted` or `revoked`.
        status: String,
        /// Who accepted it (`invitation.accepted`).
        #[serde(skip_serializing_if = "Option::is_none")]
        accepted_by: Option<UserId>,
        /// Who made the change: `client:app_…`, `user:usr_…` (the person accepting), ….
        actor: String,
    },
    /// `org.domain.added`, `org.domain.verified`, `org.domain.removed`
    OrgDomain {
        /// The organization.
        organization_id: OrganizationId,
        /// The claim.
        domain_id: DomainId,
        /// The domain name.
        name: String,
        /// `pending` or `verified`, as it was after the change.
        status: String,
        /// Whether verified sign-ups at the domain join the organization.
        auto_join: bool,
        /// Who made the change.
        actor: String,
    },
    /// `webhook.test`
    WebhookTest {
        /// The subscription the test was sent to.
        webhook_id: WebhookId,
        /// The delivery carrying it.
        delivery_id: DeliveryId,
        /// A fixed human-readable note.
        message: String,
    },
}

/// One event, as recorded in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Unique, time-ordered id (`evt_…`).
    pub id: EventId,
    /// The catalog type; always one this version emits.
    pub event_type: EventType,
    /// The tenant whose subscriptions may receive it.
    pub tenant_id: TenantId,
    /// When the change happened.
    pub occurred_at: OffsetDateTime,
    /// The payload.
    pub data: EventData,
}

#[derive(Serialize)]
struct Envelope<'a> {
    id: &'a EventId,
    #[serde(rename = "type")]
    event_type: EventType,
    tenant_id: &'a TenantId,
    #[serde(with = "time::serde::rfc3339")]
    occurred_at: OffsetDateTime,
    data: &'a EventData,
}

impl Event {
    /// An event of `event_type` for `tenant`, stamped now with a fresh id. The time is cut to
    /// whole microseconds, the finest every backend stores.
    pub fn new(
        clock: &dyn Clock,
        rng: &dyn Rng,
        tenant: &TenantId,
        event_type: EventType,
        data: EventData,
    ) -> Self {
        let now = clock.now();
        let occurred_at = now
            .replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .unwrap_or(now);
        Self {
            id: EventId::generate(clock, rng),
            event_type,
            tenant_id: tenant.clone(),
            occurred_at,
            data,
        }
    }

    /// The webhook body: the JSON envelope of CONTRACTS.md, serialised once.
    pub fn envelope(&self) -> String {
        let envelope = Envelope {
            id: &self.id,
            event_type: self.event_type,
            tenant_id: &self.tenant_id,
            occurred_at: self.occurred_at,
            data: &self.data,
        };
        // Every field is a string, number, bool or null: serialisation cannot fail.
        serde_json::to_string(&envelope).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, SeededRandom};
    use std::collections::HashSet;
    use time::Duration;

    #[test]
    fn the_catalog_has_every_name_of_the_spec_once_and_parses_exactly() {
        let names: HashSet<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names.len(), EventType::ALL.len(), "duplicate wire names");
        for spec_name in [
            "auth.login.success",
            "auth.login.failure",
            "auth.logout",
            "auth.token.issued",
            "auth.token.revoked",
            "auth.mfa.challenge",
            "auth.mfa.verify",
            "auth.adaptive_mfa.triggered",
            "tenant_user.invited",
            "tenant_user.activated",
            "tenant_user.suspended",
            "tenant_user.removed",
            "admin.user.created",
            "admin.agent.registered",
            "admin.delegation.revoked",
            "vault.credential.created",
            "vault.grant.revoked",
            "vault.credential.accessed",
            "wallet.tx.signed",
            "wallet.tx.rejected",
            "wallet.budget.exceeded",
            "chain.ownership.changed",
            "chain.reputation.updated",
            "chain.metadata.changed",
            "sso.configured",
            "sso.login.success",
            "sso.login.failed",
            "sso.user.provisioned",
            "org.created",
            "org.member.added",
            "org.member.role_changed",
            "commerce.payment.pending",
            "commerce.payment.succeeded",
            "commerce.payment.failed",
            "commerce.payment.refunded",
            "commerce.settlement.created",
            "commerce.settlement.held",
            "commerce.settlement.released",
            "commerce.dispute.opened",
            "commerce.dispute.closed",
            "commerce.payout.submitted",
            "commerce.payout.paid",
            "commerce.payout.failed",
            "commerce.statement.created",
            "security.brute_force.detected",
            "security.refresh_token.reuse",
            "security.suspicious_activity",
        ] {
            assert!(names.contains(spec_name), "{spec_name} missing");
        }
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(*t));
            assert!(!t.description().is_empty(), "{t} has no description");
        }
        for hostile in [
            "",
            "AUTH.LOGIN.SUCCESS",
            "auth.login.success ",
            "auth.*",
            "*",
            "auth.login",
            "auth.login.success\0",
        ] {
            assert_eq!(EventType::parse(hostile), None, "{hostile:?}");
        }
    }

    #[test]
    fn the_envelope_carries_id_type_tenant_time_and_typed_data() {
        let clock = ManualClock::new(
            OffsetDateTime::UNIX_EPOCH + Duration::days(20_000) + Duration::nanoseconds(1_234_567),
        );
        let rng = SeededRandom::new(9);
        let tenant = TenantId::generate(&clock, &rng);
        let user = UserId::generate(&clock, &rng);
        let event = Event::new(
            &clock,
            &rng,
            &tenant,
            EventType::TenantUserSuspended,
            EventData::TenantUser {
                user_id: user.clone(),
                email: "ada@example.com".into(),
                status: "suspended".into(),
                actor: "client:app_x".into(),
            },
        );
        assert_eq!(event.occurred_at.nanosecond() % 1_000, 0);
        let body: serde_json::Value = serde_json::from_str(&event.envelope()).unwrap();
        assert_eq!(body["id"], event.id.as_str());
        assert!(body["id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!(body["type"], "tenant_user.suspended");
        assert_eq!(body["tenant_id"], tenant.as_str());
        assert_eq!(body["occurred_at"], "2024-10-04T00:00:00.001234Z");
        assert_eq!(body["data"]["user_id"], user.as_str());
        assert_eq!(body["data"]["status"], "suspended");
        assert_eq!(body.as_object().unwrap().len(), 5);
    }

    #[test]
    fn tenant_role_changes_carry_the_roles_before_and_after() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(11);
        let tenant = TenantId::generate(&clock, &rng);
        let user = UserId::generate(&clock, &rng);
        let event = Event::new(
            &clock,
            &rng,
            &tenant,
            EventType::TenantUserRolesChanged,
            EventData::TenantUserRoles {
                user_id: user.clone(),
                roles: vec![],
                previous_roles: vec!["tenant_admin".into()],
                actor: "user:usr_x".into(),
            },
        );
        let body: serde_json::Value = serde_json::from_str(&event.envelope()).unwrap();
        assert_eq!(body["type"], "tenant_user.roles_changed");
        assert_eq!(
            body["data"],
            serde_json::json!({
                "user_id": user.as_str(),
                "roles": [],
                "previous_roles": ["tenant_admin"],
                "actor": "user:usr_x",
            })
        );
    }

    #[test]
    fn event_types_serialise_as_their_wire_names() {
        let json =
            serde_json::to_string(&[EventType::LoginSuccess, EventType::WebhookTest]).unwrap();
        assert_eq!(json, r#"["auth.login.success","webhook.test"]"#);
        let back: Vec<EventType> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, vec![EventType::LoginSuccess, EventType::WebhookTest]);
        assert!(serde_json::from_str::<EventType>(r#""auth.nope""#).is_err());
    }
}
