//! Who a provider's account is in the tenant: the linked person, a link waiting for the
//! existing person's confirmation, or a new person; and the account page's connections
//! (connect, confirm, list, disconnect). The rules are in the module documentation of
//! `crate::social`.

use super::{Failure, SOCIAL_LINK_COOKIE_PREFIX, SocialOutcome};
use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use crate::sso::AMR_FED;
use crate::upstream::id_token::UpstreamIdentity;
use svc_domain::{
    ACR_AAL1, Email, EventData, EventType, GeneratedSecret, InteractionId, LoginMethod,
    PendingSocialLink, ProviderSlug, SecretHash, SocialLink, SocialProvider, Tenant, User, UserId,
    UserStatus,
};
use svc_store::{StoreError, UpdateOutcome, WriteTx};
use time::OffsetDateTime;

/// A return that cannot go on.
pub(super) enum Refusal {
    /// Refused (recorded as `social.login.failed` with the failure), answered as the error.
    Failed(Failure, AuthnError),
    /// Anything else (the store, a bug): answered as it is, not recorded as a refusal.
    Error(AuthnError),
}

impl From<AuthnError> for Refusal {
    fn from(e: AuthnError) -> Self {
        Self::Error(e)
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Self::Error(e.into())
    }
}

/// One of a person's connected provider accounts, for the account page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedAccount {
    /// The provider's slug.
    pub provider: String,
    /// Its label (the slug when the provider was since removed from the page).
    pub display_name: String,
    /// The address the provider gave when connected.
    pub email: Option<String>,
    /// When connected.
    pub created_at: OffsetDateTime,
}

/// A link waiting for confirmation, as the confirmation page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingLinkView {
    /// The provider's label.
    pub provider: String,
    /// The address of the account it would join.
    pub email: String,
    /// Whether the signed-in person is that account.
    pub for_session_user: bool,
}

/// A confirmed link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkConfirmed {
    /// The provider's label.
    pub provider: String,
    /// The authorization request the sign-in was for, to continue.
    pub interaction: Option<InteractionId>,
}

impl Authn {
    /// Signs in the person behind `identity`, or says what must happen first.
    pub(super) async fn sign_in_social(
        &self,
        tenant: &Tenant,
        provider: &SocialProvider,
        identity: &UpstreamIdentity,
        interaction: Option<InteractionId>,
        client: &ClientInfo,
    ) -> Result<SocialOutcome, Refusal> {
        let now = self.now();
        let mut tx = self.store.write().await?;
        let linked = tx
            .social_link(&tenant.id, &provider.slug, &identity.subject)
            .await?;
        let (mut user, provisioned) = match linked {
            Some(link) => (
                tx.user(&tenant.id, &link.user_id).await?.ok_or_else(|| {
                    Refusal::Failed(Failure::AccountUnavailable, AuthnError::SocialExpired)
                })?,
                false,
            ),
            None => match self
                .first_return(
                    tx.as_mut(),
                    tenant,
                    provider,
                    identity,
                    interaction.as_ref(),
                )
                .await?
            {
                First::User(user) => (user, true),
                First::Confirm(outcome) => {
                    tx.commit().await?;
                    return Ok(outcome);
                }
            },
        };
        if !user.can_sign_in() {
            return Err(Refusal::Failed(
                Failure::AccountUnavailable,
                AuthnError::InvalidCredentials,
            ));
        }
        if self.owes_second_factor(tx.as_mut(), &user).await? {
            let first = vec![AMR_FED.to_owned()];
            let pending = self
                .open_challenge_after(tx.as_mut(), tenant, (&user, first), client, now)
                .await?;
            tx.commit().await?;
            return Ok(SocialOutcome::SecondFactor(pending, interaction));
        }
        let read_at = user.updated_at;
        user.last_sign_in_at = Some(now);
        if tx.update_user_if_unchanged(&user, read_at).await? == UpdateOutcome::Stale {
            return Err(Refusal::Failed(
                Failure::AccountUnavailable,
                AuthnError::SocialExpired,
            ));
        }
        let (session, cookie_value) = self
            .federated_session(
                tx.as_mut(),
                (&user, client),
                (vec![AMR_FED.to_owned()], ACR_AAL1),
                LoginMethod::Social,
            )
            .await?;
        let signed = |session_id| EventData::SocialSignedIn {
            provider: provider.slug.as_str().to_owned(),
            user_id: user.id.clone(),
            session_id,
        };
        if provisioned {
            self.record_event(
                tx.as_mut(),
                &tenant.id,
                EventType::SocialUserProvisioned,
                signed(None),
            )
            .await?;
        }
        self.record_event(
            tx.as_mut(),
            &tenant.id,
            EventType::SocialLoginSuccess,
            signed(Some(session.id.clone())),
        )
        .await?;
        tx.commit().await?;
        Ok(SocialOutcome::SignedIn(
            Box::new(SignedIn {
                session,
                user,
                cookie_value,
            }),
            interaction,
        ))
    }

    /// An upstream account seen for the first time (see the module documentation).
    async fn first_return(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        provider: &SocialProvider,
        identity: &UpstreamIdentity,
        interaction: Option<&InteractionId>,
    ) -> Result<First, Refusal> {
        let social = self.social_state()?;
        let email = identity
            .email
            .as_deref()
            .and_then(|e| Email::parse(e).ok())
            .ok_or(Refusal::Failed(
                Failure::EmailUnverified,
                AuthnError::SocialRefused("the provider shared no usable address".into()),
            ))?;
        // An organization that signs its domains in through its own provider owns them here
        // too: no account appears for them by another route.
        if self.sso_required(tx, tenant, &email).await? {
            return Err(AuthnError::SsoRequired.into());
        }
        let now = self.now();
        match tx.user_by_email(&tenant.id, &email).await? {
            Some(existing) if identity.email_verified => {
                let secret =
                    GeneratedSecret::generate(SOCIAL_LINK_COOKIE_PREFIX, self.rng.as_ref());
                let pending = PendingSocialLink {
                    hash: secret.hash,
                    tenant_id: tenant.id.clone(),
                    provider: provider.slug.clone(),
                    subject: identity.subject.clone(),
                    user_id: existing.id.clone(),
                    email: email.as_str().to_owned(),
                    interaction_id: interaction.cloned(),
                    created_at: now,
                    expires_at: now + crate::settings::span(social.settings.attempt_lifetime),
                };
                tx.insert_pending_social_link(&pending).await?;
                Ok(First::Confirm(SocialOutcome::ConfirmLink {
                    cookie_value: secret.plaintext,
                    lifetime: social.settings.attempt_lifetime,
                    provider: provider.display_name.clone(),
                    email: email.as_str().to_owned(),
                }))
            }
            // Never a takeover by an address the provider does not vouch for.
            Some(_) => Err(Refusal::Failed(
                Failure::AccountExists,
                AuthnError::SocialAccountExists,
            )),
            // An account made on an address nobody vouched for could be waiting for its real
            // owner to recover it, with the maker's provider account still connected.
            None if !identity.email_verified => Err(Refusal::Failed(
                Failure::EmailUnverified,
                AuthnError::SocialRefused("the provider does not vouch for the address".into()),
            )),
            None => {
                if !tenant.signup_enabled {
                    return Err(AuthnError::SignupClosed.into());
                }
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
                        return Err(Refusal::Failed(
                            Failure::AccountUnavailable,
                            AuthnError::SocialExpired,
                        ));
                    }
                    Err(e) => return Err(e.into()),
                }
                self.user_event(tx, &user, EventType::TenantUserActivated)
                    .await?;
                insert_link(tx, provider, identity, &user, now).await?;
                Ok(First::User(user))
            }
        }
    }

    /// Connects the upstream account to `user`, who started it from their account page.
    pub(super) async fn link_own(
        &self,
        tenant: &Tenant,
        provider: &SocialProvider,
        identity: &UpstreamIdentity,
        user: &UserId,
    ) -> Result<SocialOutcome, Refusal> {
        let now = self.now();
        let mut tx = self.store.write().await?;
        let person = tx
            .user(&tenant.id, user)
            .await?
            .filter(User::can_sign_in)
            .ok_or(Refusal::Failed(
                Failure::AccountUnavailable,
                AuthnError::SocialExpired,
            ))?;
        if let Some(link) = tx
            .social_link(&tenant.id, &provider.slug, &identity.subject)
            .await?
        {
            if link.user_id == *user {
                return Ok(SocialOutcome::Linked {
                    provider: provider.display_name.clone(),
                });
            }
            return Err(Refusal::Failed(
                Failure::AlreadyLinked,
                AuthnError::SocialAlreadyLinked,
            ));
        }
        insert_link(tx.as_mut(), provider, identity, &person, now).await?;
        self.linked_event(
            tx.as_mut(),
            tenant,
            provider,
            user,
            EventType::SocialAccountLinked,
        )
        .await?;
        tx.commit().await?;
        Ok(SocialOutcome::Linked {
            provider: provider.display_name.clone(),
        })
    }

    /// The link waiting in this browser, for its confirmation page.
    ///
    /// # Errors
    /// [`AuthnError::SocialExpired`] when the cookie finds none.
    pub async fn pending_social_link(
        &self,
        tenant: &Tenant,
        cookie: Option<&str>,
        session_user: Option<&UserId>,
    ) -> Result<PendingLinkView, AuthnError> {
        self.social_state()?;
        let cookie = cookie.ok_or(AuthnError::SocialExpired)?;
        let mut tx = self.store.read().await?;
        let pending = tx
            .pending_social_link(&tenant.id, &SecretHash::of(cookie), self.now())
            .await?
            .ok_or(AuthnError::SocialExpired)?;
        let provider = tx.social_provider(&tenant.id, &pending.provider).await?;
        tx.finish().await?;
        Ok(PendingLinkView {
            provider: label(provider.as_ref(), &pending.provider),
            email: pending.email,
            for_session_user: session_user == Some(&pending.user_id),
        })
    }

    /// The signed-in person `user` confirms the link waiting in this browser: the upstream
    /// account is connected to their account, whose address the provider vouched for.
    ///
    /// # Errors
    /// [`AuthnError::SocialExpired`] when the cookie finds no link (or it was confirmed);
    /// [`AuthnError::SocialWrongAccount`] when it is for another account (it stays, for that
    /// account to confirm); [`AuthnError::SocialAlreadyLinked`].
    pub async fn confirm_social_link(
        &self,
        tenant: &Tenant,
        cookie: Option<&str>,
        user: &UserId,
    ) -> Result<LinkConfirmed, AuthnError> {
        self.social_state()?;
        let cookie = cookie.ok_or(AuthnError::SocialExpired)?;
        let hash = SecretHash::of(cookie);
        let now = self.now();
        let mut tx = self.store.write().await?;
        let waiting = tx
            .pending_social_link(&tenant.id, &hash, now)
            .await?
            .ok_or(AuthnError::SocialExpired)?;
        if waiting.user_id != *user {
            return Err(AuthnError::SocialWrongAccount);
        }
        let pending = tx
            .take_pending_social_link(&tenant.id, &hash, now)
            .await?
            .ok_or(AuthnError::SocialExpired)?;
        let provider = tx
            .social_provider(&tenant.id, &pending.provider)
            .await?
            .ok_or(AuthnError::SocialExpired)?;
        let mut person = tx
            .user(&tenant.id, user)
            .await?
            .filter(User::can_sign_in)
            .ok_or(AuthnError::SocialExpired)?;
        let identity = UpstreamIdentity {
            subject: pending.subject.clone(),
            email: Some(pending.email.clone()),
            email_verified: true,
            name: None,
            acr: None,
            amr: Vec::new(),
        };
        insert_link(tx.as_mut(), &provider, &identity, &person, now)
            .await
            .map_err(|refusal| match refusal {
                Refusal::Failed(_, e) | Refusal::Error(e) => e,
            })?;
        // The provider vouched for the mailbox and the person proved the account is theirs.
        if !person.email_verified && person.email.as_str() == pending.email {
            let read_at = person.updated_at;
            person.email_verified = true;
            person.updated_at = now;
            if tx.update_user_if_unchanged(&person, read_at).await? == UpdateOutcome::Stale {
                return Err(AuthnError::SocialExpired);
            }
        }
        self.linked_event(
            tx.as_mut(),
            tenant,
            &provider,
            user,
            EventType::SocialAccountLinked,
        )
        .await?;
        tx.commit().await?;
        Ok(LinkConfirmed {
            provider: provider.display_name,
            interaction: pending.interaction_id,
        })
    }

    /// The person's connected provider accounts.
    ///
    /// # Errors
    /// [`AuthnError::Store`].
    pub async fn connected_accounts(
        &self,
        tenant: &Tenant,
        user: &UserId,
    ) -> Result<Vec<ConnectedAccount>, AuthnError> {
        if self.social.is_none() {
            return Ok(Vec::new());
        }
        let mut tx = self.store.read().await?;
        let links = tx.social_links_of_user(&tenant.id, user).await?;
        let providers = tx.social_providers(&tenant.id).await?;
        tx.finish().await?;
        Ok(links
            .into_iter()
            .map(|link| ConnectedAccount {
                display_name: label(
                    providers.iter().find(|p| p.slug == link.provider),
                    &link.provider,
                ),
                provider: link.provider.as_str().to_owned(),
                email: link.email,
                created_at: link.created_at,
            })
            .collect())
    }

    /// The person disconnects their account of the provider `slug`, unless it is their last
    /// way to sign in (no password, no passkey, no other connected account).
    ///
    /// # Errors
    /// [`AuthnError::UnknownSocialLink`]; [`AuthnError::SocialLastMethod`].
    pub async fn unlink_social(
        &self,
        tenant: &Tenant,
        user: &UserId,
        slug: &str,
    ) -> Result<(), AuthnError> {
        self.social_state()?;
        let slug = ProviderSlug::parse(slug).map_err(|_| AuthnError::UnknownSocialLink)?;
        let mut tx = self.store.write().await?;
        let person = tx
            .user(&tenant.id, user)
            .await?
            .ok_or(AuthnError::UnknownUser)?;
        let links = tx.social_links_of_user(&tenant.id, user).await?;
        if !links.iter().any(|l| l.provider == slug) {
            return Err(AuthnError::UnknownSocialLink);
        }
        let other_way = person.password_hash.is_some()
            || links.len() > 1
            || !tx.passkeys(&tenant.id, user).await?.is_empty();
        if !other_way {
            return Err(AuthnError::SocialLastMethod);
        }
        tx.delete_social_link(&tenant.id, user, &slug).await?;
        let provider = tx.social_provider(&tenant.id, &slug).await?;
        if let Some(provider) = provider {
            self.linked_event(
                tx.as_mut(),
                tenant,
                &provider,
                user,
                EventType::SocialAccountUnlinked,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn linked_event(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        provider: &SocialProvider,
        user: &UserId,
        event: EventType,
    ) -> Result<(), AuthnError> {
        let data = EventData::SocialLinked {
            provider: provider.slug.as_str().to_owned(),
            user_id: user.clone(),
            actor: "self".to_owned(),
        };
        self.record_event(tx, &tenant.id, event, data).await
    }
}

/// What a first return comes to.
enum First {
    /// A new person, linked.
    User(User),
    /// A link waiting for the existing person's confirmation.
    Confirm(SocialOutcome),
}

/// Records the link of `identity` to `user`.
async fn insert_link(
    tx: &mut dyn WriteTx,
    provider: &SocialProvider,
    identity: &UpstreamIdentity,
    user: &User,
    now: OffsetDateTime,
) -> Result<(), Refusal> {
    let link = SocialLink {
        tenant_id: user.tenant_id.clone(),
        provider: provider.slug.clone(),
        subject: identity.subject.clone(),
        user_id: user.id.clone(),
        email: identity.email.clone().filter(|_| identity.email_verified),
        created_at: now,
    };
    match tx.insert_social_link(&link).await {
        Ok(()) => Ok(()),
        // The upstream account is someone else's, or the person has one of this provider.
        Err(StoreError::Conflict { .. }) => Err(Refusal::Failed(
            Failure::AlreadyLinked,
            AuthnError::SocialAlreadyLinked,
        )),
        Err(e) => Err(e.into()),
    }
}

/// A provider's label, or its slug once it is gone.
fn label(provider: Option<&SocialProvider>, slug: &ProviderSlug) -> String {
    provider.map_or_else(|| slug.as_str().to_owned(), |p| p.display_name.clone())
}
