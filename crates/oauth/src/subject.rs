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
