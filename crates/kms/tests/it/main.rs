//! The integration test binary of svc-kms: real Unix sockets in temporary directories, the daemon
//! in-process and as the real `svc-kms` binary. One binary, one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod auth;
mod binary;
mod frames;
mod lifecycle;
mod service;
mod support;
