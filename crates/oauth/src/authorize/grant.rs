//! What an authorization code carries beyond the request, decided once the person signed in:
//! the API resource the request targets (check 14, RFC 8707), the organization the person acts
//! in, and the scopes they may hold (management scopes need `tenant_admin`, an API's permissions
//! need roles holding them).

use super::AuthorizeEndpoint;
use super::request::{AuthorizationRequest, RedirectError};
use crate::resources;
use svc_domain::{ApiResourceId, Application, OrgSlug, OrgStatus, OrganizationId, Session, Tenant};
use svc_store::StoreError;

/// What a code carries beyond the request: decided once the person signed in.
pub(super) struct CodeContext {
    /// The organization they act in.
    pub(super) organization: Option<OrganizationId>,
    /// The API resource the tokens are for.
    pub(super) resource: Option<ApiResourceId>,
    /// The scopes granted.
    pub(super) scope: svc_domain::ScopeSet,
}

impl AuthorizeEndpoint {
    /// Check 14 (RFC 8707): what the request's `resource` targets ([`crate::resources`] rules
    /// 1 and 2), or why it is `invalid_target`. The store is read only for an API resource.
    pub(super) async fn target(
        &self,
        tenant: &Tenant,
        app: &Application,
        values: &[&str],
    ) -> Result<Result<resources::Target, RedirectError>, StoreError> {
        let named = match resources::check_resource(values) {
            Ok(named) => named,
            Err(why) => return Ok(Err(RedirectError::new("invalid_target", why))),
        };
        if named.is_none() || app.api_audience.as_deref() == named {
            return Ok(Ok(resources::Target::Registered));
        }
        let mut tx = self.store.read_once().await?;
        let target = resources::resolve(tx.as_mut(), &tenant.id, app, named).await?;
        tx.finish().await?;
        Ok(target.ok_or_else(|| RedirectError::new("invalid_target", resources::UNKNOWN_RESOURCE)))
    }

    /// The id of the organization `named` (an id or a slug) when it is an active organization
    /// of `tenant` with the session's person as a member.
    pub(super) async fn organization_of(
        &self,
        tenant: &Tenant,
        session: &Session,
        named: &str,
    ) -> Result<Option<OrganizationId>, StoreError> {
        let mut tx = self.store.read().await?;
        let org = if let Ok(id) = OrganizationId::parse(named) {
            tx.organization(&tenant.id, &id).await?
        } else if let Ok(slug) = OrgSlug::parse(named) {
            tx.organization_by_slug(&tenant.id, &slug).await?
        } else {
            None
        };
        let org = org.filter(|o| o.status == OrgStatus::Active);
        let member = match &org {
            Some(org) => tx
                .membership(&tenant.id, &org.id, &session.user_id)
                .await?
                .is_some(),
            None => false,
        };
        tx.finish().await?;
        Ok(org.filter(|_| member).map(|o| o.id))
    }

    /// The requested scopes less the management scopes ([`crate::administrators`]) and the
    /// API permissions ([`crate::resources`]) the person may not hold, with the API resource
    /// the code is for; `None` when that resource was deleted since the request was checked.
    /// Roles are read only when it matters.
    pub(super) async fn granted_scope(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        req: &AuthorizationRequest,
        session: &Session,
        organization: Option<&OrganizationId>,
    ) -> Result<Option<(svc_domain::ScopeSet, Option<ApiResourceId>)>, StoreError> {
        let mut scope = crate::administrators::for_persons_application(req.scopes(), app);
        let management = crate::administrators::for_management_api(app, issuer)
            && crate::administrators::asks_management_scopes(&scope);
        if !management && req.resource.is_none() {
            return Ok(Some((scope, None)));
        }
        let mut tx = self.store.read().await?;
        if management {
            let held = crate::administrators::management_roles(
                tx.as_mut(),
                &tenant.id,
                &session.user_id,
                organization,
            )
            .await?;
            scope = crate::administrators::permitted(&scope, app, issuer, &held);
        }
        let mut resource = None;
        if let Some(identifier) = &req.resource {
            let Some(api) = tx
                .api_resource_by_identifier(&tenant.id, identifier)
                .await?
            else {
                tx.finish().await?;
                return Ok(None);
            };
            let held = resources::person_permissions(
                tx.as_mut(),
                &tenant.id,
                &session.user_id,
                organization,
                &api.id,
            )
            .await?;
            scope = resources::permitted(&scope, &api, &held);
            resource = Some(api.id);
        }
        tx.finish().await?;
        Ok(Some((scope, resource)))
    }

    /// The permissions of the API resource `identifier` with their descriptions, for the
    /// consent page (none when it was deleted meanwhile: the code is refused later anyway).
    pub(super) async fn permission_descriptions(
        &self,
        tenant: &Tenant,
        identifier: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, StoreError> {
        let mut tx = self.store.read_once().await?;
        let api = tx
            .api_resource_by_identifier(&tenant.id, identifier)
            .await?;
        tx.finish().await?;
        Ok(api
            .map(|api| {
                api.permissions
                    .into_iter()
                    .map(|p| (p.name.as_str().to_owned(), p.description))
                    .collect()
            })
            .unwrap_or_default())
    }
}
