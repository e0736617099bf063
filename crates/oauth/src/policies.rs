//! Access-control policies at the authorization and token endpoints (issue 17 item 6). The
//! rules themselves are `svc_domain::policy`; this module reads the policies that govern a
//! grant and records a refusal.
//!
//! Where each rule bites:
//! - At the authorization endpoint, with the person's browser: `require_acr` raises what the
//!   request asks (the person steps up, or sets a factor up, like an application's
//!   `minimum_acr`); `max_session_age_secs` makes an older session sign in again (like
//!   `max_age`); `allowed_ip_ranges` and `sign_in_methods` refuse with `access_denied`.
//! - At the token endpoint, at every code redemption and every refresh, every rule is checked
//!   again against how the person signed in (the code's or the family's `acr`, `amr` and
//!   `auth_time`): a policy added or tightened after the sign-in refuses with `invalid_grant`,
//!   and a refresh family it refuses is revoked (`policy_denied`), since how its person signed
//!   in can never change. The network rule applies there only to public clients, whose token
//!   requests come from the person's device.
//!
//! Each refusal is written to the audit log as `access_policy.denied.<rule>` with the policy as
//! target, and described to the client naming the policy and the rule.

use std::collections::BTreeSet;
use svc_domain::{
    AccessPolicy, Application, AuditEntry, AuditEntryId, AuditOutcome, ClientId, Clock,
    OrganizationId, Origin, PolicyDenial, PolicyRule, PolicyScope, Rng, RoleKey, SignInFacts,
    TenantId, UserId, acr_rank, denial_among,
};
use svc_store::{OrganizationReads, PolicyReads, StoreError, UserRoleReads};

/// The enabled policies of `tenant` governing a grant of `client` to `user` in `organization`.
/// The person's roles are read only when a policy that could apply targets roles, so a tenant
/// without role-targeted policies pays one read of its policies and nothing more.
pub(crate) async fn governing<T>(
    tx: &mut T,
    tenant: &TenantId,
    client: &ClientId,
    user: &UserId,
    organization: Option<&OrganizationId>,
) -> Result<Vec<AccessPolicy>, StoreError>
where
    T: PolicyReads + UserRoleReads + OrganizationReads + Send + ?Sized,
{
    let enabled: Vec<AccessPolicy> = tx
        .access_policies(tenant)
        .await?
        .into_iter()
        .filter(|p| p.enabled)
        .collect();
    if enabled.is_empty() {
        return Ok(enabled);
    }
    let mut roles: BTreeSet<RoleKey> = BTreeSet::new();
    if enabled.iter().any(|p| p.targets.needs_roles()) {
        roles = tx.granted_roles(tenant, user).await?;
        if let Some(org) = organization
            && let Some(held) = tx.held_organization_roles(tenant, org, user).await?
        {
            roles.extend(held);
        }
    }
    let scope = PolicyScope {
        client,
        organization,
        roles: &roles,
    };
    Ok(enabled
        .into_iter()
        .filter(|p| p.targets.matches(&scope))
        .collect())
}

/// How the person of a grant signed in, as a code or a refresh family remembers it.
pub(crate) struct GrantSignIn<'a> {
    pub(crate) user: &'a UserId,
    pub(crate) organization: Option<&'a OrganizationId>,
    pub(crate) acr: Option<&'a str>,
    pub(crate) amr: &'a [String],
    pub(crate) auth_time: time::OffsetDateTime,
}

/// The first policy governing the grant `sign_in` of `app` that refuses it at the token
/// endpoint, every rule checked. The network rule applies to a public client's request (from
/// the person's device, at `peer`), never to a confidential client's back end.
pub(crate) async fn token_denial<T>(
    tx: &mut T,
    tenant: &TenantId,
    app: &Application,
    sign_in: &GrantSignIn<'_>,
    peer: Option<std::net::IpAddr>,
    now: time::OffsetDateTime,
) -> Result<Option<PolicyDenial>, StoreError>
where
    T: PolicyReads + UserRoleReads + OrganizationReads + Send + ?Sized,
{
    let governing = governing(tx, tenant, &app.id, sign_in.user, sign_in.organization).await?;
    if governing.is_empty() {
        return Ok(None);
    }
    let origin = if app.is_confidential() {
        Origin::NotThePerson
    } else {
        peer.map_or(Origin::Unknown, Origin::Person)
    };
    let facts = SignInFacts {
        acr: sign_in.acr,
        amr: sign_in.amr,
        auth_time: sign_in.auth_time,
        origin,
        now,
    };
    Ok(denial_among(&governing, &facts, &PolicyRule::ALL))
}

/// The strongest `acr` the policies require, if any.
pub(crate) fn acr_floor(policies: &[AccessPolicy]) -> Option<&str> {
    policies
        .iter()
        .filter_map(|p| p.rules.require_acr.as_deref())
        .max_by_key(|acr| acr_rank(acr))
}

/// The shortest session age the policies allow, in seconds, if any.
pub(crate) fn max_session_age(policies: &[AccessPolicy]) -> Option<u64> {
    policies
        .iter()
        .filter_map(|p| p.rules.max_session_age_secs)
        .min()
}

/// The audit entry of a refusal by `denial` of a grant to `user` through `client`:
/// `access_policy.denied.<rule>`, the policy as target, the person as actor.
pub(crate) fn denial_entry(
    clock: &dyn Clock,
    rng: &dyn Rng,
    tenant: &TenantId,
    user: &UserId,
    denial: &PolicyDenial,
    client_ip: Option<std::net::IpAddr>,
) -> AuditEntry {
    AuditEntry {
        id: AuditEntryId::generate(clock, rng),
        tenant_id: Some(tenant.clone()),
        actor: format!("user:{user}"),
        action: format!("access_policy.denied.{}", denial.rule.as_str()),
        target: Some(denial.policy.as_str().to_owned()),
        request_id: None,
        client_ip: client_ip.map(|ip| ip.to_string()),
        outcome: AuditOutcome::Failure,
        occurred_at: crate::authorize::truncate_micros(clock.now()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use svc_domain::{ACR_AAL1, ACR_AAL2, PolicyId, PolicyRules, PolicyTargets};
    use time::OffsetDateTime;

    fn with(rules: PolicyRules) -> AccessPolicy {
        AccessPolicy {
            id: PolicyId::parse("pol_01jd0000000000000000000000").unwrap(),
            tenant_id: TenantId::parse("ten_01jd0000000000000000000000").unwrap(),
            name: "p".into(),
            description: String::new(),
            enabled: true,
            targets: PolicyTargets::default(),
            rules,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn the_strictest_floor_and_age_win() {
        let policies = [
            with(PolicyRules {
                require_acr: Some(ACR_AAL1.into()),
                max_session_age_secs: Some(3_600),
                ..Default::default()
            }),
            with(PolicyRules {
                require_acr: Some(ACR_AAL2.into()),
                max_session_age_secs: Some(600),
                ..Default::default()
            }),
            with(PolicyRules {
                sign_in_methods: ["pwd".to_owned()].into(),
                ..Default::default()
            }),
        ];
        assert_eq!(acr_floor(&policies), Some(ACR_AAL2));
        assert_eq!(max_session_age(&policies), Some(600));
        assert_eq!(acr_floor(&policies[2..]), None);
        assert_eq!(max_session_age(&policies[2..]), None);
    }
}
