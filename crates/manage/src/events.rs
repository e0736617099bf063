//! Outbox events of the management use cases: each is recorded in the same transaction as the
//! change it describes (and beside its audit entry), so a receiver never hears of a change that
//! rolled back and never misses one that committed.

use crate::{ManageContext, ManageError};
use std::collections::BTreeSet;
use svc_domain::{Event, EventData, EventType, Membership, Organization, RoleKey, TenantId};
use svc_store::WriteTx;

/// Appends an event of `event_type` for `tenant` within `tx`.
pub(crate) async fn record(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    event_type: EventType,
    data: EventData,
) -> Result<(), ManageError> {
    let event = Event::new(
        ctx.clock.as_ref(),
        ctx.rng.as_ref(),
        tenant,
        event_type,
        data,
    );
    tx.insert_event(&event).await?;
    Ok(())
}

/// A `tenant_user.*` or `admin.user.created` event about `user` after a change by `actor`.
pub(crate) async fn user_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    user: &svc_domain::User,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::TenantUser {
        user_id: user.id.clone(),
        email: user.email.as_str().to_owned(),
        status: user.status.as_str().to_owned(),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &user.tenant_id, event_type, data).await
}

/// An `admin.application.*` event about `app` after a change by `actor`.
pub(crate) async fn application_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    app: &svc_domain::Application,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::Application {
        client_id: app.id.clone(),
        name: app.name.clone(),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &app.tenant_id, event_type, data).await
}

/// An `org.*` event about `org` (as it is after the change) after a change by `actor`.
pub(crate) async fn organization_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    org: &Organization,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::Organization {
        organization_id: org.id.clone(),
        slug: org.slug.as_str().to_owned(),
        name: org.name.clone(),
        status: org.status.as_str().to_owned(),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &org.tenant_id, event_type, data).await
}

/// An `admin.api_resource.*` event about `resource` (as it is after the change: a deleted one
/// defines no permission any more) after a change by `actor`.
pub(crate) async fn api_resource_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    resource: &svc_domain::ApiResource,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::ApiResource {
        resource_id: resource.id.clone(),
        identifier: resource.identifier.clone(),
        permissions: resource
            .permissions
            .iter()
            .map(|p| p.name.as_str().to_owned())
            .collect(),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &resource.tenant_id, event_type, data).await
}

/// An `admin.policy.*` event about `policy` after a change by `actor`.
pub(crate) async fn policy_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    policy: &svc_domain::AccessPolicy,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::Policy {
        policy_id: policy.id.clone(),
        name: policy.name.clone(),
        enabled: policy.enabled && event_type != EventType::AdminPolicyDeleted,
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &policy.tenant_id, event_type, data).await
}

/// An `org.member.*` event about `membership` after a change by `actor`: the roles it holds now
/// (none once removed) and, for role changes and removals, the ones it held before.
pub(crate) async fn member_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    event_type: EventType,
    membership: &Membership,
    roles: &BTreeSet<RoleKey>,
    previous: Option<&BTreeSet<RoleKey>>,
) -> Result<(), ManageError> {
    let names = |set: &BTreeSet<RoleKey>| set.iter().map(|r| r.as_str().to_owned()).collect();
    let data = EventData::OrgMember {
        organization_id: membership.organization_id.clone(),
        user_id: membership.user_id.clone(),
        roles: names(roles),
        previous_roles: previous.map(names),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &membership.tenant_id, event_type, data).await
}
