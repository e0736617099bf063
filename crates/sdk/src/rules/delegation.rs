//! Rule 9: if `act` is present, the delegation policy is enforced.
//!
//! RFC 8693 §4.1: `act` names the party acting on behalf of the subject; nested `act` members
//! record earlier actors in the chain. A delegated token is accepted only where the route allows
//! delegation, and then only with a well-formed chain: every link a JSON object with a non-empty
//! string `sub`, at most eight links deep.
//!
//! Then the route's policy: the chain names at most [`DelegationPolicy::max_depth`] actors,
//! and, when the route names the parties it trusts, the acting party (the outermost `act`, RFC
//! 8693 §4.1: the current actor; inner ones are history) is one of them.
//!
//! Reduced scopes (the spec's "delegation policy and reduced scopes") are the issuer's job at
//! token exchange (it never grants more than the subject token held); at the resource the
//! granted `scope` is what rule 7 already checked. Routes needing finer policy inspect
//! [`AccessTokenClaims::act`](crate::AccessTokenClaims::act).

use crate::Requirements;
use crate::claims::Actor;
use crate::error::ValidationError;
use serde_json::{Map, Value};

/// What rule 9 accepts, taken from [`Requirements`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegationPolicy<'r> {
    /// Whether delegated tokens are accepted at all.
    pub allow: bool,
    /// Most actors in the chain.
    pub max_depth: usize,
    /// The parties trusted to act; empty trusts any.
    pub trusted_actors: &'r [String],
}

impl<'r> DelegationPolicy<'r> {
    /// The policy of `requirements`.
    pub fn of(requirements: &'r Requirements) -> Self {
        Self {
            allow: requirements.allow_delegation,
            max_depth: requirements.max_delegation_depth,
            trusted_actors: &requirements.trusted_actors,
        }
    }
}

/// Rule 9: no `act`, or delegation is allowed and `act` is a well-formed actor chain within
/// `policy`.
pub fn check_delegation(
    claims: &Map<String, Value>,
    policy: &DelegationPolicy<'_>,
) -> Result<(), ValidationError> {
    let Some(act) = claims.get("act") else {
        return Ok(());
    };
    if !policy.allow {
        return Err(ValidationError::DelegationNotAllowed);
    }
    let actor = Actor::from_value(act, 0).ok_or(ValidationError::InvalidActor)?;
    let mut depth = 1;
    let mut link = &actor;
    while let Some(inner) = link.act.as_deref() {
        depth += 1;
        link = inner;
    }
    if depth > policy.max_depth {
        return Err(ValidationError::DelegationTooDeep);
    }
    if !policy.trusted_actors.is_empty() && !policy.trusted_actors.contains(&actor.sub) {
        return Err(ValidationError::ActorNotTrusted);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(claims: Value, allow: bool) -> Result<(), ValidationError> {
        let policy = DelegationPolicy {
            allow,
            max_depth: 8,
            trusted_actors: &[],
        };
        check_delegation(claims.as_object().unwrap(), &policy)
    }

    #[test]
    fn undelegated_tokens_pass_either_way() {
        assert_eq!(check(json!({}), false), Ok(()));
        assert_eq!(check(json!({}), true), Ok(()));
    }

    #[test]
    fn delegation_needs_the_route_to_allow_it() {
        assert_eq!(
            check(json!({"act": {"sub": "agt_1"}}), false),
            Err(ValidationError::DelegationNotAllowed)
        );
        // Even a malformed `act` is refused as delegation where delegation is not allowed.
        assert_eq!(
            check(json!({"act": null}), false),
            Err(ValidationError::DelegationNotAllowed)
        );
        assert_eq!(check(json!({"act": {"sub": "agt_1"}}), true), Ok(()));
        assert_eq!(
            check(
                json!({"act": {"sub": "agt_1", "act": {"sub": "usr_1"}}}),
                true
            ),
            Ok(())
        );
    }

    #[test]
    fn malformed_chains_are_refused() {
        for act in [
            json!(null),
            json!("agt_1"),
            json!({}),
            json!({"sub": ""}),
            json!({"sub": 1}),
            json!({"sub": "agt_1", "act": "usr_1"}),
            json!({"sub": "agt_1", "act": {"client_id": "x"}}),
        ] {
            assert_eq!(
                check(json!({"act": act}), true),
                Err(ValidationError::InvalidActor)
            );
        }
    }

    #[test]
    fn depth_and_trusted_actors_are_the_routes_policy() {
        let chain =
            json!({"act": {"sub": "svc_gw", "act": {"sub": "agt_1", "act": {"sub": "agt_0"}}}});
        let trusted = ["svc_gw".to_owned()];
        fn policy(max_depth: usize, trusted_actors: &[String]) -> DelegationPolicy<'_> {
            DelegationPolicy {
                allow: true,
                max_depth,
                trusted_actors,
            }
        }
        let claims = chain.as_object().unwrap();
        assert_eq!(check_delegation(claims, &policy(3, &[])), Ok(()));
        assert_eq!(
            check_delegation(claims, &policy(2, &[])),
            Err(ValidationError::DelegationTooDeep)
        );
        assert_eq!(check_delegation(claims, &policy(3, &trusted)), Ok(()));
        // Only the acting party counts: an inner actor named as trusted does not help.
        let inner = ["agt_1".to_owned()];
        assert_eq!(
            check_delegation(claims, &policy(3, &inner)),
            Err(ValidationError::ActorNotTrusted)
        );
        // Through the requirements' builders.
        let requirements = Requirements::new("https://i", "https://a", "ten_1")
            .with_delegation(true)
            .with_max_delegation_depth(3)
            .with_trusted_actors(["svc_gw"]);
        assert_eq!(
            check_delegation(claims, &DelegationPolicy::of(&requirements)),
            Ok(())
        );
        assert_eq!(
            check_delegation(
                claims,
                &DelegationPolicy::of(&requirements.with_max_delegation_depth(1))
            ),
            Err(ValidationError::DelegationTooDeep)
        );
    }
}
