//! The `svc-kms` binary: parse the command line, then run keygen or the daemon. Failures are one
//! line on stderr and a non-zero exit.

use clap::Parser;
use std::process::ExitCode;
use svc_kms::cli::{Cli, Command, ServeArgs};
use svc_kms::{Server, ServerConfig, keygen};
use tokio::signal::unix::{SignalKind, signal};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Keygen(args) => keygen(&args.dir, args.force)
            .map(|report| print!("{report}"))
            .map_err(|e| e.to_string()),
        Command::Serve(args) => match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime.block_on(serve(args)),
            Err(e) => Err(format!("cannot start the async runtime: {e}")),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("svc-kms: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    svc_kms::logging::init(args.log_format);
    // Install the handlers before the socket exists: a supervisor that stops the daemon as soon
    // as it sees the socket must get a graceful stop, not the default "terminate at once".
    let mut terminate = signal(SignalKind::terminate())
        .map_err(|e| format!("cannot install the SIGTERM handler: {e}"))?;
    let mut interrupt = signal(SignalKind::interrupt())
        .map_err(|e| format!("cannot install the SIGINT handler: {e}"))?;
    let config = ServerConfig::from_files(
        &args.socket,
        &args.server_key,
        &args.client_public_key,
        &args.master_key,
        &args.retired_master_key,
    )
    .map_err(|e| e.to_string())?;
    let master_key_id = config.keyring.active_id().to_string();
    let retired: Vec<String> = config
        .keyring
        .retired_ids()
        .iter()
        .map(ToString::to_string)
        .collect();
    let server = Server::bind(config).map_err(|e| e.to_string())?;
    tracing::info!(
        socket = %args.socket.display(),
        master_key_id = %master_key_id,
        retired_master_key_ids = %retired.join(","),
        "svc-kms listening on {}",
        args.socket.display()
    );
    server
        .serve(async move {
            let signal = tokio::select! {
                _ = terminate.recv() => "SIGTERM",
                _ = interrupt.recv() => "SIGINT",
            };
            tracing::info!(signal, "shutdown requested; removing the socket");
        })
        .await;
    tracing::info!("stopped");
    Ok(())
}
