//! The typed payload (`data`) of every event type this version emits, and the closed reasons
//! some payloads carry.

use crate::{
    AgentId, ApiKeyId, ApiResourceId, ClientId, DelegationId, DeliveryId, DomainId, FactorId,
    GuardianId, InvitationId, OrganizationId, PasskeyId, PolicyId, RecoveryId, RefreshFamilyId,
    SessionId, UserId, WebhookId,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

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
    /// `admin.api_key.*`
    ApiKey {
        /// The key (`admin.api_key.rotated`: the new key).
        api_key_id: ApiKeyId,
        /// Its name.
        name: String,
        /// The scopes it holds.
        scopes: Vec<String>,
        /// When it expires; `null`: never.
        #[serde(with = "time::serde::rfc3339::option")]
        expires_at: Option<OffsetDateTime>,
        /// The key it replaced (`admin.api_key.rotated` only).
        #[serde(skip_serializing_if = "Option::is_none")]
        rotated_from: Option<ApiKeyId>,
        /// Whom it acts as (`usr_…`, `agt_…`), for a key that acts at an API; absent for a
        /// management key.
        #[serde(skip_serializing_if = "Option::is_none")]
        subject: Option<String>,
        /// The API resource it acts at, with `subject`.
        #[serde(skip_serializing_if = "Option::is_none")]
        resource_id: Option<ApiResourceId>,
        /// Who made the change.
        actor: String,
    },
    /// `admin.agent.*`
    Agent {
        /// The agent.
        agent_id: AgentId,
        /// Its name.
        name: String,
        /// Who answers for it (`usr_…` or `app_…`).
        owner: String,
        /// Its status after the change: `active`, `suspended` or `revoked`.
        status: String,
        /// The scopes it may be granted.
        allowed_scopes: Vec<String>,
        /// Who made the change.
        actor: String,
    },
    /// `admin.delegation.revoked`
    Delegation {
        /// The delegation.
        delegation_id: DelegationId,
        /// The person who granted it.
        user_id: UserId,
        /// The agent it let act for them.
        agent_id: AgentId,
        /// The permissions it granted.
        scopes: Vec<String>,
        /// The APIs it granted them at.
        resources: Vec<String>,
        /// Who revoked it: `user:usr_…` (the person) or an administrator.
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
    /// `sso.configured` (also when a connection is replaced or removed: `removed` says which)
    SsoConfigured {
        /// The organization.
        organization_id: OrganizationId,
        /// The upstream issuer.
        issuer: String,
        /// Whether password sign-in is refused at the organization's domains.
        enforced: bool,
        /// Whether the connection was removed.
        removed: bool,
        /// Who made the change.
        actor: String,
    },
    /// `sso.login.success`, `sso.user.provisioned`
    SsoSignedIn {
        /// The organization whose provider vouched.
        organization_id: OrganizationId,
        /// The upstream issuer.
        issuer: String,
        /// The person.
        user_id: UserId,
        /// The session created (`sso.login.success`).
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<SessionId>,
    },
    /// `sso.login.failed`
    SsoFailed {
        /// The organization whose provider was asked.
        organization_id: OrganizationId,
        /// The upstream issuer.
        issuer: String,
        /// Why, in a closed vocabulary: `upstream_error`, `token_exchange`, `id_token`,
        /// `email_unverified`, `domain_not_owned`, `account_unavailable`.
        reason: String,
    },
    /// `social.configured` (also when a provider is changed or removed: `removed` says which)
    SocialConfigured {
        /// The provider's slug.
        provider: String,
        /// Its preset.
        preset: String,
        /// Whether it is offered on the sign-in page.
        enabled: bool,
        /// Whether it was removed.
        removed: bool,
        /// Who made the change.
        actor: String,
    },
    /// `social.login.success`, `social.user.provisioned`
    SocialSignedIn {
        /// The provider's slug.
        provider: String,
        /// The person.
        user_id: UserId,
        /// The session created (`social.login.success`).
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<SessionId>,
    },
    /// `social.login.failed`
    SocialFailed {
        /// The provider's slug.
        provider: String,
        /// Why, in a closed vocabulary: `upstream_error`, `token_exchange`, `identity`,
        /// `email_unverified`, `account_exists`, `already_linked`, `account_unavailable`.
        reason: String,
    },
    /// `social.account.linked`, `social.account.unlinked`
    SocialLinked {
        /// The provider's slug.
        provider: String,
        /// The person.
        user_id: UserId,
        /// Who made the change: `self`, or the management API caller.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, SeededRandom};

    #[test]
    fn an_api_key_event_names_its_subject_and_api_only_when_it_has_them() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(3);
        let key = ApiKeyId::generate(&clock, &rng);
        let api = ApiResourceId::generate(&clock, &rng);
        let event = |subject: Option<&str>, resource_id: Option<ApiResourceId>| {
            serde_json::to_value(EventData::ApiKey {
                api_key_id: key.clone(),
                name: "k".into(),
                scopes: vec!["trips:read".into()],
                expires_at: None,
                rotated_from: None,
                subject: subject.map(str::to_owned),
                resource_id,
                actor: "client:app_x".into(),
            })
            .unwrap_or_default()
        };
        let management = event(None, None);
        assert!(management.get("subject").is_none() && management.get("resource_id").is_none());
        let person = event(Some("usr_x"), Some(api.clone()));
        assert_eq!(person["subject"], "usr_x");
        assert_eq!(person["resource_id"], api.as_str());
    }
}
