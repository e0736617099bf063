//! Each tenant's dynamic client registration policy (`disabled`, `open`, `protected`): read and
//! set through the management API
//! (`/api/v1/registration-policy`, scope `applications:read` / `applications:write`), checked by
//! every registration. Beside it, per tenant: whether client ID metadata documents are accepted,
//! and the software statement issuers the tenant trusts itself.

use super::statement::{StatementIssuerInput, StatementIssuerView, check_trusted};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::{Deserialize, Serialize};
use svc_domain::{RegistrationPolicy, TenantId};

/// The policy as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({"policy": "open", "client_id_metadata_documents": false,
    "software_statement_issuers": [{"issuer": "https://vouch.example",
        "jwks": {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "v1",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}}]}))]
pub struct RegistrationPolicyView {
    /// `disabled` (the default: `/oauth/register` refuses every registration), `open` (anyone
    /// may register, within the deployment's rate limit) or `protected` (only with one of the
    /// tenant's initial access tokens).
    #[schema(value_type = PolicyName)]
    pub policy: RegistrationPolicy,
    /// Whether an `https` URL is accepted as `client_id` (client ID metadata documents),
    /// whatever `policy` says. `false` until turned on; only a deployment with
    /// `[dynamic_registration].client_id_metadata_documents` lets a tenant turn it on.
    pub client_id_metadata_documents: bool,
    /// The authorities this tenant trusts to vouch for clients in software statements (RFC
    /// 7591 §2.3), beside those the deployment trusts
    /// (`[dynamic_registration].software_statement_issuers`, not listed here), by issuer.
    pub software_statement_issuers: Vec<StatementIssuerView>,
}

/// The policy names, for the schema.
#[derive(utoipa::ToSchema)]
#[schema(as = RegistrationPolicyName)]
#[allow(dead_code)]
enum PolicyName {
    #[schema(rename = "disabled")]
    Disabled,
    #[schema(rename = "open")]
    Open,
    #[schema(rename = "protected")]
    Protected,
}

/// What a caller sends to set the policy. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"policy": "protected", "software_statement_issuers": [
    {"issuer": "https://vouch.example", "jwks": {"keys": [{"kty": "OKP", "crv": "Ed25519",
        "kid": "v1", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}}]}))]
pub struct RegistrationPolicyInput {
    /// `disabled`, `open` or `protected`.
    #[schema(value_type = PolicyName)]
    pub policy: String,
    /// Accept client ID metadata documents; absent leaves the current setting.
    #[serde(default)]
    pub client_id_metadata_documents: Option<bool>,
    /// The software statement issuers this tenant trusts, replacing the current list (`[]`
    /// trusts none of its own); absent leaves it. At most 8.
    #[serde(default)]
    pub software_statement_issuers: Option<Vec<StatementIssuerInput>>,
}

/// The registration policy of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn get_policy(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<RegistrationPolicyView, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let policy = tx.registration_policy(tenant).await?;
    // What holds: a deployment that stopped accepting documents overrides the tenant's choice.
    let client_id_metadata_documents =
        ctx.metadata_documents && tx.metadata_documents_accepted(tenant).await?;
    let issuers = tx.statement_issuers(tenant).await?;
    tx.finish().await?;
    Ok(RegistrationPolicyView {
        policy,
        client_id_metadata_documents,
        software_statement_issuers: issuers.into_iter().map(StatementIssuerView::of).collect(),
    })
}

/// Sets the registration policy of `tenant`, audited as `registration_policy.set` (target: the
/// policy). Applications already registered stay; closing registration only refuses new ones.
///
/// `client_id_metadata_documents`, when present, is set in the same transaction (and audited as
/// `registration_policy.set` with the target `client_id_metadata_documents=true|false`);
/// so is `software_statement_issuers`, replacing the tenant's list (target
/// `software_statement_issuers=` and the issuers, space-separated).
///
/// Errors: [`ManageError::Invalid`] for an unknown policy, for turning metadata documents on
/// in a deployment that does not accept them, or naming the first issuer that breaks a rule
/// (`software_statement_issuers[i].issuer|jwks`); [`ManageError::NotFound`] when the tenant
/// does not exist. Nothing is written on error.
pub async fn set_policy(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: RegistrationPolicyInput,
) -> Result<RegistrationPolicyView, ManageError> {
    let policy = RegistrationPolicy::parse(&input.policy).ok_or_else(|| {
        ManageError::invalid("policy", "policy must be disabled, open or protected")
    })?;
    if input.client_id_metadata_documents == Some(true) && !ctx.metadata_documents {
        return Err(ManageError::invalid(
            "client_id_metadata_documents",
            "this deployment does not accept client ID metadata documents \
             ([dynamic_registration].client_id_metadata_documents is off)",
        ));
    }
    let issuers = input
        .software_statement_issuers
        .map(|given| check_trusted(ctx, given))
        .transpose()?;
    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    // Each setting changed is one `registration_policy.set` entry naming it.
    let mut changed = Vec::new();
    tx.set_registration_policy(tenant, policy, ctx.now())
        .await?;
    if let Some(issuers) = &issuers {
        tx.set_statement_issuers(tenant, issuers, ctx.now()).await?;
        let names: Vec<&str> = issuers.iter().map(|i| i.issuer.as_str()).collect();
        changed.push(format!("software_statement_issuers={}", names.join(" ")));
    }
    if let Some(accepted) = input.client_id_metadata_documents {
        tx.set_metadata_documents_accepted(tenant, accepted, ctx.now())
            .await?;
        changed.push(format!("client_id_metadata_documents={accepted}"));
    }
    changed.push(policy.as_str().to_owned());
    for target in &changed {
        let entry = audit::entry(
            ctx,
            actor,
            meta,
            Some(tenant),
            action::REGISTRATION_POLICY_SET,
            Some(target),
        );
        audit::record(tx.as_mut(), &entry).await?;
    }
    let client_id_metadata_documents =
        ctx.metadata_documents && tx.metadata_documents_accepted(tenant).await?;
    let trusted = tx.statement_issuers(tenant).await?;
    tx.commit().await?;
    Ok(RegistrationPolicyView {
        policy,
        client_id_metadata_documents,
        software_statement_issuers: trusted.into_iter().map(StatementIssuerView::of).collect(),
    })
}

/// Rule: registration is taken only when the tenant's policy accepts it.
pub(super) fn check_accepts_registrations(policy: RegistrationPolicy) -> Result<(), ManageError> {
    if policy.accepts_registrations() {
        Ok(())
    } else {
        Err(ManageError::Forbidden(
            "dynamic client registration is disabled for this tenant".to_owned(),
        ))
    }
}
