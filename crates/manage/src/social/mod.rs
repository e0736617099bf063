//! A tenant's social sign-in providers (issue 20 item 3): configure (or replace), list, read
//! and remove the upstream providers its people sign in through ("Continue with Google"), and
//! an administrator's view and removal of a person's links to them (`links`).
//!
//! Configuring mirrors enterprise single sign-on (`crate::sso`): every rule is checked first
//! (`input`), then an OpenID provider's discovery document is read through the deployment's
//! guarded egress ([`SsoEgress`]) outside any transaction, so a provider always names endpoints
//! published for exactly the issuer expected (OpenID Connect Discovery §4.3). The client secret,
//! or Apple's signing key, is sealed at once ([`SsoSecretKey::seal_social`], bound to tenant and
//! slug) and never shown again; a replacement must give it again, as nothing is read back.
//!
//! A provider decides who may sign in as the tenant's people: a sign-in policy of the tenant,
//! so only tenant-wide callers holding `policies:write` reach these use cases (the routes admit
//! no organization-limited caller). A tenant holds at most [`MAX_SOCIAL_PROVIDERS`]; one more
//! is a conflict. Every change is audited (`social_provider.configured`,
//! `social_provider.removed`) and recorded as the event `social.configured` in the same
//! transaction.

mod input;
pub mod links;
#[cfg(test)]
mod tests;

pub use input::{AppleKeyInput, AuthMethodName, PresetName, ResponseMode, SocialProviderInput};

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use input::{Checked, Credential, Http, Upstream};
use serde::Serialize;
use std::sync::Arc;
use svc_crypto::SsoSecretKey;
use svc_domain::{
    EventData, EventType, MAX_SOCIAL_PROVIDERS, ProviderSlug, SocialClientAuth, SocialProtocol,
    SocialProvider, SsoEgress, TenantId, UpstreamMetadata,
};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// What configuring needs from the runtime: the same egress and sealing key the sign-in engine
/// uses (a key built twice would not open the other's seals without `[kms]`).
#[derive(Clone)]
pub struct SocialServices {
    /// Reaches providers (discovery).
    pub egress: Arc<dyn SsoEgress>,
    /// Seals client secrets and Apple's keys.
    pub secrets: Arc<SsoSecretKey>,
    /// `[generic_oauth]` is on: the presets `oidc` and `oauth2` are accepted.
    pub generic: bool,
    /// Production: provider URLs must be `https`. Otherwise plain `http` is accepted towards
    /// loopback hosts only (a provider on the developer's machine), as the egress allows.
    pub https_only: bool,
}

/// A provider as the API shows it (never its secret or key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SocialProviderView {
    /// Its name within the tenant.
    #[schema(example = "google")]
    pub slug: String,
    /// What it was configured from.
    pub preset: PresetName,
    /// The button's label.
    #[schema(example = "Google")]
    pub display_name: String,
    /// Our client id there.
    pub client_id: String,
    /// How we authenticate at its token endpoint: `client_secret_basic`,
    /// `client_secret_post`, or Apple's `apple_client_secret_jwt`.
    #[schema(example = "client_secret_basic")]
    pub token_endpoint_auth_method: String,
    /// Scopes asked for.
    pub scopes: Vec<String>,
    /// Offered on the sign-in page.
    pub enabled: bool,
    /// How the provider answers.
    pub response_mode: ResponseMode,
    /// The issuer ID tokens must name (OpenID presets; Microsoft's multi-tenant directories
    /// hold the `{tenantid}` template its documents state, filled from each token's `tid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Where browsers are sent.
    pub authorization_endpoint: String,
    /// Where codes are redeemed.
    pub token_endpoint: String,
    /// The provider's signing keys (OpenID presets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// The person's profile, when the provider has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub userinfo_endpoint: Option<String>,
    /// The person's addresses (GitHub-style), when read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emails_endpoint: Option<String>,
    /// Apple: the developer team.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apple_team_id: Option<String>,
    /// Apple: the signing key's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apple_key_id: Option<String>,
    /// The one redirect URI to register at the provider.
    #[schema(example = "https://acme.id.example/auth/social/callback")]
    pub redirect_uri: String,
    /// When first configured.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When last changed.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

fn preset_name(preset: svc_domain::SocialPreset) -> PresetName {
    use svc_domain::SocialPreset as P;
    match preset {
        P::Google => PresetName::Google,
        P::Microsoft => PresetName::Microsoft,
        P::Apple => PresetName::Apple,
        P::Github => PresetName::Github,
        P::Gitlab => PresetName::Gitlab,
        P::Oidc => PresetName::Oidc,
        P::Oauth2 => PresetName::Oauth2,
    }
}

impl SocialProviderView {
    /// The view of `provider` for a tenant whose issuer is `issuer`.
    #[must_use]
    pub fn new(provider: &SocialProvider, issuer: &str) -> Self {
        let (oidc, profile) = match &provider.protocol {
            SocialProtocol::Oidc(m) => (Some(m), None),
            SocialProtocol::OAuth2(p) => (None, Some(p)),
        };
        let (apple_team_id, apple_key_id) = match &provider.client_auth {
            SocialClientAuth::AppleJwt {
                team_id, key_id, ..
            } => (Some(team_id.clone()), Some(key_id.clone())),
            _ => (None, None),
        };
        Self {
            slug: provider.slug.to_string(),
            preset: preset_name(provider.preset),
            display_name: provider.display_name.clone(),
            client_id: provider.client_id.clone(),
            token_endpoint_auth_method: provider.client_auth.method().to_owned(),
            scopes: provider.scopes.clone(),
            enabled: provider.enabled,
            response_mode: if provider.form_post {
                ResponseMode::FormPost
            } else {
                ResponseMode::Query
            },
            issuer: oidc.map(|m| m.issuer.clone()),
            authorization_endpoint: provider.protocol.authorization_endpoint().to_owned(),
            token_endpoint: provider.protocol.token_endpoint().to_owned(),
            jwks_uri: oidc.map(|m| m.jwks_uri.clone()),
            userinfo_endpoint: oidc
                .and_then(|m| m.userinfo_endpoint.clone())
                .or_else(|| profile.map(|p| p.userinfo_endpoint.clone())),
            emails_endpoint: profile.and_then(|p| p.emails_endpoint.clone()),
            apple_team_id,
            apple_key_id,
            redirect_uri: svc_domain::social_redirect_uri(issuer),
            created_at: provider.created_at,
            updated_at: provider.updated_at,
        }
    }
}

fn services(ctx: &ManageContext) -> Result<&SocialServices, ManageError> {
    // Routes exist only with `[social]` on, which wires these.
    ctx.social.as_ref().ok_or(ManageError::NotFound)
}

/// A provider that may not be read back as a slug answers not found, like an absent one.
fn slug(raw: &str) -> Result<ProviderSlug, ManageError> {
    ProviderSlug::parse(raw).map_err(|_| ManageError::NotFound)
}

fn full() -> ManageError {
    ManageError::Conflict(format!(
        "a tenant has at most {MAX_SOCIAL_PROVIDERS} social providers; remove one first"
    ))
}

/// Reads what the provider publishes; a failure names the member that chose the provider.
async fn learn(egress: &dyn SsoEgress, upstream: Upstream) -> Result<SocialProtocol, ManageError> {
    match upstream {
        Upstream::Profile(endpoints) => Ok(SocialProtocol::OAuth2(endpoints)),
        Upstream::Discover { issuer, field } => egress
            .discover(&issuer)
            .await
            .map(SocialProtocol::Oidc)
            .map_err(|e| ManageError::invalid(field, e)),
        Upstream::Microsoft { url, issuer } => {
            let invalid = |e: String| ManageError::invalid("directory", e);
            let body = egress
                .get(&url, "discovery document", None)
                .await
                .map_err(invalid)?;
            let issuer = match issuer {
                Some(issuer) => issuer,
                None => serde_json::from_slice::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|d| d["issuer"].as_str().map(str::to_owned))
                    .filter(|stated| input::microsoft_directory_issuer(stated))
                    .ok_or_else(|| {
                        invalid("the discovery document names no Microsoft directory".into())
                    })?,
            };
            UpstreamMetadata::from_document(&issuer, &body)
                .map(SocialProtocol::Oidc)
                .map_err(invalid)
        }
    }
}

/// Configures (or replaces) the provider `slug` of `tenant`; returns it and whether it is new.
///
/// Errors: [`ManageError::NotFound`] while `[social]` is off; [`ManageError::Invalid`] naming
/// the member at fault (`slug`, `preset`, `client_id`, `client_secret`, `display_name`,
/// `scopes`, `directory`, `base_url`, `issuer`, an endpoint, `token_endpoint_auth_method`,
/// `response_mode`, `apple.*`), also when the discovery document cannot be read or names
/// another issuer; [`ManageError::Conflict`] for a new provider beyond
/// [`MAX_SOCIAL_PROVIDERS`].
pub async fn put(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    slug: &str,
    input: SocialProviderInput,
) -> Result<(SocialProvider, bool), ManageError> {
    let services = services(ctx)?;
    let http = if services.https_only {
        Http::Refused
    } else {
        Http::Loopback
    };
    let checked = input::check(slug, input, services.generic, http)?;
    {
        // Refused before asking the provider; checked again in the transaction below.
        let mut read = ctx.store.read().await?;
        let providers = read.social_providers(tenant).await?;
        read.finish().await?;
        if providers.len() >= MAX_SOCIAL_PROVIDERS
            && !providers.iter().any(|p| p.slug == checked.slug)
        {
            return Err(full());
        }
    }
    let Checked {
        slug,
        preset,
        display_name,
        client_id,
        credential,
        scopes,
        enabled,
        form_post,
        upstream,
    } = checked;
    // Outside any transaction: the provider may take seconds.
    let protocol = learn(services.egress.as_ref(), upstream).await?;
    let seal = |secret: &str| {
        services
            .secrets
            .seal_social(secret, tenant, &slug)
            .map_err(|e| ManageError::Dependency(Box::new(e)))
    };
    let client_auth = match credential {
        Credential::Secret {
            secret,
            post: false,
        } => SocialClientAuth::SecretBasic {
            sealed_secret: seal(&secret)?,
        },
        Credential::Secret { secret, post: true } => SocialClientAuth::SecretPost {
            sealed_secret: seal(&secret)?,
        },
        Credential::Apple {
            team_id,
            key_id,
            pem,
        } => SocialClientAuth::AppleJwt {
            team_id,
            key_id,
            sealed_key: seal(&pem)?,
        },
    };
    let mut tx = ctx.store.write().await?;
    let providers = tx.social_providers(tenant).await?;
    let existing = providers.iter().find(|p| p.slug == slug);
    if existing.is_none() && providers.len() >= MAX_SOCIAL_PROVIDERS {
        return Err(full());
    }
    let now = ctx.now();
    let provider = SocialProvider {
        tenant_id: tenant.clone(),
        slug,
        preset,
        display_name,
        protocol,
        client_id,
        client_auth,
        scopes,
        form_post,
        enabled,
        created_at: existing.map_or(now, |p| p.created_at),
        updated_at: now,
    };
    let created = existing.is_none();
    tx.put_social_provider(&provider).await?;
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &provider,
        action::SOCIAL_PROVIDER_CONFIGURED,
        false,
    )
    .await?;
    tx.commit().await?;
    Ok((provider, created))
}

/// Every provider of `tenant`, by slug.
///
/// Errors: [`ManageError::NotFound`] while `[social]` is off.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<Vec<SocialProvider>, ManageError> {
    services(ctx)?;
    let mut read = ctx.store.read().await?;
    let providers = read.social_providers(tenant).await?;
    read.finish().await?;
    Ok(providers)
}

/// The provider `slug` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when there is none (a malformed slug included).
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    slug_raw: &str,
) -> Result<SocialProvider, ManageError> {
    services(ctx)?;
    let slug = slug(slug_raw)?;
    let mut read = ctx.store.read().await?;
    let provider = read.social_provider(tenant, &slug).await?;
    read.finish().await?;
    provider.ok_or(ManageError::NotFound)
}

/// Removes the provider `slug` and the links, attempts and pending links it had (its people
/// keep their accounts and sign in however else they can).
///
/// Errors: as [`get`].
pub async fn remove(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    slug_raw: &str,
) -> Result<(), ManageError> {
    services(ctx)?;
    let slug = slug(slug_raw)?;
    let mut tx = ctx.store.write().await?;
    let provider = tx
        .social_provider(tenant, &slug)
        .await?
        .ok_or(ManageError::NotFound)?;
    tx.delete_social_provider(tenant, &slug).await?;
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &provider,
        action::SOCIAL_PROVIDER_REMOVED,
        true,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn record(
    tx: &mut dyn svc_store::WriteTx,
    ctx: &ManageContext,
    (actor, meta): (&Actor, &RequestMeta),
    provider: &SocialProvider,
    action: &str,
    removed: bool,
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&provider.tenant_id),
        action,
        Some(provider.slug.as_str()),
    );
    audit::record(tx, &entry).await?;
    let data = EventData::SocialConfigured {
        provider: provider.slug.to_string(),
        preset: provider.preset.as_str().to_owned(),
        enabled: provider.enabled && !removed,
        removed,
        actor: actor.as_audit_string(),
    };
    crate::events::record(
        tx,
        ctx,
        &provider.tenant_id,
        EventType::SocialConfigured,
        data,
    )
    .await
}
