//! API keys at a resource server: a `svck_…` key is no JWT, so its claims come from the
//! issuer's token introspection endpoint (RFC 7662), asked with the resource server's own client
//! credentials (a confidential application of the tenant whose `api_audience` is this API: svc
//! describes a key for an API to that API's resource servers only).
//!
//! - The endpoint is the discovery document's `introspection_endpoint` (OpenID Connect
//!   Discovery §4 with the same issuer check as the keys; `https` unless the issuer is plain
//!   `http`).
//! - An active answer must say `token_type` `api_key`; it then goes through the same rules 3–10
//!   as a JWT's claims, so audience, tenant, scope, subject type and delegation are checked one
//!   way. A key without an expiry is trusted until the cache entry ends (`exp` = now + TTL).
//! - Positive answers are cached for a short TTL ([`DEFAULT_KEY_CACHE_TTL`]), keyed by the
//!   key's SHA-256 (the key itself is never kept): a key revoked at svc is refused here at most
//!   that long after. Inactive answers and failures are not cached, so a newly created key
//!   works at once. The cache is bounded; when full it starts over.
//! - The endpoint unreachable or answering an error is [`ValidationError::KeysUnavailable`]
//!   (503), never a refusal of the key.

use crate::error::{KeySourceError, ValidationError};
use reqwest::Url;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How long an active introspection answer for a key is reused: the most a revocation at the
/// issuer can lag at this resource server.
pub const DEFAULT_KEY_CACHE_TTL: Duration = Duration::from_secs(5);

/// Prefix of svc API keys.
pub(crate) const API_KEY_PREFIX: &str = "svck_";

/// Most answers kept; a burst of distinct keys costs introspections, never memory.
const CACHE_CAPACITY: usize = 10_000;

/// The resource server's credentials and the answers it got.
pub(crate) struct KeyIntrospection {
    client_id: String,
    client_secret: String,
    pub(crate) ttl: Duration,
    cache: Mutex<HashMap<[u8; 32], (Value, Instant)>>,
    endpoint: tokio::sync::Mutex<Option<Url>>,
}

impl KeyIntrospection {
    pub(crate) fn new(client_id: &str, client_secret: &str) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            ttl: DEFAULT_KEY_CACHE_TTL,
            cache: Mutex::new(HashMap::new()),
            endpoint: tokio::sync::Mutex::new(None),
        }
    }

    /// The key's claims: an active `api_key` answer (cached or asked now), with an `exp` no later
    /// than the cache allows when the key has none. `now_unix` is the validation time.
    pub(crate) async fn claims(
        &self,
        http: &reqwest::Client,
        issuer: &str,
        key: &str,
        now_unix: i64,
    ) -> Result<Value, ValidationError> {
        let mut digest = [0u8; 32];
        digest.copy_from_slice(
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, key.as_bytes()).as_ref(),
        );
        if let Some(claims) = self.cached(&digest) {
            return Ok(claims);
        }
        let endpoint = self.endpoint(http, issuer).await?;
        let answer = self.ask(http, &endpoint, key).await?;
        if answer.get("active") != Some(&Value::Bool(true))
            || answer.get("token_type").and_then(Value::as_str) != Some("api_key")
        {
            return Err(ValidationError::InactiveKey);
        }
        let mut claims = answer;
        if claims.get("exp").is_none() {
            let ttl = i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX);
            claims["exp"] = json!(now_unix.saturating_add(ttl.max(1)));
        }
        self.remember(digest, &claims);
        Ok(claims)
    }

    fn cached(&self, digest: &[u8; 32]) -> Option<Value> {
        let cache = self.cache.lock().ok()?;
        cache
            .get(digest)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(claims, _)| claims.clone())
    }

    fn remember(&self, digest: [u8; 32], claims: &Value) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
            cache.insert(digest, (claims.clone(), Instant::now()));
        }
    }

    /// The issuer's `introspection_endpoint`, discovered once.
    async fn endpoint(&self, http: &reqwest::Client, issuer: &str) -> Result<Url, ValidationError> {
        let mut known = self.endpoint.lock().await;
        if let Some(url) = known.as_ref() {
            return Ok(url.clone());
        }
        let url = crate::validator::discovered_endpoint(http, issuer, "introspection_endpoint")
            .await
            .map_err(ValidationError::KeysUnavailable)?;
        *known = Some(url.clone());
        Ok(url)
    }

    /// RFC 7662 §2.1: `token` and `token_type_hint`, client authentication by HTTP Basic.
    async fn ask(
        &self,
        http: &reqwest::Client,
        endpoint: &Url,
        key: &str,
    ) -> Result<Value, ValidationError> {
        let unavailable = |message: String| {
            ValidationError::KeysUnavailable(KeySourceError::Network {
                url: endpoint.to_string(),
                message,
            })
        };
        let response = http
            .post(endpoint.clone())
            .basic_auth(
                form_encode(&self.client_id),
                Some(form_encode(&self.client_secret)),
            )
            .form(&[("token", key), ("token_type_hint", "api_key")])
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ValidationError::KeysUnavailable(KeySourceError::Status {
                url: endpoint.to_string(),
                status: status.as_u16(),
            }));
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        serde_json::from_slice(&body).map_err(|_| unavailable("the answer is not JSON".into()))
    }
}

/// RFC 6749 §2.3.1: client id and secret are form-encoded before Basic authentication.
fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}
