//! The catalog of event types: dotted names (spec "Events"), and which of them this version
//! emits (only those are advertised and may be subscribed to).

use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// An API key was created (its scopes, never the key).
    AdminApiKeyCreated = "admin.api_key.created", emitted: true;
    /// An API key was revoked: it stops working at once.
    AdminApiKeyRevoked = "admin.api_key.revoked", emitted: true;
    /// An API key was rotated: a new key replaced it, the old one works until the overlap ends.
    AdminApiKeyRotated = "admin.api_key.rotated", emitted: true;
    /// An agent was registered.
    AdminAgentRegistered = "admin.agent.registered", emitted: true;
    /// An agent's name, keys, allowances or metadata changed, or it was suspended or
    /// reactivated.
    AdminAgentUpdated = "admin.agent.updated", emitted: true;
    /// An agent was revoked, for good: it can never be changed or reactivated.
    AdminAgentRevoked = "admin.agent.revoked", emitted: true;
    /// A delegation a person granted an agent was revoked, by the person or an administrator:
    /// the agent can no longer act for them with it.
    AdminDelegationRevoked = "admin.delegation.revoked", emitted: true;
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
    SsoConfigured = "sso.configured", emitted: true;
    /// A person signed in through enterprise SSO.
    SsoLoginSuccess = "sso.login.success", emitted: true;
    /// An enterprise SSO sign-in failed.
    SsoLoginFailed = "sso.login.failed", emitted: true;
    /// Enterprise SSO provisioned a person.
    SsoUserProvisioned = "sso.user.provisioned", emitted: true;
    /// A social provider was configured, changed or removed for the tenant.
    SocialConfigured = "social.configured", emitted: true;
    /// A person signed in through a social provider.
    SocialLoginSuccess = "social.login.success", emitted: true;
    /// A social sign-in failed.
    SocialLoginFailed = "social.login.failed", emitted: true;
    /// A social sign-in created a person.
    SocialUserProvisioned = "social.user.provisioned", emitted: true;
    /// A person connected an upstream account to theirs.
    SocialAccountLinked = "social.account.linked", emitted: true;
    /// A person (or an administrator) disconnected an upstream account.
    SocialAccountUnlinked = "social.account.unlinked", emitted: true;
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
