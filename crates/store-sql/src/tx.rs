//! [`SqlTx`]: the one type behind both `Box<dyn ReadTx>` and `Box<dyn WriteTx>` on every SQL
//! backend; the trait object decides which operations the caller can reach. Each aggregate
//! module implements its ports for it, so a new repository function is written in one place.

use crate::dialect::{Conn, Dialect, Lease};
use async_trait::async_trait;
use std::sync::Arc;
use svc_domain::TenantId;
use svc_store::{ReadTx, RevocationSet, StoreError, WriteTx};

/// A transaction (or, for one statement, a connection in autocommit mode) on dialect `D`.
/// Dropping a transaction without commit rolls it back (see [`Lease`]).
pub struct SqlTx<D: Dialect> {
    lease: D::Lease,
    /// The process's revocation set, told of this transaction's revocations once it commits
    /// (the change feed tells the other processes, and this one again, a little later).
    revocations: Option<Arc<RevocationSet>>,
    revoked: Vec<(TenantId, String, i64)>,
}

impl<D: Dialect> SqlTx<D> {
    /// A transaction, or a connection in autocommit, as the backend leased it.
    pub fn new(lease: D::Lease) -> Self {
        Self {
            lease,
            revocations: None,
            revoked: Vec::new(),
        }
    }

    /// The same transaction, adding what it revokes to `set` when it commits.
    #[must_use]
    pub fn revoking_into(mut self, set: Arc<RevocationSet>) -> Self {
        self.revocations = Some(set);
        self
    }

    /// Notes a revocation written in this transaction, for [`SqlTx::revoking_into`].
    pub(crate) fn revoked_on_commit(&mut self, tenant: &TenantId, jti: &str, exp: i64) {
        if self.revocations.is_some() {
            self.revoked.push((tenant.clone(), jti.to_owned(), exp));
        }
    }

    /// The connection the repositories run their statements on.
    pub(crate) fn conn(&mut self) -> &mut Conn<D> {
        self.lease.conn()
    }
}

#[async_trait]
impl<D: Dialect> ReadTx for SqlTx<D> {
    async fn finish(self: Box<Self>) -> Result<(), StoreError> {
        self.lease.finish().await
    }
}

#[async_trait]
impl<D: Dialect> WriteTx for SqlTx<D> {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        let Self {
            lease,
            revocations,
            revoked,
        } = *self;
        // A backend's turn to write (SQLite's writer connection) lives in the lease, so it is
        // released only once the commit is done.
        lease.commit().await?;
        if let Some(set) = revocations {
            for (tenant, jti, exp) in &revoked {
                set.revoked(tenant, jti, *exp);
            }
        }
        Ok(())
    }
}
