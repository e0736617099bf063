//! Pushed authorization requests (RFC 9126): their statements, their row form
//! ([`PushedRequestRow`]) and the `PushedRequestWrites` port for [`SqlTx`].
//!
//! Taking one is a single `DELETE ... RETURNING` conditioned on tenant, hash, client and expiry:
//! only the statement that deleted the row gets it back, so a `request_uri` is used once however
//! many requests race (PostgreSQL serialises the deletes on the row; SQLite's writers are
//! serialised by `BEGIN IMMEDIATE`). Expiry is compared on the `_ns` twin on SQLite, on the
//! `timestamptz` column on PostgreSQL; the purge lives with the others in `grants`.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, hash_name};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{ClientId, PushedRequest, SecretHash, TenantId};
use svc_store::{PushedRequestWrites, StoreError};
use time::OffsetDateTime;

const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO pushed_authorization_requests (hash, tenant_id, client_id, request, \
         created_at, expires_at, expires_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    postgres: "INSERT INTO pushed_authorization_requests (hash, tenant_id, client_id, request, \
         created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
};
const TAKE: PerDialect = PerDialect {
    sqlite: "DELETE FROM pushed_authorization_requests \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 AND expires_at_ns > $4 \
         RETURNING hash, tenant_id, client_id, request, created_at, expires_at",
    postgres: "DELETE FROM pushed_authorization_requests \
         WHERE tenant_id = $1 AND hash = $2 AND client_id = $3 AND expires_at > $4 \
         RETURNING hash, tenant_id, client_id, request, created_at, expires_at",
};

#[async_trait]
impl<D: Dialect> PushedRequestWrites for SqlTx<D> {
    async fn insert_pushed_request(&mut self, request: &PushedRequest) -> Result<(), StoreError> {
        Stmt::new(INSERT.pick::<D>())
            .bind(request.hash.as_bytes())
            .bind(request.tenant_id.as_str())
            .bind(request.client_id.as_str())
            .bind(request.request.as_str())
            .bind(request.created_at)
            .bind(request.expires_at)
            .bind_twin(request.expires_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "pushed_authorization_requests_tenant_id_fkey"))?;
        Ok(())
    }

    async fn take_pushed_request(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PushedRequest>, StoreError> {
        Stmt::new(TAKE.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(client.as_str())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<PushedRequest, StoreError> {
    let c = Columns::<D>::new(row, "pushed_authorization_requests");
    PushedRequestRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        request: c.get("request")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
    }
    .decode()
}

/// A `pushed_authorization_requests` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct PushedRequestRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
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

impl PushedRequestRow {
    /// The pushed request this row stores.
    pub(crate) fn decode(self) -> Result<PushedRequest, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "pushed_authorization_requests",
            name: &name,
        };
        Ok(PushedRequest {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            request: self.request,
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
        assert_twins(&[(INSERT, 1), (TAKE, 0)]);
    }

    #[test]
    fn a_row_decodes_and_each_bad_column_is_named() {
        let row = PushedRequestRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            request: "[]".into(),
            created_at: AT,
            expires_at: AT,
        };
        check(
            row,
            PushedRequestRow::decode,
            &[
                ("pushed_authorization_requests.hash", |r| {
                    r.hash = vec![1; 3]
                }),
                ("pushed_authorization_requests.client_id", |r| {
                    r.client_id = USER.into()
                }),
            ],
        );
    }
}
