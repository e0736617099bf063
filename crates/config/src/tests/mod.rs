//! Crate-level tests: loading through [`crate::load`] with injected sources (never the process
//! environment), production as a whole, redaction, the refusal of what this version does not
//! have, and the generated example file.

mod example;
mod layering;
mod production;
mod redaction;
pub(crate) mod support;
mod unavailable;
