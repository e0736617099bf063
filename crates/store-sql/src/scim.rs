//! SCIM 2.0 provisioning: the statements of SCIM tokens and of people's SCIM attributes, the
//! filtered listing of `GET /Users`, and the `ScimReads` / `ScimWrites` ports for [`SqlTx`].
//!
//! A token is found by its hash within its tenant. A person's `userName` is their
//! `scim_users` row's, else their email (`COALESCE`); uniqueness among SCIM-written names is the
//! `scim_users_user_name_key` index on `lower(user_name)`, which SQLite reports by name too. The
//! listing's filter is rendered by `crate::scim_filter` with bound parameters only.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt, scim_filter, users};
use async_trait::async_trait;
use svc_domain::{
    EnterpriseUser, OrganizationId, ScimProfile, ScimToken, ScimTokenId, SecretHash, TenantId,
    UserId,
};
use svc_store::{ScimFilter, ScimPage, ScimReads, ScimSort, ScimUser, ScimWrites, StoreError};
use time::OffsetDateTime;

const TOKEN_BY_HASH: &str = "SELECT id, tenant_id, organization_id, token_hash, created_at, \
     revoked_at FROM scim_tokens WHERE tenant_id = $1 AND token_hash = $2 AND revoked_at IS NULL";
const TOKENS: &str = "SELECT id, tenant_id, organization_id, token_hash, created_at, \
     revoked_at FROM scim_tokens WHERE tenant_id = $1 ORDER BY id";
const INSERT_TOKEN: &str = "INSERT INTO scim_tokens (id, tenant_id, organization_id, \
     token_hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)";
const REVOKE_TOKEN: &str = "UPDATE scim_tokens SET revoked_at = $3 \
     WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL";
const PROFILE: &str = "SELECT user_id, user_name, external_id, enterprise, updated_at \
     FROM scim_users WHERE tenant_id = $1 AND user_id = $2";
const SET_PROFILE: &str = "INSERT INTO scim_users (tenant_id, user_id, user_name, external_id, \
     updated_at, enterprise) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (tenant_id, user_id) DO UPDATE SET \
     user_name = excluded.user_name, external_id = excluded.external_id, \
     updated_at = excluded.updated_at, enterprise = excluded.enterprise";
const DELETE_PROFILE: &str = "DELETE FROM scim_users WHERE tenant_id = $1 AND user_id = $2";

/// The people of a tenant as SCIM sees them: not removed, with their SCIM attributes if any.
const FROM_PEOPLE: &str = " FROM users u LEFT JOIN scim_users s \
     ON s.tenant_id = u.tenant_id AND s.user_id = u.id \
     WHERE u.status <> 'removed' AND u.tenant_id = ";
const COUNT: &str = "SELECT COUNT(*) AS n";
const PAGE: &str = "SELECT u.id, u.tenant_id, u.email, u.email_verified, u.name, u.given_name, \
     u.family_name, u.status, u.password_hash, u.created_at, u.updated_at, u.last_sign_in_at, \
     s.user_name AS scim_user_name, s.external_id AS scim_external_id, \
     s.enterprise AS scim_enterprise, s.updated_at AS scim_updated_at";
const MEMBER_OF: &str = " AND EXISTS (SELECT 1 FROM organization_members m \
     WHERE m.tenant_id = u.tenant_id AND m.user_id = u.id AND m.organization_id = ";

/// A listing statement (`select` is [`COUNT`] or [`PAGE`]) up to and including its conditions.
fn people<'a, D: Dialect>(
    select: &str,
    tenant: &'a TenantId,
    organization: Option<&'a OrganizationId>,
    filter: Option<&ScimFilter>,
) -> Stmt<'a> {
    let mut stmt = Stmt::dynamic(select);
    stmt.push(FROM_PEOPLE).push_bind(tenant.as_str());
    if let Some(org) = organization {
        stmt.push(MEMBER_OF).push_bind(org.as_str()).push(")");
    }
    if let Some(filter) = filter {
        stmt.push(" AND ");
        scim_filter::push(&mut stmt, filter, D::KIND);
    }
    stmt
}

#[async_trait]
impl<D: Dialect> ScimReads for SqlTx<D> {
    async fn scim_token_by_hash(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<ScimToken>, StoreError> {
        Stmt::new(TOKEN_BY_HASH)
            .bind(tenant.as_str())
            .bind(hash.as_bytes().as_slice())
            .fetch_optional_with::<D, _>(self.conn(), decode_token::<D>)
            .await
    }

    async fn scim_tokens(&mut self, tenant: &TenantId) -> Result<Vec<ScimToken>, StoreError> {
        Stmt::new(TOKENS)
            .bind(tenant.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_token::<D>)
            .await
    }

    async fn scim_profile(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Option<ScimProfile>, StoreError> {
        Stmt::new(PROFILE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_optional_with::<D, _>(self.conn(), |row: &Row<D>| {
                let c = Columns::<D>::new(row, "scim_users");
                let enterprise: Option<String> = c.get("enterprise")?;
                Ok(ScimProfile {
                    user_id: user.clone(),
                    user_name: c.get("user_name")?,
                    external_id: c.get("external_id")?,
                    enterprise: decode_enterprise(enterprise.as_deref(), user)?,
                    updated_at: c.get("updated_at")?,
                })
            })
            .await
    }

    async fn scim_users(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        filter: Option<&ScimFilter>,
        sort: Option<&ScimSort>,
        offset: u64,
        limit: u32,
    ) -> Result<ScimPage, StoreError> {
        let row = people::<D>(COUNT, tenant, organization, filter)
            .fetch_one::<D>(self.conn())
            .await?;
        let n: i64 = Columns::<D>::new(&row, "users").get("n")?;
        let total = u64::try_from(n).unwrap_or(0);
        let users = if limit == 0 || offset >= total {
            Vec::new()
        } else {
            let mut stmt = people::<D>(PAGE, tenant, organization, filter);
            scim_filter::push_order(&mut stmt, sort, "u.id", D::KIND);
            stmt.push(" LIMIT ")
                .push_bind(i64::from(limit))
                .push(" OFFSET ")
                .push_bind(i64::try_from(offset).unwrap_or(i64::MAX));
            stmt.fetch_all_with::<D, _>(self.conn(), decode_person::<D>)
                .await?
        };
        Ok(ScimPage { total, users })
    }
}

#[async_trait]
impl<D: Dialect> ScimWrites for SqlTx<D> {
    async fn insert_scim_token(&mut self, token: &ScimToken) -> Result<(), StoreError> {
        Stmt::new(INSERT_TOKEN)
            .bind(token.id.as_str())
            .bind(token.tenant_id.as_str())
            .bind(token.organization_id.as_ref().map(OrganizationId::as_str))
            .bind(token.hash.as_bytes().as_slice())
            .bind(token.created_at)
            .bind(token.revoked_at)
            .execute::<D>(self.conn())
            .await
            // SQLite names no foreign key; an organization is the narrower one a caller names.
            .map_err(|e| {
                let name = if token.organization_id.is_some() {
                    "scim_tokens_organization_fkey"
                } else {
                    "scim_tokens_tenant_id_fkey"
                };
                naming::foreign_key(e, name)
            })?;
        Ok(())
    }

    async fn revoke_scim_token(
        &mut self,
        tenant: &TenantId,
        id: &ScimTokenId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(REVOKE_TOKEN)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn set_scim_profile(
        &mut self,
        tenant: &TenantId,
        profile: &ScimProfile,
    ) -> Result<(), StoreError> {
        Stmt::new(SET_PROFILE)
            .bind(tenant.as_str())
            .bind(profile.user_id.as_str())
            .bind(profile.user_name.as_str())
            .bind(profile.external_id.as_deref())
            .bind(profile.updated_at)
            .bind(encode_enterprise(&profile.enterprise)?)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "scim_users_user_fkey"))?;
        Ok(())
    }

    async fn delete_scim_profile(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_PROFILE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }
}

fn decode_token<D: Dialect>(row: &Row<D>) -> Result<ScimToken, StoreError> {
    let c = Columns::<D>::new(row, "scim_tokens");
    let id: String = c.get("id")?;
    let hash: Vec<u8> = c.get("token_hash")?;
    let r = Record {
        table: "scim_tokens",
        name: &id,
    };
    let tenant: String = c.get("tenant_id")?;
    let organization: Option<String> = c.get("organization_id")?;
    Ok(ScimToken {
        id: r.parse("id", &id, ScimTokenId::parse)?,
        tenant_id: r.parse("tenant_id", &tenant, TenantId::parse)?,
        organization_id: r.parse_opt(
            "organization_id",
            organization.as_deref(),
            OrganizationId::parse,
        )?,
        hash: r.hash("token_hash", &hash)?,
        created_at: c.get("created_at")?,
        revoked_at: c.get("revoked_at")?,
    })
}

/// The enterprise attributes as stored: a JSON object, or NULL when there are none.
fn encode_enterprise(enterprise: &EnterpriseUser) -> Result<Option<String>, StoreError> {
    if enterprise.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(enterprise)
        .map(Some)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode enterprise attributes: {e}")))
}

fn decode_enterprise(text: Option<&str>, user: &UserId) -> Result<EnterpriseUser, StoreError> {
    let Some(text) = text else {
        return Ok(EnterpriseUser::default());
    };
    Record {
        table: "scim_users",
        name: user.as_str(),
    }
    .parse("enterprise", text, |t| {
        serde_json::from_str::<EnterpriseUser>(t)
    })
}

fn decode_person<D: Dialect>(row: &Row<D>) -> Result<ScimUser, StoreError> {
    let user = users::decode::<D>(row)?;
    let c = Columns::<D>::new(row, "scim_users");
    let user_name: Option<String> = c.get("scim_user_name")?;
    let external_id: Option<String> = c.get("scim_external_id")?;
    let enterprise: Option<String> = c.get("scim_enterprise")?;
    let updated_at: Option<OffsetDateTime> = c.get("scim_updated_at")?;
    let profile = match (user_name, updated_at) {
        (Some(user_name), Some(updated_at)) => Some(ScimProfile {
            enterprise: decode_enterprise(enterprise.as_deref(), &user.id)?,
            user_id: user.id.clone(),
            user_name,
            external_id,
            updated_at,
        }),
        _ => None,
    };
    Ok(ScimUser { user, profile })
}
