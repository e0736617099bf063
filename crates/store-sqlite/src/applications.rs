//! The application and operator-token repositories in SQL: queries on one connection (always
//! inside a transaction opened by [`crate::tx`]) and the decoding of rows back into domain types.
//!
//! The SQL text is identical to the PostgreSQL backend's apart from the list-valued columns,
//! which are JSON text here and `jsonb` there; binding, decoding and the naming of a foreign-key
//! conflict (see [`name_conflict`]) differ.

use crate::error::map_err;
use crate::timestamps::utc;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};
use svc_domain::{Application, ClientId, OperatorToken, RedirectUri, SecretHash, TenantId};
use svc_store::StoreError;
use svc_store::rows::{ApplicationRow, OperatorTokenRow, encode_scopes, encode_strings};

/// The foreign key to `tenants`; SQLite reports a failed foreign key without naming it.
const TENANT_FKEY: &str = "applications_tenant_id_fkey";

const SELECT_ONE: &str = "SELECT id, tenant_id, name, redirect_uris, grant_types, \
     token_endpoint_auth_method, allowed_scopes, secret_hash, api_audience, first_party, \
     id_token_signed_response_alg, jwks, jwks_uri, is_management, created_at, updated_at, \
     post_logout_redirect_uris \
     FROM applications WHERE tenant_id = $1 AND id = $2";
// Two statements rather than `$2 IS NULL OR id > $2`, so each has a plain index range scan.
const LIST_FIRST: &str = "SELECT id, tenant_id, name, redirect_uris, grant_types, \
     token_endpoint_auth_method, allowed_scopes, secret_hash, api_audience, first_party, \
     id_token_signed_response_alg, jwks, jwks_uri, is_management, created_at, updated_at, \
     post_logout_redirect_uris \
     FROM applications WHERE tenant_id = $1 ORDER BY id LIMIT $2";
const LIST_AFTER: &str = "SELECT id, tenant_id, name, redirect_uris, grant_types, \
     token_endpoint_auth_method, allowed_scopes, secret_hash, api_audience, first_party, \
     id_token_signed_response_alg, jwks, jwks_uri, is_management, created_at, updated_at, \
     post_logout_redirect_uris \
     FROM applications WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3";
const INSERT: &str = "INSERT INTO applications (id, tenant_id, name, redirect_uris, grant_types, \
     token_endpoint_auth_method, allowed_scopes, secret_hash, api_audience, first_party, \
     id_token_signed_response_alg, jwks, jwks_uri, is_management, created_at, updated_at, \
     post_logout_redirect_uris) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)";
// Never id, tenant_id, created_at or is_management.
const UPDATE: &str = "UPDATE applications SET name = $3, redirect_uris = $4, grant_types = $5, \
     token_endpoint_auth_method = $6, allowed_scopes = $7, secret_hash = $8, api_audience = $9, \
     first_party = $10, id_token_signed_response_alg = $11, jwks = $12, jwks_uri = $13, \
     updated_at = $14, post_logout_redirect_uris = $15 \
     WHERE tenant_id = $1 AND id = $2";
const DELETE: &str = "DELETE FROM applications WHERE tenant_id = $1 AND id = $2";

const TOKEN_BY_HASH: &str =
    "SELECT id, name, token_hash, created_at FROM operator_tokens WHERE token_hash = $1";
const INSERT_TOKEN: &str =
    "INSERT INTO operator_tokens (id, name, token_hash, created_at) VALUES ($1, $2, $3, $4)";

pub(crate) async fn by_id(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &ClientId,
) -> Result<Option<Application>, StoreError> {
    let row = sqlx::query(SELECT_ONE)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn list(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    after: Option<&ClientId>,
    limit: u32,
) -> Result<Vec<Application>, StoreError> {
    let limit = i64::from(limit);
    let rows = match after {
        None => {
            sqlx::query(LIST_FIRST)
                .bind(tenant.as_str())
                .bind(limit)
                .fetch_all(conn)
                .await
        }
        Some(after) => {
            sqlx::query(LIST_AFTER)
                .bind(tenant.as_str())
                .bind(after.as_str())
                .bind(limit)
                .fetch_all(conn)
                .await
        }
    }
    .map_err(map_err)?;
    rows.iter().map(decode).collect()
}

/// The list-valued columns of `app`, encoded.
struct Lists {
    redirect_uris: String,
    grant_types: String,
    allowed_scopes: String,
    post_logout_redirect_uris: String,
}

fn lists(app: &Application) -> Result<Lists, StoreError> {
    Ok(Lists {
        redirect_uris: encode_strings(app.redirect_uris.iter().map(RedirectUri::as_str))?,
        grant_types: encode_strings(app.grant_types.iter().map(|g| g.as_str()))?,
        allowed_scopes: encode_scopes(&app.allowed_scopes)?,
        post_logout_redirect_uris: encode_strings(
            app.post_logout_redirect_uris
                .iter()
                .map(RedirectUri::as_str),
        )?,
    })
}

pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    app: &Application,
) -> Result<(), StoreError> {
    let lists = lists(app)?;
    sqlx::query(INSERT)
        .bind(app.id.as_str())
        .bind(app.tenant_id.as_str())
        .bind(app.name.as_str())
        .bind(lists.redirect_uris)
        .bind(lists.grant_types)
        .bind(app.token_endpoint_auth_method.as_str())
        .bind(lists.allowed_scopes)
        .bind(app.secret_hash.as_ref().map(|h| h.as_bytes().as_slice()))
        .bind(app.api_audience.as_deref())
        .bind(app.first_party)
        .bind(app.id_token_signed_response_alg.as_str())
        .bind(app.jwks.as_deref())
        .bind(app.jwks_uri.as_deref())
        .bind(app.is_management)
        .bind(utc(app.created_at))
        .bind(utc(app.updated_at))
        .bind(lists.post_logout_redirect_uris)
        .execute(conn)
        .await
        .map_err(|e| name_conflict(map_err(e)))?;
    Ok(())
}

pub(crate) async fn update(
    conn: &mut SqliteConnection,
    app: &Application,
) -> Result<(), StoreError> {
    let lists = lists(app)?;
    let done = sqlx::query(UPDATE)
        .bind(app.tenant_id.as_str())
        .bind(app.id.as_str())
        .bind(app.name.as_str())
        .bind(lists.redirect_uris)
        .bind(lists.grant_types)
        .bind(app.token_endpoint_auth_method.as_str())
        .bind(lists.allowed_scopes)
        .bind(app.secret_hash.as_ref().map(|h| h.as_bytes().as_slice()))
        .bind(app.api_audience.as_deref())
        .bind(app.first_party)
        .bind(app.id_token_signed_response_alg.as_str())
        .bind(app.jwks.as_deref())
        .bind(app.jwks_uri.as_deref())
        .bind(utc(app.updated_at))
        .bind(lists.post_logout_redirect_uris)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn delete(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &ClientId,
) -> Result<(), StoreError> {
    let done = sqlx::query(DELETE)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn operator_token_by_hash(
    conn: &mut SqliteConnection,
    hash: &SecretHash,
) -> Result<Option<OperatorToken>, StoreError> {
    let row = sqlx::query(TOKEN_BY_HASH)
        .bind(hash.as_bytes().as_slice())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode_token).transpose()
}

pub(crate) async fn insert_operator_token(
    conn: &mut SqliteConnection,
    token: &OperatorToken,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_TOKEN)
        .bind(token.id.as_str())
        .bind(token.name.as_str())
        .bind(token.token_hash.as_bytes().as_slice())
        .bind(utc(token.created_at))
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

/// Gives a failed foreign key the name PostgreSQL reports: SQLite names none, and `applications`
/// has exactly one.
fn name_conflict(err: StoreError) -> StoreError {
    match err {
        StoreError::Conflict { constraint } if constraint == "foreign_key" => {
            StoreError::Conflict {
                constraint: TENANT_FKEY.to_owned(),
            }
        }
        other => other,
    }
}

fn decode(row: &SqliteRow) -> Result<Application, StoreError> {
    let get = |column: &str| row.try_get::<String, _>(column).map_err(map_err);
    ApplicationRow {
        id: get("id")?,
        tenant_id: get("tenant_id")?,
        name: get("name")?,
        redirect_uris: get("redirect_uris")?,
        post_logout_redirect_uris: get("post_logout_redirect_uris")?,
        grant_types: get("grant_types")?,
        allowed_scopes: get("allowed_scopes")?,
        token_endpoint_auth_method: get("token_endpoint_auth_method")?,
        secret_hash: row.try_get("secret_hash").map_err(map_err)?,
        api_audience: row.try_get("api_audience").map_err(map_err)?,
        first_party: row.try_get("first_party").map_err(map_err)?,
        id_token_signed_response_alg: get("id_token_signed_response_alg")?,
        jwks: row.try_get("jwks").map_err(map_err)?,
        jwks_uri: row.try_get("jwks_uri").map_err(map_err)?,
        is_management: row.try_get("is_management").map_err(map_err)?,
        created_at: row.try_get("created_at").map_err(map_err)?,
        updated_at: row.try_get("updated_at").map_err(map_err)?,
    }
    .decode()
}

fn decode_token(row: &SqliteRow) -> Result<OperatorToken, StoreError> {
    OperatorTokenRow {
        id: row.try_get("id").map_err(map_err)?,
        name: row.try_get("name").map_err(map_err)?,
        token_hash: row.try_get("token_hash").map_err(map_err)?,
        created_at: row.try_get("created_at").map_err(map_err)?,
    }
    .decode()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_foreign_key_is_named_after_the_tenant_reference() {
        let named = |constraint: &str| match name_conflict(StoreError::Conflict {
            constraint: constraint.to_owned(),
        }) {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        };
        assert_eq!(named("foreign_key").as_deref(), Some(TENANT_FKEY));
        assert_eq!(
            named("applications_pkey").as_deref(),
            Some("applications_pkey")
        );
        assert!(matches!(
            name_conflict(StoreError::NotFound),
            StoreError::NotFound
        ));
    }
}
