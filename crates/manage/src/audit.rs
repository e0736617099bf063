//! The audit log: who did what to which record, from where. Every management write appends its
//! entry inside the same write transaction as the change, so the log never claims a change that
//! rolled back and never misses one that committed.

use crate::page::split_page;
use crate::{Actor, ManageContext, ManageError, RequestMeta, clamp_limit};
use serde::Serialize;
use svc_domain::{AuditEntry, AuditEntryId, AuditOutcome, TenantId};
use svc_store::{AuditFilter, Order, WriteTx};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// The audited actions, dotted `<record>.<past-tense verb>`.
pub mod action {
    /// A tenant (and its management application) was created.
    pub const TENANT_CREATED: &str = "tenant.created";
    /// A tenant's display name changed.
    pub const TENANT_UPDATED: &str = "tenant.updated";
    /// A tenant was suspended.
    pub const TENANT_SUSPENDED: &str = "tenant.suspended";
    /// A suspended tenant was reactivated.
    pub const TENANT_REACTIVATED: &str = "tenant.reactivated";
    /// A tenant and everything it owns were deleted (its audit entries stay).
    pub const TENANT_DELETED: &str = "tenant.deleted";
    /// An application was registered.
    pub const APPLICATION_CREATED: &str = "application.created";
    /// An application's configuration was replaced.
    pub const APPLICATION_UPDATED: &str = "application.updated";
    /// An application was deleted.
    pub const APPLICATION_DELETED: &str = "application.deleted";
    /// An application's client secret was replaced.
    pub const APPLICATION_SECRET_ROTATED: &str = "application.secret_rotated";
    /// An application's tenant roles changed (target: the application).
    pub const APPLICATION_ROLES_CHANGED: &str = "application.roles_changed";
    /// A control-plane operator token was created.
    pub const OPERATOR_TOKEN_CREATED: &str = "operator_token.created";
    /// A tenant user was created (with a password, or pre-provisioned without one).
    pub const TENANT_USER_CREATED: &str = "tenant_user.created";
    /// A tenant user was created and sent an invitation.
    pub const TENANT_USER_INVITED: &str = "tenant_user.invited";
    /// A tenant user's address, names, verification flag or password changed.
    pub const TENANT_USER_UPDATED: &str = "tenant_user.updated";
    /// A tenant user was suspended (sessions and refresh tokens revoked).
    pub const TENANT_USER_SUSPENDED: &str = "tenant_user.suspended";
    /// A suspended tenant user was reactivated.
    pub const TENANT_USER_REACTIVATED: &str = "tenant_user.reactivated";
    /// A tenant user was removed (kept as a tombstone; address freed).
    pub const TENANT_USER_REMOVED: &str = "tenant_user.removed";
    /// One session of a tenant user was revoked by an administrator.
    pub const TENANT_USER_SESSION_REVOKED: &str = "tenant_user.session_revoked";
    /// Every second factor and backup code of a tenant user was removed by an administrator.
    pub const TENANT_USER_SECOND_FACTORS_RESET: &str = "tenant_user.second_factors_reset";
    /// A tenant user's tenant roles (e.g. `tenant_admin`) were replaced (target: the user).
    pub const TENANT_USER_ROLES_CHANGED: &str = "tenant_user.roles_changed";
    /// An administrator removed a tenant user's link to a social provider (target: the user).
    pub const TENANT_USER_SOCIAL_LINK_REMOVED: &str = "tenant_user.social_link_removed";
    /// An organization was created.
    pub const ORGANIZATION_CREATED: &str = "organization.created";
    /// An organization's name, slug or metadata changed.
    pub const ORGANIZATION_UPDATED: &str = "organization.updated";
    /// An organization was suspended.
    pub const ORGANIZATION_SUSPENDED: &str = "organization.suspended";
    /// A suspended organization was reactivated.
    pub const ORGANIZATION_REACTIVATED: &str = "organization.reactivated";
    /// An organization was deleted with its memberships.
    pub const ORGANIZATION_DELETED: &str = "organization.deleted";
    /// A person was added to an organization (target: the organization).
    pub const ORGANIZATION_MEMBER_ADDED: &str = "organization.member_added";
    /// The roles of an organization's member changed (target: the organization).
    pub const ORGANIZATION_MEMBER_ROLES_CHANGED: &str = "organization.member_roles_changed";
    /// A person was removed from an organization (target: the organization).
    pub const ORGANIZATION_MEMBER_REMOVED: &str = "organization.member_removed";
    /// An organization claimed a domain (target: the organization).
    pub const ORGANIZATION_DOMAIN_ADDED: &str = "organization.domain_added";
    /// A domain claim's auto-join settings changed (target: the organization).
    pub const ORGANIZATION_DOMAIN_UPDATED: &str = "organization.domain_updated";
    /// An organization proved it controls a domain it claimed (target: the organization).
    pub const ORGANIZATION_DOMAIN_VERIFIED: &str = "organization.domain_verified";
    /// A domain claim was removed (target: the organization).
    pub const ORGANIZATION_DOMAIN_REMOVED: &str = "organization.domain_removed";
    /// An organization's single sign-on connection was configured or replaced (target: the
    /// organization).
    pub const ORGANIZATION_SSO_CONFIGURED: &str = "organization.sso_configured";
    /// An organization's single sign-on connection was removed (target: the organization).
    pub const ORGANIZATION_SSO_REMOVED: &str = "organization.sso_removed";
    /// A social sign-in provider was configured or replaced (target: its slug).
    pub const SOCIAL_PROVIDER_CONFIGURED: &str = "social_provider.configured";
    /// A social sign-in provider was removed, with its links (target: its slug).
    pub const SOCIAL_PROVIDER_REMOVED: &str = "social_provider.removed";
    /// An invitation to join the tenant or an organization was created and mailed (target: the
    /// invitation).
    pub const INVITATION_CREATED: &str = "invitation.created";
    /// An invitation was mailed again with a new link (target: the invitation).
    pub const INVITATION_RESENT: &str = "invitation.resent";
    /// An invitation was revoked (target: the invitation).
    pub const INVITATION_REVOKED: &str = "invitation.revoked";
    /// A person accepted an invitation (actor: the person; target: the invitation).
    pub const INVITATION_ACCEPTED: &str = "invitation.accepted";
    /// A custom role was created (target: its key).
    pub const ROLE_CREATED: &str = "role.created";
    /// A role's description or permissions changed (target: its key).
    pub const ROLE_UPDATED: &str = "role.updated";
    /// A custom role was deleted with its permissions (target: its key).
    pub const ROLE_DELETED: &str = "role.deleted";
    /// An API resource was registered.
    pub const API_RESOURCE_CREATED: &str = "api_resource.created";
    /// An API resource's name or permissions changed (removed permissions left every role).
    pub const API_RESOURCE_UPDATED: &str = "api_resource.updated";
    /// An API resource was deleted with its permissions and every role's grants of them.
    pub const API_RESOURCE_DELETED: &str = "api_resource.deleted";
    /// An access-control policy was created.
    pub const POLICY_CREATED: &str = "policy.created";
    /// An access-control policy changed.
    pub const POLICY_UPDATED: &str = "policy.updated";
    /// An access-control policy was deleted.
    pub const POLICY_DELETED: &str = "policy.deleted";
    /// A webhook subscription was created.
    pub const WEBHOOK_CREATED: &str = "webhook.created";
    /// A webhook subscription's URL, event types, description or active flag changed.
    pub const WEBHOOK_UPDATED: &str = "webhook.updated";
    /// A webhook subscription was deleted (with its delivery history).
    pub const WEBHOOK_DELETED: &str = "webhook.deleted";
    /// A webhook subscription's signing secret was replaced.
    pub const WEBHOOK_SECRET_ROTATED: &str = "webhook.secret_rotated";
    /// A test delivery was queued.
    pub const WEBHOOK_TEST_SENT: &str = "webhook.test_sent";
    /// A delivery was queued again by hand.
    pub const WEBHOOK_REDELIVERED: &str = "webhook.redelivered";
    /// The tenant's dynamic client registration policy was set.
    pub const REGISTRATION_POLICY_SET: &str = "registration_policy.set";
    /// An initial access token (dynamic client registration) was created.
    pub const INITIAL_ACCESS_TOKEN_CREATED: &str = "initial_access_token.created";
    /// An initial access token was deleted.
    pub const INITIAL_ACCESS_TOKEN_DELETED: &str = "initial_access_token.deleted";
    /// An agent was registered (target: the agent).
    pub const AGENT_REGISTERED: &str = "agent.registered";
    /// An agent changed (name, keys, allowances, metadata, suspended or reactivated).
    pub const AGENT_UPDATED: &str = "agent.updated";
    /// An agent was revoked.
    pub const AGENT_REVOKED: &str = "agent.revoked";
    /// A delegation was revoked (by the person on their account page, or an administrator).
    pub const DELEGATION_REVOKED: &str = "delegation.revoked";
    /// An API key was created (target: the key).
    pub const API_KEY_CREATED: &str = "api_key.created";
    /// An API key was revoked (target: the key).
    pub const API_KEY_REVOKED: &str = "api_key.revoked";
    /// An API key was rotated (target: the new key; the old one expires after the overlap).
    pub const API_KEY_ROTATED: &str = "api_key.rotated";
    /// The tenant's policy for its people's own API keys was set (target: its summary).
    pub const API_KEY_POLICY_SET: &str = "api_key_policy.set";
    /// A SCIM token was issued.
    pub const SCIM_TOKEN_CREATED: &str = "scim_token.created";
    /// A SCIM token was revoked.
    pub const SCIM_TOKEN_REVOKED: &str = "scim_token.revoked";
    /// A directory created a SCIM group (target: the group).
    pub const SCIM_GROUP_CREATED: &str = "scim_group.created";
    /// A directory changed a SCIM group's name, `externalId` or members (target: the group).
    pub const SCIM_GROUP_UPDATED: &str = "scim_group.updated";
    /// A directory deleted a SCIM group (target: the group; memberships stay).
    pub const SCIM_GROUP_DELETED: &str = "scim_group.deleted";
    /// The tenant roles a directory group grants its members were replaced (target: the group).
    pub const DIRECTORY_GROUP_ROLES_CHANGED: &str = "directory_group.roles_changed";
}

/// A successful action's entry, stamped with a fresh time-ordered id and the current time.
pub fn entry(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    tenant: Option<&TenantId>,
    action: &str,
    target: Option<&str>,
) -> AuditEntry {
    AuditEntry {
        id: AuditEntryId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.cloned(),
        actor: actor.as_audit_string(),
        action: action.to_owned(),
        target: target.map(str::to_owned),
        request_id: meta.request_id.clone(),
        client_ip: meta.client_ip.clone(),
        outcome: AuditOutcome::Success,
        occurred_at: ctx.now(),
    }
}

/// Appends `entry` within `tx`: it commits or rolls back with the change it describes.
pub async fn record(tx: &mut dyn WriteTx, entry: &AuditEntry) -> Result<(), ManageError> {
    tx.insert_audit(entry).await?;
    Ok(())
}

/// Up to `limit` (default 50, clamped to 1..=200) entries of `tenant` matching `filter`, in
/// time `order` (default newest first), past the cursor `after` (the cursor of the previous
/// page: the entries that follow it in this order), and the cursor of the next page (`None` on
/// the last).
pub async fn list_audit(
    ctx: &ManageContext,
    tenant: &TenantId,
    filter: &AuditFilter,
    after: Option<&AuditEntryId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<AuditEntry>, Option<AuditEntryId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let order = order.unwrap_or(Order::Descending);
    let rows = tx
        .list_audit(tenant, filter, after, order, limit + 1)
        .await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |e| e.id.clone()))
}

/// An audit entry as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "aud_01jd3k2m4n5p6q7r8s9t0v1w2x",
    "tenant_id": "ten_01jd3k0a1b2c3d4e5f6g7h8j9k",
    "actor": "client:app_01jd3k0a1b2c3d4e5f6g7h8j9m",
    "action": "application.created",
    "target": "app_01jd3k2m4n5p6q7r8s9t0v1w2y",
    "request_id": "01JD3K2M4N5P6Q7R8S9T0V1W2Z",
    "client_ip": "203.0.113.7",
    "outcome": "success",
    "occurred_at": "2026-11-23T09:14:07.123456Z"
}))]
pub struct AuditEntryView {
    /// The entry's id (`aud_…`), time-ordered; also the pagination cursor.
    pub id: String,
    /// The tenant concerned (`ten_…`); `null` for deployment-wide control-plane actions.
    #[schema(required = true)]
    pub tenant_id: Option<String>,
    /// Who acted: `operator:opt_…`, `client:app_…`, `user:usr_…` or `system`.
    pub actor: String,
    /// What was done, dotted `<record>.<past-tense verb>`: `application.created`,
    /// `tenant_user.suspended`, `webhook.secret_rotated`, ...
    pub action: String,
    /// The record acted on (`app_…`, `usr_…`, `whk_…`, ...), when any.
    #[schema(required = true)]
    pub target: Option<String>,
    /// The request's `x-request-id`, when it had one.
    #[schema(required = true)]
    pub request_id: Option<String>,
    /// The client's address (as seen through the deployment's trusted proxies), when known.
    #[schema(required = true)]
    pub client_ip: Option<String>,
    /// Whether the action took effect.
    pub outcome: AuditOutcomeView,
    /// When it happened (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub occurred_at: OffsetDateTime,
}

/// Whether an audited action took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditOutcomeView {
    /// It took effect.
    Success,
    /// It was refused (recorded for security-relevant refusals).
    Failure,
}

impl From<&AuditEntry> for AuditEntryView {
    fn from(entry: &AuditEntry) -> Self {
        Self {
            id: entry.id.to_string(),
            tenant_id: entry.tenant_id.as_ref().map(ToString::to_string),
            actor: entry.actor.clone(),
            action: entry.action.clone(),
            target: entry.target.clone(),
            request_id: entry.request_id.clone(),
            client_ip: entry.client_ip.clone(),
            outcome: match entry.outcome {
                AuditOutcome::Success => AuditOutcomeView::Success,
                AuditOutcome::Failure => AuditOutcomeView::Failure,
            },
            occurred_at: entry.occurred_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ManualClock, SeededRandom};

    #[test]
    fn the_view_serializes_exactly_like_the_entry() {
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_790_000_000_123_456_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let clock = ManualClock::new(at);
        let rng = SeededRandom::new(7);
        let full = AuditEntry {
            id: AuditEntryId::generate(&clock, &rng),
            tenant_id: Some(TenantId::generate(&clock, &rng)),
            actor: "client:app_01jd0000000000000000000000".to_owned(),
            action: action::APPLICATION_CREATED.to_owned(),
            target: Some("app_01jd0000000000000000000001".to_owned()),
            request_id: Some("req-1".to_owned()),
            client_ip: Some("203.0.113.7".to_owned()),
            outcome: AuditOutcome::Success,
            occurred_at: at,
        };
        let bare = AuditEntry {
            tenant_id: None,
            target: None,
            request_id: None,
            client_ip: None,
            outcome: AuditOutcome::Failure,
            ..full.clone()
        };
        for entry in [full, bare] {
            assert_eq!(
                serde_json::to_value(AuditEntryView::from(&entry)).ok(),
                serde_json::to_value(&entry).ok()
            );
        }
    }
}
