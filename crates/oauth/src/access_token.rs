//! Local validation of this tenant's own access tokens (RFC 9068 §4), shared by introspection,
//! UserInfo and revocation: signature by one of the tenant's published keys with an algorithm we
//! issue access tokens with (the verifier picks the algorithm, RFC 8725 §3.1), `typ: at+jwt`,
//! the tenant's issuer and `tenant_id`, `exp`/`nbf` admitting now, and not revoked.

use crate::error::OAuthError;
use crate::keys::KeyService;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use svc_crypto::digest::sha256;
use svc_crypto::verify_jwt_signature;
use svc_domain::{SigningAlg, Tenant};
use svc_store::Store;
use time::OffsetDateTime;

/// Bound on remembered tokens per key set; beyond it the memory is emptied and refills.
const MAX_VERIFIED: usize = 20_000;

/// Access tokens whose signature, type, issuer and tenant were already verified, keyed by
/// SHA-256 of issuer and token, kept with the key set they were verified against (a new key set
/// starts empty). A resource server that introspects the same token repeatedly costs one
/// signature verification, not one per call. Only successes are kept, until the token's `exp`;
/// lifetime and revocation are still checked on every use.
#[derive(Debug, Default)]
pub(crate) struct VerifiedTokens {
    tokens: Mutex<HashMap<Digest, (i64, Arc<Value>)>>,
}

/// SHA-256 of issuer and token.
type Digest = [u8; 32];

impl VerifiedTokens {
    fn get(&self, digest: &[u8; 32], now: i64) -> Option<Arc<Value>> {
        let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens
            .get(digest)
            .filter(|(exp, _)| *exp > now)
            .map(|(_, claims)| claims.clone())
    }

    fn put(&self, digest: [u8; 32], exp: i64, claims: Arc<Value>, now: i64) {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        if tokens.len() >= MAX_VERIFIED {
            tokens.retain(|_, (exp, _)| *exp > now);
            if tokens.len() >= MAX_VERIFIED {
                tokens.clear();
            }
        }
        tokens.insert(digest, (exp, claims));
    }
}

/// The claims of a signature-verified access token of `tenant`, ignoring its lifetime and
/// revocation (revocation needs the expired ones too); `None` for anything else.
pub async fn verified_claims(
    keys: &KeyService,
    tenant: &Tenant,
    issuer: &str,
    token: &str,
) -> Result<Option<Value>, OAuthError> {
    // A JWS of ours is three base64url segments; a bigger string is no token of ours.
    if token.len() > 8192 || token.split('.').count() != 3 {
        return Ok(None);
    }
    let published = keys.published_jwks(tenant).await?;
    // The issuer is part of the key: in development the expected issuer follows the request.
    let digest = sha256(format!("{issuer}\n{token}").as_bytes());
    let now = keys.now().unix_timestamp();
    if let Some(claims) = published.verified.get(&digest, now) {
        return Ok(Some(claims.as_ref().clone()));
    }
    let verified = [SigningAlg::Es256, SigningAlg::EdDsa]
        .into_iter()
        .find_map(|alg| verify_jwt_signature(&published.keys, token, alg).ok());
    let Some(verified) = verified else {
        return Ok(None);
    };
    let is_access_token = verified.typ.as_deref().is_some_and(|t| {
        t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt")
    });
    let claims = verified.claims;
    let ours = is_access_token
        && claims["iss"].as_str() == Some(issuer)
        && claims["tenant_id"].as_str() == Some(tenant.id.as_str());
    if !ours {
        return Ok(None);
    }
    if let Some(exp) = claims["exp"].as_i64() {
        published
            .verified
            .put(digest, exp, Arc::new(claims.clone()), now);
    }
    Ok(Some(claims))
}

/// The claims of an access token of `tenant` that is active at `now`: verified, within its
/// lifetime and not revoked.
pub async fn active_claims(
    store: &dyn Store,
    keys: &KeyService,
    tenant: &Tenant,
    issuer: &str,
    token: &str,
    now: OffsetDateTime,
) -> Result<Option<Value>, OAuthError> {
    let Some(claims) = verified_claims(keys, tenant, issuer, token).await? else {
        return Ok(None);
    };
    let at = now;
    let now = now.unix_timestamp();
    let in_lifetime = claims["exp"].as_i64().is_some_and(|exp| exp > now)
        && claims["nbf"].as_i64().is_none_or(|nbf| nbf <= now);
    if !in_lifetime {
        return Ok(None);
    }
    let Some(jti) = claims["jti"].as_str() else {
        return Ok(None);
    };
    let revoked = svc_store::access_token_revoked(store, &tenant.id, jti, at).await?;
    Ok((!revoked).then_some(claims))
}
