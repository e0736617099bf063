//! Enterprise single sign-on (`[enterprise_sso]`): a person signs in through their
//! organization's own OpenID provider.
//!
//! 1. **Home-realm discovery** ([`Authn::begin_sso`]): the address's domain must be verified by
//!    an organization of the tenant that has a connection; otherwise nothing is started.
//! 2. **The request upstream**: authorization code flow with PKCE (S256), `state` and `nonce`,
//!    all three derived from a fresh 256-bit cookie value ([`svc_crypto::AttemptValues`]), so
//!    the attempt row stores none of them and only the browser holding the cookie can finish.
//! 3. **The return** ([`Authn::finish_sso`]): the attempt is spent first (single use, right or
//!    wrong); `state` must be this browser's (a `state` from another browser finds another
//!    attempt or none); RFC 9207 `iss` must be the provider's when it says it sends one, and
//!    any `iss` naming another issuer is a mix-up; the code is redeemed with the verifier and
//!    the sealed client secret (HTTP Basic); the ID token is checked by [`crate::upstream`].
//! 4. **Who it is**: a subject linked before is that person. Otherwise the provider must say
//!    the address is verified and its domain must be one the organization verified: then the
//!    person with that address is linked (an address the provider cannot vouch for never
//!    takes over an account), or created (just in time, `sso.user.provisioned`), and made a
//!    member of the organization when they are not one yet.
//! 5. The session has `amr` `fed` (plus `mfa` and `urn:svc:aal2` when the provider asserts
//!    more than one factor), the login history method `sso`, and the events
//!    `auth.login.success` and `sso.login.success`. Every refusal after the attempt was found
//!    records `sso.login.failed` with a closed reason.
//!
//! Connections themselves (discovery, sealed secret, enforcement) are configured through the
//! management API (`svc_manage::sso`); [`Authn::sso_required`] is how password sign-in honours
//! enforcement.

use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use crate::upstream::id_token::{Expected, UpstreamIdentity};
use crate::upstream::{self, Stage, UpstreamError, UpstreamResponse, keys};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use svc_crypto::{AttemptValues, SsoSecretKey};
use svc_domain::{
    ACR_AAL1, ACR_AAL2, AMR_MFA, AssertionSigner, DomainName, Email, EventData, EventType,
    GeneratedSecret, InteractionId, LoginMethod, MAX_MEMBERSHIPS_PER_USER, ORG_MEMBER, OrgStatus,
    RoleKey, SecretHash, SsoAttempt, SsoClientAuth, SsoConnection, SsoEgress, SsoLink, Tenant,
    User, UserId, UserStatus, sso_redirect_uri,
};
use svc_store::{StoreError, WriteTx};

/// Prefix of attempt cookie values (`sso_…`).
pub const SSO_COOKIE_PREFIX: &str = "sso_";
/// The `amr` value of a federated sign-in (RFC 8176 §2).
pub const AMR_FED: &str = "fed";
/// RFC 7523 §2.2.
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long a client assertion is valid, in seconds.
const ASSERTION_LIFETIME_SECS: i64 = 60;

/// `[enterprise_sso]` as the engine needs it.
pub struct SsoSettings {
    /// How upstream providers are reached (SSRF-guarded).
    pub egress: Arc<dyn SsoEgress>,
    /// Opens connections' sealed client secrets.
    pub secrets: Arc<SsoSecretKey>,
    /// Signs client assertions for `private_key_jwt` connections.
    pub signer: Arc<dyn AssertionSigner>,
    /// How long a person has to come back from the provider.
    pub attempt_lifetime: Duration,
}

/// The engine's single sign-on: its settings and the providers' kept key sets.
#[derive(Debug)]
pub(crate) struct Sso {
    settings: SsoSettings,
    keys: keys::KeySets,
}

impl std::fmt::Debug for SsoSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoSettings")
            .field("attempt_lifetime", &self.attempt_lifetime)
            .finish_non_exhaustive()
    }
}

/// A started sign-in: where to send the browser, and the cookie to give it.
pub struct SsoStart {
    /// The provider's authorization request.
    pub location: String,
    /// The attempt cookie's value; only its hash is stored.
    pub cookie_value: String,
    /// How long the cookie lives.
    pub lifetime: Duration,
}

impl std::fmt::Debug for SsoStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoStart")
            .field("location", &self.location)
            .field("cookie_value", &"<redacted>")
            .finish()
    }
}

/// A finished sign-in.
#[derive(Debug)]
pub struct SsoSignedIn {
    /// The new session.
    pub signed_in: SignedIn,
    /// The authorization request to continue, if the attempt was made for one.
    pub interaction: Option<InteractionId>,
}

/// Why a return was refused, in the closed vocabulary of `sso.login.failed`.
#[derive(Debug, Clone, Copy)]
enum Failure {
    UpstreamError,
    TokenExchange,
    IdToken,
    EmailUnverified,
    DomainNotOwned,
    AccountUnavailable,
}

impl Failure {
    fn as_str(self) -> &'static str {
        match self {
            Self::UpstreamError => "upstream_error",
            Self::TokenExchange => "token_exchange",
            Self::IdToken => "id_token",
            Self::EmailUnverified => "email_unverified",
            Self::DomainNotOwned => "domain_not_owned",
            Self::AccountUnavailable => "account_unavailable",
        }
    }
}

impl Authn {
    /// Turns enterprise single sign-on on with `settings`.
    #[must_use]
    pub fn with_sso(mut self, settings: SsoSettings) -> Self {
        self.sso = Some(Sso {
            settings,
            keys: keys::KeySets::default(),
        });
        self
    }

    /// Whether `[enterprise_sso]` is on.
    pub fn sso_enabled(&self) -> bool {
        self.sso.is_some()
    }

    fn sso_state(&self) -> Result<&Sso, AuthnError> {
        self.sso.as_ref().ok_or(AuthnError::SsoOff)
    }

    /// Home-realm discovery and the start of a sign-in at the provider of the organization
    /// that verified `email`'s domain, for the authorization request `interaction` if any.
    ///
    /// # Errors
    /// [`AuthnError::SsoOff`]; [`AuthnError::RateLimited`] past `[auth]`'s sign-in limit per
    /// client address (each start writes an attempt); [`AuthnError::InvalidEmail`];
    /// [`AuthnError::NoSsoConnection`] when no active organization with a connection verified
    /// the domain.
    pub async fn begin_sso(
        &self,
        tenant: &Tenant,
        issuer: &str,
        (email, interaction): (&str, Option<&InteractionId>),
        client: &ClientInfo,
    ) -> Result<SsoStart, AuthnError> {
        let sso = self.sso_state()?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        self.ip_limit(
            tx.as_mut(),
            crate::engine::keys::sso_ip(&tenant.id, client),
            self.settings.password_verify_ip_max_attempts,
            self.settings.password_verify_ip_window,
            now,
        )
        .await?;
        tx.commit().await?;
        let email = Email::parse(email).map_err(|_| AuthnError::InvalidEmail)?;
        let domain = DomainName::of_email(email.as_str()).ok_or(AuthnError::InvalidEmail)?;
        let mut tx = self.store.write().await?;
        let connection = self
            .connection_for_domain(tx.as_mut(), tenant, &domain)
            .await?
            .ok_or(AuthnError::NoSsoConnection)?;
        let cookie = GeneratedSecret::generate(SSO_COOKIE_PREFIX, self.rng.as_ref());
        let attempt = SsoAttempt {
            hash: cookie.hash,
            tenant_id: tenant.id.clone(),
            organization_id: connection.organization_id.clone(),
            interaction_id: interaction.cloned(),
            created_at: now,
            expires_at: now + crate::settings::span(sso.settings.attempt_lifetime),
            used_at: None,
        };
        tx.insert_sso_attempt(&attempt).await?;
        tx.commit().await?;
        let values = AttemptValues::derive(&cookie.plaintext);
        let location = authorization_request(&connection, issuer, &values, email.as_str())?;
        Ok(SsoStart {
            location,
            cookie_value: cookie.plaintext,
            lifetime: sso.settings.attempt_lifetime,
        })
    }

    /// Whether password sign-in is refused for `email`: its domain is verified by an
    /// organization whose connection enforces single sign-on.
    ///
    /// # Errors
    /// [`AuthnError::Store`].
    pub(crate) async fn sso_required(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        email: &Email,
    ) -> Result<bool, AuthnError> {
        if self.sso.is_none() {
            return Ok(false);
        }
        let Some(domain) = DomainName::of_email(email.as_str()) else {
            return Ok(false);
        };
        Ok(self
            .connection_for_domain(tx, tenant, &domain)
            .await?
            .is_some_and(|c| c.enforced))
    }

    /// [`AuthnError::SsoRequired`] when `email`'s organization enforces single sign-on: no
    /// password is set or reset for it (sign-up, forgotten password).
    pub(crate) async fn refuse_if_sso_required(
        &self,
        tenant: &Tenant,
        email: &Email,
    ) -> Result<(), AuthnError> {
        if self.sso.is_none() {
            return Ok(());
        }
        let mut tx = self.store.write().await?;
        let required = self.sso_required(tx.as_mut(), tenant, email).await?;
        tx.commit().await?;
        if required {
            return Err(AuthnError::SsoRequired);
        }
        Ok(())
    }

    /// The connection of the active organization that verified `domain`, if any.
    async fn connection_for_domain(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        domain: &DomainName,
    ) -> Result<Option<SsoConnection>, AuthnError> {
        let Some(claim) = tx.verified_domain_by_name(&tenant.id, domain).await? else {
            return Ok(None);
        };
        let org = tx.organization(&tenant.id, &claim.organization_id).await?;
        if !org.is_some_and(|o| o.status == OrgStatus::Active) {
            return Ok(None);
        }
        Ok(tx
            .sso_connection(&tenant.id, &claim.organization_id)
            .await?)
    }

    /// The provider sent the browser back: see the module documentation.
    ///
    /// # Errors
    /// [`AuthnError::SsoExpired`] when the cookie or `state` finds no attempt of this browser;
    /// [`AuthnError::SsoRefused`] when the provider refused or its answer does not check out;
    /// [`AuthnError::SsoUnreachable`] when it cannot be reached.
    pub async fn finish_sso(
        &self,
        tenant: &Tenant,
        issuer: &str,
        cookie: Option<&str>,
        response: UpstreamResponse<'_>,
        client: &ClientInfo,
    ) -> Result<SsoSignedIn, AuthnError> {
        let sso = self.sso_state()?;
        let cookie = cookie.ok_or(AuthnError::SsoExpired)?;
        let now = self.now();
        // Spent before anything is checked, and committed alone: one return per attempt.
        let mut tx = self.store.write().await?;
        let attempt = tx
            .take_sso_attempt(&tenant.id, &SecretHash::of(cookie), now)
            .await?
            .ok_or(AuthnError::SsoExpired)?;
        let connection = tx
            .sso_connection(&tenant.id, &attempt.organization_id)
            .await?;
        tx.commit().await?;
        let values = AttemptValues::derive(cookie);
        let state_ok = response
            .state
            .is_some_and(|s| bool::from(s.as_bytes().ct_eq(values.state.as_bytes())));
        let Some(connection) = connection.filter(|_| state_ok) else {
            return Err(AuthnError::SsoExpired);
        };
        let identity = match self
            .upstream_identity(sso, &connection, issuer, &values, response)
            .await
        {
            Ok(identity) => identity,
            Err(Refusal::Failed(failure, reason)) => {
                return Err(self.failed(tenant, &connection, failure, reason).await);
            }
            Err(Refusal::Unreachable(reason)) => {
                let failure = Failure::TokenExchange;
                self.failed(tenant, &connection, failure, reason.clone())
                    .await;
                return Err(AuthnError::SsoUnreachable(reason));
            }
            Err(Refusal::Error(e)) => return Err(e),
        };
        match self
            .sign_in_identity(tenant, &connection, &identity, client)
            .await
        {
            Ok(signed_in) => Ok(SsoSignedIn {
                signed_in,
                interaction: attempt.interaction_id,
            }),
            Err(Refusal::Failed(failure, reason)) => {
                Err(self.failed(tenant, &connection, failure, reason).await)
            }
            Err(Refusal::Unreachable(reason)) => Err(AuthnError::SsoUnreachable(reason)),
            Err(Refusal::Error(e)) => Err(e),
        }
    }

    /// Redeems the code and checks the ID token.
    async fn upstream_identity(
        &self,
        sso: &Sso,
        connection: &SsoConnection,
        issuer: &str,
        values: &AttemptValues,
        response: UpstreamResponse<'_>,
    ) -> Result<UpstreamIdentity, Refusal> {
        let settings = &sso.settings;
        let provider = &connection.provider;
        let code =
            upstream::authorization_code(response, Some(&provider.issuer), provider.iss_parameter)?;
        let redirect_uri = sso_redirect_uri(issuer);
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_verifier", values.verifier.as_str()),
        ];
        let answer = match &connection.client_auth {
            SsoClientAuth::SecretBasic { sealed_secret } => {
                let secret = settings
                    .secrets
                    .open(
                        sealed_secret,
                        &connection.tenant_id,
                        &connection.organization_id,
                    )
                    .map_err(|e| {
                        Refusal::Failed(Failure::TokenExchange, format!("client secret: {e}"))
                    })?;
                settings
                    .egress
                    .post_form(
                        &provider.token_endpoint,
                        &form,
                        Some((&connection.client_id, secret.as_str())),
                    )
                    .await
            }
            SsoClientAuth::PrivateKeyJwt => {
                let assertion = self
                    .client_assertion(settings, connection)
                    .await
                    .map_err(|e| Refusal::Failed(Failure::TokenExchange, e))?;
                form.extend([
                    ("client_id", connection.client_id.as_str()),
                    ("client_assertion_type", CLIENT_ASSERTION_TYPE),
                    ("client_assertion", assertion.as_str()),
                ]);
                settings
                    .egress
                    .post_form(&provider.token_endpoint, &form, None)
                    .await
            }
        };
        let tokens = upstream::token_answer(answer)?;
        let text = |name: &str| upstream::token_text(&tokens, name);
        let id_token = text("id_token").ok_or_else(|| {
            Refusal::Failed(
                Failure::TokenExchange,
                "the token answer carries no id_token".into(),
            )
        })?;
        let now = self.now();
        let expected = Expected {
            issuer: &provider.issuer,
            client_id: &connection.client_id,
            nonce: &values.nonce,
            now: now.unix_timestamp(),
        };
        let mut identity = upstream::verify_id_token(
            settings.egress.as_ref(),
            &sso.keys,
            &provider.jwks_uri,
            &id_token,
            &expected,
            now,
        )
        .await?;
        // Core §5.4: with the code flow a provider may keep the address for UserInfo.
        if identity.email.is_none()
            && let (Some(endpoint), Some(access_token)) =
                (&provider.userinfo_endpoint, text("access_token"))
        {
            let body = settings
                .egress
                .get(endpoint, "userinfo_endpoint", Some(&access_token))
                .await
                .map_err(Refusal::Unreachable)?;
            identity
                .add_userinfo(&body)
                .map_err(|reason| Refusal::Failed(Failure::IdToken, reason))?;
        }
        Ok(identity)
    }

    /// A client assertion for the provider's token endpoint (RFC 7523 §3, OpenID Connect Core
    /// §9): issued by our client id about itself, for the token endpoint, living one minute,
    /// with a fresh `jti`, signed by the tenant's current key.
    async fn client_assertion(
        &self,
        settings: &SsoSettings,
        connection: &SsoConnection,
    ) -> Result<String, String> {
        let now = self.now().unix_timestamp();
        let jti = GeneratedSecret::generate("", self.rng.as_ref()).plaintext;
        let claims = serde_json::json!({
            "iss": connection.client_id,
            "sub": connection.client_id,
            "aud": connection.provider.token_endpoint,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
            "jti": jti,
        });
        settings
            .signer
            .sign(&connection.tenant_id, &claims)
            .await
            .map_err(|e| format!("client assertion: {e}"))
    }

    /// Finds, links or creates the person, and signs them in (one transaction).
    async fn sign_in_identity(
        &self,
        tenant: &Tenant,
        connection: &SsoConnection,
        identity: &UpstreamIdentity,
        client: &ClientInfo,
    ) -> Result<SignedIn, Refusal> {
        let org = &connection.organization_id;
        let now = self.now();
        let mut tx = self.store.write().await?;
        // Suspended while the person was at the provider: nobody signs in through it now.
        let active = tx
            .organization(&tenant.id, org)
            .await?
            .is_some_and(|o| o.status == OrgStatus::Active);
        if !active {
            return Err(refused(
                Failure::AccountUnavailable,
                "the organization is not active",
            ));
        }
        let (mut user, provisioned) = match tx.sso_link(&tenant.id, org, &identity.subject).await? {
            Some(link) => (
                tx.user(&tenant.id, &link.user_id).await?.ok_or_else(|| {
                    refused(Failure::AccountUnavailable, "the linked person is gone")
                })?,
                false,
            ),
            None => {
                self.link_or_provision(tx.as_mut(), tenant, connection, identity)
                    .await?
            }
        };
        if !user.can_sign_in() {
            return Err(refused(
                Failure::AccountUnavailable,
                "the person may not sign in",
            ));
        }
        let read_at = user.updated_at;
        user.last_sign_in_at = Some(now);
        if tx.update_user_if_unchanged(&user, read_at).await? == svc_store::UpdateOutcome::Stale {
            return Err(refused(
                Failure::AccountUnavailable,
                "the person changed meanwhile",
            ));
        }
        if tx.membership(&tenant.id, org, &user.id).await?.is_none()
            && tx.memberships_of_user(&tenant.id, &user.id).await?.len() < MAX_MEMBERSHIPS_PER_USER
        {
            let member = RoleKey::parse(ORG_MEMBER)
                .map_err(|_| AuthnError::Internal("the member role key".into()))?;
            self.add_member(tx.as_mut(), &user, org, BTreeSet::from([member]))
                .await?;
        }
        let (amr, acr) = if identity.multi_factor() {
            (vec![AMR_FED.to_owned(), AMR_MFA.to_owned()], ACR_AAL2)
        } else {
            (vec![AMR_FED.to_owned()], ACR_AAL1)
        };
        let (session, cookie_value) = self
            .federated_session(tx.as_mut(), (&user, client), (amr, acr), LoginMethod::Sso)
            .await?;
        let signed = |session_id| EventData::SsoSignedIn {
            organization_id: org.clone(),
            issuer: connection.provider.issuer.clone(),
            user_id: user.id.clone(),
            session_id,
        };
        if provisioned {
            self.record_event(
                tx.as_mut(),
                &tenant.id,
                EventType::SsoUserProvisioned,
                signed(None),
            )
            .await?;
        }
        self.record_event(
            tx.as_mut(),
            &tenant.id,
            EventType::SsoLoginSuccess,
            signed(Some(session.id.clone())),
        )
        .await?;
        tx.commit().await?;
        Ok(SignedIn {
            session,
            user,
            cookie_value,
        })
    }

    /// A subject seen for the first time: linked to the person with its address, or a new
    /// person, only on an address the provider verified at a domain the organization verified.
    async fn link_or_provision(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        connection: &SsoConnection,
        identity: &UpstreamIdentity,
    ) -> Result<(User, bool), Refusal> {
        let org = &connection.organization_id;
        let email = identity
            .email
            .as_deref()
            .and_then(|e| Email::parse(e).ok())
            .ok_or_else(|| refused(Failure::EmailUnverified, "no usable email claim"))?;
        if !identity.email_verified {
            return Err(refused(
                Failure::EmailUnverified,
                "the provider does not say the address is verified",
            ));
        }
        let owned = match DomainName::of_email(email.as_str()) {
            Some(domain) => tx
                .verified_domain_by_name(&tenant.id, &domain)
                .await?
                .is_some_and(|claim| claim.organization_id == *org),
            None => false,
        };
        if !owned {
            return Err(refused(
                Failure::DomainNotOwned,
                "the address is not at a domain the organization verified",
            ));
        }
        let now = self.now();
        let (user, provisioned) = match tx.user_by_email(&tenant.id, &email).await? {
            Some(mut user) => {
                // The organization owns the domain and its provider vouches for the mailbox.
                if !user.email_verified {
                    let read_at = user.updated_at;
                    user.email_verified = true;
                    user.updated_at = now;
                    if tx.update_user_if_unchanged(&user, read_at).await?
                        == svc_store::UpdateOutcome::Stale
                    {
                        return Err(refused(
                            Failure::AccountUnavailable,
                            "the person changed meanwhile",
                        ));
                    }
                }
                (user, false)
            }
            None => {
                let user = User {
                    id: UserId::generate(self.clock.as_ref(), self.rng.as_ref()),
                    tenant_id: tenant.id.clone(),
                    email,
                    email_verified: true,
                    name: crate::sign_up::clean_name(identity.name.as_deref()),
                    given_name: None,
                    family_name: None,
                    status: UserStatus::Active,
                    password_hash: None,
                    created_at: now,
                    updated_at: now,
                    last_sign_in_at: None,
                };
                match tx.insert_user(&user).await {
                    Ok(()) => {}
                    Err(StoreError::Conflict { .. }) => {
                        return Err(refused(
                            Failure::AccountUnavailable,
                            "the address was taken meanwhile",
                        ));
                    }
                    Err(e) => return Err(e.into()),
                }
                self.user_event(tx, &user, EventType::TenantUserActivated)
                    .await?;
                (user, true)
            }
        };
        let link = SsoLink {
            tenant_id: tenant.id.clone(),
            organization_id: org.clone(),
            subject: identity.subject.clone(),
            user_id: user.id.clone(),
            created_at: now,
        };
        match tx.insert_sso_link(&link).await {
            Ok(()) => Ok((user, provisioned)),
            // The same subject's other return won the race: this one starts again.
            Err(StoreError::Conflict { .. }) => Err(AuthnError::SsoExpired.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Records `sso.login.failed` (best effort: the refusal stands either way) and gives the
    /// refusal to answer.
    async fn failed(
        &self,
        tenant: &Tenant,
        connection: &SsoConnection,
        failure: Failure,
        reason: String,
    ) -> AuthnError {
        tracing::info!(
            organization = %connection.organization_id,
            reason = failure.as_str(),
            detail = %reason,
            "enterprise sign-in refused"
        );
        let data = EventData::SsoFailed {
            organization_id: connection.organization_id.clone(),
            issuer: connection.provider.issuer.clone(),
            reason: failure.as_str().to_owned(),
        };
        let recorded = async {
            let mut tx = self.store.write().await?;
            self.record_event(tx.as_mut(), &tenant.id, EventType::SsoLoginFailed, data)
                .await?;
            tx.commit().await?;
            Ok::<(), AuthnError>(())
        };
        if let Err(e) = recorded.await {
            tracing::warn!(error = %e, "could not record sso.login.failed");
        }
        AuthnError::SsoRefused(reason)
    }
}

/// A return that cannot sign anybody in.
enum Refusal {
    /// Refused, for this reason.
    Failed(Failure, String),
    /// The provider could not be reached.
    Unreachable(String),
    /// Anything else (the store, a bug): answered as it is, not recorded as a refusal.
    Error(AuthnError),
}

impl From<AuthnError> for Refusal {
    fn from(e: AuthnError) -> Self {
        Self::Error(e)
    }
}

impl From<UpstreamError> for Refusal {
    fn from(e: UpstreamError) -> Self {
        match e {
            UpstreamError::Refused(stage, reason) => Self::Failed(
                match stage {
                    Stage::Authorization => Failure::UpstreamError,
                    Stage::TokenExchange => Failure::TokenExchange,
                    Stage::Identity => Failure::IdToken,
                },
                reason,
            ),
            UpstreamError::Unreachable(reason) => Self::Unreachable(reason),
        }
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Self::Error(e.into())
    }
}

/// A refusal while resolving the person.
fn refused(failure: Failure, reason: &str) -> Refusal {
    Refusal::Failed(failure, reason.to_owned())
}

/// The provider's authorization request (OpenID Connect Core §3.1.2.1, RFC 7636 §4.3).
fn authorization_request(
    connection: &SsoConnection,
    issuer: &str,
    values: &AttemptValues,
    email: &str,
) -> Result<String, AuthnError> {
    let mut url = url::Url::parse(&connection.provider.authorization_endpoint)
        .map_err(|_| AuthnError::Internal("stored authorization endpoint".into()))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &connection.client_id)
        .append_pair("redirect_uri", &sso_redirect_uri(issuer))
        .append_pair("scope", &connection.scopes.join(" "))
        .append_pair("state", &values.state)
        .append_pair("nonce", &values.nonce)
        .append_pair("code_challenge", &values.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("login_hint", email);
    Ok(url.into())
}
