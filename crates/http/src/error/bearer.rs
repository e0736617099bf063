//! RFC 6750 §3 `WWW-Authenticate: Bearer` challenges, for every surface that takes a bearer
//! token:
//!
//! - `/userinfo` (OIDC Core §5.3.3): the RFC 6749 JSON body of [`super::oauth`] with
//!   `Bearer realm="svc", error="…"` for `invalid_token` and `insufficient_scope`; without any
//!   token, a bare `Bearer realm="svc"` and an empty body (§3.1: no error code when the request
//!   carried no credentials).
//! - `/api/v1/*` and `/metrics` without a static token: a problem with the challenge `svc-sdk`
//!   derives from the validation contract's error (the same text a resource server sends), and
//!   the same `invalid_token` challenge for a token revoked at `/oauth/revoke`.
//! - `/api/v1/control-plane/*`: `Bearer realm="svc-control-plane"` for operator tokens.
//! - `/metrics` with a static token: a bare `Bearer`.

use super::Problem;
use super::oauth;
use axum::response::{IntoResponse, Response};
use http::header::WWW_AUTHENTICATE;
use http::{HeaderValue, StatusCode};
use svc_oauth::{ErrorCode, OAuthError};
use svc_sdk::ValidationError;

/// `/userinfo` without a bearer token: 401, an empty body and `Bearer realm="svc"`.
pub(crate) fn userinfo_without_token() -> Response {
    let mut response = (StatusCode::UNAUTHORIZED, "").into_response();
    response.headers_mut().insert(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"svc\""),
    );
    oauth::no_store(response)
}

/// `/userinfo` refused: the RFC 6749 body, and a challenge naming the error when it is one of
/// RFC 6750 §3.1's token errors (a server failure is not the token's fault).
pub(crate) fn userinfo_refused(error: &OAuthError, dpop_scheme: bool) -> Response {
    let mut response = oauth::response(error);
    let scheme = if dpop_scheme { "DPoP" } else { "Bearer" };
    let challenge = match error.code() {
        ErrorCode::InvalidToken | ErrorCode::InsufficientScope => Some(format!(
            "{scheme} realm=\"svc\", error=\"{}\"",
            error.code()
        )),
        // RFC 9449 §7.1: a proof refused at a resource is a 401 with a DPoP challenge naming
        // the algorithms; §9: `use_dpop_nonce` likewise, beside the `DPoP-Nonce` header.
        ErrorCode::InvalidDpopProof | ErrorCode::UseDpopNonce => {
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            Some(format!(
                "DPoP realm=\"svc\", error=\"{}\", algs=\"{}\"",
                error.code(),
                svc_oauth::dpop::PROOF_ALGORITHMS.join(" ")
            ))
        }
        _ => None,
    };
    if let Some(challenge) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
    }
    response
}

/// A management-API token that failed the validation contract: 401 with the challenge, 403
/// `insufficient_scope` with the challenge, another 403 without one, else 503.
pub(crate) fn api_refused(error: &ValidationError) -> Problem {
    let problem = match error.status() {
        401 => Problem::unauthorized(error.to_string()),
        403 if error.error_code() == "insufficient_scope" => {
            Problem::insufficient_scope(error.to_string())
        }
        403 => Problem::forbidden(error.to_string()),
        _ => Problem::service_unavailable(),
    };
    match HeaderValue::from_str(&error.www_authenticate()) {
        Ok(value) if error.status() == 401 || error.error_code() == "insufficient_scope" => {
            problem.with_header(WWW_AUTHENTICATE, value)
        }
        _ => problem,
    }
}

/// A DPoP proof refused at `/api/v1` (RFC 9449 §7.1, §9): 401 with a `DPoP` challenge naming
/// the error and the accepted algorithms, and the nonce to use when one is required.
pub(crate) fn api_dpop_refused(error: &OAuthError) -> Problem {
    if !matches!(
        error.code(),
        ErrorCode::InvalidDpopProof | ErrorCode::UseDpopNonce
    ) {
        // Only the replay record can fail otherwise: the store is unavailable.
        return Problem::service_unavailable();
    }
    let challenge = format!(
        "DPoP error=\"{}\", error_description=\"{}\", algs=\"{}\"",
        error.code(),
        error.description(),
        svc_oauth::dpop::PROOF_ALGORITHMS.join(" ")
    );
    let mut problem = Problem::unauthorized(error.description().to_owned());
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        problem = problem.with_header(WWW_AUTHENTICATE, value);
    }
    if let Some(nonce) = error
        .dpop_nonce()
        .and_then(|n| HeaderValue::from_str(n).ok())
    {
        problem = problem.with_header(super::oauth::DPOP_NONCE, nonce);
    }
    problem
}

/// A management-API token revoked since it was issued: 401 `invalid_token`, as for an expired
/// one.
pub(crate) fn api_token_revoked() -> Problem {
    Problem::unauthorized("the access token has been revoked").with_header(
        WWW_AUTHENTICATE,
        HeaderValue::from_static(
            "Bearer error=\"invalid_token\", error_description=\"the access token has been revoked\"",
        ),
    )
}

/// A human administrator's token whose person can no longer sign in (suspended or removed):
/// 401 `invalid_token`, as for a revoked token.
pub(crate) fn api_person_gone() -> Problem {
    Problem::unauthorized("the person of this access token can no longer sign in").with_header(
        WWW_AUTHENTICATE,
        HeaderValue::from_static(
            "Bearer error=\"invalid_token\", error_description=\"the person of this access token can no longer sign in\"",
        ),
    )
}

/// A person's token whose sign-in session (`sid`) has ended or expired, or whose person may no
/// longer sign in, on a route that acts for the signed-in person: 401 `invalid_token`.
pub(crate) fn api_session_ended() -> Problem {
    Problem::unauthorized("the sign-in session of this access token has ended").with_header(
        WWW_AUTHENTICATE,
        HeaderValue::from_static(
            "Bearer error=\"invalid_token\", error_description=\"the sign-in session of this access token has ended\"",
        ),
    )
}

/// An API key that is unknown, revoked, expired, another tenant's, malformed, presented with
/// the DPoP scheme or while keys are off: one 401 `invalid_token`, shaped like a refused access
/// token's, whatever the reason (no oracle).
pub(crate) fn api_key_refused() -> Problem {
    Problem::unauthorized("the API key is not valid").with_header(
        WWW_AUTHENTICATE,
        HeaderValue::from_static(
            "Bearer error=\"invalid_token\", error_description=\"the API key is not valid\"",
        ),
    )
}

/// A control-plane call without a usable operator token (`detail` says which case).
pub(crate) fn operator_unauthorized(detail: &'static str) -> Problem {
    Problem::unauthorized(detail).with_header(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"svc-control-plane\""),
    )
}

/// A scrape without the configured static metrics token.
pub(crate) fn metrics_token_required() -> Problem {
    Problem::unauthorized("a valid metrics bearer token is required")
        .with_header(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::CONTENT_TYPE;

    fn challenge(response: &Response) -> Option<&str> {
        response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
    }

    #[test]
    fn userinfo_challenges_name_token_errors_only() {
        let missing = userinfo_without_token();
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(challenge(&missing), Some("Bearer realm=\"svc\""));

        let expired = userinfo_refused(&OAuthError::invalid_token("expired"), false);
        assert_eq!(expired.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&expired),
            Some("Bearer realm=\"svc\", error=\"invalid_token\"")
        );
        assert_eq!(expired.headers()[CONTENT_TYPE], "application/json");

        let narrow = userinfo_refused(&OAuthError::insufficient_scope("needs openid"), false);
        assert_eq!(narrow.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            challenge(&narrow),
            Some("Bearer realm=\"svc\", error=\"insufficient_scope\"")
        );

        let down = userinfo_refused(&OAuthError::temporarily_unavailable("db down"), false);
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(challenge(&down), None);
    }

    #[test]
    fn management_api_refusals_carry_the_sdk_challenge() {
        let missing = svc_sdk::bearer_token(None).unwrap_err();
        let problem = api_refused(&missing);
        assert_eq!(problem.status(), StatusCode::UNAUTHORIZED);
        let response = problem.into_response();
        assert_eq!(
            challenge(&response),
            Some(missing.www_authenticate().as_str())
        );

        let revoked = api_token_revoked().into_response();
        assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&revoked),
            Some(
                "Bearer error=\"invalid_token\", error_description=\"the access token has been revoked\""
            )
        );
    }

    #[test]
    fn operator_and_metrics_challenges() {
        let operator = operator_unauthorized("an operator token is required").into_response();
        assert_eq!(operator.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&operator),
            Some("Bearer realm=\"svc-control-plane\"")
        );
        let metrics = metrics_token_required().into_response();
        assert_eq!(challenge(&metrics), Some("Bearer"));
    }
}
