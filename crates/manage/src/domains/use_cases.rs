//! Claim, list, read, change and remove a domain claim (verification has its own file).

use super::input::{NewDomain, check_name, check_roles, custom_roles_refused};
use super::{DomainPatch, load, new_token, record, save};
use crate::audit::action;
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, Reach, RequestMeta};
use svc_domain::{
    DomainId, DomainStatus, EventType, MAX_DOMAINS_PER_ORGANIZATION, OrganizationId, TenantId,
    VerifiedDomain,
};
use svc_store::StoreError;

/// The unique key the store names when the organization already claimed the name.
const ORG_NAME_KEY: &str = "verified_domains_org_name_key";

/// Claims `input.name` for the organization `org` of `tenant` (pending, with a fresh token),
/// audited as `organization.domain_added`, with the event `org.domain.added`.
///
/// Errors: [`ManageError::NotFound`] when the organization is absent; [`ManageError::Invalid`]
/// naming `name` or `auto_join_roles`; [`ManageError::Conflict`] when the organization already
/// claimed the name or has [`MAX_DOMAINS_PER_ORGANIZATION`] claims.
///
/// Beyond the `reach` of the caller ([`Reach`] rules 1–2): not found outside their organization;
/// [`ManageError::Forbidden`] for an `admin` making sign-ups join as `owner`.
pub async fn add(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
    input: NewDomain,
) -> Result<VerifiedDomain, ManageError> {
    let name = check_name(&input.name)?;
    let roles = check_roles(input.auto_join_roles.as_deref())?;
    reach.within(Some(org))?;
    reach.may_grant(&roles)?;
    let mut tx = ctx.store.write().await?;
    if tx.organization(tenant, org).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    custom_roles_refused(tx.as_mut(), tenant, &roles).await?;
    let claims = tx.domains_of_organization(tenant, org).await?;
    if claims.iter().any(|d| d.name == name) {
        return Err(already_claimed());
    }
    if claims.len() >= MAX_DOMAINS_PER_ORGANIZATION {
        return Err(ManageError::Conflict(format!(
            "this organization already claims {MAX_DOMAINS_PER_ORGANIZATION} domains, the most \
             one organization may; remove one first"
        )));
    }
    let now = ctx.now();
    let domain = VerifiedDomain {
        id: DomainId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        organization_id: org.clone(),
        name,
        status: DomainStatus::Pending,
        token: new_token(ctx),
        verified_at: None,
        last_checked_at: None,
        auto_join: input.auto_join,
        auto_join_roles: roles,
        created_at: now,
        updated_at: now,
    };
    match tx.insert_domain(&domain).await {
        Ok(()) => {}
        Err(StoreError::Conflict { constraint }) if constraint == ORG_NAME_KEY => {
            return Err(already_claimed());
        }
        Err(e) => return Err(e.into()),
    }
    record(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &domain,
        action::ORGANIZATION_DOMAIN_ADDED,
        Some(EventType::OrgDomainAdded),
    )
    .await?;
    tx.commit().await?;
    Ok(domain)
}

fn already_claimed() -> ManageError {
    ManageError::Conflict("this organization already claims this domain".to_owned())
}

/// Every claim of the organization `org` of `tenant`, in id (creation) order.
///
/// Errors: [`ManageError::NotFound`] when the organization is absent.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    org: &OrganizationId,
) -> Result<Vec<VerifiedDomain>, ManageError> {
    let mut read = ctx.store.read().await?;
    if read.organization(tenant, org).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let claims = read.domains_of_organization(tenant, org).await?;
    read.finish().await?;
    Ok(claims)
}

/// The claim `id` of the organization `org` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] (also for another organization's claim).
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    org: &OrganizationId,
    id: &DomainId,
) -> Result<VerifiedDomain, ManageError> {
    let mut read = ctx.store.read().await?;
    let domain = read.domain(tenant, org, id).await?;
    read.finish().await?;
    domain.ok_or(ManageError::NotFound)
}

/// Changes the auto-join settings of a claim (only the fields given), audited as
/// `organization.domain_updated`. A patch that changes nothing writes nothing.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Invalid`] naming `auto_join_roles`;
/// [`ManageError::PreconditionFailed`]. Beyond the `reach` of the caller ([`Reach`] rules
/// 1–2): not found outside their organization; [`ManageError::Forbidden`] for an `admin`
/// changing a claim whose sign-ups would join as `owner`.
#[allow(clippy::too_many_arguments)] // the shape of every scoped change: who, where, what, if
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
    id: &DomainId,
    patch: DomainPatch,
    precondition: &Precondition,
) -> Result<VerifiedDomain, ManageError> {
    let roles = match patch.auto_join_roles.as_deref() {
        Some(raw) => Some(check_roles(Some(raw))?),
        None => None,
    };
    reach.within(Some(org))?;
    let mut tx = ctx.store.write().await?;
    let read = load(tx.as_mut(), tenant, org, id, precondition).await?;
    let mut domain = read.clone();
    if let Some(auto_join) = patch.auto_join {
        domain.auto_join = auto_join;
    }
    if let Some(roles) = roles {
        custom_roles_refused(tx.as_mut(), tenant, &roles).await?;
        domain.auto_join_roles = roles;
    }
    if domain == read {
        return Ok(read);
    }
    reach.may_grant(&domain.auto_join_roles)?;
    domain.updated_at = next_update_time(read.updated_at, ctx.now());
    save(tx.as_mut(), &domain, read.updated_at).await?;
    record(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &domain,
        action::ORGANIZATION_DOMAIN_UPDATED,
        None,
    )
    .await?;
    tx.commit().await?;
    Ok(domain)
}

/// Removes a claim (verified or not), audited as `organization.domain_removed`, with the event
/// `org.domain.removed`. People who joined through it stay members.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`].
pub async fn remove(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    org: &OrganizationId,
    id: &DomainId,
    precondition: &Precondition,
) -> Result<VerifiedDomain, ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut domain = load(tx.as_mut(), tenant, org, id, precondition).await?;
    // Moved to a new revision at the revision read first (a compare-and-set), so a change
    // committed by someone else meanwhile fails the removal rather than being removed unseen.
    let read = domain.updated_at;
    domain.updated_at = next_update_time(read, ctx.now());
    save(tx.as_mut(), &domain, read).await?;
    if !tx.delete_domain(tenant, org, id).await? {
        return Err(ManageError::NotFound);
    }
    record(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &domain,
        action::ORGANIZATION_DOMAIN_REMOVED,
        Some(EventType::OrgDomainRemoved),
    )
    .await?;
    tx.commit().await?;
    Ok(domain)
}
