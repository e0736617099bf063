//! Store-backed tests of the sign-in engine: each test runs on its own fresh SQLite database
//! with a manual clock, cheap Argon2 parameters and a log mailer writing to a temporary file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod breached;
mod captcha;
mod devices;
mod events;
mod links;
mod recovery;
mod sign_in;
mod sign_up;
mod smtp;
mod support;
mod two_factor;
