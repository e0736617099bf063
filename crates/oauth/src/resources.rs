//! API resources in tokens (issue 17 items 1 and 2): the `resource` parameter (RFC 8707) names
//! one API the tenant registered; the token's audience is that API's identifier, and the
//! permissions it defines are granted as scopes only as far as the caller's roles hold them.
//!
//! Rules, each used by the authorization endpoint, the code and refresh grants and
//! client_credentials:
//! 1. [`check_resource`]: at most one `resource` (a token has one audience, RFC 9700 §2.3), an
//!    absolute URI without fragment (RFC 8707 §2); otherwise `invalid_target`.
//! 2. A `resource` that is not an API registered in the tenant is `invalid_target` — unless it
//!    is the application's own registered audience (`api_audience`), which is what a client
//!    gets without the parameter, so naming it changes nothing.
//! 3. [`split`]: of the requested scopes, the permissions the resource defines are exempt from
//!    the application's `allowed_scopes` (which registers the OpenID and application-level
//!    scopes): who may hold a permission is the roles' business, not the client's.
//! 4. [`permitted`]: the permissions nobody granted the caller are dropped from the grant (the
//!    way the management scopes are, [`crate::administrators`]), not refused: the sign-in
//!    succeeds with what the person holds. A person holds the grants of their tenant roles and,
//!    in an organization, of their roles in it; an application those of its tenant roles.
//!    Checked when the code is issued and again at every redemption and refresh, so a role
//!    taken away stops the next refresh from carrying its permissions.

use crate::error::OAuthError;
use std::collections::BTreeSet;
use svc_domain::{
    ApiResource, ApiResourceId, Application, ClientId, OrganizationId, PermissionName, RoleKey,
    Scope, ScopeSet, TenantId, UserId, permissions_for,
};
use svc_store::{AccessReads, OrganizationReads, StoreError, UserRoleReads};

/// Rule 1: the single `resource` of a request, if any, or why it is refused
/// (`invalid_target`).
pub(crate) fn check_resource<S: AsRef<str>>(values: &[S]) -> Result<Option<&str>, &'static str> {
    let one = match values {
        [] => return Ok(None),
        [one] => one.as_ref(),
        _ => return Err("only one resource per request: a token has a single audience"),
    };
    // RFC 8707 §2: "MUST be an absolute URI ... MUST NOT include a fragment component".
    if url::Url::parse(one).is_ok_and(|u| u.fragment().is_none()) {
        Ok(Some(one))
    } else {
        Err("resource must be an absolute URI without a fragment (RFC 8707 §2)")
    }
}

/// The outcome of rule 2 for a named resource.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// The application's own audience (or no `resource` at all).
    Registered,
    /// An API resource of the tenant.
    Api(ApiResource),
}

impl Target {
    /// The API resource, when one was named.
    pub(crate) fn api(&self) -> Option<&ApiResource> {
        match self {
            Self::Registered => None,
            Self::Api(r) => Some(r),
        }
    }
}

/// The description of rule 2's refusal.
pub(crate) const UNKNOWN_RESOURCE: &str = "resource is not an API registered in this tenant";

/// Rule 2: what `named` targets for `app`; `Ok(None)` when it is unknown (`invalid_target`).
pub(crate) async fn resolve<T>(
    tx: &mut T,
    tenant: &TenantId,
    app: &Application,
    named: Option<&str>,
) -> Result<Option<Target>, StoreError>
where
    T: AccessReads + Send + ?Sized,
{
    let Some(named) = named else {
        return Ok(Some(Target::Registered));
    };
    if app.api_audience.as_deref() == Some(named) {
        return Ok(Some(Target::Registered));
    }
    Ok(tx
        .api_resource_by_identifier(tenant, named)
        .await?
        .map(Target::Api))
}

/// Rule 3: `asked` split into the scopes the application's registration governs and the
/// permissions of `resource` among them.
pub(crate) fn split(asked: &ScopeSet, resource: Option<&ApiResource>) -> (ScopeSet, ScopeSet) {
    let defined = |s: &Scope| {
        resource.is_some_and(|r| r.permissions.iter().any(|p| p.name.as_str() == s.as_str()))
    };
    let (permissions, rest): (Vec<Scope>, Vec<Scope>) = asked.iter().cloned().partition(defined);
    (
        ScopeSet::from_scopes(rest),
        ScopeSet::from_scopes(permissions),
    )
}

/// Rule 4: `scope` without the permissions of `resource` that `held` lacks.
pub(crate) fn permitted(
    scope: &ScopeSet,
    resource: &ApiResource,
    held: &BTreeSet<PermissionName>,
) -> ScopeSet {
    let (rest, asked) = split(scope, Some(resource));
    ScopeSet::from_scopes(
        rest.iter().cloned().chain(
            asked
                .iter()
                .filter(|s| held.iter().any(|p| p.as_str() == s.as_str()))
                .cloned(),
        ),
    )
}

/// The permissions for `resource` a person holds: their tenant roles' grants and, acting in
/// `organization`, their organization roles' grants there.
pub(crate) async fn person_permissions<T>(
    tx: &mut T,
    tenant: &TenantId,
    user: &UserId,
    organization: Option<&OrganizationId>,
    resource: &ApiResourceId,
) -> Result<BTreeSet<PermissionName>, StoreError>
where
    T: AccessReads + UserRoleReads + OrganizationReads + Send + ?Sized,
{
    let mut roles: BTreeSet<RoleKey> = tx.granted_roles(tenant, user).await?;
    if let Some(org) = organization
        && let Some(held) = tx.held_organization_roles(tenant, org, user).await?
    {
        roles.extend(held);
    }
    held(tx, tenant, &roles, resource).await
}

/// The permissions for `resource` an application holds through its tenant roles.
pub(crate) async fn application_permissions<T>(
    tx: &mut T,
    tenant: &TenantId,
    client: &ClientId,
    resource: &ApiResourceId,
) -> Result<BTreeSet<PermissionName>, StoreError>
where
    T: AccessReads + Send + ?Sized,
{
    let roles = tx.application_roles(tenant, client).await?;
    held(tx, tenant, &roles, resource).await
}

/// A person's grant as the token endpoint finds it (a code or a refresh family).
pub(crate) struct Held<'a> {
    /// The person.
    pub user: &'a UserId,
    /// The organization the grant acts in.
    pub organization: Option<&'a OrganizationId>,
    /// The API resource the grant is for.
    pub resource: Option<&'a ApiResourceId>,
    /// The scopes the grant carries.
    pub scope: &'a ScopeSet,
}

/// At the token endpoint (code and refresh grants): the grant's API resource as it stands now
/// and its scope narrowed to the permissions the person holds now (rule 4). The inner error is
/// the refusal: a `resource` parameter naming another target than the grant's (`invalid_target`,
/// RFC 8707 §2.2), or the resource deleted since (`invalid_grant`).
pub(crate) async fn regrant<T>(
    tx: &mut T,
    tenant: &TenantId,
    app: &Application,
    named: &[String],
    grant: Held<'_>,
) -> Result<Result<(Option<ApiResource>, ScopeSet), OAuthError>, StoreError>
where
    T: AccessReads + UserRoleReads + OrganizationReads + Send + ?Sized,
{
    let named = match check_resource(named) {
        Ok(named) => named,
        Err(why) => return Ok(Err(OAuthError::invalid_target(why))),
    };
    let Some(id) = grant.resource else {
        if named.is_some_and(|n| app.api_audience.as_deref() != Some(n)) {
            return Ok(Err(OAuthError::invalid_target(NOT_THE_GRANTS)));
        }
        return Ok(Ok((None, grant.scope.clone())));
    };
    let Some(api) = tx.api_resource(tenant, id).await? else {
        return Ok(Err(OAuthError::invalid_grant(
            "the API resource this grant was for no longer exists",
        )));
    };
    if named.is_some_and(|n| n != api.identifier) {
        return Ok(Err(OAuthError::invalid_target(NOT_THE_GRANTS)));
    }
    let held = person_permissions(tx, tenant, grant.user, grant.organization, &api.id).await?;
    let scope = permitted(grant.scope, &api, &held);
    Ok(Ok((Some(api), scope)))
}

/// A token request naming another API than its grant's.
const NOT_THE_GRANTS: &str = "resource must be the API this grant was issued for";

async fn held<T>(
    tx: &mut T,
    tenant: &TenantId,
    roles: &BTreeSet<RoleKey>,
    resource: &ApiResourceId,
) -> Result<BTreeSet<PermissionName>, StoreError>
where
    T: AccessReads + Send + ?Sized,
{
    if roles.is_empty() {
        return Ok(BTreeSet::new());
    }
    let grants = tx.role_grants(tenant, roles).await?;
    Ok(permissions_for(&grants, resource))
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::Permission;
    use time::OffsetDateTime;

    fn invoices() -> ApiResource {
        let p = |n: &str| Permission {
            name: PermissionName::parse(n).unwrap(),
            description: String::new(),
        };
        ApiResource {
            id: ApiResourceId::from_u128(1),
            tenant_id: TenantId::from_u128(2),
            identifier: "https://api.example.com".into(),
            name: "Invoices".into(),
            permissions: vec![p("invoices:read"), p("invoices:write")],
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn one_absolute_resource_without_fragment() {
        assert_eq!(check_resource::<&str>(&[]), Ok(None));
        assert_eq!(
            check_resource(&["https://api.example.com"]),
            Ok(Some("https://api.example.com"))
        );
        for bad in [
            &["https://a.example", "https://b.example"][..],
            &["/relative"],
            &["https://api.example.com#frag"],
            &["not a uri"],
        ] {
            assert!(check_resource(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn permissions_are_split_from_registered_scopes() {
        let asked = ScopeSet::parse("openid invoices:read reports:read").unwrap();
        let (rest, permissions) = split(&asked, Some(&invoices()));
        assert_eq!(rest, ScopeSet::parse("openid reports:read").unwrap());
        assert_eq!(permissions, ScopeSet::parse("invoices:read").unwrap());
        let (rest, permissions) = split(&asked, None);
        assert_eq!(rest, asked);
        assert!(permissions.is_empty());
    }

    #[test]
    fn only_held_permissions_stay() {
        let asked = ScopeSet::parse("openid invoices:read invoices:write").unwrap();
        let held: BTreeSet<_> = [PermissionName::parse("invoices:read").unwrap()].into();
        assert_eq!(
            permitted(&asked, &invoices(), &held),
            ScopeSet::parse("openid invoices:read").unwrap()
        );
        assert_eq!(
            permitted(&asked, &invoices(), &BTreeSet::new()),
            ScopeSet::parse("openid").unwrap()
        );
        let foreign: BTreeSet<_> = [PermissionName::parse("reports:read").unwrap()].into();
        assert_eq!(
            permitted(&asked, &invoices(), &foreign),
            ScopeSet::parse("openid").unwrap(),
            "a permission of another resource grants nothing here"
        );
    }
}
