//! What a caller sends to create or change a policy, and the rules of each field. Unknown fields
//! are refused at every level, so a misspelt rule is an error rather than a policy that quietly
//! requires less than its author meant.

use crate::ManageError;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeSet;
use svc_domain::{
    ClientId, MAX_POLICY_DESCRIPTION_CHARS, MAX_POLICY_LIST_ENTRIES, MAX_POLICY_NAME_CHARS,
    OrganizationId, PolicyRules, PolicyRulesError, PolicyTargets, RoleKey, RoleKind, TenantId,
};
use svc_store::WriteTx;
use utoipa::ToSchema;

/// Body of `POST /api/v1/policies`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "Finance needs MFA from the office",
    "targets": {"organizations": ["org_01jd2p6r8t0v2x4z6b8d0f2h4k"], "roles": ["accountant"]},
    "rules": {
        "require_acr": "urn:svc:aal2",
        "allowed_ip_ranges": ["203.0.113.0/24", "2001:db8::/32"],
        "max_session_age_secs": 28800
    }
}))]
pub struct NewPolicy {
    /// 1 to 100 characters after trimming, no control characters, unique in the tenant; named
    /// in the refusals the policy causes.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// For administrators (default empty): at most 256 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, nullable = false, max_length = 256)]
    pub description: Option<String>,
    /// Whether it applies (default `true`).
    #[serde(default)]
    #[schema(value_type = Option<bool>, nullable = false)]
    pub enabled: Option<bool>,
    /// Where it applies (default: every sign-in of the tenant).
    #[serde(default)]
    #[schema(value_type = Option<PolicyTargetsInput>, nullable = false)]
    pub targets: Option<PolicyTargetsInput>,
    /// What it requires: at least one rule.
    pub rules: PolicyRulesInput,
}

/// Where a policy applies: every list given must match (AND), one entry of a list is enough
/// (OR); an empty or absent list places no condition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyTargetsInput {
    /// Applications (`client_id`s of this tenant) whose requests it governs; at most 50.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 50)]
    pub applications: Option<Vec<String>>,
    /// Organizations (ids of this tenant): requests made in one of them; at most 50.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 50)]
    pub organizations: Option<Vec<String>>,
    /// Roles (built-in or custom role keys of this tenant): people holding one of them, as a
    /// tenant role or as an organization role in the request's organization; at most 50.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 50)]
    pub roles: Option<Vec<String>>,
}

/// What a governed grant needs; at least one rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyRulesInput {
    /// The weakest `acr` accepted: `urn:svc:aal1` or `urn:svc:aal2`. Below it the person is
    /// asked to step up (or to set up a second factor) at sign-in.
    #[serde(default)]
    #[schema(value_type = Option<String>, nullable = false, example = "urn:svc:aal2")]
    pub require_acr: Option<String>,
    /// Networks (CIDR, IPv4 or IPv6) the person's address must be in; at most 50.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 50)]
    pub allowed_ip_ranges: Option<Vec<String>>,
    /// Sign-in methods (RFC 8176 `amr`: `pwd`, `otp`, `hwk`, `swk`, `fed`), one of which the
    /// sign-in must have used.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 5)]
    pub sign_in_methods: Option<Vec<String>>,
    /// How old the sign-in may be, in seconds (60 to 31622400): older, the person signs in
    /// again, and refreshes of older grants are refused.
    #[serde(default)]
    #[schema(value_type = Option<u64>, nullable = false, minimum = 60, maximum = 31622400)]
    pub max_session_age_secs: Option<u64>,
}

/// Body of `PATCH /api/v1/policies/{id}`: absent fields stay as they are; `targets` and `rules`
/// each replace the whole object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"enabled": false}))]
pub struct PolicyPatch {
    /// New name (same rule as on create).
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<String>, nullable = false, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    /// New description.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<String>, nullable = false, max_length = 256)]
    pub description: Option<String>,
    /// Turns the policy on or off.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<bool>, nullable = false)]
    pub enabled: Option<bool>,
    /// The targets from now on.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<PolicyTargetsInput>, nullable = false)]
    pub targets: Option<PolicyTargetsInput>,
    /// The rules from now on.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<PolicyRulesInput>, nullable = false)]
    pub rules: Option<PolicyRulesInput>,
}

/// A field that is present must hold a value: `null` is refused rather than read as "leave it".
pub(crate) fn not_null<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)?
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom("null is not a value here; leave the field out"))
}

/// Rule: a name is 1 to 100 characters after trimming, without control characters.
pub(crate) fn check_name(raw: &str) -> Result<String, ManageError> {
    let name = raw.trim();
    let len = name.chars().count();
    if !(1..=MAX_POLICY_NAME_CHARS).contains(&len) || name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "name",
            format!(
                "name must be 1 to {MAX_POLICY_NAME_CHARS} characters, without control characters"
            ),
        ));
    }
    Ok(name.to_owned())
}

/// Rule: a description is at most 256 characters after trimming, without control characters.
pub(crate) fn check_description(raw: &str) -> Result<String, ManageError> {
    let text = raw.trim();
    if text.chars().count() > MAX_POLICY_DESCRIPTION_CHARS || text.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "description",
            format!(
                "description is at most {MAX_POLICY_DESCRIPTION_CHARS} characters, without \
                 control characters"
            ),
        ));
    }
    Ok(text.to_owned())
}

/// Rule: the rules parse into their types and meet [`PolicyRules::check`].
pub(crate) fn check_rules(raw: &PolicyRulesInput) -> Result<PolicyRules, ManageError> {
    let allowed_ip_ranges = list("rules.allowed_ip_ranges", raw.allowed_ip_ranges.as_deref())?
        .iter()
        .map(|text| {
            text.parse::<ipnet::IpNet>().map(|net| net.trunc()).map_err(|_| {
                ManageError::invalid(
                    "rules.allowed_ip_ranges",
                    format!("{text:?} is not a network in CIDR notation (203.0.113.0/24, 2001:db8::/32)"),
                )
            })
        })
        .collect::<Result<BTreeSet<_>, _>>()?
        .into_iter()
        .collect();
    let rules = PolicyRules {
        require_acr: raw.require_acr.clone(),
        allowed_ip_ranges,
        sign_in_methods: list("rules.sign_in_methods", raw.sign_in_methods.as_deref())?
            .iter()
            .cloned()
            .collect(),
        max_session_age_secs: raw.max_session_age_secs,
    };
    rules.check().map_err(|e| {
        let field = match e {
            PolicyRulesError::Empty => "rules",
            PolicyRulesError::UnknownAcr => "rules.require_acr",
            PolicyRulesError::UnknownMethod => "rules.sign_in_methods",
            PolicyRulesError::SessionAge => "rules.max_session_age_secs",
            PolicyRulesError::TooMany => "rules.allowed_ip_ranges",
        };
        ManageError::invalid(field, e.to_string())
    })?;
    Ok(rules)
}

/// Rule: the targets name this tenant's applications, organizations and roles (built-in roles
/// of either kind, or custom ones), at most 50 of each. Another tenant's id reads as unknown.
pub(crate) async fn check_targets(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    raw: Option<&PolicyTargetsInput>,
) -> Result<PolicyTargets, ManageError> {
    let Some(raw) = raw else {
        return Ok(PolicyTargets::default());
    };
    let mut targets = PolicyTargets::default();
    for text in list("targets.applications", raw.applications.as_deref())? {
        let unknown = || {
            ManageError::invalid(
                "targets.applications",
                format!("{text:?} is not an application of this tenant"),
            )
        };
        let id = ClientId::parse(text).map_err(|_| unknown())?;
        if tx.application(tenant, &id).await?.is_none() {
            return Err(unknown());
        }
        targets.applications.insert(id);
    }
    for text in list("targets.organizations", raw.organizations.as_deref())? {
        let unknown = || {
            ManageError::invalid(
                "targets.organizations",
                format!("{text:?} is not an organization of this tenant"),
            )
        };
        let id = OrganizationId::parse(text).map_err(|_| unknown())?;
        if tx.organization(tenant, &id).await?.is_none() {
            return Err(unknown());
        }
        targets.organizations.insert(id);
    }
    for text in list("targets.roles", raw.roles.as_deref())? {
        let unknown = || {
            ManageError::invalid(
                "targets.roles",
                format!("{text:?} is not a role of this tenant"),
            )
        };
        let key = RoleKey::parse(text).map_err(|_| unknown())?;
        if RoleKind::of_built_in(key.as_str()).is_none() && tx.role(tenant, &key).await?.is_none() {
            return Err(unknown());
        }
        targets.roles.insert(key);
    }
    Ok(targets)
}

/// A list of at most [`MAX_POLICY_LIST_ENTRIES`] entries (absent: empty).
fn list<'a>(field: &str, raw: Option<&'a [String]>) -> Result<&'a [String], ManageError> {
    let items = raw.unwrap_or_default();
    if items.len() > MAX_POLICY_LIST_ENTRIES {
        return Err(ManageError::invalid(
            field,
            format!("{field} holds at most {MAX_POLICY_LIST_ENTRIES} entries"),
        ));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(json: serde_json::Value) -> Result<PolicyRules, ManageError> {
        check_rules(&serde_json::from_value(json).expect("shape"))
    }

    fn field_of(result: Result<PolicyRules, ManageError>) -> String {
        match result {
            Err(ManageError::Invalid { field, .. }) => field,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn rules_are_typed_and_each_refusal_names_its_field() {
        assert_eq!(field_of(rules(serde_json::json!({}))), "rules");
        assert_eq!(
            field_of(rules(serde_json::json!({"require_acr": "gold"}))),
            "rules.require_acr"
        );
        assert_eq!(
            field_of(rules(
                serde_json::json!({"allowed_ip_ranges": ["10.0.0.0/33"]})
            )),
            "rules.allowed_ip_ranges"
        );
        assert_eq!(
            field_of(rules(
                serde_json::json!({"allowed_ip_ranges": ["example.com"]})
            )),
            "rules.allowed_ip_ranges"
        );
        assert_eq!(
            field_of(rules(serde_json::json!({"sign_in_methods": ["sms"]}))),
            "rules.sign_in_methods"
        );
        assert_eq!(
            field_of(rules(serde_json::json!({"max_session_age_secs": 59}))),
            "rules.max_session_age_secs"
        );
        let many: Vec<String> = (0..51).map(|i| format!("10.0.{i}.0/24")).collect();
        assert_eq!(
            field_of(rules(serde_json::json!({"allowed_ip_ranges": many}))),
            "rules.allowed_ip_ranges"
        );
        assert!(
            serde_json::from_value::<PolicyRulesInput>(serde_json::json!({"require_mfa": true}))
                .is_err(),
            "a misspelt rule is refused, never ignored"
        );
    }

    #[test]
    fn networks_are_normalised_and_deduplicated() {
        let checked = rules(serde_json::json!({
            "allowed_ip_ranges": ["10.1.2.3/8", "10.0.0.0/8", "2001:db8::1/32"]
        }))
        .expect("valid");
        let shown: Vec<String> = checked
            .allowed_ip_ranges
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(shown, ["10.0.0.0/8", "2001:db8::/32"]);
    }

    #[test]
    fn null_in_a_patch_is_refused() {
        for field in ["name", "enabled", "targets", "rules", "description"] {
            let body = serde_json::json!({ field: null });
            assert!(
                serde_json::from_value::<PolicyPatch>(body).is_err(),
                "{field}: null"
            );
        }
    }
}
