//! The refusals an operation outside `/api/v1` (protocol, discovery, hosted and operational
//! endpoints) can meet before or around its handler, as RFC 9457 problems: the host allowlist,
//! tenant resolution, throttling, the body limit, the timeout and the panic guard
//! (`crate::router`'s middleware stack, `crate::tenancy`, `crate::throttle`).
//!
//! Each route module's `operations()` declares what its handlers answer and then calls [`add`]
//! with the refusals that apply to it; a status the handler already declares (say a 400 in RFC
//! 6749 JSON) gains the problem as a second media type rather than being replaced, so every
//! status a request can get is declared with every body it can carry.

use crate::error::PROBLEM_CONTENT_TYPE;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, OpenApi, Ref, RefOr, Response};

/// Which refusals besides the handler's own an operation can meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refusals {
    /// The host allowlist applies (everything but `/health/*`): 400.
    pub(crate) host: bool,
    /// The tenant is resolved from the host: 400 (no host), 403 (suspended), 404 (unknown),
    /// 503 (directory unavailable).
    pub(crate) tenant: bool,
    /// Requests are throttled per client and address: 429.
    pub(crate) throttled: bool,
}

impl Refusals {
    /// Endpoints of a tenant's issuer (discovery, UserInfo, hosted pages).
    pub(crate) const TENANT: Self = Self {
        host: true,
        tenant: true,
        throttled: false,
    };
    /// The client-authenticated protocol endpoints (token, introspection, revocation).
    pub(crate) const THROTTLED_TENANT: Self = Self {
        host: true,
        tenant: true,
        throttled: true,
    };
    /// Health probes: exempt from the host check, no tenant.
    pub(crate) const PROBE: Self = Self {
        host: false,
        tenant: false,
        throttled: false,
    };
}

/// `(status, text)` of each refusal that applies, in status order.
fn refusals(applies: Refusals) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    if applies.host || applies.tenant {
        out.push((
            "400",
            "The request has no valid `Host`, or names a host this deployment does not serve \
             (`server.allowed_hosts`).",
        ));
    }
    if applies.tenant {
        out.push(("403", "The tenant of this host is suspended."));
        out.push(("404", "No tenant is served at this host."));
    }
    out.push((
        "413",
        "The declared request body is larger than `server.max_request_body_bytes`.",
    ));
    if applies.throttled {
        out.push((
            "429",
            "Too many requests from this client or address (`server.endpoint_throttle`), \
             refused before any credential is checked; wait as long as `Retry-After` says.",
        ));
    }
    out.push((
        "500",
        "An unexpected fault; the cause is logged with the request id.",
    ));
    out.push((
        "503",
        if applies.tenant {
            "The request ran past `server.request_timeout_secs`, or the tenant directory is \
             unavailable; retry later."
        } else {
            "The request ran past `server.request_timeout_secs`; retry later."
        },
    ));
    out
}

/// Adds to every operation of `doc` the problem responses `applies_to(path)` says it can meet.
pub(crate) fn add(doc: &mut OpenApi, applies_to: impl Fn(&str) -> Refusals) {
    for (path, item) in doc.paths.paths.iter_mut() {
        let applies = applies_to(path);
        let ops = [
            item.get.as_mut(),
            item.put.as_mut(),
            item.post.as_mut(),
            item.delete.as_mut(),
            item.patch.as_mut(),
        ];
        for op in ops.into_iter().flatten() {
            for (status, text) in refusals(applies) {
                add_problem(op, status, text);
            }
        }
    }
}

/// Declares `status` with a problem body: a new response, or one more media type (and a line of
/// description) on the response the handler already declares.
fn add_problem(op: &mut Operation, status: &str, text: &str) {
    let problem = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("Problem")))
        .build();
    match op.responses.responses.get_mut(status) {
        Some(RefOr::T(response)) => {
            let lead = if response.content.contains_key(PROBLEM_CONTENT_TYPE) {
                "Also"
            } else {
                response
                    .content
                    .insert(PROBLEM_CONTENT_TYPE.to_owned(), RefOr::T(problem));
                "Or, as a problem"
            };
            response.description = format!("{}\n\n{lead}: {text}", response.description);
            if status == "429" {
                response
                    .headers
                    .entry("Retry-After".to_owned())
                    .or_insert_with(retry_after);
            }
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            let mut response = Response::new(text);
            response
                .content
                .insert(PROBLEM_CONTENT_TYPE.to_owned(), RefOr::T(problem));
            if status == "429" {
                response
                    .headers
                    .insert("Retry-After".to_owned(), retry_after());
            }
            op.responses
                .responses
                .insert(status.to_owned(), RefOr::T(response));
        }
    }
}

fn retry_after() -> RefOr<utoipa::openapi::header::Header> {
    RefOr::T(
        HeaderBuilder::new()
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1)),
            ))
            .description(Some("Seconds to wait before retrying."))
            .build(),
    )
}
