//! Structured logs: JSON lines for machines, pretty lines on a terminal; level from `RUST_LOG`
//! (default `info`). Secrets never reach this layer: handlers and middleware log ids, not values.

use crate::cli::LogFormat;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Call once, from `main`.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let pretty = match format {
        LogFormat::Pretty => true,
        LogFormat::Json => false,
        LogFormat::Auto => std::io::stdout().is_terminal(),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let result = if pretty {
        builder.compact().try_init()
    } else {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    };
    // A second init (tests) keeps the first subscriber; nothing to do.
    drop(result);
}
