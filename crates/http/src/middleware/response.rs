//! Final response shaping: hands every response to the error seam's `problem::finish` (which
//! renders problem bodies with the request's `type` base and request id, and logs their internal
//! causes), and sets security headers on every response.
//!
//! This layer only knows the request (its host, scheme and id); what a problem looks like on the
//! wire is decided in [`crate::error`].

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;
use http::header::X_CONTENT_TYPE_OPTIONS;

use super::RequestId;
use super::allowed_hosts::HostPolicy;
use super::client::ClientContext;
use crate::HttpSettings;
use crate::error::problem::{self, RELATIVE_TYPE_BASE};

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

    let res = next.run(req).await;
    let mut res = problem::finish(res, || config.base_for(ctx.as_ref()), request_id.as_ref());

    // No MIME sniffing of API responses (problem bodies echo request-derived text).
    res.headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    res
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
