//! Committed changes are told to the process's caches (the change hook), and refused ones are not.

use crate::support::{client_actor, harness, meta, operator, web_app};
use std::sync::{Arc, Mutex};
use svc_domain::{ApiKeyId, ClientId, TenantId};
use svc_manage::{ChangeHook, applications, control_plane};

#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl ChangeHook for Recorder {
    fn application_changed(&self, tenant: &TenantId, id: &ClientId) {
        self.0.lock().unwrap().push(format!("app {tenant} {id}"));
    }
    fn tenant_changed(&self, tenant: &TenantId) {
        self.0.lock().unwrap().push(format!("tenant {tenant}"));
    }
    fn api_key_changed(&self, tenant: &TenantId, id: &ApiKeyId) {
        self.0.lock().unwrap().push(format!("key {tenant} {id}"));
    }
}

#[tokio::test]
async fn application_and_tenant_changes_reach_the_hook_after_commit() {
    let mut h = harness().await;
    let recorder = Arc::new(Recorder::default());
    h.ctx = h.ctx.clone().with_change_hook(recorder.clone());
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let (app, _) = applications::create(&h.ctx, tenant, &actor, &meta(), web_app())
        .await
        .unwrap();
    assert!(
        recorder.0.lock().unwrap().is_empty(),
        "a new application has nothing cached"
    );
    let none = svc_manage::Precondition::None;
    applications::update(&h.ctx, tenant, &actor, &meta(), &app.id, web_app(), &none)
        .await
        .unwrap();
    applications::rotate_secret(&h.ctx, tenant, &actor, &meta(), &app.id, &none)
        .await
        .unwrap();
    // A refused change (the management application cannot be deleted) tells nothing.
    let refused = applications::delete(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &acme.management_application.id,
        &none,
    )
    .await;
    assert!(refused.is_err());
    applications::delete(&h.ctx, tenant, &actor, &meta(), &app.id, &none)
        .await
        .unwrap();
    control_plane::suspend_tenant(&h.ctx, &operator(), &meta(), tenant)
        .await
        .unwrap();
    let expected = vec![
        format!("app {tenant} {}", app.id),
        format!("app {tenant} {}", app.id),
        format!("app {tenant} {}", app.id),
        format!("tenant {tenant}"),
    ];
    assert_eq!(*recorder.0.lock().unwrap(), expected);
}
