//! The JSON shapes of subscriptions and deliveries (CONTRACTS.md field names). A subscription
//! view never carries a secret; a generated secret appears only in [`CreatedWebhookView`], once.

use serde::Serialize;
use svc_domain::{Delivery, DeliveryAttempt, EventType, Subscription};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A subscription as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "whk_01jd3k2m4n5p6q7r8s9t0v1w2x",
    "url": "https://hooks.example.com/svc",
    "event_types": ["auth.login.success", "tenant_user.invited"],
    "description": "CRM sync",
    "active": true,
    "disabled_reason": null,
    "previous_secret_expires_at": null,
    "created_at": "2026-11-23T09:14:07.123456Z",
    "updated_at": "2026-11-23T09:14:07.123456Z"
}))]
pub struct WebhookView {
    /// The subscription's id (`whk_…`).
    #[schema(example = "whk_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    pub id: String,
    /// The receiver.
    pub url: String,
    /// The event types delivered, sorted.
    pub event_types: Vec<String>,
    /// What it is for; `null` when none was given.
    #[schema(required = true)]
    pub description: Option<String>,
    /// Whether deliveries go out.
    pub active: bool,
    /// Why the service switched it off (its receiver answered 410 Gone), if it did; cleared
    /// when it is switched on again.
    #[schema(required = true)]
    pub disabled_reason: Option<String>,
    /// Until when the secret before the last rotation still signs beside the current one
    /// (RFC 3339); `null` outside an overlap.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub previous_secret_expires_at: Option<OffsetDateTime>,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); its revision is the subscription's `ETag`.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl WebhookView {
    /// The view of `webhook` at `now` (an overlap that ended is not shown).
    pub fn at(webhook: &Subscription, now: OffsetDateTime) -> Self {
        Self {
            id: webhook.id.to_string(),
            url: webhook.url.to_string(),
            event_types: webhook
                .event_types
                .iter()
                .map(|t| t.as_str().to_owned())
                .collect(),
            description: webhook.description.clone(),
            active: webhook.active,
            disabled_reason: webhook.disabled_reason.clone(),
            previous_secret_expires_at: webhook
                .previous_secret
                .as_ref()
                .map(|(_, until)| *until)
                .filter(|until| *until > now),
            created_at: webhook.created_at,
            updated_at: webhook.updated_at,
        }
    }
}

/// The answer to a create or a rotation: the subscription, plus the secret when the service
/// generated it (shown this once, never again). `Debug` redacts the secret.
#[derive(Clone, PartialEq, Serialize, ToSchema)]
pub struct CreatedWebhookView {
    /// The subscription.
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// The generated signing secret (`whsec_…`), shown this once; absent when the caller
    /// supplied one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        nullable = false,
        example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8bW4rG1CGAs="
    )]
    pub secret: Option<String>,
}

impl std::fmt::Debug for CreatedWebhookView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedWebhookView")
            .field("webhook", &self.webhook)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// The state of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Waiting for its first attempt (or for a worker).
    Pending,
    /// The receiver answered 2xx.
    Succeeded,
    /// The last attempt failed and another is scheduled (`next_attempt_at`).
    Failed,
    /// No attempt will follow: the schedule is over, or the receiver answered 410 Gone.
    Exhausted,
}

/// One attempt in a delivery's history.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AttemptView {
    /// 1 for the first attempt.
    #[schema(minimum = 1)]
    pub number: u32,
    /// When it started (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub started_at: OffsetDateTime,
    /// How long until the answer or the failure, in milliseconds.
    pub duration_ms: u32,
    /// The receiver's HTTP status; `null` when it did not answer.
    #[schema(required = true)]
    pub status_code: Option<u16>,
    /// What went wrong; `null` when the receiver accepted it.
    #[schema(required = true)]
    pub error: Option<String>,
}

/// A delivery with its attempts.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "dlv_01jd3k9x2c4v6b8n0m2q4w6e8r",
    "event_id": "evt_01jd3k9x2b3n5m7q9s1u3w5y7z",
    "event_type": "webhook.test",
    "status": "pending",
    "attempts": 0,
    "last_status_code": null,
    "last_error": null,
    "next_attempt_at": "2026-11-23T09:14:07.123456Z",
    "redelivery_of": null,
    "history": [],
    "created_at": "2026-11-23T09:14:07.123456Z",
    "updated_at": "2026-11-23T09:14:07.123456Z"
}))]
pub struct DeliveryView {
    /// The delivery's id (`dlv_…`), sent as the `X-SVC-Delivery` header.
    pub id: String,
    /// The event delivered (`evt_…`), the same for a redelivery.
    pub event_id: String,
    /// Its type.
    pub event_type: String,
    /// Where it stands.
    #[schema(value_type = DeliveryState)]
    pub status: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status of the last attempt; `null` when none got an answer.
    #[schema(required = true)]
    pub last_status_code: Option<u16>,
    /// What went wrong last; `null` when nothing did.
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// When the next attempt is due (RFC 3339), for pending and failed deliveries; else `null`.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub next_attempt_at: Option<OffsetDateTime>,
    /// The delivery this one re-sends (`dlv_…`), for manual redeliveries; else `null`.
    #[schema(required = true)]
    pub redelivery_of: Option<String>,
    /// Every attempt, first to last.
    pub history: Vec<AttemptView>,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl DeliveryView {
    /// The view of `delivery` with its `attempts`.
    pub fn new(delivery: &Delivery, attempts: &[DeliveryAttempt]) -> Self {
        Self {
            id: delivery.id.to_string(),
            event_id: delivery.event_id.to_string(),
            event_type: delivery.event_type.as_str().to_owned(),
            status: delivery.status.as_str().to_owned(),
            attempts: delivery.attempts,
            last_status_code: delivery.last_status_code,
            last_error: delivery.last_error.clone(),
            next_attempt_at: delivery.next_attempt_at,
            redelivery_of: delivery.redelivery_of.as_ref().map(ToString::to_string),
            history: attempts
                .iter()
                .map(|a| AttemptView {
                    number: a.number,
                    started_at: a.started_at,
                    duration_ms: a.duration_ms,
                    status_code: a.status_code,
                    error: a.error.clone(),
                })
                .collect(),
            created_at: delivery.created_at,
            updated_at: delivery.updated_at,
        }
    }
}

/// One entry of the event catalog.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "auth.login.success",
    "description": "A person signed in on the hosted pages."
}))]
pub struct EventTypeView {
    /// The dotted name, as named in a subscription's `event_types`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub event_type: &'static str,
    /// When it is recorded.
    #[schema(value_type = String)]
    pub description: &'static str,
}

/// The catalog: the types this version records, and only those (a type of a feature still to
/// come is neither listed nor accepted in a subscription).
pub fn event_catalog() -> Vec<EventTypeView> {
    EventType::emitted()
        .map(|t| EventTypeView {
            event_type: t.as_str(),
            description: t.description(),
        })
        .collect()
}
