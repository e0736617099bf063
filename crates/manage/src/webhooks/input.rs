//! What callers send to create, change and rotate subscriptions, and the checks that turn it
//! into domain values. Unknown fields are refused (a misspelt `event_type` must not be ignored).

use super::{MAX_SECRET_OVERLAP_SECS, WebhookRules};
use crate::ManageError;
use serde::Deserialize;
use svc_domain::{EventType, WebhookSecret, WebhookUrl};
use utoipa::ToSchema;

/// Longest description accepted.
const MAX_DESCRIPTION: usize = 500;
/// Most event types one subscription may name (more than the catalog is never needed).
const MAX_EVENT_TYPES: usize = 100;

/// `POST /api/v1/webhooks`: a new subscription. Unknown fields are refused.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "url": "https://hooks.example.com/svc",
    "event_types": ["auth.login.success", "tenant_user.invited"],
    "description": "CRM sync"
}))]
pub struct NewWebhook {
    /// The receiver: an absolute `https` URL without credentials (plain `http`, other ports
    /// and internal addresses only where the deployment allows them).
    #[schema(example = "https://hooks.example.com/svc", max_length = 2048)]
    pub url: String,
    /// The event types delivered, 1 to 100 names from `GET /api/v1/webhooks/event-types`
    /// (sorted and de-duplicated when stored). Only types this version records are accepted.
    #[schema(min_items = 1, max_items = 100)]
    pub event_types: Vec<String>,
    /// A signing secret with at least 32 bytes (256 bits) of entropy, e.g. `whsec_` and 44
    /// base64 characters; generated and returned once when absent.
    #[schema(
        example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8bW4rG1CGAs=",
        max_length = 256
    )]
    pub secret: Option<String>,
    /// What it is for, or who owns it: at most 500 characters, no control characters.
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Whether deliveries go out (default true).
    pub active: Option<bool>,
}

/// `PUT /api/v1/webhooks/{id}`: the fields sent change, the others stay; at least one is
/// required. The secret changes with `POST /api/v1/webhooks/{id}/rotate-secret`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"event_types": ["auth.logout"], "active": true}))]
pub struct WebhookPatch {
    /// A new receiver, under the same rules as on creation.
    #[schema(example = "https://hooks.example.com/svc-v2", max_length = 2048)]
    pub url: Option<String>,
    /// New event types (1 to 100 names from the catalog).
    #[schema(min_items = 1, max_items = 100)]
    pub event_types: Option<Vec<String>>,
    /// A new description (at most 500 characters); `null` clears it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 500)]
    pub description: Option<Option<String>>,
    /// Switch deliveries on or off; switching on clears a 410's `disabled_reason`.
    pub active: Option<bool>,
}

/// `POST /api/v1/webhooks/{id}/rotate-secret`: every field is optional, and an empty body
/// asks for a generated secret with the default overlap.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"overlap_secs": 3600}))]
pub struct RotateSecret {
    /// The new secret (at least 32 bytes of entropy, different from the current one);
    /// generated and returned once when absent.
    #[schema(max_length = 256)]
    pub secret: Option<String>,
    /// Seconds the old secret keeps signing beside the new one: 0 to 604800 (a week), default
    /// 86400. 0 retires it at once.
    #[schema(minimum = 0, maximum = 604_800, example = 86_400)]
    pub overlap_secs: Option<u32>,
}

/// Distinguishes `"description": null` (clear) from an absent field (keep).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

pub(super) fn check_url(raw: &str, rules: &WebhookRules) -> Result<WebhookUrl, ManageError> {
    let url = WebhookUrl::parse(raw).map_err(|e| ManageError::invalid("url", e.to_string()))?;
    rules
        .targets
        .check(&url)
        .map_err(|e| ManageError::invalid("url", e.to_string()))?;
    Ok(url)
}

/// Parses, sorts and de-duplicates event types; an unknown one, or one that this version does
/// not record (its feature is still to come), is refused with the catalog.
pub(super) fn check_event_types(raw: &[String]) -> Result<Vec<EventType>, ManageError> {
    if raw.is_empty() {
        return Err(ManageError::invalid(
            "event_types",
            "name at least one event type (GET /api/v1/webhooks/event-types lists them)",
        ));
    }
    if raw.len() > MAX_EVENT_TYPES {
        return Err(ManageError::invalid(
            "event_types",
            format!("at most {MAX_EVENT_TYPES} event types"),
        ));
    }
    let mut types = Vec::with_capacity(raw.len());
    for name in raw {
        let parsed = EventType::parse(name);
        let Some(t) = parsed.filter(|t| t.is_emitted()) else {
            let valid: Vec<&str> = EventType::emitted().map(EventType::as_str).collect();
            let shown: String = name.chars().take(80).collect();
            let what = if parsed.is_some() {
                "is not recorded by this version (its feature is not built yet)"
            } else {
                "is unknown"
            };
            return Err(ManageError::invalid(
                "event_types",
                format!(
                    "event type {shown:?} {what}; valid types are: {}",
                    valid.join(", ")
                ),
            ));
        };
        types.push(t);
    }
    types.sort_unstable();
    types.dedup();
    Ok(types)
}

pub(super) fn check_description(raw: Option<&str>) -> Result<Option<String>, ManageError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(d) if d.chars().count() > MAX_DESCRIPTION => Err(ManageError::invalid(
            "description",
            format!("at most {MAX_DESCRIPTION} characters"),
        )),
        Some(d) if d.chars().any(char::is_control) => Err(ManageError::invalid(
            "description",
            "control characters are not allowed",
        )),
        Some(d) => Ok(Some(d.to_owned())),
    }
}

pub(super) fn check_secret(raw: &str) -> Result<WebhookSecret, ManageError> {
    WebhookSecret::parse(raw).map_err(|e| ManageError::invalid("secret", e.to_string()))
}

pub(super) fn check_overlap(raw: Option<u32>) -> Result<u32, ManageError> {
    let overlap = raw.unwrap_or(super::DEFAULT_SECRET_OVERLAP_SECS);
    if overlap > MAX_SECRET_OVERLAP_SECS {
        return Err(ManageError::invalid(
            "overlap_secs",
            format!("at most {MAX_SECRET_OVERLAP_SECS} seconds (7 days)"),
        ));
    }
    Ok(overlap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::TargetPolicy;

    fn rules(production: bool) -> WebhookRules {
        WebhookRules {
            targets: TargetPolicy {
                https_only: production,
                standard_port_only: production,
                public_only: production,
            },
            max_per_tenant: 10,
        }
    }

    #[test]
    fn event_types_are_parsed_sorted_and_deduplicated_and_unknown_ones_list_the_catalog() {
        let types = check_event_types(&[
            "auth.logout".into(),
            "auth.login.success".into(),
            "auth.logout".into(),
        ])
        .unwrap();
        assert_eq!(types, vec![EventType::LoginSuccess, EventType::Logout]);
        let err = check_event_types(&["auth.login.sucess".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("event_types: event type \"auth.login.sucess\" is unknown"),
            "{err}"
        );
        let dormant = check_event_types(&["wallet.tx.signed".into()])
            .unwrap_err()
            .to_string();
        assert!(
            dormant.starts_with(
                "event_types: event type \"wallet.tx.signed\" is not recorded by this version"
            ),
            "{dormant}"
        );
        assert!(
            !dormant
                .split("valid types are: ")
                .nth(1)
                .unwrap()
                .contains("wallet."),
            "only recorded types are offered: {dormant}"
        );
        assert!(
            err.contains("auth.login.success, auth.login.failure"),
            "{err}"
        );
        assert!(err.contains("webhook.test"), "{err}");
        assert!(
            check_event_types(&[])
                .unwrap_err()
                .to_string()
                .contains("at least one")
        );
        let many: Vec<String> = (0..101).map(|_| "auth.logout".to_owned()).collect();
        assert!(check_event_types(&many).is_err());
        let long = "x".repeat(10_000);
        assert!(check_event_types(&[long]).unwrap_err().to_string().len() < 4_000);
    }

    #[test]
    fn urls_follow_the_deployment_policy() {
        assert!(check_url("http://127.0.0.1:9000/hook", &rules(false)).is_ok());
        let err = check_url("http://127.0.0.1:9000/hook", &rules(true))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "url: url must use https");
        let err = check_url("https://10.0.0.1/hook", &rules(true))
            .unwrap_err()
            .to_string();
        assert!(err.contains("internal address (10.0.0.1)"), "{err}");
        assert!(check_url("https://hooks.example.com/x", &rules(true)).is_ok());
        assert!(check_url("javascript:alert(1)", &rules(false)).is_err());
    }

    #[test]
    fn descriptions_and_overlaps_are_bounded() {
        assert_eq!(
            check_description(Some("  team-a  ")).unwrap().as_deref(),
            Some("team-a")
        );
        assert_eq!(check_description(Some("   ")).unwrap(), None);
        assert!(check_description(Some(&"x".repeat(501))).is_err());
        assert!(check_description(Some("a\u{0}b")).is_err());
        assert_eq!(check_overlap(None).unwrap(), 86_400);
        assert_eq!(check_overlap(Some(0)).unwrap(), 0);
        assert!(check_overlap(Some(604_801)).is_err());
    }

    #[test]
    fn patches_tell_a_cleared_description_from_an_absent_one() {
        let cleared: WebhookPatch = serde_json::from_str(r#"{"description": null}"#).unwrap();
        assert_eq!(cleared.description, Some(None));
        let absent: WebhookPatch = serde_json::from_str("{}").unwrap();
        assert_eq!(absent.description, None);
        assert!(serde_json::from_str::<WebhookPatch>(r#"{"secret": "x"}"#).is_err());
    }
}
