//! Device authorizations (RFC 8628): their statements, their row form
//! ([`DeviceAuthorizationRow`]) and the `DeviceReads`/`DeviceWrites` ports for [`SqlTx`].
//!
//! A decision is one conditional `UPDATE ... WHERE status = 'pending'`, so it happens once. A
//! poll is at most two statements, run by `crate::polled` (shared with backchannel requests).
//! Times are compared on the `_ns` twins on SQLite and on the `timestamptz` columns on
//! PostgreSQL.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::polled::{self, PollStatements};
use crate::record::{Record, hash_name};
use crate::{Columns, Row, SqlTx, Stmt, encode_scopes};
use async_trait::async_trait;
use svc_domain::{
    ClientId, DeviceAuthorization, DevicePoll, DeviceStatus, SecretHash, TenantId, UserId,
};
use svc_store::{DeviceReads, DeviceWrites, StoreError};
use time::OffsetDateTime;

/// What SQLite calls a violation of the user-code uniqueness, renamed to PostgreSQL's name.
const USER_CODE_KEY_BY_COLUMNS: &str = "device_authorizations_tenant_id_user_code_key";
const USER_CODE_KEY: &str = "device_authorizations_user_code_key";

macro_rules! columns {
    () => {
        "hash, tenant_id, client_id, user_code, scope, status, user_id, interval_secs, \
         last_polled_at, created_at, expires_at, authorization_details"
    };
}

const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO device_authorizations (hash, tenant_id, client_id, user_code, scope, \
         status, user_id, interval_secs, last_polled_at, last_polled_at_ns, created_at, \
         expires_at, expires_at_ns, authorization_details) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    postgres: "INSERT INTO device_authorizations (hash, tenant_id, client_id, user_code, scope, \
         status, user_id, interval_secs, last_polled_at, created_at, expires_at, \
         authorization_details) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
};
const PENDING: PerDialect = PerDialect {
    sqlite: concat!(
        "SELECT ",
        columns!(),
        " FROM device_authorizations WHERE tenant_id = $1 AND user_code = $2 \
         AND status = 'pending' AND expires_at_ns > $3"
    ),
    postgres: concat!(
        "SELECT ",
        columns!(),
        " FROM device_authorizations WHERE tenant_id = $1 AND user_code = $2 \
         AND status = 'pending' AND expires_at > $3"
    ),
};
const DECIDE: PerDialect = PerDialect {
    sqlite: concat!(
        "UPDATE device_authorizations SET status = $3, user_id = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND status = 'pending' AND expires_at_ns > $5 \
         RETURNING ",
        columns!()
    ),
    postgres: concat!(
        "UPDATE device_authorizations SET status = $3, user_id = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND status = 'pending' AND expires_at > $5 \
         RETURNING ",
        columns!()
    ),
};
const POLL: PollStatements = PollStatements {
    on_time: PerDialect {
        sqlite: concat!(
            "UPDATE device_authorizations SET last_polled_at = $4, last_polled_at_ns = $5 \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 AND (last_polled_at_ns IS NULL \
         OR last_polled_at_ns + interval_secs * 1000000000 <= $6) RETURNING ",
            columns!()
        ),
        postgres: concat!(
            "UPDATE device_authorizations SET last_polled_at = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 AND (last_polled_at IS NULL \
         OR last_polled_at + interval_secs * interval '1 second' <= $5) RETURNING ",
            columns!()
        ),
    },
    // RFC 8628 §3.5: "the interval MUST be increased by 5 seconds for this and all subsequent
    // requests"; capped where the table's check allows.
    too_soon: PerDialect {
        sqlite: concat!(
            "UPDATE device_authorizations SET last_polled_at = $4, last_polled_at_ns = $5, \
         interval_secs = min(interval_secs + 5, 3600) \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 RETURNING ",
            columns!()
        ),
        postgres: concat!(
            "UPDATE device_authorizations SET last_polled_at = $4, \
         interval_secs = least(interval_secs + 5, 3600) \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 RETURNING ",
            columns!()
        ),
    },
};

#[async_trait]
impl<D: Dialect> DeviceReads for SqlTx<D> {
    async fn pending_device_authorization(
        &mut self,
        tenant: &TenantId,
        user_code: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<DeviceAuthorization>, StoreError> {
        Stmt::new(PENDING.pick::<D>())
            .bind(tenant.as_str())
            .bind(user_code.as_bytes())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> DeviceWrites for SqlTx<D> {
    async fn insert_device_authorization(
        &mut self,
        a: &DeviceAuthorization,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT.pick::<D>())
            .bind(a.hash.as_bytes())
            .bind(a.tenant_id.as_str())
            .bind(a.client_id.as_str())
            .bind(a.user_code.as_bytes())
            .bind_json(encode_scopes(&a.scope)?)
            .bind(a.status.as_str())
            .bind(a.user_id.as_ref().map(UserId::as_str))
            .bind(i64::from(a.interval_secs))
            .bind(a.last_polled_at)
            .bind_twin(a.last_polled_at)
            .bind(a.created_at)
            .bind(a.expires_at)
            .bind_twin(a.expires_at)
            .bind(a.authorization_details.as_ref().map(|d| d.to_json()))
            .execute::<D>(self.conn())
            .await
            .map_err(|e| {
                let e = naming::rename(e, USER_CODE_KEY_BY_COLUMNS, USER_CODE_KEY);
                naming::foreign_key(e, "device_authorizations_tenant_id_fkey")
            })?;
        Ok(())
    }

    async fn decide_device_authorization(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        decision: DeviceStatus,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Option<DeviceAuthorization>, StoreError> {
        if decision == DeviceStatus::Pending {
            return Err(StoreError::Corrupt(
                "a device authorization is decided as approved or denied".into(),
            ));
        }
        Stmt::new(DECIDE.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(decision.as_str())
            .bind(user.as_str())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn poll_device_authorization(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        client: &ClientId,
        now: OffsetDateTime,
    ) -> Result<Option<DevicePoll>, StoreError> {
        let polled = polled::poll::<D, _>(
            self.conn(),
            &POLL,
            (tenant, hash, client.as_str()),
            now,
            decode::<D>,
        )
        .await?;
        Ok(polled.map(|(authorization, too_fast)| DevicePoll {
            authorization,
            too_fast,
        }))
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<DeviceAuthorization, StoreError> {
    let c = Columns::<D>::new(row, "device_authorizations");
    DeviceAuthorizationRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_code: c.get("user_code")?,
        scope: c.json("scope")?,
        status: c.get("status")?,
        user_id: c.get("user_id")?,
        interval_secs: c.get("interval_secs")?,
        last_polled_at: c.get("last_polled_at")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        authorization_details: c.get("authorization_details")?,
    }
    .decode()
}

/// A `device_authorizations` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct DeviceAuthorizationRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `user_code` (32 bytes).
    pub user_code: Vec<u8>,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `status`.
    pub status: String,
    /// `user_id`.
    pub user_id: Option<String>,
    /// `interval_secs`.
    pub interval_secs: i64,
    /// `last_polled_at`.
    pub last_polled_at: Option<OffsetDateTime>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `authorization_details` (JSON text).
    pub authorization_details: Option<String>,
}

impl DeviceAuthorizationRow {
    /// The device authorization this row stores.
    pub(crate) fn decode(self) -> Result<DeviceAuthorization, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "device_authorizations",
            name: &name,
        };
        Ok(DeviceAuthorization {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            user_code: r.hash("user_code", &self.user_code)?,
            scope: r.scopes("scope", &self.scope)?,
            authorization_details: r.details(
                "authorization_details",
                self.authorization_details.as_deref(),
            )?,
            status: r.parse("status", &self.status, |s| {
                DeviceStatus::parse(s).ok_or("not a device authorization status")
            })?,
            user_id: r.parse_opt("user_id", self.user_id.as_deref(), UserId::parse)?,
            interval_secs: u32::try_from(self.interval_secs)
                .map_err(|e| r.corrupt("interval_secs", &self.interval_secs, &e))?,
            last_polled_at: self.last_polled_at,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, CLIENT, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[
            (INSERT, 2),
            (PENDING, 0),
            (DECIDE, 0),
            (POLL.on_time, 1),
            (POLL.too_soon, 1),
        ]);
    }

    #[test]
    fn a_row_decodes_and_each_bad_column_is_named() {
        let row = DeviceAuthorizationRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            user_code: vec![8; 32],
            scope: r#"["openid"]"#.into(),
            status: "approved".into(),
            user_id: Some(USER.into()),
            interval_secs: 5,
            last_polled_at: None,
            created_at: AT,
            expires_at: AT,
            authorization_details: None,
        };
        check(
            row,
            DeviceAuthorizationRow::decode,
            &[
                ("device_authorizations.hash", |r| r.hash = vec![1; 3]),
                ("device_authorizations.user_code", |r| r.user_code = vec![]),
                ("device_authorizations.status", |r| {
                    r.status = "redeemed".into()
                }),
                ("device_authorizations.user_id", |r| {
                    r.user_id = Some(CLIENT.into())
                }),
                ("device_authorizations.interval_secs", |r| {
                    r.interval_secs = -1
                }),
                ("device_authorizations.client_id", |r| {
                    r.client_id = USER.into()
                }),
                ("device_authorizations.authorization_details", |r| {
                    r.authorization_details = Some("[1]".into())
                }),
            ],
        );
    }
}
