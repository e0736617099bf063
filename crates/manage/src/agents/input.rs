//! What a caller sends to register or change an agent, and the rule of each field. Unknown
//! members are refused, so a misspelt allowance is an error rather than an agent quietly
//! allowed less (or more) than its owner meant.

use crate::ManageError;
use crate::applications::{check_audience_uri, check_jwks};
use crate::policies::not_null;
use serde::Deserialize;
use svc_domain::{
    AgentOwner, AgentStatus, MAX_AGENT_JWKS_BYTES, MAX_AGENT_METADATA_BYTES, Scope, ScopeSet,
};
use utoipa::ToSchema;

/// Longest agent name, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 100;
/// Most allowed scopes.
pub(crate) const MAX_SCOPES: usize = 50;
/// Most allowed resources.
pub(crate) const MAX_RESOURCES: usize = 20;
/// Scopes of OpenID Connect sign-in: an agent acts with access tokens, it never signs in as a
/// person, so none of these is ever granted to one.
const SIGN_IN_SCOPES: [&str; 6] = [
    "openid",
    "profile",
    "email",
    "phone",
    "address",
    "offline_access",
];

/// Body of `POST /api/v1/agents`.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "Travel booking assistant",
    "owner": "usr_01jd2p6r8t0v2x4z6b8d0f2h4k",
    "jwks": {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1",
                        "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]},
    "allowed_scopes": ["bookings:read", "bookings:write"],
    "allowed_resources": ["https://api.example.com/bookings"],
    "metadata": {"model": "assistant-2", "team": "travel"}
}))]
pub struct NewAgent {
    /// 1 to 100 characters after trimming, no control characters.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Who answers for it: a person (`usr_…`) or an application (`app_…`) of this tenant.
    pub owner: String,
    /// Its public keys, a JWK Set (RFC 7517 §5) of 1 to 10 keys, at most 16 KiB: what it signs
    /// with to prove who it is. Private members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `k`) are
    /// refused.
    #[schema(value_type = Object)]
    pub jwks: serde_json::Value,
    /// The most it may ever be granted (at most 50 scope tokens; not the OpenID Connect sign-in
    /// scopes). Default: none.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 50)]
    pub allowed_scopes: Option<Vec<String>>,
    /// The API resources (their identifiers, absolute URIs) it may obtain tokens for; at most
    /// 20. Default: none.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 20)]
    pub allowed_resources: Option<Vec<String>>,
    /// RFC 9396: the `authorization_details` types it may ask people to delegate, each with the
    /// words the consent page shows and the JSON Schema every object of the type must match, as
    /// an application registers them. At most 16. Needs `[oidc].authorization_details`.
    /// Default: none.
    #[serde(default)]
    #[schema(nullable = false, max_items = 16)]
    pub authorization_details_types: Option<Vec<crate::applications::DetailTypeInput>>,
    /// Free JSON object kept with it (at most 4 KiB). Default: `{}`.
    #[serde(default)]
    #[schema(value_type = Option<Object>, nullable = false)]
    pub metadata: Option<serde_json::Value>,
}

/// Body of `PATCH /api/v1/agents/{id}`: only the members present change; each list and the
/// metadata replace the whole value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"status": "suspended"}))]
pub struct AgentPatch {
    /// New name.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<String>, nullable = false, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    /// New key set (replaces the old one: rotate by registering old and new, then the new).
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<Object>, nullable = false)]
    pub jwks: Option<serde_json::Value>,
    /// New allowed scopes.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 50)]
    pub allowed_scopes: Option<Vec<String>>,
    /// New allowed resources.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<Vec<String>>, nullable = false, max_items = 20)]
    pub allowed_resources: Option<Vec<String>>,
    /// New RAR detail types (replace the old ones).
    #[serde(default, deserialize_with = "not_null")]
    #[schema(nullable = false, max_items = 16)]
    pub authorization_details_types: Option<Vec<crate::applications::DetailTypeInput>>,
    /// New metadata.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<Object>, nullable = false)]
    pub metadata: Option<serde_json::Value>,
    /// `active` or `suspended` (revoking is `DELETE`, and final).
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = Option<String>, nullable = false, example = "suspended")]
    pub status: Option<String>,
}

/// Rule: a name is 1 to 100 characters after trimming, without control characters.
pub(crate) fn check_name(raw: &str) -> Result<String, ManageError> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(ManageError::invalid(
            "name",
            format!("must be 1 to {MAX_NAME_CHARS} characters"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "name",
            "must not contain control characters",
        ));
    }
    Ok(name.to_owned())
}

/// Rule: the owner's id says its kind (`usr_…` or `app_…`); that it exists is checked in the
/// write transaction.
pub(crate) fn check_owner(raw: &str) -> Result<AgentOwner, ManageError> {
    AgentOwner::parse(raw).map_err(|e| ManageError::invalid("owner", e.to_string()))
}

/// Rule: public keys only, as for applications, and at most [`MAX_AGENT_JWKS_BYTES`].
pub(crate) fn check_agent_jwks(jwks: &serde_json::Value) -> Result<String, ManageError> {
    let text = check_jwks(jwks)?;
    if text.len() > MAX_AGENT_JWKS_BYTES {
        return Err(ManageError::invalid(
            "jwks",
            format!("jwks must be at most {MAX_AGENT_JWKS_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// Rule: at most [`MAX_SCOPES`] scope tokens (RFC 6749 §3.3), none of the sign-in scopes.
pub(crate) fn check_scopes(raw: &[String]) -> Result<ScopeSet, ManageError> {
    const FIELD: &str = "allowed_scopes";
    if raw.len() > MAX_SCOPES {
        return Err(ManageError::invalid(
            FIELD,
            format!("at most {MAX_SCOPES} scopes"),
        ));
    }
    let mut scopes = Vec::with_capacity(raw.len());
    for s in raw {
        if SIGN_IN_SCOPES.contains(&s.as_str()) {
            return Err(ManageError::invalid(
                FIELD,
                format!("`{s}` is a sign-in scope: an agent acts with access tokens only"),
            ));
        }
        scopes.push(Scope::parse(s).map_err(|e| ManageError::invalid(FIELD, e.to_string()))?);
    }
    Ok(ScopeSet::from_scopes(scopes))
}

/// Rule: at most [`MAX_RESOURCES`] distinct absolute URIs (RFC 8707 §2: what `resource`
/// names), kept in the order given.
pub(crate) fn check_resources(raw: &[String]) -> Result<Vec<String>, ManageError> {
    const FIELD: &str = "allowed_resources";
    if raw.len() > MAX_RESOURCES {
        return Err(ManageError::invalid(
            FIELD,
            format!("at most {MAX_RESOURCES} resources"),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for r in raw {
        let checked = check_audience_uri(FIELD, r)?;
        if out.contains(&checked) {
            return Err(ManageError::invalid(
                FIELD,
                format!("`{r}` is listed twice"),
            ));
        }
        out.push(checked);
    }
    Ok(out)
}

/// Rule: metadata is a JSON object of at most [`MAX_AGENT_METADATA_BYTES`] as JSON text.
pub(crate) fn check_metadata(
    raw: &serde_json::Value,
) -> Result<serde_json::Map<String, serde_json::Value>, ManageError> {
    const FIELD: &str = "metadata";
    let object = raw
        .as_object()
        .ok_or_else(|| ManageError::invalid(FIELD, "must be a JSON object"))?;
    let len = serde_json::to_string(object).map_or(usize::MAX, |t| t.len());
    if len > MAX_AGENT_METADATA_BYTES {
        return Err(ManageError::invalid(
            FIELD,
            format!("must be at most {MAX_AGENT_METADATA_BYTES} bytes as JSON"),
        ));
    }
    Ok(object.clone())
}

/// Rule: a change of status is to `active` or `suspended`; `revoked` is `DELETE`.
pub(crate) fn check_status(raw: &str) -> Result<AgentStatus, ManageError> {
    match AgentStatus::parse(raw) {
        Some(s @ (AgentStatus::Active | AgentStatus::Suspended)) => Ok(s),
        Some(AgentStatus::Revoked) => Err(ManageError::invalid(
            "status",
            "revoke an agent with DELETE /api/v1/agents/{id}",
        )),
        None => Err(ManageError::invalid(
            "status",
            "must be `active` or `suspended`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(e: ManageError) -> String {
        match e {
            ManageError::Invalid { field, .. } => field,
            other => panic!("not Invalid: {other:?}"),
        }
    }

    #[test]
    fn names_scopes_resources_metadata_and_status_are_bounded() {
        assert_eq!(check_name("  Bot  ").unwrap(), "Bot");
        for bad in ["", "   ", "a\u{7}b", &"x".repeat(101)] {
            assert_eq!(field(check_name(bad).unwrap_err()), "name", "{bad:?}");
        }
        let scopes =
            |v: &[&str]| check_scopes(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert!(scopes(&["orders:read", "tools:search"]).is_ok());
        for bad in [&["openid"][..], &["offline_access"], &["a b"], &[""]] {
            assert_eq!(field(scopes(bad).unwrap_err()), "allowed_scopes", "{bad:?}");
        }
        let many: Vec<String> = (0..51).map(|i| format!("s{i}")).collect();
        assert!(check_scopes(&many).is_err());
        let resources =
            |v: &[&str]| check_resources(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            resources(&["https://b.example", "https://a.example"]).unwrap(),
            ["https://b.example", "https://a.example"]
        );
        for bad in [
            &["not a uri"][..],
            &["https://a.example", "https://a.example"],
            &["https://a.example#f"],
        ] {
            assert_eq!(
                field(resources(bad).unwrap_err()),
                "allowed_resources",
                "{bad:?}"
            );
        }
        assert!(check_metadata(&serde_json::json!({"a": [1, null]})).is_ok());
        for bad in [
            serde_json::json!([]),
            serde_json::json!("x"),
            serde_json::json!({"a": "x".repeat(4096)}),
        ] {
            assert_eq!(field(check_metadata(&bad).unwrap_err()), "metadata");
        }
        assert_eq!(check_status("suspended").unwrap(), AgentStatus::Suspended);
        for bad in ["revoked", "Active", ""] {
            assert_eq!(field(check_status(bad).unwrap_err()), "status", "{bad}");
        }
        assert_eq!(
            field(check_owner("org_01jd0000000000000000000000").unwrap_err()),
            "owner"
        );
    }

    #[test]
    fn a_patch_member_that_is_present_holds_a_value() {
        for member in [
            "name",
            "jwks",
            "allowed_scopes",
            "allowed_resources",
            "metadata",
            "status",
        ] {
            let body = format!(r#"{{"{member}": null}}"#);
            assert!(
                serde_json::from_str::<AgentPatch>(&body).is_err(),
                "{member}"
            );
        }
        let patch: AgentPatch = serde_json::from_str(r#"{"status": "suspended"}"#).unwrap();
        assert_eq!(patch.status.as_deref(), Some("suspended"));
        assert_eq!(patch.name, None);
    }

    #[test]
    fn key_sets_hold_public_keys_within_the_agent_bound() {
        let public = serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "abc"}]});
        assert!(check_agent_jwks(&public).is_ok());
        let private =
            serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "a", "d": "b"}]});
        assert_eq!(field(check_agent_jwks(&private).unwrap_err()), "jwks");
        let big =
            serde_json::json!({"keys": [{"kty": "RSA", "n": "x".repeat(17_000), "e": "AQAB"}]});
        assert_eq!(field(check_agent_jwks(&big).unwrap_err()), "jwks");
    }
}
