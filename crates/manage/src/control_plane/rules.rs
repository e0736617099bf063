//! Input rules of the control plane, one named check each; refusals name the wire field.

use crate::ManageError;
use svc_domain::{MfaPolicy, TenantSlug};

/// Longest tenant display name or operator token name, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 200;

/// Rule: a slug is a DNS label ([`TenantSlug::parse`]): it becomes the first label of the
/// tenant's host.
pub(crate) fn check_slug(slug: &str) -> Result<TenantSlug, ManageError> {
    TenantSlug::parse(slug).map_err(|e| ManageError::invalid("slug", e.to_string()))
}

/// Rule: a display name is 1 to 200 characters after trimming, without control characters.
pub(crate) fn check_display_name(name: &str) -> Result<String, ManageError> {
    check_text("display_name", name)
}

/// Rule: an operator token's name is 1 to 200 characters after trimming, without control
/// characters.
pub(crate) fn check_operator_token_name(name: &str) -> Result<String, ManageError> {
    check_text("name", name)
}

/// Rule: a tenant may ask for second factors (`optional`, `required`) only on a deployment
/// that offers them: a policy nobody could meet would lock every person out, and one that
/// offers nothing would be a setting that does nothing. `default` and `off` always fit.
pub(crate) fn check_mfa_policy(
    policy: MfaPolicy,
    second_factors_offered: bool,
) -> Result<MfaPolicy, ManageError> {
    match policy {
        MfaPolicy::Optional | MfaPolicy::Required if !second_factors_offered => {
            Err(ManageError::invalid(
                "mfa_policy",
                format!(
                    "mfa_policy \"{}\" needs second factors, and this deployment does not \
                     offer them ([two_factor].enabled is false)",
                    policy.as_str()
                ),
            ))
        }
        _ => Ok(policy),
    }
}

fn check_text(field: &str, text: &str) -> Result<String, ManageError> {
    let text = text.trim();
    let len = text.chars().count();
    if !(1..=MAX_NAME_CHARS).contains(&len) || text.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            field,
            format!("{field} must be 1 to {MAX_NAME_CHARS} characters, without control characters"),
        ));
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(e: ManageError) -> (String, String) {
        match e {
            ManageError::Invalid { field, message } => (field, message),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_policy_that_needs_second_factors_needs_a_deployment_that_offers_them() {
        for policy in [MfaPolicy::Optional, MfaPolicy::Required] {
            let (field, message) = field_of(check_mfa_policy(policy, false).unwrap_err());
            assert_eq!(field, "mfa_policy");
            assert!(message.contains("[two_factor].enabled"), "{message}");
            assert_eq!(check_mfa_policy(policy, true).unwrap(), policy);
        }
        for policy in [MfaPolicy::Default, MfaPolicy::Off] {
            assert_eq!(check_mfa_policy(policy, false).unwrap(), policy);
        }
    }

    #[test]
    fn slug_is_a_dns_label() {
        assert_eq!(check_slug("acme-2").unwrap().as_str(), "acme-2");
        for bad in ["", "Acme", "-acme", "acme.corp", &"a".repeat(64)] {
            let (field, message) = field_of(check_slug(bad).unwrap_err());
            assert_eq!(field, "slug");
            assert!(message.contains("tenant slug is a DNS label"), "{message}");
        }
    }

    #[test]
    fn display_name_is_1_to_200_characters_after_trimming() {
        assert_eq!(check_display_name("  Acme Corp ").unwrap(), "Acme Corp");
        assert!(check_display_name(&"ü".repeat(200)).is_ok());
        for bad in ["", "  ", &"x".repeat(201), "line\nbreak"] {
            let (field, message) = field_of(check_display_name(bad).unwrap_err());
            assert_eq!(field, "display_name");
            assert!(
                message.contains("display_name must be 1 to 200 characters"),
                "{message}"
            );
        }
    }

    #[test]
    fn operator_token_name_is_1_to_200_characters() {
        assert_eq!(check_operator_token_name(" ci ").unwrap(), "ci");
        let (field, _) = field_of(check_operator_token_name("").unwrap_err());
        assert_eq!(field, "name");
    }
}
