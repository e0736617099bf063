//! What the authorization endpoint decides once a request passed [`super::request`]'s checks:
//! authentication and organization, the tenant's policies, assurance, consent, and then the
//! code, in the order the module documentation of [`super`] gives. Each step either answers
//! (an error at the client, a hosted page to show) or hands on to the next.

use super::redirect::{code_redirect, error_redirect};
use super::request::{AuthorizationRequest, RedirectError};
use super::{AuthorizeEndpoint, AuthorizeOutcome, assurance, grant, unavailable};
use crate::policies;
use svc_domain::{
    Application, Interaction, OrganizationUsage, Origin, PolicyRule, Session, SignInFacts, Tenant,
    denial_among,
};
use svc_store::StoreError;

/// Which hosted page a pending request waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Login,
    StepUp,
    Enrol,
    Consent,
    Organization,
}

/// `prompt=none` without a usable session (OIDC Core §3.1.2.6).
const LOGIN_REQUIRED: (&str, &str) = (
    "login_required",
    "the person is not signed in (prompt=none)",
);
/// `prompt=none` without the consent the request needs (OIDC Core §3.1.2.6).
const CONSENT_REQUIRED: (&str, &str) = (
    "consent_required",
    "the person has not consented to this request (prompt=none)",
);
/// An essential `acr` the session does not reach and cannot be raised to (OIDC Core errata
/// set 2, §3.1.2.6).
const UNMET_ACR: (&str, &str) = (
    "unmet_authentication_requirements",
    "the essential acr requested cannot be reached for this person",
);
/// The organization named is not one the person can act in (absent, suspended, or not theirs).
pub(super) const NOT_A_MEMBER: (&str, &str) = (
    "access_denied",
    "the person cannot act in this organization",
);
/// The application requires an organization and the person belongs to none it can act in.
const IN_NO_ORGANIZATION: (&str, &str) = (
    "access_denied",
    "this application is used in an organization, and the person belongs to none",
);
/// `prompt=none` when the person must pick an organization first (OIDC Core §3.1.2.6).
const PICK_ORGANIZATION: (&str, &str) = (
    "interaction_required",
    "the person must choose an organization (prompt=none)",
);
/// The API resource of the request was deleted while the person signed in.
const RESOURCE_GONE: (&str, &str) = (
    "invalid_target",
    "the API resource of this request no longer exists",
);
/// `prompt=none` when the session must be stepped up first (OIDC Core §3.1.2.6).
const INTERACTION_REQUIRED: (&str, &str) = (
    "interaction_required",
    "the requested acr needs a second factor (prompt=none)",
);

impl AuthorizeEndpoint {
    pub(super) async fn decide(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        req: &AuthorizationRequest,
        (session, origin): (Option<&Session>, Origin),
        pending: Option<&Interaction>,
    ) -> AuthorizeOutcome {
        let now = self.clock.now();
        let since = pending.map(|p| p.created_at);
        // 1. Authentication.
        let authenticated = session.filter(|s| {
            let for_this_request = since.is_some_and(|t| s.auth_time >= t);
            self.is_live(tenant, Some(s))
                && (for_this_request
                    || req.max_age.is_none_or(|max| {
                        (now - s.auth_time).whole_seconds()
                            <= i64::try_from(max).unwrap_or(i64::MAX)
                    }))
                && (!req.prompt.login || for_this_request)
        });
        let Some(session) = authenticated else {
            if req.prompt.none {
                return self
                    .finish_with_error(tenant, issuer, req, pending, LOGIN_REQUIRED)
                    .await;
            }
            return self.ask(tenant, app, req, pending, Ask::Login).await;
        };
        // 1, continued: the organization, named by the request, or picked by the person when
        // the application requires one (the only one is taken without asking).
        let organization = match &req.organization {
            None if app.organization_usage == OrganizationUsage::Require => {
                match self.organizations_of(tenant, session).await {
                    Err(e) => return unavailable(e),
                    Ok(orgs) if orgs.is_empty() => {
                        return self
                            .finish_with_error(tenant, issuer, req, pending, IN_NO_ORGANIZATION)
                            .await;
                    }
                    Ok(orgs) if orgs.len() == 1 => orgs.into_iter().next().map(|o| o.id),
                    Ok(_) if req.prompt.none => {
                        return self
                            .finish_with_error(tenant, issuer, req, pending, PICK_ORGANIZATION)
                            .await;
                    }
                    Ok(_) => return self.ask(tenant, app, req, pending, Ask::Organization).await,
                }
            }
            None => None,
            Some(named) => match self.organization_of(tenant, session, named).await {
                Ok(Some(id)) => Some(id),
                Ok(None) => {
                    return self
                        .finish_with_error(tenant, issuer, req, pending, NOT_A_MEMBER)
                        .await;
                }
                Err(e) => return unavailable(e),
            },
        };
        // 1, continued: the tenant's access policies governing this grant. An older sign-in
        // than one allows signs in again, as for `max_age`; a network or a sign-in method one
        // does not allow is refused before anything is asked of the person.
        let governing = match self
            .governing_policies(tenant, app, session, organization.as_ref())
            .await
        {
            Ok(governing) => governing,
            Err(e) => return unavailable(e),
        };
        let fresh = since.is_some_and(|t| session.auth_time >= t);
        if !fresh
            && let Some(max) = policies::max_session_age(&governing)
            && (now - session.auth_time).whole_seconds() > i64::try_from(max).unwrap_or(i64::MAX)
        {
            if req.prompt.none {
                return self
                    .finish_with_error(tenant, issuer, req, pending, LOGIN_REQUIRED)
                    .await;
            }
            return self.ask(tenant, app, req, pending, Ask::Login).await;
        }
        let facts = SignInFacts {
            acr: session.acr.as_deref(),
            amr: &session.amr,
            auth_time: session.auth_time,
            origin,
            now,
        };
        let refused = denial_among(
            &governing,
            &facts,
            &[PolicyRule::Network, PolicyRule::SignInMethod],
        );
        if let Some(denial) = refused {
            return self
                .refuse_by_policy(tenant, issuer, req, pending, session, &denial, origin)
                .await;
        }
        // 2. Assurance.
        let rules = self.settings.factor_rules(tenant);
        let mut required = rules.required;
        // An account recovered by its guardians owes a new second factor, whatever the policy.
        if !required && rules.enrol && self.settings.recovery {
            required = match self.recovery_factor_due(tenant, session).await {
                Ok(due) => due,
                Err(e) => return unavailable(e),
            };
        }
        let mut asked = assurance::Asked::of(req);
        // A floor from the tenant's or deployment's policy, a recovery, or the application's
        // registration: the person is asked to set a factor up rather than refused.
        let policy_floor = policies::acr_floor(&governing);
        let enrol_if_needed =
            rules.enrol && (required || app.minimum_acr.is_some() || policy_floor.is_some());
        if required {
            asked = asked.at_least(svc_domain::ACR_AAL2);
        }
        if let Some(minimum) = app.minimum_acr.as_deref() {
            asked = asked.at_least(minimum);
        }
        if let Some(floor) = policy_floor {
            asked = asked.at_least(floor);
        }
        if !asked.met_by(session.acr.as_deref()) {
            let reachable = rules.step_up && asked.met_by(Some(svc_domain::ACR_AAL2));
            let has_factor = if reachable {
                match self.has_second_factor(tenant, session).await {
                    Ok(has) => has,
                    Err(e) => return unavailable(e),
                }
            } else {
                false
            };
            // With a factor the person steps up; without one, a floor (the deployment's policy
            // or the application's minimum) has them set one up (the confirmation raises the
            // session).
            let page = match (has_factor, reachable && enrol_if_needed) {
                (true, _) => Some(Ask::StepUp),
                (false, true) => Some(Ask::Enrol),
                (false, false) => None,
            };
            if let Some(page) = page {
                if req.prompt.none {
                    return self
                        .finish_with_error(tenant, issuer, req, pending, INTERACTION_REQUIRED)
                        .await;
                }
                if page == Ask::StepUp
                    && let Err(e) = self.record_step_up(tenant, session).await
                {
                    return unavailable(e);
                }
                return self.ask(tenant, app, req, pending, page).await;
            }
            // A policy's floor that cannot be reached is that policy's refusal, named.
            if let Some(denial) = denial_among(&governing, &facts, &[PolicyRule::Acr]) {
                return self
                    .refuse_by_policy(tenant, issuer, req, pending, session, &denial, origin)
                    .await;
            }
            if asked.essential {
                return self
                    .finish_with_error(tenant, issuer, req, pending, UNMET_ACR)
                    .await;
            }
        }
        // 3. Consent.
        // RFC 9396 §3: details (a payment, a document) are approved each time they are asked
        // for, by first- and third-party applications alike.
        let details_unapproved = req.authorization_details.is_some() && !req.details_approved;
        if !app.first_party || req.prompt.consent || details_unapproved {
            let consent = match self.consent(tenant, session, app).await {
                Ok(c) => c,
                Err(e) => return unavailable(e),
            };
            let requested = req.scopes();
            let satisfied = !details_unapproved
                && consent.is_some_and(|c| {
                    requested.is_subset(&c.scope)
                        && (!req.prompt.consent || since.is_some_and(|t| c.granted_at >= t))
                });
            if !satisfied {
                if req.prompt.none {
                    return self
                        .finish_with_error(tenant, issuer, req, pending, CONSENT_REQUIRED)
                        .await;
                }
                return self.ask(tenant, app, req, pending, Ask::Consent).await;
            }
        }
        // 4. The code, for the scopes the person may hold (management scopes and an API's
        // permissions need a role).
        let granted = self
            .granted_scope(tenant, issuer, app, req, session, organization.as_ref())
            .await;
        let (scope, resource) = match granted {
            Ok(Some(granted)) => granted,
            Ok(None) => {
                return self
                    .finish_with_error(tenant, issuer, req, pending, RESOURCE_GONE)
                    .await;
            }
            Err(e) => return unavailable(e),
        };
        let context = grant::CodeContext {
            organization,
            resource,
            scope,
        };
        if let Some(device) = &req.device {
            return self
                .approve_device(
                    (tenant, issuer),
                    app,
                    req,
                    device,
                    session,
                    pending,
                    context,
                )
                .await;
        }
        match self
            .issue_code((tenant, issuer), app, req, session, pending, context)
            .await
        {
            Ok(code) => AuthorizeOutcome::RedirectToClient(code_redirect(
                &req.redirect_uri,
                &code,
                req.state.as_deref(),
                issuer,
            )),
            Err(e) => unavailable(e),
        }
    }

    /// Whether the person of `session` has a way to reach `urn:svc:aal2`: a confirmed second
    /// factor to give, or a passkey to sign in with again.
    async fn has_second_factor(
        &self,
        tenant: &Tenant,
        session: &Session,
    ) -> Result<bool, StoreError> {
        let mut tx = self.store.read().await?;
        let factors = tx.second_factors(&tenant.id, &session.user_id).await?;
        let has = factors.iter().any(svc_domain::SecondFactor::is_confirmed)
            || !tx.passkeys(&tenant.id, &session.user_id).await?.is_empty();
        tx.finish().await?;
        Ok(has)
    }

    /// Whether the session's person was recovered by guardians and has no new factor yet.
    async fn recovery_factor_due(
        &self,
        tenant: &Tenant,
        session: &Session,
    ) -> Result<bool, StoreError> {
        let mut tx = self.store.read().await?;
        let due = tx.recovery_factor_due(&tenant.id, &session.user_id).await?;
        tx.finish().await?;
        Ok(due)
    }

    /// `auth.mfa.challenge` for a step-up this request needs.
    async fn record_step_up(&self, tenant: &Tenant, session: &Session) -> Result<(), StoreError> {
        let event = svc_domain::Event::new(
            self.clock.as_ref(),
            self.rng.as_ref(),
            &tenant.id,
            svc_domain::EventType::MfaChallenge,
            svc_domain::EventData::MfaChallenged {
                user_id: session.user_id.clone(),
                reason: "step_up".into(),
                client_ip: None,
            },
        );
        let mut tx = self.store.write().await?;
        tx.insert_event(&event).await?;
        tx.commit().await
    }

    pub(super) fn is_live(&self, tenant: &Tenant, session: Option<&Session>) -> bool {
        session.is_some_and(|s| s.tenant_id == tenant.id && s.is_live(self.clock.now()))
    }

    /// Sends the person to sign in, step up or consent, storing the request once.
    async fn ask(
        &self,
        tenant: &Tenant,
        app: &Application,
        req: &AuthorizationRequest,
        pending: Option<&Interaction>,
        page: Ask,
    ) -> AuthorizeOutcome {
        let id = match pending {
            Some(p) => p.id.clone(),
            None => match self.store_interaction(tenant, app, req).await {
                Ok(id) => id,
                Err(e) => return unavailable(e),
            },
        };
        match page {
            Ask::Login => AuthorizeOutcome::Login { interaction: id },
            Ask::StepUp => AuthorizeOutcome::StepUp { interaction: id },
            Ask::Enrol => AuthorizeOutcome::Enrol { interaction: id },
            Ask::Consent => AuthorizeOutcome::Consent { interaction: id },
            Ask::Organization => AuthorizeOutcome::SelectOrganization { interaction: id },
        }
    }

    pub(super) async fn finish_with_error(
        &self,
        tenant: &Tenant,
        issuer: &str,
        req: &AuthorizationRequest,
        pending: Option<&Interaction>,
        (error, description): (&'static str, &'static str),
    ) -> AuthorizeOutcome {
        if let Some(p) = pending
            && let Err(e) = self.forget(tenant, &p.id).await
        {
            return unavailable(e);
        }
        AuthorizeOutcome::RedirectToClient(error_redirect(
            &req.redirect_uri,
            &RedirectError::new(error, description),
            req.state.as_deref(),
            issuer,
        ))
    }
}
