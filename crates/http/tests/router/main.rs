//! Black-box tests of [`svc_http::router`] through `tower::ServiceExt::oneshot`: every test
//! builds its own app, with its own metrics registry and health flags.

// clippy.toml allows these inside `#[test]` functions only; the shared helpers and the stand-in
// plane routes of this test binary should fail just as loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod health;
mod hosts_and_proxies;
mod limits;
mod logging;
mod metrics;
mod problems;
