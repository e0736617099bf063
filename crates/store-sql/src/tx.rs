//! [`SqlTx`]: the one type behind both `Box<dyn ReadTx>` and `Box<dyn WriteTx>` on every SQL
//! backend; the trait object decides which operations the caller can reach. Each aggregate
//! module implements its ports for it, so a new repository function is written in one place.

use crate::dialect::{Conn, Dialect};
use async_trait::async_trait;
use sqlx::Transaction;
use sqlx::pool::PoolConnection;
use std::any::Any;
use std::sync::Arc;
use svc_domain::TenantId;
use svc_store::{ReadTx, RevocationSet, StoreError, WriteTx};

/// A transaction (or, for one statement, a pooled connection in autocommit mode) on dialect
/// `D`. Dropping a transaction without commit rolls it back: sqlx runs the ROLLBACK before the
/// connection is lent out again.
pub struct SqlTx<D: Dialect> {
    conn: Held<D>,
    /// Whatever the backend must hold until the transaction ends (SQLite: this process's turn
    /// to write). Declared after `conn`, so it is released after a dropped transaction's
    /// rollback is queued.
    _hold: Option<Box<dyn Any + Send>>,
    /// The process's revocation set, told of this transaction's revocations once it commits
    /// (the change feed tells the other processes, and this one again, a little later).
    revocations: Option<Arc<RevocationSet>>,
    revoked: Vec<(TenantId, String, i64)>,
}

enum Held<D: Dialect> {
    Tx(Transaction<'static, D::Db>),
    Plain(PoolConnection<D::Db>),
}

impl<D: Dialect> SqlTx<D> {
    /// A transaction.
    pub fn new(tx: Transaction<'static, D::Db>) -> Self {
        Self {
            conn: Held::Tx(tx),
            _hold: None,
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

    /// A transaction that keeps `hold` until it ends.
    pub fn holding(tx: Transaction<'static, D::Db>, hold: impl Any + Send) -> Self {
        Self {
            conn: Held::Tx(tx),
            _hold: Some(Box::new(hold)),
            revocations: None,
            revoked: Vec::new(),
        }
    }

    /// A pooled connection outside any transaction (one statement, no BEGIN/ROLLBACK).
    pub fn plain(conn: PoolConnection<D::Db>) -> Self {
        Self {
            conn: Held::Plain(conn),
            _hold: None,
            revocations: None,
            revoked: Vec::new(),
        }
    }

    /// A pooled connection outside any transaction that keeps `hold` until it is committed or
    /// dropped (SQLite: this process's turn to write, for a one-statement write).
    pub fn plain_holding(conn: PoolConnection<D::Db>, hold: impl Any + Send) -> Self {
        Self {
            _hold: Some(Box::new(hold)),
            ..Self::plain(conn)
        }
    }

    /// The connection the repositories run their statements on.
    pub(crate) fn conn(&mut self) -> &mut Conn<D> {
        match &mut self.conn {
            Held::Tx(tx) => tx,
            Held::Plain(conn) => conn,
        }
    }
}

#[async_trait]
impl<D: Dialect> ReadTx for SqlTx<D> {
    async fn finish(self: Box<Self>) -> Result<(), StoreError> {
        match self.conn {
            // A read changed nothing: a rollback ends it without a commit's work.
            Held::Tx(tx) => tx.rollback().await.map_err(D::map_err),
            // Autocommit: nothing to end; the connection goes back to the pool.
            Held::Plain(_) => Ok(()),
        }
    }
}

#[async_trait]
impl<D: Dialect> WriteTx for SqlTx<D> {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        let Self {
            conn,
            revocations,
            revoked,
            ..
        } = *self;
        match conn {
            Held::Tx(tx) => tx.commit().await.map_err(D::map_err)?,
            // `write_once`: the one statement committed itself when it ran.
            Held::Plain(_) => {}
        }
        if let Some(set) = revocations {
            for (tenant, jti, exp) in &revoked {
                set.revoked(tenant, jti, *exp);
            }
        }
        Ok(())
    }
}
