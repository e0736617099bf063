//! The resource-server client: all ten rules, with the issuer's keys found through discovery.
//!
//! - Discovery (OpenID Connect Discovery 1.0 §4): `{issuer}/.well-known/openid-configuration`
//!   is fetched once; its `issuer` must equal the configured issuer exactly (§4.3) and its
//!   `jwks_uri` must be an absolute URL, `https` unless the issuer itself is plain `http`
//!   (development).
//! - The JWKS is cached for [`DEFAULT_CACHE_TTL`] and then fetched again. Keys the validator
//!   cannot parse are skipped (RFC 7517 §5).
//! - A token whose `kid` is not in the cache triggers one refresh (the issuer may have rotated,
//!   publishing the new key before signing with it), but at most one such refresh per
//!   [`DEFAULT_REFRESH_INTERVAL`]: otherwise forged `kid`s would turn every resource server into
//!   an amplifier against the issuer. A failed fetch is not retried within the interval either.
//! - Fetches have connect and total timeouts, follow no redirects, and read at most
//!   `MAX_DOCUMENT_BYTES`. Any failure is [`ValidationError::KeysUnavailable`] (503), distinct
//!   from a refused token.
//!
//! The wall clock is read in one place, [`system_now_unix`], by [`Validator::validate`];
//! [`Validator::validate_at`] takes the time as a parameter.

use crate::claims::AccessTokenClaims;
use crate::error::{KeySourceError, ValidationError};
use crate::introspection::{API_KEY_PREFIX, KeyIntrospection};
use crate::requirements::Requirements;
use crate::rules::bearer::{AuthScheme, authorization_token};
use crate::rules::{check_claims_with_binding, issuer, signature};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use reqwest::Url;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, RwLock};
use tokio::time::Instant;

/// Least time between two JWKS refreshes caused by unknown `kid`s (and between retries after a
/// failed fetch).
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// How long a fetched JWKS is used before it is fetched again (within the 5–15 minutes a JWKS
/// `Cache-Control` usually allows).
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(600);

/// Largest discovery document or JWKS accepted, in bytes.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Validates access tokens for a resource server: all ten rules of the contract, with the
/// issuer's signing keys discovered, cached and refreshed.
///
/// One `Validator` per issuer, shared (e.g. in an `Arc`) by every request. The issuer's keys
/// are fetched on first use, not at construction.
pub struct Validator {
    issuer: String,
    source: KeySource,
    refresh_interval: Duration,
    cache_ttl: Duration,
    cached: RwLock<Option<Arc<CachedKeys>>>,
    refresh: Mutex<RefreshState>,
    /// API keys (`svck_…`) through introspection, when the resource server configured it.
    introspection: Option<KeyIntrospection>,
}

enum KeySource {
    /// Keys given up front ([`Validator::with_jwks`]); never fetched.
    Fixed(Arc<JwkSet>),
    /// Keys found through discovery. `None`: the HTTP client could not be built.
    Discovery(Option<reqwest::Client>),
}

struct CachedKeys {
    jwks: Arc<JwkSet>,
    fetched_at: Instant,
}

/// Bookkeeping of refreshes, guarded by one lock so concurrent requests with the same unknown
/// `kid` cause one fetch, not one each.
#[derive(Default)]
struct RefreshState {
    jwks_uri: Option<Url>,
    last_kid_refresh: Option<Instant>,
    last_failure: Option<(Instant, KeySourceError)>,
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validator")
            .field("issuer", &self.issuer)
            .field(
                "keys",
                &match self.source {
                    KeySource::Fixed(_) => "fixed",
                    KeySource::Discovery(_) => "discovery",
                },
            )
            .field("refresh_interval", &self.refresh_interval)
            .field("cache_ttl", &self.cache_ttl)
            .finish_non_exhaustive()
    }
}

impl Validator {
    /// A validator for tokens of `issuer` (e.g. `https://acme.id.example`), finding its keys
    /// through discovery with an HTTP client of sane timeouts (5 s connect, 10 s total) that
    /// follows no redirects.
    pub fn new(issuer: &str) -> Self {
        Self::with_source(issuer, KeySource::Discovery(default_http_client().ok()))
    }

    /// Like [`Validator::new`], with the caller's HTTP client (proxies, custom roots, …). Give
    /// it timeouts: a fetch without one can hold requests as long as the issuer stalls.
    pub fn with_http_client(issuer: &str, client: reqwest::Client) -> Self {
        Self::with_source(issuer, KeySource::Discovery(Some(client)))
    }

    /// A validator that never fetches: `jwks` is the issuer's whole key set (tests, offline
    /// use, keys distributed by other means). An unknown `kid` is simply refused.
    pub fn with_jwks(issuer: &str, jwks: JwkSet) -> Self {
        Self::with_source(issuer, KeySource::Fixed(Arc::new(jwks)))
    }

    fn with_source(issuer: &str, source: KeySource) -> Self {
        Self {
            issuer: issuer.to_owned(),
            source,
            refresh_interval: DEFAULT_REFRESH_INTERVAL,
            cache_ttl: DEFAULT_CACHE_TTL,
            cached: RwLock::new(None),
            refresh: Mutex::new(RefreshState::default()),
            introspection: None,
        }
    }

    /// Also accepts svc API keys (`Authorization: Bearer svck_…`) that act as a person or an
    /// agent at this API, by asking the issuer's introspection endpoint (RFC 7662) as the
    /// confidential application `client_id` whose registered `api_audience` is this API. Active
    /// answers are reused for [`crate::DEFAULT_KEY_CACHE_TTL`] (see
    /// [`Validator::with_key_cache_ttl`]); a key then goes through rules 3–10 like a token.
    #[must_use]
    pub fn with_introspection(mut self, client_id: &str, client_secret: &str) -> Self {
        self.introspection = Some(KeyIntrospection::new(client_id, client_secret));
        self
    }

    /// How long an active answer for an API key is reused (default
    /// [`crate::DEFAULT_KEY_CACHE_TTL`]; zero: ask every time). The most a revocation can lag here.
    #[must_use]
    pub fn with_key_cache_ttl(mut self, ttl: Duration) -> Self {
        if let Some(introspection) = self.introspection.as_mut() {
            introspection.ttl = ttl;
        }
        self
    }

    /// Sets the least time between refreshes caused by unknown `kid`s (default
    /// [`DEFAULT_REFRESH_INTERVAL`]).
    #[must_use]
    pub fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// Sets how long a fetched JWKS is trusted before it is fetched again (default
    /// [`DEFAULT_CACHE_TTL`]).
    #[must_use]
    pub fn with_cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// The issuer this validator accepts tokens of, as configured.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Runs all ten rules on the request's `Authorization` header value, at the current time.
    ///
    /// `req.issuer` should be [`Validator::issuer`]: tokens must name both (the keys come from
    /// this validator's issuer). Tokens come with `Bearer` or, for DPoP-bound tokens, `DPoP`;
    /// see [`Validator::validate_at`].
    pub async fn validate(
        &self,
        authorization: Option<&str>,
        req: &Requirements,
    ) -> Result<AccessTokenClaims, ValidationError> {
        self.validate_at(authorization, req, system_now_unix())
            .await
    }

    /// [`Validator::validate`] at `now_unix` (seconds since the epoch).
    ///
    /// Rule 10 and the scheme: with `Bearer`, `req.dpop_jkt` is ignored, so a DPoP-bound token
    /// is refused (RFC 9449 §7.2 forbids that downgrade); with `DPoP`, the token must be bound
    /// and `req.dpop_jkt` must carry the thumbprint of the proof the caller verified.
    pub async fn validate_at(
        &self,
        authorization: Option<&str>,
        req: &Requirements,
        now_unix: i64,
    ) -> Result<AccessTokenClaims, ValidationError> {
        // Rule 1.
        let (scheme, token) = authorization_token(authorization)?;
        if let Some(introspection) = &self.introspection
            && token.starts_with(API_KEY_PREFIX)
        {
            // An API key: the issuer vouches for it at introspection instead of a signature.
            let KeySource::Discovery(Some(http)) = &self.source else {
                return Err(ValidationError::KeysUnavailable(KeySourceError::Client));
            };
            let claims = introspection
                .claims(http, &self.issuer, token, now_unix)
                .await?;
            if let Some(map) = claims.as_object() {
                issuer::check_issuer(map, &self.issuer)?;
            }
            // No key is DPoP-bound: the DPoP scheme is refused by rule 10 below.
            let claims = check_claims_with_binding(&claims, req, None, now_unix)?;
            if scheme == AuthScheme::DPoP {
                return Err(ValidationError::DpopTokenNotBound);
            }
            return Ok(claims);
        }
        // Rule 2: shape, `alg`, `typ` and `kid` first, so a malformed token never costs a fetch.
        let header = signature::check_header(token)?;
        let jwks = self.keys_for(&header.kid).await?;
        let claims = signature::check_signature(token, &jwks)?;
        // Rule 3, against this validator's issuer too: its keys vouch for nothing else.
        if let Some(map) = claims.as_object() {
            issuer::check_issuer(map, &self.issuer)?;
        }
        // Rules 3–10.
        let dpop_jkt = match scheme {
            AuthScheme::Bearer => None,
            AuthScheme::DPoP => req.dpop_jkt.as_deref(),
        };
        let claims = check_claims_with_binding(&claims, req, dpop_jkt, now_unix)?;
        // Rule 10: the DPoP scheme is for DPoP-bound tokens only (RFC 9449 §7.1).
        if scheme == AuthScheme::DPoP && claims.cnf.is_none() {
            return Err(ValidationError::DpopTokenNotBound);
        }
        Ok(claims)
    }

    /// The key set to verify a token signed by `kid` with: the cached one when it is fresh and
    /// knows `kid`, else a refresh within the limits described in the module documentation.
    pub(crate) async fn keys_for(&self, kid: &str) -> Result<Arc<JwkSet>, ValidationError> {
        let http = match &self.source {
            KeySource::Fixed(jwks) => return Ok(Arc::clone(jwks)),
            KeySource::Discovery(http) => http,
        };
        if let Some(jwks) = self
            .fresh_keys()
            .await
            .filter(|jwks| jwks.find(kid).is_some())
        {
            return Ok(jwks);
        }

        let mut state = self.refresh.lock().await;
        // Another request may have refreshed while this one waited for the lock.
        let fresh = self.fresh_keys().await;
        if let Some(jwks) = fresh.as_ref().filter(|jwks| jwks.find(kid).is_some()) {
            return Ok(Arc::clone(jwks));
        }
        let recent = |at: Option<Instant>| at.is_some_and(|t| t.elapsed() < self.refresh_interval);
        let recent_failure = state
            .last_failure
            .as_ref()
            .filter(|(at, _)| recent(Some(*at)))
            .map(|(_, e)| e.clone());
        match (fresh, recent_failure) {
            // Fresh keys without this `kid`: refresh, unless one of these refreshes (or a
            // failed fetch) happened within the interval; then the `kid` is unknown.
            (Some(jwks), failure) => {
                if failure.is_some() || recent(state.last_kid_refresh) {
                    return Ok(jwks);
                }
                state.last_kid_refresh = Some(Instant::now());
            }
            // No usable keys, and the last attempt failed moments ago: do not hammer the issuer.
            (None, Some(failure)) => return Err(ValidationError::KeysUnavailable(failure)),
            (None, None) => {}
        }

        match self.fetch(http.as_ref(), &mut state).await {
            Ok(jwks) => {
                let jwks = Arc::new(jwks);
                *self.cached.write().await = Some(Arc::new(CachedKeys {
                    jwks: Arc::clone(&jwks),
                    fetched_at: Instant::now(),
                }));
                state.last_failure = None;
                Ok(jwks)
            }
            Err(e) => {
                // Discover again next time: the `jwks_uri` itself may have moved.
                state.jwks_uri = None;
                state.last_failure = Some((Instant::now(), e.clone()));
                Err(ValidationError::KeysUnavailable(e))
            }
        }
    }

    async fn fresh_keys(&self) -> Option<Arc<JwkSet>> {
        self.cached
            .read()
            .await
            .as_ref()
            .filter(|c| c.fetched_at.elapsed() < self.cache_ttl)
            .map(|c| Arc::clone(&c.jwks))
    }

    async fn fetch(
        &self,
        http: Option<&reqwest::Client>,
        state: &mut RefreshState,
    ) -> Result<JwkSet, KeySourceError> {
        let http = http.ok_or(KeySourceError::Client)?;
        let jwks_uri = match &state.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri = self.discover(http).await?;
                state.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let document = get_json(http, &jwks_uri).await?;
        parse_jwks(&document).ok_or_else(|| KeySourceError::InvalidDocument {
            url: jwks_uri.to_string(),
            problem: "not a JWK Set (RFC 7517 §5)",
        })
    }

    /// OpenID Connect Discovery 1.0 §4: the `jwks_uri` of the configured issuer.
    async fn discover(&self, http: &reqwest::Client) -> Result<Url, KeySourceError> {
        discovered_endpoint(http, &self.issuer, "jwks_uri").await
    }
}

/// The endpoint `member` (`jwks_uri`, `introspection_endpoint`) of `issuer`'s discovery
/// document (OpenID Connect Discovery 1.0 §4): the document must name exactly that issuer
/// (§4.3), and the endpoint must be absolute and `https` unless the issuer is plain `http`
/// (development).
pub(crate) async fn discovered_endpoint(
    http: &reqwest::Client,
    issuer: &str,
    member: &'static str,
) -> Result<Url, KeySourceError> {
    let parsed = Url::parse(issuer).map_err(|_| KeySourceError::InvalidIssuer)?;
    let plain_http = match parsed.scheme() {
        "https" => false,
        "http" => true,
        _ => return Err(KeySourceError::InvalidIssuer),
    };
    // OIDC Discovery §4: an issuer with a path drops its trailing `/` before the suffix.
    let url = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let url = Url::parse(&url).map_err(|_| KeySourceError::InvalidIssuer)?;
    let document = get_json(http, &url).await?;
    let invalid = |problem| KeySourceError::InvalidDocument {
        url: url.to_string(),
        problem,
    };

    // OIDC Discovery §4.3: the issuer in the document MUST be identical to the one used to
    // build the discovery URL; otherwise the document MUST NOT be used.
    let discovered = document
        .get("issuer")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("no issuer"))?;
    if discovered != issuer {
        return Err(KeySourceError::IssuerMismatch {
            configured: issuer.to_owned(),
            discovered: discovered.to_owned(),
        });
    }
    let endpoint = document
        .get(member)
        .and_then(Value::as_str)
        .and_then(|uri| Url::parse(uri).ok())
        .ok_or_else(|| match member {
            "jwks_uri" => invalid("no absolute jwks_uri"),
            _ => invalid("no absolute introspection_endpoint"),
        })?;
    // OIDC Discovery §3 and §7: keys and key answers travel over TLS, except from a plain-http
    // development issuer.
    match endpoint.scheme() {
        "https" => Ok(endpoint),
        "http" if plain_http => Ok(endpoint),
        _ => Err(match member {
            "jwks_uri" => invalid("jwks_uri is not https"),
            _ => invalid("introspection_endpoint is not https"),
        }),
    }
}

/// The SDK's HTTP client: 5 s to connect, 10 s in all, no redirects followed (a redirect is
/// never part of the protocols it speaks, and following one could leave the issuer).
pub(crate) fn default_http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("svc-sdk/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// The only wall-clock read in this crate (clippy.toml bans `SystemTime::now` elsewhere): the
/// `now` of [`Validator::validate`]. Seconds since the epoch; negative before it.
#[expect(
    clippy::disallowed_methods,
    reason = "the single clock read of the async client; the rules take `now` as a parameter"
)]
pub(crate) fn system_now_unix() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
    }
}

/// GETs a JSON document of at most [`MAX_DOCUMENT_BYTES`].
async fn get_json(http: &reqwest::Client, url: &Url) -> Result<Value, KeySourceError> {
    let network = |e: reqwest::Error| KeySourceError::Network {
        url: url.to_string(),
        message: error_chain(&e),
    };
    let mut response = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(network)?;
    let status = response.status();
    if !status.is_success() {
        return Err(KeySourceError::Status {
            url: url.to_string(),
            status: status.as_u16(),
        });
    }
    let too_large = || KeySourceError::TooLarge {
        url: url.to_string(),
        limit: MAX_DOCUMENT_BYTES,
    };
    if response
        .content_length()
        .is_some_and(|len| len > MAX_DOCUMENT_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network)? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|_| KeySourceError::InvalidDocument {
        url: url.to_string(),
        problem: "not JSON",
    })
}

/// An error and its causes, `: `-separated (reqwest's own message is only the outermost).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// RFC 7517 §5: a JSON object with a `keys` array. Members that are not usable JWKs are skipped
/// ("implementations SHOULD ignore JWKs within a JWK Set that use "kty" values that are not
/// understood by them, that are missing required members, or for which values are out of the
/// supported ranges").
fn parse_jwks(document: &Value) -> Option<JwkSet> {
    let keys = document.get("keys")?.as_array()?;
    Some(JwkSet {
        keys: keys
            .iter()
            .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
            // jsonwebtoken parses any key it does not understand as `Other`.
            .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::Other(_)))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unusable_keys_are_skipped_not_fatal() {
        let set = parse_jwks(&json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "a"},
            {"kty": "EC", "kid": "broken"},
            "not a key",
        ]}))
        .unwrap();
        assert!(set.find("a").is_some());
        assert!(set.find("broken").is_none());
        assert!(parse_jwks(&json!({"keys": {}})).is_none());
        assert!(parse_jwks(&json!([])).is_none());
    }

    #[test]
    fn the_clock_reads_a_plausible_time() {
        // After 2020-01-01 and before 2200-01-01.
        let now = system_now_unix();
        assert!(now > 1_577_836_800 && now < 7_258_118_400, "{now}");
    }
}
