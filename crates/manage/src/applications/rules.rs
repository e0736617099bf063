//! Registration rules of an application, one small named check each. Every refusal is a
//! [`ManageError::Invalid`] naming the wire field and the rule, so a caller can fix its request
//! without guessing. Rules that are properties of a single value (redirect URIs, scopes) live in
//! that value's parser in `svc-domain`; this file applies them to lists and adds the rules that
//! relate fields to each other.

use crate::ManageError;
use std::collections::BTreeSet;
use svc_domain::{
    ACR_AAL1, ACR_AAL2, GrantType, LogoutChannels, RedirectUri, Scope, ScopeSet, SigningAlg,
    TokenEndpointAuthMethod, WebhookUrl, acr_rank,
};

/// Longest application name, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 200;
/// Most redirect URIs per application.
pub(crate) const MAX_REDIRECT_URIS: usize = 20;
/// Most allowed scopes per application.
pub(crate) const MAX_SCOPES: usize = 64;
/// Most keys in an inline JWKS.
pub(crate) const MAX_JWKS_KEYS: usize = 10;
/// Largest inline JWKS, serialised.
pub(crate) const MAX_JWKS_BYTES: usize = 64 * 1024;
/// Longest URI accepted for `jwks_uri` and `api_audience`.
pub(crate) const MAX_URI_LEN: usize = 2048;
/// JWK members that only private or symmetric keys carry (RFC 7518 §6.2.2, §6.3.2, §6.4.1).
const PRIVATE_JWK_MEMBERS: [&str; 7] = ["d", "p", "q", "dp", "dq", "qi", "k"];

/// Rule: a name is 1 to 200 characters after trimming, with no control characters. Returns the
/// trimmed name.
pub(crate) fn check_name(name: &str) -> Result<String, ManageError> {
    let name = name.trim();
    let len = name.chars().count();
    if !(1..=MAX_NAME_CHARS).contains(&len) || name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "name",
            format!("name must be 1 to {MAX_NAME_CHARS} characters, without control characters"),
        ));
    }
    Ok(name.to_owned())
}

/// Rule: at most 20 redirect URIs, each passing the registration rules of [`RedirectUri::parse`]
/// (RFC 9700 §4.1.3, RFC 8252 §7), none registered twice.
pub(crate) fn check_redirect_uris(
    field: &'static str,
    uris: &[String],
) -> Result<Vec<RedirectUri>, ManageError> {
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(ManageError::invalid(
            field,
            format!("{field} may hold at most {MAX_REDIRECT_URIS} URIs"),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut parsed = Vec::with_capacity(uris.len());
    for (i, uri) in uris.iter().enumerate() {
        let uri = RedirectUri::parse(uri)
            .map_err(|e| ManageError::invalid(field, format!("{field}[{i}]: {e}")))?;
        if !seen.insert(uri.as_str().to_owned()) {
            return Err(ManageError::invalid(
                field,
                format!("{field}[{i}] is listed twice; register each URI once"),
            ));
        }
        parsed.push(uri);
    }
    Ok(parsed)
}

/// Rule: at least one grant, each one this deployment offers, none listed twice.
pub(crate) fn check_grant_types(grants: &[String]) -> Result<Vec<GrantType>, ManageError> {
    const FIELD: &str = "grant_types";
    if grants.is_empty() {
        return Err(ManageError::invalid(
            FIELD,
            "grant_types must name at least one grant",
        ));
    }
    let mut parsed = Vec::with_capacity(grants.len());
    for (i, grant) in grants.iter().enumerate() {
        let grant = GrantType::parse(grant).ok_or_else(|| {
            ManageError::invalid(
                FIELD,
                format!(
                    "grant_types[{i}] is not a supported grant; use authorization_code, refresh_token, client_credentials, urn:ietf:params:oauth:grant-type:device_code, urn:openid:params:grant-type:ciba or urn:ietf:params:oauth:grant-type:token-exchange"
                ),
            )
        })?;
        if parsed.contains(&grant) {
            return Err(ManageError::invalid(
                FIELD,
                format!("grant_types[{i}] ({grant}) is listed twice"),
            ));
        }
        parsed.push(grant);
    }
    Ok(parsed)
}

/// Rule: the authorization code grant redirects, so it needs a registered redirect URI
/// (RFC 6749 §3.1.2.2).
pub(crate) fn check_code_grant_has_redirect_uri(
    grants: &[GrantType],
    redirect_uris: &[RedirectUri],
) -> Result<(), ManageError> {
    if grants.contains(&GrantType::AuthorizationCode) && redirect_uris.is_empty() {
        return Err(ManageError::invalid(
            "redirect_uris",
            "redirect_uris must hold at least one URI when grant_types includes authorization_code",
        ));
    }
    Ok(())
}

/// Rule: refresh tokens are only issued by user login flows, so `refresh_token` needs
/// `authorization_code`, the device grant or CIBA (spec "Token response": never for
/// `client_credentials`).
pub(crate) fn check_refresh_needs_code(grants: &[GrantType]) -> Result<(), ManageError> {
    let person_signs_in = grants.contains(&GrantType::AuthorizationCode)
        || grants.contains(&GrantType::DeviceCode)
        || grants.contains(&GrantType::Ciba);
    if grants.contains(&GrantType::RefreshToken) && !person_signs_in {
        return Err(ManageError::invalid(
            "grant_types",
            "grant_types may include refresh_token only together with authorization_code, \
             urn:ietf:params:oauth:grant-type:device_code or urn:openid:params:grant-type:ciba",
        ));
    }
    Ok(())
}

/// Rule: the method is one of the four the spec names (RFC 7591 §2).
pub(crate) fn check_auth_method(method: &str) -> Result<TokenEndpointAuthMethod, ManageError> {
    TokenEndpointAuthMethod::parse(method).ok_or_else(|| {
        ManageError::invalid(
            "token_endpoint_auth_method",
            "token_endpoint_auth_method must be one of none, client_secret_basic, client_secret_post, private_key_jwt",
        )
    })
}

/// Rule: `none` makes a public client, and `client_credentials` is for confidential clients
/// only (RFC 6749 §4.4: "MUST only be used by confidential clients"), as is CIBA here.
pub(crate) fn check_public_client_grants(
    method: TokenEndpointAuthMethod,
    grants: &[GrantType],
) -> Result<(), ManageError> {
    if !method.is_confidential() && grants.contains(&GrantType::ClientCredentials) {
        return Err(ManageError::invalid(
            "grant_types",
            "grant_types includes client_credentials, but client_credentials is for confidential clients only (token_endpoint_auth_method none registers a public client)",
        ));
    }
    // The spec: "Only poll delivery mode with confidential clients is supported" for CIBA.
    if !method.is_confidential() && grants.contains(&GrantType::Ciba) {
        return Err(ManageError::invalid(
            "grant_types",
            "grant_types includes urn:openid:params:grant-type:ciba, which is for confidential clients only (token_endpoint_auth_method none registers a public client)",
        ));
    }
    // A public client cannot be told apart from anyone holding a stolen token, so it may not
    // exchange tokens for itself to act with (RFC 8693 §2.1 leaves client authentication to the
    // server; RFC 9700 §2.3 wants senders identified where tokens change hands).
    if !method.is_confidential() && grants.contains(&GrantType::TokenExchange) {
        return Err(ManageError::invalid(
            "grant_types",
            "grant_types includes urn:ietf:params:oauth:grant-type:token-exchange, which is for confidential clients only (token_endpoint_auth_method none registers a public client)",
        ));
    }
    Ok(())
}

/// Rule (Back-Channel Logout 1.0 §2.2, Front-Channel Logout 1.0 §2): each logout URI is an
/// absolute http(s) URL without userinfo or fragment, at most 2048 bytes; a `*_session_required`
/// flag needs its URI. Returns the channels as registered.
pub(crate) fn check_logout_channels(
    (backchannel, backchannel_session): (Option<&str>, bool),
    (frontchannel, frontchannel_session): (Option<&str>, bool),
) -> Result<LogoutChannels, ManageError> {
    let parse = |field: &'static str, raw: Option<&str>| match raw {
        None => Ok(None),
        Some(raw) => WebhookUrl::parse(raw)
            .map(|url| Some(url.as_str().to_owned()))
            .map_err(|e| ManageError::invalid(field, e.to_string().replacen("url", field, 1))),
    };
    let backchannel_uri = parse("backchannel_logout_uri", backchannel)?;
    let frontchannel_uri = parse("frontchannel_logout_uri", frontchannel)?;
    if backchannel_session && backchannel_uri.is_none() {
        return Err(ManageError::invalid(
            "backchannel_logout_session_required",
            "backchannel_logout_session_required needs a backchannel_logout_uri",
        ));
    }
    if frontchannel_session && frontchannel_uri.is_none() {
        return Err(ManageError::invalid(
            "frontchannel_logout_session_required",
            "frontchannel_logout_session_required needs a frontchannel_logout_uri",
        ));
    }
    Ok(LogoutChannels {
        backchannel_uri,
        backchannel_session_required: backchannel_session,
        frontchannel_uri,
        frontchannel_session_required: frontchannel_session,
    })
}

/// Rule: a logout channel is registered only where the deployment runs it (`[logout]`), and a
/// back-channel URI must be reachable under the egress policy the delivery worker applies (the
/// static half: scheme, port, an IP-literal host; names are resolved and checked on every
/// attempt). A front-channel URI is loaded by the person's browser, so only its scheme is held
/// to the policy (https where plain http is refused).
pub(crate) fn check_logout_offered(
    channels: &LogoutChannels,
    offered: &crate::LogoutOffer,
) -> Result<(), ManageError> {
    if let Some(uri) = &channels.backchannel_uri {
        let Some(policy) = offered.backchannel else {
            return Err(ManageError::invalid(
                "backchannel_logout_uri",
                "backchannel_logout_uri needs back-channel logout, which this deployment has switched off ([logout].backchannel = false)",
            ));
        };
        let url = WebhookUrl::parse(uri)
            .map_err(|e| ManageError::invalid("backchannel_logout_uri", e.to_string()))?;
        policy.check(&url).map_err(|e| {
            ManageError::invalid(
                "backchannel_logout_uri",
                e.to_string().replacen("url", "backchannel_logout_uri", 1),
            )
        })?;
    }
    if let Some(uri) = &channels.frontchannel_uri {
        if !offered.frontchannel {
            return Err(ManageError::invalid(
                "frontchannel_logout_uri",
                "frontchannel_logout_uri needs front-channel logout, which this deployment has switched off ([logout].frontchannel = false)",
            ));
        }
        if offered.frontchannel_https_only && !uri.starts_with("https://") {
            return Err(ManageError::invalid(
                "frontchannel_logout_uri",
                "frontchannel_logout_uri must use https",
            ));
        }
    }
    Ok(())
}

/// Rule (RFC 9396 §2): each registered detail type has a printable name, words for the consent
/// page and a self-contained schema that compiles ([`svc_domain::DetailType::parse`]); at most
/// [`svc_domain::MAX_DETAIL_TYPES`], names unique.
pub(crate) fn check_detail_types(
    types: &[super::input::DetailTypeInput],
) -> Result<Vec<svc_domain::DetailType>, ManageError> {
    const FIELD: &str = "authorization_details_types";
    let parsed = types
        .iter()
        .map(|t| svc_domain::DetailType::parse(&t.name, &t.description, t.schema.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ManageError::invalid(FIELD, e.0))?;
    svc_domain::check_detail_types(&parsed).map_err(|e| ManageError::invalid(FIELD, e.0))?;
    Ok(parsed)
}

/// Rule: detail types are registered only where the deployment takes `authorization_details`
/// (`[oidc].authorization_details`); elsewhere they would promise a flow that refuses them.
pub(crate) fn check_details_offered(
    types: &[svc_domain::DetailType],
    offered: bool,
) -> Result<(), ManageError> {
    if types.is_empty() || offered {
        return Ok(());
    }
    Err(ManageError::invalid(
        "authorization_details_types",
        "authorization_details_types needs rich authorization requests, which this deployment \
         has switched off ([oidc].authorization_details = false)",
    ))
}

/// Rule (RFC 9449 §5.2): `dpop_bound_access_tokens` makes the token endpoint refuse requests
/// without a DPoP proof, which only works where the deployment checks proofs (`[dpop].enabled`);
/// accepted elsewhere it would promise a binding nobody enforces.
pub(crate) fn check_dpop_offered(required: bool, offered: bool) -> Result<(), ManageError> {
    if required && !offered {
        return Err(ManageError::invalid(
            "dpop_bound_access_tokens",
            "dpop_bound_access_tokens needs DPoP, which this deployment has switched off ([dpop].enabled = false)",
        ));
    }
    Ok(())
}

/// Rule: `private_key_jwt` needs exactly one of `jwks` or `jwks_uri` (OIDC Registration §2); any
/// other method may register one of them too, for what else the client signs (request objects,
/// RFC 9101), never both (RFC 7591 §2). Returns the checked (`jwks` as JSON text, `jwks_uri`).
pub(crate) fn check_key_material(
    method: TokenEndpointAuthMethod,
    jwks: Option<&serde_json::Value>,
    jwks_uri: Option<&str>,
) -> Result<(Option<String>, Option<String>), ManageError> {
    match (method, jwks, jwks_uri) {
        (TokenEndpointAuthMethod::PrivateKeyJwt, Some(jwks), None) => {
            Ok((Some(check_jwks(jwks)?), None))
        }
        (TokenEndpointAuthMethod::PrivateKeyJwt, None, Some(uri)) => {
            Ok((None, Some(check_jwks_uri(uri)?)))
        }
        (TokenEndpointAuthMethod::PrivateKeyJwt, Some(_), Some(_)) => Err(ManageError::invalid(
            "jwks",
            "give either jwks or jwks_uri for private_key_jwt, not both",
        )),
        (TokenEndpointAuthMethod::PrivateKeyJwt, None, None) => Err(ManageError::invalid(
            "jwks",
            "private_key_jwt needs the client's public keys: give jwks or jwks_uri",
        )),
        (_, None, None) => Ok((None, None)),
        (_, Some(jwks), None) => Ok((Some(check_jwks(jwks)?), None)),
        (_, None, Some(uri)) => Ok((None, Some(check_jwks_uri(uri)?))),
        (_, Some(_), Some(_)) => Err(ManageError::invalid(
            "jwks",
            "give either jwks or jwks_uri, not both (RFC 7591 §2)",
        )),
    }
}

/// Rule: an inline JWKS (RFC 7517 §5) is an object whose `keys` holds 1 to 10 public keys, each
/// an object with a `kty` and none of the private members `d`, `p`, `q`, `dp`, `dq`, `qi`, `k`.
/// Returns it as compact JSON text.
pub(crate) fn check_jwks(jwks: &serde_json::Value) -> Result<String, ManageError> {
    const FIELD: &str = "jwks";
    let keys = jwks
        .as_object()
        .and_then(|set| set.get("keys"))
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| {
            ManageError::invalid(
                FIELD,
                "jwks must be a JWK Set: an object with a \"keys\" array",
            )
        })?;
    if !(1..=MAX_JWKS_KEYS).contains(&keys.len()) {
        return Err(ManageError::invalid(
            FIELD,
            format!("jwks.keys must hold 1 to {MAX_JWKS_KEYS} keys"),
        ));
    }
    for (i, key) in keys.iter().enumerate() {
        let key = key.as_object().ok_or_else(|| {
            ManageError::invalid(FIELD, format!("jwks.keys[{i}] must be a JWK object"))
        })?;
        let kty = key.get("kty").and_then(serde_json::Value::as_str);
        if kty.is_none_or(str::is_empty) {
            return Err(ManageError::invalid(
                FIELD,
                format!("jwks.keys[{i}] must have a \"kty\" (RFC 7517 §4.1)"),
            ));
        }
        if let Some(member) = PRIVATE_JWK_MEMBERS.iter().find(|m| key.contains_key(**m)) {
            return Err(ManageError::invalid(
                FIELD,
                format!(
                    "jwks.keys[{i}] holds the private member \"{member}\"; register public keys only, and rotate the exposed key"
                ),
            ));
        }
    }
    let text = serde_json::to_string(jwks)
        .map_err(|_| ManageError::invalid(FIELD, "jwks is not serialisable JSON"))?;
    if text.len() > MAX_JWKS_BYTES {
        return Err(ManageError::invalid(
            FIELD,
            format!("jwks must be at most {MAX_JWKS_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// Rule: `jwks_uri` is an absolute `https` URL with a host, without user information or a
/// fragment, of at most 2048 characters, and its host is not an internal address
/// ([`is_internal_host`]).
pub(crate) fn check_jwks_uri(uri: &str) -> Result<String, ManageError> {
    let parsed = url::Url::parse(uri)
        .ok()
        .filter(|_| uri.len() <= MAX_URI_LEN);
    if parsed
        .as_ref()
        .and_then(url::Url::host)
        .is_some_and(|h| is_internal_host(&h))
    {
        return Err(ManageError::invalid(
            "jwks_uri",
            "jwks_uri must not point to an internal address (loopback, private, link-local, \
             localhost): the server fetches it",
        ));
    }
    let ok = parsed.is_some_and(|url| {
        url.scheme() == "https"
            && url.host().is_some()
            && url.username().is_empty()
            && url.password().is_none()
            && url.fragment().is_none()
    });
    if ok {
        Ok(uri.to_owned())
    } else {
        Err(ManageError::invalid(
            "jwks_uri",
            format!(
                "jwks_uri must be an https URL with a host, without user information or fragment, of at most {MAX_URI_LEN} characters"
            ),
        ))
    }
}

/// Rule (SSRF, RFC 7591 §5): the server fetches a `jwks_uri`, so its host may not be an address
/// literal outside the public internet (loopback, private, link-local, carrier-grade NAT,
/// unspecified, multicast, and their mapped forms) nor `localhost`. A name that resolves to such
/// an address is refused when fetched, by the fetcher's guard in production.
pub(crate) fn is_internal_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(ip) => !svc_domain::is_public_ip((*ip).into()),
        url::Host::Ipv6(ip) => !svc_domain::is_public_ip((*ip).into()),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

/// Rule: at most 64 scopes, each a valid scope token (RFC 6749 §3.3); duplicates collapse.
pub(crate) fn check_scopes(scopes: &[String]) -> Result<ScopeSet, ManageError> {
    const FIELD: &str = "allowed_scopes";
    if scopes.len() > MAX_SCOPES {
        return Err(ManageError::invalid(
            FIELD,
            format!("allowed_scopes may hold at most {MAX_SCOPES} scopes"),
        ));
    }
    let parsed = scopes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Scope::parse(s)
                .map_err(|e| ManageError::invalid(FIELD, format!("allowed_scopes[{i}]: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ScopeSet::from_scopes(parsed))
}

/// Rule: an API audience, when given, is an audience URI ([`check_audience_uri`]). Absent means
/// the tenant's management API.
pub(crate) fn check_api_audience(audience: Option<&str>) -> Result<Option<String>, ManageError> {
    audience
        .map(|audience| check_audience_uri("api_audience", audience))
        .transpose()
}

/// Rule: an audience (an application's `api_audience`, an API resource's `identifier`) is an
/// absolute URI (RFC 3986 §4.3: a scheme, no fragment) of at most 2048 characters, taken as
/// sent: tokens name it byte for byte in `aud`, and RFC 8707 `resource` must match it.
pub(crate) fn check_audience_uri(field: &str, audience: &str) -> Result<String, ManageError> {
    let ok = audience.len() <= MAX_URI_LEN
        && !audience
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
        && url::Url::parse(audience).is_ok_and(|url| url.fragment().is_none());
    if ok {
        Ok(audience.to_owned())
    } else {
        Err(ManageError::invalid(
            field,
            format!(
                "{field} must be an absolute URI without fragment, of at most {MAX_URI_LEN} characters (e.g. https://api.example.com)"
            ),
        ))
    }
}

/// Rule: ID tokens are signed with ES256, EdDSA or RS256; RS256 when not given (OIDC
/// Registration §2: the default, and mandatory to implement).
pub(crate) fn check_id_token_alg(alg: Option<&str>) -> Result<SigningAlg, ManageError> {
    match alg {
        None => Ok(SigningAlg::Rs256),
        Some(alg) => SigningAlg::parse(alg).ok_or_else(|| {
            ManageError::invalid(
                "id_token_signed_response_alg",
                "id_token_signed_response_alg must be one of ES256, EdDSA, RS256",
            )
        }),
    }
}

/// Rule: a minimum assurance level, when given, is one this service issues (`urn:svc:aal1` or
/// `urn:svc:aal2`, exactly); absent means no minimum.
/// Rule: `organization_usage` is `allow` (the default) or `require`.
pub(crate) fn check_organization_usage(
    raw: Option<&str>,
) -> Result<svc_domain::OrganizationUsage, ManageError> {
    match raw {
        None => Ok(svc_domain::OrganizationUsage::Allow),
        Some(text) => svc_domain::OrganizationUsage::parse(text).ok_or_else(|| {
            ManageError::invalid(
                "organization_usage",
                "organization_usage must be allow or require",
            )
        }),
    }
}

pub(crate) fn check_minimum_acr(acr: Option<&str>) -> Result<Option<String>, ManageError> {
    match acr {
        None => Ok(None),
        Some(acr) if acr_rank(acr).is_some() => Ok(Some(acr.to_owned())),
        Some(_) => Err(ManageError::invalid(
            "minimum_acr",
            format!("minimum_acr must be {ACR_AAL1} or {ACR_AAL2}"),
        )),
    }
}

#[cfg(test)]
mod tests;
