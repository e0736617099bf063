//! Interactions, consents and revoked access-token ids in SQL, and the purge of everything the
//! sign-in and code flows leave behind, on one connection (always inside a transaction opened by
//! [`crate::tx`]); rows are read into [`InteractionRow`] / [`ConsentRow`], which decode them.
//!
//! Scopes are `jsonb`, bound as text and cast, read back as text. Codes, refresh families
//! and sessions are purged only a day after they stopped working, so a late replay of a code or
//! a rotated refresh token is still recognised (and revokes what it must) instead of reading as
//! unknown.

use crate::error::{Columns, map_err};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use svc_domain::{ClientId, Consent, Interaction, InteractionId, TenantId, UserId};
use svc_store::StoreError;
use svc_store::rows::{ConsentRow, InteractionRow, encode_scopes};
use time::{Duration, OffsetDateTime};

/// How long dead codes, refresh families and sessions are kept for replay detection.
const GRACE: Duration = Duration::days(1);

const SELECT_INTERACTION: &str = "SELECT id, tenant_id, client_id, request, created_at, \
     expires_at FROM interactions WHERE tenant_id = $1 AND id = $2 AND expires_at > $3";
const INSERT_INTERACTION: &str = "INSERT INTO interactions (id, tenant_id, client_id, request, \
     created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";
const DELETE_INTERACTION: &str = "DELETE FROM interactions WHERE tenant_id = $1 AND id = $2";

macro_rules! select_consents {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, user_id, client_id, scope::text AS scope, subject, granted_at \
             FROM consents ",
            $where
        )
    };
}

const SELECT_CONSENT: &str =
    select_consents!("WHERE tenant_id = $1 AND user_id = $2 AND client_id = $3");
const SELECT_CONSENT_BY_SUBJECT: &str =
    select_consents!("WHERE tenant_id = $1 AND client_id = $2 AND subject = $3");
const UPSERT_CONSENT: &str = "INSERT INTO consents (tenant_id, user_id, client_id, scope, \
     subject, granted_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6) \
     ON CONFLICT (tenant_id, user_id, client_id) DO UPDATE SET scope = excluded.scope, \
     subject = excluded.subject, granted_at = excluded.granted_at";
const DELETE_CONSENT: &str =
    "DELETE FROM consents WHERE tenant_id = $1 AND user_id = $2 AND client_id = $3";

// Idempotent; a later expiry wins so the revocation lasts as long as the longest claim of it.
const REVOKE_ACCESS: &str = "INSERT INTO revoked_access_tokens (tenant_id, jti, expires_at) \
     VALUES ($1, $2, $3) \
     ON CONFLICT (tenant_id, jti) DO UPDATE SET expires_at = excluded.expires_at \
     WHERE revoked_access_tokens.expires_at < excluded.expires_at";
const ACCESS_REVOKED: &str = "SELECT EXISTS (SELECT 1 FROM revoked_access_tokens \
     WHERE tenant_id = $1 AND jti = $2) AS revoked";

/// Which instant a purge statement's `$1` is.
#[derive(Clone, Copy)]
enum Cutoff {
    /// `now`: the row is useless as soon as it expired.
    Now,
    /// `now` minus [`GRACE`]: the row is kept a day for replay detection.
    Grace,
}

/// Tokens go before their families: the foreign key would cascade, but cascaded rows are not
/// counted.
const PURGE: [(&str, Cutoff); 8] = [
    (
        "DELETE FROM refresh_tokens WHERE EXISTS (SELECT 1 FROM refresh_families f \
         WHERE f.tenant_id = refresh_tokens.tenant_id AND f.id = refresh_tokens.family_id \
         AND (f.expires_at < $1 OR f.revoked_at < $1))",
        Cutoff::Grace,
    ),
    (
        "DELETE FROM refresh_families WHERE expires_at < $1 OR revoked_at < $1",
        Cutoff::Grace,
    ),
    (
        "DELETE FROM authorization_codes WHERE expires_at < $1",
        Cutoff::Grace,
    ),
    (
        "DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1",
        Cutoff::Grace,
    ),
    (
        "DELETE FROM interactions WHERE expires_at <= $1",
        Cutoff::Now,
    ),
    (
        "DELETE FROM revoked_access_tokens WHERE expires_at <= $1",
        Cutoff::Now,
    ),
    (
        "DELETE FROM user_tokens WHERE used_at IS NOT NULL OR expires_at <= $1",
        Cutoff::Now,
    ),
    (
        "DELETE FROM counters WHERE window_ends_at <= $1",
        Cutoff::Now,
    ),
];

pub(crate) async fn interaction(
    conn: &mut PgConnection,
    tenant: &TenantId,
    id: &InteractionId,
    now: OffsetDateTime,
) -> Result<Option<Interaction>, StoreError> {
    let row = sqlx::query(SELECT_INTERACTION)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(now)
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode_interaction).transpose()
}

pub(crate) async fn insert_interaction(
    conn: &mut PgConnection,
    interaction: &Interaction,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_INTERACTION)
        .bind(interaction.id.as_str())
        .bind(interaction.tenant_id.as_str())
        .bind(interaction.client_id.as_str())
        .bind(interaction.request.as_str())
        .bind(interaction.created_at)
        .bind(interaction.expires_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn delete_interaction(
    conn: &mut PgConnection,
    tenant: &TenantId,
    id: &InteractionId,
) -> Result<bool, StoreError> {
    let done = sqlx::query(DELETE_INTERACTION)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn consent(
    conn: &mut PgConnection,
    tenant: &TenantId,
    user: &UserId,
    client: &ClientId,
) -> Result<Option<Consent>, StoreError> {
    let row = sqlx::query(SELECT_CONSENT)
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(client.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode_consent).transpose()
}

pub(crate) async fn consent_by_subject(
    conn: &mut PgConnection,
    tenant: &TenantId,
    client: &ClientId,
    subject: &str,
) -> Result<Option<Consent>, StoreError> {
    let row = sqlx::query(SELECT_CONSENT_BY_SUBJECT)
        .bind(tenant.as_str())
        .bind(client.as_str())
        .bind(subject)
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode_consent).transpose()
}

pub(crate) async fn upsert_consent(
    conn: &mut PgConnection,
    consent: &Consent,
) -> Result<(), StoreError> {
    sqlx::query(UPSERT_CONSENT)
        .bind(consent.tenant_id.as_str())
        .bind(consent.user_id.as_str())
        .bind(consent.client_id.as_str())
        .bind(encode_scopes(&consent.scope)?)
        .bind(consent.subject.as_str())
        .bind(consent.granted_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn delete_consent(
    conn: &mut PgConnection,
    tenant: &TenantId,
    user: &UserId,
    client: &ClientId,
) -> Result<bool, StoreError> {
    let done = sqlx::query(DELETE_CONSENT)
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(client.as_str())
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn revoke_access_token(
    conn: &mut PgConnection,
    tenant: &TenantId,
    jti: &str,
    expires_at: OffsetDateTime,
) -> Result<(), StoreError> {
    sqlx::query(REVOKE_ACCESS)
        .bind(tenant.as_str())
        .bind(jti)
        .bind(expires_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn access_token_revoked(
    conn: &mut PgConnection,
    tenant: &TenantId,
    jti: &str,
) -> Result<bool, StoreError> {
    let row = sqlx::query(ACCESS_REVOKED)
        .bind(tenant.as_str())
        .bind(jti)
        .fetch_one(conn)
        .await
        .map_err(map_err)?;
    row.try_get("revoked").map_err(map_err)
}

/// Deletes every row past any use at `now`; returns how many.
pub(crate) async fn purge(conn: &mut PgConnection, now: OffsetDateTime) -> Result<u64, StoreError> {
    let mut purged = 0;
    for (statement, cutoff) in PURGE {
        let before = match cutoff {
            Cutoff::Now => now,
            Cutoff::Grace => now - GRACE,
        };
        let done = sqlx::query(statement)
            .bind(before)
            .execute(&mut *conn)
            .await
            .map_err(map_err)?;
        purged += done.rows_affected();
    }
    Ok(purged)
}

fn decode_interaction(row: &PgRow) -> Result<Interaction, StoreError> {
    let c = Columns::new(row, "interactions");
    InteractionRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        request: c.get("request")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
    }
    .decode()
}

fn decode_consent(row: &PgRow) -> Result<Consent, StoreError> {
    let c = Columns::new(row, "consents");
    ConsentRow {
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        client_id: c.get("client_id")?,
        scope: c.get("scope")?,
        subject: c.get("subject")?,
        granted_at: c.get("granted_at")?,
    }
    .decode()
}
