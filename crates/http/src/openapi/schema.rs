//! Shared components: the `Problem` schema (RFC 9457 plus svc's `error`, `error_description`
//! and `request_id` members) and the error responses every management operation can meet,
//! added to each operation in one place so no handler can forget one.

use crate::error::PROBLEM_CONTENT_TYPE;
use crate::error::PROBLEM_TYPES;
use std::borrow::Cow;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{
    ContentBuilder, HeaderBuilder, OpenApi, Ref, RefOr, ResponseBuilder, Schema,
};
use utoipa::{PartialSchema, ToSchema};

/// The wire shape of a problem, as a schema (the type that renders it is
/// [`Problem`](crate::Problem), whose body is built at response time).
pub struct ProblemSchema;

impl PartialSchema for ProblemSchema {
    fn schema() -> RefOr<Schema> {
        let string = |description: &str| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(description))
        };
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "RFC 9457 problem details. Clients must ignore members they do not know.",
            ))
            .property(
                "type",
                string("URI of the problem type; it resolves to a page describing it."),
            )
            .required("type")
            .property("title", string("Fixed summary of the problem type."))
            .required("title")
            .property(
                "status",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(400))
                    .maximum(Some(599))
                    .description(Some("The HTTP status code.")),
            )
            .required("status")
            .property("detail", string("What went wrong in this occurrence."))
            .required("detail")
            .property(
                "error",
                string("Stable snake_case code of the problem type.")
                    .enum_values(Some(PROBLEM_TYPES.iter().map(|t| t.code))),
            )
            .required("error")
            .property("error_description", string("Same text as `detail`."))
            .required("error_description")
            .property(
                "request_id",
                string("The request's id (also in `x-request-id`); quote it when reporting."),
            )
            .examples([serde_json::json!({
                "type": "https://acme.id.example.com/problems/not-found",
                "title": "Not Found",
                "status": 404,
                "detail": "no such resource in this tenant",
                "error": "not_found",
                "error_description": "no such resource in this tenant",
                "request_id": "01JB7Q3M2X8V6N4K0T5R9C1D2E"
            })])
            .into()
    }
}

impl ToSchema for ProblemSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Problem")
    }
}

/// `(status, component name, description)` of the shared error responses.
const SHARED: &[(&str, &str, &str)] = &[
    (
        "400",
        "BadRequest",
        "The request is malformed or breaks a rule; `detail` names the field.",
    ),
    (
        "401",
        "Unauthorized",
        "The bearer token is missing, invalid, expired, revoked or for another tenant.",
    ),
    (
        "403",
        "Forbidden",
        "The token lacks the operation's scope (`insufficient_scope`), or the tenant may not do this.",
    ),
    (
        "404",
        "NotFound",
        "No such resource in this tenant (another tenant's looks the same).",
    ),
    (
        "409",
        "Conflict",
        "The request clashes with the current state, or its idempotency key was used for another request.",
    ),
    (
        "412",
        "PreconditionFailed",
        "The resource changed since the revision named in `If-Match`.",
    ),
    (
        "413",
        "PayloadTooLarge",
        "The request body is larger than the server accepts.",
    ),
    (
        "429",
        "RateLimited",
        "Too many requests; wait as long as `Retry-After` says.",
    ),
    (
        "500",
        "ServerError",
        "The server could not complete the request; nothing partial was written.",
    ),
    (
        "503",
        "Unavailable",
        "A dependency is unavailable or the request timed out; retry later.",
    ),
];

/// Adds the shared error responses to the document's components.
pub fn common_responses(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    for (status, name, description) in SHARED {
        let mut response = ResponseBuilder::new().description(*description).content(
            PROBLEM_CONTENT_TYPE,
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        );
        match *status {
            "401" | "403" => {
                response = response.header(
                    "WWW-Authenticate",
                    HeaderBuilder::new()
                        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                        .description(Some("The RFC 6750 challenge."))
                        .build(),
                );
            }
            "429" | "503" => {
                response = response.header(
                    "Retry-After",
                    HeaderBuilder::new()
                        .schema(Some(
                            ObjectBuilder::new()
                                .schema_type(Type::Integer)
                                .minimum(Some(1)),
                        ))
                        .description(Some("Seconds to wait before retrying."))
                        .build(),
                );
            }
            _ => {}
        }
        components
            .responses
            .insert((*name).to_owned(), RefOr::T(response.build()));
    }
}

/// Which shared responses an operation of the management API can meet: every one of them can
/// be refused (400, 401, 403), be too large (413), throttled (429) or fail (500, 503); one with
/// a path parameter can name a missing resource (404); a write can conflict (409); one that
/// takes `If-Match` can fail its precondition (412).
fn applicable(path: &str, method: &str, op: &Operation) -> Vec<&'static str> {
    let mut statuses = vec!["400", "401", "403", "413", "429", "500", "503"];
    if path.contains('{') {
        statuses.push("404");
    }
    if method != "get" {
        statuses.push("409");
    }
    let takes_if_match = op.parameters.iter().flatten().any(|p| match p {
        RefOr::T(p) => p.name.eq_ignore_ascii_case("if-match"),
        RefOr::Ref(_) => false,
    });
    if takes_if_match {
        statuses.push("412");
    }
    statuses
}

/// Adds, to every `/api/v1/*` operation, the shared error responses it can meet and does not
/// already describe itself.
pub(super) fn add_error_responses(doc: &mut OpenApi) {
    for (path, item) in doc.paths.paths.iter_mut() {
        if !path.starts_with("/api/v1/") {
            continue;
        }
        let ops = [
            ("get", item.get.as_mut()),
            ("put", item.put.as_mut()),
            ("post", item.post.as_mut()),
            ("delete", item.delete.as_mut()),
            ("patch", item.patch.as_mut()),
        ];
        for (method, op) in ops {
            let Some(op) = op else { continue };
            for status in applicable(path, method, op) {
                let Some((_, name, _)) = SHARED.iter().find(|(s, _, _)| *s == status) else {
                    continue;
                };
                op.responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| {
                        RefOr::Ref(Ref::new(format!("#/components/responses/{name}")))
                    });
            }
        }
    }
}
