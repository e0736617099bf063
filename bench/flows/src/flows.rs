//! The three flows, their per-worker setup, the measured closed loop and the probe.

use crate::http::{Agent, Failure, Target, answer};
use crate::stats::Tally;
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
use tokio::task::JoinSet;
use url::{Position, Url};

/// Failures printed to stderr (the rest are only counted).
const LOGGED_FAILURES: usize = 5;
static LOGGED: AtomicUsize = AtomicUsize::new(0);

/// Redirects a setup flow may follow (the peer's login and consent interactions).
const SETUP_HOPS: usize = 8;

/// A worker's state: its agent (cookies: the browser session) and, for refresh, its token.
struct Worker {
    index: usize,
    agent: Agent,
    refresh_token: String,
}

/// Everything the workers share.
struct Flow {
    kind: Kind,
    server: Server,
    target: Arc<Target>,
    redirect_uri: Url,
    args: FlowArgs,
}

fn random_b64<const N: usize>() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; N]>())
}

/// `alg` (and `typ` when present) of a JWT's header, or `none` when `value` is not a JWT.
fn jose(value: Option<&Value>) -> String {
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

/// The value of the hidden field `name` in an HTML form.
fn hidden_field<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker)? + marker.len();
    let len = html.get(start..)?.find('"')?;
    html.get(start..start + len)
}

fn json(body: &str, what: &str) -> Result<Value, Failure> {
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

    fn email(&self, index: usize) -> String {
        let n = index % self.args.users.max(1) + 1;
        self.args.email.replace("{i}", &n.to_string())
    }

    /// svc's hosted sign-in: GET the page (CSRF cookie + hidden field), POST the credentials,
    /// expect 303 and a session cookie.
    async fn ours_sign_in(&self, w: &mut Worker) -> Result<(), Failure> {
        let url = self.target.url("/auth/sign-in")?;
        let page = w
            .agent
            .get(url.clone())
            .await?
            .expect(&[200], "GET /auth/sign-in")?;
        let field = hidden_field(&page.body, "csrf")
            .ok_or_else(|| answer("GET /auth/sign-in: no csrf field"))?
            .to_owned();
        if w.agent.cookie("svc_csrf") != Some(field.as_str()) {
            return Err(answer(
                "GET /auth/sign-in: the csrf cookie does not match the field",
            ));
        }
        let email = self.email(w.index);
        w.agent
            .post(
                url,
                &[
                    ("csrf", &field),
                    ("email", &email),
                    ("password", &self.args.password),
                ],
                false,
            )
            .await?
            .expect(&[303], "POST /auth/sign-in")?;
        if w.agent.cookie("svc_session").is_none() {
            return Err(answer("POST /auth/sign-in: 303 without a session cookie"));
        }
        Ok(())
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
        let mut url = self.target.url(self.authorize_path())?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &self.args.client_id)
                .append_pair("redirect_uri", self.redirect_uri.as_str())
                .append_pair("scope", scope)
                .append_pair("state", &state)
                .append_pair("nonce", &random_b64::<16>())
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256");
            if let Some(prompt) = prompt {
                q.append_pair("prompt", prompt);
            }
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

    /// A worker ready for the measured loop (not measured).
    async fn setup(&self, index: usize) -> Result<Worker, Failure> {
        let mut w = Worker {
            index,
            agent: Agent::new(self.target.clone()),
            refresh_token: String::new(),
        };
        let hops = match self.server {
            Server::Ours => 1,
            Server::Peer => SETUP_HOPS,
        };
        match self.kind {
            Kind::Signin => {}
            Kind::Authcode => {
                // ours: a first-party application, so the session is all it takes; peer: the
                // first flow goes through login and consent, which the peer then remembers.
                if self.server == Server::Ours {
                    self.ours_sign_in(&mut w).await?;
                }
                self.code_flow(&mut w, "openid", None, hops).await?;
            }
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

    /// One measured iteration.
    async fn iterate(&self, w: &mut Worker) -> Result<(), Failure> {
        match self.kind {
            Kind::Refresh => self.rotate(w).await.map(drop),
            Kind::Authcode => self.code_flow(w, "openid", None, 1).await.map(drop),
            Kind::Signin => {
                // A new browser each time: no cookies, a fresh CSRF token, a new session.
                w.agent.clear_cookies();
                self.ours_sign_in(w).await
            }
        }
    }

    /// Closed loop until `deadline`. The iteration in flight at the deadline runs to its end but
    /// is not counted: dropping it would disconnect mid-request, and svc's PostgreSQL pool does
    /// not survive a request cancelled during `BEGIN` (see bench/README.md).
    async fn work(self: Arc<Self>, mut w: Worker, deadline: Instant) -> Tally {
        let mut tally = Tally::default();
        loop {
            let t0 = Instant::now();
            if t0 >= deadline {
                break;
            }
            let outcome = self.iterate(&mut w).await;
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

    /// One worker, one checked iteration, one `PROBE` line.
    async fn probe(&self) -> anyhow::Result<()> {
        let mut w = self.setup(0).await.map_err(|f| anyhow!("setup: {f}"))?;
        let facts = match self.kind {
            Kind::Refresh => {
                let old = w.refresh_token.clone();
                let tokens = self.rotate(&mut w).await.map_err(|f| anyhow!("{f}"))?;
                // Presenting the rotated token again must be refused.
                let url = self
                    .target
                    .url(self.token_path())
                    .map_err(|f| anyhow!("{f}"))?;
                let reuse = w
                    .agent
                    .post(
                        url,
                        &[("grant_type", "refresh_token"), ("refresh_token", &old)],
                        true,
                    )
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                if reuse.status != 400 || !reuse.body.contains("invalid_grant") {
                    bail!(
                        "a rotated refresh token was not refused: HTTP {} {}",
                        reuse.status,
                        reuse.body.chars().take(200).collect::<String>()
                    );
                }
                format!(
                    "access_token={} id_token={} rotated=yes old_token_refused=yes",
                    jose(tokens.get("access_token")),
                    jose(tokens.get("id_token"))
                )
            }
            Kind::Authcode => {
                let tokens = self
                    .code_flow(&mut w, "openid", None, 1)
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                format!(
                    "access_token={} id_token={} refresh_token={} consent_remembered=yes",
                    jose(tokens.get("access_token")),
                    jose(tokens.get("id_token")),
                    if tokens.get("refresh_token").is_some() {
                        "yes"
                    } else {
                        "no"
                    }
                )
            }
            Kind::Signin => {
                self.iterate(&mut w).await.map_err(|f| anyhow!("{f}"))?;
                "status=303 session_cookie=yes".to_owned()
            }
        };
        println!("PROBE ok {facts}");
        Ok(())
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

pub(crate) async fn run(kind: Kind, args: FlowArgs) -> anyhow::Result<()> {
    if kind == Kind::Signin && args.server != Server::Ours {
        bail!("signin is svc's hosted page only (the peer has no password sign-in)");
    }
    if kind != Kind::Signin && (args.client_id.is_empty() || args.client_secret.is_empty()) {
        bail!("--client-id and --client-secret are required");
    }
    if (kind == Kind::Signin || args.server == Server::Ours) && args.password.is_empty() {
        bail!("--password (or BENCH_USER_PASSWORD) is required");
    }
    let target = Arc::new(Target::new(
        &args.base_url,
        args.host.as_deref(),
        &args.client_id,
        &args.client_secret,
        Duration::from_secs(args.timeout),
    )?);
    let flow = Arc::new(Flow {
        kind,
        server: args.server,
        target,
        redirect_uri: Url::parse(&args.redirect_uri).context("--redirect-uri")?,
        args,
    });
    if flow.args.probe {
        return flow.probe().await;
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
    Ok(())
}
