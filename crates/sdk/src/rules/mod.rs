//! The access-token validation contract (spec "Authentication", "Access-token validation
//! contract for protected APIs") as ten named checks, plus rule 6b for organization-scoped routes,
//! one module per rule, run in the spec's order. The first failure stops the pipeline, so a token
//! wrong in several ways always reports the earliest rule (e.g. a wrong tenant before a missing
//! scope, as rule 6 demands).
//!
//! 1. [`bearer`]: the token comes from `Authorization: Bearer` (RFC 6750 §2.1).
//! 2. [`signature`]: ES256/EdDSA signature by a JWKS key with the token's `kid`; `typ` `at+jwt`.
//! 3. [`issuer`]: `iss` equals the issuer.
//! 4. [`audience`]: `aud` contains the API's audience.
//! 5. [`validity`]: `exp` (required) and `nbf` admit now, with leeway.
//! 6. [`tenant`]: `tenant_id` equals the owning tenant.
//!    - 6b. [`organization`]: when the route names an organization, the token's organization
//!      (`org_id`, else `org`) equals it.
//! 7. [`scope`]: `scope` contains the route's scope.
//! 8. [`subject_type`]: `subject_type` is accepted by the route.
//! 9. [`delegation`]: `act` only where delegation is allowed, and well-formed.
//! 10. [`dpop`]: `cnf.jkt` matches a DPoP proof the caller verified.

pub mod audience;
pub mod bearer;
pub mod delegation;
pub mod dpop;
pub mod issuer;
pub mod organization;
pub mod scope;
pub mod signature;
pub mod subject_type;
pub mod tenant;
pub mod validity;

use crate::claims::AccessTokenClaims;
use crate::error::ValidationError;
use crate::requirements::Requirements;
use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;

/// Runs rules 3–10 (with 6b), in order, on claims whose signature (rule 2) the caller has already
/// verified, and returns the typed claims.
///
/// `now_unix` is the current time in seconds since the epoch. Use this when the signature is
/// checked elsewhere (the svc server checks it against its own key store); otherwise use
/// [`validate_with_jwks`].
pub fn check_claims(
    claims: &Value,
    req: &Requirements,
    now_unix: i64,
) -> Result<AccessTokenClaims, ValidationError> {
    check_claims_with_binding(claims, req, req.dpop_jkt.as_deref(), now_unix)
}

/// [`check_claims`] with the DPoP proof thumbprint given apart from `req`, so the validator can
/// withhold it when the token came with the `Bearer` scheme (RFC 9449 §7.2).
pub(crate) fn check_claims_with_binding(
    claims: &Value,
    req: &Requirements,
    dpop_jkt: Option<&str>,
    now_unix: i64,
) -> Result<AccessTokenClaims, ValidationError> {
    // RFC 7519 §7.2 step 10: the claims set is a JSON object.
    let claims = claims.as_object().ok_or(ValidationError::MalformedToken)?;
    issuer::check_issuer(claims, &req.issuer)?; // rule 3
    audience::check_audience(claims, &req.audience)?; // rule 4
    validity::check_validity(claims, now_unix, req.leeway_secs)?; // rule 5
    tenant::check_tenant(claims, &req.tenant_id)?; // rule 6, before scopes
    organization::check_organization(claims, req.organization.as_deref())?; // rule 6b
    scope::check_scope(claims, req.required_scope.as_deref())?; // rule 7
    subject_type::check_subject_type(claims, &req.subject_types)?; // rule 8
    delegation::check_delegation(claims, &delegation::DelegationPolicy::of(req))?; // rule 9
    dpop::check_dpop_binding(claims, dpop_jkt)?; // rule 10
    AccessTokenClaims::from_checked(claims)
}

/// Runs rules 2–10, in order: verifies `token`'s signature with a key of `jwks` (rule 2), then
/// [`check_claims`]. `token` is the bare JWT, as returned by [`crate::bearer_token`].
///
/// jsonwebtoken verifies the signature only; its own `exp`/`aud`/`iss` checks are disabled so
/// that the order and the errors are the contract's.
pub fn validate_with_jwks(
    token: &str,
    jwks: &JwkSet,
    req: &Requirements,
    now_unix: i64,
) -> Result<AccessTokenClaims, ValidationError> {
    let claims = signature::check_signature(token, jwks)?; // rule 2
    check_claims(&claims, req, now_unix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::SubjectType;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn req() -> Requirements {
        Requirements::new(
            "https://acme.id.example",
            "https://acme.id.example/api/v1",
            "ten_1",
        )
        .with_scope("users:read")
    }

    fn good() -> Value {
        json!({
            "iss": "https://acme.id.example",
            "sub": "usr_1",
            "aud": "https://acme.id.example/api/v1",
            "exp": NOW + 600,
            "iat": NOW,
            "jti": "j1",
            "tenant_id": "ten_1",
            "client_id": "app_1",
            "scope": "users:read",
            "subject_type": "human",
        })
    }

    #[test]
    fn a_good_token_passes() {
        let c = check_claims(&good(), &req(), NOW).unwrap();
        assert_eq!(c.subject_type, SubjectType::Human);
    }

    #[test]
    fn a_good_token_of_the_organization_passes() {
        let mut claims = good();
        claims["org_id"] = json!("org_1");
        claims["org"] = json!("org_1");
        claims["org_slug"] = json!("acme");
        let c = check_claims(&claims, &req().with_organization("org_1"), NOW).unwrap();
        assert_eq!(
            (c.org.as_deref(), c.org_slug.as_deref()),
            (Some("org_1"), Some("acme"))
        );
        // A route that names no organization accepts tokens with or without one.
        check_claims(&claims, &req(), NOW).unwrap();
        assert_eq!(
            check_claims(&good(), &req().with_organization("org_1"), NOW).unwrap_err(),
            ValidationError::WrongOrganization
        );
    }

    #[test]
    fn the_earliest_failing_rule_is_reported() {
        // Each step breaks one more rule, from the last to the first; the error always names the
        // earliest broken rule.
        let mut claims = good();
        claims["org_id"] = json!("org_1");
        let req = req().with_organization("org_1");
        let steps: [(&str, Value, ValidationError); 9] = [
            (
                "cnf",
                json!({"jkt": "k"}),
                ValidationError::DpopProofRequired,
            ),
            (
                "act",
                json!({"sub": "a"}),
                ValidationError::DelegationNotAllowed,
            ),
            (
                "subject_type",
                json!("anonymous"),
                ValidationError::SubjectTypeNotAccepted,
            ),
            (
                "scope",
                json!("users:write"),
                ValidationError::InsufficientScope {
                    required: "users:read".into(),
                },
            ),
            ("org_id", json!("org_2"), ValidationError::WrongOrganization),
            ("tenant_id", json!("ten_2"), ValidationError::WrongTenant),
            ("exp", json!(NOW - 600), ValidationError::Expired),
            ("aud", json!("other"), ValidationError::WrongAudience),
            (
                "iss",
                json!("https://evil.example"),
                ValidationError::WrongIssuer,
            ),
        ];
        for (claim, value, expected) in steps {
            claims[claim] = value;
            assert_eq!(
                check_claims(&claims, &req, NOW).unwrap_err(),
                expected,
                "{claim}"
            );
        }
    }

    #[test]
    fn non_object_claims_are_malformed() {
        assert_eq!(
            check_claims(&json!(["iss"]), &req(), NOW).unwrap_err(),
            ValidationError::MalformedToken
        );
    }
}
