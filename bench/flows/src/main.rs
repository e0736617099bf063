//! `svc-bench-flows`: the load driver `bench/run.sh` uses for the scenarios that take more than
//! one request — refresh-token rotation, the authorization-code flow with an existing browser
//! session (plain, or pushed first to `/oauth/par`), the device grant's polls, password sign-in, password sign-in with a TOTP second factor, passkey sign-in — for
//! client_credentials with a fresh DPoP proof per request and its baseline without one (one
//! request each, but a proof has to be signed per request, which wrk cannot do), for the token
//! exchange of a client's own client_credentials token (one request, against that baseline), for
//! the raw Argon2id rate of svc's default parameters and for the raw cost of one ES256 proof's
//! signature and verification (`p256-cost`).
//!
//! Every load subcommand sets up its workers first (not measured), optionally waits at a gate so
//! that `run.sh` can sample the server's CPU time after the setup, runs `--concurrency` workers
//! in a closed loop for `--duration` seconds and prints one line in the format of
//! `bench/lib/wrk.lua`'s `done()`:
//!
//! `BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d non2xx=%d sockerr=%d`
//!
//! where a request is one completed iteration (one rotation, one flow, one sign-in, one hash),
//! latencies are per iteration, `non2xx` counts iterations that failed on an unexpected answer
//! and `sockerr` transport errors (including a request timeout). See `bench/README.md`.

mod argon;
mod dpop;
mod exchange;
mod flows;
mod http;
mod passkey;
mod stats;
mod totp;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "svc-bench-flows", about = "Flow load driver for bench/run.sh")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Refresh-token rotation: each worker holds its own refresh token (from one code flow with
    /// `offline_access` in the setup) and exchanges it in a loop, keeping the rotated one.
    Refresh(FlowArgs),
    /// Authorization-code flow with an existing browser session: authorize (PKCE S256, state,
    /// nonce, scope openid) → 302/303 with a code → token. One iteration is one flow.
    Authcode(FlowArgs),
    /// The same flow with a pushed authorization request (RFC 9126): POST /oauth/par
    /// (client_secret_basic) → 201 request_uri, then authorize with client_id and request_uri
    /// → 303 with a code → token. svc only. One iteration is one flow.
    #[command(name = "authcode-par", alias = "authcode_par")]
    AuthcodePar(FlowArgs),
    /// Device grant polling (RFC 8628 §3.4): each worker starts its own device authorization
    /// in the setup (POST /oauth/device/code, client_secret_basic, scope openid), which nobody
    /// approves, and polls the token endpoint in a closed loop. One iteration is one poll,
    /// answered 400 `authorization_pending` or (sooner than the interval) `slow_down`: both
    /// record the poll in the database first. svc only.
    #[command(name = "device-poll", alias = "device_poll")]
    DevicePoll(FlowArgs),
    /// Password sign-in on svc's hosted page: GET /auth/sign-in (CSRF cookie and field), then
    /// POST email + password expecting 303. Each iteration starts without cookies.
    Signin(FlowArgs),
    /// Password sign-in with a TOTP second factor on svc's hosted pages: GET + POST
    /// /auth/sign-in (303 to /auth/second-factor), GET + POST /auth/second-factor with the
    /// current code (303 to /auth/account with a session). Each iteration starts without
    /// cookies; users are enrolled once (`--totp-state`) and never replay a time step.
    #[command(name = "signin-totp", alias = "signin_totp")]
    SigninTotp(FlowArgs),
    /// Passkey sign-in on svc's hosted pages: GET /auth/sign-in (CSRF), POST
    /// /auth/passkey/options (ceremony cookie + request options), the assertion of a software
    /// authenticator, POST /auth/passkey (303 to /auth/account with a session). Each iteration
    /// starts without cookies; every user's passkey is registered in the setup (password
    /// sign-in, /auth/account/passkeys), not measured. svc needs `[passkey] enabled = true`.
    #[command(name = "signin-passkey", alias = "signin_passkey")]
    SigninPasskey(FlowArgs),
    /// client_credentials without DPoP, the baseline of `token-dpop`: POST /oauth/token
    /// (client_secret_basic, `scope=applications:read`) → 200 with `token_type` Bearer. The
    /// same requests as `token-dpop` minus the `DPoP` header, from the same driver. svc only.
    #[command(name = "token-flows", alias = "token_flows")]
    TokenFlows(FlowArgs),
    /// DPoP-bound client_credentials (RFC 9449): the same request with a `DPoP` header, a new
    /// proof per request (random `jti`, current `iat`, `htm` POST, `htu` the advertised token
    /// endpoint) signed by the worker's ES256 key (generated in the setup) → 200 with
    /// `token_type` DPoP. svc only (the peer is not configured for DPoP).
    #[command(name = "token-dpop", alias = "token_dpop")]
    TokenDpop(FlowArgs),
    /// Token exchange (RFC 8693) of the client's own client_credentials token (taken in the
    /// setup, renewed untimed every two minutes): POST /oauth/token (client_secret_basic)
    /// with the exchange grant, `subject_token` and `subject_token_type` access_token → 200
    /// with `issued_token_type` access_token. The client needs both grants. svc only; compare
    /// with `token-flows`.
    #[command(name = "token-exchange", alias = "token_exchange")]
    TokenExchange(FlowArgs),
    /// Raw Argon2id hash rate with svc's default `[auth]` parameters on `--threads` threads.
    Argon2(Argon2Args),
    /// Prints svc's default Argon2 parameters as `key=value` lines (for run.sh).
    Argon2Defaults,
    /// The cost of one ES256 proof on this machine, one thread, nothing else running: its
    /// verification (what svc cannot avoid per DPoP request) and its signature (what the client
    /// cannot avoid). Prints `verify_us=` and `sign_us=` lines (for run.sh).
    #[command(name = "p256-cost", alias = "p256_cost")]
    P256Cost(P256Args),
}

#[derive(Args, Clone, Debug)]
struct P256Args {
    /// Seconds for each of the two measurements.
    #[arg(long, default_value_t = 3.0)]
    duration: f64,
}

/// Which server the driver talks to: the paths and the sign-in interaction differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Server {
    /// svc: `/oauth/authorize`, `/oauth/token`, `/auth/sign-in`.
    Ours,
    /// node oidc-provider (`bench/peer`): `/auth`, `/token`, non-interactive `/interaction/…`.
    Peer,
}

#[derive(Args, Clone, Debug)]
struct FlowArgs {
    /// Server kind.
    #[arg(long, value_enum)]
    server: Server,
    /// Where to connect, e.g. `http://127.0.0.1:8080`. signin-passkey without `--host`: an IP
    /// address here is addressed as `localhost` (Host header and WebAuthn origin), since a
    /// WebAuthn RP ID must be a domain.
    #[arg(long)]
    base_url: String,
    /// Host header to send (svc's tenant host, e.g. `bench.localhost:8080`); absolute redirects
    /// to this host are sent to `--base-url`.
    #[arg(long)]
    host: Option<String>,
    /// Workers (each one connection at a time, closed loop).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds of measured load after the setup.
    #[arg(long, default_value_t = 4.0)]
    duration: f64,
    /// Confidential client (client_secret_basic) for the code flow and refresh; for token-flows
    /// and token-dpop, a client with the client_credentials grant (svc: the tenant's
    /// management application); for token-exchange, one with client_credentials and the
    /// exchange grant.
    #[arg(long, default_value = "")]
    client_id: String,
    /// Its secret.
    #[arg(
        long,
        env = "BENCH_CLIENT_SECRET",
        default_value = "",
        hide_env_values = true
    )]
    client_secret: String,
    /// Registered redirect URI of that client (never fetched).
    #[arg(long, default_value = "http://127.0.0.1/cb")]
    redirect_uri: String,
    /// Sign-in address of user number `{i}` (1-based; worker w uses user (w mod users) + 1).
    #[arg(long, default_value = "bench-user-{i}@bench.example")]
    email: String,
    /// How many distinct users exist.
    #[arg(long, default_value_t = 1)]
    users: usize,
    /// Their password.
    #[arg(
        long,
        env = "BENCH_USER_PASSWORD",
        default_value = "",
        hide_env_values = true
    )]
    password: String,
    /// After the setup, create `<gate>.ready` and wait for `<gate>.go` before measuring.
    #[arg(long)]
    gate: Option<PathBuf>,
    /// Set up one worker, run one checked iteration and print a `PROBE` line instead of loading.
    #[arg(long)]
    probe: bool,
    /// signin-totp: file that keeps the users' TOTP keys and spent time steps between runs
    /// against one server (created when missing; users without a key are enrolled first).
    #[arg(long)]
    totp_state: Option<PathBuf>,
    /// Tokio worker threads of the driver (1 = a single-threaded runtime, like `wrk -t1`).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Per-request timeout in seconds (a timeout counts as a socket error).
    #[arg(long, default_value_t = 60)]
    timeout: u64,
}

#[derive(Args, Clone, Debug)]
struct Argon2Args {
    /// Threads hashing at once.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds.
    #[arg(long, default_value_t = 4.0)]
    duration: f64,
}

/// Which flow a load subcommand runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Refresh,
    Authcode,
    AuthcodePar,
    DevicePoll,
    Signin,
    SigninTotp,
    SigninPasskey,
    TokenFlows,
    TokenDpop,
    TokenExchange,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Argon2Defaults => {
            argon::print_defaults();
            Ok(())
        }
        Command::Argon2(args) => argon::run(args.threads, args.duration).map(|t| t.print()),
        Command::P256Cost(args) => dpop::print_costs(args.duration),
        Command::Refresh(args) => run_flow(Kind::Refresh, args),
        Command::Authcode(args) => run_flow(Kind::Authcode, args),
        Command::AuthcodePar(args) => run_flow(Kind::AuthcodePar, args),
        Command::DevicePoll(args) => run_flow(Kind::DevicePoll, args),
        Command::Signin(args) => run_flow(Kind::Signin, args),
        Command::SigninTotp(args) => run_flow(Kind::SigninTotp, args),
        Command::SigninPasskey(args) => run_flow(Kind::SigninPasskey, args),
        Command::TokenFlows(args) => run_flow(Kind::TokenFlows, args),
        Command::TokenDpop(args) => run_flow(Kind::TokenDpop, args),
        Command::TokenExchange(args) => run_flow(Kind::TokenExchange, args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("svc-bench-flows: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_flow(kind: Kind, args: FlowArgs) -> anyhow::Result<()> {
    let runtime = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()?
    };
    runtime.block_on(flows::run(kind, args))
}
