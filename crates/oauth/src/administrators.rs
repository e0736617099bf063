//! Management API scopes in tokens issued to people (issue 17 "human administrators").
//!
//! A person's access token reaches the management API only when its application registered the
//! tenant's management audience (`{issuer}/api/v1`) as its `api_audience`. Such a token carries
//! the management scopes it asked for (CONTRACTS.md "Tenant API scopes and audience") only as
//! these rules allow, checked when the code is issued and again at every refresh (so a role
//! taken away stops the next refresh from carrying it):
//!
//! 1. The application is first-party: its `sub` is the person's own id, which the management
//!    API needs to know who acts (a pairwise `sub` names nobody the API can check).
//! 2. A person holding the built-in tenant role `tenant_admin` keeps every management scope.
//! 3. Otherwise, a person signed in to an organization (the grant's `org_id`) who is its
//!    `owner` or `admin` keeps the [`ORGANIZATION_ADMINISTRATION_SCOPES`]: the management API
//!    serves them only on the routes about that organization (its profile, members, domains and
//!    invitations), and only for it.
//!
//! The person's own API scope `ciba:approve` (ADR 0010) follows rule 1 alone: a third-party
//! application's grant never carries it, whatever its registration says, since its pairwise
//! `sub` names nobody the identity API can act for ([`for_persons_application`]).
//!
//! Otherwise those scopes are left out of the grant (the way resource-server RBAC drops what a
//! role does not hold, rather than failing the sign-in), and the API answers 403
//! `insufficient_scope`. Scopes other than the management ones are not this module's concern.
//! The API also checks the person and their role on every call, so a token already issued stops
//! working when the role is taken away.

use crate::discovery::management_api_resource;
use std::collections::BTreeSet;
use svc_domain::{
    Application, CIBA_APPROVE_SCOPE, MANAGEMENT_API_SCOPES, ORG_ADMIN, ORG_OWNER, OrganizationId,
    RoleKey, ScopeSet, TENANT_ADMIN, TenantId, UserId,
};
use svc_store::{OrganizationReads, StoreError, UserRoleReads};

/// The management scopes an organization's owners and admins may hold (rule 3).
pub(crate) const ORGANIZATION_ADMINISTRATION_SCOPES: [&str; 4] = [
    "organizations:read",
    "organizations:write",
    "users:read",
    "users:write",
];

/// The roles a person holds that rules 2 and 3 look at.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Their tenant roles.
    pub(crate) tenant: BTreeSet<RoleKey>,
    /// Their roles in the organization the grant is for, when it is for one they belong to.
    pub(crate) organization: Option<BTreeSet<RoleKey>>,
}

impl Held {
    fn tenant_admin(&self) -> bool {
        self.tenant.iter().any(|r| r.as_str() == TENANT_ADMIN)
    }

    /// Whether rule 3 holds (the organization roles are worth reading only when rule 2 fails).
    fn organization_administrator(&self) -> bool {
        self.organization.as_ref().is_some_and(|roles| {
            roles
                .iter()
                .any(|r| r.as_str() == ORG_OWNER || r.as_str() == ORG_ADMIN)
        })
    }

    /// Whether the organization roles could still change the answer (rule 2 did not hold).
    pub(crate) fn needs_organization_roles(&self) -> bool {
        !self.tenant_admin()
    }
}

/// Whether `app`'s tokens for people have the tenant's management API as their audience.
pub(crate) fn for_management_api(app: &Application, issuer: &str) -> bool {
    app.api_audience
        .as_deref()
        .is_some_and(|aud| aud == management_api_resource(issuer))
}

/// `scope` without the scopes that act for the person at the tenant's identity API
/// (`ciba:approve`) unless `app` is first-party: dropped, as management scopes are, rather than
/// failing the sign-in. No read is needed: it is rule 1 alone.
pub(crate) fn for_persons_application(scope: ScopeSet, app: &Application) -> ScopeSet {
    if app.first_party || !scope.contains(CIBA_APPROVE_SCOPE) {
        return scope;
    }
    ScopeSet::from_scopes(
        scope
            .iter()
            .filter(|s| s.as_str() != CIBA_APPROVE_SCOPE)
            .cloned(),
    )
}

/// Whether the grant asks for any management scope (only then are the person's roles read).
pub(crate) fn asks_management_scopes(scope: &ScopeSet) -> bool {
    MANAGEMENT_API_SCOPES.iter().any(|s| scope.contains(s))
}

/// The roles of `user` that rules 2 and 3 look at: the tenant roles, and the roles in
/// `organization` (the grant's) only when the tenant roles do not settle it already.
pub(crate) async fn management_roles<T>(
    tx: &mut T,
    tenant: &TenantId,
    user: &UserId,
    organization: Option<&OrganizationId>,
) -> Result<Held, StoreError>
where
    T: UserRoleReads + OrganizationReads + Send + ?Sized,
{
    let mut held = Held {
        tenant: tx.granted_roles(tenant, user).await?,
        organization: None,
    };
    if let Some(org) = organization.filter(|_| held.needs_organization_roles()) {
        held.organization = tx.held_organization_roles(tenant, org, user).await?;
    }
    Ok(held)
}

/// `scope` without the management scopes the person may not hold through `app` (rules 1 to 3
/// of the module documentation); unchanged for applications of another audience.
pub(crate) fn permitted(
    scope: &ScopeSet,
    app: &Application,
    issuer: &str,
    held: &Held,
) -> ScopeSet {
    if !for_management_api(app, issuer) {
        return scope.clone();
    }
    let keeps = |s: &str| {
        if !MANAGEMENT_API_SCOPES.contains(&s) {
            return true;
        }
        app.first_party
            && (held.tenant_admin()
                || (held.organization_administrator()
                    && ORGANIZATION_ADMINISTRATION_SCOPES.contains(&s)))
    };
    ScopeSet::from_scopes(scope.iter().filter(|s| keeps(s.as_str())).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{
        ClientId, GrantType, ManualClock, SeededRandom, SigningAlg, TenantId,
        TokenEndpointAuthMethod,
    };

    const ISSUER: &str = "https://acme.id.example";

    fn app(audience: Option<&str>, first_party: bool) -> Application {
        let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(5);
        Application {
            id: ClientId::generate(&clock, &rng),
            tenant_id: TenantId::generate(&clock, &rng),
            name: "Console".into(),
            redirect_uris: vec![],
            post_logout_redirect_uris: vec![],
            grant_types: vec![GrantType::AuthorizationCode],
            token_endpoint_auth_method: TokenEndpointAuthMethod::None,
            allowed_scopes: ScopeSet::default(),
            secret_hash: None,
            api_audience: audience.map(str::to_owned),
            first_party,
            id_token_signed_response_alg: SigningAlg::Rs256,
            jwks: None,
            jwks_uri: None,
            is_management: false,
            minimum_acr: None,
            organization_usage: svc_domain::OrganizationUsage::Allow,
            require_pushed_authorization_requests: false,
            dpop_bound_access_tokens: false,
            logout: Default::default(),
            authorization_details_types: Vec::new(),
            metadata_document: None,
            created_at: clock.now(),
            updated_at: clock.now(),
        }
    }

    fn roles(keys: &[&str]) -> BTreeSet<RoleKey> {
        keys.iter().map(|k| RoleKey::parse(k).unwrap()).collect()
    }

    fn tenant(keys: &[&str]) -> Held {
        Held {
            tenant: roles(keys),
            organization: None,
        }
    }

    fn in_organization(keys: &[&str]) -> Held {
        Held {
            tenant: roles(&[]),
            organization: Some(roles(keys)),
        }
    }

    use svc_domain::Clock;

    #[test]
    fn only_first_party_applications_keep_ciba_approve() {
        let asked = ScopeSet::parse("openid ciba:approve").unwrap();
        let audience = format!("{ISSUER}/api/v1");
        assert_eq!(
            for_persons_application(asked.clone(), &app(Some(&audience), true)),
            asked
        );
        assert_eq!(
            for_persons_application(asked.clone(), &app(Some(&audience), false)),
            ScopeSet::parse("openid").unwrap()
        );
        let plain = ScopeSet::parse("openid profile").unwrap();
        assert_eq!(
            for_persons_application(plain.clone(), &app(None, false)),
            plain
        );
    }

    #[test]
    fn only_first_party_tenant_admins_keep_management_scopes() {
        let asked = ScopeSet::parse("openid applications:write users:read reports:read").unwrap();
        let management = format!("{ISSUER}/api/v1");
        let console = app(Some(&management), true);
        assert_eq!(
            permitted(&asked, &console, ISSUER, &tenant(&["tenant_admin"])),
            asked
        );
        let stripped = ScopeSet::parse("openid reports:read").unwrap();
        assert_eq!(permitted(&asked, &console, ISSUER, &tenant(&[])), stripped);
        assert_eq!(
            permitted(&asked, &console, ISSUER, &tenant(&["owner", "member"])),
            stripped,
            "organization roles held as tenant role keys are not tenant_admin"
        );
        let third_party = app(Some(&management), false);
        assert_eq!(
            permitted(&asked, &third_party, ISSUER, &tenant(&["tenant_admin"])),
            stripped,
            "a pairwise subject names nobody the API can check"
        );
    }

    #[test]
    fn organization_owners_and_admins_keep_the_organization_scopes_only() {
        let asked = ScopeSet::parse(
            "openid applications:write organizations:read organizations:write users:read \
             users:write policies:write",
        )
        .unwrap();
        let console = app(Some(&format!("{ISSUER}/api/v1")), true);
        let organization =
            ScopeSet::parse("openid organizations:read organizations:write users:read users:write")
                .unwrap();
        for role in ["owner", "admin"] {
            assert_eq!(
                permitted(
                    &asked,
                    &console,
                    ISSUER,
                    &in_organization(&[role, "member"])
                ),
                organization,
                "{role}"
            );
        }
        let none = ScopeSet::parse("openid").unwrap();
        for held in [
            in_organization(&["member", "auditor"]),
            // Owner of nothing: no organization in the grant.
            Held {
                tenant: roles(&["owner"]),
                organization: None,
            },
        ] {
            assert_eq!(permitted(&asked, &console, ISSUER, &held), none);
        }
        let third_party = app(Some(&format!("{ISSUER}/api/v1")), false);
        assert_eq!(
            permitted(&asked, &third_party, ISSUER, &in_organization(&["owner"])),
            none
        );
        // A tenant administrator signed in to an organization keeps everything.
        let both = Held {
            tenant: roles(&["tenant_admin"]),
            organization: Some(roles(&["member"])),
        };
        assert!(!both.needs_organization_roles());
        assert_eq!(permitted(&asked, &console, ISSUER, &both), asked);
    }

    #[test]
    fn other_audiences_are_left_alone() {
        let asked = ScopeSet::parse("openid applications:write").unwrap();
        for audience in [
            None,
            Some("https://api.example.com"),
            Some("https://other.id.example/api/v1"),
            Some("https://acme.id.example/api/v1/"),
        ] {
            let app = app(audience, true);
            assert!(!for_management_api(&app, ISSUER), "{audience:?}");
            assert_eq!(permitted(&asked, &app, ISSUER, &tenant(&[])), asked);
        }
        assert!(asks_management_scopes(&asked));
        assert!(!asks_management_scopes(
            &ScopeSet::parse("openid reports:read").unwrap()
        ));
    }
}
