//! What every plane runs whatever its routes (ARCHITECTURE.md "Planes": every plane serves
//! `/health/*` and `/metrics`): readiness over each opened store, the workers, the KMS and (when
//! throttling fails closed) the coordination backend (Redis or Memcached), pool
//! gauges, and a watchdog per store that logs outages once per transition.

use crate::coordination::{Coordination, CoordinationReadiness};
use crate::stores::{OpenedStore, StorePoolStats, StoreReadiness};
use crate::workers::Workers;
use std::sync::Arc;
use std::time::Duration;
use svc_http::{Health, Metrics, ReadinessCheck};
use svc_oauth::keys::KeyService;
use tokio_util::sync::CancellationToken;

/// Starts a watchdog per store (pinging every `watchdog_interval`), registers each pool's
/// gauges, and returns the health endpoints' checks: every store, the critical workers, and
/// the KMS when keys are held there.
pub(super) fn health(
    stores: &[OpenedStore],
    workers: &mut Workers,
    keys: &Arc<KeyService>,
    coordination: Option<&Coordination>,
    metrics: &Metrics,
    watchdog_interval: Duration,
) -> Health {
    for opened in stores {
        let opened = opened.clone();
        workers.spawn("database-watchdog", move |cancel| {
            database_watchdog(opened, watchdog_interval, cancel)
        });
    }
    let mut checks: Vec<Arc<dyn ReadinessCheck>> = stores
        .iter()
        .map(|s| Arc::new(StoreReadiness::new(s.clone())) as Arc<dyn ReadinessCheck>)
        .collect();
    checks.push(workers.readiness());
    if !keys.is_ephemeral() {
        checks.push(Arc::new(crate::keys::KmsReadiness(keys.clone())));
    }
    // Throttling that fails closed refuses every throttled request without its backend: not
    // ready.
    if let Some(coordination) = coordination
        && coordination.outage() == svc_http::throttle::Outage::Refuse
    {
        checks.push(Arc::new(CoordinationReadiness(coordination.clone())));
    }
    for opened in stores {
        metrics.register_pool(opened.label, Arc::new(StorePoolStats(opened.store.clone())));
    }
    Health::new(checks)
}

/// Pings a store periodically and logs when it goes down or comes back, once per transition
/// rather than on every probe. Readiness itself always checks live.
async fn database_watchdog(opened: OpenedStore, interval: Duration, cancel: CancellationToken) {
    let mut reachable = true;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        match opened.store.ping().await {
            Ok(()) if !reachable => {
                reachable = true;
                tracing::info!(database = opened.label, "database reachable again");
            }
            Err(e) if reachable => {
                reachable = false;
                tracing::error!(database = opened.label, error = %crate::stores::explain(&e), "database unreachable");
            }
            _ => {}
        }
    }
}
