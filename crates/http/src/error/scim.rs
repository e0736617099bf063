//! RFC 7644 §3.12 errors of `/scim/v2/*`: `application/scim+json`
//! `{"schemas":[…Error],"status":"400","scimType":…,"detail":…}` (`status` a string), from a
//! [`ScimError`] of the SCIM use cases.
//!
//! | `ScimError` | status | `scimType` |
//! |---|---|---|
//! | `Unauthenticated` | 401 + `WWW-Authenticate: Bearer` | — |
//! | `NotFound` | 404 | — |
//! | `InvalidFilter`, `InvalidSyntax`, `InvalidPath`, `NoTarget`, `InvalidValue`, `Mutability` | 400 | the variant's name |
//! | `Uniqueness` | 409 | `uniqueness` |
//! | `Conflict` | 409 | — |
//! | `Forbidden` | 403 | — |
//! | `PreconditionFailed` | 412 | — |
//! | `TooLarge` | 413 | — |
//! | `BulkLimit` | 413 | `tooMany` |
//! | `MethodNotAllowed` | 405 | — |
//! | `NotImplemented` | 501 | — |
//! | `Manage(Unavailable)` | 503 | — (cause logged, never sent) |
//! | `Manage(anything else)` | 500 | — (cause logged, never sent) |

use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde_json::json;
use svc_manage::ManageError;
use svc_manage::scim::ScimError;

/// The SCIM media type (RFC 7644 §8.1).
pub const SCIM_CONTENT_TYPE: &str = "application/scim+json";

/// The complete error response for `error`, logged first.
pub fn response(error: ScimError) -> Response {
    let (status, body) = parts(error);
    let mut response = (status, body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(SCIM_CONTENT_TYPE));
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"scim\""),
        );
    }
    response
}

/// The status and error body of `error` (logged first): the whole answer of a request, or the
/// `response` of one `/Bulk` operation.
pub fn parts(error: ScimError) -> (StatusCode, serde_json::Value) {
    let (status, scim_type) = match &error {
        ScimError::Unauthenticated => (StatusCode::UNAUTHORIZED, None),
        ScimError::NotFound => (StatusCode::NOT_FOUND, None),
        ScimError::InvalidFilter(_) => (StatusCode::BAD_REQUEST, Some("invalidFilter")),
        ScimError::InvalidSyntax(_) => (StatusCode::BAD_REQUEST, Some("invalidSyntax")),
        ScimError::InvalidPath(_) => (StatusCode::BAD_REQUEST, Some("invalidPath")),
        ScimError::NoTarget(_) => (StatusCode::BAD_REQUEST, Some("noTarget")),
        ScimError::InvalidValue(_) => (StatusCode::BAD_REQUEST, Some("invalidValue")),
        ScimError::Mutability(_) => (StatusCode::BAD_REQUEST, Some("mutability")),
        ScimError::Uniqueness(_) => (StatusCode::CONFLICT, Some("uniqueness")),
        ScimError::Conflict(_) => (StatusCode::CONFLICT, None),
        ScimError::Forbidden(_) => (StatusCode::FORBIDDEN, None),
        ScimError::PreconditionFailed => (StatusCode::PRECONDITION_FAILED, None),
        ScimError::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, None),
        ScimError::BulkLimit(_) => (StatusCode::PAYLOAD_TOO_LARGE, Some("tooMany")),
        ScimError::MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, None),
        ScimError::NotImplemented(_) => (StatusCode::NOT_IMPLEMENTED, None),
        ScimError::Manage(ManageError::Unavailable(_)) => (StatusCode::SERVICE_UNAVAILABLE, None),
        ScimError::Manage(_) => (StatusCode::INTERNAL_SERVER_ERROR, None),
    };
    let detail = match &error {
        ScimError::Manage(inner) => {
            tracing::error!(error = %inner, source = ?std::error::Error::source(inner), "SCIM request failed");
            if status == StatusCode::SERVICE_UNAVAILABLE {
                "the service is temporarily unavailable; retry later".to_owned()
            } else {
                "an unexpected error occurred".to_owned()
            }
        }
        other => {
            tracing::info!(status = status.as_u16(), scim_type, "SCIM request refused");
            other.to_string()
        }
    };
    let mut body = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
        "status": status.as_u16().to_string(),
        "detail": detail,
    });
    if let Some(scim_type) = scim_type {
        body["scimType"] = json!(scim_type);
    }
    (status, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(response: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap_or_default();
        serde_json::from_slice(&bytes).unwrap_or_default()
    }

    #[tokio::test]
    async fn bodies_carry_status_as_a_string_and_the_scim_type() {
        let r = response(ScimError::Uniqueness("taken".into()));
        assert_eq!(r.status(), StatusCode::CONFLICT);
        assert_eq!(r.headers()[CONTENT_TYPE], SCIM_CONTENT_TYPE);
        let b = body(r).await;
        assert_eq!(b["status"], "409");
        assert_eq!(b["scimType"], "uniqueness");
        let r = response(ScimError::Unauthenticated);
        assert!(r.headers().contains_key(WWW_AUTHENTICATE));
        let b = body(r).await;
        assert_eq!(b["status"], "401");
        assert!(b.get("scimType").is_none());
    }
}
