//! Outbox events of the management use cases: each is recorded in the same transaction as the
//! change it describes (and beside its audit entry), so a receiver never hears of a change that
//! rolled back and never misses one that committed.

use crate::{ManageContext, ManageError};
use svc_domain::{Event, EventData, EventType, TenantId};
use svc_store::WriteTx;

/// Appends an event of `event_type` for `tenant` within `tx`.
pub(crate) async fn record(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    event_type: EventType,
    data: EventData,
) -> Result<(), ManageError> {
    let event = Event::new(
        ctx.clock.as_ref(),
        ctx.rng.as_ref(),
        tenant,
        event_type,
        data,
    );
    tx.insert_event(&event).await?;
    Ok(())
}
