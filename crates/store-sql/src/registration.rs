//! Dynamic client registration (RFC 7591, RFC 7592): the statements of each tenant's
//! registration policy, its initial access tokens and the registration access tokens, and the
//! `RegistrationReads` / `RegistrationWrites` ports for [`SqlTx`].
//!
//! The policy is an upsert on the tenant's row (absent reads as `disabled`); a token row is
//! inserted once with its application and deleted with it by the foreign key's cascade. Spending
//! a use of an initial access token is one conditional `UPDATE`, compared on the `_ns` twin on
//! SQLite and the `timestamptz` column on PostgreSQL.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    ClientId, InitialAccessToken, InitialAccessTokenId, RegistrationPolicy, SecretHash,
    StatementIssuer, TenantId,
};
use svc_store::{RegistrationReads, RegistrationWrites, StoreError};
use time::OffsetDateTime;

const POLICY: &str = "SELECT policy FROM registration_policies WHERE tenant_id = $1";
const SET_POLICY: &str = "INSERT INTO registration_policies (tenant_id, policy, updated_at) \
     VALUES ($1, $2, $3) \
     ON CONFLICT (tenant_id) DO UPDATE SET policy = excluded.policy, \
     updated_at = excluded.updated_at";
const DOCUMENTS: &str =
    "SELECT client_id_metadata_documents FROM registration_policies WHERE tenant_id = $1";
const SET_DOCUMENTS: &str = "INSERT INTO registration_policies \
     (tenant_id, policy, updated_at, client_id_metadata_documents) VALUES ($1, 'disabled', $2, $3) \
     ON CONFLICT (tenant_id) DO UPDATE SET \
     client_id_metadata_documents = excluded.client_id_metadata_documents, \
     updated_at = excluded.updated_at";
const ISSUERS: &str = "SELECT issuer, jwks FROM software_statement_issuers \
     WHERE tenant_id = $1 ORDER BY issuer";
const CLEAR_ISSUERS: &str = "DELETE FROM software_statement_issuers WHERE tenant_id = $1";
const INSERT_ISSUER: &str = "INSERT INTO software_statement_issuers \
     (tenant_id, issuer, jwks, created_at) VALUES ($1, $2, $3, $4)";
const TOKEN: &str = "SELECT token_hash FROM registration_access_tokens \
     WHERE tenant_id = $1 AND client_id = $2";
const INITIAL_TOKENS: &str = "SELECT id, tenant_id, token_hash, expires_at, max_uses, uses, \
     created_at FROM initial_access_tokens WHERE tenant_id = $1 ORDER BY id";
const INSERT_INITIAL: PerDialect = PerDialect {
    sqlite: "INSERT INTO initial_access_tokens (id, tenant_id, token_hash, expires_at, \
         max_uses, uses, created_at, expires_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    postgres: "INSERT INTO initial_access_tokens (id, tenant_id, token_hash, expires_at, \
         max_uses, uses, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
};
const SPEND_INITIAL: PerDialect = PerDialect {
    sqlite: "UPDATE initial_access_tokens SET uses = uses + 1 \
         WHERE tenant_id = $1 AND id = $2 AND expires_at_ns > $3 \
         AND (max_uses IS NULL OR uses < max_uses)",
    postgres: "UPDATE initial_access_tokens SET uses = uses + 1 \
         WHERE tenant_id = $1 AND id = $2 AND expires_at > $3 \
         AND (max_uses IS NULL OR uses < max_uses)",
};
const DELETE_INITIAL: &str = "DELETE FROM initial_access_tokens WHERE tenant_id = $1 AND id = $2";
const INSERT_TOKEN: &str = "INSERT INTO registration_access_tokens \
     (tenant_id, client_id, token_hash, created_at) VALUES ($1, $2, $3, $4)";

#[async_trait]
impl<D: Dialect> RegistrationReads for SqlTx<D> {
    async fn registration_policy(
        &mut self,
        tenant: &TenantId,
    ) -> Result<RegistrationPolicy, StoreError> {
        let stored = Stmt::new(POLICY)
            .bind(tenant.as_str())
            .fetch_optional_with::<D, _>(self.conn(), |row: &Row<D>| {
                let policy: String =
                    Columns::<D>::new(row, "registration_policies").get("policy")?;
                Record {
                    table: "registration_policies",
                    name: tenant.as_str(),
                }
                .parse("policy", &policy, |p| {
                    RegistrationPolicy::parse(p).ok_or("not a registration policy")
                })
            })
            .await?;
        Ok(stored.unwrap_or_default())
    }

    async fn metadata_documents_accepted(&mut self, tenant: &TenantId) -> Result<bool, StoreError> {
        let stored = Stmt::new(DOCUMENTS)
            .bind(tenant.as_str())
            .fetch_optional_with::<D, _>(self.conn(), |row: &Row<D>| {
                Columns::<D>::new(row, "registration_policies").get("client_id_metadata_documents")
            })
            .await?;
        Ok(stored.unwrap_or(false))
    }

    async fn statement_issuers(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<StatementIssuer>, StoreError> {
        Stmt::new(ISSUERS)
            .bind(tenant.as_str())
            .fetch_all_with::<D, _>(self.conn(), |row: &Row<D>| {
                let columns = Columns::<D>::new(row, "software_statement_issuers");
                Ok(StatementIssuer {
                    issuer: columns.get("issuer")?,
                    jwks: columns.get("jwks")?,
                })
            })
            .await
    }

    async fn registration_token(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
    ) -> Result<Option<SecretHash>, StoreError> {
        Stmt::new(TOKEN)
            .bind(tenant.as_str())
            .bind(client.as_str())
            .fetch_optional_with::<D, _>(self.conn(), |row: &Row<D>| {
                let hash: Vec<u8> =
                    Columns::<D>::new(row, "registration_access_tokens").get("token_hash")?;
                Record {
                    table: "registration_access_tokens",
                    name: client.as_str(),
                }
                .hash("token_hash", &hash)
            })
            .await
    }

    async fn initial_access_tokens(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<InitialAccessToken>, StoreError> {
        Stmt::new(INITIAL_TOKENS)
            .bind(tenant.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_initial::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> RegistrationWrites for SqlTx<D> {
    async fn set_registration_policy(
        &mut self,
        tenant: &TenantId,
        policy: RegistrationPolicy,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(SET_POLICY)
            .bind(tenant.as_str())
            .bind(policy.as_str())
            .bind(now)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "registration_policies_tenant_id_fkey"))?;
        Ok(())
    }

    async fn set_metadata_documents_accepted(
        &mut self,
        tenant: &TenantId,
        accepted: bool,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(SET_DOCUMENTS)
            .bind(tenant.as_str())
            .bind(now)
            .bind(accepted)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "registration_policies_tenant_id_fkey"))?;
        Ok(())
    }

    async fn set_statement_issuers(
        &mut self,
        tenant: &TenantId,
        issuers: &[StatementIssuer],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(CLEAR_ISSUERS)
            .bind(tenant.as_str())
            .execute::<D>(self.conn())
            .await?;
        for trusted in issuers {
            Stmt::new(INSERT_ISSUER)
                .bind(tenant.as_str())
                .bind(trusted.issuer.as_str())
                .bind(trusted.jwks.as_str())
                .bind(now)
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, "software_statement_issuers_tenant_id_fkey"))?;
        }
        Ok(())
    }

    async fn insert_registration_token(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT_TOKEN)
            .bind(tenant.as_str())
            .bind(client.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .execute::<D>(self.conn())
            .await
            // SQLite names no foreign key; an unknown tenant has no application either, so the
            // application's is the one every failure violates.
            .map_err(|e| naming::foreign_key(e, "registration_access_tokens_client_id_fkey"))?;
        Ok(())
    }

    async fn insert_initial_access_token(
        &mut self,
        token: &InitialAccessToken,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT_INITIAL.pick::<D>())
            .bind(token.id.as_str())
            .bind(token.tenant_id.as_str())
            .bind(token.hash.as_bytes())
            .bind(token.expires_at)
            .bind(token.max_uses.map(i64::from))
            .bind(i64::from(token.uses))
            .bind(token.created_at)
            .bind_twin(token.expires_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "initial_access_tokens_tenant_id_fkey"))?;
        Ok(())
    }

    async fn spend_initial_access_token(
        &mut self,
        tenant: &TenantId,
        id: &InitialAccessTokenId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let spent = Stmt::new(SPEND_INITIAL.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind_instant(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(spent > 0)
    }

    async fn delete_initial_access_token(
        &mut self,
        tenant: &TenantId,
        id: &InitialAccessTokenId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_INITIAL)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }
}

fn decode_initial<D: Dialect>(row: &Row<D>) -> Result<InitialAccessToken, StoreError> {
    let c = Columns::<D>::new(row, "initial_access_tokens");
    let id: String = c.get("id")?;
    let r = Record {
        table: "initial_access_tokens",
        name: &id,
    };
    let tenant_id: String = c.get("tenant_id")?;
    let hash: Vec<u8> = c.get("token_hash")?;
    let max_uses: Option<i64> = c.get("max_uses")?;
    let uses: i64 = c.get("uses")?;
    let count =
        |column: &str, value: i64| u32::try_from(value).map_err(|e| r.corrupt(column, &value, &e));
    Ok(InitialAccessToken {
        id: r.parse("id", &id, InitialAccessTokenId::parse)?,
        tenant_id: r.parse("tenant_id", &tenant_id, TenantId::parse)?,
        hash: r.hash("token_hash", &hash)?,
        expires_at: c.get("expires_at")?,
        max_uses: max_uses.map(|m| count("max_uses", m)).transpose()?,
        uses: count("uses", uses)?,
        created_at: c.get("created_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::assert_twins;

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[(INSERT_INITIAL, 1), (SPEND_INITIAL, 0)]);
    }
}
