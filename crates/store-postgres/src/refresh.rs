//! Refresh-token families and their tokens in SQL, on one connection (always inside a
//! transaction opened by [`crate::tx`]); rows are read into [`RefreshFamilyRow`] /
//! [`RefreshTokenRow`], which decode them.
//!
//! Rotation is one conditional `UPDATE ... WHERE rotated_at IS NULL RETURNING` (joined with the
//! family in the same statement): only the call that changed the row gets it back. A concurrent rotation waits for the first one's row lock;
//! under READ COMMITTED it then re-evaluates `rotated_at IS NULL` against the committed row and
//! changes nothing, so a token is rotated once however many instances race.
//! When nothing changed, a read of the token with its family tells reuse (`Reused`) from a token
//! that does not exist for the tenant (`Unknown`). Revocation only touches unrevoked families, so
//! the first reason recorded stays.

use crate::error::{Columns, map_err};
use sqlx::PgConnection;
use sqlx::postgres::PgRow;
use svc_domain::{
    RefreshFamily, RefreshFamilyId, RefreshToken, SecretHash, SessionId, TenantId, UserId,
};
use svc_store::rows::{RefreshFamilyRow, RefreshTokenRow, encode_scopes, encode_strings};
use svc_store::{RefreshRotation, StoreError};
use time::OffsetDateTime;

// The token's columns keep their names; the family's that clash are prefixed `family_`.
const SELECT_TOKEN_AND_FAMILY: &str = "SELECT t.hash, t.family_id, t.tenant_id, \
     t.scope::text AS scope, t.created_at, t.expires_at, t.rotated_at, f.client_id, f.user_id, \
     f.session_id, f.scope::text AS family_scope, f.subject, f.auth_time, f.acr, \
     f.amr::text AS amr, \
     f.created_at AS family_created_at, f.expires_at AS family_expires_at, f.revoked_at, \
     f.revoke_reason \
     FROM refresh_tokens t JOIN refresh_families f \
     ON f.tenant_id = t.tenant_id AND f.id = t.family_id \
     WHERE t.tenant_id = $1 AND t.hash = $2";
// The rotated token joined with its family, in the row shape of SELECT_TOKEN_AND_FAMILY: one
// round trip on the hot path of every refresh.
const ROTATE: &str = "WITH t AS (UPDATE refresh_tokens SET rotated_at = $3 \
     WHERE tenant_id = $1 AND hash = $2 AND rotated_at IS NULL \
     RETURNING hash, family_id, tenant_id, scope, created_at, expires_at, rotated_at) \
     SELECT t.hash, t.family_id, t.tenant_id, \
     t.scope::text AS scope, t.created_at, t.expires_at, t.rotated_at, f.client_id, f.user_id, \
     f.session_id, f.scope::text AS family_scope, f.subject, f.auth_time, f.acr, \
     f.amr::text AS amr, \
     f.created_at AS family_created_at, f.expires_at AS family_expires_at, f.revoked_at, \
     f.revoke_reason \
     FROM t JOIN refresh_families f ON f.tenant_id = t.tenant_id AND f.id = t.family_id";
const INSERT_FAMILY: &str = "INSERT INTO refresh_families (id, tenant_id, client_id, user_id, \
     session_id, scope, subject, auth_time, acr, amr, created_at, expires_at, revoked_at, \
     revoke_reason) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10::jsonb, $11, $12, \
     $13, $14)";
const INSERT_TOKEN: &str = "INSERT INTO refresh_tokens (hash, family_id, tenant_id, scope, \
     created_at, expires_at, rotated_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7)";
const REVOKE_FAMILY: &str = "UPDATE refresh_families SET revoked_at = $3, revoke_reason = $4 \
     WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL";
const REVOKE_USER_FAMILIES: &str = "UPDATE refresh_families SET revoked_at = $3, \
     revoke_reason = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL";

pub(crate) async fn token(
    conn: &mut PgConnection,
    tenant: &TenantId,
    hash: &SecretHash,
) -> Result<Option<(RefreshToken, RefreshFamily)>, StoreError> {
    let row = sqlx::query(SELECT_TOKEN_AND_FAMILY)
        .bind(tenant.as_str())
        .bind(hash.as_bytes().as_slice())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode_token_and_family).transpose()
}

pub(crate) async fn insert_family(
    conn: &mut PgConnection,
    family: &RefreshFamily,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_FAMILY)
        .bind(family.id.as_str())
        .bind(family.tenant_id.as_str())
        .bind(family.client_id.as_str())
        .bind(family.user_id.as_str())
        .bind(family.session_id.as_ref().map(SessionId::as_str))
        .bind(encode_scopes(&family.scope)?)
        .bind(family.subject.as_str())
        .bind(family.auth_time)
        .bind(family.acr.as_deref())
        .bind(encode_strings(family.amr.iter().map(String::as_str))?)
        .bind(family.created_at)
        .bind(family.expires_at)
        .bind(family.revoked_at)
        .bind(family.revoke_reason.as_deref())
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn insert_token(
    conn: &mut PgConnection,
    token: &RefreshToken,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_TOKEN)
        .bind(token.hash.as_bytes().as_slice())
        .bind(token.family_id.as_str())
        .bind(token.tenant_id.as_str())
        .bind(encode_scopes(&token.scope)?)
        .bind(token.created_at)
        .bind(token.expires_at)
        .bind(token.rotated_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn rotate(
    conn: &mut PgConnection,
    tenant: &TenantId,
    hash: &SecretHash,
    now: OffsetDateTime,
) -> Result<RefreshRotation, StoreError> {
    let rotated = sqlx::query(ROTATE)
        .bind(tenant.as_str())
        .bind(hash.as_bytes().as_slice())
        .bind(now)
        .fetch_optional(&mut *conn)
        .await
        .map_err(map_err)?;
    // The foreign key makes a rotated token without its family impossible, so no row means
    // nothing was rotated.
    if let Some(row) = rotated {
        let (token, family) = decode_token_and_family(&row)?;
        return Ok(RefreshRotation::Rotated(token, family));
    }
    Ok(match token(conn, tenant, hash).await? {
        Some((token, family)) => RefreshRotation::Reused(token, family),
        None => RefreshRotation::Unknown,
    })
}

pub(crate) async fn revoke_family(
    conn: &mut PgConnection,
    tenant: &TenantId,
    id: &RefreshFamilyId,
    now: OffsetDateTime,
    reason: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query(REVOKE_FAMILY)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(now)
        .bind(reason)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn revoke_user_families(
    conn: &mut PgConnection,
    tenant: &TenantId,
    user: &UserId,
    now: OffsetDateTime,
    reason: &str,
) -> Result<u64, StoreError> {
    let done = sqlx::query(REVOKE_USER_FAMILIES)
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(now)
        .bind(reason)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected())
}

fn decode_token(row: &PgRow) -> Result<RefreshToken, StoreError> {
    let c = Columns::new(row, "refresh_tokens");
    RefreshTokenRow {
        hash: c.get("hash")?,
        family_id: c.get("family_id")?,
        tenant_id: c.get("tenant_id")?,
        scope: c.get("scope")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        rotated_at: c.get("rotated_at")?,
    }
    .decode()
}

/// A row of [`SELECT_TOKEN_AND_FAMILY`] or [`ROTATE`].
fn decode_token_and_family(row: &PgRow) -> Result<(RefreshToken, RefreshFamily), StoreError> {
    let c = Columns::new(row, "refresh_families");
    let token = decode_token(row)?;
    let family = RefreshFamilyRow {
        id: c.get("family_id")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_id: c.get("user_id")?,
        session_id: c.get("session_id")?,
        scope: c.get("family_scope")?,
        subject: c.get("subject")?,
        auth_time: c.get("auth_time")?,
        acr: c.get("acr")?,
        amr: c.get("amr")?,
        created_at: c.get("family_created_at")?,
        expires_at: c.get("family_expires_at")?,
        revoked_at: c.get("revoked_at")?,
        revoke_reason: c.get("revoke_reason")?,
    }
    .decode()?;
    Ok((token, family))
}
