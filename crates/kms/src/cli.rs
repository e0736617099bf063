//! The `svc-kms` command line: `keygen` to create the key files, `serve` to run the daemon.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// svc key-management daemon.
///
/// Holds the master key on this host and never reveals it: the runtime asks it, over a Unix
/// socket authenticated with Noise KK static keys, to wrap and unwrap data keys. Run `svc-kms
/// keygen --dir DIR` once, give the runtime kms-server.pub and kms-client.key, then run `svc-kms
/// serve` with the other three files.
#[derive(Debug, Parser)]
#[command(name = "svc-kms", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the server and client key pairs and the master key in a directory. Existing key
    /// pairs are kept unless --force; an existing master key is never replaced.
    Keygen(KeygenArgs),
    /// Run the daemon until SIGTERM or SIGINT (which remove the socket on the way out).
    Serve(ServeArgs),
}

/// `svc-kms keygen ...`
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Directory to write kms-server.key, kms-server.pub, kms-client.key, kms-client.pub and
    /// kms-master.key to (created with mode 0700 if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Replace existing key pairs (both ends must then be given the new files). The master key
    /// is never replaced.
    #[arg(long)]
    pub force: bool,
}

/// `svc-kms serve ...`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Unix socket to listen on (created with mode 0600; a stale one is replaced).
    #[arg(long, env = "KMS_SOCKET", value_name = "PATH")]
    pub socket: PathBuf,

    /// This daemon's private key (kms-server.key, mode 0600).
    #[arg(long, env = "KMS_SERVER_KEY", value_name = "PATH")]
    pub server_key: PathBuf,

    /// The only client public key accepted (kms-client.pub).
    #[arg(long, env = "KMS_CLIENT_PUBLIC_KEY", value_name = "PATH")]
    pub client_public_key: PathBuf,

    /// The master key that wraps (kms-master.key, mode 0600). It must exist: serve never creates
    /// one, so a mistyped path cannot silently start a new, unbacked-up key.
    #[arg(long, env = "KMS_MASTER_KEY", value_name = "PATH")]
    pub master_key: PathBuf,

    /// Former master keys that still unwrap what they wrapped (repeatable; in the environment,
    /// comma-separated).
    #[arg(
        long,
        env = "KMS_RETIRED_MASTER_KEYS",
        value_name = "PATH",
        value_delimiter = ','
    )]
    pub retired_master_key: Vec<PathBuf>,

    /// Log format: `json` (one object per line) or `pretty`.
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
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
        for needle in ["keygen", "serve"] {
            assert!(help.contains(needle), "--help lacks {needle}");
        }
        let mut cmd = Cli::command();
        let serve = cmd
            .find_subcommand_mut("serve")
            .unwrap()
            .render_long_help()
            .to_string();
        for needle in [
            "--socket",
            "--server-key",
            "--client-public-key",
            "--master-key",
            "--retired-master-key",
            "KMS_SOCKET",
        ] {
            assert!(serve.contains(needle), "serve --help lacks {needle}");
        }
        assert!(
            !serve.contains("SVC_"),
            "environment names must not use the runtime's SVC_ prefix"
        );
    }

    #[test]
    fn serve_takes_repeated_retired_keys() {
        let cli = Cli::try_parse_from([
            "svc-kms",
            "serve",
            "--socket",
            "s",
            "--server-key",
            "k",
            "--client-public-key",
            "c",
            "--master-key",
            "m",
            "--retired-master-key",
            "r1",
            "--retired-master-key",
            "r2",
        ])
        .unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(
            args.retired_master_key,
            [PathBuf::from("r1"), PathBuf::from("r2")]
        );
        assert_eq!(args.log_format, LogFormat::Json);
    }
}
