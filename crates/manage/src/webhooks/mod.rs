//! A tenant's webhook subscriptions (spec "Tenant and operational endpoints", CONTRACTS.md
//! "Webhooks"): create (the secret generated and shown once, or supplied with 32 bytes of
//! entropy), list, read, update, delete, rotate the secret with an overlap, send a test
//! delivery, and inspect and redeliver deliveries. Every write is audited and records its
//! `admin.webhook.*` event in the same transaction.

mod create;
mod deliveries;
mod input;
mod manage;
mod view;

pub use create::create;
pub use deliveries::{delivery, list_deliveries, redeliver, send_test};
pub use input::{NewWebhook, RotateSecret, WebhookPatch};
pub use manage::{delete, get, list, rotate_secret, update};
pub use view::{
    AttemptView, CreatedWebhookView, DeliveryState, DeliveryView, EventTypeView, WebhookView,
    event_catalog,
};

use svc_domain::TargetPolicy;

/// Deployment rules for subscriptions, from `[webhooks]` and `[security]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookRules {
    /// Where receivers may be.
    pub targets: TargetPolicy,
    /// Subscriptions one tenant may have.
    pub max_per_tenant: u64,
}

/// Longest overlap after a secret rotation during which the old secret still signs: a week.
pub const MAX_SECRET_OVERLAP_SECS: u32 = 7 * 24 * 3600;
/// Overlap when a rotation names none: a day.
pub const DEFAULT_SECRET_OVERLAP_SECS: u32 = 24 * 3600;
