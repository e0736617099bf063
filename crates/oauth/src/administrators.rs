//! Management API scopes in tokens issued to people (issue 17 "human administrators").
//!
//! A person's access token reaches the management API only when its application registered the
//! tenant's management audience (`{issuer}/api/v1`) as its `api_audience`. Such a token carries
//! the management scopes it asked for (CONTRACTS.md "Tenant API scopes and audience") only when
//! two rules hold, checked when the code is issued and again at every refresh (so a role taken
//! away stops the next refresh from carrying it):
//!
//! 1. The application is first-party: its `sub` is the person's own id, which the management
//!    API needs to know who acts (a pairwise `sub` names nobody the API can check).
//! 2. The person holds the built-in tenant role `tenant_admin`, which grants every management
//!    scope.
//!
//! Otherwise those scopes are left out of the grant (the way resource-server RBAC drops what a
//! role does not hold, rather than failing the sign-in), and the API answers 403
//! `insufficient_scope`. Scopes other than the management ones are not this module's concern.
//! The API also checks the person and their role on every call, so a token already issued stops
//! working when the role is taken away.

use crate::discovery::management_api_resource;
use std::collections::BTreeSet;
use svc_domain::{Application, MANAGEMENT_API_SCOPES, RoleKey, ScopeSet, TENANT_ADMIN};

/// Whether `app`'s tokens for people have the tenant's management API as their audience.
pub(crate) fn for_management_api(app: &Application, issuer: &str) -> bool {
    app.api_audience
        .as_deref()
        .is_some_and(|aud| aud == management_api_resource(issuer))
}

/// Whether the grant asks for any management scope (only then are the person's roles read).
pub(crate) fn asks_management_scopes(scope: &ScopeSet) -> bool {
    MANAGEMENT_API_SCOPES.iter().any(|s| scope.contains(s))
}

/// `scope` without the management scopes the person may not hold through `app` (rules 1 and 2
/// of the module documentation); unchanged for applications of another audience.
pub(crate) fn permitted(
    scope: &ScopeSet,
    app: &Application,
    issuer: &str,
    roles: &BTreeSet<RoleKey>,
) -> ScopeSet {
    if !for_management_api(app, issuer) {
        return scope.clone();
    }
    let administrator = app.first_party && roles.iter().any(|r| r.as_str() == TENANT_ADMIN);
    ScopeSet::from_scopes(
        scope
            .iter()
            .filter(|s| administrator || !MANAGEMENT_API_SCOPES.contains(&s.as_str()))
            .cloned(),
    )
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
            created_at: clock.now(),
            updated_at: clock.now(),
        }
    }

    fn roles(keys: &[&str]) -> BTreeSet<RoleKey> {
        keys.iter().map(|k| RoleKey::parse(k).unwrap()).collect()
    }

    use svc_domain::Clock;

    #[test]
    fn only_first_party_tenant_admins_keep_management_scopes() {
        let asked = ScopeSet::parse("openid applications:write users:read reports:read").unwrap();
        let management = format!("{ISSUER}/api/v1");
        let console = app(Some(&management), true);
        assert_eq!(
            permitted(&asked, &console, ISSUER, &roles(&["tenant_admin"])),
            asked
        );
        let stripped = ScopeSet::parse("openid reports:read").unwrap();
        assert_eq!(permitted(&asked, &console, ISSUER, &roles(&[])), stripped);
        assert_eq!(
            permitted(&asked, &console, ISSUER, &roles(&["owner", "member"])),
            stripped,
            "organization roles are not tenant roles"
        );
        let third_party = app(Some(&management), false);
        assert_eq!(
            permitted(&asked, &third_party, ISSUER, &roles(&["tenant_admin"])),
            stripped,
            "a pairwise subject names nobody the API can check"
        );
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
            assert_eq!(permitted(&asked, &app, ISSUER, &roles(&[])), asked);
        }
        assert!(asks_management_scopes(&asked));
        assert!(!asks_management_scopes(
            &ScopeSet::parse("openid reports:read").unwrap()
        ));
    }
}
