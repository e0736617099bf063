//! A person's links to the tenant's social providers, as administrators see and cut them:
//! `users:read` lists them (never a token), `users:write` removes one (the upstream account no
//! longer signs in as the person; the person keeps every other way in). Removal is audited
//! (`tenant_user.social_link_removed`) and recorded as `social.account.unlinked`.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::Serialize;
use svc_domain::{EventData, EventType, ProviderSlug, SocialLink, TenantId, UserId};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// One link as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SocialLinkView {
    /// The provider's slug.
    #[schema(example = "google")]
    pub provider: String,
    /// The person's subject at the provider.
    pub subject: String,
    /// The address the provider gave when linked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// When linked.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<&SocialLink> for SocialLinkView {
    fn from(link: &SocialLink) -> Self {
        Self {
            provider: link.provider.to_string(),
            subject: link.subject.clone(),
            email: link.email.clone(),
            created_at: link.created_at,
        }
    }
}

/// The links of the person `user` of `tenant`, by provider.
///
/// Errors: [`ManageError::NotFound`] for a person not of this tenant, or while `[social]` is
/// off.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    user: &UserId,
) -> Result<Vec<SocialLink>, ManageError> {
    super::services(ctx)?;
    let mut read = ctx.store.read().await?;
    if read.user(tenant, user).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let links = read.social_links_of_user(tenant, user).await?;
    read.finish().await?;
    Ok(links)
}

/// Removes the link of `user` to the provider `provider`.
///
/// Errors: [`ManageError::NotFound`] when the person is not of this tenant or has no such link.
pub async fn remove(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    user: &UserId,
    provider: &str,
) -> Result<(), ManageError> {
    super::services(ctx)?;
    let provider = ProviderSlug::parse(provider).map_err(|_| ManageError::NotFound)?;
    let mut tx = ctx.store.write().await?;
    if tx.user(tenant, user).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    if !tx.delete_social_link(tenant, user, &provider).await? {
        return Err(ManageError::NotFound);
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_SOCIAL_LINK_REMOVED,
        Some(user.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    let data = EventData::SocialLinked {
        provider: provider.to_string(),
        user_id: user.clone(),
        actor: actor.as_audit_string(),
    };
    crate::events::record(
        tx.as_mut(),
        ctx,
        tenant,
        EventType::SocialAccountUnlinked,
        data,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
