//! API keys: the statements of a tenant's keys and the `ApiKeyReads` / `ApiKeyWrites` ports for
//! [`SqlTx`].
//!
//! A key is found by its keyed hash within its tenant, whatever its state (the caller decides
//! liveness, so unknown, revoked and expired keys take one path). Counting live keys compares
//! expiries on the `_ns` twin on SQLite and the `timestamptz` column on PostgreSQL; the scopes
//! are a JSON array of strings, like an application's. A key's reach is two columns, both empty
//! (management) or both set (`resource_id`, `subject`); the table's check keeps them together.
//!
//! A tenant's policy for its people's own keys is an upsert on its row (absent reads as the
//! default: nobody may); its APIs are a JSON array of resource ids.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, encode_scopes, encode_strings};
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    ApiKey, ApiKeyId, ApiKeyPolicy, ApiResourceId, KeyReach, KeySubject, Scope, ScopeSet,
    SecretHash, TenantId,
};
use svc_store::{ApiKeyReads, ApiKeyWrites, Order, StoreError};
use time::OffsetDateTime;

macro_rules! select_keys {
    ($tail:literal) => {
        concat!(
            "SELECT id, tenant_id, name, scopes, key_hash, created_by, created_at, expires_at, \
             last_used_at, revoked_at, rotated_from, resource_id, subject FROM api_keys ",
            $tail
        )
    };
}

const BY_HASH: &str = select_keys!("WHERE tenant_id = $1 AND key_hash = $2");
const BY_ID: &str = select_keys!("WHERE tenant_id = $1 AND id = $2");
const LIST: Sorted = Sorted {
    asc: select_keys!("WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3"),
    desc: select_keys!("WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"),
};
const COUNT_LIVE: PerDialect = PerDialect {
    sqlite: "SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL \
         AND (expires_at_ns IS NULL OR expires_at_ns > $2)",
    postgres: "SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL \
         AND (expires_at IS NULL OR expires_at > $2)",
};
const BY_SUBJECT: &str =
    select_keys!("WHERE tenant_id = $1 AND subject = $2 ORDER BY id DESC LIMIT $3");
const COUNT_LIVE_OF_SUBJECT: PerDialect = PerDialect {
    sqlite: "SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = $1 AND subject = $2 \
         AND revoked_at IS NULL AND (expires_at_ns IS NULL OR expires_at_ns > $3)",
    postgres: "SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = $1 AND subject = $2 \
         AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)",
};
const POLICY: &str = "SELECT self_service, resource_ids, max_per_person, max_lifetime_days, \
     agent_keys FROM api_key_policies WHERE tenant_id = $1";
const SET_POLICY: &str = "INSERT INTO api_key_policies (tenant_id, self_service, resource_ids, \
     max_per_person, max_lifetime_days, updated_at, agent_keys) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (tenant_id) DO UPDATE SET self_service = excluded.self_service, \
     resource_ids = excluded.resource_ids, max_per_person = excluded.max_per_person, \
     max_lifetime_days = excluded.max_lifetime_days, updated_at = excluded.updated_at, \
     agent_keys = excluded.agent_keys";
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO api_keys (id, tenant_id, name, scopes, key_hash, created_by, \
         created_at, expires_at, last_used_at, revoked_at, rotated_from, resource_id, subject, \
         expires_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    postgres: "INSERT INTO api_keys (id, tenant_id, name, scopes, key_hash, created_by, \
         created_at, expires_at, last_used_at, revoked_at, rotated_from, resource_id, subject) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
};
const REVOKE: &str = "UPDATE api_keys SET revoked_at = $3 \
     WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL";
const EXPIRE: PerDialect = PerDialect {
    sqlite: "UPDATE api_keys SET expires_at = $3, expires_at_ns = $4 \
         WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
    postgres: "UPDATE api_keys SET expires_at = $3 \
         WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
};
const TOUCH: &str = "UPDATE api_keys SET last_used_at = $3 WHERE tenant_id = $1 AND id = $2";

#[async_trait]
impl<D: Dialect> ApiKeyReads for SqlTx<D> {
    async fn api_key_by_hash(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<ApiKey>, StoreError> {
        Stmt::new(BY_HASH)
            .bind(tenant.as_str())
            .bind(hash.as_bytes().as_slice())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
    ) -> Result<Option<ApiKey>, StoreError> {
        Stmt::new(BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn api_keys(
        &mut self,
        tenant: &TenantId,
        after: Option<&ApiKeyId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<ApiKey>, StoreError> {
        Stmt::new(LIST.pick(order))
            .bind(tenant.as_str())
            .bind(sorted::cursor(after.map(ApiKeyId::as_str), order))
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn count_live_api_keys(
        &mut self,
        tenant: &TenantId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let row = Stmt::new(COUNT_LIVE.pick::<D>())
            .bind(tenant.as_str())
            .bind_instant(now)
            .fetch_one::<D>(self.conn())
            .await?;
        let n: i64 = Columns::<D>::new(&row, "api_keys").get("n")?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn subject_api_keys(
        &mut self,
        tenant: &TenantId,
        subject: &KeySubject,
        limit: u32,
    ) -> Result<Vec<ApiKey>, StoreError> {
        Stmt::new(BY_SUBJECT)
            .bind(tenant.as_str())
            .bind(subject.as_str())
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn count_live_subject_api_keys(
        &mut self,
        tenant: &TenantId,
        subject: &KeySubject,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        let row = Stmt::new(COUNT_LIVE_OF_SUBJECT.pick::<D>())
            .bind(tenant.as_str())
            .bind(subject.as_str())
            .bind_instant(now)
            .fetch_one::<D>(self.conn())
            .await?;
        let n: i64 = Columns::<D>::new(&row, "api_keys").get("n")?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn api_key_policy(&mut self, tenant: &TenantId) -> Result<ApiKeyPolicy, StoreError> {
        let stored = Stmt::new(POLICY)
            .bind(tenant.as_str())
            .fetch_optional_with::<D, _>(self.conn(), |row: &Row<D>| {
                decode_policy::<D>(row, tenant)
            })
            .await?;
        Ok(stored.unwrap_or_default())
    }
}

#[async_trait]
impl<D: Dialect> ApiKeyWrites for SqlTx<D> {
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), StoreError> {
        let (resource, subject) = match &key.reach {
            KeyReach::Management => (None, None),
            KeyReach::Api { resource, subject } => (Some(resource), Some(subject)),
        };
        Stmt::new(INSERT.pick::<D>())
            .bind(key.id.as_str())
            .bind(key.tenant_id.as_str())
            .bind(key.name.as_str())
            .bind(encode_scopes(&key.scopes)?)
            .bind(key.hash.as_bytes().as_slice())
            .bind(key.created_by.as_str())
            .bind(key.created_at)
            .bind(key.expires_at)
            .bind(key.last_used_at)
            .bind(key.revoked_at)
            .bind(key.rotated_from.as_ref().map(ApiKeyId::as_str))
            .bind(resource.map(ApiResourceId::as_str))
            .bind(subject.map(KeySubject::as_str))
            .bind_twin(key.expires_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "api_keys_tenant_id_fkey"))?;
        Ok(())
    }

    async fn revoke_api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(REVOKE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn expire_api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(EXPIRE.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(at)
            .bind_twin(at)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn touch_api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(TOUCH)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(at)
            .execute::<D>(self.conn())
            .await?;
        Ok(())
    }

    async fn set_api_key_policy(
        &mut self,
        tenant: &TenantId,
        policy: &ApiKeyPolicy,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(SET_POLICY)
            .bind(tenant.as_str())
            .bind(policy.self_service)
            .bind(encode_strings(
                policy.resources.iter().map(ApiResourceId::as_str),
            )?)
            .bind(i64::from(policy.max_per_person))
            .bind(i64::from(policy.max_lifetime_days))
            .bind(now)
            .bind(policy.agent_keys)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "api_key_policies_tenant_id_fkey"))?;
        Ok(())
    }
}

fn decode_policy<D: Dialect>(row: &Row<D>, tenant: &TenantId) -> Result<ApiKeyPolicy, StoreError> {
    let c = Columns::<D>::new(row, "api_key_policies");
    let r = Record {
        table: "api_key_policies",
        name: tenant.as_str(),
    };
    let resources: String = c.get("resource_ids")?;
    let max_per_person: i64 = c.get("max_per_person")?;
    let max_lifetime_days: i64 = c.get("max_lifetime_days")?;
    let count =
        |column: &str, value: i64| u32::try_from(value).map_err(|e| r.corrupt(column, &value, &e));
    Ok(ApiKeyPolicy {
        self_service: c.get("self_service")?,
        resources: r
            .strings("resource_ids", &resources)?
            .iter()
            .map(|id| r.parse("resource_ids", id, ApiResourceId::parse))
            .collect::<Result<_, _>>()?,
        max_per_person: count("max_per_person", max_per_person)?,
        max_lifetime_days: count("max_lifetime_days", max_lifetime_days)?,
        agent_keys: c.get("agent_keys")?,
    })
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<ApiKey, StoreError> {
    let c = Columns::<D>::new(row, "api_keys");
    let id: String = c.get("id")?;
    let r = Record {
        table: "api_keys",
        name: &id,
    };
    let tenant: String = c.get("tenant_id")?;
    let scopes: String = c.get("scopes")?;
    let hash: Vec<u8> = c.get("key_hash")?;
    let rotated_from: Option<String> = c.get("rotated_from")?;
    let resource: Option<String> = c.get("resource_id")?;
    let subject: Option<String> = c.get("subject")?;
    let reach = match (resource, subject) {
        (None, None) => KeyReach::Management,
        (Some(resource), Some(subject)) => KeyReach::Api {
            resource: r.parse("resource_id", &resource, ApiResourceId::parse)?,
            subject: r.parse("subject", &subject, KeySubject::parse)?,
        },
        (Some(resource), None) => return Err(r.corrupt("subject", &resource, &"missing")),
        (None, Some(subject)) => return Err(r.corrupt("resource_id", &subject, &"missing")),
    };
    let scopes = r
        .strings("scopes", &scopes)?
        .iter()
        .map(|s| Scope::parse(s).map_err(|e| r.corrupt("scopes", s, &e)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ApiKey {
        id: r.parse("id", &id, ApiKeyId::parse)?,
        tenant_id: r.parse("tenant_id", &tenant, TenantId::parse)?,
        name: c.get("name")?,
        reach,
        scopes: ScopeSet::from_scopes(scopes),
        hash: r.hash("key_hash", &hash)?,
        created_by: c.get("created_by")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        last_used_at: c.get("last_used_at")?,
        revoked_at: c.get("revoked_at")?,
        rotated_from: r.parse_opt("rotated_from", rotated_from.as_deref(), ApiKeyId::parse)?,
    })
}
