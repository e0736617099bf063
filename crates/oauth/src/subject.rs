//! The `sub` an application sees for a person (CONTRACTS.md "Identifiers"; OIDC Core §8).
//!
//! First-party applications see the user's public id (`usr_…`). Third-party applications see a
//! pairwise identifier: base64url(HMAC-SHA256(tenant pairwise secret, sector ‖ user id)), where
//! the sector is the host of the application's first registered redirect URI (OIDC Core §8.1,
//! without `sector_identifier_uri`). Two applications on different hosts cannot correlate a
//! person by `sub`, and a tenant's subjects say nothing about another tenant's.
//!
//! [`person_behind`] maps a subject back to the person (UserInfo, introspection): a first-party
//! subject is the user id, a pairwise one is found through the consent that recorded it.
//! [`agent_is_active`] does the same for an agent's token (its `sub` is the agent's id).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use svc_crypto::digest::hmac_sha256;
use svc_domain::{Application, ClientId, Tenant, User, UserId};
use svc_store::{ReadTx, StoreError};

/// The subject `app` of `tenant` sees for `user`.
pub fn subject_for(tenant: &Tenant, app: &Application, user: &UserId) -> String {
    if app.first_party {
        return user.as_str().to_owned();
    }
    let sector = sector_of(app);
    let mut input = Vec::with_capacity(sector.len() + 1 + user.as_str().len());
    input.extend_from_slice(sector.as_bytes());
    input.push(0);
    input.extend_from_slice(user.as_str().as_bytes());
    URL_SAFE_NO_PAD.encode(hmac_sha256(tenant.pairwise_secret.as_bytes(), &input))
}

/// The sector identifier: the host of the first redirect URI, else the client id (an app that
/// has none cannot run the code flow anyway).
fn sector_of(app: &Application) -> String {
    app.redirect_uris
        .first()
        .and_then(|uri| url::Url::parse(uri.as_str()).ok())
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| app.id.as_str().to_owned())
}

/// The application a token's `client_id` claim names: a registered application's id as is, or
/// the URL of an application read from a client ID metadata document, as stored (never
/// fetched). `None` for anything else.
pub async fn client_of_claim(
    tx: &mut dyn ReadTx,
    tenant: &Tenant,
    claim: &str,
) -> Result<Option<ClientId>, StoreError> {
    if let Ok(id) = ClientId::parse(claim) {
        return Ok(Some(id));
    }
    if !svc_domain::ClientIdUrl::is_url_shaped(claim) {
        return Ok(None);
    }
    let app = tx.application_by_metadata_url(&tenant.id, claim).await?;
    Ok(app.map(|a| a.id))
}

/// The person whose subject `client` of `tenant` sees as `subject`, whatever their status.
pub async fn person_behind(
    tx: &mut dyn ReadTx,
    tenant: &Tenant,
    client: &ClientId,
    subject: &str,
) -> Result<Option<User>, StoreError> {
    let user_id = match UserId::parse(subject) {
        // First-party subjects are the person's id (pairwise ones never parse as one).
        Ok(id) => {
            let app = tx.application(&tenant.id, client).await?;
            app.filter(|a| a.first_party).map(|_| id)
        }
        Err(_) => tx
            .consent_by_subject(&tenant.id, client, subject)
            .await?
            .map(|c| c.user_id),
    };
    match user_id {
        Some(id) => tx.user(&tenant.id, &id).await,
        None => Ok(None),
    }
}

/// Whether the agent a token names as `sub` (`subject_type` `agent`) exists in `tenant` and is
/// active: a suspended or revoked agent's tokens stop working at once wherever this is asked
/// (introspection, token exchange), not at their `exp`.
pub async fn agent_is_active(
    tx: &mut dyn ReadTx,
    tenant: &Tenant,
    subject: &str,
) -> Result<bool, StoreError> {
    let Ok(id) = svc_domain::AgentId::parse(subject) else {
        return Ok(false);
    };
    Ok(tx
        .agent(&tenant.id, &id)
        .await?
        .is_some_and(|a| a.is_active()))
}

/// Whether a token an agent obtained for a person (`act.delegation_id`, `crate::token::agent`)
/// still stands at `now`: the delegation is live and is the person's to that agent, the agent
/// is active and the person may still sign in. Revoking the delegation, suspending the agent or
/// the person ends such a token at once wherever this is asked.
pub async fn delegation_stands(
    tx: &mut dyn ReadTx,
    tenant: &Tenant,
    claims: &serde_json::Value,
    now: time::OffsetDateTime,
) -> Result<bool, StoreError> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    let (Some(delegation), Some(agent), Some(person)) = (
        text(&claims["act"]["delegation_id"])
            .and_then(|d| svc_domain::DelegationId::parse(&d).ok()),
        text(&claims["act"]["sub"]),
        text(&claims["sub"]).and_then(|u| UserId::parse(&u).ok()),
    ) else {
        return Ok(false);
    };
    let Some(found) = tx.delegation(&tenant.id, &delegation).await? else {
        return Ok(false);
    };
    if !found.is_live(now) || found.user_id != person || found.agent_id.as_str() != agent {
        return Ok(false);
    }
    if !agent_is_active(tx, tenant, &agent).await? {
        return Ok(false);
    }
    Ok(tx
        .user(&tenant.id, &person)
        .await?
        .is_some_and(|u| u.can_sign_in()))
}
