//! The events the token, revocation and authorization engines record with their changes:
//! `auth.consent.granted`, `auth.token.issued` for both grants, `auth.token.revoked` for
//! revocations and code reuse, `security.refresh_token.reuse`; refusals record nothing.

use super::flow::*;
use super::support::*;
use crate::revoke::Revoker;

#[tokio::test]
async fn issuance_consent_and_rotation_are_recorded_with_their_facts() {
    let flow = Flow::new(false).await;
    let code = flow.code().await;
    let consents = flow.events("auth.consent.granted").await;
    assert_eq!(consents.len(), 1);
    assert_eq!(consents[0]["user_id"], flow.user.id.as_str());
    assert_eq!(consents[0]["client_id"], flow.app.id.as_str());
    assert!(
        consents[0]["scope"]
            .as_str()
            .unwrap()
            .contains("offline_access")
    );

    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    let issued = flow.events("auth.token.issued").await;
    assert_eq!(issued.len(), 1);
    let first = &issued[0];
    assert_eq!(first["grant_type"], "authorization_code");
    assert_eq!(first["client_id"], flow.app.id.as_str());
    assert_eq!(first["user_id"], flow.user.id.as_str());
    assert_eq!(first["id_token"], true);
    assert!(
        first["refresh_family_id"]
            .as_str()
            .unwrap()
            .starts_with("rtf_")
    );
    let jti = flow.introspect(&tokens.access_token).await["jti"].clone();
    assert_eq!(first["access_token_id"], jti);
    let text = first.to_string();
    assert!(
        !text.contains(&tokens.access_token)
            && !text.contains(tokens.refresh_token.as_deref().unwrap()),
        "no token in an event"
    );

    flow.fx.clock.advance(time::Duration::seconds(1));
    let refreshed = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    let issued = flow.events("auth.token.issued").await;
    assert_eq!(issued.len(), 2);
    assert_eq!(issued[1]["grant_type"], "refresh_token");
    assert_eq!(issued[1]["refresh_family_id"], first["refresh_family_id"]);
    assert_eq!(issued[1]["id_token"], true);
    // The token is signed after the commit from the recorded stamp: the event names its jti.
    let jti = flow.introspect(&refreshed.access_token).await["jti"].clone();
    assert!(jti.is_string());
    assert_eq!(issued[1]["access_token_id"], jti);

    // A refused redemption records nothing.
    let before = flow.events("auth.token.issued").await.len();
    let other = flow.code().await;
    assert!(
        flow.redeem(&other, "not-the-verifier-not-the-verifier-not-the-verifier")
            .await
            .is_err()
    );
    assert_eq!(flow.events("auth.token.issued").await.len(), before);
}

#[tokio::test]
async fn reuse_of_a_code_or_refresh_token_records_revocations_and_the_security_event() {
    let flow = Flow::new(false).await;
    let code = flow.code().await;
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    flow.fx.clock.advance(time::Duration::seconds(1));
    assert!(flow.redeem(&code, VERIFIER).await.is_err());
    let revoked = flow.events("auth.token.revoked").await;
    assert_eq!(revoked.len(), 2, "the family and the access token");
    assert!(revoked.iter().all(|r| r["reason"] == "code_reuse"));
    let kinds: Vec<&str> = revoked
        .iter()
        .map(|r| r["token_kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"refresh_token") && kinds.contains(&"access_token"),
        "{kinds:?}"
    );

    // A fresh family: rotate, then present the rotated token again.
    let code = flow.code().await;
    let tokens2 = flow.redeem(&code, VERIFIER).await.unwrap();
    let rotated = tokens2.refresh_token.unwrap();
    flow.fx.clock.advance(time::Duration::seconds(1));
    flow.refresh(&rotated).await.unwrap();
    flow.fx.clock.advance(time::Duration::seconds(1));
    assert!(flow.refresh(&rotated).await.is_err());
    let reuse = flow.events("security.refresh_token.reuse").await;
    assert_eq!(reuse.len(), 1);
    assert_eq!(reuse[0]["user_id"], flow.user.id.as_str());
    assert_eq!(reuse[0]["client_id"], flow.app.id.as_str());
    let revoked = flow.events("auth.token.revoked").await;
    assert_eq!(revoked.last().unwrap()["reason"], "refresh_token_reuse");
    assert_eq!(
        revoked.last().unwrap()["refresh_family_id"],
        reuse[0]["refresh_family_id"]
    );
    // Presenting it a third time revokes nothing new and records nothing new.
    assert!(flow.refresh(&rotated).await.is_err());
    assert_eq!(flow.events("security.refresh_token.reuse").await.len(), 1);
    drop(tokens);
}

async fn revoke(
    flow: &Flow,
    revoker: &Revoker,
    token: &str,
    auth: Option<&str>,
    client_id: Option<&str>,
) {
    let mut pairs = vec![("token", token)];
    if let Some(id) = client_id {
        pairs.push(("client_id", id));
    }
    revoker
        .handle(&flow.fx.tenant, &flow.fx.issuer, &form(&pairs), auth)
        .await
        .unwrap();
}

#[tokio::test]
async fn client_revocation_records_once_per_token() {
    let flow = Flow::new(false).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let refresh = tokens.refresh_token.clone().unwrap();
    let revoker = Revoker::new(flow.fx.ctx.clone());
    let (app, secret) = &flow.confidential;
    let auth = basic(app.id.as_str(), secret);
    // The confidential client did not receive these tokens: nothing is revoked or recorded.
    revoke(&flow, &revoker, &tokens.access_token, Some(&auth), None).await;
    revoke(&flow, &revoker, &refresh, Some(&auth), None).await;
    assert!(flow.events("auth.token.revoked").await.is_empty());

    // The public client that holds them revokes each once; a repeat records nothing.
    let public = flow.app.id.to_string();
    for _ in 0..2 {
        revoke(&flow, &revoker, &tokens.access_token, None, Some(&public)).await;
        revoke(&flow, &revoker, &refresh, None, Some(&public)).await;
    }
    let revoked = flow.events("auth.token.revoked").await;
    assert_eq!(revoked.len(), 2, "{revoked:?}");
    assert!(revoked.iter().all(|r| r["reason"] == "client_request"));
}
