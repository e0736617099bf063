//! Rule 9: if `act` is present, the delegation policy is enforced.
//!
//! RFC 8693 §4.1: `act` names the party acting on behalf of the subject; nested `act` members
//! record earlier actors in the chain. A delegated token is accepted only where the route allows
//! delegation, and then only with a well-formed chain: every link a JSON object with a non-empty
//! string `sub`, at most eight links deep.
//!
//! Reduced scopes (the spec's "delegation policy and reduced scopes") are the issuer's job at
//! token exchange; at the resource the granted `scope` is what rule 7 already checked. Routes
//! needing finer policy inspect [`AccessTokenClaims::act`](crate::AccessTokenClaims::act).

use crate::claims::Actor;
use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 9: no `act`, or delegation is allowed and `act` is a well-formed actor chain.
pub fn check_delegation(claims: &Map<String, Value>, allow: bool) -> Result<(), ValidationError> {
    let Some(act) = claims.get("act") else {
        return Ok(());
    };
    if !allow {
        return Err(ValidationError::DelegationNotAllowed);
    }
    Actor::from_value(act, 0)
        .map(|_| ())
        .ok_or(ValidationError::InvalidActor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(claims: Value, allow: bool) -> Result<(), ValidationError> {
        check_delegation(claims.as_object().unwrap(), allow)
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
}
