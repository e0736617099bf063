//! The token endpoint's user-login grants: `authorization_code` and `refresh_token`, each in one
//! write transaction so a code is redeemed once and a refresh token rotated once, whatever the
//! number of instances (the store's conditional updates serialise racing requests on the row).
//!
//! Signing keys are fetched before the transaction opens: the key service may itself need the
//! database (first use of a tenant), and a writer must never wait on another writer. The tokens
//! are signed after the commit, from a stamp (`jti`, times) recorded inside it: an RS256 ID token
//! takes about a quarter of a millisecond to sign, and holding SQLite's single write lock (or a
//! PostgreSQL row lock) through it serialised every grant of the instance behind the signing.
//! Signing with a key already in memory cannot fail for these claims; if it ever did, what was
//! committed stays consistent (a spent code or a rotated token whose successor nobody received,
//! as when the response is lost on the network) and the client starts over.
//!
//! Security events (CONTRACTS.md "Tokens"):
//! - A second redemption of a code fails with `invalid_grant` and revokes what the first issued
//!   (its refresh family and its access token), recorded as `security.authorization_code.reuse`.
//! - Presenting a rotated refresh token revokes its whole family, recorded as
//!   `security.refresh_token.reuse`. Expiry (idle and absolute) is checked before anything is
//!   committed, so an expired token is only `invalid_grant`: it is not rotated by the failed
//!   attempt, and a retry is not mistaken for reuse.
//!
//! Both are written to the audit log and the event outbox in the same transaction as the
//! revocation; every issuance records `auth.token.issued` the same way.
//!
//! DPoP (RFC 9449): with a verified proof the access token is bound to its key (`cnf.jkt`,
//! `token_type: DPoP`) and a public client's new refresh family too (§5); a code bound to a key
//! (§10) or a bound family needs a proof of that key (`invalid_dpop_proof`; a refused code stays
//! burned, a refused refresh is not rotated).
//!
//! A grant in an organization (the code's or the family's `organization_id`) is checked again
//! at every redemption and refresh: the organization must still be active and the person still
//! a member. Otherwise the code is burned, or the family revoked (`organization_access_ended`),
//! with `invalid_grant`: a member removed from an organization keeps no refresh token that
//! mints tokens for it.
//!
//! The refresh grant itself is in `refresh.rs`; what both grants share (the claims of a grant,
//! signing after the commit, starting a family, the checks above) stays here.

use super::issue::{
    AccessTokenStamp, Authentication, IssuedAccessToken, NewAccessToken, OrgClaims, SubjectType,
    TokenResponse, token_type,
};
use super::{TokenEndpoint, TokenRequest};
use crate::claims::{ClaimsRequest, ROLES_SCOPE, person_claims, role_claims};
use crate::client_auth::AuthenticatedClient;
use crate::discovery::userinfo_audience;
use crate::error::OAuthError;
use crate::grants::authorization_code::{Presented, Via, check_code};
use crate::id_token::{IdTokenFacts, sign_id_token};
use crate::policies::{GrantSignIn, denial_entry, token_denial};
use crate::resources::{Held, regrant};
use serde_json::{Map, Value};
use std::sync::Arc;
use svc_crypto::SigningKey;
use svc_domain::{
    ApiResource, Application, AuditEntry, AuditEntryId, AuditOutcome, Event, EventData, EventType,
    GeneratedSecret, GrantType, OrgStatus, Organization, OrganizationId, PolicyDenial,
    RefreshFamily, RefreshFamilyId, RefreshToken, RevocationReason, RevokedTokenKind, ScopeSet,
    SecretHash, SessionId, Tenant, User, UserId,
};
use svc_store::{CodeRedemption, WriteTx};
use time::OffsetDateTime;

mod refresh;

/// Prefix of refresh tokens (a token of one kind is never accepted as another).
pub(crate) const REFRESH_TOKEN_PREFIX: &str = "rt_";

/// What the new tokens say about the person.
struct Grant<'a> {
    user: &'a UserId,
    subject: &'a str,
    scope: &'a ScopeSet,
    auth_time: OffsetDateTime,
    acr: Option<&'a str>,
    amr: &'a [String],
    session: Option<&'a SessionId>,
    nonce: Option<&'a str>,
    /// Person claims the `claims` request asked for in the ID token (first issuance only: a
    /// refresh family does not keep the request).
    person: Map<String, Value>,
    /// The organization the grant acts in, as read (and checked) in the grant's transaction.
    organization: Option<Organization>,
    /// The API resource the tokens are for (their audience), as read in the transaction.
    resource: Option<ApiResource>,
    /// The DPoP key the request proved (RFC 9449 §5): the access token is bound to it, and a
    /// public client's new refresh family too.
    proof: Option<&'a str>,
    /// The RAR details (RFC 9396) these tokens carry: what was granted, or the request's
    /// narrowing of it.
    details: Option<svc_domain::AuthorizationDetails>,
    /// What the grant approved, which a new refresh family keeps (later refreshes narrow from
    /// it, not from this token's narrowing).
    granted_details: Option<&'a svc_domain::AuthorizationDetails>,
}

impl Grant<'_> {
    fn org_claims(&self) -> Option<OrgClaims<'_>> {
        self.organization.as_ref().map(|org| OrgClaims {
            id: org.id.as_str(),
            slug: org.slug.as_str(),
        })
    }
}

impl Grant<'_> {
    /// OIDC Core §3.1.3.3: an ID token comes with the access token when `openid` was granted.
    fn wants_id_token(&self) -> bool {
        self.scope.contains("openid")
    }
}

struct Signers {
    access: Arc<SigningKey>,
    id: Arc<SigningKey>,
}

impl TokenEndpoint {
    async fn signers(&self, tenant: &Tenant, app: &Application) -> Result<Signers, OAuthError> {
        Ok(Signers {
            access: self.ctx.keys.access_token_signer(&tenant.id).await?,
            id: self
                .ctx
                .keys
                .signer(&tenant.id, app.id_token_signed_response_alg)
                .await?,
        })
    }

    /// `grant_type=authorization_code` (RFC 6749 §4.1.3).
    pub(super) async fn authorization_code(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
    ) -> Result<TokenResponse, OAuthError> {
        let code = request
            .param("code")
            .ok_or_else(|| OAuthError::invalid_request("code is required"))?;
        let via = Via::Redirect {
            redirect_uri: request.param("redirect_uri"),
            code_verifier: request.param("code_verifier"),
        };
        self.redeem(tenant, issuer, client, request, &SecretHash::of(code), via)
            .await
    }

    /// Redeems, once, the code stored under `hash` and issues its tokens: the code sent to a
    /// redirect URI (`authorization_code`) or the one a person's approval stored under a
    /// device code (the device grant, RFC 8628 §3.5), as `via` says.
    pub(super) async fn redeem(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
        hash: &SecretHash,
        via: Via<'_>,
    ) -> Result<TokenResponse, OAuthError> {
        let app = &client.application;
        let grant_type = match via {
            Via::Redirect { .. } => GrantType::AuthorizationCode,
            Via::Device => GrantType::DeviceCode,
            Via::Backchannel => GrantType::Ciba,
        };
        let signers = self.signers(tenant, app).await?;
        let now = self.ctx.clock.now();
        let mut tx = self.ctx.store.write().await?;
        let code = match tx.redeem_code(&tenant.id, hash, now).await? {
            CodeRedemption::Unknown => {
                return Err(OAuthError::invalid_grant("the code is invalid"));
            }
            CodeRedemption::Again(code) => {
                if let Some(family) = &code.issued_family
                    && tx
                        .revoke_refresh_family(&tenant.id, family, now, "code_reuse")
                        .await?
                {
                    let data = revoked_family(&app.id, family, RevocationReason::CodeReuse);
                    self.record_event(tx.as_mut(), tenant, EventType::TokenRevoked, data)
                        .await?;
                }
                if let (Some(jti), Some(exp)) =
                    (&code.issued_access_jti, code.issued_access_expires_at)
                {
                    tx.revoke_access_token(&tenant.id, jti, exp).await?;
                    let data = EventData::TokensRevoked {
                        client_id: app.id.clone(),
                        token_kind: RevokedTokenKind::AccessToken,
                        access_token_id: Some(jti.clone()),
                        refresh_family_id: None,
                        reason: RevocationReason::CodeReuse,
                    };
                    self.record_event(tx.as_mut(), tenant, EventType::TokenRevoked, data)
                        .await?;
                }
                let entry = security_entry(
                    self,
                    tenant,
                    &app.id,
                    "security.authorization_code.reuse",
                    code.user_id.as_str(),
                );
                tx.insert_audit(&entry).await?;
                tx.commit().await?;
                tracing::warn!(tenant = %tenant.id, client_id = %app.id,
                    "authorization code presented twice: revoked what it issued");
                return Err(OAuthError::invalid_grant(
                    "the code was already used; the tokens it issued are revoked",
                ));
            }
            CodeRedemption::First(code) => code,
        };
        let presented = Presented {
            client: &app.id,
            via,
        };
        let details = check_code(&code, &presented, now)
            .and_then(|()| check_key(code.dpop_jkt.as_deref(), request.proof_jkt()))
            .and_then(|()| {
                crate::details::from_grant(
                    app,
                    code.authorization_details.as_ref(),
                    request.param("authorization_details"),
                    self.ctx.authorization_details(),
                )
            });
        let details = match details {
            Ok(details) => details,
            Err(e) => {
                // Keep the code burned: a failed attempt must not leave it redeemable.
                tx.commit().await?;
                return Err(e);
            }
        };
        let Some(person) = active_person(tx.as_mut(), tenant, &code.user_id).await? else {
            tx.commit().await?;
            return Err(OAuthError::invalid_grant(
                "the person can no longer sign in",
            ));
        };
        let organization = match &code.organization_id {
            None => None,
            Some(org) => {
                match organization_access(tx.as_mut(), tenant, org, &code.user_id).await? {
                    Some(org) => Some(org),
                    None => {
                        tx.commit().await?;
                        return Err(OAuthError::invalid_grant(ORGANIZATION_ACCESS_ENDED));
                    }
                }
            }
        };
        // The tenant's access policies, against how the person signed in: one added or
        // tightened since the code was issued refuses it (the code stays burned).
        let sign_in = GrantSignIn {
            user: &code.user_id,
            organization: code.organization_id.as_ref(),
            acr: code.acr.as_deref(),
            amr: &code.amr,
            auth_time: code.auth_time,
        };
        if let Some(denial) =
            token_denial(tx.as_mut(), &tenant.id, app, &sign_in, request.peer(), now).await?
        {
            self.record_denial(tx.as_mut(), tenant, &code.user_id, &denial, request)
                .await?;
            tx.commit().await?;
            return Err(OAuthError::invalid_grant(denial.describe()));
        }
        let held = Held {
            user: &code.user_id,
            organization: code.organization_id.as_ref(),
            resource: code.resource_id.as_ref(),
            scope: &code.scope,
        };
        let (resource, scope) =
            match regrant(tx.as_mut(), &tenant.id, app, request.resources(), held).await? {
                Ok(regranted) => regranted,
                Err(refused) => {
                    tx.commit().await?;
                    return Err(refused);
                }
            };
        let requested = ClaimsRequest::parse(code.claims.as_deref());
        let mut grant = Grant {
            user: &code.user_id,
            subject: &code.subject,
            scope: &scope,
            auth_time: code.auth_time,
            acr: code.acr.as_deref(),
            amr: &code.amr,
            session: Some(&code.session_id),
            nonce: code.nonce.as_deref(),
            person: person_claims(&person, &scope, requested.id_token_names()),
            organization,
            resource,
            proof: request.proof_jkt(),
            details,
            granted_details: code.authorization_details.as_ref(),
        };
        if scope.contains(ROLES_SCOPE) {
            let roles = role_claims(
                tx.as_mut(),
                &tenant.id,
                &code.user_id,
                code.organization_id.as_ref(),
            )
            .await?;
            grant.person.extend(roles);
        }
        let offline = scope.contains("offline_access") && app.allows_grant(GrantType::RefreshToken);
        let family = if offline {
            Some(
                self.start_family(tx.as_mut(), tenant, app, &grant, now)
                    .await?,
            )
        } else {
            None
        };
        let stamp = self.issuer().stamp(SubjectType::Human);
        tx.record_code_issuance(
            &tenant.id,
            hash,
            family.as_ref().map(|(id, _)| id),
            &stamp.jti,
            unix(stamp.exp),
        )
        .await?;
        let data = EventData::TokensIssued {
            client_id: app.id.clone(),
            user_id: code.user_id.clone(),
            grant_type: grant_type.as_str().into(),
            scope: scope.to_string(),
            access_token_id: stamp.jti.clone(),
            refresh_family_id: family.as_ref().map(|(id, _)| id.clone()),
            id_token: grant.wants_id_token(),
        };
        self.record_event(tx.as_mut(), tenant, EventType::TokenIssued, data)
            .await?;
        tx.commit().await?;
        let (response, access) = self.respond(tenant, issuer, app, &signers, &grant, stamp, now)?;
        let response = TokenResponse {
            refresh_token: family.as_ref().map(|(_, token)| token.clone()),
            ..response
        };
        tracing::info!(tenant = %tenant.id, client_id = %app.id, grant_type = %grant_type,
            jti = %access.jti, refresh = offline, "tokens issued");
        Ok(response)
    }

    /// Signs the access token stamped `stamp` (and the ID token when `openid` was granted),
    /// after the grant's transaction committed.
    #[allow(clippy::too_many_arguments)]
    fn respond(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        signers: &Signers,
        grant: &Grant<'_>,
        stamp: AccessTokenStamp,
        now: OffsetDateTime,
    ) -> Result<(TokenResponse, IssuedAccessToken), OAuthError> {
        // RFC 9700 §2.3: audience-restricted to the API resource asked for, else the
        // application's registered API; without either, UserInfo only.
        let audience = match &grant.resource {
            Some(api) => api.identifier.clone(),
            None => app
                .api_audience
                .clone()
                .unwrap_or_else(|| userinfo_audience(issuer)),
        };
        let access = self.issuer().sign_stamped(
            &signers.access,
            &tenant.id,
            issuer,
            &NewAccessToken {
                subject: grant.subject,
                subject_type: SubjectType::Human,
                client_id: app.wire_client_id(),
                audience: &audience,
                scope: grant.scope,
                authentication: Some(Authentication {
                    auth_time: grant.auth_time,
                    acr: grant.acr,
                    amr: grant.amr,
                    session: grant.session,
                }),
                organization: grant.org_claims(),
                confirmation: grant.proof,
                actor: None,
                not_after: None,
                details: grant.details.as_ref(),
            },
            stamp,
        )?;
        let id_token = if grant.wants_id_token() {
            Some(sign_id_token(
                &signers.id,
                &IdTokenFacts {
                    issuer,
                    subject: grant.subject,
                    client_id: app.wire_client_id(),
                    auth_time: grant.auth_time,
                    nonce: grant.nonce,
                    acr: grant.acr,
                    amr: grant.amr,
                    session: grant.session,
                    access_token: &access.token,
                    person: &grant.person,
                    organization: grant.org_claims(),
                },
                now,
                self.settings.id_token_lifetime,
            )?)
        } else {
            None
        };
        let response = TokenResponse {
            access_token: access.token.clone(),
            token_type: token_type(grant.proof.is_some()),
            expires_in: access.expires_in,
            scope: grant.scope.to_string(),
            refresh_token: None,
            id_token,
            issued_token_type: None,
            authorization_details: grant.details.as_ref().map(|d| d.to_value()),
        };
        Ok((response, access))
    }

    async fn start_family(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        app: &Application,
        grant: &Grant<'_>,
        now: OffsetDateTime,
    ) -> Result<(RefreshFamilyId, String), OAuthError> {
        let now = crate::authorize::truncate_micros(now);
        let family = RefreshFamily {
            id: RefreshFamilyId::generate(self.ctx.clock.as_ref(), self.ctx.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            client_id: app.id.clone(),
            user_id: grant.user.clone(),
            session_id: grant.session.cloned(),
            scope: grant.scope.clone(),
            subject: grant.subject.to_owned(),
            auth_time: grant.auth_time,
            acr: grant.acr.map(str::to_owned),
            amr: grant.amr.to_vec(),
            organization_id: grant.organization.as_ref().map(|org| org.id.clone()),
            resource_id: grant.resource.as_ref().map(|r| r.id.clone()),
            created_at: now,
            expires_at: now + self.settings.refresh_token_lifetime_human,
            revoked_at: None,
            revoke_reason: None,
            // RFC 9449 §5: a public client's refresh tokens are bound to its proof key; a
            // confidential client's are bound to its authentication already.
            dpop_jkt: grant
                .proof
                .filter(|_| !app.is_confidential())
                .map(str::to_owned),
            authorization_details: grant.granted_details.cloned(),
        };
        tx.insert_refresh_family(&family).await?;
        let (token, plaintext) = self.next_token(&family, grant.scope, now);
        tx.insert_refresh_token(&token).await?;
        Ok((family.id, plaintext))
    }

    /// The family's next token: idle expiry from now, never past the family's end.
    fn next_token(
        &self,
        family: &RefreshFamily,
        scope: &ScopeSet,
        now: OffsetDateTime,
    ) -> (RefreshToken, String) {
        let now = crate::authorize::truncate_micros(now);
        let secret = GeneratedSecret::generate(REFRESH_TOKEN_PREFIX, self.ctx.rng.as_ref());
        let token = RefreshToken {
            hash: secret.hash,
            family_id: family.id.clone(),
            tenant_id: family.tenant_id.clone(),
            scope: scope.clone(),
            created_at: now,
            expires_at: (now + self.settings.refresh_token_idle).min(family.expires_at),
            rotated_at: None,
        };
        (token, secret.plaintext)
    }
}

/// RFC 9449 §10 (codes) and §5 (refresh tokens): what is bound to a DPoP key needs a proof
/// of that key; `bound` is the key's thumbprint, `proved` the request's proof's.
fn check_key(bound: Option<&str>, proved: Option<&str>) -> Result<(), OAuthError> {
    let refuse = |description| {
        Err(OAuthError::new(
            crate::error::ErrorCode::InvalidDpopProof,
            description,
        ))
    };
    match (bound, proved) {
        (None, _) => Ok(()),
        (Some(_), None) => refuse("this grant is bound to a DPoP key: send a DPoP proof of it"),
        (Some(bound), Some(proved)) if bound == proved => Ok(()),
        (Some(_), Some(_)) => refuse("the DPoP proof is signed by another key than the grant's"),
    }
}

/// Why a grant in an organization is refused once the person can no longer act in it.
const ORGANIZATION_ACCESS_ENDED: &str =
    "the organization is suspended or gone, or the person is no longer a member";

/// The organization `org` of `tenant` if it is active and `user` is still a member of it.
async fn organization_access(
    tx: &mut dyn WriteTx,
    tenant: &Tenant,
    org: &OrganizationId,
    user: &UserId,
) -> Result<Option<Organization>, OAuthError> {
    let Some(found) = tx
        .organization(&tenant.id, org)
        .await?
        .filter(|o| o.status == OrgStatus::Active)
    else {
        return Ok(None);
    };
    let member = tx.membership(&tenant.id, org, user).await?.is_some();
    Ok(member.then_some(found))
}

/// The person, if they may still receive tokens (suspended and removed people may not).
async fn active_person(
    tx: &mut dyn WriteTx,
    tenant: &Tenant,
    user: &UserId,
) -> Result<Option<User>, OAuthError> {
    Ok(tx.user(&tenant.id, user).await?.filter(User::can_sign_in))
}

fn unix(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(secs).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `auth.token.revoked` for a refresh family.
fn revoked_family(
    client: &svc_domain::ClientId,
    family: &RefreshFamilyId,
    reason: RevocationReason,
) -> EventData {
    EventData::TokensRevoked {
        client_id: client.clone(),
        token_kind: RevokedTokenKind::RefreshToken,
        access_token_id: None,
        refresh_family_id: Some(family.clone()),
        reason,
    }
}

impl TokenEndpoint {
    /// Records an event of `tenant` in `tx`, committed (or rolled back) with the grant.
    async fn record_event(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        event_type: EventType,
        data: EventData,
    ) -> Result<(), OAuthError> {
        let event = Event::new(
            self.ctx.clock.as_ref(),
            self.ctx.rng.as_ref(),
            &tenant.id,
            event_type,
            data,
        );
        tx.insert_event(&event).await?;
        Ok(())
    }
}

impl TokenEndpoint {
    /// Audits a grant refused by an access policy (`access_policy.denied.<rule>`).
    async fn record_denial(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &UserId,
        denial: &PolicyDenial,
        request: &TokenRequest,
    ) -> Result<(), OAuthError> {
        let entry = denial_entry(
            self.ctx.clock.as_ref(),
            self.ctx.rng.as_ref(),
            &tenant.id,
            user,
            denial,
            request.peer(),
        );
        tx.insert_audit(&entry).await?;
        tracing::info!(tenant = %tenant.id, user = %user, policy = %denial.policy,
            rule = denial.rule.as_str(), "token request refused by an access policy");
        Ok(())
    }
}

fn security_entry(
    endpoint: &TokenEndpoint,
    tenant: &Tenant,
    client: &svc_domain::ClientId,
    action: &str,
    target: &str,
) -> AuditEntry {
    AuditEntry {
        id: AuditEntryId::generate(endpoint.ctx.clock.as_ref(), endpoint.ctx.rng.as_ref()),
        tenant_id: Some(tenant.id.clone()),
        actor: format!("client:{client}"),
        action: action.to_owned(),
        target: Some(target.to_owned()),
        request_id: None,
        client_ip: None,
        outcome: AuditOutcome::Failure,
        occurred_at: crate::authorize::truncate_micros(endpoint.ctx.clock.now()),
    }
}
