//! Conformance: each tenant's registration policy reads `disabled` until set and is set per
//! tenant; a registration access token belongs to one application of one tenant, is stored once,
//! and goes with its application; initial access tokens spend their uses atomically until they
//! expire.

use super::applications::application_fixture;
use super::grants::stored_tenant;
use crate::{Store, StoreError};
use std::sync::Arc;
use svc_domain::{RegistrationPolicy, SecretHash, StatementIssuer};

/// A tenant's software statement issuers: none until set, replaced as a whole (in issuer
/// order), per tenant, independent of the policy; an issuer listed twice or an unknown tenant
/// names its constraint and, in the transaction, leaves the list as it was only if rolled back;
/// the rows go with their tenant.
pub async fn statement_issuers_are_per_tenant_and_replaced_whole(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let issuer = |name: &str| StatementIssuer {
        issuer: format!("https://{name}.example"),
        jwks: format!(r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{name}"}}]}}"#),
    };
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.statement_issuers(&acme.id)
            .await
            .expect("unset")
            .is_empty()
    );
    tx.set_statement_issuers(
        &acme.id,
        &[issuer("zeta"), issuer("alpha")],
        acme.created_at,
    )
    .await
    .expect("set");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.statement_issuers(&acme.id).await.expect("read"),
        [issuer("alpha"), issuer("zeta")]
    );
    assert!(
        read.statement_issuers(&other.id)
            .await
            .expect("read")
            .is_empty()
    );
    assert_eq!(
        read.registration_policy(&acme.id).await.expect("policy"),
        RegistrationPolicy::Disabled,
        "trusting an issuer opens no registration"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.set_statement_issuers(&acme.id, &[issuer("beta")], acme.created_at)
        .await
        .expect("replace");
    tx.commit().await.expect("commit");
    let mut tx = store.write().await.expect("write");
    match tx
        .set_statement_issuers(
            &acme.id,
            &[issuer("gamma"), issuer("gamma")],
            acme.created_at,
        )
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "software_statement_issuers_pkey");
        }
        other => panic!("expected the primary key, got {other:?}"),
    }
    drop(tx);
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.statement_issuers(&acme.id).await.expect("read"),
        [issuer("beta")],
        "the refused replacement was rolled back"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.set_statement_issuers(&acme.id, &[], acme.created_at)
        .await
        .expect("clear");
    tx.set_statement_issuers(&other.id, &[issuer("omega")], other.created_at)
        .await
        .expect("other");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.statement_issuers(&acme.id)
            .await
            .expect("read")
            .is_empty()
    );
    read.finish().await.expect("finish");

    let gone = super::tenant_fixture("gone", 3);
    let mut tx = store.write().await.expect("write");
    match tx
        .set_statement_issuers(&gone.id, &[issuer("alpha")], gone.created_at)
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "software_statement_issuers_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
    drop(tx);
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&other.id).await.expect("delete");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.statement_issuers(&other.id)
            .await
            .expect("read")
            .is_empty()
    );
    read.finish().await.expect("finish");
}

/// Accepting client ID metadata documents is off until set, set per tenant, and independent of
/// the registration policy in both directions.
pub async fn metadata_document_acceptance_is_per_tenant_and_beside_the_policy(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.metadata_documents_accepted(&acme.id)
            .await
            .expect("unset")
    );
    tx.set_metadata_documents_accepted(&acme.id, true, acme.created_at)
        .await
        .expect("set");
    assert_eq!(
        tx.registration_policy(&acme.id).await.expect("policy"),
        RegistrationPolicy::Disabled,
        "accepting documents opens no registration"
    );
    tx.set_registration_policy(&acme.id, RegistrationPolicy::Protected, acme.created_at)
        .await
        .expect("policy");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert!(
        read.metadata_documents_accepted(&acme.id)
            .await
            .expect("read")
    );
    assert!(
        !read
            .metadata_documents_accepted(&other.id)
            .await
            .expect("read")
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.set_metadata_documents_accepted(&acme.id, false, acme.created_at)
        .await
        .expect("unset");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        !read
            .metadata_documents_accepted(&acme.id)
            .await
            .expect("read")
    );
    assert_eq!(
        read.registration_policy(&acme.id).await.expect("policy"),
        RegistrationPolicy::Protected
    );
    read.finish().await.expect("finish");

    let gone = super::tenant_fixture("gone", 3);
    let mut tx = store.write().await.expect("write");
    match tx
        .set_metadata_documents_accepted(&gone.id, true, gone.created_at)
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "registration_policies_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
}

/// The policy is `disabled` until set, then what was last set, for that tenant only; a policy of
/// an unknown tenant names the foreign key.
pub async fn registration_policies_default_to_disabled_and_are_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.registration_policy(&acme.id).await.expect("unset"),
        RegistrationPolicy::Disabled
    );
    tx.set_registration_policy(&acme.id, RegistrationPolicy::Open, acme.created_at)
        .await
        .expect("set");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.registration_policy(&acme.id).await.expect("read"),
        RegistrationPolicy::Open
    );
    assert_eq!(
        read.registration_policy(&other.id).await.expect("read"),
        RegistrationPolicy::Disabled
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.set_registration_policy(&acme.id, RegistrationPolicy::Disabled, acme.created_at)
        .await
        .expect("set again");
    assert_eq!(
        tx.registration_policy(&acme.id).await.expect("own write"),
        RegistrationPolicy::Disabled
    );
    tx.commit().await.expect("commit");

    let gone = super::tenant_fixture("gone", 3);
    let mut tx = store.write().await.expect("write");
    match tx
        .set_registration_policy(&gone.id, RegistrationPolicy::Open, gone.created_at)
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "registration_policies_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
}

/// A token reads back for its application in its tenant only, a second one for the same
/// application names the primary key, one for an unknown application names its foreign key, and
/// deleting the application deletes its token.
pub async fn registration_tokens_belong_to_one_application_and_go_with_it(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let app = application_fixture(&acme, 10);
    let plain = application_fixture(&acme, 11);
    let hash = SecretHash::of("rat_one");
    let mut tx = store.write().await.expect("write");
    tx.insert_application(&app).await.expect("app");
    tx.insert_application(&plain).await.expect("plain app");
    tx.insert_registration_token(&acme.id, &app.id, &hash, acme.created_at)
        .await
        .expect("token");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.registration_token(&acme.id, &app.id)
            .await
            .expect("own"),
        Some(hash.clone())
    );
    assert_eq!(
        read.registration_token(&other.id, &app.id)
            .await
            .expect("other tenant"),
        None
    );
    assert_eq!(
        read.registration_token(&acme.id, &plain.id)
            .await
            .expect("no token"),
        None
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    match tx
        .insert_registration_token(
            &acme.id,
            &app.id,
            &SecretHash::of("rat_two"),
            acme.created_at,
        )
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "registration_access_tokens_pkey");
        }
        other => panic!("expected the primary key, got {other:?}"),
    }
    drop(tx);
    let unknown = application_fixture(&acme, 12);
    let mut tx = store.write().await.expect("write");
    match tx
        .insert_registration_token(&acme.id, &unknown.id, &hash, acme.created_at)
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "registration_access_tokens_client_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
    drop(tx);

    let mut tx = store.write().await.expect("write");
    tx.delete_application(&acme.id, &app.id)
        .await
        .expect("delete");
    assert_eq!(
        tx.registration_token(&acme.id, &app.id)
            .await
            .expect("gone"),
        None
    );
    tx.commit().await.expect("commit");
}

/// An initial access token reads back in its tenant only, spends uses only while it has some
/// and has not expired (racing spends never exceed `max_uses`), and is deleted once.
pub async fn initial_access_tokens_spend_their_uses_until_expiry(store: Arc<dyn Store>) {
    use svc_domain::{InitialAccessToken, InitialAccessTokenId, ManualClock, SeededRandom};
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = acme.created_at;
    let clock = ManualClock::new(at);
    let token = |seed: u64, max_uses: Option<u32>| InitialAccessToken {
        id: InitialAccessTokenId::generate(&clock, &SeededRandom::new(seed)),
        tenant_id: acme.id.clone(),
        hash: SecretHash::of(&format!("iatok_{seed}")),
        expires_at: at + time::Duration::hours(1),
        max_uses,
        uses: 0,
        created_at: at,
    };
    let limited = token(1, Some(3));
    let unlimited = token(2, None);
    let mut tx = store.write().await.expect("write");
    tx.insert_initial_access_token(&limited)
        .await
        .expect("limited");
    tx.insert_initial_access_token(&unlimited)
        .await
        .expect("unlimited");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let mut expected = vec![limited.clone(), unlimited.clone()];
    expected.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(
        read.initial_access_tokens(&acme.id).await.expect("list"),
        expected
    );
    assert!(
        read.initial_access_tokens(&other.id)
            .await
            .expect("other")
            .is_empty()
    );
    read.finish().await.expect("finish");

    // Ten racing spends of a three-use token: exactly three succeed.
    let spends = (0..10).map(|_| {
        let store = store.clone();
        let (tenant, id) = (acme.id.clone(), limited.id.clone());
        async move {
            let mut tx = store.write().await.expect("write");
            let spent = tx
                .spend_initial_access_token(&tenant, &id, at)
                .await
                .expect("spend");
            tx.commit().await.expect("commit");
            spent
        }
    });
    let spent = futures_util::future::join_all(spends).await;
    assert_eq!(spent.iter().filter(|s| **s).count(), 3, "{spent:?}");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.spend_initial_access_token(&other.id, &unlimited.id, at)
            .await
            .expect("other tenant")
    );
    assert!(
        !tx.spend_initial_access_token(&acme.id, &unlimited.id, unlimited.expires_at)
            .await
            .expect("expired")
    );
    assert!(
        tx.spend_initial_access_token(&acme.id, &unlimited.id, at)
            .await
            .expect("unlimited")
    );
    let listed = tx.initial_access_tokens(&acme.id).await.expect("list");
    let uses: Vec<(Option<u32>, u32)> = listed.iter().map(|t| (t.max_uses, t.uses)).collect();
    assert!(
        uses.contains(&(Some(3), 3)) && uses.contains(&(None, 1)),
        "{uses:?}"
    );
    assert!(
        !tx.delete_initial_access_token(&other.id, &limited.id)
            .await
            .expect("other tenant")
    );
    assert!(
        tx.delete_initial_access_token(&acme.id, &limited.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_initial_access_token(&acme.id, &limited.id)
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");
}
