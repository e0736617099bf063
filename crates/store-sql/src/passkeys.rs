//! Passkeys and WebAuthn ceremonies: their statements, their row forms ([`PasskeyRow`],
//! [`CeremonyRow`]) and the `PasskeyReads`/`PasskeyWrites` ports for [`SqlTx`]; also the one
//! security-key write on `second_factors` (replacing a factor's sealed credential after a use).
//!
//! A ceremony is spent by one conditional `UPDATE … WHERE used_at IS NULL AND <unexpired>
//! RETURNING`: only the call that changed the row gets it back. On PostgreSQL a concurrent taker
//! waits for the first one's row lock, then re-checks `used_at IS NULL` against the committed
//! row (READ COMMITTED) and changes nothing; on SQLite writers are serialised by
//! `BEGIN IMMEDIATE` anyway. So a ceremony checks one answer however many requests race. The
//! tenant and the purpose are part of the condition, so a take for another tenant or another
//! purpose neither finds nor spends it. Its expiry is compared on the `expires_at_ns` twin on
//! SQLite and on `expires_at` itself on PostgreSQL.
//!
//! Every write to a passkey names its tenant (and its owner, where the port has one), so another
//! tenant's or another person's id changes nothing and reads as "not there". "Oldest first" is
//! ordered in Rust after decoding, by creation time then id, on both backends, as for second
//! factors (SQLite's stored text does not order below one second). The credential and the
//! ceremony state are the WebAuthn library's JSON, stored as text byte for byte on both backends
//! and never parsed here.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, hash_name};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    CeremonyPurpose, FactorId, Passkey, PasskeyId, SecretHash, TenantId, UserId, WebauthnCeremony,
};
use svc_store::{PasskeyReads, PasskeyWrites, StoreError};
use time::OffsetDateTime;

macro_rules! select_passkeys {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, user_id, name, credential_id, credential, backup_eligible, \
             created_at, last_used_at FROM passkeys ",
            $where
        )
    };
}

const SELECT_USER_PASSKEYS: &str = select_passkeys!("WHERE tenant_id = $1 AND user_id = $2");
const SELECT_BY_CREDENTIAL: &str = select_passkeys!("WHERE tenant_id = $1 AND credential_id = $2");
const INSERT_PASSKEY: &str = "INSERT INTO passkeys (id, tenant_id, user_id, name, \
     credential_id, credential, backup_eligible, created_at, last_used_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const RECORD_USE: &str = "UPDATE passkeys SET credential = $3, backup_eligible = $4, \
     last_used_at = $5 WHERE tenant_id = $1 AND id = $2";
const RENAME_PASSKEY: &str =
    "UPDATE passkeys SET name = $4 WHERE tenant_id = $1 AND user_id = $2 AND id = $3";
const DELETE_PASSKEY: &str =
    "DELETE FROM passkeys WHERE tenant_id = $1 AND user_id = $2 AND id = $3";

const UPDATE_FACTOR_SECRET: &str =
    "UPDATE second_factors SET sealed_secret = $3 WHERE tenant_id = $1 AND id = $2";

const INSERT_CEREMONY: PerDialect = PerDialect {
    sqlite: "INSERT INTO webauthn_ceremonies (hash, tenant_id, user_id, purpose, state, \
         created_at, expires_at, expires_at_ns, used_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    postgres: "INSERT INTO webauthn_ceremonies (hash, tenant_id, user_id, purpose, state, \
         created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
};
const TAKE_CEREMONY: PerDialect = PerDialect {
    sqlite: "UPDATE webauthn_ceremonies SET used_at = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND purpose = $3 AND used_at IS NULL \
         AND expires_at_ns > $5 \
         RETURNING hash, tenant_id, user_id, purpose, state, created_at, expires_at, used_at",
    postgres: "UPDATE webauthn_ceremonies SET used_at = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND purpose = $3 AND used_at IS NULL \
         AND expires_at > $5 \
         RETURNING hash, tenant_id, user_id, purpose, state, created_at, expires_at, used_at",
};

#[async_trait]
impl<D: Dialect> PasskeyReads for SqlTx<D> {
    /// Oldest first (see the module documentation).
    async fn passkeys(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Passkey>, StoreError> {
        let mut passkeys = Stmt::new(SELECT_USER_PASSKEYS)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_passkey::<D>)
            .await?;
        passkeys.sort_by(|a, b| (a.created_at, a.id.as_str()).cmp(&(b.created_at, b.id.as_str())));
        Ok(passkeys)
    }

    async fn passkey_by_credential(
        &mut self,
        tenant: &TenantId,
        credential_id: &[u8],
    ) -> Result<Option<Passkey>, StoreError> {
        Stmt::new(SELECT_BY_CREDENTIAL)
            .bind(tenant.as_str())
            .bind(credential_id)
            .fetch_optional_with::<D, _>(self.conn(), decode_passkey::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> PasskeyWrites for SqlTx<D> {
    /// A credential id already in the tenant is the unique key's conflict: PostgreSQL names the
    /// constraint, and SQLite's columns (`passkeys.tenant_id, passkeys.credential_id`) spell the
    /// same name in the SQLite backend.
    async fn insert_passkey(&mut self, passkey: &Passkey) -> Result<(), StoreError> {
        Stmt::new(INSERT_PASSKEY)
            .bind(passkey.id.as_str())
            .bind(passkey.tenant_id.as_str())
            .bind(passkey.user_id.as_str())
            .bind(passkey.name.as_str())
            .bind(passkey.credential_id.as_slice())
            .bind(passkey.credential.as_str())
            .bind(passkey.backup_eligible)
            .bind(passkey.created_at)
            .bind(passkey.last_used_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "passkeys_tenant_id_fkey"))?;
        Ok(())
    }

    async fn record_passkey_use(
        &mut self,
        tenant: &TenantId,
        id: &PasskeyId,
        credential: &str,
        backup_eligible: bool,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(RECORD_USE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(credential)
            .bind(backup_eligible)
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn rename_passkey(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &PasskeyId,
        name: &str,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(RENAME_PASSKEY)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(id.as_str())
            .bind(name)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn delete_passkey(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &PasskeyId,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(DELETE_PASSKEY)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn update_factor_secret(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
        sealed_secret: &[u8],
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(UPDATE_FACTOR_SECRET)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(sealed_secret)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn insert_webauthn_ceremony(
        &mut self,
        ceremony: &WebauthnCeremony,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT_CEREMONY.pick::<D>())
            .bind(ceremony.hash.as_bytes())
            .bind(ceremony.tenant_id.as_str())
            .bind(ceremony.user_id.as_ref().map(UserId::as_str))
            .bind(ceremony.purpose.as_str())
            .bind(ceremony.state.as_str())
            .bind(ceremony.created_at)
            .bind(ceremony.expires_at)
            .bind_twin(ceremony.expires_at)
            .bind(ceremony.used_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "webauthn_ceremonies_tenant_id_fkey"))?;
        Ok(())
    }

    /// One conditional `UPDATE … RETURNING` (see the module documentation).
    async fn take_webauthn_ceremony(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: CeremonyPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<WebauthnCeremony>, StoreError> {
        Stmt::new(TAKE_CEREMONY.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(purpose.as_str())
            .bind(now)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_ceremony::<D>)
            .await
    }
}

fn decode_passkey<D: Dialect>(row: &Row<D>) -> Result<Passkey, StoreError> {
    let c = Columns::<D>::new(row, "passkeys");
    PasskeyRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        name: c.get("name")?,
        credential_id: c.get("credential_id")?,
        credential: c.get("credential")?,
        backup_eligible: c.get("backup_eligible")?,
        created_at: c.get("created_at")?,
        last_used_at: c.get("last_used_at")?,
    }
    .decode()
}

fn decode_ceremony<D: Dialect>(row: &Row<D>) -> Result<WebauthnCeremony, StoreError> {
    let c = Columns::<D>::new(row, "webauthn_ceremonies");
    CeremonyRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        purpose: c.get("purpose")?,
        state: c.get("state")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        used_at: c.get("used_at")?,
    }
    .decode()
}

/// A `passkeys` row as stored.
#[derive(Debug, Clone)]
struct PasskeyRow {
    id: String,
    tenant_id: String,
    user_id: String,
    name: String,
    /// 1 to 1023 bytes.
    credential_id: Vec<u8>,
    /// JSON object text, opaque here.
    credential: String,
    backup_eligible: bool,
    created_at: OffsetDateTime,
    last_used_at: Option<OffsetDateTime>,
}

impl PasskeyRow {
    fn decode(self) -> Result<Passkey, StoreError> {
        let r = Record {
            table: "passkeys",
            name: &self.id,
        };
        Ok(Passkey {
            id: r.parse("id", &self.id, PasskeyId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            name: self.name,
            credential_id: self.credential_id,
            credential: self.credential,
            backup_eligible: self.backup_eligible,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
        })
    }
}

/// A `webauthn_ceremonies` row as stored.
#[derive(Clone)]
struct CeremonyRow {
    /// 32 bytes.
    hash: Vec<u8>,
    tenant_id: String,
    user_id: Option<String>,
    purpose: String,
    /// The ceremony's challenge and what checks its answer; never in a message (hence no
    /// `Debug`).
    state: String,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    used_at: Option<OffsetDateTime>,
}

impl CeremonyRow {
    fn decode(self) -> Result<WebauthnCeremony, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "webauthn_ceremonies",
            name: &name,
        };
        Ok(WebauthnCeremony {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse_opt("user_id", self.user_id.as_deref(), UserId::parse)?,
            purpose: r.parse("purpose", &self.purpose, |s| {
                CeremonyPurpose::parse(s).ok_or("unknown purpose")
            })?,
            state: self.state,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[(INSERT_CEREMONY, 1), (TAKE_CEREMONY, 0)]);
    }

    #[test]
    fn the_take_names_tenant_purpose_and_expiry_in_one_statement() {
        for sql in [TAKE_CEREMONY.sqlite, TAKE_CEREMONY.postgres] {
            assert!(sql.starts_with("UPDATE "), "{sql}");
            for condition in [
                "tenant_id = $1",
                "purpose = $3",
                "used_at IS NULL",
                "RETURNING",
            ] {
                assert!(sql.contains(condition), "{condition}: {sql}");
            }
        }
        assert!(TAKE_CEREMONY.sqlite.contains("expires_at_ns > $5"));
        assert!(TAKE_CEREMONY.postgres.contains("expires_at > $5"));
    }

    #[test]
    fn passkey_and_ceremony_rows_decode_and_name_each_bad_column() {
        let passkey = PasskeyRow {
            id: "pky_01jd0000000000000000000000".into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            name: "Laptop".into(),
            credential_id: vec![0, 1, 0xff],
            credential: "{}".into(),
            backup_eligible: true,
            created_at: AT,
            last_used_at: None,
        };
        check(
            passkey,
            PasskeyRow::decode,
            &[
                ("passkeys.id", |r| r.id = USER.into()),
                ("passkeys.tenant_id", |r| r.tenant_id = USER.into()),
                ("passkeys.user_id", |r| r.user_id = TENANT.into()),
            ],
        );
        let ceremony = CeremonyRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            user_id: None,
            purpose: "passkey_sign_in".into(),
            state: "{}".into(),
            created_at: AT,
            expires_at: AT,
            used_at: None,
        };
        check(
            ceremony,
            CeremonyRow::decode,
            &[
                ("webauthn_ceremonies.hash", |r| r.hash = vec![7; 31]),
                ("webauthn_ceremonies.tenant_id", |r| {
                    r.tenant_id = USER.into();
                }),
                ("webauthn_ceremonies.user_id", |r| {
                    r.user_id = Some(TENANT.into());
                }),
                ("webauthn_ceremonies.purpose", |r| {
                    r.purpose = "sign_in".into();
                }),
            ],
        );
    }
}
