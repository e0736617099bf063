//! Client ID metadata documents as the management side sees them (`registration::adopt`): a
//! document becomes an application only in a tenant that accepts documents, once; a refresh of
//! an unchanged document moves its freshness and writes no audit entry, a changed one is audited
//! as the client's own update; a refused document writes nothing; the management API leaves
//! such an application alone; and only a deployment that accepts documents lets a tenant turn
//! them on.

use crate::support::{client_actor, harness, meta};
use serde_json::json;
use svc_domain::ClientIdUrl;
use svc_manage::registration::{self, RegistrationPolicyInput};
use svc_manage::{ManageError, Precondition, applications};
use time::Duration;

const URL: &str = "https://client.example/oauth/client.json";

fn url() -> ClientIdUrl {
    ClientIdUrl::parse(URL, false).unwrap()
}

fn document(name: &str) -> Vec<u8> {
    json!({
        "client_id": URL,
        "client_name": name,
        "redirect_uris": ["https://client.example/cb"],
        "scope": "openid",
    })
    .to_string()
    .into_bytes()
}

fn accept(on: bool) -> RegistrationPolicyInput {
    RegistrationPolicyInput {
        policy: "disabled".into(),
        client_id_metadata_documents: Some(on),
        software_statement_issuers: None,
    }
}

#[tokio::test]
async fn a_document_becomes_one_application_refreshed_in_place_and_audited_only_when_changed() {
    let mut h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let admin = client_actor(&acme);
    let fresh = |h: &crate::support::Harness| h.ctx.clock.now() + Duration::minutes(5);

    // Neither the deployment nor the tenant accepts documents yet.
    let refused = registration::set_policy(&h.ctx, tenant, &admin, &meta(), accept(true)).await;
    assert!(
        matches!(&refused, Err(ManageError::Invalid { field, .. }) if field == "client_id_metadata_documents"),
        "{refused:?}"
    );
    h.ctx = h.ctx.clone().with_metadata_documents(true);
    let until = fresh(&h);
    let none = registration::adopt(&h.ctx, tenant, &url(), &document("Docs"), until)
        .await
        .unwrap();
    assert!(none.is_none(), "the tenant has not turned documents on");
    assert!(
        h.applications(tenant)
            .await
            .iter()
            .all(|a| a.metadata_document.is_none())
    );

    let view = registration::set_policy(&h.ctx, tenant, &admin, &meta(), accept(true))
        .await
        .unwrap();
    assert!(view.client_id_metadata_documents);
    let audited = h.audit(tenant).await.len();
    let until = fresh(&h);
    let first = registration::adopt(&h.ctx, tenant, &url(), &document("Docs"), until)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.wire_client_id(), URL);
    assert_eq!(first.metadata_document.as_ref().unwrap().fresh_until, until);
    assert!(!first.first_party);
    let audit = h.audit(tenant).await;
    assert_eq!(audit.len(), audited + 1);
    assert_eq!(audit[0].action, "application.created");
    assert_eq!(audit[0].actor, format!("client:{}", first.id));

    // The same document again: the same application, later freshness, no audit entry.
    h.clock.advance(Duration::minutes(10));
    let until = fresh(&h);
    let again = registration::adopt(&h.ctx, tenant, &url(), &document("Docs"), until)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.id, first.id);
    assert_eq!(again.created_at, first.created_at);
    assert_eq!(again.metadata_document.as_ref().unwrap().fresh_until, until);
    assert_eq!(h.audit(tenant).await.len(), audited + 1, "nothing changed");

    // A changed document: audited as the client's own update.
    let until = fresh(&h);
    let renamed = registration::adopt(&h.ctx, tenant, &url(), &document("Docs 2"), until)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (renamed.id.clone(), renamed.name.as_str()),
        (first.id.clone(), "Docs 2")
    );
    let audit = h.audit(tenant).await;
    assert_eq!(audit.len(), audited + 2);
    assert_eq!(audit[0].action, "application.updated");

    // A refused document changes nothing.
    let bad = json!({"client_id": URL, "redirect_uris": ["https://client.example/cb"],
                     "client_secret": "x"})
    .to_string();
    let refused = registration::adopt(&h.ctx, tenant, &url(), bad.as_bytes(), fresh(&h)).await;
    assert!(
        matches!(&refused, Err(ManageError::Invalid { field, .. }) if field == "client_secret"),
        "{refused:?}"
    );
    let stored: Vec<_> = h
        .applications(tenant)
        .await
        .into_iter()
        .filter(|a| a.metadata_document.is_some())
        .collect();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].name, "Docs 2");

    // The management API leaves it alone; deleting it is allowed.
    let input = applications::ApplicationInput {
        name: "Renamed by an admin".into(),
        ..crate::support::spa()
    };
    let changed = applications::update(
        &h.ctx,
        tenant,
        &admin,
        &meta(),
        &first.id,
        input,
        &Precondition::None,
    )
    .await;
    assert!(
        matches!(changed, Err(ManageError::Forbidden(_))),
        "{changed:?}"
    );
    applications::delete(
        &h.ctx,
        tenant,
        &admin,
        &meta(),
        &first.id,
        &Precondition::None,
    )
    .await
    .unwrap();

    // Turned off in the tenant: no application from a document any more.
    registration::set_policy(&h.ctx, tenant, &admin, &meta(), accept(false))
        .await
        .unwrap();
    let none = registration::adopt(&h.ctx, tenant, &url(), &document("Docs"), fresh(&h))
        .await
        .unwrap();
    assert!(none.is_none());
}
