//! A tenant's access-control policies (issue 17 item 6): create, list, read, change and delete
//! the named rules the authorization and token endpoints enforce (the evaluation is
//! `svc_domain::first_denial` and `svc_oauth::policies`). Every use case is scoped by the
//! tenant, and every write appends its audit entry and its `admin.policy.*` event in the same
//! transaction as the change.
//!
//! Targets must name the tenant's own applications, organizations and roles when written; one
//! deleted later simply never matches again. A tenant holds at most
//! [`svc_domain::MAX_POLICIES_PER_TENANT`] policies: every sign-in and refresh reads them all.
//!
//! Changes take a [`Precondition`] (`If-Match`) checked against the policy as read in the
//! write transaction, and write only at that revision: never a lost update.

mod create;
mod delete;
mod input;
mod read;
mod update;
mod view;

pub use create::create;
pub use delete::delete;
pub(crate) use input::not_null;
pub use input::{NewPolicy, PolicyPatch, PolicyRulesInput, PolicyTargetsInput};
pub use read::{get, list};
pub use update::update;
pub use view::{PolicyRulesView, PolicyTargetsView, PolicyView};

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{AccessPolicy, EventType, PolicyId, TenantId};
use svc_store::{StoreError, UpdateOutcome, WriteTx};
use time::OffsetDateTime;

/// The unique key the store names when the name is taken.
const NAME_KEY: &str = "access_policies_tenant_name_key";

fn name_taken() -> ManageError {
    ManageError::Conflict("a policy with this name already exists in this tenant".to_owned())
}

/// The policy `id` of `tenant`, or [`ManageError::NotFound`], if it satisfies `precondition`.
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    id: &PolicyId,
    precondition: &Precondition,
) -> Result<AccessPolicy, ManageError> {
    let policy = tx
        .access_policy(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(policy.updated_at)?;
    Ok(policy)
}

/// Writes `policy` over the revision `read`.
async fn save(
    tx: &mut dyn WriteTx,
    policy: &AccessPolicy,
    read: OffsetDateTime,
) -> Result<(), ManageError> {
    match tx.update_access_policy_if_unchanged(policy, read).await {
        Ok(UpdateOutcome::Applied) => Ok(()),
        Ok(UpdateOutcome::Stale) => Err(ManageError::PreconditionFailed),
        Err(StoreError::NotFound) => Err(ManageError::NotFound),
        Err(StoreError::Conflict { constraint }) if constraint == NAME_KEY => Err(name_taken()),
        Err(e) => Err(e.into()),
    }
}

/// Appends the audit entry (target: the policy) and the `admin.policy.*` event of a change.
async fn record_change(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    policy: &AccessPolicy,
    event_type: EventType,
) -> Result<(), ManageError> {
    let verb = match event_type {
        EventType::AdminPolicyCreated => action::POLICY_CREATED,
        EventType::AdminPolicyDeleted => action::POLICY_DELETED,
        _ => action::POLICY_UPDATED,
    };
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&policy.tenant_id),
        verb,
        Some(policy.id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::policy_changed(tx, ctx, actor, policy, event_type).await
}
