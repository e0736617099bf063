//! The UserInfo endpoint (OIDC Core §5.3): the consented claims of the person an access token
//! was issued for.
//!
//! Rules enforced here:
//! - A token sent with `Authorization: DPoP` comes with a DPoP proof for this request
//!   (`invalid_dpop_proof`, `use_dpop_nonce`); a DPoP-bound token is accepted with that scheme
//!   and a proof of its key only, and the scheme with a bound token only (RFC 9449 §7.1, §7.2;
//!   `invalid_token`).
//! - The bearer token is an active access token of this tenant
//!   ([`crate::access_token::active_claims`]), else `invalid_token` (RFC 6750 §3.1).
//! - It was issued to a person (`subject_type` `human`) with the `openid` scope, else
//!   `insufficient_scope` (403): machines have no UserInfo.
//! - The person is found from the token's `sub` as the application sees it (their id for
//!   first-party applications, the pairwise subject of their consent otherwise) and must still
//!   be active; a withdrawn consent or a suspended person is `invalid_token`.
//! - Claims follow the granted scopes (OIDC Core §5.4): `profile` → `name`, `given_name`,
//!   `family_name`, `updated_at`; `email` → `email`, `email_verified`. `sub` always. Claims a
//!   `claims` request names under `userinfo` are therefore here exactly when consent permits
//!   them ([`crate::claims`]).

use crate::access_token::active_claims;
use crate::claims::{ROLES_SCOPE, all_person_claims, role_claims};
use crate::context::ProtocolContext;
use crate::error::OAuthError;
use crate::subject::{client_of_claim, person_behind};
use serde_json::{Map, Value, json};
use svc_domain::{OrganizationId, ScopeSet, Tenant, User};

/// An access token as a request presented it.
pub struct Presented<'a> {
    /// The token.
    pub token: &'a str,
    /// Whether it came with `Authorization: DPoP` rather than `Bearer`.
    pub dpop_scheme: bool,
    /// The request's `DPoP` header.
    pub proof: crate::dpop::ProofHeader<'a>,
    /// The request's method (`htm`).
    pub method: &'a str,
}

/// The UserInfo engine.
pub struct UserInfo {
    ctx: ProtocolContext,
}

impl UserInfo {
    /// A UserInfo engine over `ctx`.
    pub fn new(ctx: ProtocolContext) -> Self {
        Self { ctx }
    }

    /// The claims for the bearer `token` (already extracted from `Authorization: Bearer`).
    pub async fn claims(
        &self,
        tenant: &Tenant,
        issuer: &str,
        token: &str,
    ) -> Result<Value, OAuthError> {
        self.claims_presented(
            tenant,
            issuer,
            &Presented {
                token,
                dpop_scheme: false,
                proof: Ok(None),
                method: "GET",
            },
        )
        .await
    }

    /// The claims for a token presented as `presented` says (RFC 9449 §7: a DPoP-bound token
    /// with the `DPoP` scheme and a proof of its key for this request).
    pub async fn claims_presented(
        &self,
        tenant: &Tenant,
        issuer: &str,
        presented: &Presented<'_>,
    ) -> Result<Value, OAuthError> {
        let token = presented.token;
        let proof = match (presented.dpop_scheme, self.ctx.dpop()) {
            (true, Some(dpop)) => {
                let url = crate::discovery::userinfo_audience(issuer);
                let proof = dpop
                    .verify(
                        tenant,
                        presented.proof.clone(),
                        presented.method,
                        &url,
                        Some(token),
                    )
                    .await?;
                Some(proof.ok_or_else(|| {
                    OAuthError::new(
                        crate::error::ErrorCode::InvalidDpopProof,
                        "the DPoP scheme needs a DPoP proof",
                    )
                })?)
            }
            _ => None,
        };
        let now = self.ctx.clock.now();
        let claims = active_claims(
            self.ctx.store.as_ref(),
            &self.ctx.keys,
            tenant,
            issuer,
            token,
            now,
        )
        .await?
        .ok_or_else(|| OAuthError::invalid_token("the access token is invalid or expired"))?;
        crate::dpop::check_binding(&claims, presented.dpop_scheme, proof.as_ref())?;
        let scope =
            ScopeSet::parse(claims["scope"].as_str().unwrap_or_default()).unwrap_or_default();
        if claims["subject_type"].as_str() != Some("human") || !scope.contains("openid") {
            return Err(OAuthError::insufficient_scope(
                "UserInfo needs a person's access token with the openid scope",
            ));
        }
        let subject = claims["sub"].as_str().unwrap_or_default();
        let client = claims["client_id"].as_str().unwrap_or_default();
        // The organization the token acts in, for `org_roles`.
        let organization = claims["org_id"]
            .as_str()
            .and_then(|id| OrganizationId::parse(id).ok());
        let (user, roles) = self
            .person(tenant, client, subject, &scope, organization.as_ref())
            .await?;
        let user = user
            .filter(User::can_sign_in)
            .ok_or_else(|| OAuthError::invalid_token("the person is no longer available"))?;
        let mut out = render(&user, subject, &scope);
        out.extend(roles);
        Ok(Value::Object(out))
    }

    /// The person behind the token and, with the `roles` scope, their role claims, read in
    /// one transaction.
    async fn person(
        &self,
        tenant: &Tenant,
        client: &str,
        subject: &str,
        scope: &ScopeSet,
        organization: Option<&OrganizationId>,
    ) -> Result<(Option<User>, Map<String, Value>), OAuthError> {
        let mut tx = self.ctx.store.read().await?;
        let client = client_of_claim(tx.as_mut(), tenant, client)
            .await?
            .ok_or_else(|| OAuthError::invalid_token("the access token names no client"))?;
        let user = person_behind(tx.as_mut(), tenant, &client, subject).await?;
        let roles = match &user {
            Some(user) if scope.contains(ROLES_SCOPE) => {
                role_claims(tx.as_mut(), &tenant.id, &user.id, organization).await?
            }
            _ => Map::new(),
        };
        tx.finish().await?;
        Ok((user, roles))
    }
}

fn render(user: &User, subject: &str, scope: &ScopeSet) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("sub".into(), json!(subject));
    out.extend(all_person_claims(user, scope));
    out
}
