//! Rule 8: `subject_type` is acceptable for the route.
//!
//! The spec's caller categories are `human`, `agent`, `system` and `anonymous`. A missing or
//! unknown value is refused rather than guessed, and a route that lists no type accepts none
//! (fail closed).

use crate::claims::SubjectType;
use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 8: `subject_type` names one of `accepted`.
pub fn check_subject_type(
    claims: &Map<String, Value>,
    accepted: &[SubjectType],
) -> Result<(), ValidationError> {
    match claims
        .get("subject_type")
        .and_then(Value::as_str)
        .and_then(SubjectType::parse)
    {
        Some(t) if accepted.contains(&t) => Ok(()),
        _ => Err(ValidationError::SubjectTypeNotAccepted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(value: Value, accepted: &[SubjectType]) -> Result<(), ValidationError> {
        check_subject_type(
            json!({"subject_type": value}).as_object().unwrap(),
            accepted,
        )
    }

    #[test]
    fn accepted_types_pass() {
        let humans = [SubjectType::Human];
        assert_eq!(check(json!("human"), &humans), Ok(()));
        assert_eq!(check(json!("agent"), &SubjectType::ALL), Ok(()));
    }

    #[test]
    fn others_are_refused() {
        let humans = [SubjectType::Human, SubjectType::System];
        for value in [
            json!("agent"),
            json!("anonymous"),
            json!("Human"),
            json!("robot"),
            json!(1),
            json!(null),
        ] {
            assert_eq!(
                check(value, &humans),
                Err(ValidationError::SubjectTypeNotAccepted)
            );
        }
        assert_eq!(
            check(json!("human"), &[]),
            Err(ValidationError::SubjectTypeNotAccepted)
        );
        assert_eq!(
            check_subject_type(json!({}).as_object().unwrap(), &SubjectType::ALL),
            Err(ValidationError::SubjectTypeNotAccepted)
        );
    }
}
