//! Token introspection (RFC 7662) for this tenant's access tokens.
//!
//! Rules enforced here:
//! - The caller authenticates exactly as at the token endpoint and must be a confidential client
//!   of the same tenant (RFC 7662 §2.1: "the endpoint MUST also require some form of
//!   authorization"; §4: public clients would turn it into a token-scanning oracle).
//! - An active answer for an access token needs [`crate::access_token::active_claims`]
//!   (signature, type, issuer, tenant, lifetime, not revoked) and a caller entitled to it: the
//!   token's `aud` equals the caller's explicitly registered `api_audience`, or the caller is
//!   the client it was issued to (RFC 9700 §2.3; RFC 7662 §4: a resource server learns nothing
//!   about tokens meant for other APIs). A caller without a registered `api_audience` is no
//!   resource server and describes its own tokens only.
//! - A person's access token (`subject_type` `human`) is active only while the person may
//!   still sign in: suspension and removal end it at once, not at its `exp`. An agent's
//!   (`subject_type` `agent`) only while the agent is active: suspension and revocation end it.
//!   A person's token an agent obtained on a delegation (`act.delegation_id`) only while the
//!   delegation is live, the agent active and the person may sign in.
//! - Refresh tokens (`rt_…`) are described to the client they were issued to only, while
//!   unrotated, unrevoked and unexpired.
//! - API keys (`svck_…`) are described to the tenant's resource servers (callers with a
//!   registered `api_audience`) while live: `token_type` `api_key`, the key id as `client_id`.
//!   A management key: the key id as `sub`, its scopes, `aud` the management API. A key acting
//!   as a person or an agent at an API: only to that API's resource servers, that subject as
//!   `sub` (`subject_type` `human`/`agent`), `aud` the API, `scope` the key's permissions the
//!   subject still holds there; inactive once the subject may no longer act.
//! - Anything else — malformed, expired, another tenant's, unknown — is `{"active": false}` and
//!   nothing more (§2.2: no hint why), so the endpoint reveals nothing about foreign tokens.

use crate::OAuthError;
use crate::access_token::active_claims;
use crate::client_auth;
use crate::context::ProtocolContext;
use crate::discovery::management_api_resource;
use crate::resources;
use crate::subject::{agent_is_active, client_of_claim, delegation_stands, person_behind};
use crate::token::request::ClientRequest;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use svc_crypto::ApiKeyHasher;
use svc_domain::{
    API_KEY_PREFIX, ApiKey, ApiResourceId, Application, KeyReach, KeySubject, ScopeSet, SecretHash,
    Tenant, User, looks_like_api_key,
};
use svc_store::{ReadTx, StoreError};

/// The introspection endpoint's engine.
pub struct Introspector {
    ctx: ProtocolContext,
    /// Hashes presented API keys; `None` while `[api_keys].enabled` is false (every key is
    /// inactive).
    api_keys: Option<Arc<ApiKeyHasher>>,
}

/// Claims copied into an active introspection response (RFC 7662 §2.2 plus ours).
const COPIED_CLAIMS: [&str; 20] = [
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
    // How the person authenticated (tokens of a person's sign-in only).
    "auth_time",
    "acr",
    "amr",
    // The organization the person acts in (when the grant has one).
    "org",
    "org_id",
    "org_slug",
    // The DPoP key a bound token needs a proof of (RFC 9449 §6.2).
    "cnf",
    // Who acts for the subject (RFC 8693 §4.1, §2.2.1: introspection may show it).
    "act",
    // The RAR details the token carries (RFC 9396 §9.2).
    "authorization_details",
];

impl Introspector {
    /// An introspector over `ctx`; callers registered with a `jwks_uri` authenticate when `ctx`
    /// has a fetcher.
    pub fn new(ctx: ProtocolContext) -> Self {
        Self {
            ctx,
            api_keys: None,
        }
    }

    /// The same introspector, describing the tenant's API keys hashed with `hasher`.
    #[must_use]
    pub fn with_api_keys(mut self, hasher: Arc<ApiKeyHasher>) -> Self {
        self.api_keys = Some(hasher);
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
        let auth = self.ctx.client_auth(&tenant.id, issuer);
        let client = client_auth::authenticate(&auth, request.client()).await?;
        if !client.application.is_confidential() {
            return Err(OAuthError::unauthorized_client(
                "introspection is for confidential clients",
            ));
        }
        let token = request.param("token").ok_or_else(|| {
            OAuthError::invalid_request("the `token` parameter is required (RFC 7662 §2.1)")
        })?;
        let caller = &client.application;
        let described = if token.starts_with(API_KEY_PREFIX) {
            self.describe_api_key(tenant, issuer, caller, token).await?
        } else {
            match self.describe_refresh(tenant, caller, token).await? {
                Some(found) => Some(found),
                None => self.describe_access(tenant, issuer, caller, token).await?,
            }
        };
        Ok(described.unwrap_or_else(|| json!({ "active": false })))
    }

    /// The active response for an access token, or `None` when it is not an active token of
    /// `tenant` that `caller` may inspect: its audience must be the caller's own audience, or
    /// the caller must be the client it was issued to (a resource server learns nothing about
    /// tokens meant for other APIs).
    async fn describe_access(
        &self,
        tenant: &Tenant,
        issuer: &str,
        caller: &Application,
        token: &str,
    ) -> Result<Option<Value>, OAuthError> {
        let now = self.ctx.clock.now();
        let Some(claims) = active_claims(
            self.ctx.store.as_ref(),
            &self.ctx.keys,
            tenant,
            issuer,
            token,
            now,
        )
        .await?
        else {
            return Ok(None);
        };
        if !may_inspect(caller, &claims) {
            return Ok(None);
        }
        // A person's token an agent obtained on a delegation stands with the delegation.
        if claims["act"]["delegation_id"].is_string() {
            let mut tx = self.ctx.store.read().await?;
            let stands = delegation_stands(tx.as_mut(), tenant, &claims, now).await?;
            tx.finish().await?;
            if !stands {
                return Ok(None);
            }
        } else if claims["subject_type"].as_str() == Some("human")
            && !self.person_may_sign_in(tenant, &claims).await?
        {
            return Ok(None);
        }
        if claims["subject_type"].as_str() == Some("agent") {
            let mut tx = self.ctx.store.read().await?;
            let active =
                agent_is_active(tx.as_mut(), tenant, claims["sub"].as_str().unwrap_or("")).await?;
            tx.finish().await?;
            if !active {
                return Ok(None);
            }
        }
        let mut out = Map::new();
        out.insert("active".into(), json!(true));
        // RFC 9449 §6.2: a bound token is introspected as `DPoP`, with its `cnf`.
        let bound = claims.get("cnf").is_some();
        out.insert("token_type".into(), json!(crate::token::token_type(bound)));
        for name in COPIED_CLAIMS {
            if let Some(value) = claims.get(name) {
                out.insert(name.into(), value.clone());
            }
        }
        Ok(Some(Value::Object(out)))
    }

    /// Whether the person behind a human access token is still allowed in.
    async fn person_may_sign_in(
        &self,
        tenant: &Tenant,
        claims: &Value,
    ) -> Result<bool, OAuthError> {
        let (Some(client), Some(subject)) = (claims["client_id"].as_str(), claims["sub"].as_str())
        else {
            return Ok(false);
        };
        let mut tx = self.ctx.store.read().await?;
        let person = match client_of_claim(tx.as_mut(), tenant, client).await? {
            Some(client) => person_behind(tx.as_mut(), tenant, &client, subject).await?,
            None => None,
        };
        tx.finish().await?;
        Ok(person.as_ref().is_some_and(User::can_sign_in))
    }

    /// The active response for a refresh token of the caller itself (RFC 7662 §2.1 allows
    /// refresh tokens; only their own client may inspect them).
    async fn describe_refresh(
        &self,
        tenant: &Tenant,
        caller: &Application,
        token: &str,
    ) -> Result<Option<Value>, OAuthError> {
        if !token.starts_with("rt_") {
            return Ok(None);
        }
        let mut tx = self.ctx.store.read_once().await?;
        let found = tx.refresh_token(&tenant.id, &SecretHash::of(token)).await?;
        tx.finish().await?;
        let now = self.ctx.clock.now();
        let Some((token, family)) = found else {
            return Ok(None);
        };
        let active = family.client_id == caller.id
            && family.revoked_at.is_none()
            && token.rotated_at.is_none()
            && now < token.expires_at
            && now < family.expires_at;
        if !active {
            return Ok(None);
        }
        Ok(Some(json!({
            "active": true,
            "token_type": "refresh_token",
            // The caller is the family's client (checked above).
            "client_id": caller.wire_client_id(),
            "scope": token.scope.to_string(),
            "sub": family.subject,
            "exp": token.expires_at.unix_timestamp(),
            "iat": token.created_at.unix_timestamp(),
            "tenant_id": tenant.id.as_str(),
        })))
    }
}

impl Introspector {
    /// The active response for a live API key of `tenant`, to a resource server of the tenant
    /// (a caller with a registered `api_audience`). A management key is a tenant-wide
    /// credential made for the management API (`aud`), and the resource server decides whether
    /// to honour it. A key acting as a person or an agent at an API ([`KeyReach::Api`]) is
    /// described only to that API's resource servers, as that subject, with the permissions it
    /// holds there now ([`Self::api_key_grant`]). Unknown, revoked, expired and other tenants'
    /// keys are inactive, after the same lookup.
    async fn describe_api_key(
        &self,
        tenant: &Tenant,
        issuer: &str,
        caller: &Application,
        presented: &str,
    ) -> Result<Option<Value>, OAuthError> {
        let Some(hasher) = &self.api_keys else {
            return Ok(None);
        };
        let Some(own_audience) = caller.api_audience.as_deref() else {
            return Ok(None);
        };
        if !looks_like_api_key(presented) {
            return Ok(None);
        }
        let hash = hasher.hash(&tenant.id, presented);
        let mut tx = self.ctx.store.read_once().await?;
        let found = tx.api_key_by_hash(&tenant.id, &hash).await?;
        let now = self.ctx.clock.now();
        let Some(key) = found.filter(|k| {
            k.tenant_id == tenant.id
                && hasher.verify(&tenant.id, presented, &k.hash)
                && k.is_live(now)
        }) else {
            tx.finish().await?;
            return Ok(None);
        };
        let (audience, subject, subject_type, scope) = match &key.reach {
            KeyReach::Management => (
                management_api_resource(issuer),
                key.id.to_string(),
                "api_key",
                key.scopes.clone(),
            ),
            KeyReach::Api { resource, subject } => {
                let grant = Self::api_key_grant(tx.as_mut(), tenant, &key, resource, subject);
                match grant.await? {
                    Some((identifier, scope)) if identifier == own_audience => {
                        let kind = match subject {
                            KeySubject::User(_) => "human",
                            KeySubject::Agent(_) => "agent",
                        };
                        (identifier, subject.as_str().to_owned(), kind, scope)
                    }
                    _ => {
                        tx.finish().await?;
                        return Ok(None);
                    }
                }
            }
        };
        tx.finish().await?;
        let mut out = Map::new();
        out.insert("active".into(), json!(true));
        out.insert("token_type".into(), json!("api_key"));
        out.insert("scope".into(), json!(scope.to_string()));
        out.insert("client_id".into(), json!(key.id.as_str()));
        // The key's stable identifier (RFC 7662 §2.2 `jti`), as resource servers expect one.
        out.insert("jti".into(), json!(key.id.as_str()));
        out.insert("sub".into(), json!(subject));
        out.insert("aud".into(), json!(audience));
        out.insert("iss".into(), json!(issuer));
        out.insert("iat".into(), json!(key.created_at.unix_timestamp()));
        if let Some(exp) = key.expires_at {
            out.insert("exp".into(), json!(exp.unix_timestamp()));
        }
        out.insert("tenant_id".into(), json!(tenant.id.as_str()));
        out.insert("subject_type".into(), json!(subject_type));
        Ok(Some(Value::Object(out)))
    }

    /// What a key acting as `subject` at the API `resource` grants now: the API's identifier
    /// and the key's permissions that the subject still holds there — a person's through their
    /// tenant roles while they may sign in, an agent's within its `allowed_scopes` and
    /// `allowed_resources` while it is active. `None` when the subject may not act or holds
    /// none of them (a key that grants nothing is not live).
    async fn api_key_grant(
        tx: &mut dyn ReadTx,
        tenant: &Tenant,
        key: &ApiKey,
        resource: &ApiResourceId,
        subject: &KeySubject,
    ) -> Result<Option<(String, ScopeSet)>, StoreError> {
        let Some(api) = tx.api_resource(&tenant.id, resource).await? else {
            return Ok(None);
        };
        let scope = match subject {
            KeySubject::User(user) => {
                if !tx
                    .user(&tenant.id, user)
                    .await?
                    .is_some_and(|u| u.can_sign_in())
                {
                    return Ok(None);
                }
                let held =
                    resources::person_permissions(tx, &tenant.id, user, None, &api.id).await?;
                resources::permitted(&key.scopes, &api, &held)
            }
            KeySubject::Agent(agent) => {
                let Some(agent) = tx
                    .agent(&tenant.id, agent)
                    .await?
                    .filter(|a| a.is_active() && a.allowed_resources.contains(&api.identifier))
                else {
                    return Ok(None);
                };
                ScopeSet::from_scopes(
                    key.scopes
                        .iter()
                        .filter(|s| agent.allowed_scopes.contains(s.as_str()))
                        .cloned(),
                )
            }
        };
        Ok((!scope.is_empty()).then_some((api.identifier, scope)))
    }
}

/// Whether `caller` may learn about the access token with `claims`: it is the token's own
/// client, or the resource server whose registered `api_audience` is the token's `aud`.
fn may_inspect(caller: &Application, claims: &Value) -> bool {
    let audience_matches = caller
        .api_audience
        .as_deref()
        .is_some_and(|own| claims["aud"].as_str() == Some(own));
    audience_matches || claims["client_id"].as_str() == Some(caller.wire_client_id())
}
