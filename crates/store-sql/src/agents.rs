//! Registered agents: their statements, their row form ([`AgentRow`]) and the
//! `AgentReads`/`AgentWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant, so another tenant's agent reads as absent and no write
//! reaches it. An update is conditional on the revision read (`updated_at`, compared for
//! equality, as for organizations). The key set and metadata are stored as the JSON text
//! serde_json wrote (text on both backends); the scope and resource lists as JSON arrays of
//! strings (text on SQLite, `jsonb` on PostgreSQL). Listings are keyset pages over ids.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::{Record, encode_scopes, encode_strings};
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{Agent, AgentId, AgentOwner, AgentStatus, TenantId};
use svc_store::{AgentReads, AgentWrites, Order, StoreError, UpdateOutcome};
use time::OffsetDateTime;

/// The foreign key to `tenants`, the only one of `agents` (SQLite reports a failed foreign key
/// without naming it).
const TENANT_FKEY: &str = "agents_tenant_id_fkey";

macro_rules! select_agents {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, name, owner_id, jwks, allowed_scopes, allowed_resources, \
             metadata, status, created_at, updated_at, revoked_at, authorization_details_types \
             FROM agents ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_agents!("WHERE tenant_id = $1 AND id = $2");
// `$2` is the cursor or the bound of its direction (`sorted::cursor`): a range scan of the key.
const LIST: Sorted = Sorted {
    asc: select_agents!("WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3"),
    desc: select_agents!("WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"),
};
const COUNT: &str = "SELECT COUNT(*) AS agents FROM agents WHERE tenant_id = $1";
const OWNED_BY: &str =
    select_agents!("WHERE tenant_id = $1 AND owner_id = $2 ORDER BY id LIMIT $3");
const INSERT: &str = "INSERT INTO agents (id, tenant_id, name, owner_id, jwks, allowed_scopes, \
     allowed_resources, metadata, status, created_at, updated_at, revoked_at, \
     authorization_details_types) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
// Never id, tenant_id, owner_id or created_at; only at the revision read ($11).
const UPDATE: &str = "UPDATE agents SET name = $3, jwks = $4, allowed_scopes = $5, \
     allowed_resources = $6, metadata = $7, status = $8, updated_at = $9, revoked_at = $10, \
     authorization_details_types = $12 \
     WHERE tenant_id = $1 AND id = $2 AND updated_at = $11";
/// Tells a stale revision from a missing agent after a conditional update changed nothing.
const EXISTS: &str = "SELECT id FROM agents WHERE tenant_id = $1 AND id = $2";

#[async_trait]
impl<D: Dialect> AgentReads for SqlTx<D> {
    async fn agent(
        &mut self,
        tenant: &TenantId,
        id: &AgentId,
    ) -> Result<Option<Agent>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn list_agents(
        &mut self,
        tenant: &TenantId,
        after: Option<&AgentId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Agent>, StoreError> {
        Stmt::new(LIST.pick(order))
            .bind(tenant.as_str())
            .bind(sorted::cursor(after.map(AgentId::as_str), order))
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn agents_owned_by(
        &mut self,
        tenant: &TenantId,
        owner: &AgentOwner,
        limit: u32,
    ) -> Result<Vec<Agent>, StoreError> {
        Stmt::new(OWNED_BY)
            .bind(tenant.as_str())
            .bind(owner.as_str())
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn count_agents(&mut self, tenant: &TenantId) -> Result<u64, StoreError> {
        let row = Stmt::new(COUNT)
            .bind(tenant.as_str())
            .fetch_one::<D>(self.conn())
            .await?;
        let agents: i64 = Columns::<D>::new(&row, "agents").get("agents")?;
        u64::try_from(agents)
            .map_err(|_| StoreError::Corrupt(format!("agents of tenant {tenant}: {agents}")))
    }
}

#[async_trait]
impl<D: Dialect> AgentWrites for SqlTx<D> {
    async fn insert_agent(&mut self, agent: &Agent) -> Result<(), StoreError> {
        let lists = Lists::of(agent)?;
        Stmt::new(INSERT)
            .bind(agent.id.as_str())
            .bind(agent.tenant_id.as_str())
            .bind(agent.name.as_str())
            .bind(agent.owner.as_str())
            .bind(agent.jwks.as_str())
            .bind_json(lists.scopes)
            .bind_json(lists.resources)
            .bind(lists.metadata)
            .bind(agent.status.as_str())
            .bind(agent.created_at)
            .bind(agent.updated_at)
            .bind(agent.revoked_at)
            .bind_json(lists.detail_types)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, TENANT_FKEY))?;
        Ok(())
    }

    /// One conditional `UPDATE` (see [`UPDATE`]); when no row matched, a read tells a missing
    /// agent from one at another revision.
    async fn update_agent_if_unchanged(
        &mut self,
        agent: &Agent,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let lists = Lists::of(agent)?;
        let changed = Stmt::new(UPDATE)
            .bind(agent.tenant_id.as_str())
            .bind(agent.id.as_str())
            .bind(agent.name.as_str())
            .bind(agent.jwks.as_str())
            .bind_json(lists.scopes)
            .bind_json(lists.resources)
            .bind(lists.metadata)
            .bind(agent.status.as_str())
            .bind(agent.updated_at)
            .bind(agent.revoked_at)
            .bind(read_at)
            .bind_json(lists.detail_types)
            .execute::<D>(self.conn())
            .await?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(EXISTS)
            .bind(agent.tenant_id.as_str())
            .bind(agent.id.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }
}

/// The JSON columns of an agent, as stored.
struct Lists {
    scopes: String,
    resources: String,
    metadata: String,
    detail_types: String,
}

impl Lists {
    fn of(agent: &Agent) -> Result<Self, StoreError> {
        Ok(Self {
            scopes: encode_scopes(&agent.allowed_scopes)?,
            resources: encode_strings(agent.allowed_resources.iter().map(String::as_str))?,
            metadata: serde_json::to_string(&agent.metadata)
                .map_err(|e| StoreError::Corrupt(format!("cannot encode a JSON object: {e}")))?,
            detail_types: serde_json::to_string(&agent.authorization_details_types)
                .map_err(|e| StoreError::Corrupt(format!("cannot encode detail types: {e}")))?,
        })
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Agent, StoreError> {
    let c = Columns::<D>::new(row, "agents");
    AgentRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        name: c.get("name")?,
        owner_id: c.get("owner_id")?,
        jwks: c.get("jwks")?,
        allowed_scopes: c.json("allowed_scopes")?,
        allowed_resources: c.json("allowed_resources")?,
        metadata: c.get("metadata")?,
        status: c.get("status")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
        revoked_at: c.get("revoked_at")?,
        detail_types: c.json("authorization_details_types")?,
    }
    .decode()
}

/// An `agents` row as stored.
#[derive(Debug, Clone)]
struct AgentRow {
    id: String,
    tenant_id: String,
    name: String,
    owner_id: String,
    /// JWK set JSON text.
    jwks: String,
    /// JSON array text of scopes.
    allowed_scopes: String,
    /// JSON array text of API identifiers.
    allowed_resources: String,
    /// JSON object text.
    metadata: String,
    status: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    revoked_at: Option<OffsetDateTime>,
    /// JSON array text of detail types.
    detail_types: String,
}

impl AgentRow {
    fn decode(self) -> Result<Agent, StoreError> {
        let r = Record {
            table: "agents",
            name: &self.id,
        };
        let jwks_is_object =
            serde_json::from_str::<serde_json::Value>(&self.jwks).is_ok_and(|v| v.is_object());
        if !jwks_is_object {
            return Err(r.corrupt(
                "jwks",
                &format_args!("({} bytes)", self.jwks.len()),
                &"not a JSON object",
            ));
        }
        Ok(Agent {
            id: r.parse("id", &self.id, AgentId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            name: self.name,
            owner: r.parse("owner_id", &self.owner_id, AgentOwner::parse)?,
            allowed_scopes: r.scopes("allowed_scopes", &self.allowed_scopes)?,
            allowed_resources: r.strings("allowed_resources", &self.allowed_resources)?,
            authorization_details_types: serde_json::from_str(&self.detail_types).map_err(|e| {
                r.corrupt(
                    "authorization_details_types",
                    &"(JSON)",
                    &format_args!("not detail types: {e}"),
                )
            })?,
            // Named by its length: the tenant's object may be long.
            metadata: serde_json::from_str(&self.metadata).map_err(|e| {
                r.corrupt(
                    "metadata",
                    &format_args!("({} bytes)", self.metadata.len()),
                    &format_args!("not a JSON object: {e}"),
                )
            })?,
            status: r.parse("status", &self.status, |s| {
                AgentStatus::parse(s).ok_or("unknown status")
            })?,
            jwks: self.jwks,
            created_at: self.created_at,
            updated_at: self.updated_at,
            revoked_at: self.revoked_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, check};

    const AGENT: &str = "agt_01jd0000000000000000000000";

    fn row() -> AgentRow {
        AgentRow {
            id: AGENT.into(),
            tenant_id: TENANT.into(),
            name: "Travel \"booker\" ü".into(),
            owner_id: USER.into(),
            jwks: r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#
                .into(),
            allowed_scopes: r#"["orders:read","tools:search"]"#.into(),
            allowed_resources: r#"["https://mcp.example.com"]"#.into(),
            metadata: r#"{"model":"x","limits":{"daily":10}}"#.into(),
            status: "revoked".into(),
            created_at: AT,
            updated_at: AT,
            revoked_at: Some(AT),
            detail_types: "[]".into(),
        }
    }

    #[test]
    fn agent_rows_decode_and_name_each_bad_column() {
        let decoded = row().decode().unwrap();
        assert_eq!(decoded.status, AgentStatus::Revoked);
        assert_eq!(decoded.owner.as_str(), USER);
        assert!(decoded.allowed_scopes.contains("tools:search"));
        assert_eq!(decoded.allowed_resources, ["https://mcp.example.com"]);
        assert_eq!(decoded.metadata["limits"]["daily"], 10);
        check(
            row(),
            AgentRow::decode,
            &[
                ("agents.id", |r| r.id = USER.into()),
                ("agents.tenant_id", |r| r.tenant_id = AGENT.into()),
                ("agents.owner_id", |r| r.owner_id = TENANT.into()),
                ("agents.jwks", |r| r.jwks = "[]".into()),
                ("agents.allowed_scopes", |r| r.allowed_scopes = "{}".into()),
                ("agents.allowed_scopes", |r| {
                    r.allowed_scopes = r#"["bad scope"]"#.into();
                }),
                ("agents.allowed_resources", |r| {
                    r.allowed_resources = "[1]".into();
                }),
                ("agents.metadata", |r| r.metadata = "[]".into()),
                ("agents.authorization_details_types", |r| {
                    r.detail_types = "{}".into();
                }),
                ("agents.status", |r| r.status = "deleted".into()),
            ],
        );
    }
}
