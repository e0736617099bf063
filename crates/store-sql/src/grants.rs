//! Interactions, consents and revoked access-token ids (their statements and row forms,
//! [`InteractionRow`] and [`ConsentRow`]), the purge of everything the sign-in and code flows
//! leave behind (pushed authorization requests included), and the `GrantReads`/`GrantWrites`
//! ports for [`SqlTx`], whose code and refresh operations live in `codes` and `refresh`.
//!
//! Expiry is compared on the `_ns` twins on SQLite (its stored text does not order below one
//! second) and on the `timestamptz` columns themselves on PostgreSQL. Codes, refresh families
//! and sessions are purged only a day after they stopped working, so a late replay of a code or
//! a rotated refresh token is still recognised (and revokes what it must) instead of reading as
//! unknown. Scopes are JSON arrays (`jsonb` on PostgreSQL).

use crate::dialect::{Dialect, Kind, PerDialect};
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt, codes, encode_scopes, naming, refresh};
use async_trait::async_trait;
use svc_domain::{
    AuthorizationCode, ClientId, Consent, Interaction, InteractionId, RefreshFamily,
    RefreshFamilyId, RefreshToken, SecretHash, TenantId, UserId,
};
use svc_store::{
    CodeRedemption, GrantReads, GrantWrites, RefreshRotation, StoreError, revocation_message,
};
use time::{Duration, OffsetDateTime};

/// How long dead codes, refresh families and sessions are kept for replay detection.
const GRACE: Duration = Duration::days(1);

const SELECT_INTERACTION: PerDialect = PerDialect {
    sqlite: "SELECT id, tenant_id, client_id, request, created_at, expires_at \
         FROM interactions WHERE tenant_id = $1 AND id = $2 AND expires_at_ns > $3",
    postgres: "SELECT id, tenant_id, client_id, request, created_at, expires_at \
         FROM interactions WHERE tenant_id = $1 AND id = $2 AND expires_at > $3",
};
const INSERT_INTERACTION: PerDialect = PerDialect {
    sqlite: "INSERT INTO interactions (id, tenant_id, client_id, request, created_at, \
         expires_at, expires_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    postgres: "INSERT INTO interactions (id, tenant_id, client_id, request, created_at, \
         expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
};
const DELETE_INTERACTION: &str = "DELETE FROM interactions WHERE tenant_id = $1 AND id = $2";

macro_rules! select_consents {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, user_id, client_id, scope, subject, granted_at FROM consents ",
            $where
        )
    };
}

const SELECT_CONSENT: &str =
    select_consents!("WHERE tenant_id = $1 AND user_id = $2 AND client_id = $3");
const SELECT_CONSENT_BY_SUBJECT: &str =
    select_consents!("WHERE tenant_id = $1 AND client_id = $2 AND subject = $3");
const UPSERT_CONSENT: &str = "INSERT INTO consents (tenant_id, user_id, client_id, scope, \
     subject, granted_at) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (tenant_id, user_id, client_id) DO UPDATE SET scope = excluded.scope, \
     subject = excluded.subject, granted_at = excluded.granted_at";
const DELETE_CONSENT: &str =
    "DELETE FROM consents WHERE tenant_id = $1 AND user_id = $2 AND client_id = $3";

// Idempotent; a later expiry wins so the revocation lasts as long as the longest claim of it.
// On PostgreSQL the same statement announces the revocation on the change feed (`$4`, `$5`:
// channel and message) whenever it wrote a row: the notification commits with the row, so no
// listening process can miss a committed revocation without losing its connection, which it
// notices (see `svc_store::RevocationSet`). Rewriting an existing row with a later expiry
// announces again, harmlessly.
const REVOKE_ACCESS: PerDialect = PerDialect {
    sqlite: "INSERT INTO revoked_access_tokens (tenant_id, jti, expires_at, expires_at_ns) \
         VALUES ($1, $2, $3, $4) \
         ON CONFLICT (tenant_id, jti) DO UPDATE SET expires_at = excluded.expires_at, \
         expires_at_ns = excluded.expires_at_ns \
         WHERE revoked_access_tokens.expires_at_ns < excluded.expires_at_ns",
    postgres: "WITH written AS (INSERT INTO revoked_access_tokens (tenant_id, jti, expires_at) \
         VALUES ($1, $2, $3) \
         ON CONFLICT (tenant_id, jti) DO UPDATE SET expires_at = excluded.expires_at \
         WHERE revoked_access_tokens.expires_at < excluded.expires_at RETURNING 1) \
         SELECT pg_notify($4, $5) FROM written",
};
/// The channel of PostgreSQL's change feed (`svc-store-postgres` listens on it).
pub const CHANGE_CHANNEL: &str = "svc_changes";
const ACCESS_REVOKED: &str = "SELECT EXISTS (SELECT 1 FROM revoked_access_tokens \
     WHERE tenant_id = $1 AND jti = $2) AS revoked";
const ACCESS_REVOKED_OF_TENANT: PerDialect = PerDialect {
    sqlite: "SELECT jti, expires_at FROM revoked_access_tokens \
         WHERE tenant_id = $1 AND expires_at_ns > $2 LIMIT $3",
    postgres: "SELECT jti, expires_at FROM revoked_access_tokens \
         WHERE tenant_id = $1 AND expires_at > $2 LIMIT $3",
};

/// Which instant a purge statement's `$1` is.
#[derive(Clone, Copy)]
enum Cutoff {
    /// `now`: the row is useless as soon as it expired.
    Now,
    /// `now` minus [`GRACE`]: the row is kept a day for replay detection.
    Grace,
}

/// One kind of row the janitor deletes: its table, its primary key and when it is dead.
struct Purge {
    table: &'static str,
    /// The primary key's columns (each of these tables is `WITHOUT ROWID` on SQLite, and a key
    /// is what both dialects can select a batch by).
    key: &'static str,
    /// What makes a row dead, given the cutoff as `$1`.
    dead: PerDialect,
    cutoff: Cutoff,
}

impl Purge {
    /// Deletes at most `$2` dead rows: a backlog is worked off in bounded statements (each
    /// well inside `statement_timeout`, holding few locks) instead of one that may never end.
    fn statement<D: Dialect>(&self) -> String {
        self.statement_with(self.dead.pick::<D>())
    }

    fn statement_with(&self, dead: &str) -> String {
        let (table, key) = (self.table, self.key);
        format!(
            "DELETE FROM {table} WHERE ({key}) IN \
             (SELECT {key} FROM {table} WHERE {dead} LIMIT $2)"
        )
    }
}

/// Tokens go before their families: the foreign key would cascade, but cascaded rows are not
/// counted.
const PURGE: [Purge; 17] = [
    Purge {
        table: "refresh_tokens",
        key: "hash",
        dead: PerDialect {
            sqlite: "EXISTS (SELECT 1 FROM refresh_families f \
                 WHERE f.tenant_id = refresh_tokens.tenant_id AND f.id = refresh_tokens.family_id \
                 AND (f.expires_at_ns < $1 OR f.revoked_at_ns < $1))",
            postgres: "EXISTS (SELECT 1 FROM refresh_families f \
                 WHERE f.tenant_id = refresh_tokens.tenant_id AND f.id = refresh_tokens.family_id \
                 AND (f.expires_at < $1 OR f.revoked_at < $1))",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "refresh_families",
        key: "tenant_id, id",
        dead: PerDialect {
            sqlite: "expires_at_ns < $1 OR revoked_at_ns < $1",
            postgres: "expires_at < $1 OR revoked_at < $1",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "authorization_codes",
        key: "hash",
        dead: PerDialect {
            sqlite: "expires_at_ns < $1",
            postgres: "expires_at < $1",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "sessions",
        key: "id",
        dead: PerDialect {
            sqlite: "expires_at_ns < $1 OR revoked_at_ns < $1",
            postgres: "expires_at < $1 OR revoked_at < $1",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "interactions",
        key: "id",
        dead: PerDialect {
            sqlite: "expires_at_ns <= $1",
            postgres: "expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "backchannel_requests",
        key: "tenant_id, id",
        dead: PerDialect {
            sqlite: "expires_at_ns < $1",
            postgres: "expires_at < $1",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "device_authorizations",
        key: "tenant_id, hash",
        dead: PerDialect {
            sqlite: "expires_at_ns < $1",
            postgres: "expires_at < $1",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "logout_notices",
        key: "session_id, client_id",
        dead: PerDialect {
            sqlite: "created_at_ns < $1",
            postgres: "created_at < $1",
        },
        cutoff: Cutoff::Grace,
    },
    Purge {
        table: "pushed_authorization_requests",
        key: "tenant_id, hash",
        dead: PerDialect {
            sqlite: "expires_at_ns <= $1",
            postgres: "expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "revoked_access_tokens",
        key: "tenant_id, jti",
        dead: PerDialect {
            sqlite: "expires_at_ns <= $1",
            postgres: "expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "user_tokens",
        key: "hash",
        dead: PerDialect {
            sqlite: "used_at IS NOT NULL OR expires_at_ns <= $1",
            postgres: "used_at IS NOT NULL OR expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "counters",
        key: "key",
        dead: PerDialect {
            sqlite: "window_ends_at_ns <= $1",
            postgres: "window_ends_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "factor_challenges",
        key: "hash",
        dead: PerDialect {
            sqlite: "used_at IS NOT NULL OR expires_at_ns <= $1",
            postgres: "used_at IS NOT NULL OR expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "webauthn_ceremonies",
        key: "hash",
        dead: PerDialect {
            sqlite: "used_at IS NOT NULL OR expires_at_ns <= $1",
            postgres: "used_at IS NOT NULL OR expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "sso_attempts",
        key: "hash",
        dead: PerDialect {
            sqlite: "used_at IS NOT NULL OR expires_at_ns <= $1",
            postgres: "used_at IS NOT NULL OR expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "social_attempts",
        key: "hash",
        dead: PerDialect {
            sqlite: "used_at IS NOT NULL OR expires_at_ns <= $1",
            postgres: "used_at IS NOT NULL OR expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
    Purge {
        table: "pending_social_links",
        key: "hash",
        dead: PerDialect {
            sqlite: "expires_at_ns <= $1",
            postgres: "expires_at <= $1",
        },
        cutoff: Cutoff::Now,
    },
];

#[async_trait]
impl<D: Dialect> GrantReads for SqlTx<D> {
    async fn interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
        now: OffsetDateTime,
    ) -> Result<Option<Interaction>, StoreError> {
        Stmt::new(SELECT_INTERACTION.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_interaction::<D>)
            .await
    }

    async fn consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<Option<Consent>, StoreError> {
        Stmt::new(SELECT_CONSENT)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(client.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_consent::<D>)
            .await
    }

    async fn consent_by_subject(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        subject: &str,
    ) -> Result<Option<Consent>, StoreError> {
        Stmt::new(SELECT_CONSENT_BY_SUBJECT)
            .bind(tenant.as_str())
            .bind(client.as_str())
            .bind(subject)
            .fetch_optional_with::<D, _>(self.conn(), decode_consent::<D>)
            .await
    }

    async fn refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<(RefreshToken, RefreshFamily)>, StoreError> {
        refresh::token::<D>(self.conn(), tenant, hash).await
    }

    async fn access_token_revoked(
        &mut self,
        tenant: &TenantId,
        jti: &str,
    ) -> Result<bool, StoreError> {
        let row = Stmt::new(ACCESS_REVOKED)
            .bind(tenant.as_str())
            .bind(jti)
            .fetch_one::<D>(self.conn())
            .await?;
        Columns::<D>::new(&row, "revoked_access_tokens").get("revoked")
    }

    async fn access_tokens_revoked(
        &mut self,
        tenant: &TenantId,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        Stmt::new(ACCESS_REVOKED_OF_TENANT.pick::<D>())
            .bind(tenant.as_str())
            .bind_instant(now)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all_with::<D, _>(self.conn(), |row| {
                let c = Columns::<D>::new(row, "revoked_access_tokens");
                let expires_at: OffsetDateTime = c.get("expires_at")?;
                Ok((c.get("jti")?, expires_at.unix_timestamp()))
            })
            .await
    }
}

#[async_trait]
impl<D: Dialect> GrantWrites for SqlTx<D> {
    async fn insert_interaction(&mut self, interaction: &Interaction) -> Result<(), StoreError> {
        Stmt::new(INSERT_INTERACTION.pick::<D>())
            .bind(interaction.id.as_str())
            .bind(interaction.tenant_id.as_str())
            .bind(interaction.client_id.as_str())
            .bind(interaction.request.as_str())
            .bind(interaction.created_at)
            .bind(interaction.expires_at)
            .bind_twin(interaction.expires_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "interactions_tenant_id_fkey"))?;
        Ok(())
    }

    async fn delete_interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(DELETE_INTERACTION)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn upsert_consent(&mut self, consent: &Consent) -> Result<(), StoreError> {
        Stmt::new(UPSERT_CONSENT)
            .bind(consent.tenant_id.as_str())
            .bind(consent.user_id.as_str())
            .bind(consent.client_id.as_str())
            .bind_json(encode_scopes(&consent.scope)?)
            .bind(consent.subject.as_str())
            .bind(consent.granted_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "consents_tenant_id_fkey"))?;
        Ok(())
    }

    async fn delete_consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(DELETE_CONSENT)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(client.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn insert_code(&mut self, code: &AuthorizationCode) -> Result<(), StoreError> {
        codes::insert::<D>(self.conn(), code).await
    }

    async fn redeem_code(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<CodeRedemption, StoreError> {
        codes::redeem::<D>(self.conn(), tenant, hash, now).await
    }

    async fn record_code_issuance(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        family: Option<&RefreshFamilyId>,
        access_jti: &str,
        access_expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        codes::record_issuance::<D>(
            self.conn(),
            tenant,
            hash,
            family,
            access_jti,
            access_expires_at,
        )
        .await
    }

    async fn insert_refresh_family(&mut self, family: &RefreshFamily) -> Result<(), StoreError> {
        refresh::insert_family::<D>(self.conn(), family).await
    }

    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), StoreError> {
        refresh::insert_token::<D>(self.conn(), token).await
    }

    async fn rotate_refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<RefreshRotation, StoreError> {
        refresh::rotate::<D>(self.conn(), tenant, hash, now).await
    }

    async fn revoke_refresh_family(
        &mut self,
        tenant: &TenantId,
        id: &RefreshFamilyId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<bool, StoreError> {
        refresh::revoke_family::<D>(self.conn(), tenant, id, now, reason).await
    }

    async fn revoke_user_refresh_families(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<u64, StoreError> {
        refresh::revoke_user_families::<D>(self.conn(), tenant, user, now, reason).await
    }

    async fn revoke_access_token(
        &mut self,
        tenant: &TenantId,
        jti: &str,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut stmt = Stmt::new(REVOKE_ACCESS.pick::<D>())
            .bind(tenant.as_str())
            .bind(jti)
            .bind(expires_at)
            .bind_twin(expires_at);
        if D::KIND == Kind::Postgres {
            let message = revocation_message(tenant, jti, expires_at.unix_timestamp());
            stmt = stmt.bind(CHANGE_CHANNEL).bind(message);
        }
        stmt.execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "revoked_access_tokens_tenant_id_fkey"))?;
        self.revoked_on_commit(tenant, jti, expires_at.unix_timestamp());
        Ok(())
    }

    /// Deletes at most `limit` rows of each kind past any use at `now`; returns how many.
    async fn purge_expired_grants_at_most(
        &mut self,
        now: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut purged = 0;
        for purge in &PURGE {
            let before = match purge.cutoff {
                Cutoff::Now => now,
                Cutoff::Grace => now - GRACE,
            };
            purged += Stmt::dynamic(&purge.statement::<D>())
                .bind_instant(before)
                .bind(limit)
                .execute::<D>(self.conn())
                .await?;
        }
        Ok(purged)
    }
}

fn decode_interaction<D: Dialect>(row: &Row<D>) -> Result<Interaction, StoreError> {
    let c = Columns::<D>::new(row, "interactions");
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

fn decode_consent<D: Dialect>(row: &Row<D>) -> Result<Consent, StoreError> {
    let c = Columns::<D>::new(row, "consents");
    ConsentRow {
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        client_id: c.get("client_id")?,
        scope: c.json("scope")?,
        subject: c.get("subject")?,
        granted_at: c.get("granted_at")?,
    }
    .decode()
}

/// An `interactions` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct InteractionRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `request` (opaque to storage).
    pub request: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
}

impl InteractionRow {
    /// The interaction this row stores.
    pub(crate) fn decode(self) -> Result<Interaction, StoreError> {
        let r = Record {
            table: "interactions",
            name: &self.id,
        };
        Ok(Interaction {
            id: r.parse("id", &self.id, InteractionId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            request: self.request,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

/// A `consents` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct ConsentRow {
    /// `tenant_id`.
    pub tenant_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `subject`.
    pub subject: String,
    /// `granted_at`.
    pub granted_at: OffsetDateTime,
}

impl ConsentRow {
    /// The consent this row stores.
    pub(crate) fn decode(self) -> Result<Consent, StoreError> {
        let name = format!("{}/{}", self.user_id, self.client_id);
        let r = Record {
            table: "consents",
            name: &name,
        };
        Ok(Consent {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            subject: self.subject,
            granted_at: self.granted_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, CLIENT, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[(SELECT_INTERACTION, 0), (INSERT_INTERACTION, 1)]);
        // Four values on SQLite (one twin); on PostgreSQL three, then the feed's channel and
        // message, which only PostgreSQL binds.
        use crate::users::tests::placeholders;
        assert_eq!(placeholders(REVOKE_ACCESS.sqlite), 4);
        assert_eq!(placeholders(REVOKE_ACCESS.postgres), 5);
    }

    #[test]
    fn grant_rows_decode_and_name_each_bad_column() {
        let interaction = InteractionRow {
            id: "int_01jd0000000000000000000000".into(),
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            request: "{}".into(),
            created_at: AT,
            expires_at: AT,
        };
        check(
            interaction,
            InteractionRow::decode,
            &[("interactions.id", |r| r.id = USER.into())],
        );
        let consent = ConsentRow {
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            client_id: CLIENT.into(),
            scope: r#"["openid","profile"]"#.into(),
            subject: "s".into(),
            granted_at: AT,
        };
        check(
            consent,
            ConsentRow::decode,
            &[
                ("consents.scope", |r| r.scope = r#"["a b"]"#.into()),
                ("consents.client_id", |r| r.client_id = USER.into()),
            ],
        );
    }

    #[test]
    fn purge_statements_differ_only_in_the_columns_compared() {
        for purge in &PURGE {
            assert_eq!(purge.dead.sqlite.replace("_ns", ""), purge.dead.postgres);
            // Bounded by primary key: the key selects the batch, the limit is the second value.
            let sql = purge.statement_with(purge.dead.sqlite);
            assert!(sql.starts_with(&format!(
                "DELETE FROM {} WHERE ({}) IN",
                purge.table, purge.key
            )));
            assert!(sql.ends_with("LIMIT $2)"), "{sql}");
        }
    }
}
