//! Structured logs: JSON lines for machines, pretty lines on a terminal; level from `RUST_LOG`
//! (default `info`). Secrets never reach this layer: handlers and middleware log ids, not values.
//! The server logs to stdout; a command whose answer is its stdout (`operator create-token`,
//! `keys rotate`) logs to stderr, so `TOKEN=$(svc-runtime operator create-token …)` captures
//! the answer alone (the database's notices, e.g. PostgreSQL's on a migrated schema, included).

use crate::cli::LogFormat;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::BoxMakeWriter;

/// Where log lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogTarget {
    /// The server's own output.
    Stdout,
    /// Beside a command's answer on stdout.
    Stderr,
}

/// Installs the global subscriber. Call once, from `main`.
pub fn init(format: LogFormat, target: LogTarget) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (writer, terminal) = match target {
        LogTarget::Stdout => (
            BoxMakeWriter::new(std::io::stdout),
            std::io::stdout().is_terminal(),
        ),
        LogTarget::Stderr => (
            BoxMakeWriter::new(std::io::stderr),
            std::io::stderr().is_terminal(),
        ),
    };
    let pretty = match format {
        LogFormat::Pretty => true,
        LogFormat::Json => false,
        LogFormat::Auto => terminal,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
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
