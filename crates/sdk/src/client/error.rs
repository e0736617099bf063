//! Why a client call failed: one enum for the client side of the SDK, typed so a caller can
//! tell a refusal by svc (with its OAuth `error` code) from a check this SDK made on svc's answer
//! (state, issuer, ID token) and from the network.
//!
//! Messages never contain a token, a code, a secret or a claim value: `to_string()` is safe to
//! log.

/// A failure of the client side of the SDK.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The issuer is not an absolute `https` URL (or `http` for a local development issuer).
    #[error("the issuer is not an absolute http(s) URL")]
    InvalidIssuer,
    /// The discovery document could not be fetched or used (OpenID Connect Discovery 1.0 §4).
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The request could not be sent or its answer read.
    #[error("network: {0}")]
    Network(String),
    /// The operating system's random generator failed (no state, nonce or verifier can be
    /// made safely).
    #[error("the operating system's random generator failed")]
    Random,
    /// The client was configured without what this call needs (e.g. a `redirect_uri`).
    #[error("configuration: {0}")]
    Configuration(&'static str),

    /// The callback's `state` is missing or is not the one of the pending request (RFC 6749
    /// §10.12: a forged or replayed callback).
    #[error("the callback's state does not match the pending authorization request")]
    StateMismatch,
    /// The callback names another issuer, or none although svc always sends one (RFC 9207 §2.4:
    /// an authorization server mix-up).
    #[error("the callback comes from another issuer than the one the request went to")]
    IssuerMismatch,
    /// The callback carries an OAuth error (RFC 6749 §4.1.2.1), e.g. `access_denied`.
    #[error("the authorization was refused: {error}")]
    Authorization {
        /// The `error` code.
        error: String,
        /// The `error_description`, when given.
        description: Option<String>,
    },
    /// The callback has no `code`.
    #[error("the callback carries no authorization code")]
    MissingCode,

    /// An OAuth endpoint refused the request (RFC 6749 §5.2), e.g. `invalid_grant`.
    #[error("{endpoint} refused the request ({status}): {error}")]
    Refused {
        /// Which endpoint: `token`, `userinfo`.
        endpoint: &'static str,
        /// The HTTP status.
        status: u16,
        /// The `error` code (`server_error` when the body had none).
        error: String,
        /// The `error_description`, when given.
        description: Option<String>,
    },
    /// An answer did not have the shape its specification requires.
    #[error("unexpected answer: {0}")]
    InvalidResponse(&'static str),
    /// The ID token failed a check of OpenID Connect Core 1.0 §3.1.3.7.
    #[error("the ID token is not valid: {0}")]
    InvalidIdToken(IdTokenError),
    /// UserInfo describes another person than the ID token (OpenID Connect Core 1.0 §5.3.4).
    #[error("UserInfo names another subject than the ID token")]
    SubjectMismatch,

    /// The management API answered with a problem (RFC 9457).
    #[error("the management API answered {status}: {error}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The problem's `error` code (e.g. `insufficient_scope`, `not_found`).
        error: String,
        /// The problem's `detail`, when given.
        detail: Option<String>,
    },
}

/// Why an ID token was refused (OpenID Connect Core 1.0 §3.1.3.7, RFC 8725).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdTokenError {
    /// Not a compact JWS with JSON header and claims.
    #[error("not a well-formed signed JWT")]
    Malformed,
    /// `alg` is not the one this client expects (never `none` or HS*: RFC 8725 §3.1–3.2).
    #[error("signed with an algorithm this client does not accept")]
    DisallowedAlgorithm,
    /// `typ` says it is an access token (RFC 8725 §3.11).
    #[error("the token is an access token, not an ID token")]
    WrongType,
    /// No key of the issuer's JWKS has its `kid`, or that key cannot verify its `alg`.
    #[error("signed with a key the issuer does not publish for this algorithm")]
    UnknownKey,
    /// The issuer's keys could not be fetched.
    #[error("the issuer's keys are unavailable")]
    KeysUnavailable,
    /// The signature does not verify.
    #[error("the signature is invalid")]
    BadSignature,
    /// `iss` is not the issuer (item 2).
    #[error("issued by another issuer")]
    WrongIssuer,
    /// `aud` does not contain this client, or `azp` names another (items 3–5).
    #[error("issued to another client")]
    WrongAudience,
    /// Past `exp` (item 9).
    #[error("expired")]
    Expired,
    /// `iat` is missing or in the future (item 10).
    #[error("issued in the future")]
    IssuedInFuture,
    /// `nonce` differs from the request's (item 11: a replayed or injected token).
    #[error("the nonce does not match the authorization request")]
    NonceMismatch,
    /// A required claim (`sub`, `exp`, `iat`) is missing or of the wrong type.
    #[error("a required claim is missing")]
    MissingClaim,
}

impl From<IdTokenError> for ClientError {
    fn from(e: IdTokenError) -> Self {
        Self::InvalidIdToken(e)
    }
}

/// A `reqwest` error and its causes, without the URL's query (which may hold a code).
pub(crate) fn network(e: reqwest::Error) -> ClientError {
    let e = e.without_url();
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    ClientError::Network(message)
}
