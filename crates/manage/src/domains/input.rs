//! What a caller sends to claim a domain, change a claim or verify one, and the rules of each
//! field. Unknown fields are refused, so a misspelt field is an error rather than silently
//! ignored.

use crate::ManageError;
use crate::organizations::OrgRoleSchema;
use serde::Deserialize;
use std::collections::BTreeSet;
use svc_domain::{DomainName, ORG_MEMBER, ORG_ROLES, RoleKey, RoleKind, TenantId};
use svc_store::WriteTx;
use utoipa::ToSchema;

/// Most roles auto-join may give.
pub const MAX_AUTO_JOIN_ROLES: usize = 16;

/// Body of `POST /api/v1/organizations/{id}/domains`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "acme.example", "auto_join": true, "auto_join_roles": ["member"]}))]
pub struct NewDomain {
    /// The domain: two or more labels of letters, digits and inner hyphens, at most 253
    /// characters, no trailing dot, not an IP address; uppercase is folded and an
    /// internationalized name is stored in its `xn--` form.
    #[schema(min_length = 3, max_length = 253, example = "acme.example")]
    pub name: String,
    /// Once verified, people who sign up with a verified address at exactly this domain join
    /// the organization (default `false`).
    #[serde(default)]
    pub auto_join: bool,
    /// The roles they join with (default `["member"]`): 1 to 16 organization roles.
    #[serde(default)]
    #[schema(value_type = Option<Vec<OrgRoleSchema>>, nullable = false, min_items = 1,
             max_items = 16, example = json!(["member"]))]
    pub auto_join_roles: Option<Vec<String>>,
}

/// Body of `PATCH /api/v1/organizations/{id}/domains/{domain_id}`: absent fields stay.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"auto_join": true, "auto_join_roles": ["member", "admin"]}))]
pub struct DomainPatch {
    /// Whether verified sign-ups at the domain join the organization.
    #[serde(default)]
    pub auto_join: Option<bool>,
    /// The roles they join with: 1 to 16 organization roles.
    #[serde(default)]
    #[schema(value_type = Option<Vec<OrgRoleSchema>>, nullable = false, min_items = 1,
             max_items = 16, example = json!(["member", "admin"]))]
    pub auto_join_roles: Option<Vec<String>>,
}

/// Body of `POST /api/v1/organizations/{id}/domains/{domain_id}/verify` (optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"method": "dns_txt"}))]
pub struct VerifyDomain {
    /// `dns_txt` (default): the TXT record `_svc-verification.<domain>`; `https`: the file
    /// `https://<domain>/.well-known/svc-domain-verification.txt`.
    #[serde(default)]
    #[schema(nullable = false, example = "dns_txt")]
    pub method: Option<MethodSchema>,
}

/// How a claim is proven, as the caller names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = VerificationMethod)]
pub enum MethodSchema {
    /// A TXT record at `_svc-verification.<domain>`.
    DnsTxt,
    /// The file `https://<domain>/.well-known/svc-domain-verification.txt`.
    Https,
}

impl From<MethodSchema> for svc_domain::VerificationMethod {
    fn from(m: MethodSchema) -> Self {
        match m {
            MethodSchema::DnsTxt => Self::DnsTxt,
            MethodSchema::Https => Self::Https,
        }
    }
}

/// Rule: `name` is a domain name ([`DomainName::parse`]), refused naming `name`.
pub(crate) fn check_name(raw: &str) -> Result<DomainName, ManageError> {
    DomainName::parse(raw).map_err(|e| ManageError::invalid("name", e.to_string()))
}

/// Rule: 1 to [`MAX_AUTO_JOIN_ROLES`] organization role keys (default `member`); repeats
/// collapse. A key that is not built in must name a custom organization role, which only the
/// write transaction can tell ([`custom_roles_refused`]).
pub(crate) fn check_roles(raw: Option<&[String]>) -> Result<BTreeSet<RoleKey>, ManageError> {
    let Some(raw) = raw else {
        return Ok([RoleKey::parse(ORG_MEMBER).map_err(|_| refused("member"))?].into());
    };
    if raw.is_empty() || raw.len() > MAX_AUTO_JOIN_ROLES {
        return Err(ManageError::invalid(
            "auto_join_roles",
            format!("auto_join_roles must list 1 to {MAX_AUTO_JOIN_ROLES} organization roles"),
        ));
    }
    raw.iter()
        .map(|role| match RoleKey::parse(role) {
            Ok(key) if RoleKind::of_built_in(key.as_str()) != Some(RoleKind::Tenant) => Ok(key),
            _ => Err(refused(&role.chars().take(64).collect::<String>())),
        })
        .collect()
}

/// Rule: the custom keys of `roles` name organization roles of `tenant` (read, and held against
/// deletion, in the caller's write transaction).
pub(crate) async fn custom_roles_refused(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    roles: &BTreeSet<RoleKey>,
) -> Result<(), ManageError> {
    match crate::roles::unassignable(tx, tenant, roles, RoleKind::Organization).await? {
        None => Ok(()),
        Some((key, _)) => Err(refused(key.as_str())),
    }
}

fn refused(role: &str) -> ManageError {
    ManageError::invalid(
        "auto_join_roles",
        format!(
            "{role:?} is not an organization role of this tenant; the roles are: {} and the \
             tenant's custom organization roles",
            ORG_ROLES.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(err: ManageError) -> String {
        match err {
            ManageError::Invalid { field, .. } => field,
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn names_and_roles_are_refused_naming_their_field() {
        assert_eq!(check_name("Acme.Example").unwrap().as_str(), "acme.example");
        for bad in ["", "localhost", "127.0.0.1", "a_b.example", "example.com."] {
            assert_eq!(field(check_name(bad).unwrap_err()), "name", "{bad}");
        }
        assert_eq!(
            check_roles(None).unwrap(),
            [RoleKey::parse("member").unwrap()].into()
        );
        for bad in [
            vec![],
            vec!["tenant_admin".to_owned()],
            vec!["Not A Role".to_owned()],
            vec!["member".to_owned(); 17],
        ] {
            assert_eq!(
                field(check_roles(Some(&bad)).unwrap_err()),
                "auto_join_roles"
            );
        }
    }

    #[test]
    fn bodies_refuse_unknown_members() {
        assert!(serde_json::from_str::<NewDomain>(r#"{"name":"a.example","x":1}"#).is_err());
        assert!(serde_json::from_str::<DomainPatch>(r#"{"name":"a.example"}"#).is_err());
        let verify: VerifyDomain = serde_json::from_str(r#"{"method":"https"}"#).unwrap();
        assert_eq!(verify.method, Some(MethodSchema::Https));
        assert!(serde_json::from_str::<VerifyDomain>(r#"{"method":"smtp"}"#).is_err());
    }
}
