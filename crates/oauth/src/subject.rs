//! The `sub` an application sees for a person (CONTRACTS.md "Identifiers"; OIDC Core §8).
//!
//! First-party applications see the user's public id (`usr_…`). Third-party applications see a
//! pairwise identifier: base64url(HMAC-SHA256(tenant pairwise secret, sector ‖ user id)), where
//! the sector is the host of the application's first registered redirect URI (OIDC Core §8.1,
//! without `sector_identifier_uri`). Two applications on different hosts cannot correlate a
//! person by `sub`, and a tenant's subjects say nothing about another tenant's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use svc_crypto::digest::hmac_sha256;
use svc_domain::{Application, Tenant, UserId};

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
