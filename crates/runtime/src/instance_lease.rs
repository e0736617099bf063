//! One serving instance per database while signing keys are ephemeral (no `[kms]`).
//!
//! Without a KMS each process makes its own signing keys in memory, so a token one instance
//! signs is refused by another behind the same load balancer (issue 21, found running three
//! instances on one database). Rather than let that happen quietly, an instance that signs
//! ([`signs`]: the auth or control plane, or the async plane while it sends back-channel logout
//! tokens) without `[kms]` holds a lease in the database for as long as it runs, and a second
//! one refuses to start, saying why and what to do.
//!
//! Rules:
//! - The lease is a coordination record (the store's idempotency-key table, scope
//!   [`SCOPE`], a key no API caller can produce since API scopes are tenant- or
//!   operator-prefixed) holding this instance's random id, live for [`TTL`] and renewed every
//!   [`RENEW_EVERY`]; taking it is one write transaction, so two instances starting together
//!   cannot both win (the record's primary key).
//! - A lease left by an instance that died without releasing it (`kill -9`) expires within
//!   [`TTL`]: a starting instance waits up to [`TTL`] plus one renewal period for it before it
//!   refuses, so a restart after a crash just waits, while a second live instance (which keeps
//!   renewing) is refused.
//! - Renewal failures while the database is away are retried; if another instance took the
//!   lease meanwhile (this one was cut off longer than [`TTL`]), the renewal task stops and
//!   readiness turns 503: two instances are signing with different keys again.
//! - Shutdown releases the lease at once, so a clean restart does not wait.
//! - The async plane alone signs only back-channel logout tokens (`[logout].backchannel`, with
//!   background tasks on): then it takes the lease too, since a logout token signed with keys
//!   no JWKS of the auth plane publishes would be refused by every application. Otherwise it
//!   signs nothing and takes no lease.

use crate::error::RuntimeError;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{Clock, Rng};
use svc_store::{IdempotencyRecord, Store, StoreError};
use tokio_util::sync::CancellationToken;

/// The lease's scope and key in the coordination records.
pub(crate) const SCOPE: &str = "svc:instance";
const KEY: &str = "ephemeral-signing-keys";
/// How long a lease lives without renewal.
pub(crate) const TTL: Duration = Duration::from_secs(10);
/// How often the holder renews it.
const RENEW_EVERY: Duration = Duration::from_secs(3);

/// Whether a process of `plane` signs anything with the deployment's keys: tokens (auth,
/// control) or back-channel logout tokens (async, while `[logout].backchannel` is on and it runs
/// background tasks).
pub(crate) fn signs(config: &svc_config::Config, plane: crate::Plane) -> bool {
    use crate::Plane;
    plane.runs(Plane::Auth)
        || plane.runs(Plane::Control)
        || (plane.runs(Plane::Async)
            && config.logout.backchannel
            && config.deployment.background_tasks_enabled)
}

/// What a claim found.
#[derive(Debug, PartialEq, Eq)]
enum Claim {
    /// This instance holds the lease now.
    Held,
    /// Another instance holds a live lease.
    Taken,
}

/// A held lease: renew it with [`Lease::keep`], which also releases it on cancellation.
pub(crate) struct Lease {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    holder: String,
}

/// Takes the lease, waiting for a dead instance's lease to expire; refuses when another
/// instance keeps it.
pub(crate) async fn acquire(
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: &dyn Rng,
) -> Result<Lease, RuntimeError> {
    let lease = Lease {
        store,
        clock,
        holder: svc_domain::GeneratedSecret::generate("inst_", rng).plaintext,
    };
    let attempts = (TTL + RENEW_EVERY).as_millis() / 500 + 1;
    for attempt in 0..attempts {
        match lease.claim().await {
            Ok(Claim::Held) => return Ok(lease),
            Ok(Claim::Taken) if attempt == 0 => tracing::warn!(
                "another instance holds this database's ephemeral-keys lease; waiting up to {} s \
                 in case it is a previous instance that was killed",
                (TTL + RENEW_EVERY).as_secs()
            ),
            Ok(Claim::Taken) => {}
            Err(e) => return Err(RuntimeError::Keys(format!("instance lease: {e}"))),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(RuntimeError::Keys(
        "another svc-runtime instance serves this database with ephemeral signing keys (no \
         [kms]): tokens one of them signs would be refused by the other. Stop the other \
         instance, or configure [kms] (svc-kms, see the README's \"Signing keys and svc-kms\") \
         to run several instances on one database."
            .into(),
    ))
}

impl Lease {
    /// One claim: take a free or expired lease, or renew ours; `Taken` when another instance's
    /// is live.
    async fn claim(&self) -> Result<Claim, StoreError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        if let Some(live) = tx.idempotency_record(SCOPE, KEY, now).await? {
            if live.fingerprint != self.holder {
                drop(tx);
                return Ok(Claim::Taken);
            }
            tx.release_idempotency(SCOPE, KEY).await?;
        }
        let record = IdempotencyRecord {
            scope: SCOPE.to_owned(),
            key: KEY.to_owned(),
            fingerprint: self.holder.clone(),
            status: None,
            body: None,
            created_at: now,
            expires_at: now + TTL,
        };
        match tx.claim_idempotency(&record).await {
            Ok(()) => {}
            // Another instance took it between our read and our write (PostgreSQL).
            Err(StoreError::Conflict { .. }) => return Ok(Claim::Taken),
            Err(e) => return Err(e),
        }
        tx.commit().await?;
        Ok(Claim::Held)
    }

    /// Gives the lease up if it is still ours.
    async fn release(&self) -> Result<(), StoreError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        if tx
            .idempotency_record(SCOPE, KEY, now)
            .await?
            .is_some_and(|live| live.fingerprint == self.holder)
        {
            tx.release_idempotency(SCOPE, KEY).await?;
        }
        tx.commit().await
    }

    /// Renews the lease until `cancel`, then releases it. Returns early (readiness 503) only
    /// when another instance took it.
    pub(crate) async fn keep(self, cancel: CancellationToken) {
        loop {
            tokio::select! {
                () = cancel.cancelled() => {
                    if let Err(e) = self.release().await {
                        tracing::warn!(error = %e, "could not release the instance lease; it expires on its own");
                    }
                    return;
                }
                () = tokio::time::sleep(RENEW_EVERY) => {}
            }
            match self.claim().await {
                Ok(Claim::Held) => {}
                Ok(Claim::Taken) => {
                    tracing::error!(
                        "another instance took this database's ephemeral-keys lease while this \
                         one was cut off: the two sign with different keys; stop one of them"
                    );
                    return;
                }
                Err(e) => tracing::warn!(error = %e, "instance lease not renewed; retrying"),
            }
        }
    }
}
