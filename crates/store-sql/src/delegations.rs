//! Delegations: their statements, their row form ([`DelegationRow`]) and the
//! `DelegationReads`/`DelegationWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant, so another tenant's delegation reads as absent and no
//! write reaches it. The scope and resource lists are JSON arrays of strings (text on SQLite,
//! `jsonb` on PostgreSQL). Revocation is one conditional `UPDATE` that also names the person,
//! so nobody revokes another person's delegation and a second revocation changes nothing.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::{Record, encode_scopes, encode_strings};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{AgentId, Delegation, DelegationId, TenantId, UserId};
use svc_store::{DelegationReads, DelegationWrites, MAX_DELEGATIONS_READ, StoreError};
use time::OffsetDateTime;

/// The foreign key to `tenants`, the only one of `delegations`.
const TENANT_FKEY: &str = "delegations_tenant_id_fkey";

macro_rules! select_delegations {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, user_id, agent_id, scopes, resources, expires_at, created_at, \
             revoked_at, per_use_approval, authorization_details FROM delegations ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_delegations!("WHERE tenant_id = $1 AND id = $2");
const OF_USER: &str =
    select_delegations!("WHERE tenant_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT $3");
const OF_USER_TO_AGENT: &str = select_delegations!(
    "WHERE tenant_id = $1 AND user_id = $2 AND agent_id = $3 ORDER BY id DESC LIMIT $4"
);
const OF_AGENT: &str =
    select_delegations!("WHERE tenant_id = $1 AND agent_id = $2 ORDER BY id DESC LIMIT $3");
const INSERT: &str = "INSERT INTO delegations (id, tenant_id, user_id, agent_id, scopes, \
     resources, expires_at, created_at, revoked_at, per_use_approval, authorization_details) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
const REVOKE: &str = "UPDATE delegations SET revoked_at = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND revoked_at IS NULL";

#[async_trait]
impl<D: Dialect> DelegationReads for SqlTx<D> {
    async fn delegation(
        &mut self,
        tenant: &TenantId,
        id: &DelegationId,
    ) -> Result<Option<Delegation>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn delegations_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        agent: Option<&AgentId>,
    ) -> Result<Vec<Delegation>, StoreError> {
        let limit = i64::from(MAX_DELEGATIONS_READ);
        let stmt = match agent {
            Some(agent) => Stmt::new(OF_USER_TO_AGENT)
                .bind(tenant.as_str())
                .bind(user.as_str())
                .bind(agent.as_str())
                .bind(limit),
            None => Stmt::new(OF_USER)
                .bind(tenant.as_str())
                .bind(user.as_str())
                .bind(limit),
        };
        stmt.fetch_all_with::<D, _>(self.conn(), decode::<D>).await
    }

    async fn delegations_of_agent(
        &mut self,
        tenant: &TenantId,
        agent: &AgentId,
    ) -> Result<Vec<Delegation>, StoreError> {
        Stmt::new(OF_AGENT)
            .bind(tenant.as_str())
            .bind(agent.as_str())
            .bind(i64::from(MAX_DELEGATIONS_READ))
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> DelegationWrites for SqlTx<D> {
    async fn insert_delegation(&mut self, delegation: &Delegation) -> Result<(), StoreError> {
        Stmt::new(INSERT)
            .bind(delegation.id.as_str())
            .bind(delegation.tenant_id.as_str())
            .bind(delegation.user_id.as_str())
            .bind(delegation.agent_id.as_str())
            .bind_json(encode_scopes(&delegation.scopes)?)
            .bind_json(encode_strings(
                delegation.resources.iter().map(String::as_str),
            )?)
            .bind(delegation.expires_at)
            .bind(delegation.created_at)
            .bind(delegation.revoked_at)
            .bind(delegation.per_use_approval)
            .bind(
                delegation
                    .authorization_details
                    .as_ref()
                    .map(|d| d.to_json()),
            )
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, TENANT_FKEY))?;
        Ok(())
    }

    async fn revoke_delegation(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &DelegationId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(REVOKE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(id.as_str())
            .bind(at)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Delegation, StoreError> {
    let c = Columns::<D>::new(row, "delegations");
    DelegationRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        agent_id: c.get("agent_id")?,
        scopes: c.json("scopes")?,
        resources: c.json("resources")?,
        expires_at: c.get("expires_at")?,
        created_at: c.get("created_at")?,
        revoked_at: c.get("revoked_at")?,
        per_use_approval: c.get("per_use_approval")?,
        authorization_details: c.get("authorization_details")?,
    }
    .decode()
}

/// A `delegations` row as stored.
#[derive(Debug, Clone)]
struct DelegationRow {
    id: String,
    tenant_id: String,
    user_id: String,
    agent_id: String,
    /// JSON array text of scopes.
    scopes: String,
    /// JSON array text of API identifiers.
    resources: String,
    expires_at: OffsetDateTime,
    created_at: OffsetDateTime,
    revoked_at: Option<OffsetDateTime>,
    per_use_approval: bool,
    /// JSON text of the approved details.
    authorization_details: Option<String>,
}

impl DelegationRow {
    fn decode(self) -> Result<Delegation, StoreError> {
        let r = Record {
            table: "delegations",
            name: &self.id,
        };
        Ok(Delegation {
            id: r.parse("id", &self.id, DelegationId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            agent_id: r.parse("agent_id", &self.agent_id, AgentId::parse)?,
            scopes: r.scopes("scopes", &self.scopes)?,
            resources: r.strings("resources", &self.resources)?,
            expires_at: self.expires_at,
            created_at: self.created_at,
            revoked_at: self.revoked_at,
            per_use_approval: self.per_use_approval,
            authorization_details: r.details(
                "authorization_details",
                self.authorization_details.as_deref(),
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, check};

    const DELEGATION: &str = "dlg_01jd0000000000000000000000";
    const AGENT: &str = "agt_01jd0000000000000000000000";

    fn row() -> DelegationRow {
        DelegationRow {
            id: DELEGATION.into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            agent_id: AGENT.into(),
            scopes: r#"["bookings:read"]"#.into(),
            resources: r#"["https://api.example.com/bookings"]"#.into(),
            expires_at: AT,
            created_at: AT,
            revoked_at: None,
            per_use_approval: true,
            authorization_details: None,
        }
    }

    #[test]
    fn delegation_rows_decode_and_name_each_bad_column() {
        let decoded = row().decode().unwrap();
        assert!(decoded.scopes.contains("bookings:read"));
        assert_eq!(decoded.resources, ["https://api.example.com/bookings"]);
        assert!(decoded.per_use_approval);
        check(
            row(),
            DelegationRow::decode,
            &[
                ("delegations.id", |r| r.id = AGENT.into()),
                ("delegations.tenant_id", |r| r.tenant_id = USER.into()),
                ("delegations.user_id", |r| r.user_id = AGENT.into()),
                ("delegations.agent_id", |r| r.agent_id = USER.into()),
                ("delegations.scopes", |r| r.scopes = "{}".into()),
                ("delegations.resources", |r| r.resources = "[1]".into()),
                ("delegations.authorization_details", |r| {
                    r.authorization_details = Some("{}".into());
                }),
            ],
        );
    }
}
