//! Background workers and their supervision: each worker runs until shutdown is requested; a
//! critical worker that stops early (an error or a panic) makes readiness fail, because the
//! process can no longer do its job and should be replaced.

use async_trait::async_trait;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use svc_http::ReadinessCheck;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Runs workers and knows whether the critical ones are still alive.
pub(crate) struct Workers {
    tasks: JoinSet<()>,
    cancel: CancellationToken,
    all_alive: Arc<AtomicBool>,
}

impl Workers {
    pub(crate) fn new(cancel: CancellationToken) -> Self {
        Self {
            tasks: JoinSet::new(),
            cancel,
            all_alive: Arc::new(AtomicBool::new(true)),
        }
    }

    /// Starts `work`, which must return when `cancel` fires. If it returns (or panics) before
    /// that, readiness turns 503 and the event is logged.
    pub(crate) fn spawn<F, Fut>(&mut self, name: &'static str, work: F)
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let cancel = self.cancel.clone();
        let alive = self.all_alive.clone();
        let inner = tokio::spawn(work(cancel.clone()));
        self.tasks.spawn(async move {
            let outcome = inner.await;
            if !cancel.is_cancelled() {
                alive.store(false, Ordering::SeqCst);
                match outcome {
                    Ok(()) => tracing::error!(worker = name, "worker stopped unexpectedly; readiness is now failing"),
                    Err(e) => tracing::error!(worker = name, error = %e, "worker panicked; readiness is now failing"),
                }
            }
        });
    }

    /// The readiness check for "critical background tasks".
    pub(crate) fn readiness(&self) -> Arc<dyn ReadinessCheck> {
        Arc::new(WorkersAlive(self.all_alive.clone()))
    }

    /// Waits for every worker to finish after cancellation.
    pub(crate) async fn join(mut self) {
        self.cancel.cancel();
        while self.tasks.join_next().await.is_some() {}
    }
}

struct WorkersAlive(Arc<AtomicBool>);

#[async_trait]
impl ReadinessCheck for WorkersAlive {
    fn name(&self) -> &str {
        "workers"
    }

    async fn check(&self) -> Result<(), String> {
        if self.0.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("a critical background worker stopped".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_worker_that_dies_fails_readiness_and_cancellation_does_not() {
        let cancel = CancellationToken::new();
        let mut workers = Workers::new(cancel.clone());
        workers.spawn("steady", |cancel| async move { cancel.cancelled().await });
        let check = workers.readiness();
        tokio::task::yield_now().await;
        assert_eq!(check.check().await, Ok(()));
        workers.spawn("crashing", |_| async { panic!("boom") });
        for _ in 0..100 {
            if check.check().await.is_err() {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(
            check.check().await.is_err(),
            "a panicked worker must fail readiness"
        );
        workers.join().await;

        let cancel = CancellationToken::new();
        let mut workers = Workers::new(cancel.clone());
        workers.spawn("steady", |cancel| async move { cancel.cancelled().await });
        let check = workers.readiness();
        workers.join().await;
        assert_eq!(
            check.check().await,
            Ok(()),
            "an orderly stop is not a failure"
        );
    }
}
