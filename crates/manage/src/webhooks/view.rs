//! The JSON shapes of subscriptions and deliveries (CONTRACTS.md field names). A subscription
//! view never carries a secret; a generated secret appears only in [`CreatedWebhookView`], once.

use serde::Serialize;
use svc_domain::{Delivery, DeliveryAttempt, EventType, Subscription};
use time::OffsetDateTime;

/// A subscription as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebhookView {
    /// `whk_…`
    pub id: String,
    /// The receiver.
    pub url: String,
    /// The event types delivered.
    pub event_types: Vec<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Whether deliveries go out.
    pub active: bool,
    /// Why the service switched it off (after a 410), if it did.
    pub disabled_reason: Option<String>,
    /// Until when the secret before the last rotation still signs, during an overlap.
    #[serde(with = "time::serde::rfc3339::option")]
    pub previous_secret_expires_at: Option<OffsetDateTime>,
    /// Creation time.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change.
    #[serde(with = "time::serde::rfc3339")]
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
/// generated it (shown this once, never again).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CreatedWebhookView {
    /// The subscription.
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// The generated secret; absent when the caller supplied one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// One attempt in a delivery's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptView {
    /// 1 for the first attempt.
    pub number: u32,
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// How long until the answer or the failure.
    pub duration_ms: u32,
    /// The receiver's status, when it answered.
    pub status_code: Option<u16>,
    /// What went wrong.
    pub error: Option<String>,
}

/// A delivery with its attempts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeliveryView {
    /// `dlv_…`, the `X-SVC-Delivery` header.
    pub id: String,
    /// The event delivered.
    pub event_id: String,
    /// Its type.
    pub event_type: String,
    /// `pending`, `succeeded`, `failed` or `exhausted`.
    pub status: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status of the last attempt, when it got an answer.
    pub last_status_code: Option<u16>,
    /// What went wrong last.
    pub last_error: Option<String>,
    /// When the next attempt is due (pending and failed deliveries).
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_attempt_at: Option<OffsetDateTime>,
    /// The delivery this one re-sends, for manual redeliveries.
    pub redelivery_of: Option<String>,
    /// Every attempt, first to last.
    pub history: Vec<AttemptView>,
    /// Creation time.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change.
    #[serde(with = "time::serde::rfc3339")]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventTypeView {
    /// The dotted name.
    #[serde(rename = "type")]
    pub event_type: &'static str,
    /// When it is recorded.
    pub description: &'static str,
    /// Whether this deployment records it yet (types of features still to come are listed so
    /// subscriptions stay valid when they land).
    pub emitted: bool,
}

/// The whole catalog.
pub fn event_catalog() -> Vec<EventTypeView> {
    EventType::ALL
        .iter()
        .map(|t| EventTypeView {
            event_type: t.as_str(),
            description: t.description(),
            emitted: t.is_emitted(),
        })
        .collect()
}
