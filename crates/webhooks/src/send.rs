//! One HTTP attempt of a delivery: the body exactly as recorded, signed with every signing secret
//! of the subscription, the spec's headers, and the answer reduced to an [`Outcome`].

use crate::egress::{check_target, describe_failure};
use crate::retry::{Outcome, parse_retry_after};
use std::time::Duration;
use svc_crypto::{SIGNATURE_SUITE, webhook_signature_header};
use svc_domain::TargetPolicy;
use svc_store::ClaimedDelivery;
use time::OffsetDateTime;

/// The bytes of an answer read before it is dropped: receivers are told to answer quickly and
/// briefly; nothing of the body is kept.
const MAX_ANSWER_BYTES: usize = 16 * 1024;

/// Sends attempts through a guarded client.
#[derive(Clone)]
pub struct Sender {
    client: reqwest::Client,
    policy: TargetPolicy,
    timeout: Duration,
    max_age: Duration,
}

impl Sender {
    /// A sender with `client` (see [`crate::egress::guarded_client`]), the target `policy`, the
    /// attempt `timeout` and the announced signature `max_age`.
    pub fn new(
        client: reqwest::Client,
        policy: TargetPolicy,
        timeout: Duration,
        max_age: Duration,
    ) -> Self {
        Self {
            client,
            policy,
            timeout,
            max_age,
        }
    }

    /// Makes one attempt at `now` and says how it ended.
    pub async fn send(&self, claimed: &ClaimedDelivery, now: OffsetDateTime) -> Outcome {
        let subscription = &claimed.subscription;
        if let Err(refused) = check_target(self.policy, &subscription.url) {
            return Outcome::Failed {
                error: format!("target refused: {refused}"),
            };
        }
        let timestamp = now.unix_timestamp();
        let delivery_id = claimed.delivery.id.as_str();
        let secrets: Vec<&str> = subscription
            .signing_secrets(now)
            .into_iter()
            .map(|s| s.expose())
            .collect();
        let signature =
            webhook_signature_header(&secrets, delivery_id, timestamp, claimed.body.as_bytes());
        let request = self
            .client
            .post(subscription.url.url().clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("x-svc-signature-suite", SIGNATURE_SUITE)
            .header("x-svc-signature-256", signature)
            .header(
                "x-svc-signature-max-age",
                self.max_age.as_secs().to_string(),
            )
            .header("x-svc-timestamp", timestamp.to_string())
            .header("x-svc-event", claimed.delivery.event_type.as_str())
            .header("x-svc-delivery", delivery_id)
            .body(claimed.body.clone());
        let mut answer = match request.send().await {
            Ok(answer) => answer,
            Err(e) => {
                return Outcome::Failed {
                    error: describe_failure(&e, self.timeout),
                };
            }
        };
        let status = answer.status().as_u16();
        let retry_after = answer
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, std::time::SystemTime::from(now)));
        // Drain a little of the body so the connection can be reused; a receiver that streams
        // forever is cut off by the request timeout.
        let mut read = 0;
        while read < MAX_ANSWER_BYTES {
            match answer.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) | Err(_) => break,
            }
        }
        match status {
            200..=299 => Outcome::Accepted { status },
            410 => Outcome::Gone,
            429 | 503 => Outcome::Rejected {
                status,
                retry_after,
            },
            _ => Outcome::Rejected {
                status,
                retry_after: None,
            },
        }
    }
}
