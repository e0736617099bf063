//! The catalogue of problem types: every `error` code a problem+json body can carry, with the
//! statuses it comes with, its fixed title and what a client should do about it.
//!
//! A problem's `type` URI is `{scheme}://{host}/problems/{code in kebab-case}`; when the API
//! reference is enabled (`[openapi].enabled`) each of those URIs serves the entry below as a
//! page (RFC 9457 §3.1.1: the type URI should resolve to human-readable documentation). The
//! OpenAPI document lists the same codes as the `error` enum of its `Problem` schema, so the
//! reference, the pages and the wire cannot disagree.

/// One problem type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemType {
    /// The snake_case `error` member (`precondition_failed`).
    pub code: &'static str,
    /// The fixed `title` member.
    pub title: &'static str,
    /// The HTTP statuses this code is sent with.
    pub statuses: &'static [u16],
    /// When it happens and what to do, one short paragraph.
    pub guidance: &'static str,
}

impl ProblemType {
    /// The last path segment of the type URI (`precondition-failed`).
    #[must_use]
    pub fn slug(&self) -> String {
        self.code.replace('_', "-")
    }

    /// The entry whose slug is `slug`.
    #[must_use]
    pub fn by_slug(slug: &str) -> Option<&'static ProblemType> {
        PROBLEM_TYPES.iter().find(|t| t.slug() == slug)
    }
}

/// Every problem type, in status order.
pub const PROBLEM_TYPES: &[ProblemType] = &[
    ProblemType {
        code: "bad_request",
        title: "Bad Request",
        statuses: &[400],
        guidance: "The request is malformed: a body that is not the documented JSON, a field \
                   that breaks a rule (the detail names it), or an unknown query parameter. Fix \
                   the request; retrying it unchanged fails the same way.",
    },
    ProblemType {
        code: "unauthorized",
        title: "Unauthorized",
        statuses: &[401],
        guidance: "No valid credential: the bearer token is missing, expired, revoked, for \
                   another tenant or audience, or malformed. The WWW-Authenticate header says \
                   which. Obtain a new access token and retry.",
    },
    ProblemType {
        code: "forbidden",
        title: "Forbidden",
        statuses: &[403],
        guidance: "The caller is known but may not do this here: the tenant is suspended, or a \
                   rule protects the resource (the detail says which). Retrying does not help.",
    },
    ProblemType {
        code: "insufficient_scope",
        title: "Insufficient Scope",
        statuses: &[403],
        guidance: "The access token lacks the scope this operation requires (RFC 6750 §3.1); \
                   the WWW-Authenticate header names it. Request a token with that scope.",
    },
    ProblemType {
        code: "not_found",
        title: "Not Found",
        statuses: &[404],
        guidance: "No such resource in this tenant, or no such path. Resources of other tenants \
                   answer exactly like missing ones.",
    },
    ProblemType {
        code: "method_not_allowed",
        title: "Method Not Allowed",
        statuses: &[405],
        guidance: "The path exists but not with this method; the Allow header lists the \
                   methods it takes.",
    },
    ProblemType {
        code: "conflict",
        title: "Conflict",
        statuses: &[409],
        guidance: "The request clashes with the current state: a taken name or slug, a limit \
                   reached, or an idempotency key reused with a different request or still in \
                   progress. Read the current state, then retry with a new idempotency key.",
    },
    ProblemType {
        code: "precondition_failed",
        title: "Precondition Failed",
        statuses: &[412],
        guidance: "The resource changed since the revision named in If-Match (RFC 9110 \
                   §13.1.1), or while the update ran. Read it again (GET returns the current \
                   ETag), reapply the change and retry with the new tag.",
    },
    ProblemType {
        code: "payload_too_large",
        title: "Payload Too Large",
        statuses: &[413],
        guidance: "The request body is larger than server.max_request_body_bytes allows.",
    },
    ProblemType {
        code: "rate_limited",
        title: "Too Many Requests",
        statuses: &[429],
        guidance: "Too many requests from this client, account or tenant. Wait as many seconds \
                   as Retry-After says before retrying.",
    },
    ProblemType {
        code: "server_error",
        title: "Server Error",
        statuses: &[500, 503],
        guidance: "The server could not complete the request (500), or a dependency such as the \
                   database is unavailable or the request ran past its deadline (503). Nothing \
                   partial was written. Retry later with the same idempotency key, and quote \
                   the request_id when reporting it.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Problem;
    use std::time::Duration;

    #[test]
    fn every_problem_a_constructor_builds_is_catalogued_with_its_status_and_title() {
        let built = [
            Problem::bad_request("x"),
            Problem::unauthorized("x"),
            Problem::forbidden("x"),
            Problem::not_found("x"),
            Problem::method_not_allowed(),
            Problem::conflict("x"),
            Problem::precondition_failed(),
            Problem::payload_too_large(),
            Problem::rate_limited(Duration::from_secs(1)),
            Problem::server_error(),
            Problem::service_unavailable(),
            Problem::timed_out(),
            Problem::insufficient_scope("x"),
        ];
        for problem in built {
            let entry = PROBLEM_TYPES
                .iter()
                .find(|t| t.code == problem.error())
                .unwrap_or_else(|| panic!("{} is not catalogued", problem.error()));
            assert_eq!(entry.title, problem.title(), "{}", entry.code);
            assert!(
                entry.statuses.contains(&problem.status().as_u16()),
                "{} {}",
                entry.code,
                problem.status()
            );
        }
    }

    #[test]
    fn slugs_are_unique_and_resolve_back() {
        for t in PROBLEM_TYPES {
            assert_eq!(ProblemType::by_slug(&t.slug()), Some(t));
        }
        assert_eq!(ProblemType::by_slug("bad_request"), None, "kebab-case only");
        assert_eq!(ProblemType::by_slug("no-such-type"), None);
    }
}
