//! Client authentication through the application cache: a cached record serves repeat
//! requests without the store, a secret rotated elsewhere works at once (a mismatch is checked
//! against the store), the retired secret works only until the entry is invalidated or expires,
//! and a deleted application stops authenticating once invalidated.

use super::support::*;
use crate::client_auth::ClientCache;
use crate::token::{TokenEndpoint, TokenSettings};
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{GeneratedSecret, OsRandom, TokenEndpointAuthMethod};

const GRANT: &[(&str, &str)] = &[("grant_type", "client_credentials")];

/// The fixture's token endpoint reading applications through `cache`.
fn cached_endpoint(fx: &Fixture, cache: &Arc<ClientCache>) -> TokenEndpoint {
    TokenEndpoint::new(
        fx.ctx.clone().with_client_cache(cache.clone()),
        TokenSettings::default(),
    )
}

#[tokio::test]
async fn rotated_secrets_work_at_once_and_retired_ones_until_invalidation() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let cache = Arc::new(ClientCache::new(Duration::from_secs(600)));
    let endpoint = cached_endpoint(&fx, &cache);
    let token = |auth: String| {
        let endpoint = &endpoint;
        let fx = &fx;
        async move {
            endpoint
                .handle(&fx.tenant, &fx.issuer, &form(GRANT), Some(&auth))
                .await
        }
    };
    let old = client.basic();
    assert!(token(old.clone()).await.is_ok());
    assert!(
        cache.get(&fx.tenant.id, &client.app.id).is_some(),
        "cached after the first read"
    );

    // Another instance rotates the secret: only the store knows.
    let fresh = GeneratedSecret::generate("cs_", &OsRandom);
    let mut rotated = client.app.clone();
    rotated.secret_hash = Some(fresh.hash.clone());
    let mut tx = fx.store.write().await.unwrap();
    let outcome = tx
        .update_application(&rotated, client.app.updated_at)
        .await
        .unwrap();
    assert_eq!(outcome, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();

    let new = basic(client.id(), &fresh.plaintext);
    assert!(
        token(new.clone()).await.is_ok(),
        "a new secret works at once"
    );
    // The mismatch refreshed the entry from the store: the retired secret is now refused.
    let refused = token(old.clone()).await.unwrap_err();
    assert_eq!(refused.code().as_str(), "invalid_client");

    // Deleting the application: refused once this process's cache is told.
    let mut tx = fx.store.write().await.unwrap();
    tx.delete_application(&fx.tenant.id, &client.app.id)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert!(
        token(new.clone()).await.is_ok(),
        "another instance's delete is seen within the TTL"
    );
    cache.invalidate(&fx.tenant.id, &client.app.id);
    assert_eq!(
        token(new).await.unwrap_err().code().as_str(),
        "invalid_client"
    );
}

#[tokio::test]
async fn a_cached_client_is_never_served_to_another_tenant() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let cache = Arc::new(ClientCache::new(Duration::from_secs(600)));
    let endpoint = cached_endpoint(&fx, &cache);
    let auth = client.basic();
    assert!(
        endpoint
            .handle(&fx.tenant, &fx.issuer, &form(GRANT), Some(&auth))
            .await
            .is_ok()
    );
    let foreign = endpoint
        .handle(
            &fx.other_tenant,
            "https://other.example.com",
            &form(GRANT),
            Some(&auth),
        )
        .await
        .unwrap_err();
    assert_eq!(foreign.code().as_str(), "invalid_client");
}
