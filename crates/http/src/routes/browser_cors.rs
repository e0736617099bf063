//! CORS on the endpoints a single-page application calls from the browser: `/oauth/token`,
//! `/oauth/revoke` and `/userinfo` (never `/oauth/introspect`, which is for resource servers).
//! Which origins: those of the tenant's public applications' redirect URIs
//! ([`svc_oauth::browser_origins`]).
//!
//! - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed
//!   origin is `204` with that origin, the endpoint's methods, the headers a client sends
//!   (`Authorization`, `Content-Type`, `DPoP`) and a 10-minute `Access-Control-Max-Age`;
//!   from any other origin it is `403` without CORS headers, so the browser sends nothing.
//! - An actual request from an allowed origin gets `Access-Control-Allow-Origin: <origin>` and
//!   the headers a client needs to read exposed (`WWW-Authenticate`, `Retry-After`,
//!   `DPoP-Nonce`). Never `Access-Control-Allow-Credentials`: these endpoints take no cookies.
//! - Every answer of these paths carries `Vary: Origin`, so a shared cache never hands one
//!   origin's answer to another.
//! - A request without `Origin` (a server, curl) passes untouched; an unknown host passes to
//!   the endpoint, which refuses it as it always does.

use super::token::TokenState;
use crate::tenancy::CurrentTenant;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_METHOD, ORIGIN,
    VARY,
};
use http::{HeaderValue, Method, StatusCode};

/// The methods each browser-facing path serves; other paths get no CORS.
fn methods(path: &str) -> Option<&'static str> {
    match path {
        "/oauth/token" | "/oauth/revoke" => Some("POST"),
        "/userinfo" => Some("GET, POST"),
        _ => None,
    }
}

/// The CORS layer of the token routes.
pub(super) async fn cors(
    State(state): State<TokenState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(methods) = methods(request.uri().path()) else {
        return next.run(request).await;
    };
    let origin = request
        .headers()
        .get(ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let Some(origin) = origin else {
        return vary(next.run(request).await);
    };
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(ACCESS_CONTROL_REQUEST_METHOD);
    let (mut parts, body) = request.into_parts();
    let allowed = match CurrentTenant::from_request_parts(&mut parts, &state).await {
        Ok(current) => match state
            .browser_origins
            .allows(&current.tenant.id, &origin)
            .await
        {
            Ok(allowed) => allowed,
            Err(e) => {
                tracing::warn!(error = %e, "browser origins unavailable: no CORS answer");
                false
            }
        },
        Err(_) => false,
    };
    if preflight {
        if !allowed {
            return vary(StatusCode::FORBIDDEN.into_response());
        }
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let headers = response.headers_mut();
        headers.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(methods),
        );
        headers.insert(
            ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, dpop"),
        );
        headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        return allow(vary(response), &origin);
    }
    let response = vary(next.run(Request::from_parts(parts, body)).await);
    if !allowed {
        return response;
    }
    let mut response = allow(response, &origin);
    response.headers_mut().insert(
        ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("www-authenticate, retry-after, dpop-nonce"),
    );
    response
}

/// `OPTIONS` that is not a preflight from an allowed origin (which the layer answers first).
pub(super) async fn no_preflight() -> crate::Problem {
    crate::Problem::method_not_allowed()
}

fn vary(mut response: Response) -> Response {
    response
        .headers_mut()
        .append(VARY, HeaderValue::from_static("origin"));
    response
}

fn allow(mut response: Response, origin: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(origin) {
        response
            .headers_mut()
            .insert(ACCESS_CONTROL_ALLOW_ORIGIN, value);
    }
    response
}
