//! Tenant users and their one-time link tokens: their statements, their row forms ([`UserRow`],
//! [`UserTokenRow`]) and the `UserReads`/`UserWrites`/`UserTokenWrites` ports for [`SqlTx`].
//!
//! The address is unique per tenant among users that are not removed: a partial unique index,
//! `users_tenant_email_key`. PostgreSQL names it in the violation; SQLite reports it by column
//! (`users_tenant_id_email_key`), renamed here to the index's name. A link token is consumed by
//! one conditional `UPDATE ... RETURNING`, so it works once however many requests race: on
//! PostgreSQL a concurrent consumer waits for the first one's row lock, then re-checks
//! `used_at IS NULL` against the committed row and changes nothing; on SQLite writers are
//! serialised by `BEGIN IMMEDIATE` anyway. Expiry is compared on the `expires_at_ns` twin on
//! SQLite and on `expires_at` itself on PostgreSQL.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, hash_name};
use crate::sorted;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    Email, PasswordHash, SecretHash, TenantId, User, UserId, UserStatus, UserToken,
    UserTokenPurpose,
};
use svc_store::{
    Order, StoreError, UpdateOutcome, UserFilter, UserReads, UserTokenWrites, UserWrites,
};
use time::OffsetDateTime;

/// The partial unique index on the address, as both backends report it.
const EMAIL_KEY: &str = "users_tenant_email_key";
/// What SQLite's message (`users.tenant_id, users.email`) becomes in the SQLite backend.
const EMAIL_KEY_BY_COLUMNS: &str = "users_tenant_id_email_key";
/// The foreign key to `tenants`; SQLite reports a failed foreign key without naming it.
const TENANT_FKEY: &str = "users_tenant_id_fkey";

macro_rules! select_users {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, email, email_verified, name, given_name, family_name, status, \
             password_hash, created_at, updated_at, last_sign_in_at FROM users ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_users!("WHERE tenant_id = $1 AND id = $2");
const SELECT_BY_EMAIL: &str =
    select_users!("WHERE tenant_id = $1 AND email = $2 AND status <> 'removed'");
const SELECT_LIST: &str = select_users!("WHERE tenant_id = ");
const INSERT: &str = "INSERT INTO users (id, tenant_id, email, email_verified, name, given_name, \
     family_name, status, password_hash, created_at, updated_at, last_sign_in_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
// Never id, tenant_id or created_at; only at the revision read ($12, see `update_user_if_unchanged`).
const UPDATE: &str = "UPDATE users SET email = $3, email_verified = $4, name = $5, \
     given_name = $6, family_name = $7, status = $8, password_hash = $9, updated_at = $10, \
     last_sign_in_at = $11 WHERE tenant_id = $1 AND id = $2 AND updated_at = $12";

const INSERT_TOKEN: PerDialect = PerDialect {
    sqlite: "INSERT INTO user_tokens (hash, tenant_id, user_id, purpose, created_at, \
         expires_at, expires_at_ns, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    postgres: "INSERT INTO user_tokens (hash, tenant_id, user_id, purpose, created_at, \
         expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
};
const CONSUME_TOKEN: PerDialect = PerDialect {
    sqlite: "UPDATE user_tokens SET used_at = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND purpose = $3 AND used_at IS NULL \
         AND expires_at_ns > $5 \
         RETURNING hash, tenant_id, user_id, purpose, created_at, expires_at, used_at",
    postgres: "UPDATE user_tokens SET used_at = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND purpose = $3 AND used_at IS NULL \
         AND expires_at > $5 \
         RETURNING hash, tenant_id, user_id, purpose, created_at, expires_at, used_at",
};
const INVALIDATE_TOKENS: &str = "UPDATE user_tokens SET used_at = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND purpose = $3 AND used_at IS NULL";

#[async_trait]
impl<D: Dialect> UserReads for SqlTx<D> {
    async fn user(&mut self, tenant: &TenantId, id: &UserId) -> Result<Option<User>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn user_by_email(
        &mut self,
        tenant: &TenantId,
        email: &Email,
    ) -> Result<Option<User>, StoreError> {
        Stmt::new(SELECT_BY_EMAIL)
            .bind(tenant.as_str())
            .bind(email.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    /// Assembled from the filters present, each value bound, so every shape is a range scan of
    /// `users_tenant_id_id_idx`.
    async fn list_users(
        &mut self,
        tenant: &TenantId,
        filter: &UserFilter,
        after: Option<&UserId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<User>, StoreError> {
        let mut stmt = Stmt::dynamic(SELECT_LIST);
        stmt.push_bind(tenant.as_str());
        if let Some(after) = after {
            stmt.push(sorted::past(order)).push_bind(after.as_str());
        }
        if let Some(status) = filter.status {
            stmt.push(" AND status = ").push_bind(status.as_str());
        }
        if let Some(email) = &filter.email {
            stmt.push(" AND email = ").push_bind(email.as_str());
        }
        stmt.push(sorted::order_by(order))
            .push_bind(i64::from(limit));
        let rows = stmt.fetch_all::<D>(self.conn()).await?;
        rows.iter().map(decode::<D>).collect()
    }
}

#[async_trait]
impl<D: Dialect> UserWrites for SqlTx<D> {
    async fn insert_user(&mut self, user: &User) -> Result<(), StoreError> {
        Stmt::new(INSERT)
            .bind(user.id.as_str())
            .bind(user.tenant_id.as_str())
            .bind(user.email.as_str())
            .bind(user.email_verified)
            .bind(user.name.as_deref())
            .bind(user.given_name.as_deref())
            .bind(user.family_name.as_deref())
            .bind(user.status.as_str())
            .bind(user.password_hash.as_ref().map(PasswordHash::as_str))
            .bind(user.created_at)
            .bind(user.updated_at)
            .bind(user.last_sign_in_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        Ok(())
    }

    /// One conditional `UPDATE` on `updated_at`, compared as the column itself on both dialects:
    /// an equality, never an order, so SQLite's text (one spelling per instant, see its
    /// `timestamps`) is exact to the nanosecond and PostgreSQL compares `timestamptz` (the bound
    /// value truncated to microseconds as it was when stored). When no row matched, a read tells
    /// a missing user from one at another revision.
    async fn update_user_if_unchanged(
        &mut self,
        user: &User,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let changed = Stmt::new(UPDATE)
            .bind(user.tenant_id.as_str())
            .bind(user.id.as_str())
            .bind(user.email.as_str())
            .bind(user.email_verified)
            .bind(user.name.as_deref())
            .bind(user.given_name.as_deref())
            .bind(user.family_name.as_deref())
            .bind(user.status.as_str())
            .bind(user.password_hash.as_ref().map(PasswordHash::as_str))
            .bind(user.updated_at)
            .bind(user.last_sign_in_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        match self.user(&user.tenant_id, &user.id).await? {
            Some(_) => Ok(UpdateOutcome::Stale),
            None => Err(StoreError::NotFound),
        }
    }
}

#[async_trait]
impl<D: Dialect> UserTokenWrites for SqlTx<D> {
    async fn insert_user_token(&mut self, token: &UserToken) -> Result<(), StoreError> {
        Stmt::new(INSERT_TOKEN.pick::<D>())
            .bind(token.hash.as_bytes())
            .bind(token.tenant_id.as_str())
            .bind(token.user_id.as_str())
            .bind(token.purpose.as_str())
            .bind(token.created_at)
            .bind(token.expires_at)
            .bind_twin(token.expires_at)
            .bind(token.used_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "user_tokens_tenant_id_fkey"))?;
        Ok(())
    }

    /// One conditional `UPDATE`: the token is returned (with `used_at` set) only by the call that
    /// used it.
    async fn consume_user_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<UserToken>, StoreError> {
        Stmt::new(CONSUME_TOKEN.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(purpose.as_str())
            .bind(now)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_token::<D>)
            .await
    }

    async fn invalidate_user_tokens(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        Stmt::new(INVALIDATE_TOKENS)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(purpose.as_str())
            .bind(now)
            .execute::<D>(self.conn())
            .await
    }
}

/// Gives the conflicts SQLite reports by column (or not at all) the names PostgreSQL reports.
fn name_conflict(err: StoreError) -> StoreError {
    naming::foreign_key(
        naming::rename(err, EMAIL_KEY_BY_COLUMNS, EMAIL_KEY),
        TENANT_FKEY,
    )
}

pub(crate) fn decode<D: Dialect>(row: &Row<D>) -> Result<User, StoreError> {
    let c = Columns::<D>::new(row, "users");
    UserRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        email: c.get("email")?,
        email_verified: c.get("email_verified")?,
        name: c.get("name")?,
        given_name: c.get("given_name")?,
        family_name: c.get("family_name")?,
        status: c.get("status")?,
        password_hash: c.get("password_hash")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
        last_sign_in_at: c.get("last_sign_in_at")?,
    }
    .decode()
}

fn decode_token<D: Dialect>(row: &Row<D>) -> Result<UserToken, StoreError> {
    let c = Columns::<D>::new(row, "user_tokens");
    UserTokenRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        purpose: c.get("purpose")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        used_at: c.get("used_at")?,
    }
    .decode()
}

/// A `users` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct UserRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `email` (normalised).
    pub email: String,
    /// `email_verified`.
    pub email_verified: bool,
    /// `name`.
    pub name: Option<String>,
    /// `given_name`.
    pub given_name: Option<String>,
    /// `family_name`.
    pub family_name: Option<String>,
    /// `status`.
    pub status: String,
    /// `password_hash` (PHC string).
    pub password_hash: Option<String>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
    /// `last_sign_in_at`.
    pub last_sign_in_at: Option<OffsetDateTime>,
}

impl UserRow {
    /// The user this row stores.
    pub(crate) fn decode(self) -> Result<User, StoreError> {
        let r = Record {
            table: "users",
            name: &self.id,
        };
        Ok(User {
            id: r.parse("id", &self.id, UserId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            email: r.parse("email", &self.email, Email::parse)?,
            status: r.parse("status", &self.status, |s| {
                UserStatus::parse(s).ok_or("unknown status")
            })?,
            email_verified: self.email_verified,
            name: self.name,
            given_name: self.given_name,
            family_name: self.family_name,
            password_hash: self.password_hash.map(PasswordHash::new),
            created_at: self.created_at,
            updated_at: self.updated_at,
            last_sign_in_at: self.last_sign_in_at,
        })
    }
}

/// A `user_tokens` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct UserTokenRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `purpose`.
    pub purpose: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `used_at`.
    pub used_at: Option<OffsetDateTime>,
}

impl UserTokenRow {
    /// The one-time link token this row stores.
    pub(crate) fn decode(self) -> Result<UserToken, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "user_tokens",
            name: &name,
        };
        Ok(UserToken {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            purpose: r.parse("purpose", &self.purpose, |s| {
                UserTokenPurpose::parse(s).ok_or("unknown purpose")
            })?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const AT: OffsetDateTime = OffsetDateTime::UNIX_EPOCH;
    pub(crate) const TENANT: &str = "ten_01jd0000000000000000000000";
    pub(crate) const USER: &str = "usr_01jd0000000000000000000000";
    pub(crate) const CLIENT: &str = "app_01jd0000000000000000000000";
    pub(crate) const SESSION: &str = "ses_01jd0000000000000000000000";
    pub(crate) const FAMILY: &str = "rtf_01jd0000000000000000000000";

    /// A `table.column` and how to spoil that column of a row form `R`.
    pub(crate) type Case<'a, R> = (&'a str, fn(&mut R));

    /// `good` decodes; each spoiled copy is Corrupt naming its `table.column`, never the hash.
    pub(crate) fn check<R: Clone, T: std::fmt::Debug>(
        good: R,
        decode: fn(R) -> Result<T, StoreError>,
        cases: &[Case<'_, R>],
    ) {
        decode(good.clone()).unwrap();
        for (column, spoil) in cases {
            let mut bad = good.clone();
            spoil(&mut bad);
            match decode(bad) {
                Err(StoreError::Corrupt(message)) => {
                    assert!(message.contains(column), "{column}: {message}");
                    assert!(
                        !message.contains(&"07".repeat(32)),
                        "hash leaked: {message}"
                    );
                }
                other => panic!("{column}: expected Corrupt, got {other:?}"),
            }
        }
    }

    /// The highest `$n` placeholder of `sql`: how many values a statement binds.
    pub(crate) fn placeholders(sql: &str) -> usize {
        sql.split('$')
            .skip(1)
            .filter_map(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .max()
            .unwrap_or(0)
    }

    /// SQLite's text of each statement has one more placeholder per `_ns` twin written, whose
    /// `bind_twin` value PostgreSQL skips; instants compared with `bind_instant` are bound on both.
    pub(crate) fn assert_twins(statements: &[(PerDialect, usize)]) {
        for (stmt, twins) in statements {
            assert_eq!(
                placeholders(stmt.sqlite),
                placeholders(stmt.postgres) + twins,
                "{}",
                stmt.sqlite
            );
        }
    }

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_eq!(placeholders("x = $2 AND y = $10 AND z = $3"), 10);
        assert_twins(&[(INSERT_TOKEN, 1), (CONSUME_TOKEN, 0)]);
    }

    #[test]
    fn user_rows_decode_and_name_each_bad_column() {
        let user = UserRow {
            id: USER.into(),
            tenant_id: TENANT.into(),
            email: "ada@example.com".into(),
            email_verified: true,
            name: None,
            given_name: None,
            family_name: None,
            status: "invited".into(),
            password_hash: Some("$argon2id$x".into()),
            created_at: AT,
            updated_at: AT,
            last_sign_in_at: None,
        };
        check(
            user,
            UserRow::decode,
            &[
                ("users.email", |r| r.email = "nope".into()),
                ("users.status", |r| r.status = "gone".into()),
                ("users.tenant_id", |r| r.tenant_id = USER.into()),
            ],
        );
        let token = UserTokenRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            purpose: "invitation".into(),
            created_at: AT,
            expires_at: AT,
            used_at: None,
        };
        check(
            token,
            UserTokenRow::decode,
            &[("user_tokens.purpose", |r| r.purpose = "magic".into())],
        );
    }

    #[test]
    fn conflicts_get_the_names_postgresql_reports() {
        let named = |constraint: &str| match name_conflict(StoreError::Conflict {
            constraint: constraint.to_owned(),
        }) {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        };
        assert_eq!(named(EMAIL_KEY_BY_COLUMNS).as_deref(), Some(EMAIL_KEY));
        assert_eq!(named(EMAIL_KEY).as_deref(), Some(EMAIL_KEY));
        assert_eq!(
            named(naming::UNNAMED_FOREIGN_KEY).as_deref(),
            Some(TENANT_FKEY)
        );
        assert_eq!(named("users_pkey").as_deref(), Some("users_pkey"));
    }
}
