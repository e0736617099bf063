//! SCIM 2.0 provisioning (RFC 7643, RFC 7644) as the domain sees it: the bearer tokens a
//! directory (Entra ID, Okta) presents at a tenant's `/scim/v2`, and the few SCIM attributes of a
//! person that are not already a [`crate::User`] field (`userName`, `externalId`, and the
//! enterprise User extension's attributes, RFC 7643 §4.3).
//!
//! A token belongs to a tenant and, optionally, to one organization of it: an organization's
//! token provisions that organization's members only. Only its SHA-256 is stored; a revoked
//! token is kept (listed as revoked) so the audit trail keeps pointing at something.

use crate::{
    GeneratedSecret, OrganizationId, Rng, ScimGroupId, ScimTokenId, SecretHash, TenantId, UserId,
    base32_secret,
};
use time::OffsetDateTime;

/// Prefix of SCIM bearer tokens (`svcscim_…`, CONTRACTS.md "Organizations, roles, keys, SCIM"),
/// so a leaked string says what it is; distinct from their ids (`scimt_…`).
pub const SCIM_TOKEN_PREFIX: &str = "svcscim_";

/// A fresh SCIM token: `svcscim_` and 32 random bytes in unpadded base32 (52 characters).
pub fn generate_scim_token(rng: &dyn Rng) -> GeneratedSecret {
    let text = base32_secret(SCIM_TOKEN_PREFIX, rng);
    let hash = SecretHash::of(&text);
    GeneratedSecret {
        plaintext: text,
        hash,
    }
}

/// A SCIM bearer token of a tenant, or of one organization of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimToken {
    /// Its handle.
    pub id: ScimTokenId,
    /// The tenant it provisions.
    pub tenant_id: TenantId,
    /// The organization it is limited to; `None`: the whole tenant.
    pub organization_id: Option<OrganizationId>,
    /// SHA-256 of the token.
    pub hash: SecretHash,
    /// When it was issued.
    pub created_at: OffsetDateTime,
    /// When it was revoked; a revoked token authenticates nothing.
    pub revoked_at: Option<OffsetDateTime>,
}

/// The SCIM attributes of a person that are not [`crate::User`] fields. A person created
/// outside SCIM has none until a directory first writes them: their `userName` is their email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimProfile {
    /// The person.
    pub user_id: UserId,
    /// `userName` (RFC 7643 §4.1.1): unique per tenant, compared case-insensitively.
    pub user_name: String,
    /// `externalId` (RFC 7643 §3.1): the directory's own identifier, never ours.
    pub external_id: Option<String>,
    /// The enterprise User extension's attributes (RFC 7643 §4.3); empty when none was given.
    pub enterprise: EnterpriseUser,
    /// Last change of any of these attributes (part of the resource's version).
    pub updated_at: OffsetDateTime,
}

/// The enterprise User extension (RFC 7643 §4.3,
/// `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`), as a directory sends it: free
/// text the directory owns, shown back as given. `manager` keeps the manager's `value` (the
/// directory's id of them); its read-only `displayName` and `$ref` are not stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnterpriseUser {
    /// `employeeNumber`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub employee_number: Option<String>,
    /// `costCenter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_center: Option<String>,
    /// `organization`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// `division`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub division: Option<String>,
    /// `department`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub department: Option<String>,
    /// `manager.value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
}

impl EnterpriseUser {
    /// Whether no attribute is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Longest `displayName` of a group, in characters.
pub const MAX_SCIM_GROUP_NAME_CHARS: usize = 256;

/// A SCIM group (RFC 7643 §4.2): a named set of people a directory maintains, living in the
/// scope of the token that created it (the tenant, or one organization). Its members are
/// stored apart (a list of [`UserId`]s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimGroup {
    /// Its handle (the resource's `id`).
    pub id: ScimGroupId,
    /// The tenant it belongs to.
    pub tenant_id: TenantId,
    /// The organization it belongs to; `None`: the tenant itself.
    pub organization_id: Option<OrganizationId>,
    /// `displayName`: unique within its scope, compared case-insensitively.
    pub display_name: String,
    /// `externalId` (RFC 7643 §3.1): the directory's own identifier.
    pub external_id: Option<String>,
    /// When it was created (`meta.created`).
    pub created_at: OffsetDateTime,
    /// Last change of its name, `externalId` or members (`meta.lastModified`, the version).
    pub updated_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SeededRandom;
    use crate::secret::BASE32;

    #[test]
    fn tokens_are_prefixed_base32_and_hashed() {
        let a = generate_scim_token(&SeededRandom::new(1));
        let b = generate_scim_token(&SeededRandom::new(2));
        assert!(a.plaintext.starts_with(SCIM_TOKEN_PREFIX));
        assert_eq!(a.plaintext.len(), SCIM_TOKEN_PREFIX.len() + 52);
        assert!(
            a.plaintext[SCIM_TOKEN_PREFIX.len()..]
                .bytes()
                .all(|c| BASE32.contains(&c))
        );
        assert!(a.hash.verify(&a.plaintext));
        assert!(!a.hash.verify(&b.plaintext));
    }
}
