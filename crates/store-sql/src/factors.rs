//! Second factors: their statements, their row forms ([`FactorRow`], [`ChallengeRow`],
//! [`DeviceRow`]) and the `FactorReads`/`FactorWrites` ports for [`SqlTx`].
//!
//! Every single-use rule is one conditional `UPDATE` whose changed-row count is the answer: a
//! TOTP step is accepted only while `last_used_step IS NULL OR last_used_step < $step`, a backup
//! code and a challenge only while `used_at IS NULL`. On PostgreSQL a concurrent writer waits
//! for the first one's row lock, then re-checks the condition against the committed row (READ
//! COMMITTED) and changes nothing; on SQLite writers are serialised by `BEGIN IMMEDIATE` anyway.
//! So a code or a challenge works once however many requests race.
//!
//! Instants compared in SQL (a factor's creation for abandoned enrolments, a challenge's expiry)
//! use the `created_at_ns` / `expires_at_ns` twins on SQLite and the columns themselves on
//! PostgreSQL. "Oldest first" is ordered in Rust after decoding, by creation time then id, on
//! both backends (SQLite's stored text does not order below one second). `amr` is a JSON array
//! (`jsonb` on PostgreSQL). Backup codes are never read back, only counted and consumed.
//!
//! The deployment's wrapped data key is written with `INSERT … ON CONFLICT (purpose) DO
//! NOTHING`, whose changed-row count says whether this call stored it: on PostgreSQL a racing
//! insert waits for the first one's uncommitted row, then does nothing once it commits (and a
//! later statement of the loser's transaction reads the winner's key, READ COMMITTED); on
//! SQLite writers are serialised. Either way exactly one key of a purpose is ever stored.
//!
//! A known device is stored the same way (`ON CONFLICT` on its key `DO NOTHING`), so the first
//! sign-in from a browser records it once however many race. Its `trusted_until` is only read
//! back and compared in Rust (`KnownDevice::is_trusted`), so it needs no `_ns` twin. Whether a
//! person signed in from an address is one `SELECT EXISTS` over `login_history`, served by its
//! `(client_ip, tenant_id, user_id)` index.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, hash_name};
use crate::{Columns, Row, SqlTx, Stmt, encode_strings};
use async_trait::async_trait;
use svc_domain::{
    BackupCode, FactorChallenge, FactorId, FactorKind, KnownDevice, SecondFactor, SecretHash,
    TenantId, UserId,
};
use svc_store::{FactorReads, FactorWrites, StoreError};
use time::OffsetDateTime;

macro_rules! select_factors {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, user_id, kind, label, sealed_secret, confirmed_at, \
             last_used_step, created_at FROM second_factors ",
            $where
        )
    };
}

const SELECT_USER_FACTORS: &str = select_factors!("WHERE tenant_id = $1 AND user_id = $2");
const SELECT_FACTOR: &str = select_factors!("WHERE tenant_id = $1 AND id = $2");
const INSERT_FACTOR: PerDialect = PerDialect {
    sqlite: "INSERT INTO second_factors (id, tenant_id, user_id, kind, label, sealed_secret, \
         confirmed_at, last_used_step, created_at, created_at_ns) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    postgres: "INSERT INTO second_factors (id, tenant_id, user_id, kind, label, sealed_secret, \
         confirmed_at, last_used_step, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
};
const CONFIRM_FACTOR: &str = "UPDATE second_factors SET confirmed_at = $4, last_used_step = $5 \
     WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND confirmed_at IS NULL";
const ADVANCE_STEP: &str = "UPDATE second_factors SET last_used_step = $3 \
     WHERE tenant_id = $1 AND id = $2 AND (last_used_step IS NULL OR last_used_step < $3)";
const DELETE_FACTOR: &str =
    "DELETE FROM second_factors WHERE tenant_id = $1 AND user_id = $2 AND id = $3";
const DELETE_UNCONFIRMED: PerDialect = PerDialect {
    sqlite: "DELETE FROM second_factors WHERE tenant_id = $1 AND user_id = $2 \
         AND confirmed_at IS NULL AND created_at_ns < $3",
    postgres: "DELETE FROM second_factors WHERE tenant_id = $1 AND user_id = $2 \
         AND confirmed_at IS NULL AND created_at < $3",
};
const DELETE_USER_FACTORS: &str =
    "DELETE FROM second_factors WHERE tenant_id = $1 AND user_id = $2";

const COUNT_UNUSED_CODES: &str = "SELECT count(*) AS n FROM backup_codes \
     WHERE tenant_id = $1 AND user_id = $2 AND used_at IS NULL";
const DELETE_USER_CODES: &str = "DELETE FROM backup_codes WHERE tenant_id = $1 AND user_id = $2";
const INSERT_CODE: &str = "INSERT INTO backup_codes (tenant_id, user_id, hash, created_at, \
     used_at) VALUES ($1, $2, $3, $4, $5)";
const CONSUME_CODE: &str = "UPDATE backup_codes SET used_at = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND hash = $3 AND used_at IS NULL";

const SELECT_LIVE_CHALLENGE: PerDialect = PerDialect {
    sqlite: "SELECT hash, tenant_id, user_id, amr, created_at, expires_at, used_at \
         FROM factor_challenges WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL \
         AND expires_at_ns > $3",
    postgres: "SELECT hash, tenant_id, user_id, amr, created_at, expires_at, used_at \
         FROM factor_challenges WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL \
         AND expires_at > $3",
};
const INSERT_CHALLENGE: PerDialect = PerDialect {
    sqlite: "INSERT INTO factor_challenges (hash, tenant_id, user_id, amr, created_at, \
         expires_at, expires_at_ns, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    postgres: "INSERT INTO factor_challenges (hash, tenant_id, user_id, amr, created_at, \
         expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
};
const CONSUME_CHALLENGE: PerDialect = PerDialect {
    sqlite: "UPDATE factor_challenges SET used_at = $3 \
         WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL AND expires_at_ns > $4",
    postgres: "UPDATE factor_challenges SET used_at = $3 \
         WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL AND expires_at > $4",
};

const SELECT_DATA_KEY: &str = "SELECT wrapped FROM factor_data_keys WHERE purpose = $1";
const INSERT_DATA_KEY: &str = "INSERT INTO factor_data_keys (purpose, wrapped, created_at) \
     VALUES ($1, $2, $3) ON CONFLICT (purpose) DO NOTHING";

const SELECT_DEVICE: &str = "SELECT tenant_id, user_id, secret_hash, user_agent, first_seen_at, \
     last_seen_at, trusted_until FROM known_devices \
     WHERE tenant_id = $1 AND user_id = $2 AND secret_hash = $3";
const INSERT_DEVICE: &str = "INSERT INTO known_devices (tenant_id, user_id, secret_hash, \
     user_agent, first_seen_at, last_seen_at, trusted_until) VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (tenant_id, user_id, secret_hash) DO NOTHING";
const TOUCH_DEVICE: &str = "UPDATE known_devices SET last_seen_at = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND secret_hash = $3";
const SET_DEVICE_TRUST: &str = "UPDATE known_devices SET trusted_until = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND secret_hash = $3";
const FORGET_TRUSTED_DEVICES: &str = "UPDATE known_devices SET trusted_until = NULL \
     WHERE tenant_id = $1 AND user_id = $2 AND trusted_until IS NOT NULL";
const SIGNED_IN_FROM: &str = "SELECT EXISTS (SELECT 1 FROM login_history \
     WHERE tenant_id = $1 AND user_id = $2 AND client_ip = $3 AND result = 'success') AS seen";

#[async_trait]
impl<D: Dialect> FactorReads for SqlTx<D> {
    /// Oldest first (see the module documentation).
    async fn second_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<SecondFactor>, StoreError> {
        let mut factors = Stmt::new(SELECT_USER_FACTORS)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_factor::<D>)
            .await?;
        factors.sort_by(|a, b| (a.created_at, a.id.as_str()).cmp(&(b.created_at, b.id.as_str())));
        Ok(factors)
    }

    async fn second_factor(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
    ) -> Result<Option<SecondFactor>, StoreError> {
        Stmt::new(SELECT_FACTOR)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_factor::<D>)
            .await
    }

    async fn unused_backup_codes(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u32, StoreError> {
        let row = Stmt::new(COUNT_UNUSED_CODES)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_one::<D>(self.conn())
            .await?;
        let n: i64 = Columns::<D>::new(&row, "backup_codes").get("n")?;
        u32::try_from(n)
            .map_err(|_| StoreError::Corrupt(format!("backup_codes: a count of {n} unused codes")))
    }

    async fn factor_challenge(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<FactorChallenge>, StoreError> {
        Stmt::new(SELECT_LIVE_CHALLENGE.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_challenge::<D>)
            .await
    }

    async fn factor_data_key(&mut self, purpose: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Stmt::new(SELECT_DATA_KEY)
            .bind(purpose)
            .fetch_optional_with::<D, _>(self.conn(), |row| {
                Columns::<D>::new(row, "factor_data_keys").get("wrapped")
            })
            .await
    }

    async fn known_device(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
    ) -> Result<Option<KnownDevice>, StoreError> {
        Stmt::new(SELECT_DEVICE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(hash.as_bytes())
            .fetch_optional_with::<D, _>(self.conn(), decode_device::<D>)
            .await
    }

    /// One `SELECT EXISTS` (see the module documentation).
    async fn signed_in_from(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        ip: &str,
    ) -> Result<bool, StoreError> {
        let row = Stmt::new(SIGNED_IN_FROM)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(ip)
            .fetch_one::<D>(self.conn())
            .await?;
        Columns::<D>::new(&row, "login_history").get("seen")
    }
}

#[async_trait]
impl<D: Dialect> FactorWrites for SqlTx<D> {
    async fn insert_second_factor(&mut self, factor: &SecondFactor) -> Result<(), StoreError> {
        Stmt::new(INSERT_FACTOR.pick::<D>())
            .bind(factor.id.as_str())
            .bind(factor.tenant_id.as_str())
            .bind(factor.user_id.as_str())
            .bind(factor.kind.as_str())
            .bind(factor.label.as_str())
            .bind(factor.sealed_secret.as_slice())
            .bind(factor.confirmed_at)
            .bind(factor.last_used_step)
            .bind(factor.created_at)
            .bind_twin(factor.created_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "second_factors_tenant_id_fkey"))?;
        Ok(())
    }

    async fn confirm_second_factor(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &FactorId,
        step: i64,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(CONFIRM_FACTOR)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(id.as_str())
            .bind(now)
            .bind(step)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    /// One conditional `UPDATE` (see the module documentation).
    async fn advance_totp_step(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
        step: i64,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(ADVANCE_STEP)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(step)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn delete_second_factor(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &FactorId,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(DELETE_FACTOR)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn delete_unconfirmed_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        before: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        Stmt::new(DELETE_UNCONFIRMED.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind_instant(before)
            .execute::<D>(self.conn())
            .await
    }

    async fn delete_user_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError> {
        Stmt::new(DELETE_USER_CODES)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .execute::<D>(self.conn())
            .await?;
        Stmt::new(DELETE_USER_FACTORS)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .execute::<D>(self.conn())
            .await
    }

    /// The old set is deleted, then each code is stored under `tenant` and `user` (the codes'
    /// own ids are the same, by the port's contract), in the caller's transaction.
    async fn replace_backup_codes(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        codes: &[BackupCode],
    ) -> Result<(), StoreError> {
        Stmt::new(DELETE_USER_CODES)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .execute::<D>(self.conn())
            .await?;
        for code in codes {
            Stmt::new(INSERT_CODE)
                .bind(tenant.as_str())
                .bind(user.as_str())
                .bind(code.hash.as_bytes())
                .bind(code.created_at)
                .bind(code.used_at)
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, "backup_codes_tenant_id_fkey"))?;
        }
        Ok(())
    }

    /// One conditional `UPDATE` (see the module documentation).
    async fn consume_backup_code(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(CONSUME_CODE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn insert_factor_challenge(
        &mut self,
        challenge: &FactorChallenge,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT_CHALLENGE.pick::<D>())
            .bind(challenge.hash.as_bytes())
            .bind(challenge.tenant_id.as_str())
            .bind(challenge.user_id.as_str())
            .bind_json(encode_strings(challenge.amr.iter().map(String::as_str))?)
            .bind(challenge.created_at)
            .bind(challenge.expires_at)
            .bind_twin(challenge.expires_at)
            .bind(challenge.used_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "factor_challenges_tenant_id_fkey"))?;
        Ok(())
    }

    /// One conditional `UPDATE` (see the module documentation).
    async fn consume_factor_challenge(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(CONSUME_CHALLENGE.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .bind_instant(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    /// One `INSERT … ON CONFLICT DO NOTHING` (see the module documentation).
    async fn insert_factor_data_key(
        &mut self,
        purpose: &str,
        wrapped: &[u8],
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let inserted = Stmt::new(INSERT_DATA_KEY)
            .bind(purpose)
            .bind(wrapped)
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(inserted > 0)
    }

    /// One `INSERT … ON CONFLICT DO NOTHING` (see the module documentation).
    async fn insert_known_device(&mut self, device: &KnownDevice) -> Result<bool, StoreError> {
        let inserted = Stmt::new(INSERT_DEVICE)
            .bind(device.tenant_id.as_str())
            .bind(device.user_id.as_str())
            .bind(device.secret_hash.as_bytes())
            .bind(device.user_agent.as_deref())
            .bind(device.first_seen_at)
            .bind(device.last_seen_at)
            .bind(device.trusted_until)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "known_devices_tenant_id_fkey"))?;
        Ok(inserted > 0)
    }

    async fn touch_known_device(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(TOUCH_DEVICE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(())
    }

    async fn set_device_trust(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        until: Option<OffsetDateTime>,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(SET_DEVICE_TRUST)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(hash.as_bytes())
            .bind(until)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn forget_trusted_devices(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError> {
        Stmt::new(FORGET_TRUSTED_DEVICES)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .execute::<D>(self.conn())
            .await
    }
}

fn decode_factor<D: Dialect>(row: &Row<D>) -> Result<SecondFactor, StoreError> {
    let c = Columns::<D>::new(row, "second_factors");
    FactorRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        kind: c.get("kind")?,
        label: c.get("label")?,
        sealed_secret: c.get("sealed_secret")?,
        confirmed_at: c.get("confirmed_at")?,
        last_used_step: c.get("last_used_step")?,
        created_at: c.get("created_at")?,
    }
    .decode()
}

fn decode_challenge<D: Dialect>(row: &Row<D>) -> Result<FactorChallenge, StoreError> {
    let c = Columns::<D>::new(row, "factor_challenges");
    ChallengeRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        amr: c.json("amr")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        used_at: c.get("used_at")?,
    }
    .decode()
}

fn decode_device<D: Dialect>(row: &Row<D>) -> Result<KnownDevice, StoreError> {
    let c = Columns::<D>::new(row, "known_devices");
    DeviceRow {
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        secret_hash: c.get("secret_hash")?,
        user_agent: c.get("user_agent")?,
        first_seen_at: c.get("first_seen_at")?,
        last_seen_at: c.get("last_seen_at")?,
        trusted_until: c.get("trusted_until")?,
    }
    .decode()
}

/// A `second_factors` row as stored.
#[derive(Clone)]
struct FactorRow {
    id: String,
    tenant_id: String,
    user_id: String,
    kind: String,
    label: String,
    /// Sealed; never in a message (hence no `Debug`).
    sealed_secret: Vec<u8>,
    confirmed_at: Option<OffsetDateTime>,
    last_used_step: Option<i64>,
    created_at: OffsetDateTime,
}

impl FactorRow {
    fn decode(self) -> Result<SecondFactor, StoreError> {
        let r = Record {
            table: "second_factors",
            name: &self.id,
        };
        Ok(SecondFactor {
            id: r.parse("id", &self.id, FactorId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            kind: r.parse("kind", &self.kind, |s| {
                FactorKind::parse(s).ok_or("unknown kind")
            })?,
            label: self.label,
            sealed_secret: self.sealed_secret,
            confirmed_at: self.confirmed_at,
            last_used_step: self.last_used_step,
            created_at: self.created_at,
        })
    }
}

/// A `factor_challenges` row as stored.
#[derive(Debug, Clone)]
struct ChallengeRow {
    /// 32 bytes.
    hash: Vec<u8>,
    tenant_id: String,
    user_id: String,
    /// JSON array text.
    amr: String,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    used_at: Option<OffsetDateTime>,
}

impl ChallengeRow {
    fn decode(self) -> Result<FactorChallenge, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "factor_challenges",
            name: &name,
        };
        Ok(FactorChallenge {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            amr: r.strings("amr", &self.amr)?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        })
    }
}

/// A `known_devices` row as stored.
#[derive(Debug, Clone)]
struct DeviceRow {
    tenant_id: String,
    user_id: String,
    /// 32 bytes.
    secret_hash: Vec<u8>,
    user_agent: Option<String>,
    first_seen_at: OffsetDateTime,
    last_seen_at: OffsetDateTime,
    trusted_until: Option<OffsetDateTime>,
}

impl DeviceRow {
    fn decode(self) -> Result<KnownDevice, StoreError> {
        let name = hash_name(&self.secret_hash);
        let r = Record {
            table: "known_devices",
            name: &name,
        };
        Ok(KnownDevice {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            secret_hash: r.hash("secret_hash", &self.secret_hash)?,
            user_agent: self.user_agent,
            first_seen_at: self.first_seen_at,
            last_seen_at: self.last_seen_at,
            trusted_until: self.trusted_until,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[
            (INSERT_FACTOR, 1),
            (DELETE_UNCONFIRMED, 0),
            (SELECT_LIVE_CHALLENGE, 0),
            (INSERT_CHALLENGE, 1),
            (CONSUME_CHALLENGE, 0),
        ]);
    }

    #[test]
    fn factor_rows_decode_and_name_each_bad_column() {
        let factor = FactorRow {
            id: "mfa_01jd0000000000000000000000".into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            kind: "totp".into(),
            label: "Phone".into(),
            sealed_secret: vec![7; 32],
            confirmed_at: None,
            last_used_step: Some(1),
            created_at: AT,
        };
        check(
            factor,
            FactorRow::decode,
            &[
                ("second_factors.id", |r| r.id = USER.into()),
                ("second_factors.kind", |r| r.kind = "sms".into()),
                ("second_factors.user_id", |r| r.user_id = TENANT.into()),
            ],
        );
        let challenge = ChallengeRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            amr: r#"["pwd"]"#.into(),
            created_at: AT,
            expires_at: AT,
            used_at: None,
        };
        check(
            challenge,
            ChallengeRow::decode,
            &[
                ("factor_challenges.hash", |r| r.hash = vec![7; 31]),
                ("factor_challenges.amr", |r| r.amr = "{}".into()),
                ("factor_challenges.tenant_id", |r| r.tenant_id = USER.into()),
            ],
        );
        let device = DeviceRow {
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            secret_hash: vec![7; 32],
            user_agent: Some("Mozilla/5.0".into()),
            first_seen_at: AT,
            last_seen_at: AT,
            trusted_until: None,
        };
        check(
            device,
            DeviceRow::decode,
            &[
                ("known_devices.secret_hash", |r| r.secret_hash = vec![7; 33]),
                ("known_devices.tenant_id", |r| r.tenant_id = USER.into()),
                ("known_devices.user_id", |r| r.user_id = TENANT.into()),
            ],
        );
    }
}
