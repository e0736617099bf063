//! The `claims` request parameter (OIDC Core §5.5) and `acr` (§2, §3.1.2.1, §5.5.1.1) through
//! authorize, the code exchange, refresh and UserInfo: requested claims reach the ID token only
//! within consent, `acr` is the session's level, and an essential `acr` we cannot meet is
//! `unmet_authentication_requirements`. Access tokens carry the session's `sid` too.

use super::flow::*;
use crate::authorize::AuthorizeOutcome;
use serde_json::Value;
use svc_domain::{ACR_PASSWORD, Clock, SigningAlg};

const REQUEST: &str = r#"{"id_token":{"email":null,"name":{"essential":true},"given_name":null,
    "family_name":null,"auth_time":{"essential":true},"acr":null,"phone_number":null}}"#;

/// Authorizes with `extra` parameters (a fresh scope replaces the default), consenting when
/// asked, redeems the code and returns the verified ID token's claims and the access token.
async fn id_token(flow: &Flow, extra: &[(&str, &str)]) -> (Value, String) {
    let mut outcome = flow.authorize(extra).await;
    if let AuthorizeOutcome::Consent { interaction } = &outcome {
        outcome = flow
            .authorize
            .decide_consent(
                &flow.fx.tenant,
                &flow.fx.issuer,
                interaction,
                Some(&flow.session),
                true,
            )
            .await;
    }
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("{outcome:?}");
    };
    let url = url::Url::parse(&url).unwrap();
    let code = url
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap_or_else(|| panic!("no code in {url}"))
        .1
        .into_owned();
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    let claims = flow
        .id_claims(tokens.id_token.as_deref().unwrap(), SigningAlg::Rs256)
        .await;
    (claims, tokens.access_token)
}

#[tokio::test]
async fn claims_requested_for_the_id_token_are_there_when_consent_permits_them() {
    let flow = Flow::new(false).await;
    let (claims, _) = id_token(&flow, &[("claims", REQUEST)]).await;
    assert_eq!(claims["email"], "ada@example.com");
    assert_eq!(claims["name"], "Ada Lovelace");
    assert_eq!(claims["given_name"], "Ada");
    assert!(claims.get("family_name").is_none(), "no value, no claim");
    assert!(claims.get("email_verified").is_none(), "not requested");
    assert!(claims.get("phone_number").is_none(), "not a claim we hold");
    assert!(claims["auth_time"].is_i64());
    assert_eq!(claims["acr"], ACR_PASSWORD);
    // The subject is never replaced by a requested claim.
    assert_ne!(claims["sub"], "ada@example.com");

    // Without a claims request, person claims stay at UserInfo.
    let (plain, _) = id_token(&flow, &[]).await;
    assert!(plain.get("email").is_none() && plain.get("name").is_none());
    assert_eq!(
        plain["acr"], ACR_PASSWORD,
        "acr whenever the session has one"
    );
}

#[tokio::test]
async fn a_claims_request_never_reaches_beyond_the_granted_scopes() {
    let flow = Flow::new(true).await;
    let (claims, access) =
        id_token(&flow, &[("scope", "openid profile"), ("claims", REQUEST)]).await;
    assert_eq!(claims["name"], "Ada Lovelace");
    assert!(claims.get("email").is_none(), "email was not consented");

    // UserInfo: the userinfo members are answered within consent too.
    let (_, with_userinfo_request) = id_token(
        &flow,
        &[
            ("scope", "openid profile"),
            (
                "claims",
                r#"{"userinfo":{"email":{"essential":true},"given_name":null}}"#,
            ),
        ],
    )
    .await;
    for token in [&access, &with_userinfo_request] {
        let info = flow
            .userinfo()
            .claims(&flow.fx.tenant, &flow.fx.issuer, token)
            .await
            .unwrap();
        assert_eq!(info["given_name"], "Ada");
        assert!(info.get("email").is_none(), "{info}");
    }
    let (_, full) = id_token(
        &flow,
        &[("claims", r#"{"userinfo":{"email":{"essential":true}}}"#)],
    )
    .await;
    let info = flow
        .userinfo()
        .claims(&flow.fx.tenant, &flow.fx.issuer, &full)
        .await
        .unwrap();
    assert_eq!(info["email"], "ada@example.com");
    assert_eq!(info["email_verified"], true);
}

#[tokio::test]
async fn acr_values_are_recorded_and_the_id_token_says_the_sessions_level_also_after_refresh() {
    let flow = Flow::new(true).await;
    let mut outcome = flow
        .authorize(&[("acr_values", "urn:svc:aal2 urn:svc:aal1")])
        .await;
    let AuthorizeOutcome::RedirectToClient(url) = &mut outcome else {
        panic!("{outcome:?}");
    };
    let code = url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    // The stored code carries the voluntary acr request.
    let mut tx = flow.fx.store.write().await.unwrap();
    let stored = match tx
        .redeem_code(
            &flow.fx.tenant.id,
            &svc_domain::SecretHash::of(&code),
            flow.fx.clock.now(),
        )
        .await
        .unwrap()
    {
        svc_store::CodeRedemption::First(stored) => stored,
        other => panic!("{other:?}"),
    };
    drop(tx); // rolls the redemption back
    assert_eq!(
        stored.claims.as_deref(),
        Some(r#"{"id_token":{"acr":{"values":["urn:svc:aal2","urn:svc:aal1"]}}}"#)
    );
    assert_eq!(stored.acr.as_deref(), Some(ACR_PASSWORD));
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    let claims = flow
        .id_claims(tokens.id_token.as_deref().unwrap(), SigningAlg::Rs256)
        .await;
    assert_eq!(claims["acr"], ACR_PASSWORD);
    let refreshed = flow
        .refresh(tokens.refresh_token.as_deref().unwrap())
        .await
        .unwrap();
    let again = flow
        .id_claims(refreshed.id_token.as_deref().unwrap(), SigningAlg::Rs256)
        .await;
    assert_eq!(again["acr"], ACR_PASSWORD);
    // The access tokens name the session they were issued in, as the ID tokens do (ADR 0010),
    // also after a refresh of the grant.
    for access in [&tokens.access_token, &refreshed.access_token] {
        let access = super::organizations::claims(access);
        assert_eq!(access["sid"], flow.session.id.as_str(), "{access}");
        assert_eq!(access["sid"], claims["sid"]);
    }
}

#[tokio::test]
async fn an_essential_acr_we_cannot_meet_is_unmet_authentication_requirements() {
    let flow = Flow::new(true).await;
    let unmet = flow
        .authorize(&[(
            "claims",
            r#"{"id_token":{"acr":{"essential":true,"values":["urn:svc:aal2"]}}}"#,
        )])
        .await;
    let AuthorizeOutcome::RedirectToClient(url) = unmet else {
        panic!("{unmet:?}");
    };
    let query: std::collections::HashMap<_, _> = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(query["error"], "unmet_authentication_requirements");
    assert_eq!(query["state"], "st-1");
    assert_eq!(query["iss"], flow.fx.issuer);
    assert!(!query.contains_key("code"));
    // An essential request the session meets, or a voluntary one it does not, passes.
    for claims in [
        r#"{"id_token":{"acr":{"essential":true,"values":["urn:svc:aal2","urn:svc:aal1"]}}}"#,
        r#"{"id_token":{"acr":{"values":["urn:svc:aal2"]}}}"#,
    ] {
        let (id, _) = id_token(&flow, &[("claims", claims)]).await;
        assert_eq!(id["acr"], ACR_PASSWORD, "{claims}");
    }
}
