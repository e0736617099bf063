//! The authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1) parsed into an
//! [`AuthorizationRequest`] by ordered, named checks.
//!
//! Two families of failure, kept apart because they are answered differently (RFC 6749
//! §4.1.2.1, CONTRACTS.md "Errors"):
//! - [`PageError`]: the client or its redirect URI cannot be trusted (missing, repeated or
//!   unknown `client_id`; missing, repeated or unregistered `redirect_uri`). The person sees an
//!   error page; we never redirect to an unverified URI (open redirector, RFC 9700 §4.11).
//! - [`RedirectError`]: anything else, sent back to the verified redirect URI with `state` and
//!   `iss`.
//!
//! Checks, in order:
//! 1. `client_id`: exactly once, a known application of the tenant ([`check_client`]).
//! 2. `redirect_uri`: exactly once, equal character for character to a registered one
//!    ([`check_redirect_uri`]; RFC 9700 §2.1 exact matching, OIDC Core §3.1.2.1 "REQUIRED").
//! 3. No other known parameter repeated (RFC 6749 §3.1: "Request and response parameters
//!    MUST NOT be included more than once"), an empty occurrence counting as one; repeats of
//!    parameters we do not know are ignored with the rest of them.
//! 4. `request` / `request_uri` do not get here when they are ours to take: a request object
//!    is unpacked by [`super::signed`] and a `request_uri` of our PAR endpoint by
//!    [`super::pushed`] first. What remains (request objects switched off, a request object
//!    inside one, OIDC Core §6.2 `request_uri` URLs, which we never fetch) is refused.
//! 5. `response_type` is `code` (RFC 6749 §4.1.1; `unsupported_response_type`), and the
//!    application may use the authorization-code grant (`unauthorized_client`).
//! 6. `response_mode`, when present, is `query` (the only mode we offer).
//! 7. `scope`: present, well-formed, within the application's allowed scopes (`invalid_scope`).
//! 8. PKCE ([`check_pkce`], RFC 7636 §4.3, RFC 9700 §2.1.1): `S256` only; a method without a
//!    challenge, a challenge without a method, `plain`, or a malformed challenge is
//!    `invalid_request`; public clients must send a challenge.
//! 9. `prompt` ([`check_prompt`], OIDC Core §3.1.2.1): values among `none`, `login`, `consent`,
//!    `select_account`; `none` stands alone.
//! 10. `max_age`: a non-negative integer of seconds.
//! 11. Sizes: `state`, `nonce`, `login_hint`, `acr_values` and `claims` are bounded so a hostile
//!     request cannot make us store megabytes; `claims` must be a JSON object (OIDC Core §5.5).
//! 12. `authorization_details` (RFC 9396 §2, §5): refused while the deployment has them off
//!     (rather than silently ignored: the client would believe they were honoured); otherwise a
//!     JSON array of objects of types the application registered, each valid against its type's
//!     schema (`invalid_authorization_details`).
//! 13. `organization` (CONTRACTS.md "Organizations, roles, keys, SCIM"), when present, is an
//!     organization id (`org_…`) or slug; whether the person may act in it is decided after
//!     they signed in.
//! 14. `resource` (RFC 8707) was resolved before these checks ([`crate::resources`]): the
//!     permissions of the API it names are exempt from check 7's allowed scopes.
//!
//! Unknown parameters are ignored (OIDC Core §3.1.2.1 / RFC 6749 §3.1).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use svc_domain::{
    ApiResource, Application, AuthorizationDetails, GrantType, RedirectUri, ScopeError, ScopeSet,
};

/// Longest `state` kept (clients often put a signed blob in it).
pub const MAX_STATE: usize = 2048;
/// Longest `nonce`.
pub const MAX_NONCE: usize = 512;
/// Longest `login_hint` / `acr_values`.
pub const MAX_HINT: usize = 512;
/// Longest `claims` request (JSON text).
pub const MAX_CLAIMS: usize = 4096;
/// Largest `max_age` accepted (one year): larger values are a client bug, not a policy.
pub const MAX_MAX_AGE: u64 = 365 * 24 * 3600;

/// A request that cannot be answered by redirect: shown on an error page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageError {
    /// RFC 6749 error code (`invalid_request`, `invalid_client`).
    pub error: &'static str,
    /// For the person reading the page.
    pub description: String,
}

impl PageError {
    fn new(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            error,
            description: description.into(),
        }
    }
}

/// An error sent back to the client's verified redirect URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectError {
    /// RFC 6749 §4.1.2.1 / OIDC Core §3.1.2.6 error code.
    pub error: &'static str,
    /// For the integrator.
    pub description: String,
}

impl RedirectError {
    /// An error with `code` and `description`.
    pub fn new(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            error,
            description: description.into(),
        }
    }
}

/// The `prompt` values we act on (OIDC Core §3.1.2.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// `none`: never show a page; fail with `login_required` / `consent_required` instead.
    pub none: bool,
    /// `login` (or `select_account`): authenticate again even with a live session.
    pub login: bool,
    /// `consent`: ask for consent even when remembered.
    pub consent: bool,
}

/// A validated authorization request, as stored with a pending interaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationRequest {
    /// The application (`client_id`).
    pub client_id: String,
    /// The verified redirect URI.
    pub redirect_uri: String,
    /// Requested scopes, space-delimited.
    pub scope: String,
    /// Echoed back.
    pub state: Option<String>,
    /// Put into the ID token.
    pub nonce: Option<String>,
    /// S256 challenge.
    pub code_challenge: Option<String>,
    /// Prompt flags.
    pub prompt: Prompt,
    /// Seconds since the last authentication that are acceptable.
    pub max_age: Option<u64>,
    /// Requested assurance (`acr_values`), which may step a session up.
    pub acr_values: Option<String>,
    /// The OIDC `claims` request (JSON text).
    pub claims: Option<String>,
    /// Pre-fills the sign-in page.
    pub login_hint: Option<String>,
    /// The organization the person is to act in (its id or slug), when the client named one.
    /// Requests stored before organizations existed have none.
    #[serde(default)]
    pub organization: Option<String>,
    /// The identifier of the API resource (RFC 8707 `resource`) the tokens are for, when the
    /// client named one registered in the tenant.
    #[serde(default)]
    pub resource: Option<String>,
    /// Set when a person typed a device's user code (RFC 8628): the request is the device's,
    /// approval stores its code under the device code and nothing is sent to a client. Never
    /// read from request parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceRef>,
    /// The DPoP key the code is to be bound to (RFC 9449 §10 `dpop_jkt`, or the proof sent to
    /// PAR): redeeming it then needs a proof of that key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// The RAR details asked for (RFC 9396), validated against the application's types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_details: Option<AuthorizationDetails>,
    /// Set (in memory only) once the person approved these details on the consent page: a
    /// remembered consent covers scopes, never a particular payment or document.
    #[serde(skip)]
    pub details_approved: bool,
}

/// The device authorization a request stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRef {
    /// The device code's hash, base64url.
    pub hash: String,
    /// The user code as the person typed it and the device shows it (`XXXX-XXXX`), for the
    /// consent page to show again (RFC 8628 §5.4).
    pub user_code: String,
}

impl AuthorizationRequest {
    /// The requested scopes (validated at parse time).
    pub fn scopes(&self) -> ScopeSet {
        ScopeSet::parse(&self.scope).unwrap_or_default()
    }

    /// The verified redirect URI.
    pub fn redirect(&self) -> Option<RedirectUri> {
        RedirectUri::parse(&self.redirect_uri).ok()
    }
}

/// The authorization-request parameters this endpoint knows (RFC 6749 §4.1.1, RFC 7636 §4.3,
/// OIDC Core §3.1.2.1, RFC 9101, RFC 9396, OAuth 2.0 Multiple Response Types). Only these are
/// refused when repeated; `resource` (RFC 8707 §2) may legitimately appear more than once.
pub(crate) const KNOWN: [&str; 24] = [
    "client_id",
    "redirect_uri",
    "response_type",
    "response_mode",
    "scope",
    "state",
    "nonce",
    "code_challenge",
    "code_challenge_method",
    "prompt",
    "max_age",
    "login_hint",
    "id_token_hint",
    "acr_values",
    "claims",
    "display",
    "ui_locales",
    "claims_locales",
    "registration",
    "request",
    "request_uri",
    "authorization_details",
    "organization",
    "dpop_jkt",
];

/// Whether `name` is one of the authorization-request parameters this endpoint knows.
pub(crate) fn is_authorization_parameter(name: &str) -> bool {
    KNOWN.contains(&name)
}

/// Parameters by name, every occurrence kept (empty ones too, so that a repeat is seen even
/// when one occurrence is empty). An empty value reads as absent (RFC 6749 §3.1).
pub(crate) struct Params<'a>(BTreeMap<&'a str, Vec<&'a str>>);

impl<'a> Params<'a> {
    pub(crate) fn new(pairs: &'a [(String, String)]) -> Self {
        let mut map: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, value) in pairs {
            map.entry(name.as_str()).or_default().push(value.as_str());
        }
        Self(map)
    }

    /// The single value of `name` (`None` when absent or empty); `Err(())` when it was sent
    /// more than once, empty or not.
    pub(crate) fn single(&self, name: &str) -> Result<Option<&'a str>, ()> {
        match self.0.get(name).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([one]) => Ok(Some(*one).filter(|v| !v.is_empty())),
            Some(_) => Err(()),
        }
    }

    /// Whether `name` was sent at all, even empty.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Every non-empty value of `name`, in order (for `resource`, which may repeat).
    pub(crate) fn all(&self, name: &str) -> Vec<&'a str> {
        self.0
            .get(name)
            .map(|v| v.iter().copied().filter(|v| !v.is_empty()).collect())
            .unwrap_or_default()
    }

    /// The first known parameter sent more than once.
    fn repeated(&self) -> Option<&'static str> {
        KNOWN
            .into_iter()
            .find(|name| self.0.get(name).is_some_and(|values| values.len() > 1))
    }
}

/// Check 1: the `client_id` names an application (looked up by the caller, which passes the
/// raw value's lookup result).
pub(crate) fn check_client_id<'a>(params: &Params<'a>) -> Result<&'a str, PageError> {
    match params.single("client_id") {
        Err(()) => Err(PageError::new(
            "invalid_request",
            "client_id was sent more than once",
        )),
        Ok(None) => Err(PageError::new("invalid_request", "client_id is missing")),
        Ok(Some(id)) => Ok(id),
    }
}

/// Check 2: `redirect_uri` is registered on `app`, character for character (RFC 9700 §4.1.3), a
/// loopback IP literal on any port (RFC 8252 §7.3, `RedirectUri::accepts_at_authorization`).
pub(crate) fn check_redirect_uri(
    app: &Application,
    params: &Params<'_>,
) -> Result<String, PageError> {
    let presented = match params.single("redirect_uri") {
        Err(()) => {
            return Err(PageError::new(
                "invalid_request",
                "redirect_uri was sent more than once",
            ));
        }
        Ok(None) => {
            return Err(PageError::new(
                "invalid_request",
                "redirect_uri is missing (OpenID Connect requires it)",
            ));
        }
        Ok(Some(uri)) => uri,
    };
    if app
        .redirect_uris
        .iter()
        .any(|r| r.accepts_at_authorization(presented))
    {
        Ok(presented.to_owned())
    } else {
        Err(PageError::new(
            "invalid_request",
            "redirect_uri is not registered for this application",
        ))
    }
}

/// Checks 3–13 once the redirect URI is trusted and the `resource` resolved (check 14);
/// `details_enabled` is `[oidc].authorization_details`.
pub(crate) fn check_rest(
    app: &Application,
    params: &Params<'_>,
    (client_id, redirect_uri): (&str, String),
    resource: Option<&ApiResource>,
    details_enabled: bool,
) -> Result<AuthorizationRequest, RedirectError> {
    // 3.
    if let Some(name) = params.repeated() {
        return Err(RedirectError::new(
            "invalid_request",
            format!("{name} was sent more than once"),
        ));
    }
    let get = |name: &str| params.single(name).ok().flatten();
    // 4.
    if get("request").is_some() {
        return Err(RedirectError::new(
            "request_not_supported",
            "request objects are not accepted here",
        ));
    }
    if get("request_uri").is_some() {
        return Err(RedirectError::new(
            "request_uri_not_supported",
            "request_uri is not supported on this deployment",
        ));
    }
    // 5.
    match get("response_type") {
        None => {
            return Err(RedirectError::new(
                "invalid_request",
                "response_type is missing",
            ));
        }
        Some("code") => {}
        Some(_) => {
            return Err(RedirectError::new(
                "unsupported_response_type",
                "only response_type=code is supported",
            ));
        }
    }
    if !app.allows_grant(GrantType::AuthorizationCode) {
        return Err(RedirectError::new(
            "unauthorized_client",
            "this application may not use the authorization code flow",
        ));
    }
    // 6.
    if let Some(mode) = get("response_mode")
        && mode != "query"
    {
        return Err(RedirectError::new(
            "invalid_request",
            "only response_mode=query is supported",
        ));
    }
    // 7.
    let scope = check_scope(app, get("scope"), resource)?;
    // 8.
    let code_challenge = check_pkce(app, get("code_challenge"), get("code_challenge_method"))?;
    // 9.
    let prompt = check_prompt(get("prompt"))?;
    // 10.
    let max_age = match get("max_age") {
        None => None,
        Some(raw) => match raw.parse::<u64>() {
            Ok(secs) if secs <= MAX_MAX_AGE => Some(secs),
            _ => {
                return Err(RedirectError::new(
                    "invalid_request",
                    "max_age must be a non-negative number of seconds",
                ));
            }
        },
    };
    // 11.
    let state = bounded(get("state"), "state", MAX_STATE)?;
    let nonce = bounded(get("nonce"), "nonce", MAX_NONCE)?;
    let login_hint = bounded(get("login_hint"), "login_hint", MAX_HINT)?;
    let acr_values = bounded(get("acr_values"), "acr_values", MAX_HINT)?;
    let claims = bounded(get("claims"), "claims", MAX_CLAIMS)?;
    if let Some(claims) = &claims
        && !matches!(
            serde_json::from_str::<serde_json::Value>(claims),
            Ok(serde_json::Value::Object(_))
        )
    {
        return Err(RedirectError::new(
            "invalid_request",
            "claims must be a JSON object (OpenID Connect Core §5.5)",
        ));
    }
    // 12.
    let authorization_details =
        check_authorization_details(app, get("authorization_details"), details_enabled)?;
    // 13.
    let organization = check_organization(get("organization"))?;
    // 14.
    let dpop_jkt = check_dpop_jkt(get("dpop_jkt"))?;
    Ok(AuthorizationRequest {
        client_id: client_id.to_owned(),
        redirect_uri,
        scope,
        state,
        nonce,
        code_challenge,
        prompt,
        max_age,
        acr_values,
        claims,
        login_hint,
        organization,
        resource: resource.map(|r| r.identifier.clone()),
        device: None,
        dpop_jkt,
        authorization_details,
        details_approved: false,
    })
}

/// Check 12, RFC 9396 §2 and §5: `authorization_details`, when sent, are enabled and valid for
/// `app`.
pub(crate) fn check_authorization_details(
    app: &Application,
    raw: Option<&str>,
    enabled: bool,
) -> Result<Option<AuthorizationDetails>, RedirectError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if !enabled {
        return Err(RedirectError::new(
            "invalid_request",
            "authorization_details is not enabled on this deployment \
             ([oidc].authorization_details = false)",
        ));
    }
    AuthorizationDetails::parse(raw, &app.authorization_details_types)
        .map(Some)
        .map_err(|e| RedirectError::new(INVALID_AUTHORIZATION_DETAILS, e.0))
}

/// RFC 9396 §5: the error code of details that are unknown, malformed or not allowed.
pub const INVALID_AUTHORIZATION_DETAILS: &str = "invalid_authorization_details";

/// Check 14, RFC 9449 §10: `dpop_jkt` is a base64url SHA-256 JWK thumbprint (RFC 7638).
pub(crate) fn check_dpop_jkt(raw: Option<&str>) -> Result<Option<String>, RedirectError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let well_formed = raw.len() == 43
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if well_formed {
        Ok(Some(raw.to_owned()))
    } else {
        Err(RedirectError::new(
            "invalid_request",
            "dpop_jkt must be the base64url SHA-256 thumbprint of a JWK (43 characters)",
        ))
    }
}

/// Check 13: `organization` names an organization by id or slug (its syntax only: whether it
/// exists and the person belongs to it is known once they signed in, and is answered the same
/// way for both, so the parameter cannot probe which organizations exist).
pub(crate) fn check_organization(raw: Option<&str>) -> Result<Option<String>, RedirectError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if svc_domain::OrganizationId::parse(raw).is_ok() || svc_domain::OrgSlug::parse(raw).is_ok() {
        Ok(Some(raw.to_owned()))
    } else {
        Err(RedirectError::new(
            "invalid_request",
            "organization must be an organization id (org_…) or slug",
        ))
    }
}

/// Check 7: scopes requested, well-formed and allowed (RFC 6749 §3.3); the permissions of
/// `resource` need no registration ([`crate::resources`] rule 3).
pub(crate) fn check_scope(
    app: &Application,
    raw: Option<&str>,
    resource: Option<&ApiResource>,
) -> Result<String, RedirectError> {
    let raw = raw.ok_or_else(|| RedirectError::new("invalid_scope", "scope is required"))?;
    let scopes = ScopeSet::parse(raw).map_err(|e| {
        RedirectError::new(
            "invalid_scope",
            match e {
                ScopeError::Malformed => "scope is malformed",
                ScopeError::TooLarge => "scope asks for too many or too long scopes",
            },
        )
    })?;
    let (registered, _) = crate::resources::split(&scopes, resource);
    if let Some(first) = registered.not_in(&app.allowed_scopes).next() {
        return Err(RedirectError::new(
            "invalid_scope",
            format!(
                "scope `{}` is not allowed for this application",
                first.as_str()
            ),
        ));
    }
    Ok(scopes.to_string())
}

/// Check 8: PKCE (RFC 7636 §4.2–4.3; RFC 9700 §2.1.1 "S256" only).
pub(crate) fn check_pkce(
    app: &Application,
    challenge: Option<&str>,
    method: Option<&str>,
) -> Result<Option<String>, RedirectError> {
    match (challenge, method) {
        (None, None) if app.is_confidential() => Ok(None),
        (None, None) => Err(RedirectError::new(
            "invalid_request",
            "code_challenge is required for public clients (PKCE, RFC 7636)",
        )),
        (None, Some(_)) => Err(RedirectError::new(
            "invalid_request",
            "code_challenge_method was sent without code_challenge",
        )),
        (Some(_), None) => Err(RedirectError::new(
            "invalid_request",
            "code_challenge_method must be S256 (plain is not supported)",
        )),
        (Some(_), Some(m)) if m != "S256" => Err(RedirectError::new(
            "invalid_request",
            "code_challenge_method must be S256 (plain is not supported)",
        )),
        (Some(c), Some(_)) => {
            // base64url of a SHA-256 digest, unpadded: exactly 43 characters.
            let ok = c.len() == 43
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if ok {
                Ok(Some(c.to_owned()))
            } else {
                Err(RedirectError::new(
                    "invalid_request",
                    "code_challenge must be the base64url SHA-256 of the verifier (43 characters)",
                ))
            }
        }
    }
}

/// Check 9: `prompt` values (OIDC Core §3.1.2.1).
pub(crate) fn check_prompt(raw: Option<&str>) -> Result<Prompt, RedirectError> {
    let mut prompt = Prompt::default();
    let Some(raw) = raw else {
        return Ok(prompt);
    };
    let mut count = 0;
    for value in raw.split(' ').filter(|v| !v.is_empty()) {
        count += 1;
        match value {
            "none" => prompt.none = true,
            "login" | "select_account" => prompt.login = true,
            "consent" => prompt.consent = true,
            _ => {
                return Err(RedirectError::new(
                    "invalid_request",
                    "prompt values are none, login, consent and select_account",
                ));
            }
        }
    }
    if prompt.none && count > 1 {
        return Err(RedirectError::new(
            "invalid_request",
            "prompt=none cannot be combined with other values",
        ));
    }
    Ok(prompt)
}

fn bounded(
    value: Option<&str>,
    name: &'static str,
    max: usize,
) -> Result<Option<String>, RedirectError> {
    match value {
        Some(v) if v.len() > max => Err(RedirectError::new(
            "invalid_request",
            format!("{name} is longer than {max} bytes"),
        )),
        Some(v) => Ok(Some(v.to_owned())),
        None => Ok(None),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
