//! One poll of a polled grant's pending request (device authorizations, `crate::device`;
//! backchannel requests, `crate::backchannel`): the same two statements on either table.
//!
//! The first records the poll only if it came at least the interval after the previous one (the
//! condition and the write in one `UPDATE`, so of racing polls one is on time: PostgreSQL
//! re-checks the condition against the committed row, SQLite serialises writers); when it
//! changes nothing, the second records the poll as too soon and grows the interval by 5 s
//! (RFC 8628 §3.5). Neither touches a request of another tenant or client.

use crate::Stmt;
use crate::dialect::{Conn, Dialect, PerDialect, Row};
use svc_domain::{SecretHash, TenantId};
use svc_store::StoreError;
use time::OffsetDateTime;

/// A table's two poll statements: `$1` tenant, `$2` hash, `$3` client (or agent) id, `$4` now (with its `_ns`
/// twin on SQLite), then, for the first, the instant compared.
pub(crate) struct PollStatements {
    /// Records an on-time poll.
    pub(crate) on_time: PerDialect,
    /// Records a poll that came too soon and grows the interval.
    pub(crate) too_soon: PerDialect,
}

/// Polls the request of `tenant` with `hash` for `client` (a `client_id`, or an agent's id) at `now`: the request after the poll
/// and whether it came too soon, or `None` when there is no such request.
pub(crate) async fn poll<D: Dialect, T>(
    conn: &mut Conn<D>,
    statements: &PollStatements,
    (tenant, hash, client): (&TenantId, &SecretHash, &str),
    now: OffsetDateTime,
    decode: impl Fn(&Row<D>) -> Result<T, StoreError> + Copy,
) -> Result<Option<(T, bool)>, StoreError> {
    let on_time = Stmt::new(statements.on_time.pick::<D>())
        .bind(tenant.as_str())
        .bind(hash.as_bytes())
        .bind(client)
        .bind(now)
        .bind_twin(now)
        .bind_instant(now)
        .fetch_optional_with::<D, _>(&mut *conn, decode)
        .await?;
    if let Some(request) = on_time {
        return Ok(Some((request, false)));
    }
    let too_soon = Stmt::new(statements.too_soon.pick::<D>())
        .bind(tenant.as_str())
        .bind(hash.as_bytes())
        .bind(client)
        .bind(now)
        .bind_twin(now)
        .fetch_optional_with::<D, _>(conn, decode)
        .await?;
    Ok(too_soon.map(|request| (request, true)))
}
