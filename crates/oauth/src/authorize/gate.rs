//! The authorization endpoint's side of access policies ([`crate::policies`]): reading the
//! policies that govern a request once the person and organization are known, and refusing a
//! request by one of them (`access_denied`, or `unmet_authentication_requirements` for an
//! assurance floor nobody can reach), audited as `access_policy.denied.<rule>`.

use super::request::{AuthorizationRequest, RedirectError};
use super::{AuthorizeEndpoint, AuthorizeOutcome, error_redirect, unavailable};
use crate::policies;
use svc_domain::{
    AccessPolicy, Application, Interaction, OrganizationId, Origin, PolicyDenial, PolicyRule,
    Session, Tenant,
};
use svc_store::StoreError;

impl AuthorizeEndpoint {
    /// The enabled policies of the tenant governing a grant to the session's person through
    /// `app` in `organization`. Read outside a transaction (no BEGIN and ROLLBACK round trips
    /// on every sign-in): the policies and the person's roles need no common snapshot, and the
    /// token endpoint checks both again inside its own transaction.
    pub(super) async fn governing_policies(
        &self,
        tenant: &Tenant,
        app: &Application,
        session: &Session,
        organization: Option<&OrganizationId>,
    ) -> Result<Vec<AccessPolicy>, StoreError> {
        let mut tx = self.store.read_once().await?;
        let governing = policies::governing(
            tx.as_mut(),
            &tenant.id,
            &app.id,
            &session.user_id,
            organization,
        )
        .await?;
        tx.finish().await?;
        Ok(governing)
    }

    /// Ends the request with the refusal of `denial`, recorded in the audit log. An assurance
    /// floor is `unmet_authentication_requirements` (OIDC Core errata set 2 §3.1.2.6), every
    /// other rule `access_denied`; the description names the policy and the rule.
    #[allow(clippy::too_many_arguments)] // the request's facts, each distinct
    pub(super) async fn refuse_by_policy(
        &self,
        tenant: &Tenant,
        issuer: &str,
        req: &AuthorizationRequest,
        pending: Option<&Interaction>,
        session: &Session,
        denial: &PolicyDenial,
        origin: Origin,
    ) -> AuthorizeOutcome {
        let ip = match origin {
            Origin::Person(ip) => Some(ip),
            Origin::Unknown | Origin::NotThePerson => None,
        };
        let entry = policies::denial_entry(
            self.clock.as_ref(),
            self.rng.as_ref(),
            &tenant.id,
            &session.user_id,
            denial,
            ip,
        );
        let recorded = async {
            let mut tx = self.store.write().await?;
            if let Some(p) = pending {
                tx.delete_interaction(&tenant.id, &p.id).await?;
            }
            tx.insert_audit(&entry).await?;
            tx.commit().await
        };
        if let Err(e) = recorded.await {
            return unavailable(e);
        }
        tracing::info!(tenant = %tenant.id, user = %session.user_id, policy = %denial.policy,
            rule = denial.rule.as_str(), "authorization refused by an access policy");
        let error = match denial.rule {
            PolicyRule::Acr => "unmet_authentication_requirements",
            _ => "access_denied",
        };
        AuthorizeOutcome::RedirectToClient(error_redirect(
            &req.redirect_uri,
            &RedirectError::new(error, denial.describe()),
            req.state.as_deref(),
            issuer,
        ))
    }
}
