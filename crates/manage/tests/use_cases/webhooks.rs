//! Webhook subscription use cases: secrets shown once and the entropy rule, the catalog, limits,
//! updates, rotation, test deliveries and redelivery, tenant isolation, and atomicity with the
//! audit entry and the outbox event.

use crate::support::{client_actor, harness, meta};
use svc_domain::{DeliveryId, DeliveryStatus, EventType, TargetPolicy, WebhookId, WebhookSecret};
use svc_manage::audit::action;
use svc_manage::webhooks::{self, NewWebhook, RotateSecret, WebhookPatch, WebhookRules};
use svc_manage::{ManageError, Precondition, Revision};
use svc_store::{AttemptNext, DeliveryFilter, Store};
use time::Duration;

const RULES: WebhookRules = WebhookRules {
    targets: TargetPolicy {
        https_only: false,
        standard_port_only: false,
        public_only: false,
    },
    max_per_tenant: 3,
};

fn new(url: &str, types: &[&str]) -> NewWebhook {
    NewWebhook {
        url: url.to_owned(),
        event_types: types.iter().map(|t| (*t).to_owned()).collect(),
        secret: None,
        description: Some("billing team".into()),
        active: None,
    }
}

/// The types of the events in the outbox that the relay has not fanned out yet.
async fn outbox(store: &dyn Store) -> Vec<EventType> {
    let mut tx = store.write().await.unwrap();
    let events = tx.unrelayed_events(1000).await.unwrap();
    tx.commit().await.unwrap();
    events.into_iter().map(|e| e.event_type).collect()
}

#[tokio::test]
async fn a_generated_secret_is_shown_once_and_a_supplied_one_needs_32_bytes_of_entropy() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);

    let created = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new(
            "https://hooks.example.com/a",
            &["auth.login.success", "tenant_user.invited"],
        ),
    )
    .await
    .unwrap();
    let secret = created.secret.clone().expect("generated");
    assert!(secret.starts_with("whsec_"));
    assert_eq!(
        created.webhook.event_types,
        vec!["auth.login.success", "tenant_user.invited"]
    );
    assert!(created.webhook.active);
    let id = WebhookId::parse(&created.webhook.id).unwrap();
    let read = webhooks::get(&h.ctx, tenant, &id).await.unwrap();
    assert_eq!(read, created.webhook);
    let json = serde_json::to_value(&read).unwrap();
    assert!(
        !json.to_string().contains(&secret),
        "a read never shows the secret"
    );
    assert!(json.get("secret").is_none());
    assert!(
        serde_json::to_value(&created)
            .unwrap()
            .get("secret")
            .is_some()
    );

    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::WEBHOOK_CREATED);
    assert_eq!(
        audit[0].target.as_deref(),
        Some(created.webhook.id.as_str())
    );
    assert!(
        outbox(h.store.as_ref())
            .await
            .contains(&EventType::AdminWebhookCreated)
    );

    // A 20-byte secret is refused with the reason.
    let mut weak = new("https://hooks.example.com/b", &["auth.logout"]);
    weak.secret = Some("8a3f0c2e9b7d4e1f6a5c8b3d2e1f0a9b8c7d6e5f".into());
    let err = webhooks::create(&h.ctx, &RULES, tenant, &actor, &meta(), weak)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, ManageError::Invalid { ref field, .. } if field == "secret"),
        "{text}"
    );
    assert!(
        text.contains("256 are required (32 random bytes)"),
        "{text}"
    );

    // A strong supplied secret is accepted and not echoed.
    let mut strong = new("https://hooks.example.com/c", &["auth.logout"]);
    strong.secret = Some(
        WebhookSecret::generate(&svc_domain::OsRandom)
            .expose()
            .to_owned(),
    );
    let created = webhooks::create(&h.ctx, &RULES, tenant, &actor, &meta(), strong)
        .await
        .unwrap();
    assert_eq!(created.secret, None);
}

#[tokio::test]
async fn unknown_event_types_bad_urls_and_the_limit_are_refused_and_nothing_is_written() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let before = h.audit(tenant).await.len();

    let err = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://x.example/h", &["auth.login.sucess"]),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "event type \"auth.login.sucess\" is unknown; valid types are: auth.login.success"
        ),
        "{err}"
    );
    let err = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://x.example/h", &["wallet.tx.signed"]),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("event type \"wallet.tx.signed\" is not recorded by this version"),
        "{err}"
    );
    let production = WebhookRules {
        targets: TargetPolicy {
            https_only: true,
            standard_port_only: true,
            public_only: true,
        },
        ..RULES
    };
    for (url, why) in [
        ("http://hooks.example.com/h", "url must use https"),
        ("https://hooks.example.com:8443/h", "port 443"),
        ("https://169.254.169.254/latest", "internal address"),
        ("https://[::ffff:127.0.0.1]/", "internal address"),
        (
            "https://user:pw@hooks.example.com/",
            "user name or password",
        ),
    ] {
        let err = webhooks::create(
            &h.ctx,
            &production,
            tenant,
            &actor,
            &meta(),
            new(url, &["auth.logout"]),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("url: ") && err.contains(why),
            "{url}: {err}"
        );
    }
    assert_eq!(
        h.audit(tenant).await.len(),
        before,
        "refusals write nothing"
    );

    for n in 0..3 {
        webhooks::create(
            &h.ctx,
            &RULES,
            tenant,
            &actor,
            &meta(),
            new(&format!("https://h{n}.example/h"), &["auth.logout"]),
        )
        .await
        .unwrap();
    }
    let err = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h4.example/h", &["auth.logout"]),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ManageError::Conflict(ref m) if m.contains("already has 3")),
        "{err}"
    );
}

#[tokio::test]
async fn a_failed_outbox_write_rolls_back_the_subscription_and_its_audit_entry() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let before = h.audit(tenant).await.len();
    h.store.fail_on(Some("insert_event"));
    let err = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h.example/h", &["auth.logout"]),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::Unavailable(_)), "{err:?}");
    h.store.fail_on(None);
    assert!(
        webhooks::list(&h.ctx, tenant, None, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    assert_eq!(h.audit(tenant).await.len(), before);
}

#[tokio::test]
async fn updates_change_only_what_is_sent_and_reactivation_clears_a_410() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let created = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h.example/h", &["auth.logout"]),
    )
    .await
    .unwrap();
    let id = WebhookId::parse(&created.webhook.id).unwrap();

    let patch = WebhookPatch {
        event_types: Some(vec!["auth.login.failure".into()]),
        ..WebhookPatch::default()
    };
    let updated = webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        patch,
        &Precondition::None,
    )
    .await
    .unwrap();
    assert_eq!(updated.event_types, vec!["auth.login.failure"]);
    assert_eq!(updated.url, "https://h.example/h");
    assert_eq!(updated.description.as_deref(), Some("billing team"));
    let cleared = WebhookPatch {
        description: Some(None),
        active: Some(false),
        ..WebhookPatch::default()
    };
    let updated = webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        cleared,
        &Precondition::None,
    )
    .await
    .unwrap();
    assert_eq!(updated.description, None);
    assert!(!updated.active);
    let err = webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        WebhookPatch::default(),
        &Precondition::None,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("send at least one of"), "{err}");

    // A 410 switched it off; switching it on again forgets why.
    let mut tx = h.store.write().await.unwrap();
    let mut stored = tx.webhook(tenant, &id).await.unwrap().unwrap();
    stored.disabled_reason = Some("the receiver answered 410 Gone".into());
    let read_at = stored.updated_at;
    assert!(tx.update_webhook(&stored, read_at).await.unwrap());
    tx.commit().await.unwrap();
    assert!(
        webhooks::get(&h.ctx, tenant, &id)
            .await
            .unwrap()
            .disabled_reason
            .is_some()
    );
    let on = WebhookPatch {
        active: Some(true),
        ..WebhookPatch::default()
    };
    let updated = webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        on,
        &Precondition::None,
    )
    .await
    .unwrap();
    assert!(updated.active);
    assert_eq!(updated.disabled_reason, None);

    let audit = h.audit(tenant).await;
    assert_eq!(
        audit
            .iter()
            .filter(|e| e.action == action::WEBHOOK_UPDATED)
            .count(),
        3
    );
    assert_eq!(
        outbox(h.store.as_ref())
            .await
            .iter()
            .filter(|t| **t == EventType::AdminWebhookUpdated)
            .count(),
        3
    );
}

#[tokio::test]
async fn another_tenants_subscription_and_deliveries_are_not_found() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let other = h.tenant("other").await;
    let actor = client_actor(&acme);
    let created = webhooks::create(
        &h.ctx,
        &RULES,
        &acme.tenant.id,
        &actor,
        &meta(),
        new("https://h.example/h", &["auth.logout"]),
    )
    .await
    .unwrap();
    let id = WebhookId::parse(&created.webhook.id).unwrap();
    let theirs = &other.tenant.id;
    let intruder = client_actor(&other);
    assert!(matches!(
        webhooks::get(&h.ctx, theirs, &id).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        webhooks::update(
            &h.ctx,
            &RULES,
            theirs,
            &intruder,
            &meta(),
            &id,
            WebhookPatch {
                active: Some(false),
                ..WebhookPatch::default()
            },
            &Precondition::None
        )
        .await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        webhooks::delete(&h.ctx, theirs, &intruder, &meta(), &id, &Precondition::None).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        webhooks::send_test(&h.ctx, theirs, &intruder, &meta(), &id).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        webhooks::list_deliveries(
            &h.ctx,
            theirs,
            &id,
            &DeliveryFilter::default(),
            None,
            None,
            None
        )
        .await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        webhooks::rotate_secret(
            &h.ctx,
            theirs,
            &intruder,
            &meta(),
            &id,
            RotateSecret::default(),
            &Precondition::None
        )
        .await,
        Err(ManageError::NotFound)
    ));
    assert!(
        webhooks::list(&h.ctx, theirs, None, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    assert!(
        webhooks::get(&h.ctx, &acme.tenant.id, &id)
            .await
            .unwrap()
            .active,
        "untouched"
    );
}

#[tokio::test]
async fn rotation_keeps_the_old_secret_signing_for_the_overlap() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let created = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h.example/h", &["auth.logout"]),
    )
    .await
    .unwrap();
    let id = WebhookId::parse(&created.webhook.id).unwrap();
    let first = created.secret.unwrap();

    let rotated = webhooks::rotate_secret(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &id,
        RotateSecret {
            secret: None,
            overlap_secs: Some(3600),
        },
        &Precondition::None,
    )
    .await
    .unwrap();
    let second = rotated.secret.clone().unwrap();
    assert_ne!(first, second);
    let until = rotated.webhook.previous_secret_expires_at.unwrap();
    let mut tx = h.store.read().await.unwrap();
    let stored = tx.webhook(tenant, &id).await.unwrap().unwrap();
    tx.finish().await.unwrap();
    assert_eq!(stored.secret.expose(), second);
    let secrets: Vec<&str> = stored
        .signing_secrets(until - Duration::seconds(1))
        .iter()
        .map(|s| s.expose())
        .collect();
    assert_eq!(secrets, vec![second.as_str(), first.as_str()]);
    assert_eq!(stored.signing_secrets(until).len(), 1);

    let immediate = webhooks::rotate_secret(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &id,
        RotateSecret {
            secret: None,
            overlap_secs: Some(0),
        },
        &Precondition::None,
    )
    .await
    .unwrap();
    assert_eq!(immediate.webhook.previous_secret_expires_at, None);
    let err = webhooks::rotate_secret(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &id,
        RotateSecret {
            secret: Some("short".into()),
            overlap_secs: None,
        },
        &Precondition::None,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().starts_with("secret: "), "{err}");
    assert_eq!(
        h.audit(tenant)
            .await
            .iter()
            .filter(|e| e.action == action::WEBHOOK_SECRET_ROTATED)
            .count(),
        2
    );
}

#[tokio::test]
async fn test_deliveries_and_redeliveries_are_queued_for_active_subscriptions_only() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let created = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h.example/h", &["auth.logout"]),
    )
    .await
    .unwrap();
    let id = WebhookId::parse(&created.webhook.id).unwrap();

    let test = webhooks::send_test(&h.ctx, tenant, &actor, &meta(), &id)
        .await
        .unwrap();
    assert_eq!(test.event_type, "webhook.test");
    assert_eq!(test.status, "pending");
    assert_eq!(test.attempts, 0);
    assert!(test.next_attempt_at.is_some());
    let delivery_id = DeliveryId::parse(&test.id).unwrap();
    let (history, next) = webhooks::list_deliveries(
        &h.ctx,
        tenant,
        &id,
        &DeliveryFilter::default(),
        None,
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(next, None);
    assert_eq!(history[0].id, test.id);

    // Not final yet: no redelivery.
    let err = webhooks::redeliver(&h.ctx, tenant, &actor, &meta(), &id, &delivery_id)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ManageError::Conflict(ref m) if m.contains("still pending")),
        "{err}"
    );

    // A worker sends it and it is exhausted (a receiver that always failed).
    let now = crate::support::start_time() + Duration::days(1);
    let mut tx = h.store.write().await.unwrap();
    let claimed = tx
        .claim_deliveries(
            "w",
            now + Duration::days(365 * 10),
            now + Duration::days(3651),
            10,
        )
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert!(claimed[0].body.contains("\"type\":\"webhook.test\""));
    assert!(
        claimed[0].body.contains(&test.id),
        "the test event names its delivery"
    );
    let attempt = svc_domain::DeliveryAttempt {
        number: 1,
        started_at: now,
        duration_ms: 3,
        status_code: Some(500),
        error: Some("receiver answered 500".into()),
    };
    tx.finish_attempt(
        tenant,
        &delivery_id,
        "w",
        &attempt,
        AttemptNext::Exhausted,
        now,
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let again = webhooks::redeliver(&h.ctx, tenant, &actor, &meta(), &id, &delivery_id)
        .await
        .unwrap();
    assert_ne!(again.id, test.id);
    assert_eq!(again.redelivery_of.as_deref(), Some(test.id.as_str()));
    assert_eq!(again.event_id, test.event_id, "the same event");
    let one = webhooks::delivery(&h.ctx, tenant, &id, &delivery_id)
        .await
        .unwrap();
    assert_eq!(one.status, "exhausted");
    assert_eq!(one.history.len(), 1);
    assert_eq!(one.history[0].status_code, Some(500));
    let (exhausted, _) = webhooks::list_deliveries(
        &h.ctx,
        tenant,
        &id,
        &DeliveryFilter {
            status: Some(DeliveryStatus::Exhausted),
        },
        None,
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(exhausted.len(), 1);

    // Switched off: neither a test nor a redelivery is queued.
    let off = WebhookPatch {
        active: Some(false),
        ..WebhookPatch::default()
    };
    webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        off,
        &Precondition::None,
    )
    .await
    .unwrap();
    assert!(matches!(
        webhooks::send_test(&h.ctx, tenant, &actor, &meta(), &id).await,
        Err(ManageError::Conflict(_))
    ));
    assert!(matches!(
        webhooks::redeliver(&h.ctx, tenant, &actor, &meta(), &id, &delivery_id).await,
        Err(ManageError::Conflict(_))
    ));

    // Deleting the subscription takes its history with it.
    webhooks::delete(&h.ctx, tenant, &actor, &meta(), &id, &Precondition::None)
        .await
        .unwrap();
    assert!(matches!(
        webhooks::delivery(&h.ctx, tenant, &id, &delivery_id).await,
        Err(ManageError::NotFound)
    ));
    let actions: Vec<_> = h
        .audit(tenant)
        .await
        .into_iter()
        .map(|e| e.action)
        .collect();
    for expected in [
        action::WEBHOOK_TEST_SENT,
        action::WEBHOOK_REDELIVERED,
        action::WEBHOOK_DELETED,
    ] {
        assert!(actions.iter().any(|a| a == expected), "{expected}");
    }
}

#[test]
fn the_catalog_lists_only_the_types_this_version_records() {
    let catalog = webhooks::event_catalog();
    let listed: Vec<&str> = catalog.iter().map(|e| e.event_type).collect();
    let emitted: Vec<&str> = EventType::ALL
        .iter()
        .filter(|t| t.is_emitted())
        .map(|t| t.as_str())
        .collect();
    assert_eq!(listed, emitted);
    assert!(listed.contains(&"auth.login.success"));
    assert!(!listed.contains(&"wallet.tx.signed"));
    assert!(catalog.iter().all(|e| !e.description.is_empty()));
}

#[tokio::test]
async fn application_changes_are_recorded_as_admin_events_with_their_actor() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let (app, _) = svc_manage::applications::create(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        crate::support::web_app(),
    )
    .await
    .unwrap();
    svc_manage::applications::update(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &app.id,
        crate::support::web_app(),
        &svc_manage::Precondition::None,
    )
    .await
    .unwrap();
    let none = svc_manage::Precondition::None;
    svc_manage::applications::rotate_secret(&h.ctx, tenant, &actor, &meta(), &app.id, &none)
        .await
        .unwrap();
    svc_manage::applications::delete(&h.ctx, tenant, &actor, &meta(), &app.id, &none)
        .await
        .unwrap();
    let mut tx = h.store.write().await.unwrap();
    let events: Vec<EventType> = tx
        .unrelayed_events(100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .filter(|t| t.as_str().starts_with("admin.application."))
        .collect();
    tx.commit().await.unwrap();
    assert_eq!(
        events,
        vec![
            EventType::AdminApplicationCreated,
            EventType::AdminApplicationUpdated,
            EventType::AdminApplicationSecretRotated,
            EventType::AdminApplicationDeleted,
        ]
    );
    // The payload names the application and who acted.
    let webhook = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h.example/h", &["admin.application.created"]),
    )
    .await
    .unwrap();
    let id = WebhookId::parse(&webhook.webhook.id).unwrap();
    let relayed_before = svc_manage::applications::create(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        crate::support::web_app(),
    )
    .await
    .unwrap()
    .0;
    let relay = svc_webhooks::Relay::new(
        h.store.clone(),
        h.clock.clone(),
        std::sync::Arc::new(svc_domain::OsRandom),
        1000,
        std::time::Duration::from_secs(1),
        std::sync::Arc::new(tokio::sync::Notify::new()),
    );
    let (_, deliveries) = relay.relay_once().await.unwrap();
    assert_eq!(
        deliveries, 1,
        "only the creation after the subscription existed"
    );
    let (list, _) = webhooks::list_deliveries(
        &h.ctx,
        tenant,
        &id,
        &DeliveryFilter::default(),
        None,
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(list.len(), 1);
    let now = crate::support::start_time() + Duration::days(1);
    let mut tx = h.store.write().await.unwrap();
    let claimed = tx
        .claim_deliveries("w", now, now + Duration::minutes(1), 10)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let body: serde_json::Value = serde_json::from_str(&claimed[0].body).unwrap();
    assert_eq!(body["type"], "admin.application.created");
    assert_eq!(body["data"]["client_id"], relayed_before.id.as_str());
    assert_eq!(
        body["data"]["actor"],
        format!("client:{}", acme.management_application.id)
    );
}

#[tokio::test]
async fn updates_deletes_and_rotations_honour_if_match_and_a_stale_revision_changes_nothing() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let created = webhooks::create(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        new("https://h.example/h", &["auth.logout"]),
    )
    .await
    .unwrap();
    let id = WebhookId::parse(&created.webhook.id).unwrap();
    let first = Revision::of(created.webhook.updated_at);
    let at = |rev: Revision| Precondition::OneOf(vec![Some(rev)]);
    let off = || WebhookPatch {
        active: Some(false),
        ..WebhookPatch::default()
    };

    let updated = webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        off(),
        &at(first),
    )
    .await
    .unwrap();
    let second = Revision::of(updated.updated_at);
    assert_ne!(first, second, "every change is a new revision");
    let audited = h.audit(tenant).await.len();
    let announced = outbox(h.store.as_ref()).await.len();

    // The revision read before the update is stale now: nothing changes, nothing is recorded.
    let stale = webhooks::update(
        &h.ctx,
        &RULES,
        tenant,
        &actor,
        &meta(),
        &id,
        WebhookPatch {
            description: Some(Some("late".into())),
            ..WebhookPatch::default()
        },
        &at(first),
    )
    .await;
    assert!(
        matches!(stale, Err(ManageError::PreconditionFailed)),
        "{stale:?}"
    );
    let rotated = webhooks::rotate_secret(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &id,
        RotateSecret::default(),
        &at(first),
    )
    .await;
    assert!(matches!(rotated, Err(ManageError::PreconditionFailed)));
    let deleted = webhooks::delete(&h.ctx, tenant, &actor, &meta(), &id, &at(first)).await;
    assert!(matches!(deleted, Err(ManageError::PreconditionFailed)));
    let foreign = Precondition::OneOf(vec![None]);
    let refused = webhooks::delete(&h.ctx, tenant, &actor, &meta(), &id, &foreign).await;
    assert!(
        matches!(refused, Err(ManageError::PreconditionFailed)),
        "a tag that is not ours matches nothing"
    );
    assert_eq!(webhooks::get(&h.ctx, tenant, &id).await.unwrap(), updated);
    let mut tx = h.store.read().await.unwrap();
    let stored = tx.webhook(tenant, &id).await.unwrap().unwrap();
    tx.finish().await.unwrap();
    assert_eq!(
        stored.secret.expose(),
        created.secret.as_deref().unwrap(),
        "not rotated"
    );
    assert_eq!(h.audit(tenant).await.len(), audited);
    assert_eq!(outbox(h.store.as_ref()).await.len(), announced);

    // Even with the clock set back, a change moves the revision forward.
    h.clock.advance(Duration::hours(-1));
    let rotated = webhooks::rotate_secret(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &id,
        RotateSecret::default(),
        &Precondition::OneOf(vec![None, Some(second)]),
    )
    .await
    .unwrap();
    assert!(rotated.webhook.updated_at > updated.updated_at);
    webhooks::delete(&h.ctx, tenant, &actor, &meta(), &id, &Precondition::Exists)
        .await
        .unwrap();
    assert!(matches!(
        webhooks::delete(&h.ctx, tenant, &actor, &meta(), &id, &Precondition::Exists).await,
        Err(ManageError::NotFound)
    ));
}
