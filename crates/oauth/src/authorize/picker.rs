//! The hosted organization picker's side of the authorization endpoint: an application whose
//! `organization_usage` is `require` gets every grant in an organization; when the request names
//! none and the person belongs to several, the hosted page lists theirs
//! ([`AuthorizeEndpoint::organization_prompt`]) and their pick continues the same request
//! ([`AuthorizeEndpoint::choose_organization`]) as if it had named that organization.
//!
//! The pick is checked like the `organization` parameter (an active organization of the tenant
//! with the person as a member; anything else, a forged form included, is `access_denied` with
//! the parameter's words), then written into the pending request, which keeps its arrival time
//! so `prompt=login` and `max_age` judge the sign-in exactly as before.

use super::decide::NOT_A_MEMBER;
use super::{AuthorizeEndpoint, AuthorizeOutcome, unavailable};
use svc_domain::{Interaction, InteractionId, OrgStatus, Organization, Origin, Session, Tenant};
use svc_store::StoreError;

/// What the organization page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrganizationPrompt {
    /// The application's display name.
    pub client_name: String,
    /// The person's active organizations, by name.
    pub organizations: Vec<OrganizationChoice>,
    /// Where the flow ends (see [`super::ConsentPrompt::redirect_uri`]).
    pub redirect_uri: String,
}

/// One organization the person may pick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrganizationChoice {
    /// Its id (`org_…`): what the form sends back.
    pub id: String,
    /// Its name (tenant-written: render it escaped).
    pub name: String,
    /// Its slug.
    pub slug: String,
}

impl AuthorizeEndpoint {
    /// The active organizations the session's person is a member of, by name.
    pub(super) async fn organizations_of(
        &self,
        tenant: &Tenant,
        session: &Session,
    ) -> Result<Vec<Organization>, StoreError> {
        let mut tx = self.store.read().await?;
        let memberships = tx.memberships_of_user(&tenant.id, &session.user_id).await?;
        let mut orgs = Vec::with_capacity(memberships.len());
        for membership in memberships {
            if let Some(org) = tx
                .organization(&tenant.id, &membership.organization_id)
                .await?
                .filter(|o| o.status == OrgStatus::Active)
            {
                orgs.push(org);
            }
        }
        tx.finish().await?;
        orgs.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        Ok(orgs)
    }

    /// What the organization page of `interaction` shows; the outcome to follow instead when
    /// there is nobody signed in (sign in first) or the request is gone.
    pub async fn organization_prompt(
        &self,
        tenant: &Tenant,
        interaction: &InteractionId,
        session: Option<&Session>,
    ) -> Result<OrganizationPrompt, AuthorizeOutcome> {
        let (pending, req, app) = self.pending(tenant, interaction).await?;
        let Some(session) = session.filter(|s| self.is_live(tenant, Some(s))) else {
            return Err(AuthorizeOutcome::Login {
                interaction: pending.id,
            });
        };
        let organizations = self
            .organizations_of(tenant, session)
            .await
            .map_err(unavailable)?
            .into_iter()
            .map(|org| OrganizationChoice {
                id: org.id.as_str().to_owned(),
                name: org.name,
                slug: org.slug.as_str().to_owned(),
            })
            .collect();
        Ok(OrganizationPrompt {
            client_name: app.name,
            organizations,
            redirect_uri: req.redirect_uri,
        })
    }

    /// Continues `interaction` in the organization the person picked (`chosen`, an id).
    pub async fn choose_organization(
        &self,
        tenant: &Tenant,
        issuer: &str,
        interaction: &InteractionId,
        (session, origin): (Option<&Session>, Origin),
        chosen: &str,
    ) -> AuthorizeOutcome {
        let (pending, mut req, app) = match self.pending(tenant, interaction).await {
            Ok(found) => found,
            Err(outcome) => return outcome,
        };
        let Some(session) = session.filter(|s| self.is_live(tenant, Some(s))) else {
            return AuthorizeOutcome::Login {
                interaction: pending.id,
            };
        };
        let id = match self.organization_of(tenant, session, chosen).await {
            Ok(Some(id)) => id,
            Ok(None) => {
                return self
                    .finish_with_error(tenant, issuer, &req, Some(&pending), NOT_A_MEMBER)
                    .await;
            }
            Err(e) => return unavailable(e),
        };
        req.organization = Some(id.as_str().to_owned());
        let replaced = match self.replace_interaction(tenant, &pending, &req).await {
            Ok(replaced) => replaced,
            Err(e) => return unavailable(e),
        };
        self.decide(
            tenant,
            issuer,
            &app,
            &req,
            (Some(session), origin),
            Some(&replaced),
        )
        .await
    }

    /// Stores `req` as the pending request in place of `pending`, under a new id but with the
    /// same arrival and expiry: the old id (in the browser's history) is forgotten.
    async fn replace_interaction(
        &self,
        tenant: &Tenant,
        pending: &Interaction,
        req: &super::request::AuthorizationRequest,
    ) -> Result<Interaction, StoreError> {
        let replaced = Interaction {
            id: InteractionId::generate(self.clock.as_ref(), self.rng.as_ref()),
            request: serde_json::to_string(req)
                .map_err(|e| StoreError::Corrupt(format!("cannot encode a request: {e}")))?,
            ..pending.clone()
        };
        let mut tx = self.store.write().await?;
        tx.delete_interaction(&tenant.id, &pending.id).await?;
        tx.insert_interaction(&replaced).await?;
        tx.commit().await?;
        Ok(replaced)
    }
}
