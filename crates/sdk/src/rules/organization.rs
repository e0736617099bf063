//! Rule 6b: the token's organization equals the organization owning the resource.
//!
//! In the spirit of rule 6 (tenant), for routes scoped to one organization
//! ([`Requirements::organization`](crate::Requirements::organization)); a route that names no
//! organization skips it. The server issues, for a person acting in an organization, `org_id`
//! (the id, `org_…`; CONTRACTS.md "Organizations") and `org` with the same value (the spec's
//! claim table); the token's organization is `org_id`, else `org`.
//!
//! Checked right after the tenant and before scopes: a token of another organization is refused
//! as such even when it also lacks the scope, so the refusal never hints at what another
//! organization's token could do. Exact string comparison (ids are case-sensitive, and slugs,
//! which can change, are never compared); a token without an organization acts in none and is
//! refused.

use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 6b: when `organization` is `Some`, the token's organization (`org_id`, else `org`; a
/// `null` claim counts as absent) is a string equal to it. An empty configured organization
/// matches nothing; `None` accepts every token.
///
/// A token whose `org_id` and `org` differ is refused later, when the claims are typed
/// ([`ValidationError::InvalidClaim`]), whatever the route requires.
pub fn check_organization(
    claims: &Map<String, Value>,
    organization: Option<&str>,
) -> Result<(), ValidationError> {
    let Some(required) = organization else {
        return Ok(());
    };
    let present = |claim: &str| claims.get(claim).filter(|v| !v.is_null());
    match present("org_id")
        .or_else(|| present("org"))
        .and_then(Value::as_str)
    {
        Some(org) if !required.is_empty() && org == required => Ok(()),
        _ => Err(ValidationError::WrongOrganization),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ORG: &str = "org_01hzzzzzzzzzzzzzzzzzzzzzzz";

    fn check(claims: Value, organization: Option<&str>) -> Result<(), ValidationError> {
        check_organization(claims.as_object().unwrap(), organization)
    }

    #[test]
    fn exact_match_only() {
        assert_eq!(check(json!({"org_id": ORG}), Some(ORG)), Ok(()));
        assert_eq!(check(json!({"org": ORG}), Some(ORG)), Ok(()));
        assert_eq!(check(json!({"org_id": ORG, "org": ORG}), Some(ORG)), Ok(()));
        for other in [
            json!("org_01hzzzzzzzzzzzzzzzzzzzzzzy"),
            json!(ORG.to_uppercase()),
            json!(format!("{ORG} ")),
            json!("acme-eu"),
            json!(""),
        ] {
            for claim in ["org_id", "org"] {
                assert_eq!(
                    check(json!({claim: other}), Some(ORG)),
                    Err(ValidationError::WrongOrganization),
                    "{claim}: {other}"
                );
            }
        }
    }

    #[test]
    fn wrong_types_are_refused() {
        for other in [json!([ORG]), json!({"id": ORG}), json!(1), json!(true)] {
            for claim in ["org_id", "org"] {
                assert_eq!(
                    check(json!({claim: other}), Some(ORG)),
                    Err(ValidationError::WrongOrganization),
                    "{claim}: {other}"
                );
            }
            // A malformed `org_id` is not rescued by a good `org`.
            assert_eq!(
                check(json!({"org_id": other, "org": ORG}), Some(ORG)),
                Err(ValidationError::WrongOrganization)
            );
        }
    }

    #[test]
    fn org_id_comes_before_org() {
        assert_eq!(
            check(json!({"org_id": "org_other", "org": ORG}), Some(ORG)),
            Err(ValidationError::WrongOrganization)
        );
        assert_eq!(
            check(json!({"org_id": null, "org": ORG}), Some(ORG)),
            Ok(())
        );
    }

    #[test]
    fn a_token_without_an_organization_fails_a_route_that_requires_one() {
        for claims in [
            json!({}),
            json!({"org_id": null}),
            json!({"org": null}),
            json!({"org_slug": "acme-eu"}),
        ] {
            assert_eq!(
                check(claims, Some(ORG)),
                Err(ValidationError::WrongOrganization)
            );
        }
        assert_eq!(
            check(json!({"org_id": ""}), Some("")),
            Err(ValidationError::WrongOrganization)
        );
    }

    #[test]
    fn the_slug_is_never_the_organization() {
        assert_eq!(
            check(
                json!({"org_id": ORG, "org_slug": "acme-eu"}),
                Some("acme-eu")
            ),
            Err(ValidationError::WrongOrganization)
        );
    }

    #[test]
    fn a_route_without_an_organization_checks_nothing() {
        for claims in [
            json!({}),
            json!({"org_id": ORG}),
            json!({"org": 1}),
            json!({"org_id": "a", "org": "b"}),
        ] {
            assert_eq!(check(claims, None), Ok(()));
        }
    }
}
