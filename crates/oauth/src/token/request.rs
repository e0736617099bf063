//! Parsing of a token request from its raw form pairs and `Authorization` header.
//!
//! Rules enforced here, in this order:
//! 1. Parameters sent without a value are treated as omitted (RFC 6749 §3.2).
//! 2. No parameter may be repeated (RFC 6749 §3.2: "MUST NOT be included more than once"); a
//!    repeat is `invalid_request` naming it. `resource` is the exception: RFC 8707 §2 allows
//!    several, so they are collected and the grant decides (we issue one audience).
//! 3. Unknown parameters are ignored (RFC 6749 §3.2), but kept for the grants that know them.
//! 4. `grant_type` is required (`invalid_request`); an unknown or malformed value is
//!    `unsupported_grant_type` (RFC 6749 §5.2).
//! 5. At most one client authentication mechanism: HTTP Basic, `client_secret` in the body, or a
//!    `client_assertion` (RFC 6749 §2.3: "MUST NOT use more than one authentication method in
//!    each request"); otherwise `invalid_request`.
//! 6. HTTP Basic credentials are `application/x-www-form-urlencoded` before base64
//!    (RFC 6749 §2.3.1): both halves are decoded. A malformed header is `invalid_client` with a
//!    Basic challenge (RFC 6749 §5.2).
//! 7. `client_assertion` and `client_assertion_type` come together (RFC 7521 §4.2).
//!
//! Nothing here looks at the store: which method the client registered is checked by
//! [`crate::client_auth`].

use crate::error::OAuthError;
use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use std::collections::BTreeMap;
use std::fmt;
use svc_domain::GrantType;

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const JWT_BEARER_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Longest parameter name or value echoed in an error description.
const MAX_ECHO: usize = 64;

/// Longest client id [`client_id_hint`] returns; anything longer is no id of ours.
const MAX_HINT: usize = 128;

/// A credential as presented (a secret or an assertion); `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential(String);

impl Credential {
    /// Wraps a presented credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself, for verification only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credential(<redacted>)")
    }
}

/// The client authentication a request carries; which one the client *registered* is not known
/// yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientCredentials {
    /// Neither a client id nor a credential.
    Absent,
    /// Only `client_id` in the body (a public client, method `none`).
    ClientId {
        /// The claimed client id, unparsed.
        client_id: String,
    },
    /// HTTP Basic (RFC 6749 §2.3.1), both halves form-urldecoded.
    Basic {
        /// The user-id half.
        client_id: String,
        /// The password half.
        secret: Credential,
    },
    /// `client_id` and `client_secret` in the body (RFC 6749 §2.3.1).
    Post {
        /// The claimed client id.
        client_id: String,
        /// The presented secret.
        secret: Credential,
    },
    /// A client assertion (RFC 7521 §4.2).
    Assertion {
        /// `client_id` in the body, when sent; it must equal the assertion's `sub`.
        client_id: Option<String>,
        /// `client_assertion_type`.
        assertion_type: String,
        /// `client_assertion`.
        assertion: Credential,
    },
}

impl ClientCredentials {
    /// Whether the client tried HTTP Basic (the error then carries a Basic challenge).
    pub fn used_basic(&self) -> bool {
        matches!(self, Self::Basic { .. })
    }
}

/// A syntactically valid token request.
#[derive(Clone)]
pub struct TokenRequest {
    grant_type: GrantType,
    client: ClientCredentials,
    scope: Option<String>,
    resources: Vec<String>,
    params: BTreeMap<String, String>,
    /// The address the request came from, when the HTTP layer knows it.
    peer: Option<std::net::IpAddr>,
    /// The verified DPoP proof that came with it (RFC 9449 §5).
    proof: Option<crate::dpop::Proof>,
}

impl fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Grant parameters (`code`, `refresh_token`, `code_verifier`) are credentials too:
        // show their names only.
        f.debug_struct("TokenRequest")
            .field("grant_type", &self.grant_type)
            .field("client", &self.client)
            .field("scope", &self.scope)
            .field("resources", &self.resources)
            .field("other_params", &self.params.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TokenRequest {
    /// Parses the form pairs (already form-urldecoded by the HTTP layer) and the optional
    /// `Authorization` header value.
    pub fn parse(
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<Self, OAuthError> {
        let (mut params, resources) = collect_params(form)?;
        let grant_type = grant_type(params.remove("grant_type"))?;
        let client = client_credentials(&mut params, authorization)?;
        let scope = params.remove("scope");
        Ok(Self {
            grant_type,
            client,
            scope,
            resources,
            params,
            peer: None,
            proof: None,
        })
    }

    /// The same request, known to come from `peer` (the HTTP layer's client address).
    #[must_use]
    pub fn from_peer(self, peer: Option<std::net::IpAddr>) -> Self {
        Self { peer, ..self }
    }

    /// The address the request came from, when known.
    pub fn peer(&self) -> Option<std::net::IpAddr> {
        self.peer
    }

    /// The same request, with the DPoP proof it carried (verified by [`crate::dpop::Dpop`]).
    #[must_use]
    pub fn with_proof(self, proof: Option<crate::dpop::Proof>) -> Self {
        Self { proof, ..self }
    }

    /// The verified DPoP proof, if the request carried one.
    pub fn proof(&self) -> Option<&crate::dpop::Proof> {
        self.proof.as_ref()
    }

    /// The thumbprint of the DPoP proof's key, if the request carried one.
    pub fn proof_jkt(&self) -> Option<&str> {
        self.proof.as_ref().map(|p| p.jkt.as_str())
    }

    /// The requested grant.
    pub fn grant_type(&self) -> GrantType {
        self.grant_type
    }

    /// The presented client authentication.
    pub fn client(&self) -> &ClientCredentials {
        &self.client
    }

    /// The raw `scope` parameter, when sent.
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// Every `resource` parameter, in order (RFC 8707 §2).
    pub fn resources(&self) -> &[String] {
        &self.resources
    }

    /// Another (grant-specific) parameter, when sent with a value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

/// Rules 1–3: drops empty values, refuses repeats, collects `resource`.
/// A request to an endpoint that authenticates clients exactly like the token endpoint but
/// carries no grant: introspection (RFC 7662 §2.1) and revocation (RFC 7009 §2.1).
pub struct ClientRequest {
    client: ClientCredentials,
    params: BTreeMap<String, String>,
}

impl fmt::Debug for ClientRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `token` is a credential: names only.
        f.debug_struct("ClientRequest")
            .field("client", &self.client)
            .field("params", &self.params.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ClientRequest {
    /// Parses the form pairs and the optional `Authorization` header value (same rules as
    /// [`TokenRequest::parse`]: no repeated parameters, one authentication mechanism).
    pub fn parse(
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<Self, OAuthError> {
        let (mut params, _resources) = collect_params(form)?;
        let client = client_credentials(&mut params, authorization)?;
        Ok(Self { client, params })
    }

    /// The presented client authentication.
    pub fn client(&self) -> &ClientCredentials {
        &self.client
    }

    /// Any other parameter, by name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

fn collect_params(
    form: &[(String, String)],
) -> Result<(BTreeMap<String, String>, Vec<String>), OAuthError> {
    let mut params = BTreeMap::new();
    let mut resources = Vec::new();
    for (name, value) in form {
        if value.is_empty() || name.is_empty() {
            // RFC 6749 §3.2: "Parameters sent without a value MUST be treated as if they were
            // omitted from the request."
            continue;
        }
        if name == "resource" {
            resources.push(value.clone());
            continue;
        }
        if params.insert(name.clone(), value.clone()).is_some() {
            return Err(OAuthError::invalid_request(match echo(name) {
                Some(name) => format!("parameter `{name}` is repeated (RFC 6749 §3.2)"),
                None => "a parameter is repeated (RFC 6749 §3.2)".to_owned(),
            }));
        }
    }
    Ok((params, resources))
}

/// Rule 4.
fn grant_type(value: Option<String>) -> Result<GrantType, OAuthError> {
    let value = value.ok_or_else(|| OAuthError::invalid_request("grant_type is required"))?;
    GrantType::parse(&value).ok_or_else(|| {
        OAuthError::unsupported_grant_type(match echo(&value) {
            Some(v) => format!("grant_type `{v}` is not supported"),
            None => "grant_type is malformed".to_owned(),
        })
    })
}

/// Rules 5–7.
fn client_credentials(
    params: &mut BTreeMap<String, String>,
    authorization: Option<&str>,
) -> Result<ClientCredentials, OAuthError> {
    let body_id = params.remove("client_id");
    let secret = params.remove("client_secret");
    let assertion = params.remove("client_assertion");
    let assertion_type = params.remove("client_assertion_type");

    let mechanisms = [
        authorization.is_some(),
        secret.is_some(),
        assertion.is_some(),
    ];
    if mechanisms.iter().filter(|used| **used).count() > 1 {
        return Err(OAuthError::invalid_request(
            "use exactly one client authentication method: the Authorization header, \
             client_secret, or client_assertion (RFC 6749 §2.3)",
        ));
    }
    if assertion_type.is_some() && assertion.is_none() {
        return Err(OAuthError::invalid_request(
            "client_assertion_type requires client_assertion (RFC 7521 §4.2)",
        ));
    }

    if let Some(header) = authorization {
        let (client_id, secret) = parse_basic(header).map_err(|e| e.with_basic_attempt(true))?;
        if body_id.as_ref().is_some_and(|id| *id != client_id) {
            return Err(OAuthError::invalid_request(
                "client_id in the body differs from the one in the Authorization header",
            ));
        }
        return Ok(ClientCredentials::Basic {
            client_id,
            secret: Credential(secret),
        });
    }
    if let Some(secret) = secret {
        let client_id = body_id.ok_or_else(|| {
            OAuthError::invalid_request("client_secret requires client_id (RFC 6749 §2.3.1)")
        })?;
        return Ok(ClientCredentials::Post {
            client_id,
            secret: Credential(secret),
        });
    }
    if let Some(assertion) = assertion {
        let assertion_type = assertion_type.ok_or_else(|| {
            OAuthError::invalid_request(
                "client_assertion requires client_assertion_type (RFC 7521 §4.2)",
            )
        })?;
        return Ok(ClientCredentials::Assertion {
            client_id: body_id,
            assertion_type,
            assertion: Credential(assertion),
        });
    }
    Ok(match body_id {
        Some(client_id) => ClientCredentials::ClientId { client_id },
        None => ClientCredentials::Absent,
    })
}

/// Base64 as RFC 7617 uses it: the standard alphabet; padding tolerated either way.
const BASIC_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Rule 6: `Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1, RFC 7617 §2).
fn parse_basic(header: &str) -> Result<(String, String), OAuthError> {
    let header = header.trim();
    let (scheme, token) = header.split_once(' ').unwrap_or((header, ""));
    // RFC 9110 §11.1: the scheme is case-insensitive.
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(OAuthError::invalid_client(
            "the Authorization header must use the Basic scheme",
        ));
    }
    let malformed = || OAuthError::invalid_client("malformed Basic credentials");
    let decoded = BASIC_BASE64.decode(token.trim()).map_err(|_| malformed())?;
    let decoded = String::from_utf8(decoded).map_err(|_| malformed())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(malformed)?;
    let id = form_urldecode(id).ok_or_else(malformed)?;
    let secret = form_urldecode(secret).ok_or_else(malformed)?;
    if id.is_empty() {
        return Err(malformed());
    }
    Ok((id, secret))
}

/// Decodes one `application/x-www-form-urlencoded` component (`+` is a space, `%HH` a byte);
/// `None` for a bad escape or bytes that are not UTF-8.
fn form_urldecode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = hex(bytes.next()?)?;
                let lo = hex(bytes.next()?)?;
                out.push(hi << 4 | lo);
            }
            other => out.push(other),
        }
    }
    String::from_utf8(out).ok()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `s` when it is short printable ASCII that is safe to quote back to the client.
fn echo(s: &str) -> Option<&str> {
    (s.len() <= MAX_ECHO && s.bytes().all(|b| b.is_ascii_graphic() && b != b'`')).then_some(s)
}

/// The client a token request claims to come from, for per-client rate limiting only: never
/// validated, never trusted for anything else. In order: the body `client_id`, the Basic
/// user-id, the `sub` of an (unverified) client assertion.
pub fn client_id_hint(form: &[(String, String)], authorization: Option<&str>) -> Option<String> {
    let body = |name: &str| {
        form.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    };
    let hint = if let Some(id) = body("client_id") {
        Some(id.to_owned())
    } else if let Some(header) = authorization {
        parse_basic(header).ok().map(|(id, _)| id)
    } else {
        // A client's assertion, else an agent's (the agent grant authenticates by it alone).
        body("client_assertion")
            .or_else(|| body("assertion"))
            .and_then(unverified_assertion_sub)
    };
    hint.filter(|id| !id.is_empty() && id.len() <= MAX_HINT)
}

/// The `sub` claim of a compact JWS, without any verification.
fn unverified_assertion_sub(assertion: &str) -> Option<String> {
    let payload = assertion.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("sub")?.as_str().map(str::to_owned)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
