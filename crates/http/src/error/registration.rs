//! RFC 7591 §3.2.2 / RFC 7592 errors of `/oauth/register` and `/oauth/register/{client_id}`:
//! `application/json` `{"error","error_description"}`, never cached, from a
//! [`ManageError`] of the registration use cases.
//!
//! | `ManageError` | status | `error` |
//! |---|---|---|
//! | `Invalid` on `redirect_uris` / `post_logout_redirect_uris` | 400 | `invalid_redirect_uri` |
//! | `Invalid` on `software_statement` | 400 | `invalid_software_statement` |
//! | `Invalid` on `software_statement.iss` (an issuer not trusted here) | 400 | `unapproved_software_statement` |
//! | `Invalid` on any other field | 400 | `invalid_client_metadata` |
//! | `Unauthenticated`, `NotFound` (the application went away meanwhile) | 401 + `WWW-Authenticate: Bearer error="invalid_token"` | `invalid_token` (RFC 6750 §3.1) |
//! | `Forbidden` (the tenant's policy is `disabled`) | 403 | `access_denied` |
//! | `RateLimited` | 429 problem+json with `Retry-After`, as every throttled request |
//! | `Conflict`, `PreconditionFailed` (a concurrent change) | 409 / 412 problem+json, as in the management API |
//! | store unavailable | 503 | `temporarily_unavailable` |
//! | anything else | 500 | `server_error` (cause logged, never sent) |

use super::Problem;
use super::oauth::no_store;
use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde::Serialize;
use svc_manage::ManageError;

/// The JSON body, members in this order.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
}

/// The RFC 7591 error code of a refused field.
fn metadata_code(field: &str) -> &'static str {
    match field {
        "redirect_uris" | "post_logout_redirect_uris" => "invalid_redirect_uri",
        "software_statement" => "invalid_software_statement",
        svc_manage::registration::UNAPPROVED_FIELD => "unapproved_software_statement",
        _ => "invalid_client_metadata",
    }
}

/// A body that is not client metadata (not JSON, not an object, a member of the wrong type or
/// an unknown member): `invalid_client_metadata` with what the parser said.
pub(crate) fn unreadable_metadata(why: &str) -> Response {
    json(
        StatusCode::BAD_REQUEST,
        "invalid_client_metadata",
        &format!("the body is not valid client metadata: {why}"),
    )
}

/// The complete error response for `error`, logged first.
pub(crate) fn response(error: ManageError) -> Response {
    match error {
        ManageError::Invalid { field, message } => {
            let description = format!("{field}: {message}");
            tracing::info!(field, "client registration refused");
            json(StatusCode::BAD_REQUEST, metadata_code(&field), &description)
        }
        ManageError::Unauthenticated(_) | ManageError::NotFound => {
            // NotFound: the application went away between the token check and the change.
            let message = match &error {
                ManageError::Unauthenticated(message) => message.as_str(),
                _ => "the registration access token is missing or not valid for this client",
            };
            let mut response = json(StatusCode::UNAUTHORIZED, "invalid_token", message);
            response.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"svc\", error=\"invalid_token\""),
            );
            response
        }
        ManageError::Forbidden(message) => json(StatusCode::FORBIDDEN, "access_denied", &message),
        // A concurrent change of the same registration: the problem the management API gives.
        error @ (ManageError::Conflict(_) | ManageError::PreconditionFailed) => {
            Problem::from(error).into_response()
        }
        ManageError::RateLimited(wait) => {
            tracing::warn!("client registration: too many registrations from one address");
            Problem::rate_limited(wait).into_response()
        }
        error @ (ManageError::Unavailable(_) | ManageError::PasswordCheckUnavailable) => {
            tracing::error!(error = %error, source = ?std::error::Error::source(&error), "client registration failure");
            json(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "the service is temporarily unavailable; retry later",
            )
        }
        error => {
            tracing::error!(error = %error, source = ?std::error::Error::source(&error), "client registration failure");
            json(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "an unexpected error occurred",
            )
        }
    }
}

fn json(status: StatusCode, error: &'static str, description: &str) -> Response {
    let body = ErrorBody {
        error,
        error_description: description,
    };
    let body = serde_json::to_string(&body).unwrap_or_else(|_| format!(r#"{{"error":"{error}"}}"#));
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    no_store(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_fields_get_their_rfc_7591_code() {
        assert_eq!(metadata_code("redirect_uris"), "invalid_redirect_uri");
        assert_eq!(
            metadata_code("post_logout_redirect_uris"),
            "invalid_redirect_uri"
        );
        assert_eq!(
            metadata_code("software_statement"),
            "invalid_software_statement"
        );
        assert_eq!(
            metadata_code(svc_manage::registration::UNAPPROVED_FIELD),
            "unapproved_software_statement"
        );
        assert_eq!(metadata_code("jwks_uri"), "invalid_client_metadata");
        assert_eq!(metadata_code("scope"), "invalid_client_metadata");
    }

    #[test]
    fn statuses_and_challenges() {
        let r = response(ManageError::invalid("redirect_uris", "bad"));
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert_eq!(r.headers()["cache-control"], "no-store");
        let r = response(ManageError::Unauthenticated("no".into()));
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(
            r.headers()[WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .contains("invalid_token")
        );
        let r = response(ManageError::Forbidden("closed".into()));
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let r = response(ManageError::RateLimited(std::time::Duration::from_secs(3)));
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        let r = response(ManageError::NotFound);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
}
