//! Logout propagation in the runtime: what `[logout]` lets applications register, and the async
//! plane's back-channel delivery worker, sending through the same SSRF-guarded HTTP client and
//! target policy as webhooks.

use crate::workers::Workers;
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_domain::{TargetPolicy, WebhookUrl};
use svc_manage::LogoutOffer;
use svc_oauth::backchannel_logout::{BackchannelLogout, LogoutSettings, LogoutTransport};
use svc_oauth::context::ProtocolContext;
use svc_webhooks::egress::{check_target, describe_failure};
use svc_webhooks::{SystemLookup, guarded_client};
use tokio_util::sync::CancellationToken;

/// How often the worker looks for due notices when the last pass found less than a batch.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The channels applications may register.
pub(crate) fn offer(config: &Config) -> LogoutOffer {
    LogoutOffer {
        backchannel: config
            .logout
            .backchannel
            .then(|| crate::webhooks::target_policy(config)),
        frontchannel: config.logout.frontchannel,
        frontchannel_https_only: config.is_production(),
    }
}

/// Whether authorization codes must record which applications a session signed into.
pub(crate) fn remembers_session_clients(config: &Config) -> bool {
    config.logout.backchannel || config.logout.frontchannel
}

/// The worker's pacing from `[logout]`.
fn settings(config: &Config) -> LogoutSettings {
    let timeout = Duration::from_secs(u64::from(config.logout.backchannel_timeout_secs));
    let defaults = LogoutSettings::default();
    LogoutSettings {
        max_attempts: config.logout.backchannel_max_attempts,
        // Every attempt of a batch runs at once, so one timeout (and the write after it) is
        // what a lease must outlast.
        lease: defaults.lease.max(timeout * 4),
        ..defaults
    }
}

/// Starts back-channel delivery on the async plane when `[logout].backchannel` is on.
pub(crate) fn spawn(
    workers: &mut Workers,
    config: &Config,
    ctx: ProtocolContext,
) -> Result<(), crate::RuntimeError> {
    if !config.logout.backchannel {
        return Ok(());
    }
    let timeout = Duration::from_secs(u64::from(config.logout.backchannel_timeout_secs));
    let policy = crate::webhooks::target_policy(config);
    let client = guarded_client(policy, timeout, Arc::new(SystemLookup)).map_err(|e| {
        crate::RuntimeError::Bootstrap(format!("cannot build the logout HTTP client: {e}"))
    })?;
    let transport = Arc::new(GuardedTransport {
        client,
        policy,
        timeout,
    });
    let worker = Arc::new(BackchannelLogout::new(ctx, transport, settings(config)));
    tracing::info!("back-channel logout delivery started");
    workers.spawn("backchannel-logout", move |cancel| run(worker, cancel));
    Ok(())
}

/// Delivers until `cancel` fires: back to back while full batches come, every second
/// otherwise. A database outage is logged once and waited out.
async fn run(worker: Arc<BackchannelLogout>, cancel: CancellationToken) {
    let batch = worker.settings().batch as usize;
    let mut failing = false;
    loop {
        let full = match worker.deliver_once().await {
            Ok(claimed) => {
                if failing {
                    tracing::info!("back-channel logout: database reachable again");
                    failing = false;
                }
                claimed == batch
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "back-channel logout: cannot read the outbox; retrying");
                    failing = true;
                }
                false
            }
        };
        if full && !cancel.is_cancelled() {
            continue;
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
    }
}

/// POSTs logout tokens under the webhook egress policy: the static check on every attempt
/// (the policy may have tightened since the URI was registered), then a client whose resolver
/// refuses internal addresses, follows no redirect and uses no proxy.
struct GuardedTransport {
    client: reqwest::Client,
    policy: TargetPolicy,
    timeout: Duration,
}

#[async_trait]
impl LogoutTransport for GuardedTransport {
    async fn post(&self, uri: &str, logout_token: &str) -> Result<u16, String> {
        let url = WebhookUrl::parse(uri).map_err(|e| format!("target refused: {e}"))?;
        check_target(self.policy, &url).map_err(|e| format!("target refused: {e}"))?;
        // Back-Channel Logout 1.0 §2.5: a form-encoded POST; §2.8 the RP answers without
        // caching, and what it says in a body is not needed.
        let answer = self
            .client
            .post(url.url().clone())
            .header(reqwest::header::CACHE_CONTROL, "no-store")
            .form(&[("logout_token", logout_token)])
            .send()
            .await
            .map_err(|e| describe_failure(&e, self.timeout))?;
        Ok(answer.status().as_u16())
    }
}
