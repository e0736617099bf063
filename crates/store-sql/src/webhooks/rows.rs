//! Row forms of the webhook tables (subscriptions, deliveries, attempts): what a row stores, and
//! the one place where those stored values become domain types.

use crate::record::{Record, encode_strings};
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, EventId, EventType, Subscription,
    TenantId, WebhookId, WebhookSecret, WebhookUrl,
};
use svc_store::StoreError;
use time::OffsetDateTime;

/// Encodes a subscription's event types as a JSON array of their wire names.
pub(crate) fn encode_event_types(types: &[EventType]) -> Result<String, StoreError> {
    encode_strings(types.iter().map(|t| t.as_str()))
}

/// Parses an event type's wire name read from `column` of `r`.
pub(crate) fn event_type(
    r: &Record<'_>,
    column: &str,
    value: &str,
) -> Result<EventType, StoreError> {
    r.parse(column, value, |s| {
        EventType::parse(s).ok_or("not an event type of the catalog")
    })
}

/// A `webhook_subscriptions` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct SubscriptionRow {
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
    pub(crate) fn decode(self) -> Result<Subscription, StoreError> {
        let r = Record {
            table: "webhook_subscriptions",
            name: &self.id,
        };
        let event_types = r
            .strings("event_types", &self.event_types)?
            .iter()
            .map(|t| event_type(&r, "event_types", t))
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
pub(crate) struct DeliveryRow {
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
    pub(crate) fn decode(self) -> Result<Delivery, StoreError> {
        let r = Record {
            table: "webhook_deliveries",
            name: &self.id,
        };
        Ok(Delivery {
            id: r.parse("id", &self.id, DeliveryId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            webhook_id: r.parse("webhook_id", &self.webhook_id, WebhookId::parse)?,
            event_id: r.parse("event_id", &self.event_id, EventId::parse)?,
            event_type: event_type(&r, "event_type", &self.event_type)?,
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
pub(crate) struct AttemptRow {
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
    pub(crate) fn decode(self) -> Result<DeliveryAttempt, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const AT: OffsetDateTime = OffsetDateTime::UNIX_EPOCH;
    const TENANT: &str = "ten_01jd0000000000000000000000";
    const WEBHOOK: &str = "whk_01jd0000000000000000000000";
    const DELIVERY: &str = "dlv_01jd0000000000000000000000";
    const EVENT: &str = "evt_01jd0000000000000000000000";

    /// A `table.column` and how to spoil that column of a row form `R`.
    type Case<'a, R> = (&'a str, fn(&mut R));

    /// `good` decodes; each spoiled copy is Corrupt naming its `table.column`.
    fn check<R: Clone, T: std::fmt::Debug>(
        good: R,
        decode: fn(R) -> Result<T, StoreError>,
        cases: &[Case<'_, R>],
    ) {
        decode(good.clone()).unwrap();
        for (column, spoil) in cases {
            let mut bad = good.clone();
            spoil(&mut bad);
            match decode(bad) {
                Err(StoreError::Corrupt(message)) => {
                    assert!(message.contains(column), "{column}: {message}");
                }
                other => panic!("{column}: expected Corrupt, got {other:?}"),
            }
        }
    }

    fn subscription() -> SubscriptionRow {
        SubscriptionRow {
            id: WEBHOOK.into(),
            tenant_id: TENANT.into(),
            url: "https://hooks.example.com/svc".into(),
            event_types: r#"["auth.login.success","auth.logout"]"#.into(),
            description: Some("ops".into()),
            active: true,
            secret: "whsec_current".into(),
            previous_secret: Some("whsec_previous".into()),
            previous_secret_until: Some(AT),
            disabled_reason: None,
            created_at: AT,
            updated_at: AT,
        }
    }

    fn delivery() -> DeliveryRow {
        DeliveryRow {
            id: DELIVERY.into(),
            tenant_id: TENANT.into(),
            webhook_id: WEBHOOK.into(),
            event_id: EVENT.into(),
            event_type: "auth.logout".into(),
            status: "failed".into(),
            attempts: 2,
            next_attempt_at: Some(AT),
            last_status_code: Some(503),
            last_error: None,
            redelivery_of: None,
            created_at: AT,
            updated_at: AT,
        }
    }

    #[test]
    fn event_types_are_stored_as_json_arrays_of_wire_names() {
        let types = [EventType::LoginSuccess, EventType::Logout];
        let text = encode_event_types(&types).unwrap();
        assert_eq!(text, r#"["auth.login.success","auth.logout"]"#);
        let decoded = SubscriptionRow {
            event_types: text,
            ..subscription()
        }
        .decode()
        .unwrap();
        assert_eq!(decoded.event_types, types);
        assert_eq!(encode_event_types(&[]).unwrap(), "[]");
    }

    #[test]
    fn subscription_rows_decode_and_name_each_bad_column() {
        let decoded = subscription().decode().unwrap();
        assert_eq!(decoded.id.as_str(), WEBHOOK);
        assert!(decoded.active);
        let (previous, until) = decoded.previous_secret.expect("previous secret");
        assert_eq!(previous.expose(), "whsec_previous");
        assert_eq!(until, AT);
        // A previous secret without its end (or the reverse) is no previous secret.
        let half = SubscriptionRow {
            previous_secret_until: None,
            ..subscription()
        };
        assert!(half.decode().unwrap().previous_secret.is_none());
        check(
            subscription(),
            SubscriptionRow::decode,
            &[
                ("webhook_subscriptions.id", |r| r.id = DELIVERY.into()),
                ("webhook_subscriptions.tenant_id", |r| {
                    r.tenant_id = "nope".into()
                }),
                ("webhook_subscriptions.url", |r| r.url = "not a url".into()),
                ("webhook_subscriptions.event_types", |r| {
                    r.event_types = "{}".into()
                }),
                ("webhook_subscriptions.event_types", |r| {
                    r.event_types = r#"["auth.nothing"]"#.into()
                }),
            ],
        );
    }

    #[test]
    fn delivery_rows_decode_and_name_each_bad_column() {
        let decoded = delivery().decode().unwrap();
        assert_eq!(decoded.status, DeliveryStatus::Failed);
        assert_eq!(decoded.attempts, 2);
        assert_eq!(decoded.last_status_code, Some(503));
        check(
            delivery(),
            DeliveryRow::decode,
            &[
                ("webhook_deliveries.id", |r| r.id = EVENT.into()),
                ("webhook_deliveries.webhook_id", |r| {
                    r.webhook_id = TENANT.into()
                }),
                ("webhook_deliveries.event_id", |r| r.event_id = "x".into()),
                ("webhook_deliveries.event_type", |r| {
                    r.event_type = "auth.nothing".into()
                }),
                ("webhook_deliveries.status", |r| r.status = "lost".into()),
                ("webhook_deliveries.attempts", |r| r.attempts = -1),
                ("webhook_deliveries.last_status_code", |r| {
                    r.last_status_code = Some(70_000)
                }),
                ("webhook_deliveries.redelivery_of", |r| {
                    r.redelivery_of = Some(WEBHOOK.into())
                }),
            ],
        );
    }

    #[test]
    fn attempt_rows_decode_and_name_each_bad_column() {
        let attempt = AttemptRow {
            delivery_id: DELIVERY.into(),
            number: 1,
            started_at: AT,
            duration_ms: 120,
            status_code: None,
            error: Some("connection refused".into()),
        };
        let decoded = attempt.clone().decode().unwrap();
        assert_eq!((decoded.number, decoded.duration_ms), (1, 120));
        check(
            attempt,
            AttemptRow::decode,
            &[
                ("webhook_attempts.number", |r| r.number = -1),
                ("webhook_attempts.duration_ms", |r| r.duration_ms = i64::MAX),
                ("webhook_attempts.status_code", |r| r.status_code = Some(-3)),
            ],
        );
    }
}
