//! The audit log: listing, filters, cursors, and tenant isolation.

use crate::support::{client_actor, harness, meta, spa};
use svc_manage::applications as apps;
use svc_manage::audit::{action, list_audit};
use svc_store::AuditFilter;

#[tokio::test]
async fn the_audit_log_lists_newest_first_with_filters_and_a_cursor() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (tenant, actor) = (&acme.tenant.id, client_actor(&acme));
    for _ in 0..3 {
        h.clock.advance(time::Duration::seconds(1));
        apps::create(&h.ctx, tenant, &actor, &meta(), spa())
            .await
            .unwrap();
    }

    let all = h.audit(tenant).await;
    assert_eq!(all.len(), 4);
    assert!(all.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    assert_eq!(all[3].action, action::TENANT_CREATED);

    let first = list_audit(&h.ctx, tenant, &AuditFilter::default(), None, None, Some(3))
        .await
        .unwrap();
    assert_eq!(first.0, all[..3]);
    assert_eq!(first.1.as_ref(), Some(&all[2].id));
    let rest = list_audit(
        &h.ctx,
        tenant,
        &AuditFilter::default(),
        first.1.as_ref(),
        None,
        Some(3),
    )
    .await
    .unwrap();
    assert_eq!(rest.0, all[3..]);
    assert_eq!(rest.1, None);

    let created = AuditFilter {
        action: Some(action::APPLICATION_CREATED.to_owned()),
        ..AuditFilter::default()
    };
    let page = list_audit(&h.ctx, tenant, &created, None, None, None)
        .await
        .unwrap();
    assert_eq!(page.0.len(), 3);
    assert!(page.0.iter().all(|e| e.actor == actor.as_audit_string()));

    let by_operator = AuditFilter {
        actor: Some(crate::support::operator().as_audit_string()),
        ..AuditFilter::default()
    };
    let page = list_audit(&h.ctx, tenant, &by_operator, None, None, None)
        .await
        .unwrap();
    assert_eq!(page.0.len(), 1);
    assert_eq!(page.0[0].action, action::TENANT_CREATED);

    assert_eq!(
        list_audit(&h.ctx, tenant, &AuditFilter::default(), None, None, Some(0))
            .await
            .unwrap()
            .0
            .len(),
        1,
        "limit clamps to at least 1"
    );
}

#[tokio::test]
async fn a_tenant_sees_only_its_own_audit_entries() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let other = h.tenant("other").await;
    apps::create(
        &h.ctx,
        &acme.tenant.id,
        &client_actor(&acme),
        &meta(),
        spa(),
    )
    .await
    .unwrap();
    let theirs = h.audit(&other.tenant.id).await;
    assert_eq!(theirs.len(), 1);
    assert!(
        theirs
            .iter()
            .all(|e| e.tenant_id.as_ref() == Some(&other.tenant.id))
    );
    assert_eq!(h.audit(&acme.tenant.id).await.len(), 2);
}
