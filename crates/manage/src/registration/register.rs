//! `POST /oauth/register` (RFC 7591 §3.1): registers an application for whoever asks (or, under
//! the `protected` policy, whoever presents an initial access token), when the tenant's policy
//! allows it and the caller's address is within its hourly budget.

use super::initial_tokens::find_usable;
use super::metadata::{ClientMetadata, Kept, in_metadata_terms};
use super::{RegistrationSettings, policy::check_accepts_registrations};
use crate::applications::create_in;
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{
    Application, ClientId, GeneratedSecret, InitialAccessTokenId, REGISTRATION_TOKEN_PREFIX,
    RegistrationPolicy, TenantId,
};

/// How long the registrations of one address are counted together.
const WINDOW: time::Duration = time::Duration::hours(1);

/// A registered application and the credentials issued with it, each shown this once.
pub struct Registered {
    /// The application as stored.
    pub application: Application,
    /// Its client secret (`cs_…`), for secret-based methods.
    pub client_secret: Option<String>,
    /// Its registration access token (`rat_…`).
    pub registration_access_token: String,
}

// By hand: the credentials never reach a log through `{:?}`.
impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("application", &self.application.id)
            .finish_non_exhaustive()
    }
}

/// Registers the application `metadata` describes in `tenant`, for the caller at
/// `meta.client_ip`, with the management API's rules, audit entry (`application.created`, by
/// `client:{its id}`) and event, and its registration access token, in one transaction.
///
/// Under the `protected` policy, `initial_token` (the caller's `Authorization: Bearer`) must be
/// one of the tenant's initial access tokens, unexpired with a use left; the registration spends
/// one use in the transaction that creates the application. Under `open` it is not looked at.
///
/// Errors: [`ManageError::Forbidden`] when the tenant's policy is `disabled`;
/// [`ManageError::RateLimited`] past `settings.max_registrations_per_hour` from this address
/// (refused attempts count too); [`ManageError::Unauthenticated`] without a usable initial access
/// token under `protected`; [`ManageError::Invalid`] naming the first metadata field that
/// breaks a rule (in RFC 7591 terms: `client_name`, `scope`, `redirect_uris`, …). Nothing but the
/// attempt's count is written on error.
pub async fn register(
    ctx: &ManageContext,
    settings: &RegistrationSettings,
    tenant: &TenantId,
    meta: &RequestMeta,
    initial_token: Option<&str>,
    metadata: ClientMetadata,
) -> Result<Registered, ManageError> {
    let mut tx = ctx.store.write().await?;
    let policy = tx.registration_policy(tenant).await?;
    check_accepts_registrations(policy)?;
    let now = ctx.now();
    let key = attempts_key(tenant, meta.client_ip.as_deref());
    let count = tx.hit_counter(&key, now, WINDOW).await?;
    tx.commit().await?;
    if count.count > settings.max_registrations_per_hour {
        let wait = (count.window_ends_at - now).max(time::Duration::seconds(1));
        return Err(ManageError::RateLimited(
            std::time::Duration::try_from(wait).unwrap_or(std::time::Duration::from_secs(1)),
        ));
    }

    // The credential before the body: a caller without one learns nothing of the rules.
    let initial = match policy {
        RegistrationPolicy::Protected => {
            Some(usable_initial_token(ctx, tenant, initial_token).await?)
        }
        _ => None,
    };
    check_assigned_by_server(&metadata)?;
    let valid = metadata
        .vouched(ctx, tenant)
        .await?
        .to_input(Kept::new_registration())?
        .validate()
        .and_then(|valid| valid.offered_by(ctx))
        .map_err(in_metadata_terms)?;
    let id = ClientId::generate(ctx.clock.as_ref(), ctx.rng.as_ref());
    let token = GeneratedSecret::generate(REGISTRATION_TOKEN_PREFIX, ctx.rng.as_ref());
    let actor = Actor::Client(id.clone());
    let mut tx = ctx.store.write().await?;
    // The policy is read again in the writing transaction: a tenant that just closed
    // registration gets no application from a request that was already past the first check.
    let policy = tx.registration_policy(tenant).await?;
    check_accepts_registrations(policy)?;
    if policy == RegistrationPolicy::Protected {
        // Spent here, with the application: a refused registration spends nothing, and racing
        // ones never spend more uses than the token has.
        let spent = match &initial {
            Some(id) => tx.spend_initial_access_token(tenant, id, now).await?,
            None => false,
        };
        if !spent {
            return Err(ManageError::Unauthenticated(
                INITIAL_TOKEN_REQUIRED.to_owned(),
            ));
        }
    }
    let (application, client_secret) =
        create_in(tx.as_mut(), ctx, tenant, &actor, meta, id, valid, None).await?;
    tx.insert_registration_token(tenant, &application.id, &token.hash, now)
        .await?;
    tx.commit().await?;
    Ok(Registered {
        application,
        client_secret,
        registration_access_token: token.plaintext,
    })
}

/// The words of every refused initial access token, whatever the reason.
const INITIAL_TOKEN_REQUIRED: &str =
    "registration in this tenant needs a valid initial access token (Authorization: Bearer)";

/// The id of the tenant's initial access token `presented` is, when it may be used now.
async fn usable_initial_token(
    ctx: &ManageContext,
    tenant: &TenantId,
    presented: Option<&str>,
) -> Result<InitialAccessTokenId, ManageError> {
    let mut tx = ctx.store.read().await?;
    let tokens = tx.initial_access_tokens(tenant).await?;
    tx.finish().await?;
    find_usable(&tokens, presented, ctx.now())
        .ok_or_else(|| ManageError::Unauthenticated(INITIAL_TOKEN_REQUIRED.to_owned()))
}

/// Rule (RFC 7591 §3.2.1): the server assigns `client_id` and `client_secret`; a registration
/// that brings its own is refused rather than half-honoured.
fn check_assigned_by_server(metadata: &ClientMetadata) -> Result<(), ManageError> {
    let field = if metadata.client_id.is_some() {
        "client_id"
    } else if metadata.client_secret.is_some() {
        "client_secret"
    } else {
        return Ok(());
    };
    Err(ManageError::invalid(
        field,
        format!("{field} is assigned by the server and cannot be sent on registration"),
    ))
}

/// The counter of registrations from one address in one tenant.
fn attempts_key(tenant: &TenantId, client_ip: Option<&str>) -> String {
    format!("dcr:{tenant}:{}", client_ip.unwrap_or("unknown"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_id_and_secret_are_the_servers_to_assign() {
        let with_id = ClientMetadata {
            client_id: Some("app_x".into()),
            ..ClientMetadata::default()
        };
        assert!(matches!(
            check_assigned_by_server(&with_id),
            Err(ManageError::Invalid { field, .. }) if field == "client_id"
        ));
        let with_secret = ClientMetadata {
            client_secret: Some("mine".into()),
            ..ClientMetadata::default()
        };
        assert!(matches!(
            check_assigned_by_server(&with_secret),
            Err(ManageError::Invalid { field, .. }) if field == "client_secret"
        ));
        assert!(check_assigned_by_server(&ClientMetadata::default()).is_ok());
    }
}
