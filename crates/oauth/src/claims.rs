//! The person's claims an application may receive, and the OIDC `claims` request parameter
//! (OIDC Core §5.5) that asks for them in the ID token or at UserInfo.
//!
//! Rules enforced here:
//! - Consent bounds everything: a claim is released only when a granted scope permits it
//!   (OIDC Core §5.4: `profile` → `name`, `given_name`, `family_name`, `updated_at`; `email` →
//!   `email`, `email_verified`). A `claims` request selects among those, never beyond them.
//! - `id_token` members put the requested claims the scopes permit into the ID token (without a
//!   request the ID token carries none: with an access token issued, they come from UserInfo).
//!   `auth_time` is always in our ID tokens, and `acr` whenever the session has one.
//! - `userinfo` members are answered by UserInfo, which returns every claim the granted scopes
//!   permit (§5.4), so a requested claim is there exactly when consent allows it.
//! - `acr_values` (§3.1.2.1) is a voluntary request for `acr`, recorded on the code as an
//!   `id_token.acr` member with those values when the request has none of its own.
//! - An essential `acr` request with `values` (§5.5.1.1) that the session cannot meet is the
//!   authorization error `unmet_authentication_requirements` (OpenID Connect Core errata
//!   set 2, §3.1.2.6): we have no step-up to offer, and the client insisted.
//! - Members we do not understand are ignored (§5.5: "not understood MUST be ignored").

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use svc_domain::{ScopeSet, User};

/// One requested claim (OIDC Core §5.5.1): whether it is essential and the values asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requested {
    /// `essential: true`.
    pub essential: bool,
    /// `value`, or the members of `values`.
    pub values: Vec<String>,
}

/// A parsed `claims` request: the members of `id_token` and `userinfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimsRequest {
    id_token: BTreeMap<String, Requested>,
    userinfo: BTreeMap<String, Requested>,
}

impl ClaimsRequest {
    /// Reads the JSON text of a `claims` parameter (validated as an object at the authorization
    /// endpoint); anything unreadable reads as no request.
    pub fn parse(raw: Option<&str>) -> Self {
        let Some(Ok(Value::Object(root))) = raw.map(serde_json::from_str::<Value>) else {
            return Self::default();
        };
        Self {
            id_token: members(root.get("id_token")),
            userinfo: members(root.get("userinfo")),
        }
    }

    /// Adds `acr_values` as a voluntary `id_token.acr` request, unless `acr` is requested
    /// already (the `claims` parameter is the more precise of the two).
    #[must_use]
    pub fn with_acr_values(mut self, acr_values: Option<&str>) -> Self {
        let values: Vec<String> = acr_values
            .unwrap_or_default()
            .split(' ')
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect();
        if !values.is_empty() && !self.id_token.contains_key("acr") {
            self.id_token.insert(
                "acr".into(),
                Requested {
                    essential: false,
                    values,
                },
            );
        }
        self
    }

    /// Whether nothing is requested.
    pub fn is_empty(&self) -> bool {
        self.id_token.is_empty() && self.userinfo.is_empty()
    }

    /// The names requested for the ID token.
    pub fn id_token_names(&self) -> impl Iterator<Item = &str> {
        self.id_token.keys().map(String::as_str)
    }

    /// The names requested from UserInfo.
    pub fn userinfo_names(&self) -> impl Iterator<Item = &str> {
        self.userinfo.keys().map(String::as_str)
    }

    /// The acceptable values of an essential `acr` request, when it lists any.
    pub fn essential_acr(&self) -> Option<&[String]> {
        self.id_token
            .get("acr")
            .filter(|r| r.essential && !r.values.is_empty())
            .map(|r| r.values.as_slice())
    }

    /// The request as JSON text (for the authorization code), `None` when empty.
    pub fn to_json(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let render = |members: &BTreeMap<String, Requested>| {
            let map: Map<String, Value> = members
                .iter()
                .map(|(name, r)| {
                    let mut member = Map::new();
                    if r.essential {
                        member.insert("essential".into(), json!(true));
                    }
                    if !r.values.is_empty() {
                        member.insert("values".into(), json!(r.values));
                    }
                    let value = if member.is_empty() {
                        Value::Null
                    } else {
                        Value::Object(member)
                    };
                    (name.clone(), value)
                })
                .collect();
            Value::Object(map)
        };
        let mut root = Map::new();
        if !self.id_token.is_empty() {
            root.insert("id_token".into(), render(&self.id_token));
        }
        if !self.userinfo.is_empty() {
            root.insert("userinfo".into(), render(&self.userinfo));
        }
        Some(Value::Object(root).to_string())
    }
}

fn members(value: Option<&Value>) -> BTreeMap<String, Requested> {
    let Some(Value::Object(map)) = value else {
        return BTreeMap::new();
    };
    map.iter()
        .map(|(name, spec)| {
            let essential = spec["essential"].as_bool().unwrap_or(false);
            let mut values: Vec<String> = spec["values"]
                .as_array()
                .map(|vs| {
                    vs.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            if let Some(one) = spec["value"].as_str() {
                values.push(one.to_owned());
            }
            (name.clone(), Requested { essential, values })
        })
        .collect()
}

/// The scope that permits releasing `claim`, for the person claims we hold.
fn permitting_scope(claim: &str) -> Option<&'static str> {
    match claim {
        "name" | "given_name" | "family_name" | "updated_at" => Some("profile"),
        "email" | "email_verified" => Some("email"),
        _ => None,
    }
}

/// Every person claim we hold, in a stable order.
const PERSON_CLAIMS: [&str; 6] = [
    "name",
    "given_name",
    "family_name",
    "updated_at",
    "email",
    "email_verified",
];

/// The claims among `names` that `scope` permits and `user` has a value for.
pub fn person_claims<'a>(
    user: &User,
    scope: &ScopeSet,
    names: impl IntoIterator<Item = &'a str>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for name in names {
        if !permitting_scope(name).is_some_and(|s| scope.contains(s)) {
            continue;
        }
        let value = match name {
            "name" => user.name.as_ref().map(|v| json!(v)),
            "given_name" => user.given_name.as_ref().map(|v| json!(v)),
            "family_name" => user.family_name.as_ref().map(|v| json!(v)),
            "updated_at" => Some(json!(user.updated_at.unix_timestamp())),
            "email" => Some(json!(user.email.as_str())),
            "email_verified" => Some(json!(user.email_verified)),
            _ => None,
        };
        if let Some(value) = value {
            out.insert(name.to_owned(), value);
        }
    }
    out
}

/// Every person claim `scope` permits (what UserInfo returns, OIDC Core §5.4).
pub fn all_person_claims(user: &User, scope: &ScopeSet) -> Map<String, Value> {
    person_claims(user, scope, PERSON_CLAIMS)
}

/// The scope that asks for the person's roles (ours, like Keycloak's `roles` client scope).
pub const ROLES_SCOPE: &str = "roles";

/// The claims the `roles` scope adds to ID tokens and UserInfo: `roles`, the person's tenant
/// roles, and, when the grant acts in an organization, `org_roles`, their roles in it (both
/// sorted arrays, present even when empty so a client can tell "none" from "not asked").
/// Read at each issuance and each UserInfo call, so they say what holds now.
pub(crate) async fn role_claims<T>(
    tx: &mut T,
    tenant: &svc_domain::TenantId,
    user: &svc_domain::UserId,
    organization: Option<&svc_domain::OrganizationId>,
) -> Result<Map<String, Value>, svc_store::StoreError>
where
    T: svc_store::UserRoleReads + svc_store::OrganizationReads + Send + ?Sized,
{
    let names = |roles: &std::collections::BTreeSet<svc_domain::RoleKey>| {
        json!(roles.iter().map(|r| r.as_str()).collect::<Vec<_>>())
    };
    let mut out = Map::new();
    out.insert(
        "roles".into(),
        names(&tx.granted_roles(tenant, user).await?),
    );
    if let Some(org) = organization {
        let held = tx
            .held_organization_roles(tenant, org, user)
            .await?
            .unwrap_or_default();
        out.insert("org_roles".into(), names(&held));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn members_values_and_essential_are_read_and_unknown_shapes_ignored() {
        let request = ClaimsRequest::parse(Some(
            r#"{"id_token":{"email":null,"acr":{"essential":true,"values":["urn:a","urn:b"]},
                "name":{"value":"x"},"odd":7},"userinfo":{"given_name":{"essential":true}},
                "other":{"ignored":null}}"#,
        ));
        let names: Vec<&str> = request.id_token_names().collect();
        assert_eq!(names, ["acr", "email", "name", "odd"]);
        assert_eq!(request.userinfo_names().collect::<Vec<_>>(), ["given_name"]);
        assert_eq!(
            request.essential_acr(),
            Some(&["urn:a".to_owned(), "urn:b".to_owned()][..])
        );
        assert!(ClaimsRequest::parse(Some("[1]")).is_empty());
        assert!(ClaimsRequest::parse(Some("{\"id_token\":3}")).is_empty());
        assert!(ClaimsRequest::parse(None).is_empty());
    }

    #[test]
    fn acr_values_become_a_voluntary_acr_request_unless_claims_asks_for_acr() {
        let from_values = ClaimsRequest::parse(None).with_acr_values(Some("urn:x  urn:y"));
        assert_eq!(from_values.essential_acr(), None, "voluntary");
        let json = from_values.to_json().unwrap();
        assert_eq!(json, r#"{"id_token":{"acr":{"values":["urn:x","urn:y"]}}}"#);
        assert_eq!(ClaimsRequest::parse(Some(&json)), from_values, "round trip");
        let explicit = ClaimsRequest::parse(Some(
            r#"{"id_token":{"acr":{"essential":true,"value":"urn:z"}}}"#,
        ))
        .with_acr_values(Some("urn:x"));
        assert_eq!(explicit.essential_acr(), Some(&["urn:z".to_owned()][..]));
        assert_eq!(
            ClaimsRequest::parse(None)
                .with_acr_values(Some(" "))
                .to_json(),
            None
        );
    }
}
