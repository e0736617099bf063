//! Refresh-token families and their tokens: their statements, their row forms
//! ([`RefreshFamilyRow`], [`RefreshTokenRow`]) and the refresh operations of the
//! `GrantReads`/`GrantWrites` ports (implemented for [`crate::SqlTx`] in `grants`).
//!
//! Rotation is one conditional `UPDATE ... WHERE rotated_at IS NULL RETURNING`: only the call
//! that changed the row gets it back, so a token is rotated once however many requests race. On
//! PostgreSQL a concurrent rotation waits for the first one's row lock; under READ COMMITTED it
//! then re-evaluates `rotated_at IS NULL` against the committed row and changes nothing. On
//! SQLite writers are serialised by `BEGIN IMMEDIATE` too. Rotation is on the hot path of every
//! refresh: where the dialect allows an `UPDATE ... RETURNING` in a `WITH` clause
//! ([`Dialect::DATA_MODIFYING_CTE`], PostgreSQL) the rotated token is joined with its family in
//! the same statement, one round trip; elsewhere (SQLite, in-process, where a round trip costs
//! little) the family is read by a second statement. When nothing changed, a read of the token
//! with its family tells reuse (`Reused`) from a token that does not exist for the tenant
//! (`Unknown`). Revocation only touches unrevoked families, so the first reason recorded stays.
//! `scope` and `amr` are JSON arrays (`jsonb` on PostgreSQL); SQLite also writes the
//! `expires_at_ns` / `revoked_at_ns` twins, for the purge.

use crate::dialect::{Conn, Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, hash_name};
use crate::{Columns, Row, Stmt, encode_scopes, encode_strings};
use svc_domain::{
    ApiResourceId, ClientId, OrganizationId, RefreshFamily, RefreshFamilyId, RefreshToken,
    SecretHash, SessionId, TenantId, UserId,
};
use svc_store::{RefreshRotation, StoreError};
use time::OffsetDateTime;

const SELECT_FAMILY: &str = "SELECT id, tenant_id, client_id, user_id, session_id, scope, \
     subject, auth_time, acr, amr, organization_id, resource_id, dpop_jkt, \
     authorization_details, created_at, expires_at, revoked_at, revoke_reason FROM refresh_families WHERE tenant_id = $1 AND id = $2";
// The token's columns keep their names; the family's that clash are prefixed `family_`.
const SELECT_TOKEN_AND_FAMILY: &str = "SELECT t.hash, t.family_id, t.tenant_id, t.scope, \
     t.created_at, t.expires_at, t.rotated_at, f.client_id, f.user_id, f.session_id, \
     f.scope AS family_scope, f.subject, f.auth_time, f.acr, f.amr, f.organization_id, \
     f.resource_id, f.dpop_jkt, f.authorization_details, \
     f.created_at AS family_created_at, f.expires_at AS family_expires_at, f.revoked_at, \
     f.revoke_reason \
     FROM refresh_tokens t JOIN refresh_families f \
     ON f.tenant_id = t.tenant_id AND f.id = t.family_id \
     WHERE t.tenant_id = $1 AND t.hash = $2";
/// Rotation without a data-modifying CTE: the rotated token only; its family is read with
/// [`SELECT_FAMILY`].
const ROTATE: &str = "UPDATE refresh_tokens SET rotated_at = $3 \
     WHERE tenant_id = $1 AND hash = $2 AND rotated_at IS NULL \
     RETURNING hash, family_id, tenant_id, scope, created_at, expires_at, rotated_at";
/// Rotation with a data-modifying CTE: the rotated token joined with its family, in the row shape
/// of [`SELECT_TOKEN_AND_FAMILY`], one round trip on the hot path of every refresh.
const ROTATE_WITH_FAMILY: &str = "WITH t AS (UPDATE refresh_tokens SET rotated_at = $3 \
     WHERE tenant_id = $1 AND hash = $2 AND rotated_at IS NULL \
     RETURNING hash, family_id, tenant_id, scope, created_at, expires_at, rotated_at) \
     SELECT t.hash, t.family_id, t.tenant_id, t.scope, t.created_at, t.expires_at, \
     t.rotated_at, f.client_id, f.user_id, f.session_id, f.scope AS family_scope, f.subject, \
     f.auth_time, f.acr, f.amr, f.organization_id, f.resource_id, f.dpop_jkt, f.authorization_details, \
     f.created_at AS family_created_at, f.expires_at AS family_expires_at, f.revoked_at, \
     f.revoke_reason \
     FROM t JOIN refresh_families f ON f.tenant_id = t.tenant_id AND f.id = t.family_id";
const INSERT_FAMILY: PerDialect = PerDialect {
    sqlite: "INSERT INTO refresh_families (id, tenant_id, client_id, user_id, session_id, \
         scope, subject, auth_time, acr, amr, organization_id, created_at, expires_at, \
         expires_at_ns, revoked_at, revoked_at_ns, revoke_reason, resource_id, dpop_jkt, \
         authorization_details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
         $14, $15, $16, $17, $18, $19, $20)",
    postgres: "INSERT INTO refresh_families (id, tenant_id, client_id, user_id, session_id, \
         scope, subject, auth_time, acr, amr, organization_id, created_at, expires_at, \
         revoked_at, revoke_reason, resource_id, dpop_jkt, authorization_details) VALUES ($1, $2, \
         $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
};
const INSERT_TOKEN: &str = "INSERT INTO refresh_tokens (hash, family_id, tenant_id, scope, \
     created_at, expires_at, rotated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
const REVOKE_FAMILY: PerDialect = PerDialect {
    sqlite: "UPDATE refresh_families SET revoked_at = $3, revoked_at_ns = $4, \
         revoke_reason = $5 WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
    postgres: "UPDATE refresh_families SET revoked_at = $3, revoke_reason = $4 \
         WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
};
const REVOKE_USER_FAMILIES: PerDialect = PerDialect {
    sqlite: "UPDATE refresh_families SET revoked_at = $3, revoked_at_ns = $4, \
         revoke_reason = $5 WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL",
    postgres: "UPDATE refresh_families SET revoked_at = $3, revoke_reason = $4 \
         WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL",
};

pub(crate) async fn token<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    hash: &SecretHash,
) -> Result<Option<(RefreshToken, RefreshFamily)>, StoreError> {
    Stmt::new(SELECT_TOKEN_AND_FAMILY)
        .bind(tenant.as_str())
        .bind(hash.as_bytes())
        .fetch_optional_with::<D, _>(conn, decode_token_and_family::<D>)
        .await
}

pub(crate) async fn insert_family<D: Dialect>(
    conn: &mut Conn<D>,
    family: &RefreshFamily,
) -> Result<(), StoreError> {
    Stmt::new(INSERT_FAMILY.pick::<D>())
        .bind(family.id.as_str())
        .bind(family.tenant_id.as_str())
        .bind(family.client_id.as_str())
        .bind(family.user_id.as_str())
        .bind(family.session_id.as_ref().map(SessionId::as_str))
        .bind_json(encode_scopes(&family.scope)?)
        .bind(family.subject.as_str())
        .bind(family.auth_time)
        .bind(family.acr.as_deref())
        .bind_json(encode_strings(family.amr.iter().map(String::as_str))?)
        .bind(family.organization_id.as_ref().map(OrganizationId::as_str))
        .bind(family.created_at)
        .bind(family.expires_at)
        .bind_twin(family.expires_at)
        .bind(family.revoked_at)
        .bind_twin(family.revoked_at)
        .bind(family.revoke_reason.as_deref())
        .bind(family.resource_id.as_ref().map(ApiResourceId::as_str))
        .bind(family.dpop_jkt.as_deref())
        .bind(family.authorization_details.as_ref().map(|d| d.to_json()))
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "refresh_families_tenant_id_fkey"))?;
    Ok(())
}

/// A failed foreign key that SQLite does not name is reported as the family's: its key includes
/// the tenant, so every failure of this insert (unknown family, or unknown tenant) violates it.
pub(crate) async fn insert_token<D: Dialect>(
    conn: &mut Conn<D>,
    token: &RefreshToken,
) -> Result<(), StoreError> {
    Stmt::new(INSERT_TOKEN)
        .bind(token.hash.as_bytes())
        .bind(token.family_id.as_str())
        .bind(token.tenant_id.as_str())
        .bind_json(encode_scopes(&token.scope)?)
        .bind(token.created_at)
        .bind(token.expires_at)
        .bind(token.rotated_at)
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "refresh_tokens_family_id_fkey"))?;
    Ok(())
}

/// One statement where the dialect has data-modifying CTEs, two otherwise; a third only when
/// nothing was rotated (see the module documentation).
pub(crate) async fn rotate<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    hash: &SecretHash,
    now: OffsetDateTime,
) -> Result<RefreshRotation, StoreError> {
    if D::DATA_MODIFYING_CTE {
        let rotated = Stmt::new(ROTATE_WITH_FAMILY)
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .fetch_optional::<D>(&mut *conn)
            .await?;
        // The foreign key makes a rotated token without its family impossible, so no row means
        // nothing was rotated.
        if let Some(row) = rotated {
            let (token, family) = decode_token_and_family::<D>(&row)?;
            return Ok(RefreshRotation::Rotated(token, family));
        }
    } else {
        let rotated = Stmt::new(ROTATE)
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .fetch_optional::<D>(&mut *conn)
            .await?;
        if let Some(row) = rotated {
            let token = decode_token::<D>(&row)?;
            let family = Stmt::new(SELECT_FAMILY)
                .bind(tenant.as_str())
                .bind(token.family_id.as_str())
                .fetch_optional::<D>(&mut *conn)
                .await?;
            // The foreign key makes a token without its family impossible.
            let family = family
                .as_ref()
                .map(decode_family::<D>)
                .transpose()?
                .ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "refresh_tokens.family_id {} has no refresh_families row",
                        token.family_id.as_str()
                    ))
                })?;
            return Ok(RefreshRotation::Rotated(token, family));
        }
    }
    Ok(match token::<D>(conn, tenant, hash).await? {
        Some((token, family)) => RefreshRotation::Reused(token, family),
        None => RefreshRotation::Unknown,
    })
}

pub(crate) async fn revoke_family<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &RefreshFamilyId,
    now: OffsetDateTime,
    reason: &str,
) -> Result<bool, StoreError> {
    let changed = Stmt::new(REVOKE_FAMILY.pick::<D>())
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(now)
        .bind_twin(now)
        .bind(reason)
        .execute::<D>(conn)
        .await?;
    Ok(changed > 0)
}

pub(crate) async fn revoke_user_families<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    user: &UserId,
    now: OffsetDateTime,
    reason: &str,
) -> Result<u64, StoreError> {
    Stmt::new(REVOKE_USER_FAMILIES.pick::<D>())
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(now)
        .bind_twin(now)
        .bind(reason)
        .execute::<D>(conn)
        .await
}

fn decode_token<D: Dialect>(row: &Row<D>) -> Result<RefreshToken, StoreError> {
    let c = Columns::<D>::new(row, "refresh_tokens");
    RefreshTokenRow {
        hash: c.get("hash")?,
        family_id: c.get("family_id")?,
        tenant_id: c.get("tenant_id")?,
        scope: c.json("scope")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        rotated_at: c.get("rotated_at")?,
    }
    .decode()
}

/// A row of [`SELECT_FAMILY`].
fn decode_family<D: Dialect>(row: &Row<D>) -> Result<RefreshFamily, StoreError> {
    let c = Columns::<D>::new(row, "refresh_families");
    RefreshFamilyRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_id: c.get("user_id")?,
        session_id: c.get("session_id")?,
        scope: c.json("scope")?,
        subject: c.get("subject")?,
        auth_time: c.get("auth_time")?,
        acr: c.get("acr")?,
        amr: c.json("amr")?,
        organization_id: c.get("organization_id")?,
        resource_id: c.get("resource_id")?,
        dpop_jkt: c.get("dpop_jkt")?,
        authorization_details: c.get("authorization_details")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        revoked_at: c.get("revoked_at")?,
        revoke_reason: c.get("revoke_reason")?,
    }
    .decode()
}

/// A row of [`SELECT_TOKEN_AND_FAMILY`] or [`ROTATE_WITH_FAMILY`].
fn decode_token_and_family<D: Dialect>(
    row: &Row<D>,
) -> Result<(RefreshToken, RefreshFamily), StoreError> {
    let c = Columns::<D>::new(row, "refresh_families");
    let token = decode_token::<D>(row)?;
    let family = RefreshFamilyRow {
        id: c.get("family_id")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_id: c.get("user_id")?,
        session_id: c.get("session_id")?,
        scope: c.json("family_scope")?,
        subject: c.get("subject")?,
        auth_time: c.get("auth_time")?,
        acr: c.get("acr")?,
        amr: c.json("amr")?,
        organization_id: c.get("organization_id")?,
        resource_id: c.get("resource_id")?,
        dpop_jkt: c.get("dpop_jkt")?,
        authorization_details: c.get("authorization_details")?,
        created_at: c.get("family_created_at")?,
        expires_at: c.get("family_expires_at")?,
        revoked_at: c.get("revoked_at")?,
        revoke_reason: c.get("revoke_reason")?,
    }
    .decode()?;
    Ok((token, family))
}

/// A `refresh_families` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct RefreshFamilyRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `subject`.
    pub subject: String,
    /// `auth_time`.
    pub auth_time: OffsetDateTime,
    /// `acr`.
    pub acr: Option<String>,
    /// `amr` (JSON array text).
    pub amr: String,
    /// `organization_id`.
    pub organization_id: Option<String>,
    /// `resource_id`.
    pub resource_id: Option<String>,
    /// `dpop_jkt`.
    pub dpop_jkt: Option<String>,
    /// `authorization_details` (JSON text).
    pub authorization_details: Option<String>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `revoked_at`.
    pub revoked_at: Option<OffsetDateTime>,
    /// `revoke_reason`.
    pub revoke_reason: Option<String>,
}

impl RefreshFamilyRow {
    /// The refresh-token family this row stores.
    pub(crate) fn decode(self) -> Result<RefreshFamily, StoreError> {
        let r = Record {
            table: "refresh_families",
            name: &self.id,
        };
        Ok(RefreshFamily {
            id: r.parse("id", &self.id, RefreshFamilyId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            session_id: r.parse_opt("session_id", self.session_id.as_deref(), SessionId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            amr: r.strings("amr", &self.amr)?,
            organization_id: r.parse_opt(
                "organization_id",
                self.organization_id.as_deref(),
                OrganizationId::parse,
            )?,
            resource_id: r.parse_opt(
                "resource_id",
                self.resource_id.as_deref(),
                ApiResourceId::parse,
            )?,
            subject: self.subject,
            auth_time: self.auth_time,
            acr: self.acr,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            revoke_reason: self.revoke_reason,
            authorization_details: r.details(
                "authorization_details",
                self.authorization_details.as_deref(),
            )?,
            dpop_jkt: self.dpop_jkt,
        })
    }
}

/// A `refresh_tokens` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct RefreshTokenRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `family_id`.
    pub family_id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `rotated_at`.
    pub rotated_at: Option<OffsetDateTime>,
}

impl RefreshTokenRow {
    /// The refresh token this row stores.
    pub(crate) fn decode(self) -> Result<RefreshToken, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "refresh_tokens",
            name: &name,
        };
        Ok(RefreshToken {
            hash: r.hash("hash", &self.hash)?,
            family_id: r.parse("family_id", &self.family_id, RefreshFamilyId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            rotated_at: self.rotated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, CLIENT, FAMILY, SESSION, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[
            (INSERT_FAMILY, 2),
            (REVOKE_FAMILY, 1),
            (REVOKE_USER_FAMILIES, 1),
        ]);
    }

    #[test]
    fn refresh_rows_decode_and_name_each_bad_column() {
        let family = RefreshFamilyRow {
            id: FAMILY.into(),
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            user_id: USER.into(),
            session_id: Some(SESSION.into()),
            scope: r#"["offline_access"]"#.into(),
            subject: "s".into(),
            auth_time: AT,
            acr: None,
            amr: r#"["pwd"]"#.into(),
            organization_id: None,
            resource_id: None,
            dpop_jkt: None,
            authorization_details: None,
            created_at: AT,
            expires_at: AT,
            revoked_at: None,
            revoke_reason: None,
        };
        check(
            family,
            RefreshFamilyRow::decode,
            &[
                ("refresh_families.session_id", |r| {
                    r.session_id = Some(FAMILY.into())
                }),
                ("refresh_families.amr", |r| r.amr = "[1]".into()),
            ],
        );
        let token = RefreshTokenRow {
            hash: vec![7; 32],
            family_id: FAMILY.into(),
            tenant_id: TENANT.into(),
            scope: "[]".into(),
            created_at: AT,
            expires_at: AT,
            rotated_at: None,
        };
        check(
            token,
            RefreshTokenRow::decode,
            &[
                ("refresh_tokens.family_id", |r| r.family_id = USER.into()),
                ("refresh_tokens.hash", |r| r.hash = Vec::new()),
            ],
        );
    }
}
