//! Replaces the configuration of an application (every mutable field; omitted optional fields
//! are cleared), validated exactly like registration.
//!
//! The secret follows the method: a secret-based application keeps its secret, one that becomes
//! secret-based gets a new one (returned once), and one that stops using a secret loses it.
//! The management application keeps the grant, scopes, method and audience that make it able to
//! manage the tenant; changing those is forbidden, so a tenant cannot lock itself out.

use super::input::ValidApplication;
use super::{ApplicationInput, Identity, assemble, new_secret, next_revision, store_update};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use std::collections::BTreeSet;
use svc_domain::EventType;
use svc_domain::{Application, ClientId, TenantId};

/// Replaces the configuration of the application `id` of `tenant` with `input`, audited as
/// `application.updated`. Returns the application and, when it newly became secret-based, its
/// new plaintext secret (`cs_…`), shown this once.
///
/// The change applies only if the stored application satisfies `precondition` (`If-Match`) and
/// is still the revision read here when it is written.
///
/// Errors: [`ManageError::Invalid`] as on create; [`ManageError::NotFound`] when absent (or
/// another tenant's); [`ManageError::PreconditionFailed`] when it is not at a revision
/// `precondition` names, or changed while this ran; [`ManageError::Forbidden`] when it would
/// change the management application's grants, scopes, method or audience, or when the
/// application is read from a client ID metadata document. Nothing is written
/// on error.
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ClientId,
    input: ApplicationInput,
    precondition: &Precondition,
) -> Result<(Application, Option<String>), ManageError> {
    let valid = input.validate()?.offered_by(ctx)?;
    let mut tx = ctx.store.write().await?;
    let existing = tx
        .application(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(existing.updated_at)?;
    super::document::check_not_from_document(&existing)?;
    if existing.is_management {
        check_management_unchanged(&existing, &valid)?;
    }
    let (secret_hash, new_plaintext) = if !valid.token_endpoint_auth_method.uses_secret() {
        (None, None)
    } else if let Some(hash) = existing.secret_hash.clone() {
        (Some(hash), None)
    } else {
        let secret = new_secret(ctx);
        (Some(secret.hash), Some(secret.plaintext))
    };
    let identity = Identity {
        id: existing.id.clone(),
        tenant_id: tenant,
        is_management: existing.is_management,
        metadata_document: None,
        created_at: existing.created_at,
        updated_at: next_revision(ctx, existing.updated_at),
    };
    let application = assemble(valid, identity, secret_hash);
    store_update(tx.as_mut(), &application, existing.updated_at).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::APPLICATION_UPDATED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::application_changed(
        tx.as_mut(),
        ctx,
        actor,
        &application,
        EventType::AdminApplicationUpdated,
    )
    .await?;
    tx.commit().await?;
    ctx.changes.application_changed(tenant, id);
    Ok((application, new_plaintext))
}

/// Rule: the management application's grants, scopes, authentication method and audience are
/// fixed; its name, redirect URIs and other settings may change.
fn check_management_unchanged(
    existing: &Application,
    valid: &ValidApplication,
) -> Result<(), ManageError> {
    let grants = |g: &[svc_domain::GrantType]| g.iter().copied().collect::<BTreeSet<_>>();
    let fixed = [
        (
            "grant_types",
            grants(&existing.grant_types) == grants(&valid.grant_types),
        ),
        (
            "allowed_scopes",
            existing.allowed_scopes == valid.allowed_scopes,
        ),
        (
            "token_endpoint_auth_method",
            existing.token_endpoint_auth_method == valid.token_endpoint_auth_method,
        ),
        ("api_audience", existing.api_audience == valid.api_audience),
    ];
    match fixed.iter().find(|(_, same)| !same) {
        Some((field, _)) => Err(ManageError::Forbidden(format!(
            "{field} of the management application cannot be changed"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::management_application;
    use super::*;
    use svc_domain::{ManualClock, SeededRandom};
    use time::OffsetDateTime;

    fn management_app() -> Application {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(1);
        let tenant = TenantId::generate(&clock, &rng);
        management_application(&clock, &rng, &tenant, OffsetDateTime::UNIX_EPOCH).0
    }

    fn input_like(app: &Application) -> ApplicationInput {
        ApplicationInput {
            name: app.name.clone(),
            grant_types: app
                .grant_types
                .iter()
                .map(|g| g.as_str().to_owned())
                .collect(),
            token_endpoint_auth_method: app.token_endpoint_auth_method.as_str().to_owned(),
            allowed_scopes: app
                .allowed_scopes
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            ..ApplicationInput::default()
        }
    }

    #[test]
    fn management_application_keeps_its_grant_scopes_method_and_audience() {
        let app = management_app();
        let same = input_like(&app);
        assert!(check_management_unchanged(&app, &same.validate().unwrap()).is_ok());
        let renamed = ApplicationInput {
            name: "Ops automation".to_owned(),
            ..same.clone()
        };
        assert!(check_management_unchanged(&app, &renamed.validate().unwrap()).is_ok());

        let cases = [
            (
                ApplicationInput {
                    grant_types: vec![
                        "client_credentials".to_owned(),
                        "authorization_code".to_owned(),
                    ],
                    redirect_uris: vec!["https://a.example/cb".to_owned()],
                    post_logout_redirect_uris: Vec::new(),
                    ..same.clone()
                },
                "grant_types",
            ),
            (
                ApplicationInput {
                    allowed_scopes: vec!["audit:read".to_owned()],
                    ..same.clone()
                },
                "allowed_scopes",
            ),
            (
                ApplicationInput {
                    token_endpoint_auth_method: "client_secret_post".to_owned(),
                    ..same.clone()
                },
                "token_endpoint_auth_method",
            ),
            (
                ApplicationInput {
                    api_audience: Some("https://api.example.com".to_owned()),
                    ..same.clone()
                },
                "api_audience",
            ),
        ];
        for (input, field) in cases {
            let err = check_management_unchanged(&app, &input.validate().unwrap()).unwrap_err();
            assert!(
                matches!(&err, ManageError::Forbidden(m) if m.starts_with(field)),
                "{field}: {err:?}"
            );
        }
    }
}
