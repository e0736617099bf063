//! Rule 5: `exp` and `nbf` admit the current time.
//!
//! - RFC 7519 §4.1.4: the current time MUST be before `exp`; RFC 9068 §2.2 makes `exp` REQUIRED,
//!   so a token without one is refused.
//! - RFC 7519 §4.1.5: the current time MUST be after or equal to `nbf`, when present.
//! - Both allow "a small leeway, usually no more than a few minutes, to account for clock skew";
//!   the route's `leeway_secs` is that allowance.
//!
//! `now_unix` is a parameter: this check never reads the clock.

use crate::claims::numeric_date;
use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 5: valid iff `now < exp + leeway` and, when `nbf` is present, `nbf <= now + leeway`.
pub fn check_validity(
    claims: &Map<String, Value>,
    now_unix: i64,
    leeway_secs: u64,
) -> Result<(), ValidationError> {
    let leeway = i64::try_from(leeway_secs).unwrap_or(i64::MAX);
    let exp = claims
        .get("exp")
        .and_then(numeric_date)
        .ok_or(ValidationError::MissingExpiry)?;
    if now_unix >= exp.saturating_add(leeway) {
        return Err(ValidationError::Expired);
    }
    match claims.get("nbf") {
        None => Ok(()),
        Some(nbf) => {
            let nbf = numeric_date(nbf).ok_or(ValidationError::InvalidClaim { claim: "nbf" })?;
            if nbf > now_unix.saturating_add(leeway) {
                Err(ValidationError::NotYetValid)
            } else {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn check(claims: Value, leeway: u64) -> Result<(), ValidationError> {
        check_validity(claims.as_object().unwrap(), NOW, leeway)
    }

    #[test]
    fn exp_is_exclusive_and_required() {
        assert_eq!(check(json!({"exp": NOW + 1}), 0), Ok(()));
        assert_eq!(check(json!({"exp": NOW}), 0), Err(ValidationError::Expired));
        assert_eq!(check(json!({}), 0), Err(ValidationError::MissingExpiry));
        assert_eq!(
            check(json!({"exp": "soon"}), 0),
            Err(ValidationError::MissingExpiry)
        );
        assert_eq!(
            check(json!({"exp": null}), 0),
            Err(ValidationError::MissingExpiry)
        );
    }

    #[test]
    fn nbf_is_inclusive() {
        assert_eq!(check(json!({"exp": NOW + 60, "nbf": NOW}), 0), Ok(()));
        assert_eq!(
            check(json!({"exp": NOW + 60, "nbf": NOW + 1}), 0),
            Err(ValidationError::NotYetValid)
        );
        assert_eq!(
            check(json!({"exp": NOW + 60, "nbf": "now"}), 0),
            Err(ValidationError::InvalidClaim { claim: "nbf" })
        );
    }

    #[test]
    fn leeway_widens_both_ends() {
        assert_eq!(check(json!({"exp": NOW - 29}), 30), Ok(()));
        assert_eq!(
            check(json!({"exp": NOW - 30}), 30),
            Err(ValidationError::Expired)
        );
        assert_eq!(check(json!({"exp": NOW + 60, "nbf": NOW + 30}), 30), Ok(()));
        assert_eq!(
            check(json!({"exp": NOW + 60, "nbf": NOW + 31}), 30),
            Err(ValidationError::NotYetValid)
        );
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        assert_eq!(check(json!({"exp": i64::MAX}), u64::MAX), Ok(()));
        assert_eq!(
            check(json!({"exp": i64::MIN}), u64::MAX),
            Err(ValidationError::Expired)
        );
        assert_eq!(
            check(json!({"exp": NOW + 60, "nbf": i64::MAX}), 0),
            Err(ValidationError::NotYetValid)
        );
        assert_eq!(check(json!({"exp": i64::MAX, "nbf": i64::MIN}), 0), Ok(()));
    }
}
