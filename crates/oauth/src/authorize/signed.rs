//! Signed authorization requests (RFC 9101, "JAR"): the `request` parameter carries the whole
//! authorization request as a JWT signed with one of the client's registered keys, sent by value
//! to `/oauth/authorize` or pushed to `/oauth/par` ([`super::pushed`]). Both unpack it here
//! ([`AuthorizeEndpoint::unpack`]) into ordinary parameters, which then pass the authorization
//! endpoint's one rule set ([`AuthorizeEndpoint::validate`]).
//!
//! Checks, in order, each answering `invalid_request_object` (RFC 9101 §6.3):
//! 1. A compact JWS of at most [`MAX_REQUEST_OBJECT_BYTES`], `alg` asymmetric (`none` and HS*
//!    refused before any key is touched, RFC 8725 §3.1–3.2), no `crit`; an encrypted request
//!    object is not decrypted ([`crate::client_jws`]).
//! 2. `typ`, when present, is `oauth-authz-req+jwt` (RFC 9101 §4, §10.8) or the generic `JWT`:
//!    a token minted for something else (an access token, a logout token) is never taken for a
//!    request ([`check_typ`], RFC 8725 §3.11).
//! 3. The signature verifies with a key the application registered (`jwks`, or `jwks_uri`
//!    through the SSRF-guarded fetcher); unknown key and bad signature give one answer.
//! 4. Claims ([`check_claims`]): `iss` is the client (RFC 9101 §4, OIDC Core §6.1); `aud` names
//!    this issuer (§4: the request is for us, not replayed from another server); a `client_id`
//!    claim equals the `client_id` parameter (§5); `exp` is present, in the future and at most
//!    [`MAX_REQUEST_OBJECT_LIFETIME`] away; `nbf` and `iat` not beyond [`CLOCK_SKEW`] in the
//!    future.
//! 5. The request object holds no `request` nor `request_uri` (RFC 9101 §4 "MUST NOT"), and its
//!    authorization parameters have the types they have as query parameters: strings, numbers
//!    for `max_age`, a JSON object for `claims`, a string or strings for `resource`
//!    ([`to_parameters`]). Claims that are not authorization parameters are ignored like
//!    unknown query parameters.
//! 6. Outside the request object, only `client_id` and `request` carry meaning (RFC 9101 §6.3:
//!    "MUST only use the parameters included in the request object"). A known authorization
//!    parameter sent outside as well must have exactly the value it has inside
//!    ([`check_outer`]): OIDC Core §6.1 clients repeat `response_type` and `scope`, and those
//!    agree; a value that differs, or one missing inside, is refused rather than silently
//!    dropped, so a client never believes a parameter was honoured when it was not.
//!
//! Errors are shown on an error page (or, at `/oauth/par`, answered as JSON), never redirected:
//! until the request object is verified its `redirect_uri` is not the client's word.
//!
//! Not done, on purpose: request objects by reference (OIDC Core §6.2 `request_uri` URLs we
//! would fetch; PAR is the safe way to send a large request) and encrypted request objects.
//! A request object's `jti` is not recorded: it only starts an authorization that still needs
//! the person, PKCE and a registered redirect URI, and RFC 9101 asks no replay check.

use super::AuthorizeEndpoint;
use super::request::{self, Params, RedirectError};
use crate::client_jws::{self, KeyError, Unverified};
use serde_json::{Map, Value};
use svc_domain::Application;

/// `[oidc].request_objects`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RequestObjects {
    /// `request` is refused with `request_not_supported`.
    Disabled,
    /// Signed requests are accepted beside plain ones.
    #[default]
    Enabled,
    /// Every authorization request must be signed (RFC 9101 §10.5 server metadata
    /// `require_signed_request_object`), by value or pushed.
    Required,
}

impl RequestObjects {
    /// Whether `request` is accepted at all.
    pub fn is_enabled(self) -> bool {
        self != Self::Disabled
    }
}

/// The `typ` RFC 9101 §4 registers for request objects.
pub const REQUEST_OBJECT_TYP: &str = "oauth-authz-req+jwt";
/// Largest request object read (a URL-carried one is far smaller; PAR allows a larger body).
pub const MAX_REQUEST_OBJECT_BYTES: usize = 32 * 1024;
/// Longest lifetime (`exp` − now, seconds) of a request object we accept (FAPI 2.0's bound).
pub const MAX_REQUEST_OBJECT_LIFETIME: i64 = 3600;
/// Tolerated client clock skew (seconds) for `nbf` and `iat` in the future.
pub const CLOCK_SKEW: i64 = 60;

/// Claims of a request object that are about the JWT, not the authorization request.
const JWT_CLAIMS: [&str; 7] = ["iss", "aud", "exp", "nbf", "iat", "jti", "client_id"];

/// The `request` of `params` when request objects are on: the request is then a signed one.
/// Absent, repeated (check 3 of [`request`] refuses it) or switched off (check 4 refuses it):
/// the plain way.
pub(crate) fn request_object<'a>(params: &Params<'a>, mode: RequestObjects) -> Option<&'a str> {
    mode.is_enabled()
        .then(|| params.single("request").ok().flatten())
        .flatten()
}

/// The refusal of an unsigned request where signed ones are required.
pub(crate) fn required() -> RedirectError {
    RedirectError::new(
        "invalid_request",
        "this deployment requires signed request objects: send the authorization request as a \
         JWT in the request parameter (RFC 9101)",
    )
}

impl AuthorizeEndpoint {
    /// The authorization parameters carried by `token`, the request object of `app` sent with
    /// the `outer` parameters (checks 1–6 of the module doc); `client_id` is among them. `Err`
    /// holds the `invalid_request_object` description.
    pub(crate) async fn unpack(
        &self,
        issuer: &str,
        app: &Application,
        outer: &Params<'_>,
        token: &str,
    ) -> Result<Vec<(String, String)>, String> {
        // 1.
        let unverified = Unverified::parse(token, MAX_REQUEST_OBJECT_BYTES)
            .map_err(|e| e.describe("request object"))?;
        // 2.
        check_typ(unverified.typ.as_deref())?;
        // 3.
        let claims = client_jws::verify(app, self.jwks.as_deref(), token, &unverified)
            .await
            .map_err(|e| {
                let reason = match e {
                    KeyError::JwksUriUnsupported => "jwks_uri is not supported here".to_owned(),
                    KeyError::JwksUriUnreachable(reason) | KeyError::Refused(reason) => reason,
                };
                tracing::info!(client_id = %app.id, reason, "request object refused");
                "the request object's signature does not verify with a key the application \
                 registered"
                    .to_owned()
            })?;
        // 4.
        check_claims(
            &claims,
            app.wire_client_id(),
            issuer,
            self.clock.now().unix_timestamp(),
        )?;
        // 5.
        let Value::Object(claims) = claims else {
            return Err("the request object's payload is not a JSON object".into());
        };
        let mut inner = vec![("client_id".to_owned(), app.wire_client_id().to_owned())];
        inner.extend(to_parameters(&claims)?);
        // 6.
        check_outer(outer, &Params::new(&inner))?;
        Ok(inner)
    }
}

/// Check 2: what kind of JWT this says it is (RFC 9101 §4; RFC 8725 §3.11).
fn check_typ(typ: Option<&str>) -> Result<(), String> {
    match typ {
        None => Ok(()),
        Some(t) if t.eq_ignore_ascii_case(REQUEST_OBJECT_TYP) || t.eq_ignore_ascii_case("JWT") => {
            Ok(())
        }
        Some(_) => Err(format!(
            "the request object's typ must be {REQUEST_OBJECT_TYP} (RFC 9101 §4)"
        )),
    }
}

/// Check 4, on authentic claims, at `now` (Unix seconds).
fn check_claims(claims: &Value, client_id: &str, issuer: &str, now: i64) -> Result<(), String> {
    if claims.get("iss").and_then(Value::as_str) != Some(client_id) {
        return Err("the request object's iss must be the client_id (RFC 9101 §4)".into());
    }
    if !client_jws::audience_is(claims, &[issuer]) {
        return Err(format!(
            "the request object's aud must be the issuer {issuer} (RFC 9101 §4)"
        ));
    }
    if claims
        .get("client_id")
        .is_some_and(|c| c.as_str() != Some(client_id))
    {
        return Err(
            "the request object's client_id differs from the client_id parameter (RFC 9101 §5)"
                .into(),
        );
    }
    let date = |name: &str| {
        client_jws::numeric_date(claims, name)
            .map_err(|()| format!("the request object's {name} must be a NumericDate"))
    };
    let exp = date("exp")?.ok_or("the request object must carry exp")?;
    if exp <= now {
        return Err("the request object has expired".into());
    }
    if exp - now > MAX_REQUEST_OBJECT_LIFETIME {
        return Err(format!(
            "the request object must expire within {MAX_REQUEST_OBJECT_LIFETIME} seconds"
        ));
    }
    if date("nbf")?.is_some_and(|nbf| nbf > now + CLOCK_SKEW) {
        return Err("the request object is not valid yet (nbf)".into());
    }
    if date("iat")?.is_some_and(|iat| iat > now + CLOCK_SKEW) {
        return Err("the request object was issued in the future (iat)".into());
    }
    Ok(())
}

/// Check 5: the authorization parameters of the request object's claims, as query parameters
/// would carry them (`client_id` excepted: the caller adds the verified one).
fn to_parameters(claims: &Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for (name, value) in claims {
        if matches!(name.as_str(), "request" | "request_uri") {
            return Err(format!(
                "a request object must not contain {name} (RFC 9101 §4)"
            ));
        }
        let known = request::is_authorization_parameter(name) || name == "resource";
        if !known || JWT_CLAIMS.contains(&name.as_str()) {
            continue;
        }
        let wrong = || format!("the request object's {name} has the wrong type");
        match (name.as_str(), value) {
            (_, Value::String(s)) => pairs.push((name.clone(), s.clone())),
            ("max_age", Value::Number(n)) => pairs.push((name.clone(), n.to_string())),
            ("claims" | "authorization_details", Value::Object(_) | Value::Array(_)) => {
                pairs.push((name.clone(), value.to_string()));
            }
            ("resource", Value::Array(items)) => {
                for item in items {
                    pairs.push((name.clone(), item.as_str().ok_or_else(wrong)?.to_owned()));
                }
            }
            _ => return Err(wrong()),
        }
    }
    // One order whatever the JSON map keeps (a stable sort: `resource`s stay in order).
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(pairs)
}

/// Check 6: outside parameters agree with the request object's, or are not sent.
fn check_outer(outer: &Params<'_>, inner: &Params<'_>) -> Result<(), String> {
    let names = request::KNOWN.into_iter().chain(["resource"]);
    for name in names.filter(|n| !matches!(*n, "client_id" | "request")) {
        if outer.has(name) && outer.all(name) != inner.all(name) {
            return Err(format!(
                "{name} outside the request object differs from (or is missing in) the request \
                 object, whose parameters alone are used (RFC 9101 §6.3)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CLIENT: &str = "app_x";
    const ISSUER: &str = "https://acme.example.com";
    const NOW: i64 = 1_000_000;

    fn claims(overrides: Value) -> Value {
        let mut base = json!({
            "iss": CLIENT,
            "aud": ISSUER,
            "exp": NOW + 60,
            "iat": NOW,
            "client_id": CLIENT,
        });
        for (k, v) in overrides.as_object().unwrap() {
            if v.is_null() {
                base.as_object_mut().unwrap().remove(k);
            } else {
                base[k] = v.clone();
            }
        }
        base
    }

    fn refused(overrides: Value) -> String {
        check_claims(&claims(overrides), CLIENT, ISSUER, NOW).unwrap_err()
    }

    #[test]
    fn claims_must_name_the_client_and_this_issuer_and_be_current() {
        assert_eq!(
            check_claims(&claims(json!({})), CLIENT, ISSUER, NOW),
            Ok(())
        );
        // client_id claim optional; aud may be an array holding us.
        assert_eq!(
            check_claims(
                &claims(json!({"client_id": null, "aud": ["https://other", ISSUER]})),
                CLIENT,
                ISSUER,
                NOW
            ),
            Ok(())
        );
        assert!(refused(json!({"iss": null})).contains("iss"));
        assert!(refused(json!({"iss": "app_other"})).contains("iss"));
        assert!(refused(json!({"aud": null})).contains("aud"));
        assert!(refused(json!({"aud": "https://other.example"})).contains("aud"));
        assert!(refused(json!({"aud": format!("{ISSUER}/oauth/token")})).contains("aud"));
        assert!(refused(json!({"client_id": "app_other"})).contains("client_id"));
        assert!(refused(json!({"client_id": 5})).contains("client_id"));
        assert!(refused(json!({"exp": null})).contains("exp"));
        assert!(refused(json!({"exp": NOW})).contains("expired"));
        assert!(refused(json!({"exp": "soon"})).contains("NumericDate"));
        assert!(refused(json!({"exp": NOW + MAX_REQUEST_OBJECT_LIFETIME + 1})).contains("within"));
        assert!(refused(json!({"nbf": NOW + CLOCK_SKEW + 1})).contains("nbf"));
        assert!(refused(json!({"iat": NOW + CLOCK_SKEW + 1})).contains("iat"));
        // Within the skew is fine.
        assert_eq!(
            check_claims(
                &claims(json!({"nbf": NOW + CLOCK_SKEW, "iat": NOW + CLOCK_SKEW})),
                CLIENT,
                ISSUER,
                NOW
            ),
            Ok(())
        );
    }

    #[test]
    fn only_request_object_types_are_taken() {
        assert!(check_typ(None).is_ok());
        assert!(check_typ(Some("oauth-authz-req+jwt")).is_ok());
        assert!(check_typ(Some("JWT")).is_ok());
        for other in ["at+jwt", "logout+jwt", "dpop+jwt", "secevent+jwt", ""] {
            assert!(check_typ(Some(other)).is_err(), "{other}");
        }
    }

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn claims_become_the_parameters_a_query_would_carry() {
        let pairs = to_parameters(&map(json!({
            "iss": CLIENT, "aud": ISSUER, "exp": 5, "jti": "j", "client_id": CLIENT,
            "response_type": "code",
            "scope": "openid",
            "max_age": 300,
            "claims": {"id_token": {"acr": {"essential": true}}},
            "resource": ["https://a.example", "https://b.example"],
            "custom": {"ignored": true},
        })))
        .unwrap();
        let names: Vec<_> = pairs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "claims",
                "max_age",
                "resource",
                "resource",
                "response_type",
                "scope"
            ]
        );
        assert_eq!(pairs[1].1, "300");
        assert_eq!(
            serde_json::from_str::<Value>(&pairs[0].1).unwrap(),
            json!({"id_token": {"acr": {"essential": true}}})
        );
        for nested in ["request", "request_uri"] {
            let err = to_parameters(&map(json!({ nested: "x" }))).unwrap_err();
            assert!(err.contains(nested), "{err}");
        }
        for (name, value) in [
            ("scope", json!(["openid"])),
            ("state", json!(5)),
            ("max_age", json!(true)),
            ("claims", json!(5)),
            ("resource", json!([1])),
            ("nonce", json!(null)),
        ] {
            let err = to_parameters(&map(json!({ name: value }))).unwrap_err();
            assert!(err.contains(name), "{name}: {err}");
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn outer_parameters_must_agree_with_the_request_object() {
        let inner = pairs(&[
            ("client_id", CLIENT),
            ("response_type", "code"),
            ("scope", "openid"),
            ("state", "s"),
        ]);
        let inner = Params::new(&inner);
        let ok = pairs(&[
            ("client_id", CLIENT),
            ("request", "jwt"),
            ("response_type", "code"),
            ("scope", "openid"),
            ("utm_source", "unknown parameters are ignored"),
        ]);
        assert_eq!(check_outer(&Params::new(&ok), &inner), Ok(()));
        for (name, value) in [
            ("scope", "openid email"),
            ("state", "other"),
            ("nonce", "missing inside"),
            ("redirect_uri", "https://evil.example/cb"),
            ("resource", "https://a.example"),
        ] {
            let outer = pairs(&[("client_id", CLIENT), ("request", "jwt"), (name, value)]);
            let err = check_outer(&Params::new(&outer), &inner).unwrap_err();
            assert!(err.starts_with(name), "{err}");
        }
    }

    #[test]
    fn only_a_single_request_is_a_request_object_and_only_when_enabled() {
        let one = pairs(&[("request", "a.b.c")]);
        let two = pairs(&[("request", "a.b.c"), ("request", "d.e.f")]);
        let empty = pairs(&[("request", "")]);
        assert_eq!(
            request_object(&Params::new(&one), RequestObjects::Enabled),
            Some("a.b.c")
        );
        assert_eq!(
            request_object(&Params::new(&one), RequestObjects::Required),
            Some("a.b.c")
        );
        assert_eq!(
            request_object(&Params::new(&one), RequestObjects::Disabled),
            None
        );
        assert_eq!(
            request_object(&Params::new(&two), RequestObjects::Enabled),
            None
        );
        assert_eq!(
            request_object(&Params::new(&empty), RequestObjects::Enabled),
            None
        );
    }
}
