//! The domains an organization claims and verifies (issue 17 item 5): claim, list, read, change
//! the auto-join settings of, verify and remove a claim. Every use case is scoped by the tenant
//! and the organization, so a claim of another tenant or another organization reads as absent,
//! and every write appends its audit entry (target: the organization) and, for a claim, a
//! verification and a removal, its outbox event (`org.domain.*`) in the same transaction.
//!
//! Rules: a name is claimed once per organization and by at most
//! [`MAX_DOMAINS_PER_ORGANIZATION`] claims of one organization; several organizations of a
//! tenant may claim the same name, but only one can verify it (the second is a conflict, also
//! when two verify at once: the store's partial unique index decides). Each claim has its own
//! random token, so a record published for another organization's claim (or for an earlier,
//! deleted claim of the same name) proves nothing. Verification looks the proof up through the
//! [`DomainProbe`] port outside any transaction, then writes at the revision it read.
//!
//! Changes of a claim (`PATCH`, `DELETE`) take a [`Precondition`] (`If-Match`) checked against
//! the claim as read in the write transaction, and write only at that revision.

mod input;
mod probe;
mod use_cases;
mod verify;
mod view;

pub use input::{DomainPatch, MAX_AUTO_JOIN_ROLES, MethodSchema, NewDomain, VerifyDomain};
pub use probe::{DomainProbe, ProbeError};
pub use svc_domain::MAX_DOMAINS_PER_ORGANIZATION;
pub use use_cases::{add, get, list, remove, update};
pub use verify::verify;
pub use view::{DnsTxtProof, DomainStatusSchema, DomainView, HttpsProof, Verification};

use crate::audit;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{DomainId, EventData, EventType, OrganizationId, TenantId, VerifiedDomain};
use svc_store::{StoreError, UpdateOutcome, WriteTx};
use time::OffsetDateTime;

/// The unique index the store names when a name is verified by another organization.
const VERIFIED_KEY: &str = "verified_domains_tenant_name_verified_key";

/// The claim `id` of the organization `org`, or [`ManageError::NotFound`], if it satisfies
/// `precondition`.
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    org: &OrganizationId,
    id: &DomainId,
    precondition: &Precondition,
) -> Result<VerifiedDomain, ManageError> {
    let domain = tx
        .domain(tenant, org, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(domain.updated_at)?;
    Ok(domain)
}

/// Writes `domain` over the revision `read`: [`ManageError::PreconditionFailed`] when it changed
/// since, [`ManageError::NotFound`] when it is gone, [`ManageError::Conflict`] when another
/// organization verified the name.
async fn save(
    tx: &mut dyn WriteTx,
    domain: &VerifiedDomain,
    read: OffsetDateTime,
) -> Result<(), ManageError> {
    match tx.update_domain_if_unchanged(domain, read).await {
        Ok(UpdateOutcome::Applied) => Ok(()),
        Ok(UpdateOutcome::Stale) => Err(ManageError::PreconditionFailed),
        Err(StoreError::Conflict { constraint }) if constraint == VERIFIED_KEY => {
            Err(verified_elsewhere(domain))
        }
        Err(e) => Err(e.into()),
    }
}

/// The conflict of verifying a name another organization of the tenant holds verified.
fn verified_elsewhere(domain: &VerifiedDomain) -> ManageError {
    ManageError::Conflict(format!(
        "{} is already verified by another organization of this tenant; a domain is verified by \
         one organization at a time",
        domain.name
    ))
}

/// Appends the audit entry (target: the organization) and, when `event` is given, the outbox
/// event of a change of `domain`.
async fn record(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    domain: &VerifiedDomain,
    action: &str,
    event: Option<EventType>,
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&domain.tenant_id),
        action,
        Some(domain.organization_id.as_str()),
    );
    audit::record(tx, &entry).await?;
    if let Some(event_type) = event {
        let data = EventData::OrgDomain {
            organization_id: domain.organization_id.clone(),
            domain_id: domain.id.clone(),
            name: domain.name.to_string(),
            status: domain.status.as_str().to_owned(),
            auto_join: domain.auto_join,
            actor: actor.as_audit_string(),
        };
        crate::events::record(tx, ctx, &domain.tenant_id, event_type, data).await?;
    }
    Ok(())
}

/// A fresh claim token: 128 random bits in lowercase hex, published by the organization, so
/// unguessable but not secret.
fn new_token(ctx: &ManageContext) -> String {
    format!("{:032x}", ctx.rng.next_u128())
}
