//! Access log: exactly one structured `tracing` event per request, at info level, with target
//! `svc_http::access`.
//!
//! Fields: `request_id`, `method`, `route` (the matched template, bounded), `path` (WITHOUT the
//! query string: queries carry authorization codes, tokens and state), `status`, `latency_ms`,
//! `client_ip`. Headers are never logged; the router also marks credential-bearing headers
//! sensitive so a `Debug` print of a request redacts them.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use super::{RequestId, client::ClientContext, route_label};

/// Emits the access-log event once the inner layers have produced the response head.
pub(crate) async fn access_log(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let route = route_label(&req);
    let request_id = req.extensions().get::<RequestId>().cloned();
    let client_ip = req
        .extensions()
        .get::<ClientContext>()
        .and_then(|ctx| ctx.ip);

    let res = next.run(req).await;

    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    tracing::info!(
        target: "svc_http::access",
        request_id = request_id.as_ref().map(RequestId::as_str),
        method = %method,
        route = %route,
        path = %path,
        status = res.status().as_u16(),
        latency_ms,
        client_ip = client_ip.map(tracing::field::display),
        "request completed"
    );
    res
}
