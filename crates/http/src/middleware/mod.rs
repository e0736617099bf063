//! The middleware stack shared by every plane, one small module per concern.
//!
//! Order, outermost first (see [`crate::router`]): sensitive headers → request id → client
//! context → access log → metrics → response shaping (problem rendering, security headers) →
//! panic catcher → allowed hosts → body limit → timeout → route handler or fallback.
//! Everything that can produce a problem sits inside response shaping; everything that needs
//! the final status sits outside it.

pub(crate) mod access_log;
pub(crate) mod allowed_hosts;
pub(crate) mod body_limit;
pub(crate) mod client;
pub(crate) mod panic;
pub(crate) mod request_id;
pub(crate) mod response;
pub(crate) mod timeout;

use axum::extract::{MatchedPath, Request};

pub use client::ClientContext;
pub use request_id::{REQUEST_ID_HEADER, RequestId};

/// Route label for requests that matched no route: bounded cardinality for metrics and logs.
pub(crate) const UNMATCHED_ROUTE: &str = "unmatched";

/// The matched route template (`/api/v1/webhooks/{id}`), never the raw path. Routes mounted
/// with `nest_service` expose no template to outer layers and are labelled `unmatched` too.
pub(crate) fn route_label(req: &Request) -> String {
    req.extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED_ROUTE, MatchedPath::as_str)
        .to_owned()
}
