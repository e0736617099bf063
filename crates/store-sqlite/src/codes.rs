//! Authorization codes in SQL, on one connection (always inside a transaction opened by
//! [`crate::tx`]); rows are read into [`AuthorizationCodeRow`], which decodes them.
//!
//! Redemption is one conditional `UPDATE ... WHERE redeemed_at IS NULL RETURNING`: only the call
//! that changed the row gets it back, so a code is redeemed once however many requests race (on
//! SQLite writers are serialised by `BEGIN IMMEDIATE` too). When nothing changed, a plain read
//! tells a replay (`Again`) from a code that does not exist for the tenant (`Unknown`).

use crate::error::{Columns, map_err, name_foreign_key};
use crate::timestamps::{nanos, utc};
use sqlx::SqliteConnection;
use sqlx::sqlite::SqliteRow;
use svc_domain::{AuthorizationCode, RefreshFamilyId, SecretHash, TenantId};
use svc_store::rows::{AuthorizationCodeRow, encode_scopes, encode_strings};
use svc_store::{CodeRedemption, StoreError};
use time::OffsetDateTime;

macro_rules! code_columns {
    () => {
        "hash, tenant_id, client_id, user_id, session_id, redirect_uri, scope, code_challenge, \
         nonce, auth_time, acr, amr, claims, subject, created_at, expires_at, redeemed_at, \
         issued_family_id, issued_access_jti, issued_access_expires_at"
    };
}

const SELECT: &str = concat!(
    "SELECT ",
    code_columns!(),
    " FROM authorization_codes WHERE tenant_id = $1 AND hash = $2"
);
const REDEEM: &str = concat!(
    "UPDATE authorization_codes SET redeemed_at = $3 \
     WHERE tenant_id = $1 AND hash = $2 AND redeemed_at IS NULL RETURNING ",
    code_columns!()
);
const INSERT: &str = "INSERT INTO authorization_codes (hash, tenant_id, client_id, user_id, \
     session_id, redirect_uri, scope, code_challenge, nonce, auth_time, acr, amr, claims, \
     subject, created_at, expires_at, expires_at_ns, redeemed_at, issued_family_id, \
     issued_access_jti, issued_access_expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
     $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)";
const RECORD_ISSUANCE: &str = "UPDATE authorization_codes SET issued_family_id = $3, \
     issued_access_jti = $4, issued_access_expires_at = $5 WHERE tenant_id = $1 AND hash = $2";

pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    code: &AuthorizationCode,
) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(code.hash.as_bytes().as_slice())
        .bind(code.tenant_id.as_str())
        .bind(code.client_id.as_str())
        .bind(code.user_id.as_str())
        .bind(code.session_id.as_str())
        .bind(code.redirect_uri.as_str())
        .bind(encode_scopes(&code.scope)?)
        .bind(code.code_challenge.as_deref())
        .bind(code.nonce.as_deref())
        .bind(utc(code.auth_time))
        .bind(code.acr.as_deref())
        .bind(encode_strings(code.amr.iter().map(String::as_str))?)
        .bind(code.claims.as_deref())
        .bind(code.subject.as_str())
        .bind(utc(code.created_at))
        .bind(utc(code.expires_at))
        .bind(nanos(code.expires_at))
        .bind(code.redeemed_at.map(utc))
        .bind(code.issued_family.as_ref().map(RefreshFamilyId::as_str))
        .bind(code.issued_access_jti.as_deref())
        .bind(code.issued_access_expires_at.map(utc))
        .execute(conn)
        .await
        .map_err(|e| name_foreign_key(map_err(e), "authorization_codes_tenant_id_fkey"))?;
    Ok(())
}

pub(crate) async fn redeem(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    hash: &SecretHash,
    now: OffsetDateTime,
) -> Result<CodeRedemption, StoreError> {
    let redeemed = sqlx::query(REDEEM)
        .bind(tenant.as_str())
        .bind(hash.as_bytes().as_slice())
        .bind(utc(now))
        .fetch_optional(&mut *conn)
        .await
        .map_err(map_err)?;
    if let Some(row) = redeemed {
        return Ok(CodeRedemption::First(decode(&row)?));
    }
    let before = sqlx::query(SELECT)
        .bind(tenant.as_str())
        .bind(hash.as_bytes().as_slice())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    Ok(match before {
        Some(row) => CodeRedemption::Again(decode(&row)?),
        None => CodeRedemption::Unknown,
    })
}

/// [`StoreError::NotFound`] when the code does not exist (any more) for the tenant.
pub(crate) async fn record_issuance(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    hash: &SecretHash,
    family: Option<&RefreshFamilyId>,
    access_jti: &str,
    access_expires_at: OffsetDateTime,
) -> Result<(), StoreError> {
    let done = sqlx::query(RECORD_ISSUANCE)
        .bind(tenant.as_str())
        .bind(hash.as_bytes().as_slice())
        .bind(family.map(RefreshFamilyId::as_str))
        .bind(access_jti)
        .bind(utc(access_expires_at))
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

fn decode(row: &SqliteRow) -> Result<AuthorizationCode, StoreError> {
    let c = Columns::new(row, "authorization_codes");
    AuthorizationCodeRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_id: c.get("user_id")?,
        session_id: c.get("session_id")?,
        redirect_uri: c.get("redirect_uri")?,
        scope: c.get("scope")?,
        code_challenge: c.get("code_challenge")?,
        nonce: c.get("nonce")?,
        auth_time: c.get("auth_time")?,
        acr: c.get("acr")?,
        amr: c.get("amr")?,
        claims: c.get("claims")?,
        subject: c.get("subject")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        redeemed_at: c.get("redeemed_at")?,
        issued_family_id: c.get("issued_family_id")?,
        issued_access_jti: c.get("issued_access_jti")?,
        issued_access_expires_at: c.get("issued_access_expires_at")?,
    }
    .decode()
}
