//! Application use cases: registration, tenant isolation, the management application's
//! protections, secret handling.

use crate::support::{client_actor, harness, meta, operator, spa, web_app};
use serde_json::json;
use svc_domain::{ACR_AAL1, ACR_AAL2, AuditOutcome, SigningAlg, TokenEndpointAuthMethod};
use svc_manage::applications::{
    self as apps, ApplicationInput, ApplicationView, CreatedApplicationView,
};
use svc_manage::audit::action;
use svc_manage::control_plane::delete_tenant;
use svc_manage::{ManageError, Precondition, Revision};

/// No `If-Match`.
const NONE: Precondition = Precondition::None;

#[tokio::test]
async fn a_confidential_application_gets_a_secret_shown_once() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);

    let (app, secret) = apps::create(&h.ctx, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    let secret = secret.expect("secret-based method");
    assert!(secret.starts_with("cs_"));
    assert!(!app.is_management);
    assert_eq!(app.id_token_signed_response_alg, SigningAlg::Rs256);
    let stored = apps::get(&h.ctx, tenant, &app.id).await.unwrap();
    assert_eq!(stored, app);
    assert!(stored.secret_hash.as_ref().unwrap().verify(&secret));

    let audit = h.audit(tenant).await;
    assert_eq!(audit.len(), 2);
    let entry = &audit[0];
    assert_eq!(entry.action, action::APPLICATION_CREATED);
    assert_eq!(
        entry.actor,
        format!("client:{}", acme.management_application.id)
    );
    assert_eq!(entry.tenant_id.as_ref(), Some(tenant));
    assert_eq!(entry.target.as_deref(), Some(app.id.as_str()));
    assert_eq!(entry.request_id.as_deref(), Some("req-7f3a"));
    assert_eq!(entry.client_ip.as_deref(), Some("203.0.113.7"));
    assert_eq!(entry.outcome, AuditOutcome::Success);

    // The views never carry the hash; the creation view carries the secret once.
    let view = serde_json::to_value(ApplicationView::from(&stored)).unwrap();
    let keys: Vec<&str> = view
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "client_id",
        "name",
        "redirect_uris",
        "post_logout_redirect_uris",
        "grant_types",
        "token_endpoint_auth_method",
        "allowed_scopes",
        "api_audience",
        "first_party",
        "id_token_signed_response_alg",
        "jwks",
        "jwks_uri",
        "is_management",
        "minimum_acr",
        "organization_usage",
        "require_pushed_authorization_requests",
        "dpop_bound_access_tokens",
        "backchannel_logout_uri",
        "backchannel_logout_session_required",
        "frontchannel_logout_uri",
        "frontchannel_logout_session_required",
        "authorization_details_types",
        "confidential",
        "client_id_metadata_document",
        "created_at",
        "updated_at",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    assert_eq!(keys.len(), 26, "{keys:?}");
    assert_eq!(view["client_id_metadata_document"], serde_json::Value::Null);
    assert_eq!(
        view["require_pushed_authorization_requests"], false,
        "RFC 9126 §6: off unless registered"
    );
    assert_eq!(
        view["dpop_bound_access_tokens"], false,
        "RFC 9449 §5.2: off unless registered"
    );
    assert_eq!(view["minimum_acr"], serde_json::Value::Null, "no minimum");
    assert_eq!(view["organization_usage"], "allow", "the default");
    assert_eq!(view["client_id"], app.id.as_str());
    assert_eq!(view["confidential"], true);
    assert_eq!(
        view["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert!(view["created_at"].as_str().unwrap().ends_with('Z'));
    let once = CreatedApplicationView::new(&app, Some(secret.clone()));
    let once_json = serde_json::to_value(&once).unwrap();
    assert_eq!(once_json["client_secret"], secret.as_str());
    assert_eq!(once_json["client_id"], app.id.as_str());
    assert!(!format!("{once:?}").contains(&secret));
    let no_secret = serde_json::to_value(CreatedApplicationView::new(&app, None)).unwrap();
    assert!(no_secret.get("client_secret").is_none());
}

#[tokio::test]
async fn public_and_private_key_jwt_applications_get_no_secret() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);

    let (public, secret) = apps::create(&h.ctx, tenant, &actor, &meta(), spa())
        .await
        .unwrap();
    assert_eq!(secret, None);
    assert_eq!(public.secret_hash, None);
    assert!(!public.is_confidential());

    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]});
    let input = ApplicationInput {
        name: "Backend".to_owned(),
        grant_types: vec!["client_credentials".to_owned()],
        token_endpoint_auth_method: "private_key_jwt".to_owned(),
        allowed_scopes: vec!["orders:read".to_owned()],
        api_audience: Some("https://api.acme.example".to_owned()),
        id_token_signed_response_alg: Some("ES256".to_owned()),
        jwks: Some(jwks.clone()),
        ..ApplicationInput::default()
    };
    let (pkjwt, secret) = apps::create(&h.ctx, tenant, &actor, &meta(), input)
        .await
        .unwrap();
    assert_eq!(secret, None);
    let stored = apps::get(&h.ctx, tenant, &pkjwt.id).await.unwrap();
    assert_eq!(stored.secret_hash, None);
    assert_eq!(stored.id_token_signed_response_alg, SigningAlg::Es256);
    let view = ApplicationView::from(&stored);
    assert_eq!(view.jwks, Some(jwks));
    assert_eq!(
        view.api_audience.as_deref(),
        Some("https://api.acme.example")
    );
}

#[tokio::test]
async fn invalid_registrations_write_nothing() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let cases = [
        (
            ApplicationInput {
                name: String::new(),
                ..web_app()
            },
            "name",
        ),
        (
            ApplicationInput {
                redirect_uris: vec![],
                ..web_app()
            },
            "redirect_uris",
        ),
        (
            ApplicationInput {
                grant_types: vec!["password".to_owned()],
                ..web_app()
            },
            "grant_types",
        ),
        (
            ApplicationInput {
                grant_types: vec!["client_credentials".to_owned()],
                ..spa()
            },
            "grant_types",
        ),
        (
            ApplicationInput {
                token_endpoint_auth_method: "private_key_jwt".to_owned(),
                ..web_app()
            },
            "jwks",
        ),
        (
            ApplicationInput {
                allowed_scopes: vec!["a b".to_owned()],
                ..web_app()
            },
            "allowed_scopes",
        ),
        (
            ApplicationInput {
                api_audience: Some("not a uri".to_owned()),
                ..web_app()
            },
            "api_audience",
        ),
        (
            ApplicationInput {
                id_token_signed_response_alg: Some("HS256".to_owned()),
                ..web_app()
            },
            "id_token_signed_response_alg",
        ),
        (
            ApplicationInput {
                minimum_acr: Some("urn:svc:aal3".to_owned()),
                ..web_app()
            },
            "minimum_acr",
        ),
    ];
    for (input, field) in cases {
        let err = apps::create(&h.ctx, tenant, &actor, &meta(), input)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field: f, .. } if f == field),
            "expected {field}: {err:?}"
        );
    }
    assert_eq!(
        h.applications(tenant).await.len(),
        1,
        "only the management app"
    );
    assert_eq!(h.audit(tenant).await.len(), 1, "only tenant.created");
}

#[tokio::test]
async fn an_unknown_tenant_has_no_applications_to_create() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let ghost = h.tenant("ghost").await.tenant.id;
    delete_tenant(&h.ctx, &operator(), &meta(), &ghost)
        .await
        .unwrap();
    let err = apps::create(&h.ctx, &ghost, &client_actor(&acme), &meta(), web_app())
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::NotFound), "{err:?}");
}

#[tokio::test]
async fn another_tenants_application_is_not_found_and_untouched() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let evil = h.tenant("evil").await;
    let (victim, _) = apps::create(
        &h.ctx,
        &acme.tenant.id,
        &client_actor(&acme),
        &meta(),
        web_app(),
    )
    .await
    .unwrap();
    let id = &victim.id;
    let (tenant, actor) = (&evil.tenant.id, client_actor(&evil));
    let audit_before = (
        h.audit(&acme.tenant.id).await.len(),
        h.audit(tenant).await.len(),
    );

    let not_found = |r: Result<(), ManageError>, what: &str| {
        assert!(matches!(r, Err(ManageError::NotFound)), "{what}: {r:?}");
    };
    not_found(apps::get(&h.ctx, tenant, id).await.map(drop), "get");
    let pwned = ApplicationInput {
        name: "pwned".to_owned(),
        ..web_app()
    };
    not_found(
        apps::update(&h.ctx, tenant, &actor, &meta(), id, pwned, &NONE)
            .await
            .map(drop),
        "update",
    );
    not_found(
        apps::delete(&h.ctx, tenant, &actor, &meta(), id, &NONE).await,
        "delete",
    );
    not_found(
        apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), id, &NONE)
            .await
            .map(drop),
        "rotate",
    );
    // The management application of another tenant is just as invisible.
    not_found(
        apps::delete(
            &h.ctx,
            tenant,
            &actor,
            &meta(),
            &acme.management_application.id,
            &NONE,
        )
        .await,
        "delete another tenant's management app",
    );

    assert_eq!(
        apps::get(&h.ctx, &acme.tenant.id, id).await.unwrap(),
        victim
    );
    assert_eq!(
        (
            h.audit(&acme.tenant.id).await.len(),
            h.audit(tenant).await.len()
        ),
        audit_before
    );
    let (theirs, _) = apps::list(&h.ctx, tenant, None, None, None).await.unwrap();
    assert!(theirs.iter().all(|a| a.tenant_id == *tenant));
}

#[tokio::test]
async fn the_management_application_cannot_be_deleted_or_stripped() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, id, actor) = (
        &acme.tenant.id,
        &acme.management_application.id,
        client_actor(&acme),
    );

    let err = apps::delete(&h.ctx, tenant, &actor, &meta(), id, &NONE)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Forbidden(m) if m.contains("cannot be deleted")),
        "{err:?}"
    );
    assert!(apps::get(&h.ctx, tenant, id).await.is_ok());

    let mgmt = &acme.management_application;
    let same = ApplicationInput {
        name: mgmt.name.clone(),
        grant_types: vec!["client_credentials".to_owned()],
        token_endpoint_auth_method: "client_secret_basic".to_owned(),
        allowed_scopes: mgmt.allowed_scopes.iter().map(|s| s.to_string()).collect(),
        ..ApplicationInput::default()
    };
    let stripped = ApplicationInput {
        allowed_scopes: vec!["audit:read".to_owned()],
        ..same.clone()
    };
    let err = apps::update(&h.ctx, tenant, &actor, &meta(), id, stripped, &NONE)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Forbidden(m) if m.starts_with("allowed_scopes")),
        "{err:?}"
    );
    assert_eq!(h.audit(tenant).await.len(), 1, "refusals write nothing");

    let renamed = ApplicationInput {
        name: "Ops robot".to_owned(),
        ..same
    };
    let (updated, secret) = apps::update(&h.ctx, tenant, &actor, &meta(), id, renamed, &NONE)
        .await
        .unwrap();
    assert_eq!(updated.name, "Ops robot");
    assert!(updated.is_management);
    assert_eq!(secret, None, "the secret is kept");
    let stored = apps::get(&h.ctx, tenant, id).await.unwrap();
    assert!(stored.secret_hash.unwrap().verify(&acme.client_secret));
}

#[tokio::test]
async fn update_replaces_the_configuration_and_the_secret_follows_the_method() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let (created, first_secret) = apps::create(&h.ctx, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    let id = &created.id;
    let first_secret = first_secret.unwrap();
    h.clock.advance(time::Duration::minutes(1));

    // Another secret-based method: the secret is kept; every other field is replaced.
    let changed = ApplicationInput {
        name: "Shop v2".to_owned(),
        redirect_uris: vec!["https://shop.example/cb2".to_owned()],
        token_endpoint_auth_method: "client_secret_post".to_owned(),
        first_party: true,
        require_pushed_authorization_requests: true,
        dpop_bound_access_tokens: true,
        ..web_app()
    };
    let (updated, secret) = apps::update(&h.ctx, tenant, &actor, &meta(), id, changed, &NONE)
        .await
        .unwrap();
    assert_eq!(secret, None);
    let stored = apps::get(&h.ctx, tenant, id).await.unwrap();
    assert_eq!(stored, updated);
    assert_eq!(stored.name, "Shop v2");
    assert_eq!(stored.redirect_uris[0].as_str(), "https://shop.example/cb2");
    assert_eq!(
        stored.token_endpoint_auth_method,
        TokenEndpointAuthMethod::ClientSecretPost
    );
    assert!(stored.first_party);
    assert!(stored.require_pushed_authorization_requests, "RFC 9126 §6");
    assert!(stored.dpop_bound_access_tokens, "RFC 9449 §5.2");
    assert_eq!(stored.created_at, created.created_at);
    assert!(stored.updated_at > created.updated_at);
    assert!(stored.secret_hash.as_ref().unwrap().verify(&first_secret));

    // To a public client: the secret is dropped.
    let (_, secret) = apps::update(&h.ctx, tenant, &actor, &meta(), id, spa(), &NONE)
        .await
        .unwrap();
    assert_eq!(secret, None);
    assert_eq!(
        apps::get(&h.ctx, tenant, id).await.unwrap().secret_hash,
        None
    );

    // Back to a secret: a new one, returned once.
    let (_, secret) = apps::update(&h.ctx, tenant, &actor, &meta(), id, web_app(), &NONE)
        .await
        .unwrap();
    let new_secret = secret.expect("a new secret");
    let hash = apps::get(&h.ctx, tenant, id)
        .await
        .unwrap()
        .secret_hash
        .unwrap();
    assert!(hash.verify(&new_secret) && !hash.verify(&first_secret));

    let actions: Vec<String> = h
        .audit(tenant)
        .await
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert_eq!(&actions[..3], [action::APPLICATION_UPDATED; 3]);
    assert_eq!(actions[3], action::APPLICATION_CREATED);
}

#[tokio::test]
async fn deleting_an_application_is_audited() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let (app, _) = apps::create(&h.ctx, tenant, &actor, &meta(), spa())
        .await
        .unwrap();
    apps::delete(&h.ctx, tenant, &actor, &meta(), &app.id, &NONE)
        .await
        .unwrap();
    assert!(matches!(
        apps::get(&h.ctx, tenant, &app.id).await,
        Err(ManageError::NotFound)
    ));
    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::APPLICATION_DELETED);
    assert_eq!(audit[0].target.as_deref(), Some(app.id.as_str()));
    assert!(matches!(
        apps::delete(&h.ctx, tenant, &actor, &meta(), &app.id, &NONE).await,
        Err(ManageError::NotFound)
    ));
}

#[tokio::test]
async fn rotating_a_secret_invalidates_the_old_one_at_once() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let (app, old) = apps::create(&h.ctx, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    let old = old.unwrap();

    let (_, new) = apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), &app.id, &NONE)
        .await
        .unwrap();
    assert!(new.starts_with("cs_"));
    assert_ne!(new, old);
    let hash = apps::get(&h.ctx, tenant, &app.id)
        .await
        .unwrap()
        .secret_hash
        .unwrap();
    assert!(hash.verify(&new), "the new secret works");
    assert!(!hash.verify(&old), "the old secret stopped working");
    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::APPLICATION_SECRET_ROTATED);
    assert_eq!(audit[0].target.as_deref(), Some(app.id.as_str()));

    // The management application's secret rotates too.
    let mgmt_id = &acme.management_application.id;
    let (_, mgmt_new) = apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), mgmt_id, &NONE)
        .await
        .unwrap();
    let hash = apps::get(&h.ctx, tenant, mgmt_id)
        .await
        .unwrap()
        .secret_hash
        .unwrap();
    assert!(hash.verify(&mgmt_new) && !hash.verify(&acme.client_secret));

    // Nothing to rotate without a secret-based method.
    let (public, _) = apps::create(&h.ctx, tenant, &actor, &meta(), spa())
        .await
        .unwrap();
    let before = h.audit(tenant).await.len();
    let err = apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), &public.id, &NONE)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Invalid { field, .. } if field == "token_endpoint_auth_method"),
        "{err:?}"
    );
    assert_eq!(h.audit(tenant).await.len(), before);
}

#[tokio::test]
async fn applications_are_listed_a_page_at_a_time() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    for _ in 0..4 {
        apps::create(&h.ctx, tenant, &actor, &meta(), spa())
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let (items, next) = apps::list(&h.ctx, tenant, cursor.as_ref(), None, Some(2))
            .await
            .unwrap();
        assert!(items.len() <= 2);
        seen.extend(items.into_iter().map(|a| a.id));
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 5, "four plus the management application");
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "ordered by id");
}

#[tokio::test]
async fn if_match_guards_update_delete_and_rotation() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let (app, _) = apps::create(&h.ctx, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    let id = &app.id;
    let read = Revision::of(app.updated_at);
    let audit_before = h.audit(tenant).await.len();

    // A changed resource refuses every write naming the old revision, and nothing is written.
    let (updated, _) = apps::update(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        id,
        web_app(),
        &Precondition::OneOf(vec![Some(read)]),
    )
    .await
    .unwrap();
    assert_ne!(Revision::of(updated.updated_at), read, "a new revision");
    let stale = Precondition::OneOf(vec![Some(read)]);
    let renamed = ApplicationInput {
        name: "Lost update".to_owned(),
        ..web_app()
    };
    let refused = [
        apps::update(&h.ctx, tenant, &actor, &meta(), id, renamed, &stale)
            .await
            .map(drop),
        apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), id, &stale)
            .await
            .map(drop),
        apps::delete(&h.ctx, tenant, &actor, &meta(), id, &stale).await,
        // A tag that is not ours matches nothing.
        apps::delete(
            &h.ctx,
            tenant,
            &actor,
            &meta(),
            id,
            &Precondition::OneOf(vec![None]),
        )
        .await,
    ];
    for result in refused {
        assert!(
            matches!(result, Err(ManageError::PreconditionFailed)),
            "{result:?}"
        );
    }
    assert_eq!(apps::get(&h.ctx, tenant, id).await.unwrap(), updated);
    assert_eq!(h.audit(tenant).await.len(), audit_before + 1);

    // The current revision (one of several listed) and `*` apply.
    let current = Precondition::OneOf(vec![Some(read), Some(Revision::of(updated.updated_at))]);
    let (rotated, secret) = apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), id, &current)
        .await
        .unwrap();
    assert!(rotated.secret_hash.as_ref().unwrap().verify(&secret));
    assert!(rotated.updated_at > updated.updated_at);
    assert_eq!(apps::get(&h.ctx, tenant, id).await.unwrap(), rotated);
    apps::delete(&h.ctx, tenant, &actor, &meta(), id, &Precondition::Exists)
        .await
        .unwrap();
    assert!(matches!(
        apps::delete(&h.ctx, tenant, &actor, &meta(), id, &Precondition::Exists).await,
        Err(ManageError::NotFound)
    ));
}

#[tokio::test]
async fn every_change_gets_a_new_revision_even_when_the_clock_goes_back() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let (app, _) = apps::create(&h.ctx, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    h.clock.advance(time::Duration::seconds(-30));
    let (updated, _) = apps::update(&h.ctx, tenant, &actor, &meta(), &app.id, web_app(), &NONE)
        .await
        .unwrap();
    assert!(updated.updated_at > app.updated_at);
    let (rotated, _) = apps::rotate_secret(&h.ctx, tenant, &actor, &meta(), &app.id, &NONE)
        .await
        .unwrap();
    assert!(rotated.updated_at > updated.updated_at);
    assert_eq!(apps::get(&h.ctx, tenant, &app.id).await.unwrap(), rotated);
}

#[tokio::test]
async fn a_minimum_acr_is_registered_changed_cleared_and_shown() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let demanding = ApplicationInput {
        minimum_acr: Some(ACR_AAL2.to_owned()),
        ..web_app()
    };
    let (created, _) = apps::create(&h.ctx, tenant, &actor, &meta(), demanding)
        .await
        .unwrap();
    assert_eq!(created.minimum_acr.as_deref(), Some(ACR_AAL2));
    let stored = apps::get(&h.ctx, tenant, &created.id).await.unwrap();
    assert_eq!(stored, created);
    let view = serde_json::to_value(ApplicationView::from(&stored)).unwrap();
    assert_eq!(view["minimum_acr"], "urn:svc:aal2");
    let id = &created.id;

    // An update names the level it wants; a new revision, so a new ETag.
    let lowered = ApplicationInput {
        minimum_acr: Some(ACR_AAL1.to_owned()),
        ..web_app()
    };
    let (updated, _) = apps::update(&h.ctx, tenant, &actor, &meta(), id, lowered, &NONE)
        .await
        .unwrap();
    assert_eq!(updated.minimum_acr.as_deref(), Some(ACR_AAL1));
    assert!(updated.updated_at > created.updated_at);
    assert_eq!(apps::get(&h.ctx, tenant, id).await.unwrap(), updated);
    let view = serde_json::to_value(ApplicationView::from(&updated)).unwrap();
    assert_eq!(view["minimum_acr"], "urn:svc:aal1");

    // A level this service does not issue is refused, naming the field; nothing changes.
    let audit_before = h.audit(tenant).await.len();
    for bad in ["urn:svc:aal3", "", "urn:svc:AAL2"] {
        let input = ApplicationInput {
            minimum_acr: Some(bad.to_owned()),
            ..web_app()
        };
        let err = apps::update(&h.ctx, tenant, &actor, &meta(), id, input, &NONE)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field, message } if field == "minimum_acr" && message.contains("urn:svc:aal1 or urn:svc:aal2")),
            "{bad:?}: {err:?}"
        );
    }
    assert_eq!(apps::get(&h.ctx, tenant, id).await.unwrap(), updated);
    assert_eq!(h.audit(tenant).await.len(), audit_before);

    // The update replaces the whole configuration: without the field, there is no minimum.
    let (cleared, _) = apps::update(&h.ctx, tenant, &actor, &meta(), id, web_app(), &NONE)
        .await
        .unwrap();
    assert_eq!(cleared.minimum_acr, None);
    assert_eq!(
        apps::get(&h.ctx, tenant, id).await.unwrap().minimum_acr,
        None
    );
    let view = serde_json::to_value(ApplicationView::from(&cleared)).unwrap();
    assert_eq!(view["minimum_acr"], serde_json::Value::Null);

    // Through JSON as a client sends it: the value, or null for none.
    let body = |acr: serde_json::Value| -> ApplicationInput {
        serde_json::from_value(json!({
            "name": "Bank",
            "redirect_uris": ["https://bank.example/cb"],
            "grant_types": ["authorization_code"],
            "token_endpoint_auth_method": "none",
            "minimum_acr": acr,
        }))
        .unwrap()
    };
    let (from_json, _) = apps::create(&h.ctx, tenant, &actor, &meta(), body(json!(ACR_AAL2)))
        .await
        .unwrap();
    assert_eq!(from_json.minimum_acr.as_deref(), Some(ACR_AAL2));
    let (nulled, _) = apps::update(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &from_json.id,
        body(serde_json::Value::Null),
        &NONE,
    )
    .await
    .unwrap();
    assert_eq!(nulled.minimum_acr, None);
}

#[tokio::test]
async fn bound_tokens_are_refused_where_the_deployment_checks_no_proofs() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    let without_dpop = h.ctx.clone().with_dpop(false);
    let strict = || ApplicationInput {
        dpop_bound_access_tokens: true,
        ..web_app()
    };
    let refused = apps::create(&without_dpop, tenant, &actor, &meta(), strict())
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ManageError::Invalid { field, message }
            if field == "dpop_bound_access_tokens" && message.contains("[dpop].enabled")),
        "{refused:?}"
    );
    // An update may not turn it on either, and a refused one changes nothing.
    let (created, _) = apps::create(&without_dpop, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    let refused = apps::update(
        &without_dpop,
        tenant,
        &actor,
        &meta(),
        &created.id,
        strict(),
        &NONE,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, ManageError::Invalid { .. }),
        "{refused:?}"
    );
    assert_eq!(
        apps::get(&h.ctx, tenant, &created.id).await.unwrap(),
        created
    );
    // With DPoP on, the same input is accepted.
    let (bound, _) = apps::create(&h.ctx, tenant, &actor, &meta(), strict())
        .await
        .unwrap();
    assert!(bound.dpop_bound_access_tokens);
}
