//! Audience restriction of a person's access tokens (RFC 9700 §2.3) and who may introspect them
//! (RFC 7662 §2.1, §4): the token's own client, or the resource server whose explicitly
//! registered `api_audience` is the token's `aud`; and a person who may no longer sign in has
//! no active token.

use super::flow::*;
use super::support::*;
use svc_domain::UserStatus;

#[tokio::test]
async fn without_an_api_audience_a_persons_token_is_for_userinfo_and_no_other_client_sees_it() {
    let fx = Fixture::new().await;
    let flow = Flow::build(fx, true, |app| app.api_audience = None).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    let userinfo_audience = format!("{}/userinfo", flow.fx.issuer);
    let (_, claims) = flow
        .fx
        .verify(&tokens.access_token, &userinfo_audience)
        .await;
    assert_eq!(claims["aud"], userinfo_audience, "never the management API");
    // UserInfo accepts it.
    let info = flow
        .userinfo()
        .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
        .await
        .unwrap();
    assert_eq!(info["sub"], flow.user.id.as_str());
    // A confidential client without a registered api_audience is no resource server: it used
    // to stand for the management API and could read every such token.
    let no_audience = flow.other_client(|app| app.api_audience = None).await;
    assert_eq!(
        flow.introspect_as(&tokens.access_token, &no_audience).await,
        serde_json::json!({"active": false})
    );
}

#[tokio::test]
async fn a_same_tenant_token_of_another_audience_is_inactive_for_that_resource_server() {
    let flow = Flow::new(false).await;
    let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
    // The backend registered the token's audience (https://api.shop.example): it sees it.
    let described = flow
        .introspect_as(&tokens.access_token, &flow.confidential)
        .await;
    assert_eq!(described["active"], true, "{described}");
    assert_eq!(described["aud"], "https://api.shop.example");
    assert_eq!(described["client_id"], flow.app.id.as_str());
    // Another API of the same tenant learns nothing, not even that the token is live.
    let other_api = flow
        .other_client(|app| app.api_audience = Some("https://api.billing.example".into()))
        .await;
    assert_eq!(
        flow.introspect_as(&tokens.access_token, &other_api).await,
        serde_json::json!({"active": false})
    );
}

#[tokio::test]
async fn a_suspended_or_removed_persons_access_token_is_inactive_and_refused_by_userinfo() {
    for first_party in [true, false] {
        let flow = Flow::new(first_party).await;
        let tokens = flow.redeem(&flow.code().await, VERIFIER).await.unwrap();
        let active = |v: serde_json::Value| v["active"] == true;
        assert!(active(
            flow.introspect_as(&tokens.access_token, &flow.confidential)
                .await
        ));

        flow.set_user_status(UserStatus::Suspended).await;
        assert_eq!(
            flow.introspect_as(&tokens.access_token, &flow.confidential)
                .await,
            serde_json::json!({"active": false}),
            "first_party={first_party}"
        );
        let refused = flow
            .userinfo()
            .claims(&flow.fx.tenant, &flow.fx.issuer, &tokens.access_token)
            .await
            .unwrap_err();
        assert_eq!(refused.code().as_str(), "invalid_token");
        assert_eq!(refused.code(), crate::ErrorCode::InvalidToken);

        // It is the person's status that decides: back to active, the token is live again.
        flow.set_user_status(UserStatus::Active).await;
        assert!(active(
            flow.introspect_as(&tokens.access_token, &flow.confidential)
                .await
        ));
        flow.set_user_status(UserStatus::Removed).await;
        assert!(!active(
            flow.introspect_as(&tokens.access_token, &flow.confidential)
                .await
        ));
    }
}
