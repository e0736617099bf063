//! Webhooks end to end: the subscription API, signed delivery to real receivers (verified by the
//! Rust SDK and by a Python receiver using only its standard library), failures and retries, the
//! SSRF guard, and the async plane surviving a SIGKILL, a PostgreSQL outage and a second
//! instance, on SQLite and PostgreSQL.

mod api;
mod delivery;
mod python;
mod reliability;
mod sign_in;
pub(crate) mod support;
