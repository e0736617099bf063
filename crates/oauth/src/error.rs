//! [`OAuthError`]: the errors of the protocol endpoints, in RFC 6749 §5.2 terms.
//!
//! Rules enforced here:
//! - The `error` code is one of RFC 6749 §5.2 (plus `invalid_target`, RFC 8707 §2, RFC 6750
//!   §3.1's bearer-token codes, and `unsupported_response_type` of RFC 6749 §4.1.2.1 for the
//!   PAR endpoint, RFC 9126 §2.3). This crate names the code and never an HTTP status: `svc-http`'s
//!   error seam picks the status for each code and renders the body (ARCHITECTURE.md rule 5).
//! - An `invalid_client` error records whether the client tried HTTP Basic, so the response can
//!   challenge it (RFC 6749 §5.2), see [`OAuthError::basic_challenge`].
//! - Browser-facing endpoints that must not redirect say why with an [`ErrorPageKind`].
//! - Descriptions are written for the integrator and never echo secrets or assertions. Internal
//!   causes (a store error, which of "unknown client" or "wrong secret" it was) stay in
//!   [`OAuthError::log_detail`] and [`std::error::Error::source`], for logs only.
//! - Store and key failures map to `temporarily_unavailable` (503) when retrying may help, else
//!   `server_error` (500) with a fixed description (CONTRACTS.md "Errors": 5xx bodies carry no
//!   internal detail).

use crate::keys::KeyError;
use std::borrow::Cow;
use std::fmt;
use svc_store::StoreError;

/// The `error` codes of the token endpoint (RFC 6749 §5.2, RFC 8707 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// A parameter is missing, repeated or malformed, or several client authentication
    /// mechanisms were used at once. 400.
    InvalidRequest,
    /// Client authentication failed: unknown client, wrong secret, wrong method, bad assertion,
    /// or none included. 401.
    InvalidClient,
    /// The authorization grant or refresh token is invalid, expired, revoked or bound to
    /// another client or redirect URI. 400.
    InvalidGrant,
    /// The authenticated client may not use this (known) grant type. 400.
    UnauthorizedClient,
    /// The grant type is unknown, malformed, or not available on this deployment. 400.
    UnsupportedGrantType,
    /// The requested scope is malformed or exceeds what the client may be granted. 400.
    InvalidScope,
    /// A pushed authorization request asks for a `response_type` we do not serve (RFC 6749
    /// §4.1.2.1, which RFC 9126 §2.3 lets the PAR endpoint use). 400.
    UnsupportedResponseType,
    /// The requested `resource` is malformed or not one this client may get tokens for
    /// (RFC 8707 §2). 400.
    InvalidTarget,
    /// A bearer token is missing, malformed, expired or revoked (RFC 6750 §3.1). 401.
    InvalidToken,
    /// The bearer token lacks a scope the resource needs (RFC 6750 §3.1). 403.
    InsufficientScope,
    /// An unexpected failure on our side. 500.
    ServerError,
    /// A dependency (database, key management) is unavailable; retry later. 503.
    TemporarilyUnavailable,
    /// Device grant poll: the person has not decided yet (RFC 8628 §3.5). 400.
    AuthorizationPending,
    /// Device grant poll sooner than the interval; the interval grew by 5 s (RFC 8628 §3.5).
    /// 400, with `Retry-After`.
    SlowDown,
    /// Device grant poll: the person declined, or the request was refused for them
    /// (RFC 8628 §3.5). 400.
    AccessDenied,
    /// Device grant poll: the device code expired; start again (RFC 8628 §3.5). 400.
    ExpiredToken,
    /// A CIBA `binding_message` that is too long or not printable (CIBA Core §13). 400.
    InvalidBindingMessage,
    /// A request object (RFC 9101 §6.3) pushed to `/oauth/par` that is malformed, not signed
    /// by the client, expired or for another audience. 400.
    InvalidRequestObject,
    /// `invalid_dpop_proof` (RFC 9449 §5, §7.1): the DPoP proof is missing where required,
    /// malformed, replayed or does not match the request or the token's binding.
    InvalidDpopProof,
    /// `use_dpop_nonce` (RFC 9449 §8, §9): the proof must carry the server nonce sent in the
    /// `DPoP-Nonce` header.
    UseDpopNonce,
    /// `invalid_authorization_details` (RFC 9396 §5, §6.2): details of an unknown or
    /// unregistered type, not matching their type's schema, or wider than what was granted. 400.
    InvalidAuthorizationDetails,
}

impl ErrorCode {
    /// The wire spelling of the `error` member.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::InvalidScope => "invalid_scope",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidTarget => "invalid_target",
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
            Self::ServerError => "server_error",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
            Self::AuthorizationPending => "authorization_pending",
            Self::SlowDown => "slow_down",
            Self::AccessDenied => "access_denied",
            Self::ExpiredToken => "expired_token",
            Self::InvalidBindingMessage => "invalid_binding_message",
            Self::InvalidRequestObject => "invalid_request_object",
            Self::InvalidDpopProof => "invalid_dpop_proof",
            Self::UseDpopNonce => "use_dpop_nonce",
            Self::InvalidAuthorizationDetails => "invalid_authorization_details",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a browser-facing endpoint (`/oauth/authorize`, `/oauth/end-session`) shows an error page
/// instead of redirecting; the HTTP layer picks the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorPageKind {
    /// The request cannot be honoured as sent: an unknown client, an unregistered redirect URI,
    /// an expired interaction, a malformed logout request. The person sees a 400 page.
    Refused,
    /// A dependency (the database) failed; trying again may help. The person sees a 503 page.
    Unavailable,
}

type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error response of a protocol endpoint.
pub struct OAuthError {
    code: ErrorCode,
    description: Cow<'static, str>,
    basic_attempted: bool,
    retry_after: Option<u32>,
    dpop_nonce: Option<String>,
    dpop_challenge: bool,
    log_detail: Option<Cow<'static, str>>,
    source: Option<Source>,
}

impl OAuthError {
    /// An error with `code` and a description safe to show to the client.
    pub fn new(code: ErrorCode, description: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            description: description.into(),
            basic_attempted: false,
            retry_after: None,
            dpop_nonce: None,
            dpop_challenge: false,
            log_detail: None,
            source: None,
        }
    }

    /// `invalid_request`.
    pub fn invalid_request(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidRequest, description)
    }

    /// `invalid_token` (RFC 6750 §3.1).
    pub fn invalid_token(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidToken, description)
    }

    /// `insufficient_scope` (RFC 6750 §3.1).
    pub fn insufficient_scope(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InsufficientScope, description)
    }

    /// `invalid_client`.
    pub fn invalid_client(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidClient, description)
    }

    /// `invalid_grant`.
    pub fn invalid_grant(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidGrant, description)
    }

    /// `unauthorized_client`.
    pub fn unauthorized_client(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::UnauthorizedClient, description)
    }

    /// `unsupported_grant_type`.
    pub fn unsupported_grant_type(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::UnsupportedGrantType, description)
    }

    /// `invalid_scope`.
    pub fn invalid_scope(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidScope, description)
    }

    /// `invalid_authorization_details` (RFC 9396 §6.2).
    pub fn invalid_authorization_details(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidAuthorizationDetails, description)
    }

    /// `invalid_target`.
    pub fn invalid_target(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidTarget, description)
    }

    /// `server_error`, keeping `source` for the logs.
    pub fn server_error(source: impl Into<Source>) -> Self {
        Self::new(
            ErrorCode::ServerError,
            "the server failed to process the request",
        )
        .with_source(source)
    }

    /// `temporarily_unavailable`, keeping `source` for the logs.
    pub fn temporarily_unavailable(source: impl Into<Source>) -> Self {
        Self::new(
            ErrorCode::TemporarilyUnavailable,
            "the service is temporarily unavailable; retry later",
        )
        .with_source(source)
    }

    /// Adds an internal detail for the logs; never shown to the client.
    pub fn with_log_detail(mut self, detail: impl Into<Cow<'static, str>>) -> Self {
        self.log_detail = Some(detail.into());
        self
    }

    /// Adds the internal cause, for the logs.
    pub fn with_source(mut self, source: impl Into<Source>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Records whether the client tried HTTP Basic authentication.
    pub fn with_basic_attempt(mut self, attempted: bool) -> Self {
        self.basic_attempted |= attempted;
        self
    }

    /// Asks the client to wait `secs` seconds before the next request (`Retry-After`, with
    /// `slow_down`).
    pub fn with_retry_after(mut self, secs: u32) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// Seconds the client must wait before trying again, when the error says.
    pub fn retry_after(&self) -> Option<u32> {
        self.retry_after
    }

    /// Sends `nonce` in a `DPoP-Nonce` header (RFC 9449 §8) with the error.
    pub fn with_dpop_nonce(mut self, nonce: String) -> Self {
        self.dpop_nonce = Some(nonce);
        self
    }

    /// The server nonce to send in `DPoP-Nonce`, if any.
    pub fn dpop_nonce(&self) -> Option<&str> {
        self.dpop_nonce.as_deref()
    }

    /// Marks a refusal about a token's DPoP binding, so a resource answers with a `DPoP`
    /// challenge even when the token came with the `Bearer` scheme (RFC 9449 §7.1).
    pub fn with_dpop_challenge(mut self) -> Self {
        self.dpop_challenge = true;
        self
    }

    /// Whether the refusal concerns a DPoP binding (see [`Self::with_dpop_challenge`]).
    pub fn dpop_challenge(&self) -> bool {
        self.dpop_challenge
    }

    /// The `error` code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The `error_description`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Whether the response must carry `WWW-Authenticate: Basic realm="svc"`: an
    /// `invalid_client` error for a client that tried HTTP Basic (RFC 6749 §5.2).
    pub fn basic_challenge(&self) -> bool {
        self.basic_attempted && self.code == ErrorCode::InvalidClient
    }

    /// What really happened, for the logs (e.g. "unknown client" behind a generic
    /// "client authentication failed").
    pub fn log_detail(&self) -> Option<&str> {
        self.log_detail.as_deref()
    }
}

impl fmt::Debug for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthError")
            .field("code", &self.code)
            .field("description", &self.description)
            .field("basic_attempted", &self.basic_attempted)
            .field("retry_after", &self.retry_after)
            .field("dpop_nonce", &self.dpop_nonce)
            .field("log_detail", &self.log_detail)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.description)?;
        if let Some(detail) = &self.log_detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

impl std::error::Error for OAuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<StoreError> for OAuthError {
    fn from(error: StoreError) -> Self {
        if matches!(error, StoreError::Unavailable(_)) {
            Self::temporarily_unavailable(error)
        } else {
            Self::server_error(error)
        }
    }
}

impl From<KeyError> for OAuthError {
    fn from(error: KeyError) -> Self {
        if error.is_unavailable() {
            Self::temporarily_unavailable(error)
        } else {
            Self::server_error(error)
        }
    }
}

impl From<svc_crypto::CryptoError> for OAuthError {
    fn from(error: svc_crypto::CryptoError) -> Self {
        Self::server_error(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn codes_follow_rfc6749_section_5_2_and_rfc6750_section_3_1() {
        // The status of each code is svc-http's (`error::oauth::status`, tested there).
        let table = [
            (ErrorCode::InvalidRequest, "invalid_request"),
            (ErrorCode::InvalidClient, "invalid_client"),
            (ErrorCode::InvalidGrant, "invalid_grant"),
            (ErrorCode::UnauthorizedClient, "unauthorized_client"),
            (ErrorCode::UnsupportedGrantType, "unsupported_grant_type"),
            (ErrorCode::InvalidScope, "invalid_scope"),
            (
                ErrorCode::UnsupportedResponseType,
                "unsupported_response_type",
            ),
            (ErrorCode::InvalidTarget, "invalid_target"),
            (ErrorCode::InvalidToken, "invalid_token"),
            (ErrorCode::InsufficientScope, "insufficient_scope"),
            (ErrorCode::ServerError, "server_error"),
            (ErrorCode::TemporarilyUnavailable, "temporarily_unavailable"),
        ];
        for (code, wire) in table {
            assert_eq!(code.as_str(), wire);
            assert_eq!(code.to_string(), wire);
            assert_eq!(OAuthError::new(code, "x").code(), code);
        }
    }

    #[test]
    fn basic_challenge_only_for_invalid_client_after_a_basic_attempt() {
        assert!(
            OAuthError::invalid_client("x")
                .with_basic_attempt(true)
                .basic_challenge()
        );
        assert!(!OAuthError::invalid_client("x").basic_challenge());
        assert!(
            !OAuthError::invalid_request("x")
                .with_basic_attempt(true)
                .basic_challenge()
        );
        // Once recorded, a later `false` does not erase the attempt.
        assert!(
            OAuthError::invalid_client("x")
                .with_basic_attempt(true)
                .with_basic_attempt(false)
                .basic_challenge()
        );
    }

    #[test]
    fn store_and_key_failures_map_to_503_or_500_without_detail() {
        let unavailable = OAuthError::from(StoreError::Unavailable("db down".into()));
        assert_eq!(unavailable.code(), ErrorCode::TemporarilyUnavailable);
        assert!(unavailable.source().is_some(), "the cause is kept for logs");
        assert!(!unavailable.description().contains("db down"));

        let corrupt = OAuthError::from(StoreError::Corrupt("bad row".into()));
        assert_eq!(corrupt.code(), ErrorCode::ServerError);
        assert!(!corrupt.description().contains("bad row"));

        let kms = OAuthError::from(KeyError::Kms("socket closed".into()));
        assert_eq!(kms.code(), ErrorCode::TemporarilyUnavailable);
        let crypto = OAuthError::from(KeyError::Crypto(svc_crypto::CryptoError::Signing));
        assert_eq!(crypto.code(), ErrorCode::ServerError);
    }

    #[test]
    fn description_is_for_the_client_and_log_detail_stays_internal() {
        // The wire body (`{"error","error_description"}` only) is svc-http's, tested there.
        let error = OAuthError::invalid_client("client authentication failed")
            .with_log_detail("wrong secret");
        assert_eq!(error.code(), ErrorCode::InvalidClient);
        assert_eq!(error.description(), "client authentication failed");
        assert_eq!(error.log_detail(), Some("wrong secret"));
        assert!(error.to_string().contains("wrong secret"));
    }
}
