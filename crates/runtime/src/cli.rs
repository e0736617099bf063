//! The `svc-runtime` command line: serve (the default), migrate, and inspect configuration.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// svc identity and access service.
///
/// With no arguments it serves on http://127.0.0.1:8080 with an embedded SQLite database under
/// ./data/ (development mode). Configuration comes from built-in defaults, then `svc.toml` in the
/// working directory (or the file named by --config or SVC_CONFIG_FILE), then SVC_* environment
/// variables (SVC_SECTION__KEY, lists as JSON arrays), which win. See svc.example.toml.
#[derive(Debug, Parser)]
#[command(name = "svc-runtime", version, about, long_about)]
pub struct Cli {
    /// Configuration file to read instead of ./svc.toml (also SVC_CONFIG_FILE).
    #[arg(long, value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,

    /// Apply database migrations (database.migration_url, else every runtime database) and exit.
    #[arg(long)]
    pub migrate_only: bool,

    /// Log format: `json` (one object per line), `pretty`, or `auto` (pretty on a terminal).
    #[arg(long, value_enum, default_value_t = LogFormat::Auto, global = true)]
    pub log_format: LogFormat,

    /// What to do; serving is the default.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service (the default when no command is given). The plane comes from
    /// SVC_RUNTIME_PLANE (auth, control, async, or all when all-in-one is allowed).
    Serve,
    /// Manage signing keys.
    Keys {
        /// Which operation.
        #[command(subcommand)]
        action: KeysAction,
    },
    /// Manage control-plane operator tokens.
    Operator {
        /// Which operation.
        #[command(subcommand)]
        action: OperatorAction,
    },
    /// Inspect configuration.
    Config {
        /// Which inspection.
        #[command(subcommand)]
        action: ConfigAction,
    },
}

/// `svc-runtime config ...`
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Validate the configuration (all problems at once) and print the effective configuration
    /// with every secret redacted. Exits non-zero when it is invalid.
    Check,
    /// Print the example configuration generated from the configuration types.
    Example,
}

/// `svc-runtime keys ...`
#[derive(Debug, Subcommand)]
pub enum KeysAction {
    /// Rotate a tenant's signing keys now (e.g. after a suspected compromise): new keys sign at
    /// once; the old ones stay in JWKS until every token they signed has expired. Needs [kms]:
    /// ephemeral development keys rotate by restarting the process.
    Rotate {
        /// The tenant's slug.
        #[arg(long, value_name = "SLUG")]
        tenant: String,
    },
}

/// `svc-runtime operator ...`
#[derive(Debug, Subcommand)]
pub enum OperatorAction {
    /// Create an operator token for /api/v1/control-plane/*. The token is printed once on
    /// stdout; only its hash is stored.
    CreateToken {
        /// Who or what the token is for (shown in the audit log).
        #[arg(long, value_name = "NAME")]
        name: String,
    },
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Pretty when stdout is a terminal, JSON otherwise.
    Auto,
    /// One JSON object per line.
    Json,
    /// Human-readable lines.
    Pretty,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent_and_documents_every_command() {
        Cli::command().debug_assert();
        let help = Cli::command().render_long_help().to_string();
        for needle in [
            "--migrate-only",
            "--config",
            "--log-format",
            "serve",
            "config",
        ] {
            assert!(help.contains(needle), "--help lacks {needle}");
        }
    }
}
