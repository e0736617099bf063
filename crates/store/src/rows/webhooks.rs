//! Row forms of the webhook tables: subscriptions, deliveries and attempts.

use super::{Record, encode_strings};
use crate::StoreError;
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, EventId, EventType, Subscription,
    TenantId, WebhookId, WebhookSecret, WebhookUrl,
};
use time::OffsetDateTime;

/// Encodes a subscription's event types as a JSON array of their wire names.
pub fn encode_event_types(types: &[EventType]) -> Result<String, StoreError> {
    encode_strings(types.iter().map(|t| t.as_str()))
}

/// A `webhook_subscriptions` row as stored.
#[derive(Debug, Clone)]
pub struct SubscriptionRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `url`.
    pub url: String,
    /// `event_types` (JSON array text).
    pub event_types: String,
    /// `description`.
    pub description: Option<String>,
    /// `active`.
    pub active: bool,
    /// `secret`.
    pub secret: String,
    /// `previous_secret`.
    pub previous_secret: Option<String>,
    /// `previous_secret_until`.
    pub previous_secret_until: Option<OffsetDateTime>,
    /// `disabled_reason`.
    pub disabled_reason: Option<String>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
}

impl SubscriptionRow {
    /// The subscription this row stores.
    pub fn decode(self) -> Result<Subscription, StoreError> {
        let r = Record {
            table: "webhook_subscriptions",
            name: &self.id,
        };
        let event_types = r
            .strings("event_types", &self.event_types)?
            .iter()
            .map(|t| {
                r.parse("event_types", t, |s| {
                    EventType::parse(s).ok_or("not an event type of the catalog")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let previous_secret = match (self.previous_secret, self.previous_secret_until) {
            (Some(secret), Some(until)) => Some((WebhookSecret::from_stored(secret), until)),
            _ => None,
        };
        Ok(Subscription {
            id: r.parse("id", &self.id, WebhookId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            url: r.parse("url", &self.url, WebhookUrl::parse)?,
            event_types,
            description: self.description,
            active: self.active,
            secret: WebhookSecret::from_stored(self.secret),
            previous_secret,
            disabled_reason: self.disabled_reason,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `webhook_deliveries` row as stored.
#[derive(Debug, Clone)]
pub struct DeliveryRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `webhook_id`.
    pub webhook_id: String,
    /// `event_id`.
    pub event_id: String,
    /// `event_type`.
    pub event_type: String,
    /// `status`.
    pub status: String,
    /// `attempts`.
    pub attempts: i64,
    /// `next_attempt_at`.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// `last_status_code`.
    pub last_status_code: Option<i64>,
    /// `last_error`.
    pub last_error: Option<String>,
    /// `redelivery_of`.
    pub redelivery_of: Option<String>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
}

impl DeliveryRow {
    /// The delivery this row stores.
    pub fn decode(self) -> Result<Delivery, StoreError> {
        let r = Record {
            table: "webhook_deliveries",
            name: &self.id,
        };
        Ok(Delivery {
            id: r.parse("id", &self.id, DeliveryId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            webhook_id: r.parse("webhook_id", &self.webhook_id, WebhookId::parse)?,
            event_id: r.parse("event_id", &self.event_id, EventId::parse)?,
            event_type: r.parse("event_type", &self.event_type, |s| {
                EventType::parse(s).ok_or("not an event type of the catalog")
            })?,
            status: r.parse("status", &self.status, |s| {
                DeliveryStatus::parse(s).ok_or("unknown status")
            })?,
            attempts: r.parse("attempts", &self.attempts.to_string(), str::parse::<u32>)?,
            next_attempt_at: self.next_attempt_at,
            last_status_code: self
                .last_status_code
                .map(|c| r.parse("last_status_code", &c.to_string(), str::parse::<u16>))
                .transpose()?,
            last_error: self.last_error,
            redelivery_of: r.parse_opt(
                "redelivery_of",
                self.redelivery_of.as_deref(),
                DeliveryId::parse,
            )?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `webhook_attempts` row as stored.
#[derive(Debug, Clone)]
pub struct AttemptRow {
    /// `delivery_id`, for messages.
    pub delivery_id: String,
    /// `number`.
    pub number: i64,
    /// `started_at`.
    pub started_at: OffsetDateTime,
    /// `duration_ms`.
    pub duration_ms: i64,
    /// `status_code`.
    pub status_code: Option<i64>,
    /// `error`.
    pub error: Option<String>,
}

impl AttemptRow {
    /// The attempt this row stores.
    pub fn decode(self) -> Result<DeliveryAttempt, StoreError> {
        let name = format!("{} attempt {}", self.delivery_id, self.number);
        let r = Record {
            table: "webhook_attempts",
            name: &name,
        };
        Ok(DeliveryAttempt {
            number: r.parse("number", &self.number.to_string(), str::parse::<u32>)?,
            started_at: self.started_at,
            duration_ms: r.parse(
                "duration_ms",
                &self.duration_ms.to_string(),
                str::parse::<u32>,
            )?,
            status_code: self
                .status_code
                .map(|c| r.parse("status_code", &c.to_string(), str::parse::<u16>))
                .transpose()?,
            error: self.error,
        })
    }
}
