//! The identity, grant, pushed-request, device and registration ports of [`FaultyTx`]: plain delegation, except that the writes the
//! user use cases make can be made to fail by name (see `FaultyStore::fail_on`).

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{
    AuthorizationCode, BackchannelPoll, BackchannelRequest, BackchannelRequestId, ClientId,
    Consent, DeviceAuthorization, DevicePoll, DeviceStatus, Email, Interaction, InteractionId,
    PushedRequest, RefreshFamily, RefreshFamilyId, RefreshToken, SecretHash, Session, SessionId,
    TenantId, User, UserId, UserToken, UserTokenPurpose,
};
use svc_store::{
    BackchannelReads, BackchannelWrites, CodeRedemption, CounterState, CounterWrites, DeviceReads,
    DeviceWrites, GrantReads, GrantWrites, PushedRequestWrites, RefreshRotation, SessionReads,
    SessionWrites, StoreError, UpdateOutcome, UserFilter, UserReads, UserTokenWrites, UserWrites,
};
use time::OffsetDateTime;

#[async_trait]
impl UserReads for FaultyTx {
    async fn user(&mut self, tenant: &TenantId, id: &UserId) -> Result<Option<User>, StoreError> {
        self.inner.user(tenant, id).await
    }
    async fn user_by_email(
        &mut self,
        tenant: &TenantId,
        email: &Email,
    ) -> Result<Option<User>, StoreError> {
        self.inner.user_by_email(tenant, email).await
    }
    async fn list_users(
        &mut self,
        tenant: &TenantId,
        filter: &UserFilter,
        after: Option<&UserId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<User>, StoreError> {
        self.inner
            .list_users(tenant, filter, after, order, limit)
            .await
    }
}

#[async_trait]
impl UserWrites for FaultyTx {
    async fn insert_user(&mut self, user: &User) -> Result<(), StoreError> {
        self.check("insert_user")?;
        self.inner.insert_user(user).await
    }
    async fn update_user_if_unchanged(
        &mut self,
        user: &User,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.check("update_user")?;
        self.inner.update_user_if_unchanged(user, read_at).await
    }
}

#[async_trait]
impl SessionReads for FaultyTx {
    async fn session_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<Session>, StoreError> {
        self.inner.session_by_secret(tenant, secret).await
    }
    async fn session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
    ) -> Result<Option<Session>, StoreError> {
        self.inner.session(tenant, id).await
    }
    async fn live_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<Session>, StoreError> {
        self.inner.live_sessions(tenant, user, now).await
    }
    async fn login_history(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        after: Option<&svc_domain::LoginRecordId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<svc_domain::LoginRecord>, StoreError> {
        self.inner
            .login_history(tenant, user, after, order, limit)
            .await
    }
}

#[async_trait]
impl SessionWrites for FaultyTx {
    async fn insert_session(&mut self, session: &Session) -> Result<(), StoreError> {
        self.inner.insert_session(session).await
    }
    async fn insert_login_record(
        &mut self,
        record: &svc_domain::LoginRecord,
    ) -> Result<(), StoreError> {
        self.check("insert_login_record")?;
        self.inner.insert_login_record(record).await
    }

    async fn purge_login_history(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        self.check("purge_login_history")?;
        self.inner.purge_login_history(before, limit).await
    }
    async fn touch_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner.touch_session(tenant, id, now).await
    }
    async fn revoke_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.check("revoke_session")?;
        self.inner.revoke_session(tenant, id, now).await
    }
    async fn revoke_user_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        self.check("revoke_user_sessions")?;
        self.inner.revoke_user_sessions(tenant, user, now).await
    }
}

#[async_trait]
impl UserTokenWrites for FaultyTx {
    async fn insert_user_token(&mut self, token: &UserToken) -> Result<(), StoreError> {
        self.check("insert_user_token")?;
        self.inner.insert_user_token(token).await
    }
    async fn consume_user_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<UserToken>, StoreError> {
        self.inner
            .consume_user_token(tenant, hash, purpose, now)
            .await
    }
    async fn invalidate_user_tokens(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        self.inner
            .invalidate_user_tokens(tenant, user, purpose, now)
            .await
    }
}

#[async_trait]
impl CounterWrites for FaultyTx {
    async fn hit_counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
        window: time::Duration,
    ) -> Result<CounterState, StoreError> {
        self.inner.hit_counter(key, now, window).await
    }
    async fn counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<CounterState>, StoreError> {
        self.inner.counter(key, now).await
    }
    async fn clear_counter(&mut self, key: &str) -> Result<(), StoreError> {
        self.inner.clear_counter(key).await
    }
}

#[async_trait]
impl GrantReads for FaultyTx {
    async fn interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
        now: OffsetDateTime,
    ) -> Result<Option<Interaction>, StoreError> {
        self.inner.interaction(tenant, id, now).await
    }
    async fn consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<Option<Consent>, StoreError> {
        self.inner.consent(tenant, user, client).await
    }
    async fn consent_by_subject(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        subject: &str,
    ) -> Result<Option<Consent>, StoreError> {
        self.inner.consent_by_subject(tenant, client, subject).await
    }
    async fn refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<(RefreshToken, RefreshFamily)>, StoreError> {
        self.inner.refresh_token(tenant, hash).await
    }
    async fn access_token_revoked(
        &mut self,
        tenant: &TenantId,
        jti: &str,
    ) -> Result<bool, StoreError> {
        self.inner.access_token_revoked(tenant, jti).await
    }
    async fn access_tokens_revoked(
        &mut self,
        tenant: &TenantId,
        now: time::OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        self.inner.access_tokens_revoked(tenant, now, limit).await
    }
}

#[async_trait]
impl GrantWrites for FaultyTx {
    async fn insert_interaction(&mut self, interaction: &Interaction) -> Result<(), StoreError> {
        self.inner.insert_interaction(interaction).await
    }
    async fn delete_interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_interaction(tenant, id).await
    }
    async fn upsert_consent(&mut self, consent: &Consent) -> Result<(), StoreError> {
        self.inner.upsert_consent(consent).await
    }
    async fn delete_consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_consent(tenant, user, client).await
    }
    async fn insert_code(&mut self, code: &AuthorizationCode) -> Result<(), StoreError> {
        self.inner.insert_code(code).await
    }
    async fn redeem_code(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<CodeRedemption, StoreError> {
        self.inner.redeem_code(tenant, hash, now).await
    }
    async fn record_code_issuance(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        family: Option<&RefreshFamilyId>,
        access_jti: &str,
        access_expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .record_code_issuance(tenant, hash, family, access_jti, access_expires_at)
            .await
    }
    async fn insert_refresh_family(&mut self, family: &RefreshFamily) -> Result<(), StoreError> {
        self.inner.insert_refresh_family(family).await
    }
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), StoreError> {
        self.inner.insert_refresh_token(token).await
    }
    async fn rotate_refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<RefreshRotation, StoreError> {
        self.inner.rotate_refresh_token(tenant, hash, now).await
    }
    async fn revoke_refresh_family(
        &mut self,
        tenant: &TenantId,
        id: &RefreshFamilyId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<bool, StoreError> {
        self.inner
            .revoke_refresh_family(tenant, id, now, reason)
            .await
    }
    async fn revoke_user_refresh_families(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<u64, StoreError> {
        self.check("revoke_user_refresh_families")?;
        self.inner
            .revoke_user_refresh_families(tenant, user, now, reason)
            .await
    }
    async fn revoke_access_token(
        &mut self,
        tenant: &TenantId,
        jti: &str,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .revoke_access_token(tenant, jti, expires_at)
            .await
    }
    async fn purge_expired_grants_at_most(
        &mut self,
        now: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        self.inner.purge_expired_grants_at_most(now, limit).await
    }
}

#[async_trait]
impl PushedRequestWrites for FaultyTx {
    async fn insert_pushed_request(&mut self, request: &PushedRequest) -> Result<(), StoreError> {
        self.inner.insert_pushed_request(request).await
    }
    async fn take_pushed_request(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PushedRequest>, StoreError> {
        self.inner
            .take_pushed_request(tenant, client, hash, now)
            .await
    }
}

#[async_trait]
impl DeviceReads for FaultyTx {
    async fn pending_device_authorization(
        &mut self,
        tenant: &TenantId,
        user_code: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<DeviceAuthorization>, StoreError> {
        self.inner
            .pending_device_authorization(tenant, user_code, now)
            .await
    }
}

#[async_trait]
impl DeviceWrites for FaultyTx {
    async fn insert_device_authorization(
        &mut self,
        authorization: &DeviceAuthorization,
    ) -> Result<(), StoreError> {
        self.inner.insert_device_authorization(authorization).await
    }
    async fn decide_device_authorization(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        decision: DeviceStatus,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Option<DeviceAuthorization>, StoreError> {
        self.inner
            .decide_device_authorization(tenant, hash, decision, user, now)
            .await
    }
    async fn poll_device_authorization(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        client: &ClientId,
        now: OffsetDateTime,
    ) -> Result<Option<DevicePoll>, StoreError> {
        self.inner
            .poll_device_authorization(tenant, hash, client, now)
            .await
    }
}

#[async_trait]
impl svc_store::RegistrationReads for FaultyTx {
    async fn registration_policy(
        &mut self,
        tenant: &TenantId,
    ) -> Result<svc_domain::RegistrationPolicy, StoreError> {
        self.inner.registration_policy(tenant).await
    }
    async fn metadata_documents_accepted(&mut self, tenant: &TenantId) -> Result<bool, StoreError> {
        self.inner.metadata_documents_accepted(tenant).await
    }
    async fn statement_issuers(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<svc_domain::StatementIssuer>, StoreError> {
        self.inner.statement_issuers(tenant).await
    }
    async fn registration_token(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
    ) -> Result<Option<SecretHash>, StoreError> {
        self.inner.registration_token(tenant, client).await
    }
    async fn initial_access_tokens(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<svc_domain::InitialAccessToken>, StoreError> {
        self.inner.initial_access_tokens(tenant).await
    }
}

#[async_trait]
impl BackchannelReads for FaultyTx {
    async fn pending_backchannel_requests(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<BackchannelRequest>, StoreError> {
        self.inner
            .pending_backchannel_requests(tenant, user, now)
            .await
    }
}

#[async_trait]
impl svc_store::RegistrationWrites for FaultyTx {
    async fn set_registration_policy(
        &mut self,
        tenant: &TenantId,
        policy: svc_domain::RegistrationPolicy,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .set_registration_policy(tenant, policy, now)
            .await
    }
    async fn set_metadata_documents_accepted(
        &mut self,
        tenant: &TenantId,
        accepted: bool,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .set_metadata_documents_accepted(tenant, accepted, now)
            .await
    }
    async fn set_statement_issuers(
        &mut self,
        tenant: &TenantId,
        issuers: &[svc_domain::StatementIssuer],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner.set_statement_issuers(tenant, issuers, now).await
    }
    async fn insert_registration_token(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .insert_registration_token(tenant, client, hash, now)
            .await
    }
    async fn insert_initial_access_token(
        &mut self,
        token: &svc_domain::InitialAccessToken,
    ) -> Result<(), StoreError> {
        self.inner.insert_initial_access_token(token).await
    }
    async fn spend_initial_access_token(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::InitialAccessTokenId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner.spend_initial_access_token(tenant, id, now).await
    }
    async fn delete_initial_access_token(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::InitialAccessTokenId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_initial_access_token(tenant, id).await
    }
}

#[async_trait]
impl BackchannelWrites for FaultyTx {
    async fn insert_backchannel_request(
        &mut self,
        request: &BackchannelRequest,
    ) -> Result<(), StoreError> {
        self.inner.insert_backchannel_request(request).await
    }
    async fn decide_backchannel_request(
        &mut self,
        tenant: &TenantId,
        id: &BackchannelRequestId,
        user: &UserId,
        decision: DeviceStatus,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelRequest>, StoreError> {
        self.inner
            .decide_backchannel_request(tenant, id, user, decision, now)
            .await
    }
    async fn poll_backchannel_request(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        requester: &str,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelPoll>, StoreError> {
        self.inner
            .poll_backchannel_request(tenant, hash, requester, now)
            .await
    }
    async fn take_approved_agent_request(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        agent: &svc_domain::AgentId,
    ) -> Result<Option<BackchannelRequest>, StoreError> {
        self.inner
            .take_approved_agent_request(tenant, hash, agent)
            .await
    }
}

#[async_trait]
impl svc_store::ScimReads for FaultyTx {
    async fn scim_token_by_hash(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<svc_domain::ScimToken>, StoreError> {
        self.inner.scim_token_by_hash(tenant, hash).await
    }
    async fn scim_tokens(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<svc_domain::ScimToken>, StoreError> {
        self.inner.scim_tokens(tenant).await
    }
    async fn scim_profile(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Option<svc_domain::ScimProfile>, StoreError> {
        self.inner.scim_profile(tenant, user).await
    }
    async fn scim_users(
        &mut self,
        tenant: &TenantId,
        organization: Option<&svc_domain::OrganizationId>,
        filter: Option<&svc_store::ScimFilter>,
        sort: Option<&svc_store::ScimSort>,
        offset: u64,
        limit: u32,
    ) -> Result<svc_store::ScimPage, StoreError> {
        self.inner
            .scim_users(tenant, organization, filter, sort, offset, limit)
            .await
    }
}

#[async_trait]
impl svc_store::ScimWrites for FaultyTx {
    async fn insert_scim_token(&mut self, token: &svc_domain::ScimToken) -> Result<(), StoreError> {
        self.inner.insert_scim_token(token).await
    }
    async fn revoke_scim_token(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ScimTokenId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner.revoke_scim_token(tenant, id, now).await
    }
    async fn set_scim_profile(
        &mut self,
        tenant: &TenantId,
        profile: &svc_domain::ScimProfile,
    ) -> Result<(), StoreError> {
        self.inner.set_scim_profile(tenant, profile).await
    }
    async fn delete_scim_profile(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_scim_profile(tenant, user).await
    }
}

#[async_trait]
impl svc_store::ScimGroupReads for FaultyTx {
    async fn scim_groups(
        &mut self,
        tenant: &TenantId,
        organization: Option<&svc_domain::OrganizationId>,
        filter: Option<&svc_store::ScimFilter<svc_store::ScimGroupAttr>>,
        sort: Option<&svc_store::ScimSort<svc_store::ScimGroupAttr>>,
        offset: u64,
        limit: u32,
    ) -> Result<svc_store::ScimGroupPage, StoreError> {
        self.inner
            .scim_groups(tenant, organization, filter, sort, offset, limit)
            .await
    }
    async fn scim_groups_of_users(
        &mut self,
        tenant: &TenantId,
        organization: Option<&svc_domain::OrganizationId>,
        users: &[UserId],
    ) -> Result<Vec<svc_store::ScimGroupMembership>, StoreError> {
        self.inner
            .scim_groups_of_users(tenant, organization, users)
            .await
    }
    async fn scim_group_roles(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ScimGroupId,
    ) -> Result<std::collections::BTreeSet<svc_domain::RoleKey>, StoreError> {
        self.inner.scim_group_roles(tenant, id).await
    }
}

#[async_trait]
impl svc_store::ScimGroupWrites for FaultyTx {
    async fn insert_scim_group(&mut self, group: &svc_domain::ScimGroup) -> Result<(), StoreError> {
        self.inner.insert_scim_group(group).await
    }
    async fn update_scim_group(
        &mut self,
        group: &svc_domain::ScimGroup,
    ) -> Result<bool, StoreError> {
        self.inner.update_scim_group(group).await
    }
    async fn set_scim_group_members(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ScimGroupId,
        members: &[UserId],
    ) -> Result<(), StoreError> {
        self.inner.set_scim_group_members(tenant, id, members).await
    }
    async fn set_scim_group_roles(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ScimGroupId,
        roles: &std::collections::BTreeSet<svc_domain::RoleKey>,
        now: time::OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .set_scim_group_roles(tenant, id, roles, now)
            .await
    }
    async fn delete_scim_group(
        &mut self,
        tenant: &TenantId,
        organization: Option<&svc_domain::OrganizationId>,
        id: &svc_domain::ScimGroupId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_scim_group(tenant, organization, id).await
    }
}

#[async_trait]
impl svc_store::AgentReads for FaultyTx {
    async fn agent(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::AgentId,
    ) -> Result<Option<svc_domain::Agent>, StoreError> {
        self.inner.agent(tenant, id).await
    }
    async fn list_agents(
        &mut self,
        tenant: &TenantId,
        after: Option<&svc_domain::AgentId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<svc_domain::Agent>, StoreError> {
        self.inner.list_agents(tenant, after, order, limit).await
    }
    async fn agents_owned_by(
        &mut self,
        tenant: &TenantId,
        owner: &svc_domain::AgentOwner,
        limit: u32,
    ) -> Result<Vec<svc_domain::Agent>, StoreError> {
        self.inner.agents_owned_by(tenant, owner, limit).await
    }
    async fn count_agents(&mut self, tenant: &TenantId) -> Result<u64, StoreError> {
        self.inner.count_agents(tenant).await
    }
}

#[async_trait]
impl svc_store::AgentWrites for FaultyTx {
    async fn insert_agent(&mut self, agent: &svc_domain::Agent) -> Result<(), StoreError> {
        self.inner.insert_agent(agent).await
    }
    async fn update_agent_if_unchanged(
        &mut self,
        agent: &svc_domain::Agent,
        read_at: OffsetDateTime,
    ) -> Result<svc_store::UpdateOutcome, StoreError> {
        self.inner.update_agent_if_unchanged(agent, read_at).await
    }
}

#[async_trait]
impl svc_store::DelegationReads for FaultyTx {
    async fn delegation(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::DelegationId,
    ) -> Result<Option<svc_domain::Delegation>, StoreError> {
        self.inner.delegation(tenant, id).await
    }
    async fn delegations_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        agent: Option<&svc_domain::AgentId>,
    ) -> Result<Vec<svc_domain::Delegation>, StoreError> {
        self.inner.delegations_of_user(tenant, user, agent).await
    }
    async fn delegations_of_agent(
        &mut self,
        tenant: &TenantId,
        agent: &svc_domain::AgentId,
    ) -> Result<Vec<svc_domain::Delegation>, StoreError> {
        self.inner.delegations_of_agent(tenant, agent).await
    }
}

#[async_trait]
impl svc_store::DelegationWrites for FaultyTx {
    async fn insert_delegation(
        &mut self,
        delegation: &svc_domain::Delegation,
    ) -> Result<(), StoreError> {
        self.inner.insert_delegation(delegation).await
    }
    async fn revoke_delegation(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &svc_domain::DelegationId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner.revoke_delegation(tenant, user, id, at).await
    }
}

#[async_trait]
impl svc_store::ApiKeyReads for FaultyTx {
    async fn api_key_by_hash(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<svc_domain::ApiKey>, StoreError> {
        self.inner.api_key_by_hash(tenant, hash).await
    }
    async fn api_key(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ApiKeyId,
    ) -> Result<Option<svc_domain::ApiKey>, StoreError> {
        self.inner.api_key(tenant, id).await
    }
    async fn api_keys(
        &mut self,
        tenant: &TenantId,
        after: Option<&svc_domain::ApiKeyId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<svc_domain::ApiKey>, StoreError> {
        self.inner.api_keys(tenant, after, order, limit).await
    }
    async fn count_live_api_keys(
        &mut self,
        tenant: &TenantId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        self.inner.count_live_api_keys(tenant, now).await
    }
    async fn subject_api_keys(
        &mut self,
        tenant: &TenantId,
        subject: &svc_domain::KeySubject,
        limit: u32,
    ) -> Result<Vec<svc_domain::ApiKey>, StoreError> {
        self.inner.subject_api_keys(tenant, subject, limit).await
    }
    async fn count_live_subject_api_keys(
        &mut self,
        tenant: &TenantId,
        subject: &svc_domain::KeySubject,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        self.inner
            .count_live_subject_api_keys(tenant, subject, now)
            .await
    }
    async fn api_key_policy(
        &mut self,
        tenant: &TenantId,
    ) -> Result<svc_domain::ApiKeyPolicy, StoreError> {
        self.inner.api_key_policy(tenant).await
    }
}

#[async_trait]
impl svc_store::ApiKeyWrites for FaultyTx {
    async fn insert_api_key(&mut self, key: &svc_domain::ApiKey) -> Result<(), StoreError> {
        self.inner.insert_api_key(key).await
    }
    async fn revoke_api_key(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ApiKeyId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner.revoke_api_key(tenant, id, now).await
    }
    async fn expire_api_key(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ApiKeyId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner.expire_api_key(tenant, id, at).await
    }
    async fn touch_api_key(
        &mut self,
        tenant: &TenantId,
        id: &svc_domain::ApiKeyId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner.touch_api_key(tenant, id, at).await
    }
    async fn set_api_key_policy(
        &mut self,
        tenant: &TenantId,
        policy: &svc_domain::ApiKeyPolicy,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner.set_api_key_policy(tenant, policy, now).await
    }
}
