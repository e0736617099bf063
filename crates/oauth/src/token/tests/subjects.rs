//! The `sub` each application sees (OIDC Core §8, CONTRACTS.md "Identifiers"): pairwise per
//! sector (the host of the first redirect URI) for third-party applications, the person's
//! `usr_…` id for first-party ones; checked on ID tokens issued by the token endpoint.

use super::flow::*;
use super::support::*;
use crate::authorize::AuthorizeOutcome;
use svc_domain::{Application, RedirectUri, SigningAlg, TokenEndpointAuthMethod};

/// Stores a public code-flow application redirecting to `redirect`, runs the flow for the
/// flow's person (consenting when asked) and returns the ID token's `sub`.
async fn sub_seen_by(flow: &Flow, redirect: &str, first_party: bool) -> String {
    let (app, _) = flow
        .other_client(|app: &mut Application| {
            app.redirect_uris = vec![RedirectUri::parse(redirect).unwrap()];
            app.token_endpoint_auth_method = TokenEndpointAuthMethod::None;
            app.secret_hash = None;
            app.first_party = first_party;
        })
        .await;
    let params = form(&[
        ("client_id", app.id.as_str()),
        ("redirect_uri", redirect),
        ("response_type", "code"),
        ("scope", "openid"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let (tenant, issuer) = (&flow.fx.tenant, &flow.fx.issuer);
    let mut outcome = flow
        .authorize
        .authorize(tenant, issuer, &params, Some(&flow.session))
        .await;
    if let AuthorizeOutcome::Consent { interaction } = &outcome {
        outcome = flow
            .authorize
            .decide_consent(tenant, issuer, interaction, Some(&flow.session), true)
            .await;
    }
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("{outcome:?}");
    };
    let code = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let tokens = flow
        .fx
        .endpoint
        .handle(
            tenant,
            issuer,
            &form(&[
                ("grant_type", "authorization_code"),
                ("client_id", app.id.as_str()),
                ("code", &code),
                ("redirect_uri", redirect),
                ("code_verifier", VERIFIER),
            ]),
            None,
        )
        .await
        .unwrap();
    let claims = flow
        .id_claims(tokens.id_token.as_deref().unwrap(), SigningAlg::Rs256)
        .await;
    claims["sub"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn third_parties_on_different_hosts_see_different_pairwise_subs_first_parties_the_user_id() {
    let flow = Flow::new(false).await;
    let shop = sub_seen_by(&flow, "https://shop.example/cb", false).await;
    let books = sub_seen_by(&flow, "https://books.example/callback", false).await;
    assert_ne!(shop, books, "different sectors cannot correlate the person");
    for sub in [&shop, &books] {
        assert_eq!(sub.len(), 43, "base64url of an HMAC-SHA256: {sub}");
        assert!(!sub.starts_with("usr_"));
    }
    // The sector is the host: another application on the same host sees the same subject.
    let same_host = sub_seen_by(&flow, "https://shop.example/other-callback", false).await;
    assert_eq!(same_host, shop);
    // First-party applications see the person's id.
    let own = sub_seen_by(&flow, "https://portal.example/cb", true).await;
    assert_eq!(own, flow.user.id.as_str());
    assert!(own.starts_with("usr_"));
}
