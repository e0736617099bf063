//! One browser-like HTTP agent per worker: a shared connection pool, the worker's own cookies
//! (handled by hand: name → value, host-only, paths ignored), no automatic redirects.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, HOST, LOCATION, SET_COOKIE};
use reqwest::{Client, Method};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Why an iteration failed: counted as `non2xx` or `sockerr`.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server answered something the flow does not expect.
    Answer(String),
    /// Connection error or timeout.
    Transport(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Answer(m) => write!(f, "unexpected answer: {m}"),
            Failure::Transport(m) => write!(f, "transport error: {m}"),
        }
    }
}

pub(crate) fn answer(message: impl Into<String>) -> Failure {
    Failure::Answer(message.into())
}

/// What every worker shares: where to connect, how to address the server, the client
/// credentials.
#[derive(Debug)]
pub(crate) struct Target {
    client: Client,
    /// Where requests go (`http://127.0.0.1:PORT`).
    base: Url,
    /// The server's own origin (`http://bench.localhost:PORT` for svc, else `base`): absolute
    /// redirects to it are sent to `base`.
    public: Url,
    host: Option<String>,
    basic: String,
}

impl Target {
    pub(crate) fn new(
        base: &str,
        host: Option<&str>,
        client_id: &str,
        client_secret: &str,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let base = Url::parse(base)?;
        let public = match host {
            Some(h) => Url::parse(&format!("{}://{h}/", base.scheme()))?,
            None => base.clone(),
        };
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .tcp_nodelay(true)
            .pool_max_idle_per_host(1024)
            .build()?;
        Ok(Self {
            client,
            base,
            public,
            host: host.map(str::to_owned),
            basic: format!(
                "Basic {}",
                STANDARD.encode(format!("{client_id}:{client_secret}"))
            ),
        })
    }

    /// `path` on the server.
    pub(crate) fn url(&self, path: &str) -> Result<Url, Failure> {
        self.base
            .join(path)
            .map_err(|e| answer(format!("bad path {path}: {e}")))
    }

    /// The server's own origin as a browser there sees it (`http://bench.localhost:PORT`): the
    /// issuer, and the WebAuthn origin of svc's passkey ceremonies.
    pub(crate) fn origin(&self) -> String {
        self.public.origin().ascii_serialization()
    }

    /// Where to send a request for `location` (relative, or absolute on the server's origin).
    pub(crate) fn follow(&self, location: &str) -> Result<Url, Failure> {
        let mut url = self
            .public
            .join(location)
            .map_err(|e| answer(format!("bad Location {location}: {e}")))?;
        if url.origin() != self.public.origin() {
            return Err(answer(format!("redirect off the server: {location}")));
        }
        url.set_host(self.base.host_str())
            .map_err(|e| answer(format!("redirect {location}: {e}")))?;
        url.set_port(self.base.port())
            .map_err(|()| answer(format!("redirect {location}: cannot set the port")))?;
        Ok(url)
    }
}

/// One answer, body read in full (so the connection goes back to the pool).
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    pub(crate) body: String,
}

impl Reply {
    /// The answer itself when its status is one of `expected`.
    pub(crate) fn expect(self, expected: &[u16], what: &str) -> Result<Reply, Failure> {
        if expected.contains(&self.status) {
            Ok(self)
        } else {
            let snippet: String = self.body.chars().take(300).collect();
            Err(answer(format!(
                "{what}: HTTP {} (expected {expected:?}) location={:?} body={snippet}",
                self.status, self.location
            )))
        }
    }

    /// The Location header of a redirect.
    pub(crate) fn location(&self, what: &str) -> Result<&str, Failure> {
        self.location
            .as_deref()
            .ok_or_else(|| answer(format!("{what}: HTTP {} without Location", self.status)))
    }
}

/// A worker's agent: its cookies, the shared target.
#[derive(Debug)]
pub(crate) struct Agent {
    pub(crate) target: Arc<Target>,
    cookies: Vec<(String, String)>,
}

impl Agent {
    pub(crate) fn new(target: Arc<Target>) -> Self {
        Self {
            target,
            cookies: Vec::new(),
        }
    }

    pub(crate) fn clear_cookies(&mut self) {
        self.cookies.clear();
    }

    /// The value of the first cookie whose name ends with `suffix` (`svc_csrf` matches
    /// `__Host-svc_csrf` too).
    pub(crate) fn cookie(&self, suffix: &str) -> Option<&str> {
        self.cookies
            .iter()
            .find(|(name, _)| name.ends_with(suffix))
            .map(|(_, value)| value.as_str())
    }

    fn store(&mut self, set_cookie: &str) {
        let mut parts = set_cookie.split(';');
        let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else {
            return;
        };
        let (name, value) = (name.trim(), value.trim());
        let expired = value.is_empty()
            || parts.any(|attr| {
                let attr = attr.trim().to_ascii_lowercase();
                attr == "max-age=0" || attr.starts_with("max-age=-")
            });
        self.cookies.retain(|(n, _)| n != name);
        if !expired {
            self.cookies.push((name.to_owned(), value.to_owned()));
        }
    }

    /// GET `url` with the worker's cookies.
    pub(crate) async fn get(&mut self, url: Url) -> Result<Reply, Failure> {
        self.send(Method::GET, url, None, false, None).await
    }

    /// POST a form to `url` with the worker's cookies, with client authentication when `basic`.
    pub(crate) async fn post(
        &mut self,
        url: Url,
        fields: &[(&str, &str)],
        basic: bool,
    ) -> Result<Reply, Failure> {
        self.post_with_proof(url, fields, basic, None).await
    }

    /// POST a form like [`Agent::post`], with a `DPoP` header (RFC 9449) when `proof` is set.
    pub(crate) async fn post_with_proof(
        &mut self,
        url: Url,
        fields: &[(&str, &str)],
        basic: bool,
        proof: Option<String>,
    ) -> Result<Reply, Failure> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        self.send(Method::POST, url, Some(body), basic, proof).await
    }

    async fn send(
        &mut self,
        method: Method,
        url: Url,
        body: Option<String>,
        basic: bool,
        proof: Option<String>,
    ) -> Result<Reply, Failure> {
        let target = self.target.clone();
        let mut request = target.client.request(method, url);
        if let Some(host) = &target.host {
            request = request.header(HOST, host);
        }
        if basic {
            request = request.header(AUTHORIZATION, &target.basic);
        }
        if let Some(proof) = proof {
            request = request.header("dpop", proof);
        }
        if !self.cookies.is_empty() {
            let header = self
                .cookies
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join("; ");
            request = request.header(COOKIE, header);
        }
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure::Transport(format!("{e:#}")))?;
        let status = response.status().as_u16();
        for value in response.headers().get_all(SET_COOKIE) {
            if let Ok(value) = value.to_str() {
                self.store(value);
            }
        }
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response
            .text()
            .await
            .map_err(|e| Failure::Transport(format!("{e:#}")))?;
        Ok(Reply {
            status,
            location,
            body,
        })
    }
}
