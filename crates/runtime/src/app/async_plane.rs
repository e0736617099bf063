//! The async plane's workers (ARCHITECTURE.md "Planes"): signing-key rotation, the janitor that
//! forgets expired records, the webhook relay and delivery, and back-channel logout delivery. They run only where the plane
//! is served and `deployment.background_tasks_enabled` holds (decided by the caller).

use super::services::Services;
use crate::RuntimeError;
use crate::workers::Workers;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_domain::Clock;
use svc_http::Metrics;
use tokio_util::sync::CancellationToken;

/// Starts the async plane's workers over the shared `services`; key rotation runs a pass every
/// `rotation_interval`.
pub(super) fn spawn(
    workers: &mut Workers,
    config: &Config,
    services: &Services,
    metrics: &Metrics,
    rotation_interval: Duration,
) -> Result<(), RuntimeError> {
    let keys = services.keys.clone();
    workers.spawn("key-rotation", move |cancel| {
        crate::keys::rotation_worker(keys, rotation_interval, cancel)
    });
    let (store, clock) = (services.store.clone(), services.clock.clone());
    let retention = Retention {
        webhooks: time::Duration::days(i64::from(config.webhooks.history_retention_days)),
        login_history: time::Duration::days(i64::from(config.auth.login_history_retention_days)),
    };
    workers.spawn("janitor", move |cancel| {
        janitor(store, clock, retention, cancel)
    });
    crate::logout::spawn(
        workers,
        config,
        super::auth_plane::protocol_context(config, services),
        metrics,
    )?;
    crate::webhooks::spawn(
        workers,
        config,
        services.store.clone(),
        services.clock.clone(),
        services.rng.clone(),
        metrics,
    )
}

/// How long a closed recovery (cancelled, expired, completed and settled) stays readable: its
/// asking browser sees "over" rather than a decoy's "collecting" for this long. Its events are
/// the lasting record.
const CLOSED_RECOVERY_KEPT: time::Duration = time::Duration::days(30);
/// Rows of each kind one round of a purge step deletes at most.
const PURGE_BATCH: u64 = 10_000;
/// Rounds of a step per tick: a backlog beyond that waits for the next tick.
const PURGE_ROUNDS: u32 = 100;

/// How long history is kept: `[webhooks].history_retention_days`,
/// `[auth].login_history_retention_days`.
#[derive(Debug, Clone, Copy)]
struct Retention {
    webhooks: time::Duration,
    login_history: time::Duration,
}

/// One kind of record the janitor removes, in its own transaction.
#[derive(Debug, Clone, Copy)]
enum PurgeStep {
    Coordination,
    Grants,
    WebhookHistory,
    LoginHistory,
    ClosedRecoveries,
}

impl PurgeStep {
    const ALL: [Self; 5] = [
        Self::Coordination,
        Self::Grants,
        Self::WebhookHistory,
        Self::LoginHistory,
        Self::ClosedRecoveries,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Self::Coordination => "idempotency keys and assertion ids",
            Self::Grants => "codes, sessions and tokens",
            Self::WebhookHistory => "webhook history",
            Self::LoginHistory => "login history",
            Self::ClosedRecoveries => "closed recoveries",
        }
    }
}

/// Runs one round of a purge step (at most [`PURGE_BATCH`] rows of each kind) in a transaction
/// of its own: how many records it removed.
async fn purge(
    store: &dyn svc_store::Store,
    step: PurgeStep,
    now: time::OffsetDateTime,
    retention: &Retention,
) -> Result<u64, svc_store::StoreError> {
    let mut tx = store.write().await?;
    let purged = match step {
        PurgeStep::Coordination => tx.purge_expired(now, PURGE_BATCH).await?,
        PurgeStep::Grants => tx.purge_expired_grants_at_most(now, PURGE_BATCH).await?,
        PurgeStep::WebhookHistory => {
            tx.purge_webhook_history(now - retention.webhooks, PURGE_BATCH)
                .await?
        }
        PurgeStep::LoginHistory => {
            tx.purge_login_history(now - retention.login_history, PURGE_BATCH)
                .await?
        }
        PurgeStep::ClosedRecoveries => {
            tx.purge_closed_recoveries(now - CLOSED_RECOVERY_KEPT, PURGE_BATCH)
                .await?
        }
    };
    tx.commit().await?;
    Ok(purged)
}

/// The async plane's housekeeping, every ten minutes: forgets expired idempotency keys and
/// client-assertion ids (kept only to refuse replays within their lifetime), dead codes,
/// sessions and tokens, webhook history and login history past their `retention`, and closed
/// recoveries after [`CLOSED_RECOVERY_KEPT`].
async fn janitor(
    store: Arc<dyn svc_store::Store>,
    clock: Arc<dyn Clock>,
    retention: Retention,
    cancel: CancellationToken,
) {
    let mut ticker = tokio::time::interval(Duration::from_secs(600));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let now = clock.now();
        // One transaction per round of each kind of record: a slow or failing purge of one
        // table neither rolls back nor holds up the others, and a backlog goes in bounded
        // rounds, each well inside `statement_timeout`, instead of one statement that may
        // never finish.
        let mut purged = 0;
        for step in PurgeStep::ALL {
            for _ in 0..PURGE_ROUNDS {
                match purge(store.as_ref(), step, now, &retention).await {
                    Ok(0) => break,
                    Ok(n) => purged += n,
                    Err(e) => {
                        tracing::warn!(
                            what = step.as_str(),
                            error = %e,
                            "housekeeping failed; retrying on the next tick"
                        );
                        break;
                    }
                }
            }
        }
        if purged > 0 {
            tracing::info!(
                purged,
                "expired idempotency keys, assertion ids, codes, sessions, tokens, webhook and login history, and closed recoveries removed"
            );
        }
    }
}
