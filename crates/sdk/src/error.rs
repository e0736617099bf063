//! Why an access token was refused, and how the HTTP layer says so.
//!
//! One variant per failure of the validation contract; [`ValidationError::status`],
//! [`ValidationError::error_code`] and [`ValidationError::www_authenticate`] are the only mapping
//! to HTTP, so every resource server answers the same way (RFC 6750 §3, RFC 9449 §7.1).
//!
//! Messages are static text: they never echo the token, a claim value or a header value
//! (spec "Errors": integrations never log tokens), so `to_string()` is safe for a response body.

/// A refusal by the access-token validation contract (spec "Authentication", rules 1–10 and
/// 6b), or the keys needed to decide being unavailable.
///
/// Each variant's doc line says which rule refused and what the client sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// Rule 1: no `Authorization` header, or one with another scheme (e.g. `Basic`).
    /// 401 `unauthorized`, challenge `Bearer` with no error code (RFC 6750 §3.1).
    #[error("an access token is required")]
    MissingToken,
    /// Rule 1: a `Bearer` header that is not exactly one token68 credential (empty, whitespace,
    /// two tokens, illegal characters, or longer than [`crate::MAX_TOKEN_BYTES`]).
    /// 401 `invalid_token`.
    #[error("the Authorization header does not carry exactly one well-formed access token")]
    MalformedAuthorization,

    /// Rule 2: not a compact JWS (RFC 7515 §7.1) with a JSON header and a JSON object payload.
    /// 401 `invalid_token`.
    #[error("the access token is not a well-formed signed JWT")]
    MalformedToken,
    /// Rule 2: `alg` is not ES256 or EdDSA (so never `none`, HS*, or RS256). 401 `invalid_token`.
    #[error("the access token is signed with an algorithm that is not accepted")]
    DisallowedAlgorithm,
    /// Rule 2: header `typ` is not `at+jwt` (RFC 9068 §4). 401 `invalid_token`.
    #[error("the token is not a JWT access token (typ must be at+jwt)")]
    WrongTokenType,
    /// Rule 2: the header lists `crit` extensions, none of which this validator understands
    /// (RFC 7515 §4.1.11). 401 `invalid_token`.
    #[error("the access token requires header extensions that are not supported")]
    UnsupportedCriticalHeader,
    /// Rule 2: the header names no `kid`. 401 `invalid_token`.
    #[error("the access token does not name its signing key")]
    MissingKeyId,
    /// Rule 2: no key in the issuer's JWKS has the token's `kid`. 401 `invalid_token`.
    #[error("the access token is signed with a key the issuer does not publish")]
    UnknownKey,
    /// Rule 2: the JWK with that `kid` cannot verify that `alg` (wrong key type or curve, or its
    /// `alg`, `use` or `key_ops` forbid it). 401 `invalid_token`.
    #[error("the access token's signing key does not match its algorithm")]
    KeyMismatch,
    /// Rule 2: the signature does not verify. 401 `invalid_token`.
    #[error("the access token signature is invalid")]
    BadSignature,

    /// An API key (`svck_…`) the issuer's introspection does not describe as an active key
    /// for this resource server: unknown, revoked, expired, for another API, or its subject
    /// may no longer act. 401 `invalid_token`.
    #[error("the API key is not active")]
    InactiveKey,

    /// Rule 3: `iss` is missing or differs from the issuer. 401 `invalid_token`.
    #[error("the access token was not issued by the expected issuer")]
    WrongIssuer,
    /// Rule 4: `aud` is missing or does not contain this API's audience. 401 `invalid_token`.
    #[error("the access token is not intended for this API")]
    WrongAudience,
    /// Rule 5: `exp` is missing or not a NumericDate (RFC 7519 §4.1.4). 401 `invalid_token`.
    #[error("the access token has no valid expiry")]
    MissingExpiry,
    /// Rule 5: `exp` is past, even with the leeway. 401 `invalid_token`.
    #[error("the access token has expired")]
    Expired,
    /// Rule 5: `nbf` is in the future, even with the leeway. 401 `invalid_token`.
    #[error("the access token is not valid yet")]
    NotYetValid,

    /// Rule 6: `tenant_id` is missing or names another tenant. 403 `forbidden`.
    #[error("the access token belongs to another tenant")]
    WrongTenant,
    /// Rule 6b: the route names an organization and the token's organization (`org_id`, else
    /// `org`) is missing, not a string, or another organization. 403 `forbidden`.
    #[error("the access token does not act in this organization")]
    WrongOrganization,
    /// Rule 7: `scope` lacks the route's required scope. 403 `insufficient_scope`, challenge
    /// `Bearer error="insufficient_scope", scope="<required>"` (RFC 6750 §3.1).
    #[error("the access token lacks the scope this operation requires")]
    InsufficientScope {
        /// The scope the route requires (from the route's requirements, not from the token).
        required: String,
    },
    /// Rule 8: `subject_type` is missing, unknown, or not accepted by the route. 403 `forbidden`.
    #[error("this kind of caller is not accepted for this operation")]
    SubjectTypeNotAccepted,
    /// Rule 9: the token carries `act` (it is delegated) and the route does not accept
    /// delegation. 403 `forbidden`.
    #[error("delegated access tokens are not accepted for this operation")]
    DelegationNotAllowed,
    /// Rule 9: `act` is not a well-formed actor chain (RFC 8693 §4.1). 403 `forbidden`.
    #[error("the access token's delegation chain is malformed")]
    InvalidActor,
    /// Rule 9: the chain names more actors than the route accepts. 403 `forbidden`.
    #[error("the access token's delegation chain is longer than this operation accepts")]
    DelegationTooDeep,
    /// Rule 9: the acting party (the outermost `act`) is not one the route trusts. 403
    /// `forbidden`.
    #[error("the party acting with this access token is not trusted for this operation")]
    ActorNotTrusted,

    /// Rule 10: the token is DPoP-bound (`cnf.jkt`) but no verified DPoP proof came with it, or
    /// it was presented with the `Bearer` scheme (RFC 9449 §7.2 forbids that downgrade).
    /// 401 `invalid_token`, challenge scheme `DPoP`.
    #[error("the access token is bound to a DPoP key and requires a DPoP proof")]
    DpopProofRequired,
    /// Rule 10: the verified DPoP proof's key thumbprint differs from `cnf.jkt` (RFC 9449 §6.1).
    /// 401 `invalid_token`, challenge scheme `DPoP`.
    #[error("the DPoP proof key does not match the access token's binding")]
    DpopKeyMismatch,
    /// Rule 10: the token came with the `DPoP` scheme but is not DPoP-bound (RFC 9449 §7.1).
    /// 401 `invalid_token`, challenge scheme `DPoP`.
    #[error("the access token is not bound to a DPoP key")]
    DpopTokenNotBound,
    /// Rule 10: `cnf` is present but carries no `jkt`, or is malformed: a binding this validator
    /// cannot check is refused, never ignored. 401 `invalid_token`.
    #[error("the access token is bound by a confirmation method that cannot be checked")]
    UnsupportedConfirmation,

    /// After rules 3–10: a claim RFC 9068 §2.2 requires (`sub`, `client_id`, `iat`, `jti`) is
    /// missing, a claim has the wrong JSON type, or `org_id` and `org` name different
    /// organizations (`claim` is then `org_id`). 401 `invalid_token`.
    #[error("the access token has a missing or malformed claim")]
    InvalidClaim {
        /// The claim's name.
        claim: &'static str,
    },

    /// The issuer's keys could not be fetched or were not acceptable, so no decision could be
    /// made. 503 `server_error`; the client may retry. The source says why, for logs.
    #[error("the issuer's signing keys are unavailable")]
    KeysUnavailable(#[source] KeySourceError),
}

/// Why [`ValidationError::KeysUnavailable`]: a problem between this resource server and the
/// issuer, never the client's fault. For logs; never sent to the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeySourceError {
    /// The HTTP client could not be built (TLS backend initialisation failed).
    #[error("the HTTP client could not be built")]
    Client,
    /// The request failed: connection, TLS, timeout, or an interrupted body.
    #[error("request to {url} failed: {message}")]
    Network {
        /// The discovery or JWKS address.
        url: String,
        /// The HTTP client's description of the failure.
        message: String,
    },
    /// The issuer answered with a non-success status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The discovery or JWKS address.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The document exceeded the size limit.
    #[error("{url} returned a document larger than {limit} bytes")]
    TooLarge {
        /// The discovery or JWKS address.
        url: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The discovery document or JWKS is not what the specifications require.
    #[error("{url} returned an invalid document: {problem}")]
    InvalidDocument {
        /// The discovery or JWKS address.
        url: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The discovery document names another issuer (OpenID Connect Discovery 1.0 §4.3).
    #[error("discovery names issuer {discovered}, not the configured {configured}")]
    IssuerMismatch {
        /// The issuer this validator was configured with.
        configured: String,
        /// The issuer the discovery document names.
        discovered: String,
    },
    /// The configured issuer is not an absolute `https` (or `http`) URL.
    #[error("the configured issuer is not an absolute http(s) URL")]
    InvalidIssuer,
}

impl ValidationError {
    /// The HTTP status a resource server answers with: 401 for rules 1–5 and 10 (and malformed
    /// claims), 403 for rules 6–9 (and 6b), 503 when keys are unavailable.
    pub fn status(&self) -> u16 {
        match self {
            Self::WrongTenant
            | Self::WrongOrganization
            | Self::InsufficientScope { .. }
            | Self::SubjectTypeNotAccepted
            | Self::DelegationNotAllowed
            | Self::InvalidActor
            | Self::DelegationTooDeep
            | Self::ActorNotTrusted => 403,
            Self::KeysUnavailable(_) => 503,
            _ => 401,
        }
    }

    /// The snake_case `error` code for the problem body (spec "Errors", "Classes"):
    /// `unauthorized` when no token was presented, `invalid_token` for any other 401
    /// (RFC 6750 §3.1), `insufficient_scope` for rule 7, `forbidden` for rules 6, 6b, 8 and 9,
    /// `server_error` when keys are unavailable.
    pub fn error_code(&self) -> &'static str {
        match self {
            Self::MissingToken => "unauthorized",
            Self::InsufficientScope { .. } => "insufficient_scope",
            Self::WrongTenant
            | Self::WrongOrganization
            | Self::SubjectTypeNotAccepted
            | Self::DelegationNotAllowed
            | Self::InvalidActor
            | Self::DelegationTooDeep
            | Self::ActorNotTrusted => "forbidden",
            Self::KeysUnavailable(_) => "server_error",
            _ => "invalid_token",
        }
    }

    /// The `WWW-Authenticate` value (RFC 6750 §3, RFC 9449 §7.1). Send it with every 401 and
    /// with `insufficient_scope`; for `forbidden` and 503 it is the bare `Bearer` challenge,
    /// which a server may omit.
    ///
    /// - no token: `Bearer` (RFC 6750 §3.1: no error code when credentials are absent);
    /// - other 401: `Bearer error="invalid_token", error_description="…"`, or the `DPoP`
    ///   scheme for rule 10 so the client knows a proof is expected;
    /// - rule 7: `Bearer error="insufficient_scope", scope="<required>"`.
    pub fn www_authenticate(&self) -> String {
        match self {
            Self::InsufficientScope { required } => {
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                    scope_param(required)
                )
            }
            Self::DpopProofRequired | Self::DpopKeyMismatch | Self::DpopTokenNotBound => {
                // RFC 9449 §7.1: DPoP-bound tokens are challenged with the DPoP scheme.
                format!("DPoP error=\"invalid_token\", error_description=\"{self}\"")
            }
            _ if self.error_code() == "invalid_token" => {
                format!("Bearer error=\"invalid_token\", error_description=\"{self}\"")
            }
            _ => "Bearer".to_owned(),
        }
    }
}

/// RFC 6750 §3: `scope` values are limited to `%x21 / %x23-5B / %x5D-7E` and SP, so nothing
/// can break out of the quoted string; anything else is dropped.
fn scope_param(scope: &str) -> String {
    scope
        .chars()
        .filter(|c| matches!(c, ' ' | '\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<ValidationError> {
        use ValidationError::*;
        vec![
            MissingToken,
            MalformedAuthorization,
            MalformedToken,
            DisallowedAlgorithm,
            WrongTokenType,
            UnsupportedCriticalHeader,
            MissingKeyId,
            UnknownKey,
            KeyMismatch,
            BadSignature,
            InactiveKey,
            WrongIssuer,
            WrongAudience,
            MissingExpiry,
            Expired,
            NotYetValid,
            WrongTenant,
            WrongOrganization,
            InsufficientScope {
                required: "users:read".into(),
            },
            SubjectTypeNotAccepted,
            DelegationNotAllowed,
            InvalidActor,
            DelegationTooDeep,
            ActorNotTrusted,
            DpopProofRequired,
            DpopKeyMismatch,
            DpopTokenNotBound,
            UnsupportedConfirmation,
            InvalidClaim { claim: "sub" },
            KeysUnavailable(KeySourceError::Client),
        ]
    }

    #[test]
    fn status_and_code_agree_with_the_spec_classes() {
        for e in all() {
            let expected = match e.error_code() {
                "unauthorized" | "invalid_token" => 401,
                "forbidden" | "insufficient_scope" => 403,
                "server_error" => 503,
                other => panic!("unexpected code {other}"),
            };
            assert_eq!(e.status(), expected, "{e:?}");
        }
    }

    #[test]
    fn challenges_follow_rfc_6750() {
        assert_eq!(ValidationError::MissingToken.www_authenticate(), "Bearer");
        assert_eq!(
            ValidationError::Expired.www_authenticate(),
            "Bearer error=\"invalid_token\", error_description=\"the access token has expired\""
        );
        assert_eq!(
            ValidationError::InsufficientScope {
                required: "users:read".into()
            }
            .www_authenticate(),
            "Bearer error=\"insufficient_scope\", scope=\"users:read\""
        );
        assert!(
            ValidationError::DpopKeyMismatch
                .www_authenticate()
                .starts_with("DPoP error=\"invalid_token\"")
        );
        assert_eq!(ValidationError::WrongTenant.www_authenticate(), "Bearer");
        assert_eq!(
            ValidationError::WrongOrganization.www_authenticate(),
            "Bearer"
        );
    }

    #[test]
    fn a_wrong_organization_is_refused_like_a_wrong_tenant() {
        for e in [
            ValidationError::WrongTenant,
            ValidationError::WrongOrganization,
        ] {
            assert_eq!((e.status(), e.error_code()), (403, "forbidden"), "{e:?}");
            assert_eq!(e.www_authenticate(), "Bearer", "{e:?}");
        }
    }

    #[test]
    fn challenges_are_valid_quoted_strings() {
        for e in all() {
            let value = e.www_authenticate();
            // Only the delimiting quotes: no message may contain `"` or `\`.
            assert_eq!(value.matches('"').count() % 2, 0, "{value}");
            assert!(!value.contains('\\'), "{value}");
            assert!(value.is_ascii(), "{value}");
        }
        let hostile = ValidationError::InsufficientScope {
            required: "a\"b\\c\u{e9}".into(),
        };
        assert_eq!(
            hostile.www_authenticate(),
            "Bearer error=\"insufficient_scope\", scope=\"abc\""
        );
    }
}
