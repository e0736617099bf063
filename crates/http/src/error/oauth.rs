//! RFC 6749 §5.2 error responses of the protocol endpoints (`/oauth/token`, `/oauth/introspect`,
//! `/oauth/revoke`, and `/userinfo` under its Bearer challenge): `application/json`
//! `{"error","error_description"}`, never cached (§5.1), and `WWW-Authenticate: Basic
//! realm="svc"` when client authentication failed after the client tried HTTP Basic (§5.2).
//!
//! [`status`] is where an [`ErrorCode`] gets its HTTP status; the engine only names the code.
//! Why a client was refused ([`OAuthError::log_detail`]) and internal causes go to the logs: the
//! response is deliberately uniform.

use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONTENT_TYPE, PRAGMA, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde::Serialize;
use svc_oauth::{ErrorCode, OAuthError};

/// The HTTP status of an RFC 6749 / RFC 6750 error code: 400, except 401 for `invalid_client`
/// (RFC 6749 §5.2) and `invalid_token`, 403 for `insufficient_scope` (RFC 6750 §3.1), and 500 /
/// 503 for our own failures. Exhaustive, so a new code cannot ship without a status.
pub(crate) fn status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidClient | ErrorCode::InvalidToken => StatusCode::UNAUTHORIZED,
        ErrorCode::InsufficientScope => StatusCode::FORBIDDEN,
        ErrorCode::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::TemporarilyUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InvalidRequest
        | ErrorCode::InvalidGrant
        | ErrorCode::UnauthorizedClient
        | ErrorCode::UnsupportedGrantType
        | ErrorCode::InvalidScope
        | ErrorCode::UnsupportedResponseType
        | ErrorCode::InvalidTarget
        | ErrorCode::AuthorizationPending
        | ErrorCode::SlowDown
        | ErrorCode::AccessDenied
        | ErrorCode::ExpiredToken
        | ErrorCode::InvalidBindingMessage
        | ErrorCode::InvalidRequestObject
        | ErrorCode::InvalidDpopProof
        | ErrorCode::UseDpopNonce
        | ErrorCode::InvalidAuthorizationDetails => StatusCode::BAD_REQUEST,
    }
}

/// The JSON body (RFC 6749 §5.2), members in this order.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
}

/// The complete error response for `error`, logged first.
pub(crate) fn response(error: &OAuthError) -> Response {
    let status = status(error.code());
    if status.is_server_error() {
        tracing::error!(error = %error, "token endpoint failure");
    } else if let Some(detail) = error.log_detail() {
        tracing::info!(
            error = error.code().as_str(),
            detail,
            "token request refused"
        );
    }
    let body = ErrorBody {
        error: error.code().as_str(),
        error_description: error.description(),
    };
    // A struct of two strings always serialises; should it ever not, answer with the code alone
    // rather than panic.
    let body = serde_json::to_string(&body)
        .unwrap_or_else(|_| format!(r#"{{"error":"{}"}}"#, error.code().as_str()));
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(secs) = error.retry_after() {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(secs));
    }
    if let Some(nonce) = error
        .dpop_nonce()
        .and_then(|n| HeaderValue::from_str(n).ok())
    {
        response.headers_mut().insert(DPOP_NONCE, nonce);
    }
    if error.basic_challenge() {
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"svc\""),
        );
    }
    no_store(response)
}

/// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1): protocol answers, tokens
/// and errors alike, describe one request and must never be replayed by a cache.
/// RFC 9449 §8: the server nonce a client must put in its next DPoP proof.
pub(crate) const DPOP_NONCE: http::HeaderName = http::HeaderName::from_static("dpop-nonce");

pub(crate) fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn body(response: Response) -> String {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn statuses_follow_rfc6749_section_5_2_and_rfc6750_section_3_1() {
        let table = [
            (ErrorCode::InvalidRequest, 400),
            (ErrorCode::InvalidClient, 401),
            (ErrorCode::InvalidGrant, 400),
            (ErrorCode::UnauthorizedClient, 400),
            (ErrorCode::UnsupportedGrantType, 400),
            (ErrorCode::InvalidScope, 400),
            (ErrorCode::UnsupportedResponseType, 400),
            (ErrorCode::InvalidTarget, 400),
            (ErrorCode::InvalidToken, 401),
            (ErrorCode::InsufficientScope, 403),
            (ErrorCode::ServerError, 500),
            (ErrorCode::TemporarilyUnavailable, 503),
            (ErrorCode::AuthorizationPending, 400),
            (ErrorCode::SlowDown, 400),
            (ErrorCode::AccessDenied, 400),
            (ErrorCode::ExpiredToken, 400),
            (ErrorCode::InvalidBindingMessage, 400),
            (ErrorCode::InvalidRequestObject, 400),
            (ErrorCode::InvalidDpopProof, 400),
            (ErrorCode::UseDpopNonce, 400),
        ];
        for (code, expected) in table {
            assert_eq!(status(code).as_u16(), expected, "{code}");
            let rendered = response(&OAuthError::new(code, "x"));
            assert_eq!(rendered.status().as_u16(), expected, "{code}");
        }
    }

    #[tokio::test]
    async fn body_is_error_and_description_only_never_the_log_detail() {
        let error = OAuthError::invalid_client("client authentication failed")
            .with_log_detail("wrong secret");
        let rendered = response(&error);
        assert_eq!(rendered.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(rendered.headers()[CONTENT_TYPE], "application/json");
        assert_eq!(rendered.headers()[CACHE_CONTROL], "no-store");
        assert_eq!(rendered.headers()[PRAGMA], "no-cache");
        assert_eq!(
            body(rendered).await,
            r#"{"error":"invalid_client","error_description":"client authentication failed"}"#
        );
    }

    #[test]
    fn basic_challenge_only_for_invalid_client_after_a_basic_attempt() {
        let challenged = response(&OAuthError::invalid_client("x").with_basic_attempt(true));
        assert_eq!(
            challenged.headers()[WWW_AUTHENTICATE],
            "Basic realm=\"svc\""
        );
        let without_basic = response(&OAuthError::invalid_client("x"));
        assert!(!without_basic.headers().contains_key(WWW_AUTHENTICATE));
        let other_code = response(&OAuthError::invalid_request("x").with_basic_attempt(true));
        assert_eq!(other_code.status(), StatusCode::BAD_REQUEST);
        assert!(!other_code.headers().contains_key(WWW_AUTHENTICATE));
    }

    #[tokio::test]
    async fn server_failures_carry_the_fixed_description_only() {
        let error = OAuthError::temporarily_unavailable("db at 10.0.0.5 down");
        let rendered = response(&error);
        assert_eq!(rendered.status(), StatusCode::SERVICE_UNAVAILABLE);
        let text = body(rendered).await;
        assert!(text.contains("temporarily_unavailable"), "{text}");
        assert!(!text.contains("10.0.0.5"), "{text}");
    }
}
