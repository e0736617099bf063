//! Token introspection (RFC 7662) for this tenant's access tokens.
//!
//! Rules enforced here:
//! - The caller authenticates exactly as at the token endpoint and must be a confidential client
//!   of the same tenant (RFC 7662 §2.1: "the endpoint MUST also require some form of
//!   authorization"; §4: public clients would turn it into a token-scanning oracle).
//! - An active answer needs the signature of one of this tenant's published keys, the tenant's
//!   issuer, `exp`/`nbf` admitting now, the `at+jwt` type and this tenant's `tenant_id`.
//! - Anything else — malformed, expired, another tenant's, unknown — is `{"active": false}` and
//!   nothing more (§2.2: no hint why), so the endpoint reveals nothing about foreign tokens.

use crate::OAuthError;
use crate::client_auth::{self, ClientAuthContext, JwksFetcher};
use crate::keys::KeyService;
use crate::token::request::ClientRequest;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use svc_crypto::verify_jwt_signature;
use svc_domain::{Clock, SigningAlg, Tenant};
use svc_store::Store;

/// The introspection endpoint's engine.
pub struct Introspector {
    store: Arc<dyn Store>,
    keys: Arc<KeyService>,
    clock: Arc<dyn Clock>,
    jwks_fetcher: Option<Arc<dyn JwksFetcher>>,
}

/// Claims copied into an active introspection response (RFC 7662 §2.2 plus ours).
const COPIED_CLAIMS: [&str; 11] = [
    "scope",
    "client_id",
    "sub",
    "aud",
    "iss",
    "exp",
    "iat",
    "nbf",
    "jti",
    "tenant_id",
    "subject_type",
];

impl Introspector {
    /// An introspector over the tenant keys and applications.
    pub fn new(store: Arc<dyn Store>, keys: Arc<KeyService>, clock: Arc<dyn Clock>) -> Self {
        Self {
            store,
            keys,
            clock,
            jwks_fetcher: None,
        }
    }

    /// Lets `private_key_jwt` callers registered with a `jwks_uri` authenticate.
    #[must_use]
    pub fn with_jwks_fetcher(mut self, fetcher: Arc<dyn JwksFetcher>) -> Self {
        self.jwks_fetcher = Some(fetcher);
        self
    }

    /// Answers an introspection request: the response body (`{"active": ...}`) or the error for
    /// a request that is malformed or whose client fails authentication.
    pub async fn handle(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<Value, OAuthError> {
        let request = ClientRequest::parse(form, authorization)?;
        let ctx = ClientAuthContext {
            store: self.store.as_ref(),
            clock: self.clock.as_ref(),
            tenant: &tenant.id,
            issuer,
            jwks_fetcher: self.jwks_fetcher.as_deref(),
        };
        let client = client_auth::authenticate(&ctx, request.client()).await?;
        if !client.application.is_confidential() {
            return Err(OAuthError::unauthorized_client(
                "introspection is for confidential clients",
            ));
        }
        let token = request.param("token").ok_or_else(|| {
            OAuthError::invalid_request("the `token` parameter is required (RFC 7662 §2.1)")
        })?;
        Ok(self
            .describe(tenant, issuer, token)
            .await?
            .unwrap_or_else(|| json!({ "active": false })))
    }

    /// The active response for `token`, or `None` when it is not an active token of `tenant`.
    async fn describe(
        &self,
        tenant: &Tenant,
        issuer: &str,
        token: &str,
    ) -> Result<Option<Value>, OAuthError> {
        let published = self.keys.published_jwks(tenant).await?;
        let verified = [SigningAlg::Es256, SigningAlg::EdDsa]
            .into_iter()
            .find_map(|alg| verify_jwt_signature(&published.keys, token, alg).ok());
        let Some(verified) = verified else {
            return Ok(None);
        };
        let is_access_token = verified.typ.as_deref().is_some_and(|t| {
            t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt")
        });
        let claims = &verified.claims;
        let now = self.clock.now().unix_timestamp();
        let active = is_access_token
            && claims["iss"].as_str() == Some(issuer)
            && claims["tenant_id"].as_str() == Some(tenant.id.as_str())
            && claims["exp"].as_i64().is_some_and(|exp| exp > now)
            && claims["nbf"].as_i64().is_none_or(|nbf| nbf <= now);
        if !active {
            return Ok(None);
        }
        let mut out = Map::new();
        out.insert("active".into(), json!(true));
        out.insert("token_type".into(), json!("Bearer"));
        for name in COPIED_CLAIMS {
            if let Some(value) = claims.get(name) {
                out.insert(name.into(), value.clone());
            }
        }
        Ok(Some(Value::Object(out)))
    }
}
