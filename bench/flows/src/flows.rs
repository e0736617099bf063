//! The flows, their per-worker setup and the measured closed loop; the probe is in `probe.rs`,
//! hosted sign-in and TOTP enrolment in `signin.rs`.

use crate::dpop::Prover;
use crate::exchange::Subject;
use crate::http::{Agent, Failure, Target, answer};
use crate::passkey::{self, Keyring};
use crate::stats::Tally;
use crate::totp::{Lease, Pool};
use crate::{FlowArgs, Kind, Server};
use anyhow::{Context, anyhow, bail};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use svc_webauthn_soft::SoftAuthenticator;
use tokio::task::JoinSet;
use url::{Position, Url};

mod probe;
mod signin;

/// Failures printed to stderr (the rest are only counted).
const LOGGED_FAILURES: usize = 5;
static LOGGED: AtomicUsize = AtomicUsize::new(0);

/// Redirects a setup flow may follow (the peer's login and consent interactions).
const SETUP_HOPS: usize = 8;

/// TOTP enrolments in flight at once (each starts with a password sign-in: one Argon2id).
const ENROL_PARALLEL: usize = 8;

/// A worker's state: its agent (cookies: the browser session) and, for refresh, its token;
/// for signin-passkey, its user's authenticator; for token-dpop, its DPoP key; for
/// token-exchange, the token it exchanges.
struct Worker {
    index: usize,
    agent: Agent,
    refresh_token: String,
    /// device-poll: the worker's device code.
    device_code: String,
    passkey: Option<SoftAuthenticator>,
    /// token-dpop: the worker's proof key.
    dpop: Option<Prover>,
    /// token-exchange: the worker's subject token.
    subject: Option<Subject>,
}

/// Everything the workers share.
pub(crate) struct Flow {
    kind: Kind,
    server: Server,
    pub(crate) target: Arc<Target>,
    redirect_uri: Url,
    pub(crate) args: FlowArgs,
    /// signin-totp: the enrolled users and their time steps.
    totp: Option<Arc<Pool>>,
    /// signin-passkey: the users' registered authenticators.
    pub(crate) passkeys: Option<Keyring>,
    /// token-dpop: `htu` of the proofs, the `token_endpoint` svc's discovery document
    /// advertises.
    dpop_htu: String,
}

fn random_b64<const N: usize>() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; N]>())
}

/// `alg` (and `typ` when present) of a JWT's header, or `none` when `value` is not a JWT.
pub(crate) fn jose(value: Option<&Value>) -> String {
    let header = value
        .and_then(Value::as_str)
        .and_then(|t| t.split('.').next())
        .and_then(|h| URL_SAFE_NO_PAD.decode(h).ok())
        .and_then(|h| serde_json::from_slice::<Value>(&h).ok());
    match header {
        Some(h) => {
            let alg = h.get("alg").and_then(Value::as_str).unwrap_or("?");
            match h.get("typ").and_then(Value::as_str) {
                Some(typ) => format!("{alg}/{typ}"),
                None => alg.to_owned(),
            }
        }
        None => "none".to_owned(),
    }
}

/// The claims of a JWT (its payload, unverified), or `None` when `value` is not one.
pub(crate) fn jwt_claims(value: Option<&Value>) -> Option<Value> {
    let payload = value?.as_str()?.split('.').nth(1)?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
}

/// The scope of the client_credentials scenarios, as in `run.sh`'s wrk `token` scenario.
const CLIENT_CREDENTIALS_SCOPE: &str = "applications:read";

/// The value of the hidden field `name` in an HTML form.
pub(crate) fn hidden_field<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker)? + marker.len();
    let len = html.get(start..)?.find('"')?;
    html.get(start..start + len)
}

/// The text of the `<dd>` right after `<dt>{label}</dt>`.
fn detail<'a>(html: &'a str, label: &str) -> Option<&'a str> {
    let marker = format!("<dt>{label}</dt><dd>");
    let start = html.find(&marker)? + marker.len();
    let len = html.get(start..)?.find("</dd>")?;
    html.get(start..start + len)
}

pub(crate) fn json(body: &str, what: &str) -> Result<Value, Failure> {
    serde_json::from_str(body).map_err(|e| answer(format!("{what}: not JSON ({e})")))
}

impl Flow {
    fn authorize_path(&self) -> &'static str {
        match self.server {
            Server::Ours => "/oauth/authorize",
            Server::Peer => "/auth",
        }
    }

    fn token_path(&self) -> &'static str {
        match self.server {
            Server::Ours => "/oauth/token",
            Server::Peer => "/token",
        }
    }

    /// The address of user number `n` (1-based).
    pub(crate) fn user_email(&self, n: usize) -> String {
        self.args.email.replace("{i}", &n.to_string())
    }

    /// The user number of worker `index`.
    fn user_of(&self, index: usize) -> usize {
        index % self.args.users.max(1) + 1
    }

    /// The user of worker `index`.
    fn email(&self, index: usize) -> String {
        self.user_email(self.user_of(index))
    }

    /// The query of `location` when it is the client's redirect URI.
    fn callback(&self, location: &str) -> Option<Url> {
        let url = Url::parse(location).ok()?;
        (url[..Position::AfterPath] == self.redirect_uri[..Position::AfterPath]).then_some(url)
    }

    /// Authorization request with the worker's cookies, following at most `hops` redirects
    /// until the redirect URI; returns the code and the PKCE verifier.
    async fn authorize(
        &self,
        w: &mut Worker,
        scope: &str,
        prompt: Option<&str>,
        hops: usize,
    ) -> Result<(String, String), Failure> {
        let verifier = random_b64::<32>();
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = random_b64::<16>();
        let nonce = random_b64::<16>();
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", self.args.client_id.as_str()),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("scope", scope),
            ("state", state.as_str()),
            ("nonce", nonce.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
        ];
        if let Some(prompt) = prompt {
            params.push(("prompt", prompt));
        }
        let mut url = self.target.url(self.authorize_path())?;
        if self.kind == Kind::AuthcodePar {
            // RFC 9126: the parameters go to the PAR endpoint (client_secret_basic); the browser
            // brings only client_id and the request_uri.
            let request_uri = self.push(w, &params).await?;
            url.query_pairs_mut()
                .append_pair("client_id", &self.args.client_id)
                .append_pair("request_uri", &request_uri);
        } else {
            url.query_pairs_mut().extend_pairs(&params);
        }
        for _ in 0..hops {
            let reply = w
                .agent
                .get(url.clone())
                .await?
                .expect(&[302, 303], &format!("GET {}", url.path()))?;
            let location = reply.location("authorize")?;
            if let Some(callback) = self.callback(location) {
                let mut code = None;
                let mut returned_state = None;
                let mut error = None;
                for (k, v) in callback.query_pairs() {
                    match k.as_ref() {
                        "code" => code = Some(v.into_owned()),
                        "state" => returned_state = Some(v.into_owned()),
                        "error" | "error_description" => {
                            error = Some(format!("{} {k}={v}", error.unwrap_or_default()));
                        }
                        _ => {}
                    }
                }
                if let Some(error) = error {
                    return Err(answer(format!("authorize:{error}")));
                }
                if returned_state.as_deref() != Some(state.as_str()) {
                    return Err(answer("authorize: state missing or changed"));
                }
                let code = code.ok_or_else(|| answer("authorize: redirect without code"))?;
                return Ok((code, verifier));
            }
            url = self.target.follow(location)?;
        }
        Err(answer(format!(
            "authorize: no code after {hops} redirect(s), next was {}",
            &url[Position::BeforePath..]
        )))
    }

    /// Pushes an authorization request to svc's `/oauth/par` (RFC 9126 §2): its `request_uri`.
    async fn push(&self, w: &mut Worker, params: &[(&str, &str)]) -> Result<String, Failure> {
        let url = self.target.url("/oauth/par")?;
        let reply = w
            .agent
            .post(url, params, true)
            .await?
            .expect(&[201], "par")?;
        json(&reply.body, "par")?
            .get("request_uri")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| answer("par: no request_uri"))
    }

    /// Code → tokens at the token endpoint (client_secret_basic).
    async fn exchange(&self, w: &mut Worker, code: &str, verifier: &str) -> Result<Value, Failure> {
        let url = self.target.url(self.token_path())?;
        let reply = w
            .agent
            .post(
                url,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", code),
                    ("redirect_uri", self.redirect_uri.as_str()),
                    ("code_verifier", verifier),
                ],
                true,
            )
            .await?
            .expect(&[200], "token (authorization_code)")?;
        let tokens = json(&reply.body, "token (authorization_code)")?;
        if tokens.get("access_token").and_then(Value::as_str).is_none() {
            return Err(answer("token (authorization_code): no access_token"));
        }
        Ok(tokens)
    }

    /// One full flow: authorize → code → token.
    async fn code_flow(
        &self,
        w: &mut Worker,
        scope: &str,
        prompt: Option<&str>,
        hops: usize,
    ) -> Result<Value, Failure> {
        let (code, verifier) = self.authorize(w, scope, prompt, hops).await?;
        self.exchange(w, &code, &verifier).await
    }

    /// One rotation: the worker's refresh token → a new one (kept for the next rotation).
    async fn rotate(&self, w: &mut Worker) -> Result<Value, Failure> {
        let url = self.target.url(self.token_path())?;
        let reply = w
            .agent
            .post(
                url,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &w.refresh_token),
                ],
                true,
            )
            .await?
            .expect(&[200], "token (refresh_token)")?;
        let tokens = json(&reply.body, "token (refresh_token)")?;
        let next = tokens
            .get("refresh_token")
            .and_then(Value::as_str)
            .ok_or_else(|| answer("token (refresh_token): no refresh_token (not rotated)"))?;
        if next == w.refresh_token {
            return Err(answer(
                "token (refresh_token): the same refresh token came back",
            ));
        }
        w.refresh_token = next.to_owned();
        Ok(tokens)
    }

    /// Starts a device authorization (RFC 8628 §3.1) as the client: its `device_code`.
    async fn start_device(&self, w: &mut Worker) -> Result<String, Failure> {
        let url = self.target.url("/oauth/device/code")?;
        let reply = w
            .agent
            .post(url, &[("scope", "openid")], true)
            .await?
            .expect(&[200], "device authorization")?;
        json(&reply.body, "device authorization")?
            .get("device_code")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| answer("device authorization: no device_code"))
    }

    /// One poll (RFC 8628 §3.4): `authorization_pending`, or `slow_down` when it came sooner
    /// than the interval; anything else is a failure.
    async fn poll_device(&self, w: &mut Worker) -> Result<(), Failure> {
        let url = self.target.url(self.token_path())?;
        let reply = w
            .agent
            .post(
                url,
                &[
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ("device_code", &w.device_code),
                ],
                true,
            )
            .await?
            .expect(&[400], "token (device_code)")?;
        let body = json(&reply.body, "token (device_code)")?;
        match body.get("error").and_then(Value::as_str) {
            Some("authorization_pending" | "slow_down") => Ok(()),
            other => Err(answer(format!("token (device_code): error {other:?}"))),
        }
    }

    /// One client_credentials request (client_secret_basic) with `proof` in a `DPoP` header
    /// when set: 200 with an access token of `token_type` DPoP with a proof, Bearer without.
    pub(crate) async fn client_credentials(
        &self,
        agent: &mut Agent,
        proof: Option<String>,
    ) -> Result<Value, Failure> {
        let url = self.target.url(self.token_path())?;
        let bound = proof.is_some();
        let what = if bound {
            "token (client_credentials, DPoP)"
        } else {
            "token (client_credentials)"
        };
        let reply = agent
            .post_with_proof(
                url,
                &[
                    ("grant_type", "client_credentials"),
                    ("scope", CLIENT_CREDENTIALS_SCOPE),
                ],
                true,
                proof,
            )
            .await?
            .expect(&[200], what)?;
        let tokens = json(&reply.body, what)?;
        if tokens.get("access_token").and_then(Value::as_str).is_none() {
            return Err(answer(format!("{what}: no access_token")));
        }
        let expected = if bound { "DPoP" } else { "Bearer" };
        let token_type = tokens.get("token_type").and_then(Value::as_str);
        if !token_type.is_some_and(|t| t.eq_ignore_ascii_case(expected)) {
            return Err(answer(format!(
                "{what}: token_type {token_type:?}, expected {expected}"
            )));
        }
        Ok(tokens)
    }

    /// A fresh proof of the worker's key.
    fn proof(w: &Worker) -> Result<String, Failure> {
        w.dpop
            .as_ref()
            .ok_or_else(|| answer("token-dpop without a key"))?
            .proof()
            .map_err(|e| answer(format!("{e:#}")))
    }

    /// A worker ready for the measured loop (not measured).
    async fn setup(&self, index: usize) -> Result<Worker, Failure> {
        let mut w = Worker {
            index,
            agent: Agent::new(self.target.clone()),
            refresh_token: String::new(),
            device_code: String::new(),
            passkey: None,
            dpop: None,
            subject: None,
        };
        let hops = match self.server {
            Server::Ours => 1,
            Server::Peer => SETUP_HOPS,
        };
        match self.kind {
            Kind::Signin | Kind::SigninTotp | Kind::TokenFlows => {}
            Kind::TokenExchange => w.subject = Some(self.subject_token(&mut w.agent).await?),
            Kind::TokenDpop => {
                // One key per worker for the whole run, as a client keeps its DPoP key.
                w.dpop = Some(
                    Prover::generate(self.dpop_htu.clone())
                        .map_err(|e| answer(format!("DPoP key: {e:#}")))?,
                );
            }
            Kind::SigninPasskey => {
                // Registered before the workers' setup (one registration per user).
                let keyring = self
                    .passkeys
                    .as_ref()
                    .ok_or_else(|| answer("signin-passkey without passkeys"))?;
                w.passkey = Some(keyring.get(self.user_of(index))?);
            }
            Kind::Authcode | Kind::AuthcodePar => {
                // ours: a first-party application, so the session is all it takes; peer: the
                // first flow goes through login and consent, which the peer then remembers.
                if self.server == Server::Ours {
                    self.ours_sign_in(&mut w).await?;
                }
                self.code_flow(&mut w, "openid", None, hops).await?;
            }
            Kind::DevicePoll => w.device_code = self.start_device(&mut w).await?,
            Kind::Refresh => {
                // oidc-provider keeps offline_access only with prompt=consent.
                let prompt = match self.server {
                    Server::Ours => None,
                    Server::Peer => Some("consent"),
                };
                if self.server == Server::Ours {
                    self.ours_sign_in(&mut w).await?;
                }
                let tokens = self
                    .code_flow(&mut w, "openid offline_access", prompt, hops)
                    .await?;
                w.refresh_token = tokens
                    .get("refresh_token")
                    .and_then(Value::as_str)
                    .ok_or_else(|| answer("code flow with offline_access: no refresh_token"))?
                    .to_owned();
            }
        }
        Ok(w)
    }

    /// One measured iteration (signin-totp: as the lease's user).
    async fn iterate(&self, w: &mut Worker, lease: Option<&Lease>) -> Result<(), Failure> {
        match self.kind {
            Kind::Refresh => self.rotate(w).await.map(drop),
            Kind::DevicePoll => self.poll_device(w).await,
            Kind::TokenFlows => self.client_credentials(&mut w.agent, None).await.map(drop),
            Kind::TokenExchange => {
                let subject = w
                    .subject
                    .as_ref()
                    .ok_or_else(|| answer("token-exchange without a subject token"))?;
                self.exchange_own(&mut w.agent, subject).await.map(drop)
            }
            Kind::TokenDpop => {
                // Signed inside the iteration: the proof's cost is part of what is measured.
                let proof = Self::proof(w)?;
                self.client_credentials(&mut w.agent, Some(proof))
                    .await
                    .map(drop)
            }
            Kind::Authcode | Kind::AuthcodePar => {
                self.code_flow(w, "openid", None, 1).await.map(drop)
            }
            Kind::Signin => {
                // A new browser each time: no cookies, a fresh CSRF token, a new session.
                w.agent.clear_cookies();
                self.ours_sign_in(w).await
            }
            Kind::SigninTotp => {
                let lease = lease.ok_or_else(|| answer("signin-totp without a user"))?;
                w.agent.clear_cookies();
                self.totp_sign_in(w, lease).await
            }
            Kind::SigninPasskey => {
                // A new browser each time, like signin (the authenticator is the worker's).
                w.agent.clear_cookies();
                let soft = w
                    .passkey
                    .as_mut()
                    .ok_or_else(|| answer("signin-passkey without a passkey"))?;
                self.passkey_sign_in(&mut w.agent, soft).await
            }
        }
    }

    /// Closed loop until `deadline`. The iteration in flight at the deadline runs to its end but
    /// is not counted: dropping it would disconnect mid-request, and svc's PostgreSQL pool does
    /// not survive a request cancelled during `BEGIN` (see bench/README.md).
    async fn work(self: Arc<Self>, mut w: Worker, deadline: Instant) -> Tally {
        let mut tally = Tally::default();
        loop {
            if Instant::now() >= deadline {
                break;
            }
            // signin-totp: a user with a time step to spend (waiting, untimed, if none is).
            let lease = match &self.totp {
                Some(pool) => match pool.take(self.args.users, deadline).await {
                    Some(lease) => Some(lease),
                    None => break,
                },
                None => None,
            };
            // token-exchange: a subject token close to expiry is replaced outside the timing, as
            // a client would before presenting it.
            if let Some(subject) = w.subject.as_mut()
                && subject.is_old()
                && let Ok(fresh) = self.subject_token(&mut w.agent).await
            {
                *subject = fresh;
            }
            let t0 = Instant::now();
            if t0 >= deadline {
                break;
            }
            let outcome = self.iterate(&mut w, lease.as_ref()).await;
            drop(lease);
            let done = Instant::now();
            if done > deadline {
                break;
            }
            match outcome {
                Ok(()) => tally.record(done - t0),
                Err(failure) => {
                    if LOGGED.fetch_add(1, Ordering::Relaxed) < LOGGED_FAILURES {
                        eprintln!("worker {}: {failure}", w.index);
                    }
                    match failure {
                        Failure::Answer(_) => tally.non2xx += 1,
                        Failure::Transport(_) => tally.sockerr += 1,
                    }
                    if self.kind == Kind::Refresh && Instant::now() < deadline {
                        // The chain may be broken (or the family revoked): start a new one.
                        if let Ok(fresh) = self.setup(w.index).await {
                            w = fresh;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
        tally
    }
}

fn with_suffix(path: &std::path::Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// Creates `<gate>.ready` and waits (at most 10 minutes) for `<gate>.go`. At the end of the
/// measured window the driver creates `<gate>.done` (before draining the iterations in flight).
async fn wait_at_gate(gate: &std::path::Path) -> anyhow::Result<()> {
    std::fs::write(with_suffix(gate, ".ready"), b"").context("writing the ready file")?;
    let go = with_suffix(gate, ".go");
    let start = Instant::now();
    while !go.exists() {
        if start.elapsed() > Duration::from_secs(600) {
            bail!("nobody opened the gate {}", go.display());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

/// The `token_endpoint` of svc's discovery document (not measured): the `htu` of every proof.
async fn advertised_token_endpoint(target: &Arc<Target>) -> anyhow::Result<String> {
    let mut agent = Agent::new(target.clone());
    let url = target
        .url("/.well-known/openid-configuration")
        .map_err(|f| anyhow!("{f}"))?;
    let reply = agent
        .get(url)
        .await
        .and_then(|r| r.expect(&[200], "GET /.well-known/openid-configuration"))
        .map_err(|f| anyhow!("{f}"))?;
    let discovery = json(&reply.body, "discovery").map_err(|f| anyhow!("{f}"))?;
    let endpoint = discovery
        .get("token_endpoint")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("discovery: no token_endpoint"))?;
    let algs = discovery
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array);
    if !algs.is_some_and(|a| a.iter().any(|v| v == "ES256")) {
        bail!("discovery: dpop_signing_alg_values_supported does not list ES256 ({algs:?})");
    }
    Ok(endpoint.to_owned())
}

pub(crate) async fn run(kind: Kind, mut args: FlowArgs) -> anyhow::Result<()> {
    let signs_in = matches!(kind, Kind::Signin | Kind::SigninTotp | Kind::SigninPasskey);
    if signs_in && args.server != Server::Ours {
        bail!(
            "signin, signin-totp and signin-passkey are svc's hosted pages only (the peer has \
             no password sign-in)"
        );
    }
    if kind == Kind::AuthcodePar && args.server != Server::Ours {
        bail!("authcode-par runs against svc only (the peer is not configured for PAR)");
    }
    if kind == Kind::DevicePoll && args.server != Server::Ours {
        bail!(
            "device-poll runs against svc only (the peer is not configured for the device grant)"
        );
    }
    if matches!(
        kind,
        Kind::TokenFlows | Kind::TokenDpop | Kind::TokenExchange
    ) && args.server != Server::Ours
    {
        bail!(
            "token-flows, token-dpop and token-exchange run against svc only (the peer is not \
             configured for DPoP or token exchange, and token-flows is their baseline)"
        );
    }
    if kind == Kind::SigninPasskey && args.host.is_none() {
        args.host = passkey::localhost_for_ip(&args.base_url)?;
    }
    if !signs_in && (args.client_id.is_empty() || args.client_secret.is_empty()) {
        bail!("--client-id and --client-secret are required");
    }
    // A device's polls need no person (nobody signs in: the request stays pending), nor do
    // client_credentials and the exchange of its token.
    let needs_person = signs_in
        || (args.server == Server::Ours
            && !matches!(
                kind,
                Kind::DevicePoll | Kind::TokenFlows | Kind::TokenDpop | Kind::TokenExchange
            ));
    if needs_person && args.password.is_empty() {
        bail!("--password (or BENCH_USER_PASSWORD) is required");
    }
    let target = Arc::new(Target::new(
        &args.base_url,
        args.host.as_deref(),
        &args.client_id,
        &args.client_secret,
        Duration::from_secs(args.timeout),
    )?);
    let totp = match kind {
        Kind::SigninTotp => Some(Arc::new(Pool::load(args.totp_state.as_deref())?)),
        _ => None,
    };
    let passkeys = (kind == Kind::SigninPasskey).then(Keyring::default);
    let dpop_htu = if kind == Kind::TokenDpop {
        advertised_token_endpoint(&target).await?
    } else {
        String::new()
    };
    let flow = Arc::new(Flow {
        kind,
        server: args.server,
        target,
        redirect_uri: Url::parse(&args.redirect_uri).context("--redirect-uri")?,
        args,
        totp,
        passkeys,
        dpop_htu,
    });
    // signin-totp: every user the run may sign in as has an authenticator (the probe uses
    // user 1 only). Not measured: this happens before the gate.
    if let Some(pool) = &flow.totp {
        let count = if flow.args.probe {
            1
        } else {
            flow.args.users.max(1)
        };
        flow.enrol_missing(pool, count).await?;
    }
    // signin-passkey: every user the workers sign in as has this run's passkey (the probe's
    // worker is user 1). Not measured either.
    if flow.passkeys.is_some() {
        let count = if flow.args.probe {
            1
        } else {
            flow.args.concurrency.max(1).min(flow.args.users.max(1))
        };
        flow.register_passkeys(count).await?;
    }
    if flow.args.probe {
        let outcome = flow.probe().await;
        if let Some(pool) = &flow.totp {
            pool.save()?;
        }
        return outcome;
    }

    let concurrency = flow.args.concurrency.max(1);
    let mut setups = JoinSet::new();
    for index in 0..concurrency {
        let flow = flow.clone();
        setups.spawn(async move { (index, flow.setup(index).await) });
    }
    let mut workers = Vec::with_capacity(concurrency);
    while let Some(joined) = setups.join_next().await {
        let (index, worker) = joined.context("a setup task died")?;
        workers.push(worker.map_err(|f| anyhow!("setup of worker {index}: {f}"))?);
    }
    if let Some(gate) = &flow.args.gate {
        wait_at_gate(gate).await?;
    }

    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(flow.args.duration);
    let mut running = JoinSet::new();
    for w in workers {
        running.spawn(flow.clone().work(w, deadline));
    }
    tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
    if let Some(gate) = &flow.args.gate {
        std::fs::write(with_suffix(gate, ".done"), b"").context("writing the done file")?;
    }
    let mut total = Tally::default();
    while let Some(joined) = running.join_next().await {
        total.merge(joined.context("a worker died")?);
    }
    // Only iterations that ended within the window are counted.
    total.elapsed = deadline - start;
    total.print();
    // The steps spent by this run (in flight at the end too) stay spent for the next one.
    if let Some(pool) = &flow.totp {
        pool.save()?;
        println!("{}", pool.summary(flow.args.users.max(1)));
    }
    Ok(())
}
