//! Verifies a domain claim: looks for its proof (the TXT record or the HTTPS file) through the
//! [`DomainProbe`] port, outside any transaction, then records the outcome at the revision read.
//!
//! A refusal says what was looked up and what was expected (this claim's own value), never
//! what was found: a TXT record may hold another organization's token, which is not this
//! caller's to read. Every way the lookup can fail (no such name, no record, a timeout, a
//! server failure, an internal address) is a `400` naming the method, never a server error.

use super::{DomainProbe, ProbeError, VerifyDomain, load, record, save, verified_elsewhere};
use crate::audit::action;
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{
    DomainId, DomainStatus, EventType, OrganizationId, TenantId, VerificationMethod, VerifiedDomain,
};
use svc_store::UpdateOutcome;

/// Looks for the proof of the claim `id` of the organization `org` with `input.method`
/// (default `dns_txt`); when found, the claim becomes verified (audited as
/// `organization.domain_verified`, with the event `org.domain.verified`). Every attempt records
/// `last_checked_at`. A claim already verified is returned as it is, without a lookup.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Invalid`] naming the method (`dns_txt`,
/// `https`) when the proof is missing, wrong or cannot be looked up, or `method` when the HTTPS
/// method is switched off; [`ManageError::Conflict`] when another organization of the tenant
/// verified the name; [`ManageError::PreconditionFailed`] when the claim changed during the
/// lookup.
pub async fn verify(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    org: &OrganizationId,
    id: &DomainId,
    input: VerifyDomain,
) -> Result<VerifiedDomain, ManageError> {
    let method = input
        .method
        .map_or(VerificationMethod::DnsTxt, VerificationMethod::from);
    let probe = ctx.domain_probe.clone().ok_or_else(|| {
        ManageError::Dependency("no domain probe in this management context".into())
    })?;
    if method == VerificationMethod::Https && !probe.https_enabled() {
        return Err(ManageError::invalid(
            "method",
            "verification over HTTPS is switched off on this deployment \
             (verified_domains.https_check); use dns_txt",
        ));
    }
    let claim = {
        let mut read = ctx.store.read().await?;
        let claim = read.domain(tenant, org, id).await?;
        let holder = match &claim {
            Some(c) => read.verified_domain_by_name(tenant, &c.name).await?,
            None => None,
        };
        read.finish().await?;
        let claim = claim.ok_or(ManageError::NotFound)?;
        if claim.status == DomainStatus::Verified {
            return Ok(claim);
        }
        if holder.is_some() {
            return Err(verified_elsewhere(&claim));
        }
        claim
    };

    let outcome = look(probe.as_ref(), &claim, method).await;

    let mut tx = ctx.store.write().await?;
    let read = load(tx.as_mut(), tenant, org, id, &Precondition::None).await?;
    if read.token != claim.token || read.status != claim.status {
        // Changed while the lookup ran: what was looked for is not this claim any more.
        return Err(ManageError::PreconditionFailed);
    }
    let now = ctx.now();
    let mut domain = read.clone();
    domain.last_checked_at = Some(now);
    domain.updated_at = next_update_time(read.updated_at, now);
    match outcome {
        Err(refusal) => {
            // The attempt is recorded even though it failed; a concurrent change wins.
            match tx
                .update_domain_if_unchanged(&domain, read.updated_at)
                .await?
            {
                UpdateOutcome::Applied => tx.commit().await?,
                UpdateOutcome::Stale => drop(tx),
            }
            Err(refusal)
        }
        Ok(()) => {
            domain.status = DomainStatus::Verified;
            domain.verified_at = Some(now);
            save(tx.as_mut(), &domain, read.updated_at).await?;
            record(
                tx.as_mut(),
                ctx,
                actor,
                meta,
                &domain,
                action::ORGANIZATION_DOMAIN_VERIFIED,
                Some(EventType::OrgDomainVerified),
            )
            .await?;
            tx.commit().await?;
            Ok(domain)
        }
    }
}

/// Whether the proof of `claim` is published, by `method`; the refusal otherwise.
async fn look(
    probe: &dyn DomainProbe,
    claim: &VerifiedDomain,
    method: VerificationMethod,
) -> Result<(), ManageError> {
    let expected = claim.proof();
    let field = method.as_str();
    match method {
        VerificationMethod::DnsTxt => {
            let name = claim.name.txt_record_name();
            match probe.txt_records(&name).await {
                Ok(values) if values.iter().any(|v| v.trim() == expected) => Ok(()),
                Ok(values) => Err(ManageError::invalid(
                    field,
                    format!(
                        "the TXT records at {name} ({} found) do not include {expected:?}, the \
                         value of this claim (a value of another claim, or of an earlier claim \
                         of this name, does not count)",
                        values.len()
                    ),
                )),
                Err(ProbeError::NotFound) => Err(ManageError::invalid(
                    field,
                    format!(
                        "no TXT record found at {name} (the name does not exist or has no TXT \
                         record); publish {expected:?} there and try again"
                    ),
                )),
                Err(e) => Err(ManageError::invalid(
                    field,
                    format!(
                        "the TXT records at {name} could not be looked up ({e}); expected {expected:?}"
                    ),
                )),
            }
        }
        VerificationMethod::Https => {
            let url = claim.name.well_known_url();
            match probe.well_known(claim.name.as_str()).await {
                Ok(body) if body.trim() == expected => Ok(()),
                Ok(_) => Err(ManageError::invalid(
                    field,
                    format!(
                        "{url} does not hold {expected:?}, the value of this claim (the file \
                         must hold exactly that line)"
                    ),
                )),
                Err(ProbeError::NotFound) => Err(ManageError::invalid(
                    field,
                    format!("{url} was not found; serve {expected:?} there and try again"),
                )),
                Err(e) => Err(ManageError::invalid(
                    field,
                    format!("{url} could not be fetched ({e}); expected {expected:?}"),
                )),
            }
        }
    }
}
