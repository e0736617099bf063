//! The authorization code flow through the engines against a real SQLite store: authorize with a
//! session → code → token endpoint (PKCE, redirect binding, single use and reuse revocation) →
//! refresh rotation and reuse detection → UserInfo → revocation → introspection.

use super::flow::*;
use super::support::*;
use crate::authorize::AuthorizeOutcome;
use crate::revoke::Revoker;
use crate::userinfo::UserInfo;
use std::sync::Arc;
use svc_domain::SigningAlg;

#[tokio::test]
async fn third_party_flow_consents_then_issues_id_access_and_refresh_tokens() {
    let flow = Flow::new(false).await;
    // Third parties must consent first.
    assert!(matches!(
        flow.authorize(&[]).await,
        AuthorizeOutcome::Consent { .. }
    ));
    let code = flow.code().await;
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    assert_eq!(tokens.scope, "email offline_access openid profile");
    let id_token = tokens.id_token.clone().unwrap();
    let published = flow.fx.keys.published_jwks(&flow.fx.tenant).await.unwrap();
    let claims = svc_crypto::verify_jwt_signature(&published.keys, &id_token, SigningAlg::Rs256)
        .unwrap()
        .claims;
    assert_eq!(claims["aud"], flow.app.id.as_str());
    assert_eq!(claims["nonce"], "n-1");
    assert_eq!(claims["sid"], flow.session.id.as_str());
    // Pairwise: not the user id, but stable.
    let sub = claims["sub"].as_str().unwrap().to_owned();
    assert_ne!(sub, flow.user.id.as_str());
    assert_eq!(sub.len(), 43);
    // Consent is remembered: the second authorize goes straight to a code with the same sub.
    assert!(matches!(
        flow.authorize(&[]).await,
        AuthorizeOutcome::RedirectToClient(_)
    ));
    let again = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let again_claims = svc_crypto::verify_jwt_signature(
        &published.keys,
        &again.id_token.unwrap(),
        SigningAlg::Rs256,
    )
    .unwrap()
    .claims;
    assert_eq!(again_claims["sub"], sub);

    // UserInfo with the access token.
    let userinfo = UserInfo::new(flow.fx.ctx.clone());
    let info = userinfo
        .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
        .await
        .unwrap();
    assert_eq!(info["sub"], sub);
    assert_eq!(info["email"], "ada@example.com");
    assert_eq!(info["name"], "Ada Lovelace");

    // Refresh rotates; the old token is then reuse and kills the family.
    let refresh = tokens.refresh_token.clone().unwrap();
    let rotated = flow.refresh(&refresh).await.unwrap();
    let next = rotated.refresh_token.clone().unwrap();
    assert_ne!(next, refresh);
    // Refresh tokens are described to their own client only.
    assert_eq!(flow.introspect(&next).await["active"], false);
    let reuse = flow.refresh(&refresh).await.unwrap_err();
    assert_eq!(reuse.code().as_str(), "invalid_grant");
    let dead = flow.refresh(&next).await.unwrap_err();
    assert_eq!(
        dead.code().as_str(),
        "invalid_grant",
        "the family is revoked"
    );
    assert_eq!(flow.introspect(&next).await["active"], false);
}

#[tokio::test]
async fn codes_are_single_use_and_bound_to_pkce_redirect_and_client() {
    let flow = Flow::new(true).await;
    // First party: no consent step.
    let code = flow.code().await;
    // A wrong verifier burns the code.
    let wrong = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK";
    assert_eq!(
        flow.redeem(&code, wrong).await.unwrap_err().code().as_str(),
        "invalid_grant"
    );
    assert_eq!(
        flow.redeem(&code, VERIFIER)
            .await
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_grant"
    );

    // Reuse after success revokes what the first redemption issued.
    let code = flow.code().await;
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    assert_eq!(flow.introspect(&tokens.access_token).await["active"], true);
    assert_eq!(
        flow.redeem(&code, VERIFIER)
            .await
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_grant"
    );
    assert_eq!(flow.introspect(&tokens.access_token).await["active"], false);
    assert!(flow.refresh(&tokens.refresh_token.unwrap()).await.is_err());

    // Another client cannot redeem it; the redirect URI must match.
    let code = flow.code().await;
    let other = flow
        .fx
        .endpoint
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
            ]),
            Some(&basic(
                flow.confidential.0.id.as_str(),
                &flow.confidential.1,
            )),
        )
        .await
        .unwrap_err();
    assert_eq!(other.code().as_str(), "invalid_grant");
    let code = flow.code().await;
    let mismatch = flow
        .fx
        .endpoint
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[
                ("grant_type", "authorization_code"),
                ("client_id", flow.app.id.as_str()),
                ("code", &code),
                ("redirect_uri", "https://shop.example/cb/"),
                ("code_verifier", VERIFIER),
            ]),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(mismatch.code().as_str(), "invalid_grant");

    // Expired codes fail.
    let code = flow.code().await;
    flow.fx.clock.advance(time::Duration::seconds(61));
    assert_eq!(
        flow.redeem(&code, VERIFIER)
            .await
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_grant"
    );

    // First-party subjects are the user id.
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let published = flow.fx.keys.published_jwks(&flow.fx.tenant).await.unwrap();
    let claims = svc_crypto::verify_jwt_signature(
        &published.keys,
        &tokens.id_token.unwrap(),
        SigningAlg::Rs256,
    )
    .unwrap()
    .claims;
    assert_eq!(claims["sub"], flow.user.id.as_str());
}

#[tokio::test]
async fn prompt_none_and_max_age_and_revocation() {
    let flow = Flow::new(true).await;
    // No session + prompt=none → login_required on the redirect.
    let outcome = flow
        .authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(&[("prompt", "none")]),
            None,
        )
        .await;
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(url.contains("error=login_required") && url.contains("state=st-1"));
    // prompt=login with a session still needs a sign-in.
    assert!(matches!(
        flow.authorize(&[("prompt", "login")]).await,
        AuthorizeOutcome::Login { .. }
    ));
    // max_age exceeded → sign in again.
    flow.fx.clock.advance(time::Duration::seconds(120));
    assert!(matches!(
        flow.authorize(&[("max_age", "60")]).await,
        AuthorizeOutcome::Login { .. }
    ));
    assert!(matches!(
        flow.authorize(&[("max_age", "600")]).await,
        AuthorizeOutcome::RedirectToClient(_)
    ));

    // Revoking the access token is reflected by introspection and UserInfo.
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let revoker = Revoker::new(flow.fx.ctx.clone());
    revoker
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[
                ("token", &tokens.access_token),
                ("client_id", flow.app.id.as_str()),
            ]),
            None,
        )
        .await
        .unwrap();
    assert_eq!(flow.introspect(&tokens.access_token).await["active"], false);
    let userinfo = UserInfo::new(flow.fx.ctx.clone());
    let err = userinfo
        .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_token");
    // Revoking the refresh token kills the family; unknown tokens are a silent success.
    let refresh = tokens.refresh_token.unwrap();
    revoker
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[("token", &refresh), ("client_id", flow.app.id.as_str())]),
            None,
        )
        .await
        .unwrap();
    assert!(flow.refresh(&refresh).await.is_err());
    revoker
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[
                ("token", "rt_nonsense"),
                ("client_id", flow.app.id.as_str()),
            ]),
            None,
        )
        .await
        .unwrap();
}

/// Spec item "Concurrency on PostgreSQL": racing redemptions of one code and racing refreshes of
/// one refresh token, each on its own connection, through the whole token endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_redemptions_and_refreshes_on_postgres_admit_exactly_one() {
    let (url, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let mut settings = svc_store_postgres::testing::test_settings();
    settings.max_connections = 60;
    let store = svc_store_postgres::PgStore::connect(&url, &settings)
        .await
        .unwrap();
    svc_store::Store::migrate(&store).await.unwrap();
    let fx = Fixture::on_store(Arc::new(store), SigningAlg::Es256).await;
    let flow = Arc::new(Flow::with(fx, true).await);

    let code = flow.code().await;
    let redemptions = (0..50).map(|_| {
        let flow = flow.clone();
        let code = code.clone();
        tokio::spawn(async move { flow.redeem(&code, VERIFIER).await })
    });
    let results: Vec<_> = futures_join(redemptions).await;
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "exactly one redemption succeeds");
    for loser in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(loser.code().as_str(), "invalid_grant");
    }

    // A fresh grant, then 50 racing refreshes of its refresh token.
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.unwrap();
    let refreshes = (0..50).map(|_| {
        let flow = flow.clone();
        let refresh = refresh.clone();
        tokio::spawn(async move { flow.refresh(&refresh).await })
    });
    let results: Vec<_> = futures_join(refreshes).await;
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "exactly one refresh succeeds");
    // The losers presented a rotated token: reuse revoked the family, so the winner's successor
    // is dead too, and the family is consistent (one revocation, every member refused).
    let successor = winners[0].refresh_token.clone().unwrap();
    assert_eq!(
        flow.refresh(&successor).await.unwrap_err().code().as_str(),
        "invalid_grant"
    );
    flow.fx.store.close().await;
    guard.drop_database().await.unwrap();
}

async fn futures_join<T: Send + 'static>(
    handles: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles.collect::<Vec<_>>() {
        out.push(handle.await.unwrap());
    }
    out
}

#[tokio::test]
async fn foreign_truncated_and_forged_tokens_are_refused_without_harming_the_owner() {
    let flow = Flow::new(true).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.clone().unwrap();
    // Another client presenting the token: invalid_grant, and the rotation rolls back, so the
    // owner can still use it.
    let foreign = flow
        .fx
        .endpoint
        .handle(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&[("grant_type", "refresh_token"), ("refresh_token", &refresh)]),
            Some(&basic(
                flow.confidential.0.id.as_str(),
                &flow.confidential.1,
            )),
        )
        .await;
    assert!(foreign.is_err());
    // (The backend is allowed the refresh grant, so this is the family binding speaking.)
    assert_eq!(foreign.unwrap_err().code().as_str(), "invalid_grant");
    // Truncated or extended refresh tokens are simply unknown.
    for bad in [
        &refresh[..refresh.len() - 1],
        &format!("{refresh}A"),
        "rt_",
        "",
    ] {
        assert!(flow.refresh(bad).await.is_err(), "{bad:?}");
    }
    assert!(
        flow.refresh(&refresh).await.is_ok(),
        "the owner's token survived"
    );

    // UserInfo refuses truncated, re-signed or alg-swapped access tokens.
    let userinfo = UserInfo::new(flow.fx.ctx.clone());
    let at = &tokens.access_token;
    let (head, sig) = at.rsplit_once('.').unwrap();
    let flipped = format!("{head}.{}", sig.chars().rev().collect::<String>());
    let none_alg = {
        let payload = at.split('.').nth(1).unwrap();
        format!("eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0.{payload}.")
    };
    for bad in [
        &at[..at.len() - 2],
        flipped.as_str(),
        none_alg.as_str(),
        "x.y.z",
    ] {
        let err = userinfo
            .claims(&flow.fx.tenant, &flow.fx.issuer, bad)
            .await
            .unwrap_err();
        assert_eq!(err.code().as_str(), "invalid_token");
    }
    // The person's own token, untouched by all of the above, still works.
    assert_eq!(
        userinfo
            .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
            .await
            .unwrap()["sub"],
        flow.user.id.as_str()
    );
}

/// RFC 6750 §3.1: a valid token that lacks what the resource needs is `insufficient_scope`
/// (403), not `invalid_token` (401). A machine's client_credentials token is valid but names no
/// person, so UserInfo (OIDC Core §5.3) has nothing to say to it, even with `openid` in scope.
#[tokio::test]
async fn a_machines_client_credentials_token_gets_insufficient_scope_at_userinfo() {
    let flow = Flow::new(true).await;
    let machine = flow
        .other_client(|app| app.grant_types = vec![svc_domain::GrantType::ClientCredentials])
        .await;
    let issued = flow
        .fx
        .token(
            &[CC, ("scope", "openid email")],
            Some(&basic(machine.0.id.as_str(), &machine.1)),
        )
        .await
        .unwrap();
    assert_eq!(issued.scope, "email openid");
    let refused = flow
        .userinfo()
        .claims(&flow.fx.tenant, &flow.fx.issuer, &issued.access_token)
        .await
        .unwrap_err();
    assert_eq!(refused.code().as_str(), "insufficient_scope");
    assert_eq!(refused.code(), crate::ErrorCode::InsufficientScope);
}
