//! Webhook delivery of svc (spec "Events", CONTRACTS.md "Webhooks (`svc-webhook-v1`)"), run on
//! the async plane:
//!
//! - [`relay`]: fans the outbox (events recorded in the same transaction as their change) out
//!   to the active subscriptions that want each event's type;
//! - [`worker`]: claims due deliveries with a lease, sends them, records each attempt and
//!   schedules the next one, reaps the leases of workers that stopped;
//! - [`send`]: one signed HTTP attempt and its [`Outcome`];
//! - [`retry`]: the schedule with jitter and `Retry-After`;
//! - [`egress`]: the SSRF guard, an HTTP client whose resolver refuses internal addresses;
//! - [`metrics`]: attempts by outcome, latency, queue depth and age.
//!
//! This crate knows the storage ports, not a database, and no HTTP server framework. The
//! subscription API lives in `svc-manage`; the signature suite in `svc-crypto`.

pub mod egress;
pub mod metrics;
pub mod relay;
pub mod retry;
pub mod send;
pub mod worker;

pub use egress::{Lookup, SystemLookup, guarded_client, guarded_client_builder};
pub use metrics::WebhookMetrics;
pub use relay::Relay;
pub use retry::{Outcome, RetryPolicy};
pub use send::Sender;
pub use worker::{DeliveryWorker, WorkerSettings};
