//! [`ProtocolRequest`]: the one prelude of the client-authenticated protocol endpoints
//! (`/oauth/token`, `/oauth/introspect`, `/oauth/revoke`), as an extractor so a handler cannot
//! skip a step or take them in another order:
//!
//! 1. the host's tenant (unknown host 404, suspended tenant 403, as on every surface);
//! 2. the body, within `max_request_body_bytes`;
//! 3. `Content-Type: application/x-www-form-urlencoded` (RFC 6749 §3.2, RFC 7662 §2.1,
//!    RFC 7009 §2.1), else `invalid_request` in RFC 6749 §5.2 JSON;
//! 4. throttling per client, as claimed by `client_id` or the Basic user name, and per client
//!    address (`server.endpoint_throttle`), before any credential is compared, so a guessing
//!    client is slowed before it costs a hash.

use crate::ClientContext;
use crate::error::{self, Problem};
use crate::tenancy::{CurrentTenant, TenantResolver};
use crate::throttle::Throttle;
use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Request};
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;
use svc_oauth::OAuthError;
use svc_oauth::token::client_id_hint;

/// The state of a route whose one engine `E` serves a client-authenticated protocol endpoint
/// beside the token endpoint (`/oauth/par`, `/oauth/device/code`): what the prelude needs, and
/// the engine.
pub struct EndpointState<E> {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The engine.
    pub endpoint: Arc<E>,
    /// Request throttling (the same budgets as the token endpoint's).
    pub throttle: Arc<Throttle>,
}

// By hand: a derive would ask `E: Clone`, and only the `Arc` is cloned.
impl<E> Clone for EndpointState<E> {
    fn clone(&self) -> Self {
        Self {
            tenants: self.tenants.clone(),
            endpoint: Arc::clone(&self.endpoint),
            throttle: Arc::clone(&self.throttle),
        }
    }
}

impl<E> FromRef<EndpointState<E>> for TenantResolver {
    fn from_ref(state: &EndpointState<E>) -> Self {
        state.tenants.clone()
    }
}

impl<E> FromRef<EndpointState<E>> for Arc<Throttle> {
    fn from_ref(state: &EndpointState<E>) -> Self {
        Arc::clone(&state.throttle)
    }
}

/// A protocol request that passed the prelude: its tenant, its form pairs and its
/// `Authorization` header (client authentication is the engine's to check).
#[derive(Debug)]
pub(crate) struct ProtocolRequest {
    /// The host's tenant and its issuer.
    pub(crate) current: CurrentTenant,
    /// The form pairs in request order, repeats kept (the engine refuses repeats, RFC 6749 §3.2).
    pub(crate) form: Vec<(String, String)>,
    authorization: Option<String>,
    /// The `DPoP` header (RFC 9449 §4.1): none, one, or why it is refused (two of them).
    dpop: Result<Option<String>, svc_oauth::dpop::DpopProofError>,
    /// The client address (the peer, or what a trusted proxy forwarded).
    pub(crate) peer: Option<std::net::IpAddr>,
}

impl ProtocolRequest {
    /// The `Authorization` header, when present and visible ASCII.
    pub(crate) fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }

    /// The `DPoP` header, for the engine to verify.
    pub(crate) fn dpop_proof(&self) -> svc_oauth::dpop::ProofHeader<'_> {
        match &self.dpop {
            Ok(proof) => Ok(proof.as_deref()),
            Err(e) => Err(e.clone()),
        }
    }
}

impl<S> FromRequest<S> for ProtocolRequest
where
    S: Send + Sync,
    TenantResolver: FromRef<S>,
    Arc<Throttle>: FromRef<S>,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = req.into_parts();
        // 1.
        let current = CurrentTenant::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let client = ClientContext::from_request_parts(&mut parts, state)
            .await
            .unwrap_or_else(|never| match never {});
        let is_form = is_form(&parts.headers);
        let authorization = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let dpop = svc_oauth::dpop::proof_header(&parts.headers).map(|p| p.map(str::to_owned));
        // 2.
        let body = Bytes::from_request(Request::from_parts(parts, body), state)
            .await
            .map_err(IntoResponse::into_response)?;
        // 3.
        if !is_form {
            return Err(error::oauth::response(&OAuthError::invalid_request(
                "the body must be application/x-www-form-urlencoded",
            )));
        }
        let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
        // 4.
        let throttle = Arc::<Throttle>::from_ref(state);
        if let Some(retry_after) = throttled(
            &throttle,
            &current,
            &client,
            &form,
            authorization.as_deref(),
        )
        .await
        {
            return Err(Problem::rate_limited(retry_after).into_response());
        }
        Ok(Self {
            current,
            form,
            authorization,
            dpop,
            peer: client.ip,
        })
    }
}

/// Whether the media type (parameters aside, case-insensitive) is a URL-encoded form.
fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
        .unwrap_or(false)
}

/// How long to wait, when the claimed client (keyed within its tenant) or the address is over
/// its budget.
async fn throttled(
    throttle: &Throttle,
    current: &CurrentTenant,
    client: &ClientContext,
    form: &[(String, String)],
    authorization: Option<&str>,
) -> Option<std::time::Duration> {
    let tenant_key = current.tenant.id.as_str();
    let client_key =
        client_id_hint(form, authorization).map(|c| format!("{tenant_key}:client:{c}"));
    let ip_key = client.ip.map(|ip| format!("ip:{ip}"));
    for key in [client_key, ip_key].into_iter().flatten() {
        if let Err(wait) = throttle.check(&key).await {
            return Some(wait);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn only_url_encoded_forms_are_forms() {
        let mut headers = HeaderMap::new();
        assert!(!is_form(&headers), "no content type");
        for (value, expected) in [
            ("application/x-www-form-urlencoded", true),
            ("Application/X-WWW-Form-URLEncoded; charset=UTF-8", true),
            ("application/json", false),
            ("multipart/form-data; boundary=x", false),
        ] {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
            assert_eq!(is_form(&headers), expected, "{value}");
        }
    }
}
