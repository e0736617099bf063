//! The daemon's logs: JSON lines by default (level from `RUST_LOG`, default `info`). Only ids,
//! operations, contexts and reasons are ever logged; key material and plaintexts never reach this
//! layer.

use crate::cli::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Call once, from `main`.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let result = match format {
        LogFormat::Pretty => builder.compact().try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init(),
    };
    // A second init (tests) keeps the first subscriber; nothing to do.
    drop(result);
}
