//! Final response shaping: renders problem bodies with the request's `type` base and request
//! id, logs their internal causes, and sets security headers on every response.
//!
//! This is the second half of the response-extension pattern described in [`crate::problem`]:
//! handlers return [`Problem`]s without seeing the request; this layer sees both. It also turns
//! axum's plain-text 413 extractor rejection into a `payload_too_large` problem, so the body
//! limit answers in one format whichever layer noticed it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use http::{HeaderValue, StatusCode};

use super::RequestId;
use super::allowed_hosts::HostPolicy;
use super::client::ClientContext;
use crate::HttpSettings;
use crate::problem::{Problem, ProblemExtension, RELATIVE_TYPE_BASE};

/// What the renderer needs from the settings, compiled once.
#[derive(Debug)]
pub(crate) struct RenderConfig {
    error_type_base: Option<String>,
    hosts: Arc<HostPolicy>,
}

impl RenderConfig {
    pub(crate) fn new(settings: &HttpSettings, hosts: Arc<HostPolicy>) -> Self {
        Self {
            error_type_base: settings
                .error_type_base
                .as_deref()
                .map(|b| b.trim_end_matches('/').to_owned())
                .filter(|b| !b.is_empty()),
            hosts,
        }
    }

    /// The configured base, else `{scheme}://{host}/problems` when the host is known and
    /// allowed (a refused host must not be echoed into `type`), else a relative base.
    fn base_for(&self, ctx: Option<&ClientContext>) -> String {
        if let Some(base) = &self.error_type_base {
            return base.clone();
        }
        match ctx.and_then(|c| Some((c, c.host.as_deref()?, c.hostname()?))) {
            Some((ctx, host, hostname)) if self.hosts.allows(hostname) => {
                format!("{}://{host}/problems", ctx.scheme)
            }
            _ => RELATIVE_TYPE_BASE.to_owned(),
        }
    }
}

/// Renders problems and adds security headers.
pub(crate) async fn finish_response(
    State(config): State<Arc<RenderConfig>>,
    req: Request,
    next: Next,
) -> Response {
    let request_id = req.extensions().get::<RequestId>().cloned();
    let ctx = req.extensions().get::<ClientContext>().cloned();

    let mut res = next.run(req).await;

    let problem = match res.extensions_mut().remove::<ProblemExtension>() {
        Some(ProblemExtension(problem)) => Some(problem),
        // A hosted page renders its own 413 for a browser; only bare rejections become problems.
        None if res.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_html(&res) => {
            Some(Arc::new(Problem::payload_too_large()))
        }
        None => None,
    };
    if let Some(problem) = problem {
        log_problem(&problem, request_id.as_ref());
        let base = config.base_for(ctx.as_ref());
        let rendered = problem.to_response(&base, request_id.as_ref().map(RequestId::as_str));
        let (rendered_parts, body) = rendered.into_parts();
        let (mut parts, _provisional) = res.into_parts();
        // Keep headers others added on the way out (`Allow`, `WWW-Authenticate`,
        // `x-request-id`); replace only what describes the body.
        parts.status = rendered_parts.status;
        parts.headers.remove(CONTENT_LENGTH);
        for name in [CONTENT_TYPE, CACHE_CONTROL] {
            if let Some(value) = rendered_parts.headers.get(&name) {
                parts.headers.insert(name, value.clone());
            }
        }
        for (name, value) in &rendered_parts.headers {
            if !parts.headers.contains_key(name) {
                parts.headers.insert(name.clone(), value.clone());
            }
        }
        res = Response::from_parts(parts, body);
    }

    // No MIME sniffing of API responses (problem bodies echo request-derived text).
    res.headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    res
}

/// Whether a response is an HTML page (a hosted page), which is never replaced by a problem.
fn is_html(res: &Response) -> bool {
    res.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

/// Internal causes go to the logs with the request id, never to the client.
fn log_problem(problem: &Problem, request_id: Option<&RequestId>) {
    let request_id = request_id.map(RequestId::as_str);
    let cause = problem.internal_source().map(|source| {
        let mut chain = source.to_string();
        let mut next = source.source();
        while let Some(err) = next {
            chain.push_str(": ");
            chain.push_str(&err.to_string());
            next = err.source();
        }
        chain
    });
    if problem.status().is_server_error() {
        tracing::error!(
            request_id,
            status = problem.status().as_u16(),
            error = problem.error(),
            cause = cause.as_deref(),
            "request failed with a server error"
        );
    } else if let Some(cause) = cause {
        tracing::debug!(
            request_id,
            status = problem.status().as_u16(),
            error = problem.error(),
            cause,
            "request refused"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(scheme: &'static str, host: &str) -> ClientContext {
        ClientContext {
            ip: None,
            scheme,
            host: Some(host.to_owned()),
        }
    }

    fn config(base: Option<&str>, hosts: &[&str]) -> RenderConfig {
        let settings = HttpSettings {
            error_type_base: base.map(str::to_owned),
            ..HttpSettings::default()
        };
        let hosts = hosts.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>();
        RenderConfig::new(&settings, Arc::new(HostPolicy::new(&hosts)))
    }

    #[test]
    fn configured_base_wins_and_loses_its_trailing_slash() {
        let c = config(Some("https://docs.example.com/errors/"), &[]);
        assert_eq!(
            c.base_for(Some(&ctx("http", "x.example"))),
            "https://docs.example.com/errors"
        );
    }

    #[test]
    fn base_follows_request_scheme_and_host_with_port() {
        let c = config(None, &[]);
        assert_eq!(
            c.base_for(Some(&ctx("https", "acme.example.com:8443"))),
            "https://acme.example.com:8443/problems"
        );
    }

    #[test]
    fn unknown_or_refused_host_gives_relative_base() {
        let c = config(None, &["id.example.com"]);
        assert_eq!(c.base_for(None), "/problems");
        assert_eq!(c.base_for(Some(&ctx("https", "evil.example"))), "/problems");
        assert_eq!(
            c.base_for(Some(&ctx("https", "id.example.com"))),
            "https://id.example.com/problems"
        );
    }
}
