//! Social sign-in (`[social]`): "Continue with Google / GitHub / Apple / …" on the sign-in
//! page, through providers the tenant configured (`svc_manage::social`).
//!
//! 1. **The start** ([`Authn::begin_social`]): an enabled provider of the tenant; the
//!    authorization code flow with PKCE (S256) and `state` (plus `nonce` for OpenID providers,
//!    `response_mode=form_post` where the provider needs it), all derived from a fresh 256-bit
//!    cookie value ([`svc_crypto::AttemptValues`]), so the attempt row stores none of them and
//!    only the browser holding the cookie can finish. Starts are limited per client address.
//! 2. **The return** ([`Authn::finish_social`]): the attempt is spent first (single use, right
//!    or wrong); `state` must be this browser's; the answer is checked by `crate::upstream`;
//!    the identity is read by `identity`.
//! 3. **Who it is** (`accounts`): an upstream account linked before is that person. Otherwise
//!    an address the provider vouches for that an existing person has is **never linked
//!    silently**: a link waits ([`SocialOutcome::ConfirmLink`]) until that person signs in to
//!    their account in the same browser and confirms ([`Authn::confirm_social_link`]). An
//!    address the provider does not vouch for that an existing person has is refused
//!    ([`AuthnError::SocialAccountExists`]). An address nobody has makes a new person, only
//!    when the provider vouches for it (an account made on an unvouched address could wait
//!    for its real owner to recover it with the maker's provider account still connected)
//!    and the tenant allows sign-ups. A person with a second factor still owes it
//!    ([`SocialOutcome::SecondFactor`]): a provider account is one factor (`amr` `fed`).
//! 4. **From the account page**: a signed-in person connects a provider to their own account
//!    (the attempt carries `link_for`; the return must come back to the same person's session)
//!    and disconnects it ([`Authn::unlink_social`]), never the last way they have to sign in.
//!
//! Events: `auth.login.success`, `social.login.success`, `social.user.provisioned`,
//! `social.account.linked|unlinked`, and `social.login.failed` with a closed reason for every
//! refusal after the attempt was found.

mod accounts;
mod identity;

use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use crate::two_factor::PendingFactor;
use crate::upstream::{self, Stage, UpstreamError, UpstreamResponse};
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use svc_crypto::{AttemptValues, SsoSecretKey};
use svc_domain::{
    EventData, EventType, GeneratedSecret, InteractionId, ProviderSlug, SecretHash, SocialAttempt,
    SocialProtocol, SocialProvider, SsoEgress, Tenant, UserId, social_redirect_uri,
};

pub use accounts::{ConnectedAccount, LinkConfirmed, PendingLinkView};

/// Prefix of attempt cookie values (`soc_…`).
pub const SOCIAL_COOKIE_PREFIX: &str = "soc_";
/// Prefix of pending-link cookie values (`socl_…`).
pub const SOCIAL_LINK_COOKIE_PREFIX: &str = "socl_";

/// The attempt values, named as the modules use them.
pub(crate) type Values = AttemptValues;

/// `[social]` as the engine needs it.
pub struct SocialSettings {
    /// How providers are reached (SSRF-guarded).
    pub egress: Arc<dyn SsoEgress>,
    /// Opens providers' sealed client secrets and keys.
    pub secrets: Arc<SsoSecretKey>,
    /// How long a person has to come back from the provider (and to confirm a link).
    pub attempt_lifetime: Duration,
}

impl std::fmt::Debug for SocialSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocialSettings")
            .field("attempt_lifetime", &self.attempt_lifetime)
            .finish_non_exhaustive()
    }
}

/// The engine's social sign-in: its settings and the providers' kept key sets.
#[derive(Debug)]
pub(crate) struct Social {
    settings: SocialSettings,
    keys: upstream::keys::KeySets,
}

/// A started sign-in: where to send the browser, and the cookie to give it.
pub struct SocialStart {
    /// The provider's authorization request.
    pub location: String,
    /// The attempt cookie's value; only its hash is stored.
    pub cookie_value: String,
    /// How long the cookie lives.
    pub lifetime: Duration,
}

impl std::fmt::Debug for SocialStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocialStart")
            .field("location", &self.location)
            .field("cookie_value", &"<redacted>")
            .finish()
    }
}

/// A provider on the sign-in page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocialButton {
    /// Its slug (the form's target).
    pub slug: String,
    /// Its label.
    pub display_name: String,
}

/// What a return from a provider came to.
#[derive(Debug)]
pub enum SocialOutcome {
    /// Signed in; continue `interaction` if any.
    SignedIn(Box<SignedIn>, Option<InteractionId>),
    /// The person owes their second factor first (the challenge cookie to set).
    SecondFactor(PendingFactor, Option<InteractionId>),
    /// Connected to the signed-in person's own account (started from the account page).
    Linked {
        /// The provider's label.
        provider: String,
    },
    /// The provider vouched for the address of an existing person: they must sign in to it
    /// and confirm. The cookie holds the pending link.
    ConfirmLink {
        /// The pending link cookie's value; only its hash is stored.
        cookie_value: String,
        /// How long it lives.
        lifetime: Duration,
        /// The provider's label.
        provider: String,
        /// The address of the existing account.
        email: String,
    },
}

/// The return of a browser from a provider, as the callback received it.
#[derive(Debug, Clone, Copy)]
pub struct SocialReturn<'a> {
    /// The attempt cookie.
    pub cookie: Option<&'a str>,
    /// The provider's answer.
    pub response: UpstreamResponse<'a>,
    /// Apple's `user` form field (the name, on the first sign-in only).
    pub apple_user: Option<&'a str>,
    /// The person signed in in this browser, if any (a connection from the account page must
    /// come back to them).
    pub session_user: Option<&'a UserId>,
}

/// Why a return was refused, in the closed vocabulary of `social.login.failed`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failure {
    UpstreamError,
    TokenExchange,
    Identity,
    EmailUnverified,
    AccountExists,
    AlreadyLinked,
    AccountUnavailable,
}

impl Failure {
    fn as_str(self) -> &'static str {
        match self {
            Self::UpstreamError => "upstream_error",
            Self::TokenExchange => "token_exchange",
            Self::Identity => "identity",
            Self::EmailUnverified => "email_unverified",
            Self::AccountExists => "account_exists",
            Self::AlreadyLinked => "already_linked",
            Self::AccountUnavailable => "account_unavailable",
        }
    }
}

impl Authn {
    /// Turns social sign-in on with `settings`.
    #[must_use]
    pub fn with_social(mut self, settings: SocialSettings) -> Self {
        self.social = Some(Social {
            settings,
            keys: upstream::keys::KeySets::default(),
        });
        self
    }

    /// Whether `[social]` is on.
    pub fn social_enabled(&self) -> bool {
        self.social.is_some()
    }

    fn social_state(&self) -> Result<&Social, AuthnError> {
        self.social.as_ref().ok_or(AuthnError::SocialOff)
    }

    /// The tenant's enabled providers, for the sign-in page (none with `[social]` off).
    ///
    /// # Errors
    /// [`AuthnError::Store`].
    pub async fn social_buttons(&self, tenant: &Tenant) -> Result<Vec<SocialButton>, AuthnError> {
        if self.social.is_none() {
            return Ok(Vec::new());
        }
        let mut tx = self.store.read().await?;
        let providers = tx.social_providers(&tenant.id).await?;
        tx.finish().await?;
        Ok(providers
            .into_iter()
            .filter(|p| p.enabled)
            .map(|p| SocialButton {
                slug: p.slug.as_str().to_owned(),
                display_name: p.display_name,
            })
            .collect())
    }

    /// Starts a sign-in at the tenant's provider `slug`, for the authorization request
    /// `interaction` if any, or (with `link_for`, from the account page) a connection of the
    /// provider to that signed-in person's account.
    ///
    /// # Errors
    /// [`AuthnError::SocialOff`]; [`AuthnError::RateLimited`] past `[auth]`'s sign-in limit
    /// per client address (each start writes an attempt); [`AuthnError::NoSocialProvider`]
    /// for an unknown or disabled provider.
    pub async fn begin_social(
        &self,
        tenant: &Tenant,
        issuer: &str,
        (slug, interaction, link_for): (&str, Option<&InteractionId>, Option<&UserId>),
        client: &ClientInfo,
    ) -> Result<SocialStart, AuthnError> {
        let social = self.social_state()?;
        let slug = ProviderSlug::parse(slug).map_err(|_| AuthnError::NoSocialProvider)?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        self.ip_limit(
            tx.as_mut(),
            crate::engine::keys::social_ip(&tenant.id, client),
            self.settings.password_verify_ip_max_attempts,
            self.settings.password_verify_ip_window,
            now,
        )
        .await?;
        tx.commit().await?;
        let mut tx = self.store.write().await?;
        let provider = tx
            .social_provider(&tenant.id, &slug)
            .await?
            .filter(|p| p.enabled)
            .ok_or(AuthnError::NoSocialProvider)?;
        let cookie = GeneratedSecret::generate(SOCIAL_COOKIE_PREFIX, self.rng.as_ref());
        let attempt = SocialAttempt {
            hash: cookie.hash,
            tenant_id: tenant.id.clone(),
            provider: slug,
            interaction_id: interaction.cloned(),
            link_for: link_for.cloned(),
            created_at: now,
            expires_at: now + crate::settings::span(social.settings.attempt_lifetime),
            used_at: None,
        };
        tx.insert_social_attempt(&attempt).await?;
        tx.commit().await?;
        let values = AttemptValues::derive(&cookie.plaintext);
        Ok(SocialStart {
            location: authorization_request(&provider, issuer, &values)?,
            cookie_value: cookie.plaintext,
            lifetime: social.settings.attempt_lifetime,
        })
    }

    /// The provider sent the browser back: see the module documentation.
    ///
    /// # Errors
    /// [`AuthnError::SocialExpired`] when the cookie or `state` finds no attempt of this
    /// browser (or a connection comes back to another session); [`AuthnError::SocialRefused`]
    /// when the provider refused or its answer does not check out;
    /// [`AuthnError::SocialUnreachable`]; [`AuthnError::SocialAccountExists`],
    /// [`AuthnError::SocialAlreadyLinked`], [`AuthnError::SignupClosed`],
    /// [`AuthnError::SsoRequired`] as the person's situation says.
    pub async fn finish_social(
        &self,
        tenant: &Tenant,
        issuer: &str,
        back: SocialReturn<'_>,
        client: &ClientInfo,
    ) -> Result<SocialOutcome, AuthnError> {
        let social = self.social_state()?;
        let cookie = back.cookie.ok_or(AuthnError::SocialExpired)?;
        let now = self.now();
        // Spent before anything is checked, and committed alone: one return per attempt.
        let mut tx = self.store.write().await?;
        let attempt = tx
            .take_social_attempt(&tenant.id, &SecretHash::of(cookie), now)
            .await?
            .ok_or(AuthnError::SocialExpired)?;
        let provider = tx.social_provider(&tenant.id, &attempt.provider).await?;
        tx.commit().await?;
        let values = AttemptValues::derive(cookie);
        let state_ok = back
            .response
            .state
            .is_some_and(|s| bool::from(s.as_bytes().ct_eq(values.state.as_bytes())));
        let Some(provider) = provider.filter(|p| state_ok && p.enabled) else {
            return Err(AuthnError::SocialExpired);
        };
        // A connection started from the account page comes back to the same person.
        if attempt.link_for.is_some() && attempt.link_for.as_ref() != back.session_user {
            return Err(AuthnError::SocialExpired);
        }
        let mut response = back.response;
        let (issuer_id, iss_parameter) = match &provider.protocol {
            SocialProtocol::Oidc(m) if !m.issuer.contains(upstream::id_token::TENANT_TEMPLATE) => {
                (Some(m.issuer.as_str()), m.iss_parameter)
            }
            // A multi-tenant issuer is no single issuer an `iss` parameter could be compared
            // with: the ID token's `iss` (checked against its `tid`) is the defence there.
            SocialProtocol::Oidc(_) => {
                response.iss = None;
                (None, false)
            }
            SocialProtocol::OAuth2(_) => (None, false),
        };
        let identity = async {
            let code = upstream::authorization_code(response, issuer_id, iss_parameter)?;
            identity::identity(social, &provider, issuer, (code, &values), now).await
        }
        .await;
        let mut identity = match identity {
            Ok(identity) => identity,
            Err(UpstreamError::Refused(stage, reason)) => {
                let failure = match stage {
                    Stage::Authorization => Failure::UpstreamError,
                    Stage::TokenExchange => Failure::TokenExchange,
                    Stage::Identity => Failure::Identity,
                };
                return Err(self.social_failed(tenant, &provider, failure, reason).await);
            }
            Err(UpstreamError::Unreachable(reason)) => {
                self.social_failed(tenant, &provider, Failure::TokenExchange, reason.clone())
                    .await;
                return Err(AuthnError::SocialUnreachable(reason));
            }
        };
        if identity.name.is_none() {
            identity.name = back.apple_user.and_then(identity::apple_name);
        }
        let outcome = match &attempt.link_for {
            Some(user) => self.link_own(tenant, &provider, &identity, user).await,
            None => {
                self.sign_in_social(tenant, &provider, &identity, attempt.interaction_id, client)
                    .await
            }
        };
        match outcome {
            Ok(outcome) => Ok(outcome),
            Err(accounts::Refusal::Failed(failure, error)) => {
                self.social_failed(tenant, &provider, failure, error.to_string())
                    .await;
                Err(error)
            }
            Err(accounts::Refusal::Error(e)) => Err(e),
        }
    }

    /// Records `social.login.failed` (best effort: the refusal stands either way) and gives
    /// the refusal to answer.
    async fn social_failed(
        &self,
        tenant: &Tenant,
        provider: &SocialProvider,
        failure: Failure,
        reason: String,
    ) -> AuthnError {
        tracing::info!(
            provider = %provider.slug,
            reason = failure.as_str(),
            detail = %reason,
            "social sign-in refused"
        );
        let data = EventData::SocialFailed {
            provider: provider.slug.as_str().to_owned(),
            reason: failure.as_str().to_owned(),
        };
        let recorded = async {
            let mut tx = self.store.write().await?;
            self.record_event(tx.as_mut(), &tenant.id, EventType::SocialLoginFailed, data)
                .await?;
            tx.commit().await?;
            Ok::<(), AuthnError>(())
        };
        if let Err(e) = recorded.await {
            tracing::warn!(error = %e, "could not record social.login.failed");
        }
        AuthnError::SocialRefused(reason)
    }
}

/// The provider's authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect Core
/// §3.1.2.1 for `nonce`, OAuth 2.0 Form Post Response Mode for `response_mode`).
fn authorization_request(
    provider: &SocialProvider,
    issuer: &str,
    values: &AttemptValues,
) -> Result<String, AuthnError> {
    let mut url = url::Url::parse(provider.protocol.authorization_endpoint())
        .map_err(|_| AuthnError::Internal("stored authorization endpoint".into()))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &provider.client_id)
            .append_pair("redirect_uri", &social_redirect_uri(issuer));
        if !provider.scopes.is_empty() {
            query.append_pair("scope", &provider.scopes.join(" "));
        }
        query
            .append_pair("state", &values.state)
            .append_pair("code_challenge", &values.challenge)
            .append_pair("code_challenge_method", "S256");
        if matches!(provider.protocol, SocialProtocol::Oidc(_)) {
            query.append_pair("nonce", &values.nonce);
        }
        if provider.form_post {
            query.append_pair("response_mode", "form_post");
        }
    }
    Ok(url.into())
}
