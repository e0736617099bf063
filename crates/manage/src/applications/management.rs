//! The management application every tenant is born with: a confidential client_credentials
//! client holding every management scope (CONTRACTS.md "Tenant API scopes and audience"), whose
//! credentials the control plane returns once when it creates the tenant.

use super::CLIENT_SECRET_PREFIX;
use svc_domain::{
    Application, ClientId, Clock, GeneratedSecret, GrantType, Rng, Scope, ScopeSet, SigningAlg,
    TenantId, TokenEndpointAuthMethod,
};
use time::OffsetDateTime;

/// Name given to every tenant's management application.
pub const MANAGEMENT_APPLICATION_NAME: &str = "Management API";

/// The scopes of every tenant's management application: the ones a served route requires.
pub const MANAGEMENT_SCOPES: [&str; 13] = svc_domain::MANAGEMENT_API_SCOPES;

/// The management application of `tenant` and its freshly generated secret.
pub(crate) fn management_application(
    clock: &dyn Clock,
    rng: &dyn Rng,
    tenant: &TenantId,
    now: OffsetDateTime,
) -> (Application, GeneratedSecret) {
    let secret = GeneratedSecret::generate(CLIENT_SECRET_PREFIX, rng);
    let app = Application {
        id: ClientId::generate(clock, rng),
        tenant_id: tenant.clone(),
        name: MANAGEMENT_APPLICATION_NAME.to_owned(),
        redirect_uris: Vec::new(),
        post_logout_redirect_uris: Vec::new(),
        grant_types: vec![GrantType::ClientCredentials],
        token_endpoint_auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
        allowed_scopes: management_scopes(),
        secret_hash: Some(secret.hash.clone()),
        // `None` is the tenant's management API, `{issuer}/api/v1`.
        api_audience: None,
        first_party: true,
        id_token_signed_response_alg: SigningAlg::Rs256,
        jwks: None,
        jwks_uri: None,
        is_management: true,
        metadata_document: None,
        // Machine-to-machine only: no person signs in for it.
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        logout: Default::default(),
        authorization_details_types: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    (app, secret)
}

/// [`MANAGEMENT_SCOPES`] as a set (every one is a valid scope token; a test holds that).
fn management_scopes() -> ScopeSet {
    ScopeSet::from_scopes(
        MANAGEMENT_SCOPES
            .iter()
            .filter_map(|s| Scope::parse(s).ok()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_management_scope_is_a_valid_resource_action_token() {
        let set = management_scopes();
        assert_eq!(set.iter().count(), MANAGEMENT_SCOPES.len());
        for scope in MANAGEMENT_SCOPES {
            let (resource, action) = scope.split_once(':').unwrap();
            assert!(
                !resource.is_empty() && matches!(action, "read" | "write"),
                "{scope}"
            );
        }
        assert!(set.contains("audit:read") && !set.contains("audit:write"));
    }
}
