//! The client credentials grant (RFC 6749 §4.4): a confidential client obtains a token for
//! itself, the `system` subject.
//!
//! Checks, in order:
//! 1. The application allows `client_credentials` (spec "Every grant must be allowed on the
//!    application"; `unauthorized_client`, RFC 6749 §5.2).
//! 2. The client is confidential (RFC 6749 §4.4: "MUST only be used by confidential clients";
//!    `unauthorized_client`).
//! 3. `scope` parses (RFC 6749 §3.3) and is a subset of the application's allowed scopes
//!    (`invalid_scope` naming the first offending scope; CVE-2024-52287). No `scope` means every
//!    allowed scope (RFC 6749 §3.3 lets us pick a documented default).
//! 4. `resource` (RFC 8707 §2): at most one, since a token has one audience; an absolute URI
//!    without fragment; equal to the application's audience (`api_audience`, or the management
//!    API `{issuer}/api/v1` when none is registered). Otherwise `invalid_target`.
//!
//! A `resource` naming an API resource the tenant registered takes [`for_api`] instead of 3
//! and 4 (machine access through roles, [`crate::resources`]): the token's audience is that
//! API, every requested scope must be one of its permissions (`invalid_scope` otherwise), and
//! the application gets those its tenant roles hold: all of them when no `scope` was sent. A
//! grant of nothing is `invalid_scope`, since a token for an API with no permission in it can do
//! nothing there.
//!
//! No refresh token is ever issued for this grant (RFC 6749 §4.4.3, spec "Token response").

use crate::discovery::management_api_resource;
use crate::error::OAuthError;
use crate::token::request::TokenRequest;
use std::collections::BTreeSet;
use svc_domain::{
    ApiResource, Application, GrantType, PermissionName, Scope, ScopeError, ScopeSet,
};

/// What the grant decided the token will carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentialsGrant {
    /// Granted scopes.
    pub scope: ScopeSet,
    /// The single audience.
    pub audience: String,
}

/// Runs checks 1–4 for an authenticated `application` of the tenant with `issuer`.
pub fn client_credentials(
    application: &Application,
    issuer: &str,
    request: &TokenRequest,
) -> Result<ClientCredentialsGrant, OAuthError> {
    allowed(application)?;
    let scope = scope(application, request.scope())?;
    let audience = audience(application, issuer, request.resources())?;
    Ok(ClientCredentialsGrant { scope, audience })
}

/// Checks 1 and 2, then the permissions of `api` the application `held` (see the module
/// documentation).
pub fn for_api(
    application: &Application,
    request: &TokenRequest,
    api: &ApiResource,
    held: &BTreeSet<PermissionName>,
) -> Result<ClientCredentialsGrant, OAuthError> {
    allowed(application)?;
    let holds = |s: &Scope| held.iter().any(|p| p.as_str() == s.as_str());
    let scope = match request.scope() {
        None => ScopeSet::from_scopes(held.iter().filter_map(|p| Scope::parse(p.as_str()).ok())),
        Some(raw) => {
            let requested = parse_scope(raw)?;
            let (other, _) = crate::resources::split(&requested, Some(api));
            if let Some(first) = other.iter().next() {
                return Err(OAuthError::invalid_scope(format!(
                    "scope `{}` is not a permission of {}",
                    first.as_str(),
                    api.identifier
                )));
            }
            ScopeSet::from_scopes(requested.iter().filter(|s| holds(s)).cloned())
        }
    };
    if scope.is_empty() {
        return Err(OAuthError::invalid_scope(format!(
            "this client's roles grant none of the requested permissions of {}",
            api.identifier
        )));
    }
    Ok(ClientCredentialsGrant {
        scope,
        audience: api.identifier.clone(),
    })
}

/// Whether the `resource` of `request` needs the store: one value, not the application's own
/// audience (checks 4 answers everything else without it).
pub fn names_other_api<'r>(
    application: &Application,
    issuer: &str,
    request: &'r TokenRequest,
) -> Option<&'r str> {
    match request.resources() {
        [one] => {
            let own = application
                .api_audience
                .clone()
                .unwrap_or_else(|| management_api_resource(issuer));
            (*one != own).then_some(one.as_str())
        }
        _ => None,
    }
}

/// Checks 1 and 2.
fn allowed(application: &Application) -> Result<(), OAuthError> {
    if !application.allows_grant(GrantType::ClientCredentials) {
        return Err(OAuthError::unauthorized_client(
            "this client may not use the client_credentials grant",
        ));
    }
    if !application.is_confidential() {
        return Err(OAuthError::unauthorized_client(
            "client_credentials is for confidential clients only (RFC 6749 §4.4)",
        ));
    }
    Ok(())
}

/// Check 3.
fn scope(application: &Application, requested: Option<&str>) -> Result<ScopeSet, OAuthError> {
    let Some(requested) = requested else {
        return Ok(application.allowed_scopes.clone());
    };
    let requested = parse_scope(requested)?;
    if let Some(first) = requested.not_in(&application.allowed_scopes).next() {
        return Err(OAuthError::invalid_scope(format!(
            "scope `{}` is not allowed for this client",
            Scope::as_str(first)
        )));
    }
    Ok(requested)
}

fn parse_scope(requested: &str) -> Result<ScopeSet, OAuthError> {
    ScopeSet::parse(requested).map_err(|e| {
        OAuthError::invalid_scope(match e {
            ScopeError::Malformed => {
                "scope is malformed: space-separated scope tokens (RFC 6749 §3.3)"
            }
            ScopeError::TooLarge => "scope asks for too many or too long scopes",
        })
    })
}

/// Check 4.
fn audience(
    application: &Application,
    issuer: &str,
    resources: &[String],
) -> Result<String, OAuthError> {
    let audience = application
        .api_audience
        .clone()
        .unwrap_or_else(|| management_api_resource(issuer));
    let resource = match resources {
        [] => return Ok(audience),
        [one] => one,
        _ => {
            return Err(OAuthError::invalid_target(
                "only one resource per request: a token has a single audience",
            ));
        }
    };
    // RFC 8707 §2: "MUST be an absolute URI ... MUST NOT include a fragment component".
    let absolute = url::Url::parse(resource).is_ok_and(|u| u.fragment().is_none());
    if !absolute {
        return Err(OAuthError::invalid_target(
            "resource must be an absolute URI without a fragment (RFC 8707 §2)",
        ));
    }
    if *resource != audience {
        return Err(OAuthError::invalid_target(format!(
            "resource must be this client's audience {audience}"
        )));
    }
    Ok(audience)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use svc_domain::{ClientId, SigningAlg, TenantId, TokenEndpointAuthMethod};
    use time::OffsetDateTime;

    const ISSUER: &str = "https://acme.example.com";

    fn app(method: TokenEndpointAuthMethod, grants: &[GrantType]) -> Application {
        Application {
            id: ClientId::parse("app_01jd0000000000000000000000").unwrap(),
            tenant_id: TenantId::parse("ten_01jd0000000000000000000000").unwrap(),
            name: "svc".into(),
            redirect_uris: vec![],
            post_logout_redirect_uris: Vec::new(),
            grant_types: grants.to_vec(),
            token_endpoint_auth_method: method,
            allowed_scopes: ScopeSet::parse("applications:read audit:read").unwrap(),
            secret_hash: None,
            api_audience: None,
            first_party: true,
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
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn confidential() -> Application {
        app(
            TokenEndpointAuthMethod::ClientSecretBasic,
            &[GrantType::ClientCredentials],
        )
    }

    fn run(
        app: &Application,
        pairs: &[(&str, &str)],
    ) -> Result<ClientCredentialsGrant, OAuthError> {
        let mut form = vec![("grant_type".to_owned(), "client_credentials".to_owned())];
        form.extend(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        client_credentials(app, ISSUER, &TokenRequest::parse(&form, None).unwrap())
    }

    #[test]
    fn the_grant_must_be_allowed_and_the_client_confidential() {
        let not_allowed = app(
            TokenEndpointAuthMethod::ClientSecretBasic,
            &[GrantType::AuthorizationCode],
        );
        assert_eq!(
            run(&not_allowed, &[]).unwrap_err().code(),
            ErrorCode::UnauthorizedClient
        );
        let public = app(
            TokenEndpointAuthMethod::None,
            &[GrantType::ClientCredentials],
        );
        let error = run(&public, &[]).unwrap_err();
        assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
        assert!(error.description().contains("confidential"));
    }

    #[test]
    fn no_scope_means_every_allowed_scope() {
        let grant = run(&confidential(), &[]).unwrap();
        assert_eq!(grant.scope.to_string(), "applications:read audit:read");
    }

    #[test]
    fn requested_scopes_must_be_a_subset() {
        let grant = run(&confidential(), &[("scope", "audit:read")]).unwrap();
        assert_eq!(grant.scope.to_string(), "audit:read");
        let error = run(
            &confidential(),
            &[("scope", "audit:read users:write webhooks:write")],
        )
        .unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidScope);
        assert_eq!(
            error.description(),
            "scope `users:write` is not allowed for this client"
        );
    }

    #[test]
    fn malformed_scopes_are_invalid_scope() {
        for bad in ["a  b", " audit:read", "audit:read\t", "a\"b"] {
            let error = run(&confidential(), &[("scope", bad)]).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidScope, "{bad:?}");
            assert!(error.description().contains("malformed"));
        }
        let many = vec!["s"; 65].join(" ");
        assert_eq!(
            run(&confidential(), &[("scope", &many)])
                .unwrap_err()
                .code(),
            ErrorCode::InvalidScope
        );
    }

    #[test]
    fn the_audience_defaults_to_the_management_api() {
        let grant = run(&confidential(), &[]).unwrap();
        assert_eq!(grant.audience, format!("{ISSUER}/api/v1"));
        let grant = run(
            &confidential(),
            &[("resource", &format!("{ISSUER}/api/v1"))],
        )
        .unwrap();
        assert_eq!(grant.audience, format!("{ISSUER}/api/v1"));
    }

    #[test]
    fn resource_must_be_the_registered_audience() {
        let mut custom = confidential();
        custom.api_audience = Some("https://api.example.com".into());
        assert_eq!(
            run(&custom, &[]).unwrap().audience,
            "https://api.example.com"
        );
        assert_eq!(
            run(&custom, &[("resource", "https://api.example.com")])
                .unwrap()
                .audience,
            "https://api.example.com"
        );
        for bad in [
            "https://other.example.com",
            "https://api.example.com/",
            "https://api.example.com#frag",
            "/api/v1",
            "api.example.com",
        ] {
            let error = run(&custom, &[("resource", bad)]).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidTarget, "{bad}");
        }
    }

    fn invoices() -> ApiResource {
        let p = |n: &str| svc_domain::Permission {
            name: PermissionName::parse(n).unwrap(),
            description: String::new(),
        };
        ApiResource {
            id: svc_domain::ApiResourceId::from_u128(1),
            tenant_id: TenantId::from_u128(2),
            identifier: "https://invoices.example.com".into(),
            name: "Invoices".into(),
            permissions: vec![p("invoices:read"), p("invoices:write"), p("invoices:void")],
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn for_invoices(
        pairs: &[(&str, &str)],
        held: &[&str],
    ) -> Result<ClientCredentialsGrant, OAuthError> {
        let mut form = vec![
            ("grant_type".to_owned(), "client_credentials".to_owned()),
            ("resource".to_owned(), invoices().identifier),
        ];
        form.extend(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let request = TokenRequest::parse(&form, None).unwrap();
        assert_eq!(
            names_other_api(&confidential(), ISSUER, &request),
            Some("https://invoices.example.com")
        );
        let held = held
            .iter()
            .map(|p| PermissionName::parse(p).unwrap())
            .collect();
        for_api(&confidential(), &request, &invoices(), &held)
    }

    #[test]
    fn an_api_resource_grants_what_the_roles_hold() {
        let all = for_invoices(&[], &["invoices:read", "invoices:void"]).unwrap();
        assert_eq!(all.audience, "https://invoices.example.com");
        assert_eq!(all.scope.to_string(), "invoices:read invoices:void");
        let some = for_invoices(
            &[("scope", "invoices:read invoices:write")],
            &["invoices:read", "invoices:void"],
        )
        .unwrap();
        assert_eq!(some.scope.to_string(), "invoices:read");
        let foreign =
            for_invoices(&[("scope", "invoices:read audit:read")], &["invoices:read"]).unwrap_err();
        assert_eq!(foreign.code(), ErrorCode::InvalidScope);
        assert!(
            foreign
                .description()
                .contains("`audit:read` is not a permission")
        );
        for (scope, held) in [
            (None, &[][..]),
            (Some("invoices:write"), &["invoices:read"][..]),
        ] {
            let pairs: Vec<(&str, &str)> = scope.map(|s| ("scope", s)).into_iter().collect();
            let error = for_invoices(&pairs, held).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidScope, "{scope:?}");
        }
        let own = TokenRequest::parse(
            &[
                ("grant_type".to_owned(), "client_credentials".to_owned()),
                ("resource".to_owned(), format!("{ISSUER}/api/v1")),
            ],
            None,
        )
        .unwrap();
        assert_eq!(names_other_api(&confidential(), ISSUER, &own), None);
    }

    #[test]
    fn several_resources_are_invalid_target() {
        let error = run(
            &confidential(),
            &[
                ("resource", &format!("{ISSUER}/api/v1")),
                ("resource", &format!("{ISSUER}/api/v1")),
            ],
        )
        .unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidTarget);
        assert!(error.description().contains("only one resource"));
    }
}
