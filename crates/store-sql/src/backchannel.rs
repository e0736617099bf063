//! Backchannel authentication requests (OpenID CIBA): their statements, their row form
//! ([`BackchannelRow`]) and the `BackchannelReads`/`BackchannelWrites` ports for [`SqlTx`].
//!
//! The same single-statement rules as device authorizations (`crate::device`): a decision is one
//! conditional `UPDATE` on the person, the status and the expiry; a poll is run by
//! `crate::polled`. Times are compared on the `_ns` twins on SQLite, on `timestamptz` on PostgreSQL.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::polled::{self, PollStatements};
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt, encode_scopes};
use async_trait::async_trait;
use svc_domain::{
    AgentId, BackchannelPoll, BackchannelRequest, BackchannelRequestId, BackchannelRequester,
    ClientId, DelegatedUse, DelegationId, DeviceStatus, SecretHash, TenantId, UserId,
};
use svc_store::{BackchannelReads, BackchannelWrites, StoreError};
use time::OffsetDateTime;

macro_rules! columns {
    () => {
        "id, hash, tenant_id, client_id, user_id, scope, binding_message, status, \
         interval_secs, last_polled_at, created_at, expires_at, authorization_details, \
         delegation_id, resource"
    };
}

const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO backchannel_requests (id, hash, tenant_id, client_id, user_id, scope, \
         binding_message, status, interval_secs, last_polled_at, last_polled_at_ns, created_at, \
         expires_at, expires_at_ns, authorization_details, delegation_id, resource) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    postgres: "INSERT INTO backchannel_requests (id, hash, tenant_id, client_id, user_id, scope, \
         binding_message, status, interval_secs, last_polled_at, created_at, expires_at, \
         authorization_details, delegation_id, resource) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
};
const PENDING: PerDialect = PerDialect {
    sqlite: concat!(
        "SELECT ",
        columns!(),
        " FROM backchannel_requests WHERE tenant_id = $1 AND user_id = $2 \
         AND status = 'pending' AND expires_at_ns > $3 ORDER BY created_at, id"
    ),
    postgres: concat!(
        "SELECT ",
        columns!(),
        " FROM backchannel_requests WHERE tenant_id = $1 AND user_id = $2 \
         AND status = 'pending' AND expires_at > $3 ORDER BY created_at, id"
    ),
};
const DECIDE: PerDialect = PerDialect {
    sqlite: concat!(
        "UPDATE backchannel_requests SET status = $4 \
         WHERE tenant_id = $1 AND id = $2 AND user_id = $3 AND status = 'pending' \
         AND expires_at_ns > $5 RETURNING ",
        columns!()
    ),
    postgres: concat!(
        "UPDATE backchannel_requests SET status = $4 \
         WHERE tenant_id = $1 AND id = $2 AND user_id = $3 AND status = 'pending' \
         AND expires_at > $5 RETURNING ",
        columns!()
    ),
};
const TAKE_APPROVED: &str = concat!(
    "DELETE FROM backchannel_requests WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 \
     AND status = 'approved' AND delegation_id IS NOT NULL RETURNING ",
    columns!()
);
const POLL: PollStatements = PollStatements {
    on_time: PerDialect {
        sqlite: concat!(
            "UPDATE backchannel_requests SET last_polled_at = $4, last_polled_at_ns = $5 \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 AND (last_polled_at_ns IS NULL \
         OR last_polled_at_ns + interval_secs * 1000000000 <= $6) RETURNING ",
            columns!()
        ),
        postgres: concat!(
            "UPDATE backchannel_requests SET last_polled_at = $4 \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 AND (last_polled_at IS NULL \
         OR last_polled_at + interval_secs * interval '1 second' <= $5) RETURNING ",
            columns!()
        ),
    },
    too_soon: PerDialect {
        sqlite: concat!(
            "UPDATE backchannel_requests SET last_polled_at = $4, last_polled_at_ns = $5, \
         interval_secs = min(interval_secs + 5, 3600) \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 RETURNING ",
            columns!()
        ),
        postgres: concat!(
            "UPDATE backchannel_requests SET last_polled_at = $4, \
         interval_secs = least(interval_secs + 5, 3600) \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 RETURNING ",
            columns!()
        ),
    },
};

#[async_trait]
impl<D: Dialect> BackchannelReads for SqlTx<D> {
    async fn pending_backchannel_requests(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<BackchannelRequest>, StoreError> {
        Stmt::new(PENDING.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind_instant(now)
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> BackchannelWrites for SqlTx<D> {
    async fn insert_backchannel_request(
        &mut self,
        r: &BackchannelRequest,
    ) -> Result<(), StoreError> {
        let delegated = match &r.requester {
            BackchannelRequester::Application(_) => None,
            BackchannelRequester::Agent(using) => Some(using),
        };
        Stmt::new(INSERT.pick::<D>())
            .bind(r.id.as_str())
            .bind(r.hash.as_bytes())
            .bind(r.tenant_id.as_str())
            .bind(r.requester.id())
            .bind(r.user_id.as_ref().map(UserId::as_str))
            .bind_json(encode_scopes(&r.scope)?)
            .bind(r.binding_message.as_deref())
            .bind(r.status.as_str())
            .bind(i64::from(r.interval_secs))
            .bind(r.last_polled_at)
            .bind_twin(r.last_polled_at)
            .bind(r.created_at)
            .bind(r.expires_at)
            .bind_twin(r.expires_at)
            .bind(r.authorization_details.as_ref().map(|d| d.to_json()))
            .bind(delegated.map(|u| u.delegation_id.as_str()))
            .bind(delegated.map(|u| u.resource.as_str()))
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "backchannel_requests_tenant_id_fkey"))?;
        Ok(())
    }

    async fn decide_backchannel_request(
        &mut self,
        tenant: &TenantId,
        id: &BackchannelRequestId,
        user: &UserId,
        decision: DeviceStatus,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelRequest>, StoreError> {
        if decision == DeviceStatus::Pending {
            return Err(StoreError::Corrupt(
                "a backchannel request is decided as approved or denied".into(),
            ));
        }
        Stmt::new(DECIDE.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(user.as_str())
            .bind(decision.as_str())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn poll_backchannel_request(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        requester: &str,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelPoll>, StoreError> {
        let polled = polled::poll::<D, _>(
            self.conn(),
            &POLL,
            (tenant, hash, requester),
            now,
            decode::<D>,
        )
        .await?;
        Ok(polled.map(|(request, too_fast)| BackchannelPoll { request, too_fast }))
    }

    async fn take_approved_agent_request(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        agent: &AgentId,
    ) -> Result<Option<BackchannelRequest>, StoreError> {
        Stmt::new(TAKE_APPROVED)
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(agent.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<BackchannelRequest, StoreError> {
    let c = Columns::<D>::new(row, "backchannel_requests");
    BackchannelRow {
        id: c.get("id")?,
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_id: c.get("user_id")?,
        scope: c.json("scope")?,
        binding_message: c.get("binding_message")?,
        status: c.get("status")?,
        interval_secs: c.get("interval_secs")?,
        last_polled_at: c.get("last_polled_at")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        authorization_details: c.get("authorization_details")?,
        delegation_id: c.get("delegation_id")?,
        resource: c.get("resource")?,
    }
    .decode()
}

/// A `backchannel_requests` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct BackchannelRow {
    /// `id`.
    pub id: String,
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `user_id` (NULL for a decoy).
    pub user_id: Option<String>,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `binding_message`.
    pub binding_message: Option<String>,
    /// `status`.
    pub status: String,
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
    /// `delegation_id` (an agent's request only).
    pub delegation_id: Option<String>,
    /// `resource` (an agent's request only).
    pub resource: Option<String>,
}

impl BackchannelRow {
    /// The request this row stores.
    pub(crate) fn decode(self) -> Result<BackchannelRequest, StoreError> {
        let r = Record {
            table: "backchannel_requests",
            name: &self.id,
        };
        Ok(BackchannelRequest {
            id: r.parse("id", &self.id, BackchannelRequestId::parse)?,
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            requester: match (self.delegation_id, self.resource) {
                (None, None) => BackchannelRequester::Application(r.parse(
                    "client_id",
                    &self.client_id,
                    ClientId::parse,
                )?),
                (Some(delegation), Some(resource)) => BackchannelRequester::Agent(DelegatedUse {
                    agent_id: r.parse("client_id", &self.client_id, AgentId::parse)?,
                    delegation_id: r.parse("delegation_id", &delegation, DelegationId::parse)?,
                    resource,
                }),
                (delegation, _) => {
                    return Err(r.corrupt(
                        "resource",
                        &delegation.as_deref().unwrap_or("NULL"),
                        &"delegation_id and resource come together",
                    ));
                }
            },
            user_id: r.parse_opt("user_id", self.user_id.as_deref(), UserId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            status: r.parse("status", &self.status, |s| {
                DeviceStatus::parse(s).ok_or("not a backchannel request status")
            })?,
            interval_secs: u32::try_from(self.interval_secs)
                .map_err(|e| r.corrupt("interval_secs", &self.interval_secs, &e))?,
            binding_message: self.binding_message,
            authorization_details: r.details(
                "authorization_details",
                self.authorization_details.as_deref(),
            )?,
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
        let row = BackchannelRow {
            id: "cib_01jb7q3m2x8v6n4k0t5r9c1d2e".into(),
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            user_id: Some(USER.into()),
            scope: r#"["openid"]"#.into(),
            binding_message: Some("W4SCT".into()),
            status: "pending".into(),
            interval_secs: 5,
            last_polled_at: None,
            created_at: AT,
            expires_at: AT,
            authorization_details: None,
            delegation_id: None,
            resource: None,
        };
        check(
            row,
            BackchannelRow::decode,
            &[
                ("backchannel_requests.id", |r| r.id = USER.into()),
                ("backchannel_requests.hash", |r| r.hash = vec![1; 3]),
                ("backchannel_requests.status", |r| r.status = "done".into()),
                ("backchannel_requests.user_id", |r| {
                    r.user_id = Some(CLIENT.into())
                }),
                ("backchannel_requests.interval_secs", |r| {
                    r.interval_secs = -5
                }),
                ("backchannel_requests.authorization_details", |r| {
                    r.authorization_details = Some("{}".into())
                }),
                ("backchannel_requests.resource", |r| {
                    r.delegation_id = Some("dlg_01jd0000000000000000000000".into())
                }),
                ("backchannel_requests.client_id", |r| {
                    r.delegation_id = Some("dlg_01jd0000000000000000000000".into());
                    r.resource = Some("https://api.example.com".into());
                }),
            ],
        );
    }
}
