//! The memory of verified access tokens never widens what is accepted: it is keyed by issuer,
//! expires with the token, and lifetime and revocation are checked on every use.

use super::flow::*;
use crate::access_token::{active_claims, verified_claims};

#[tokio::test]
async fn a_remembered_verification_is_per_issuer_and_never_outlives_the_token_or_a_revocation() {
    let flow = Flow::new(false).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let token = &tokens.access_token;
    let fx = &flow.fx;
    let verified = verified_claims(&fx.keys, &fx.tenant, &fx.issuer, token)
        .await
        .unwrap();
    assert!(verified.is_some());
    // Remembered for this issuer only: another expected issuer still refuses it.
    let other = verified_claims(&fx.keys, &fx.tenant, "https://elsewhere.example", token)
        .await
        .unwrap();
    assert!(other.is_none());
    // A one-character change is another token, verified (and refused) on its own.
    let mut tampered = token.clone();
    tampered.pop();
    tampered.push(if token.ends_with('A') { 'B' } else { 'A' });
    assert!(
        verified_claims(&fx.keys, &fx.tenant, &fx.issuer, &tampered)
            .await
            .unwrap()
            .is_none()
    );

    let active_at = |at: time::OffsetDateTime| {
        active_claims(
            fx.store.as_ref(),
            &fx.keys,
            &fx.tenant,
            &fx.issuer,
            token,
            at,
        )
    };
    let now = svc_domain::Clock::now(fx.clock.as_ref());
    let active = active_at(now).await.unwrap();
    assert!(active.is_some());
    // Past its expiry the remembered verification does not make it active.
    let later = now + time::Duration::hours(2);
    let expired = active_at(later).await.unwrap();
    assert!(expired.is_none());
    // Revoked: refused at once though its verification is remembered.
    let jti = active.unwrap()["jti"].as_str().unwrap().to_owned();
    let mut tx = fx.store.write().await.unwrap();
    tx.revoke_access_token(&fx.tenant.id, &jti, later)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let revoked = active_at(now).await.unwrap();
    assert!(revoked.is_none());
}
