//! A tenant user's second factors, for the tenant's administrators: what is set up (never a
//! secret), and resetting them all when the person lost their authenticator and backup codes.
//! The reset is audited (`tenant_user.second_factors_reset`) and emits `auth.mfa.removed` for
//! each confirmed factor, in the transaction of the change.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use serde::Serialize;
use svc_domain::{EventData, EventType, SecondFactor, Tenant, TenantId, UserId};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// The confirmed second factors of the user `id` of `tenant`, oldest first, and how many unused
/// backup codes the person has.
///
/// Errors: [`ManageError::NotFound`] when the user is absent.
pub async fn second_factors(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &UserId,
) -> Result<SecondFactorsView, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.user(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let factors = tx.second_factors(tenant, id).await?;
    let backup_codes_remaining = tx.unused_backup_codes(tenant, id).await?;
    tx.finish().await?;
    Ok(SecondFactorsView {
        items: factors
            .iter()
            .filter(|f| f.is_confirmed())
            .map(SecondFactorView::from)
            .collect(),
        backup_codes_remaining,
    })
}

/// Removes every second factor and backup code of the user `id` of `tenant` (whose issuer is
/// `issuer`), and withdraws trust from their browsers (their next sign-in needs only the
/// password, and they can enrol again). Once that committed, a person who had a factor is mailed
/// that it happened, so a reset they did not ask for does not go unnoticed. Idempotent: a
/// person without factors is reset too (and not mailed).
///
/// Errors: [`ManageError::NotFound`] when the user is absent.
pub async fn reset_second_factors(
    ctx: &ManageContext,
    (whose, issuer): (&Tenant, &str),
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
) -> Result<(), ManageError> {
    let tenant = &whose.id;
    let mut tx = ctx.store.write().await?;
    let Some(user) = tx.user(tenant, id).await? else {
        return Err(ManageError::NotFound);
    };
    let factors = tx.second_factors(tenant, id).await?;
    tx.delete_user_factors(tenant, id).await?;
    // A lost phone may mean a lost laptop too: no browser skips the code any more.
    tx.forget_trusted_devices(tenant, id).await?;
    for factor in factors.iter().filter(|f| f.is_confirmed()) {
        let data = EventData::FactorChanged {
            user_id: id.clone(),
            factor_id: factor.id.clone(),
            kind: factor.kind.as_str().to_owned(),
            actor: actor.to_string(),
        };
        events::record(tx.as_mut(), ctx, tenant, EventType::MfaRemoved, data).await?;
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_SECOND_FACTORS_RESET,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    if factors.iter().any(SecondFactor::is_confirmed)
        && let Some(services) = &ctx.sign_in
    {
        services
            .notices
            .factors_reset(&user, &whose.display_name, issuer);
    }
    Ok(())
}

/// A person's second factors, as the management API shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "items": [{
        "id": "mfa_01jd2mb7c4e6g8j0k2m4p6r8t0",
        "kind": "totp",
        "label": "Authenticator app",
        "created_at": "2026-11-23T08:00:00Z",
        "confirmed_at": "2026-11-23T08:01:00Z"
    }],
    "backup_codes_remaining": 9
}))]
pub struct SecondFactorsView {
    /// The confirmed factors, oldest first (enrolments not yet confirmed are left out).
    pub items: Vec<SecondFactorView>,
    /// Unused backup codes.
    pub backup_codes_remaining: u32,
}

/// One confirmed second factor; its secret is never shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SecondFactorView {
    /// Factor id (`mfa_…`).
    #[schema(example = "mfa_01jd2mb7c4e6g8j0k2m4p6r8t0")]
    pub id: String,
    /// `totp`.
    #[schema(example = "totp")]
    pub kind: &'static str,
    /// The person's name for it.
    #[schema(example = "Authenticator app")]
    pub label: String,
    /// When enrolment started (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When the person confirmed it with a first code (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub confirmed_at: OffsetDateTime,
}

impl From<&SecondFactor> for SecondFactorView {
    fn from(f: &SecondFactor) -> Self {
        Self {
            id: f.id.to_string(),
            kind: f.kind.as_str(),
            label: f.label.clone(),
            created_at: f.created_at,
            confirmed_at: f.confirmed_at.unwrap_or(f.created_at),
        }
    }
}
